// test_tensor_random_schedule: thousands of seeded random schedules (tensor/schedule_random.h)
// on matmul, linear_relu, softmax, add and a 2-D convolution. Every step a primitive accepts
// must leave a well-formed function that computes the same result as the original (the
// reference interpreter is the judge; every ~20th final schedule also goes through the CPU
// backend); every step it refuses must explain why and change nothing. The trace must
// replay, and undo must get back to the original.
//
// A failure message names the kernel, the seed and the steps, so the case replays exactly:
// the generator draws with rng() % n only, so a seed means the same steps on every machine.
// DESCENT_RANDOM_SCHEDULES=N runs N schedules per kernel (default 600);
// DESCENT_RANDOM_STATS=1 prints counts per primitive.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>

#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "tensor/cpu.h"
#include "tensor/lower.h"
#include "tensor/schedule.h"
#include "tensor/schedule_random.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"

using namespace descent;
using namespace descent::tensor;

namespace {

struct KernelCase {
  const char* name;
  const char* source;
  std::vector<std::vector<int64_t>> shapes;
};

const KernelCase kKernels[] = {
    {"matmul", R"(kernel matmul(A: f32[n, k], B: f32[k, m]) -> f32[n, m] {
  C[i, j] = sum(r) A[i, r] * B[r, j]
  return C
})",
     {{16, 24}, {24, 20}}},
    {"linear_relu", R"(kernel linear_relu(x: f32[n, k], w: f32[m, k]) -> f32[n, m] {
  out[i, j] = max(sum(r) x[i, r] * w[j, r], 0.0)
  return out
})",
     {{2, 40}, {12, 40}}},
    {"softmax", R"(kernel softmax(x: f32[n, m]) -> f32[n, m] {
  mx[i] = max(j) x[i, j]
  e[i, j] = exp(x[i, j] - mx[i])
  s[i] = sum(j) e[i, j]
  out[i, j] = e[i, j] / s[i]
  return out
})",
     {{6, 10}}},
    {"add", R"(kernel add(a: f32[n, m], b: f32[n, m]) -> f32[n, m] {
  out[i, j] = a[i, j] + b[i, j]
  return out
})",
     {{10, 14}, {10, 14}}},
    {"conv2d", R"(kernel conv2d(x: f32[10, 12], k: f32[3, 3]) -> f32[8, 10] {
  out[i, j] = sum(p, q) x[i + p, j + q] * k[p, q]
  return out
})",
     {{10, 12}, {3, 3}}},
};

tir::PrimFunc lower_src(const char* src, const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<Diagnostic> diags;
  auto program =
      std::make_shared<Program>(parse(std::make_shared<SourceFile>("t.ds", src), diags));
  REQUIRE_MESSAGE(diags.empty(), (diags.empty() ? std::string() : diags[0].message));
  Module module;
  REQUIRE(check(*program, module, {}, diags));
  REQUIRE(module.kernels.size() == 1);
  tir::PrimFunc f;
  Diagnostic error;
  REQUIRE_MESSAGE(lower(*module.kernels[0].decl, shapes, &f, &error), error.message);
  return f;
}

std::string script(const tir::PrimFunc& f) { return tir::print_script(f); }

// The random generator for one (kernel, seed): independent streams per kernel, and the
// pair is all a replay needs.
std::mt19937_64 rng_for(size_t kernel, uint64_t seed) {
  return std::mt19937_64(seed * 0x9E3779B97F4A7C15ull + kernel + 1);
}

int env_int(const char* name, int fallback) {
  const char* s = std::getenv(name);
  return s && *s ? std::atoi(s) : fallback;
}

struct KindCount {
  int applied = 0, rejected = 0, junk_applied = 0, junk_rejected = 0;
};

struct Stats {
  int schedules = 0, steps = 0, applied = 0, compiles = 0, failures = 0;
  std::map<std::string, KindCount> by_kind;
};

std::string first_word(const std::string& step) {
  size_t end = step.find(' ');
  return end == std::string::npos ? step : step.substr(0, end);
}

// Everything needed to replay a schedule: kernel, seed, the steps that applied so far.
std::string replay(const KernelCase& k, uint64_t seed, const Schedule& s) {
  std::string out = std::string("kernel ") + k.name + ", seed " + std::to_string(seed) +
                    "\nsteps so far:\n" + s.trace();
  return out;
}

// Runs one case; returns the reason it failed ("" when it passed).
struct Runner {
  const KernelCase& kernel;
  size_t kernel_index;
  const tir::PrimFunc& original;
  const std::string& original_text;
  const std::vector<const Tensor*>& args;
  const Tensor& expected;
  Stats* stats;

  std::string check_result(const tir::PrimFunc& f) {
    std::string why;
    if (!tir::verify(f, &why)) return "tir::verify failed: " + why;
    Tensor got;
    if (!tir::interpret(f, args, &got, &why)) return "the interpreter failed: " + why;
    if (!allclose(expected, got, 1e-4, &why)) return "wrong result: " + why;
    return "";
  }

  std::string run(uint64_t seed, bool compile) {
    std::mt19937_64 rng = rng_for(kernel_index, seed);
    Schedule s(original);
    int steps = 1 + int(rng() % 8);
    ++stats->schedules;
    std::string context;
    INFO(context);  // doctest prints it if the process crashes mid-step
    for (int i = 0; i < steps; ++i) {
      bool junk = false;
      std::string step = random_step(s.func(), rng, {}, &junk);
      context = replay(kernel, seed, s) + "broke at: " + step;
      std::string before = script(s.func());
      size_t applied_before = s.num_applied();
      std::string error;
      bool ok = s.apply(step, &error);
      ++stats->steps;
      KindCount& kc = stats->by_kind[first_word(step)];
      (junk ? (ok ? kc.junk_applied : kc.junk_rejected) : (ok ? kc.applied : kc.rejected))++;
      if (ok) {
        ++stats->applied;
        std::string why = check_result(s.func());
        if (!why.empty()) return context + "\n" + why + "\n" + script(s.func());
      } else {
        if (error.empty()) return context + "\nrefused without a message";
        if (s.num_applied() != applied_before || script(s.func()) != before)
          return context + "\nrefused (" + error + ") but the function changed";
      }
    }
    context = replay(kernel, seed, s);
    // The trace replays on the original to the same function.
    Schedule again(original);
    std::string error;
    if (!again.apply_text(s.trace(), &error))
      return context + "the trace does not replay: " + error;
    std::string final_text = script(s.func());
    if (script(again.func()) != final_text) return context + "the replayed trace differs";
    if (compile) {
      ++stats->compiles;
      CpuOptions options;
      options.threads = 2;
      std::unique_ptr<CpuKernel> k;
      if (!compile_cpu(s.func(), options, &k, &error))
        return context + "compile_cpu failed: " + error;
      Tensor got;
      if (!k->run(args, &got, &error)) return context + "the CPU kernel failed: " + error;
      if (!allclose(expected, got, 1e-4, &error))
        return context + "wrong CPU result: " + error;
    }
    // Undo all the way back, then redo all the way forward.
    size_t n = s.num_applied();
    while (s.undo()) {
    }
    if (s.num_applied() != 0 || script(s.func()) != original_text)
      return context + "undo to 0 does not give the original";
    for (size_t i = 0; i < n; ++i)
      if (!s.redo()) return context + "redo " + std::to_string(i) + " refused";
    if (script(s.func()) != final_text) return context + "redo does not give the final function";
    return "";
  }
};

}  // namespace

TEST_CASE("random schedules keep every kernel's result, refuse cleanly, and replay") {
  const int per_kernel = env_int("DESCENT_RANDOM_SCHEDULES", 600);
  const int compile_every = 20;
  Stats stats;
  auto start = std::chrono::steady_clock::now();
  for (size_t ki = 0; ki < std::size(kKernels); ++ki) {
    const KernelCase& k = kKernels[ki];
    tir::PrimFunc f = lower_src(k.source, k.shapes);
    std::string text = script(f);
    std::vector<Tensor> inputs(k.shapes.size());
    std::vector<const Tensor*> args;
    std::string error;
    for (size_t i = 0; i < k.shapes.size(); ++i) {
      REQUIRE(rand(k.shapes[i], int64_t(i + 1), &inputs[i], &error));
      args.push_back(&inputs[i]);
    }
    Tensor expected;
    REQUIRE_MESSAGE(tir::interpret(f, args, &expected, &error), error);
    Runner runner{k, ki, f, text, args, expected, &stats};
    int failures = 0;
    for (int seed = 0; seed < per_kernel; ++seed) {
      std::string why = runner.run(uint64_t(seed), seed % compile_every == 0);
      if (why.empty()) continue;
      ++stats.failures;
      FAIL_CHECK(why);
      if (++failures >= 5) break;  // enough to act on; the rest would repeat them
    }
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (env_int("DESCENT_RANDOM_STATS", 0)) {
    std::printf("%d schedules, %d steps (%d applied), %d CPU compiles, %.2f s\n",
                stats.schedules, stats.steps, stats.applied, stats.compiles, seconds);
    std::printf("%-20s %8s %8s %8s %8s\n", "primitive", "applied", "refused", "junk ok",
                "junk ref");
    for (const auto& [kind, c] : stats.by_kind)
      std::printf("%-20s %8d %8d %8d %8d\n", kind.c_str(), c.applied, c.rejected,
                  c.junk_applied, c.junk_rejected);
  }
  CHECK(stats.failures == 0);
  // Every primitive must have been both accepted and refused somewhere, or the generator
  // has stopped exercising it.
  for (const char* kind : {"split", "tile", "reorder", "fuse", "unroll", "vectorize",
                           "parallel", "bind", "compute_at", "reverse_compute_at",
                           "compute_inline", "cache_read", "cache_write",
                           "decompose_reduction", "rfactor"}) {
    if (per_kernel < 200) break;
    INFO(kind);
    CHECK(stats.by_kind[kind].applied > 0);
    CHECK(stats.by_kind[kind].rejected + stats.by_kind[kind].junk_rejected > 0);
  }
}
