// The checker's side of lab cost_features, built against the project's tune/ library twice
// (labs/cpp_common/observe.h): with the student's features.cpp, run as `harness observe CASE
// SEED`, it calls nest_features and writes what each call returned on fd 3; with the lab's
// starter, run as `harness check CASE SEED` on those records, it reaches the verdict and
// prints one line, "PASS" or "FAIL: why" (with the loop nest that differed after it):
//   shape     loops and depth
//   spread    parallel extent, vector lanes, unrolled copies
//   touched   bytes touched at loop levels 1 to 4
//   random    all of them, on 60 random schedules drawn from the run's seed
//
// The truth is the project's own cost-model features (tune/features.h) of the same loop
// nest: matmul, linear_relu and softmax from the prelude, lowered here with lang/ and
// tensor/ (no Session), as lowered, scheduled by hand, and scheduled by the default rules
// (tune/rules.h, with a fixed 16-lane vector, so the nests are the same on every machine).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cost_lab.h"
#include "labs/cpp_common/observe.h"
#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "lang/text.h"
#include "tensor/lower.h"
#include "tensor/schedule.h"
#include "tensor/schedule_random.h"
#include "tune/features.h"
#include "tune/rules.h"

using namespace descent;

namespace {

// The prelude's kernels (tensor/prelude.ds), as the lab's README shows them.
const char* kKernels = R"(
kernel matmul(A: f32[n, k], B: f32[k, m]) -> f32[n, m] {
  C[i, j] = sum(r) A[i, r] * B[r, j]
  return C
}
kernel linear_relu(x: f32[n, k], w: f32[m, k]) -> f32[n, m] {
  out[i, j] = max(sum(r) x[i, r] * w[j, r], 0.0)
  return out
}
kernel softmax(x: f32[n, m]) -> f32[n, m] {
  mx[i] = max(c) x[i, c]
  e[i, j] = exp(x[i, j] - mx[i])
  s[i] = sum(c) e[i, c]
  out[i, j] = e[i, j] / s[i]
  return out
}
)";

// A kernel of kKernels lowered for `dims`; false with *error when it does not lower.
bool lower_kernel(const std::string& name, const std::map<std::string, int64_t>& dims,
                  tir::PrimFunc* out, std::string* error) {
  auto program = std::make_shared<Program>();
  std::vector<Diagnostic> diags;
  *program = parse(std::make_shared<SourceFile>("kernels.ds", kKernels), diags);
  Module module;
  if (diags.empty()) check(*program, module, {}, diags);
  if (!diags.empty()) {
    *error = "the harness's kernels do not compile: " + diags[0].message;
    return false;
  }
  for (const auto& s : program->body) {
    if (s->kind != StmtKind::KernelDecl || s->kernel->name != name) continue;
    Diagnostic d;
    if (tensor::lower(*s->kernel, tensor::shapes_for(*s->kernel, dims), out, &d)) return true;
    *error = name + " does not lower: " + d.message;
    return false;
  }
  *error = "no kernel " + name;
  return false;
}

struct Nest {
  std::string what;   // "matmul 64x64x64, tiled: split i 16; ..."
  tir::PrimFunc func;
};

std::string one_line(const std::vector<std::string>& steps) {
  std::string out;
  for (const auto& s : steps) out += (out.empty() ? "" : "; ") + s;
  return out;
}

// `steps` applied to f; false with *error naming the step that was refused.
bool scheduled(tir::PrimFunc f, const std::vector<std::string>& steps, tir::PrimFunc* out,
               std::string* error) {
  for (const auto& step : steps) {
    std::string canonical;
    if (!tensor::apply_step(f, step, &canonical, error)) {
      *error = "`" + step + "`: " + *error;
      return false;
    }
  }
  *out = std::move(f);
  return true;
}

struct Kernel {
  std::string name, shape;
  std::map<std::string, int64_t> dims;
};

const std::vector<Kernel>& kernels() {
  static const std::vector<Kernel> k = {
      {"matmul", "64x64x64", {{"n", 64}, {"k", 64}, {"m", 64}}},
      {"linear_relu", "8x64x32", {{"n", 8}, {"k", 64}, {"m", 32}}},
      {"softmax", "16x64", {{"n", 16}, {"m", 64}}},
  };
  return k;
}

// The lab's nests: each kernel as lowered and with the default rules' schedule, and a few
// schedules by hand that use every loop kind the features look at.
bool lab_nests(std::vector<Nest>* out, std::string* error) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> by_hand = {
      {"matmul", {"split i 16", "split j 16", "reorder i_0 j_0 r i_1 j_1", "vectorize j_1", "parallel i_0"}},
      {"matmul", {"split i 4", "split j 8", "reorder i_0 j_0 r i_1 j_1", "unroll i_1", "vectorize j_1",
                  "parallel i_0"}},
      {"matmul", {"split r 8", "reorder i r_0 j r_1", "unroll r_1"}},
      {"linear_relu", {"split out_acc.r 16", "rfactor out_acc out_acc.r_1"}},
      {"softmax", {"split e.j 16", "vectorize e.j_1", "parallel e.i", "parallel out.i"}},
  };
  for (const auto& k : kernels()) {
    tir::PrimFunc f;
    if (!lower_kernel(k.name, k.dims, &f, error)) return false;
    out->push_back({k.name + " " + k.shape + ", as lowered", f});
    tune::RuleTarget target;
    target.device = "cpu";
    target.vector_lanes = 16;
    tune::RuleSchedule rules = tune::default_schedule(f, target);
    std::vector<std::string> steps;
    for (const auto& line : split_lines(rules.trace))
      if (!line.empty()) steps.push_back(line);
    out->push_back({k.name + " " + k.shape + ", the default rules' schedule: " + one_line(steps), rules.func});
    for (const auto& [name, hand] : by_hand) {
      if (name != k.name) continue;
      tir::PrimFunc g;
      if (!scheduled(f, hand, &g, error)) {
        *error = k.name + ": the harness's schedule does not apply: " + *error;
        return false;
      }
      out->push_back({k.name + " " + k.shape + ", scheduled: " + one_line(hand), g});
    }
  }
  return true;
}

// Random schedules of the three kernels drawn from the run's seed (tensor/schedule_random.h,
// only plausible steps): the same on every machine for the same seed.
bool random_nests(uint64_t seed, std::vector<Nest>* out, std::string* error) {
  std::mt19937_64 rng(seed);
  tensor::RandomStepOptions plausible;
  plausible.junk_percent = 0;
  for (int n = 0; n < 60; ++n) {
    const Kernel& k = kernels()[size_t(n) % kernels().size()];
    tir::PrimFunc f;
    if (!lower_kernel(k.name, k.dims, &f, error)) return false;
    std::vector<std::string> steps = tensor::random_schedule(f, rng, 6, plausible);
    tir::PrimFunc g;
    if (!scheduled(f, steps, &g, error)) {
      *error = k.name + ": a random schedule does not replay: " + *error;
      return false;
    }
    out->push_back({k.name + " " + k.shape + ", random schedule " + std::to_string(n + 1) + ": " +
                        (steps.empty() ? "(no steps)" : one_line(steps)),
                    g});
  }
  return true;
}

// log2(1 + x): how tune/features.cpp puts extents and bytes on a log scale.
double lg(double x) { return std::log2(1.0 + std::max(0.0, x)); }

// The student's nest_features, through the trust boundary: every field of what it returned
// is the record (the doubles bit for bit). `f` is const: the nest the harness prints after
// the call is its own.
NestFeatures student_features(const tir::PrimFunc& f) {
  return lab::observed(
      "nest_features",
      [&](lab::Record& r) {
        NestFeatures n = nest_features(f);
        r.i64(n.loops).i64(n.depth).f64(n.parallel_extent).f64(n.vector_lanes).f64(n.unrolled);
        for (double t : n.touched) r.f64(t);
      },
      [&](lab::Reader& in) {
        NestFeatures n;
        n.loops = int(in.i64());
        n.depth = int(in.i64());
        n.parallel_extent = in.f64();
        n.vector_lanes = in.f64();
        n.unrolled = in.f64();
        for (double& t : n.touched) t = in.f64();
        return n;
      });
}

// One of the student's numbers next to the project's feature.
struct Compared {
  int feature;                                        // index in tune::feature_names()
  std::function<double(const NestFeatures&)> mine;    // as the project's feature writes it
  std::function<std::string(const NestFeatures&)> shown;  // the student's value, in its own units
  std::string expected_as;                            // how to show the project's value
};

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::vector<Compared> shape_features() {
  return {
      {3, [](const NestFeatures& n) { return double(n.loops); }, [](const NestFeatures& n) { return std::to_string(n.loops); }, "raw"},
      {4, [](const NestFeatures& n) { return double(n.depth); }, [](const NestFeatures& n) { return std::to_string(n.depth); }, "raw"},
  };
}

std::vector<Compared> spread_features() {
  return {
      {7, [](const NestFeatures& n) { return lg(n.parallel_extent - 1); }, [](const NestFeatures& n) { return num(n.parallel_extent); }, "pow2"},
      {8, [](const NestFeatures& n) { return n.vector_lanes; }, [](const NestFeatures& n) { return num(n.vector_lanes); }, "raw"},
      {9, [](const NestFeatures& n) { return lg(n.unrolled - 1); }, [](const NestFeatures& n) { return num(n.unrolled); }, "pow2"},
  };
}

std::vector<Compared> touched_features() {
  std::vector<Compared> out;
  for (int k = 0; k < 4; ++k)
    out.push_back({19 + k, [k](const NestFeatures& n) { return n.touched[size_t(k)]; },
                   [k](const NestFeatures& n) { return num(n.touched[size_t(k)]); }, "raw"});
  return out;
}

const char* kStudentNames[] = {"", "", "", "loops", "depth", "", "", "parallel_extent", "vector_lanes",
                               "unrolled", "", "", "", "", "", "", "", "", "",
                               "touched[0]", "touched[1]", "touched[2]", "touched[3]"};

// The loop nest as the TVMScript printer writes it, indented under the message.
std::string script(const tir::PrimFunc& f) {
  std::string out;
  for (const auto& line : split_lines(tir::print_script(f))) out += "\n      " + line;
  return out;
}

// Every nest's features against the project's; the first difference, or "".
std::string compare(const std::vector<Nest>& nests, const std::vector<Compared>& which) {
  const auto& names = tune::feature_names();
  for (const auto& nest : nests) {
    std::vector<float> want = tune::features(nest.func);
    NestFeatures got = student_features(nest.func);
    for (const auto& c : which) {
      double w = want[size_t(c.feature)], g = c.mine(got);
      if (std::fabs(w - g) <= 1e-3 * std::max(1.0, std::fabs(w))) continue;
      std::string expected = c.expected_as == "pow2" ? num(std::round(std::exp2(w))) : num(w);
      std::string hint;
      static const char* kLevels[] = {"the loop right around each store", "the second loop out from each store",
                                      "the third loop out from each store", "the fourth loop out from each store"};
      if (c.feature >= 19)
        hint = "\n    (level " + std::to_string(c.feature - 18) + ", " + kLevels[c.feature - 19] +
               ": the sum over the stores of log2(1 + the bytes one iteration of it touches))";
      return nest.what + ":\n    " + kStudentNames[c.feature] + " should be " + expected + "; yours is " +
             c.shown(got) + "  [the cost model's \"" + names[size_t(c.feature)] + "\"]" + hint +
             "\n    the loop nest:" + script(nest.func);
    }
  }
  return "";
}

std::string check(const std::string& which, uint64_t seed) {
  std::string error;
  std::vector<Nest> nests;
  if (which == "random" ? !random_nests(seed, &nests, &error) : !lab_nests(&nests, &error))
    return "the checker could not build its loop nests: " + error;
  std::vector<Compared> features;
  if (which == "shape") features = shape_features();
  else if (which == "spread") features = spread_features();
  else if (which == "touched") features = touched_features();
  else if (which == "random") {
    for (auto* part : {shape_features, spread_features, touched_features})
      for (auto& c : part()) features.push_back(std::move(c));
  } else {
    return "no case '" + which + "'";
  }
  return compare(nests, features);
}

}  // namespace

int main(int argc, char** argv) {
  return lab::harness_main(argc, argv, 0, [](const lab::Args& a) { return check(a.which, a.seed); });
}
