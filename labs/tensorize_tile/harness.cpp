// The checker's side of lab tensorize_tile, built against the project's tensor/ library twice
// (labs/cpp_common/observe.h): with the student's micro_kernel.cpp, run as `harness observe
// CASE SEED`, it asks for the intrinsic and the schedule, calls the implementation and writes
// what each call returned on fd 3; with the lab's starter, run as `harness check CASE SEED` on
// those records, it reaches the verdict and prints one line, "PASS" or "FAIL: why":
//   describes      the description is well formed: a name, a tile size, the statement parses
//   implements     the implementation computes the description on seeded random tiles, with
//                  rows longer than the tile, and writes nothing outside the tile
//   tensorizes     the schedule applies, blockizes, and its tensorize step matches the
//                  description against the tile (sizes, index pattern)
//   hidden_shapes  matmul with one implementation call per tile equals the reference
//                  interpreter on four shapes drawn from the seed
//   faster         the tensorized matmul against the same matmul with the untensorized tile,
//                  interleaved in one run: at least kMinRatio times its speed
//
// Tensorizing with the student's intrinsic is done here, not by tensor/schedule's tensorize
// (whose intrinsics are the project's own, with code generators behind them): every other
// step of the schedule is the library's, applied line by line, and the step `tensorize BLOCK
// NAME` is matched by this file and then executed as TVM executes a tensorized block: the
// loops around it run, and each of its iterations is one call of the implementation.
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

// tensor/tir.h before lang/: its declaration of inline_bindings(const Expr&, const struct Stmt&)
// names tir::Stmt only when lang/ast.h's Stmt is not yet declared.
#include "tensor/index_eval.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"
#include "tile_lab.h"
#include "tile_match.h"

#include "labs/cpp_common/observe.h"
#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "tensor/lower.h"

using namespace descent;
using tilelab::Desc;

namespace {

// The speed the tensorized tile must reach, as a multiple of the untensorized tile's.
constexpr double kMinRatio = 5.0;

// ---- What the student's code hands over, recorded ----------------------------------------

// The implementation, in the student's run only (the checker never calls it).
TileImplementation g_impl = nullptr;

Desc get_intrinsic() {
  return lab::observed("tile_intrinsic", [](lab::Record& r) {
    TensorIntrin t = tile_intrinsic();
    g_impl = t.implementation;
    r.str(t.name).i64(t.m).i64(t.n).i64(t.k).str(t.statement).u64(t.implementation != nullptr);
  }, [](lab::Reader& in) {
    Desc d;
    d.name = in.str();
    d.m = in.i64();
    d.n = in.i64();
    d.k = in.i64();
    d.statement = in.str();
    d.has_impl = in.u64() != 0;
    return d;
  });
}

std::string get_schedule() {
  return lab::observed("tile_schedule", [](lab::Record& r) { r.str(tile_schedule()); },
                       [](lab::Reader& in) { return in.str(); });
}

void put_floats(lab::Record& r, const float* p, size_t n) {
  r.u64(n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, p + i, 4);
    r.u64(bits);
  }
}

std::vector<float> get_floats(lab::Reader& in) {
  std::vector<float> out(in.count());
  for (auto& v : out) {
    uint32_t bits = uint32_t(in.u64());
    std::memcpy(&v, &bits, 4);
  }
  return out;
}

uint64_t digest(const std::vector<float>& v) {
  uint64_t h = 1469598103934665603ull;
  for (float f : v) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    h = (h ^ bits) * 1099511628211ull;
  }
  return h;
}

std::vector<float> random_floats(std::mt19937_64& rng, size_t n) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// ---- The checks ---------------------------------------------------------------------------

// The description parsed; "" or why it is not yet one.
std::string well_formed(Desc& d) { return tilelab::parse_description(&d); }

// implements: the implementation against the description on random tiles. Each tile sits in
// matrices whose rows are longer than the tile (the leading dimensions a real matmul has),
// and C has a row of guard elements above and below it.
std::string implements(const Desc& d, uint64_t seed) {
  if (!d.has_impl) return "tile_intrinsic().implementation is null: set it to your micro-kernel";
  // C, A and B by name: the implementation's pointers come in that order whatever the
  // statement's order of the factors.
  const tilelab::Access* acc[3] = {&d.of("C"), &d.of("A"), &d.of("B")};
  for (int trial = 0; trial < 8; ++trial) {
    std::mt19937_64 rng(seed * 1000003 + trial);
    // Rows and columns of each matrix's tile; the first trial is tight (ld = the tile's width).
    int64_t rows[3], cols[3], ld[3];
    for (int x = 0; x < 3; ++x) {
      rows[x] = d.extent(acc[x]->index[0]);
      cols[x] = d.extent(acc[x]->index[1]);
      ld[x] = cols[x] + (trial == 0 ? 0 : int64_t(rng() % 13));
    }
    const int64_t off = ld[0] > cols[0] ? 1 : 0;  // C's tile one column in, when there is room
    std::vector<float> a = random_floats(rng, size_t(rows[1] * ld[1]));
    std::vector<float> b = random_floats(rng, size_t(rows[2] * ld[2]));
    std::vector<float> c = random_floats(rng, size_t((rows[0] + 2) * ld[0]));
    const std::vector<float> a0 = a, b0 = b, c0 = c;
    const std::string call = "implementation_lda" + std::to_string(ld[1]) + "_ldb" + std::to_string(ld[2]) + "_ldc" +
                             std::to_string(ld[0]);
    struct Out {
      std::vector<float> c;
      uint64_t a = 0, b = 0;
    };
    Out got = lab::observed(call, [&](lab::Record& r) {
      g_impl(a.data(), b.data(), c.data() + ld[0] + off, ld[1], ld[2], ld[0]);
      put_floats(r, c.data(), c.size());
      r.u64(digest(a)).u64(digest(b));
    }, [&](lab::Reader& in) {
      Out o;
      o.c = get_floats(in);
      o.a = in.u64();
      o.b = in.u64();
      return o;
    });
    // The first call's matrices are as wide as the tile: right there and wrong later is the
    // classic mistake of stepping by the tile's widths.
    const std::string widths = trial == 0 ? "" : "; the first call, on matrices as wide as the tile, was right: "
                                                 "step from row to row by lda, ldb and ldc, not by the tile's widths";
    const std::string where = " (a call on a " + std::to_string(d.m) + " x " + std::to_string(d.n) + " x " +
                              std::to_string(d.k) + " tile with lda " + std::to_string(ld[1]) + ", ldb " +
                              std::to_string(ld[2]) + ", ldc " + std::to_string(ld[0]) + ")";
    if (got.c.size() != c0.size()) return "the record of C has the wrong size" + where;
    if (got.a != digest(a0) || got.b != digest(b0))
      return "your implementation changed A or B" + where + ": they are its inputs";
    // What the description says, in double, with a bound on float rounding.
    std::map<char, int64_t> at;
    for (int64_t r = -1; r <= rows[0]; ++r)
      for (int64_t col = 0; col < ld[0]; ++col) {
        const size_t flat = size_t((r + 1) * ld[0] + col);
        const int64_t tc = col - off;
        const bool inside = r >= 0 && r < rows[0] && tc >= 0 && tc < cols[0];
        if (!inside) {
          if (std::memcmp(&got.c[flat], &c0[flat], 4) != 0)
            return "your implementation wrote C at row " + std::to_string(r) + ", column " + std::to_string(tc) +
                   " of the tile, outside the " + std::to_string(rows[0]) + " x " + std::to_string(cols[0]) +
                   " tile" + where + widths;
          continue;
        }
        double want = c0[flat], scale = std::fabs(c0[flat]);
        at[d.c.index[0]] = r;
        at[d.c.index[1]] = tc;
        const char red = d.reduction();
        for (int64_t q = 0; q < d.extent(red); ++q) {
          at[red] = q;
          double p = double(a0[size_t(at[acc[1]->index[0]] * ld[1] + at[acc[1]->index[1]])]) *
                     double(b0[size_t(at[acc[2]->index[0]] * ld[2] + at[acc[2]->index[1]])]);
          want += p;
          scale += std::fabs(p);
        }
        if (!(std::fabs(got.c[flat] - want) <= 1e-4 * scale + 1e-6))
          return "after the call C[" + std::to_string(r) + ", " + std::to_string(tc) + "] of the tile is " +
                 num(got.c[flat]) + "; the description gives " + num(want) + " (its old value " + num(c0[flat]) +
                 " plus the sum over " + std::string(1, red) + " of " + d.a.text() + " * " + d.b.text() + ")" + where + widths;
      }
  }
  return "";
}

// The lab's matmul at M x N x K, lowered as `descent` lowers it; "" or why not.
std::string lower_mm(int64_t M, int64_t N, int64_t K, tir::PrimFunc* out) {
  static const char* kText =
      "kernel mm(A: f32[M, K], B: f32[K, N]) -> f32[M, N] {\n"
      "  C[i, j] = sum(k) A[i, k] * B[k, j]\n"
      "  return C\n"
      "}\n";
  auto program = std::make_shared<Program>();
  std::vector<Diagnostic> diags;
  *program = parse(std::make_shared<SourceFile>("mm.ds", kText), diags);
  Module module;
  if (diags.empty()) check(*program, module, {}, diags);
  if (!diags.empty()) return "the lab's matmul does not compile: " + diags[0].message;
  Diagnostic diag;
  if (!tensor::lower(*program->body[0]->kernel, {{M, K}, {K, N}}, out, &diag))
    return "the lab's matmul does not lower: " + diag.message;
  return "";
}

int64_t round_up(int64_t v, int64_t f) { return (v + f - 1) / f * f; }

// A matmul problem: its shape, the shape it runs at (padded to whole tiles), its inputs.
struct Problem {
  int64_t M, N, K, Mp, Np, Kp;
  std::vector<float> a, b;  // padded, zeros outside the M x K and K x N corners
  std::string label() const {
    std::string s = std::to_string(M) + " x " + std::to_string(N) + " x " + std::to_string(K);
    if (Mp != M || Np != N || Kp != K)
      s += " (padded with zeros to " + std::to_string(Mp) + " x " + std::to_string(Np) + " x " +
           std::to_string(Kp) + ")";
    return s;
  }
};

Problem make_problem(const Desc& d, int64_t M, int64_t N, int64_t K, uint64_t seed) {
  // Padding follows the tile: the loop for C's rows has the extent of C's first letter, ...
  Problem p{M, N, K, round_up(M, d.extent(d.c.index[0])), round_up(N, d.extent(d.c.index[1])),
            round_up(K, d.extent(d.reduction())), {}, {}};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  p.a.assign(size_t(p.Mp * p.Kp), 0.0f);
  p.b.assign(size_t(p.Kp * p.Np), 0.0f);
  for (int64_t r = 0; r < M; ++r)
    for (int64_t c = 0; c < K; ++c) p.a[size_t(r * p.Kp + c)] = u(rng);
  for (int64_t r = 0; r < K; ++r)
    for (int64_t c = 0; c < N; ++c) p.b[size_t(r * p.Np + c)] = u(rng);
  return p;
}

// The schedule applied and matched at p's padded shape: the plan of calls, or why not.
std::string prepare(const Desc& d, const std::string& schedule, const Problem& p, tilelab::Plan* plan) {
  tir::PrimFunc f;
  std::string why = lower_mm(p.Mp, p.Np, p.Kp, &f);
  if (!why.empty()) return why;
  tilelab::Match m;
  why = tilelab::apply_and_match(d, schedule, &f, &m);
  if (!why.empty()) return why;
  return tilelab::make_plan(f, d, m, plan);
}

// The reference interpreter's matmul of p's unpadded inputs.
std::string reference(const Problem& p, std::vector<float>* out) {
  tir::PrimFunc f;
  std::string why = lower_mm(p.M, p.N, p.K, &f);
  if (!why.empty()) return why;
  tensor::Tensor a, b, c;
  a.shape = {p.M, p.K};
  b.shape = {p.K, p.N};
  a.data = tensor::AlignedFloats(size_t(p.M * p.K));
  b.data = tensor::AlignedFloats(size_t(p.K * p.N));
  for (int64_t r = 0; r < p.M; ++r)
    for (int64_t c = 0; c < p.K; ++c) a.data[size_t(r * p.K + c)] = p.a[size_t(r * p.Kp + c)];
  for (int64_t r = 0; r < p.K; ++r)
    for (int64_t c = 0; c < p.N; ++c) b.data[size_t(r * p.N + c)] = p.b[size_t(r * p.Np + c)];
  std::string error;
  if (!tir::interpret(f, {&a, &b}, &c, &error)) return "the reference interpreter failed: " + error;
  out->assign(c.data.data(), c.data.data() + c.data.size());
  return "";
}

// The M x N corner of the tensorized result against the reference; "" or the first that differs.
std::string compare(const Problem& p, const std::vector<float>& got, const std::vector<float>& want,
                    const tilelab::Plan& plan) {
  if (got.size() != size_t(p.Mp * p.Np)) return "the record of C has the wrong size";
  for (int64_t r = 0; r < p.M; ++r)
    for (int64_t c = 0; c < p.N; ++c) {
      float g = got[size_t(r * p.Np + c)], w = want[size_t(r * p.N + c)];
      if (std::fabs(g - w) <= 1e-4 * (1 + std::fabs(w)) + 1e-5 * double(p.K)) continue;
      return "matmul " + p.label() + ": C[" + std::to_string(r) + ", " + std::to_string(c) + "] is " + num(g) +
             ", the reference interpreter gives " + num(w) + " (in the tile of rows " +
             std::to_string(r / plan.rows * plan.rows) + " to " + std::to_string(r / plan.rows * plan.rows + plan.rows - 1) +
             ", columns " + std::to_string(c / plan.cols * plan.cols) + " to " +
             std::to_string(c / plan.cols * plan.cols + plan.cols - 1) + ")";
    }
  return "";
}

// The tensorized matmul, in the student's run: one implementation call per tile.
std::vector<float> run_tensorized(const Problem& p, const tilelab::Plan& plan, const std::string& call) {
  return lab::observed(call, [&](lab::Record& r) {
    std::vector<float> c(size_t(p.Mp * p.Np), 0.0f);
    tilelab::run_plan(plan, p.a.data(), p.b.data(), c.data(), g_impl);
    put_floats(r, c.data(), c.size());
  }, [](lab::Reader& in) { return get_floats(in); });
}

// The description and the schedule, each checked; "" or why the case cannot go on.
std::string setup(Desc* d, std::string* schedule) {
  *d = get_intrinsic();
  std::string why = well_formed(*d);
  if (!why.empty()) return "the description is not yet right (check 1 says why)";
  *schedule = get_schedule();
  return "";
}

std::string hidden_shapes(uint64_t seed) {
  Desc d;
  std::string schedule, why = setup(&d, &schedule);
  if (!why.empty()) return why;
  std::mt19937_64 rng(seed ^ 0x7e25012eull);
  const int64_t tm = d.extent(d.c.index[0]), tn = d.extent(d.c.index[1]), tk = d.extent(d.reduction());
  auto dim = [&](int64_t tile, bool whole) {
    int64_t tiles = 1 + int64_t(rng() % 4);
    return whole || tile == 1 ? tiles * tile : (tiles - 1) * tile + 1 + int64_t(rng() % uint64_t(tile - 1));
  };
  // Whole tiles first; then shapes a tile does not divide, which run padded.
  const bool whole[4][3] = {{true, true, true}, {false, true, true}, {true, false, false}, {false, false, false}};
  for (int s = 0; s < 4; ++s) {
    int64_t M = dim(tm, whole[s][0]), N = dim(tn, whole[s][1]), K = dim(tk, whole[s][2]);
    Problem p = make_problem(d, M, N, K, seed + uint64_t(s));
    tilelab::Plan plan;
    why = prepare(d, schedule, p, &plan);
    if (!why.empty()) return "matmul " + p.label() + ": " + why;
    std::vector<float> got = run_tensorized(p, plan, "tensorized_matmul_" + std::to_string(M) + "x" +
                                                         std::to_string(N) + "x" + std::to_string(K));
    std::vector<float> want;
    why = reference(p, &want);
    if (!why.empty()) return why;
    why = compare(p, got, want, plan);
    if (!why.empty()) return why;
  }
  return "";
}

// A clock the student's code cannot replace: the time-stamp counter where there is one
// (an instruction, not a library call a student's file could define), else steady_clock.
uint64_t ticks() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

// One timed run of the plan with `tile` (the implementation or the untensorized tile).
template <class Tile>
uint64_t timed(const tilelab::Plan& plan, const Problem& p, std::vector<float>& c, Tile tile) {
  uint64_t t0 = ticks();
  tilelab::run_plan(plan, p.a.data(), p.b.data(), c.data(), tile);
  return ticks() - t0;
}

std::string faster(uint64_t seed) {
  Desc d;
  std::string schedule, why = setup(&d, &schedule);
  if (!why.empty()) return why;
  Problem p = make_problem(d, 160, 160, 160, seed);
  tilelab::Plan plan;
  why = prepare(d, schedule, p, &plan);
  if (!why.empty()) return "matmul " + p.label() + ": " + why;
  constexpr int kRounds = 7;
  struct Timing {
    std::vector<float> c;
    std::vector<uint64_t> plain, tensorized;
  };
  // Interleaved (untensorized, tensorized, untensorized, ...): a busy neighbour slows both,
  // and the best round of each is the least disturbed.
  Timing t = lab::observed("timing", [&](lab::Record& r) {
    std::vector<float> c(size_t(p.Mp * p.Np), 0.0f);
    std::vector<uint64_t> plain, tens;
    for (int k = 0; k < kRounds; ++k) {
      plain.push_back(timed(plan, p, c, tilelab::untensorized_tile(plan)));
      tens.push_back(timed(plan, p, c, g_impl));
    }
    put_floats(r, c.data(), c.size());
    for (int k = 0; k < kRounds; ++k) r.u64(plain[size_t(k)]).u64(tens[size_t(k)]);
  }, [&](lab::Reader& in) {
    Timing o;
    o.c = get_floats(in);
    for (int k = 0; k < kRounds; ++k) {
      o.plain.push_back(in.u64());
      o.tensorized.push_back(in.u64());
    }
    return o;
  });
  std::vector<float> want;
  why = reference(p, &want);
  if (!why.empty()) return why;
  why = compare(p, t.c, want, plan);
  if (!why.empty()) return "the timed run computed a wrong result: " + why;
  if (std::getenv("DESCENT_LABS_EQUALITY_ONLY")) return "";
  const uint64_t plain = *std::min_element(t.plain.begin(), t.plain.end());
  const uint64_t tens = std::max<uint64_t>(1, *std::min_element(t.tensorized.begin(), t.tensorized.end()));
  // The checker times the untensorized tile itself (harness code only): the figures of the
  // student's run must agree with it, or they were not measured honestly.
  std::vector<float> c(size_t(p.Mp * p.Np), 0.0f);
  uint64_t own = UINT64_MAX;
  for (int k = 0; k < 3; ++k) own = std::min(own, timed(plan, p, c, tilelab::untensorized_tile(plan)));
  if (plain * 4 < own || plain > own * 4)
    return "the untensorized tile took " + num(double(plain)) + " ticks in your run and " + num(double(own)) +
           " in the checker's: timings that far apart cannot be compared (was the machine very busy?)";
  const double ratio = double(plain) / double(tens);
  if (ratio < kMinRatio)
    return "the tensorized matmul " + p.label() + " ran at " + num(ratio) + "x the speed of the untensorized tile (" +
           num(double(tens)) + " against " + num(double(plain)) + " ticks, best of " + std::to_string(kRounds) +
           " interleaved rounds); the lab asks for " + num(kMinRatio) +
           "x: keep the tile's accumulators in registers across k, and compute a row of C as vectors";
  return "";
}

std::string check(const std::string& which, uint64_t seed) {
  if (which == "describes") {
    Desc d = get_intrinsic();
    return well_formed(d);
  }
  if (which == "implements") {
    Desc d = get_intrinsic();
    std::string why = well_formed(d);
    if (!why.empty()) return "the description is not yet right (check 1 says why)";
    return implements(d, seed);
  }
  if (which == "tensorizes") {
    Desc d;
    std::string schedule, why = setup(&d, &schedule);
    if (!why.empty()) return why;
    Problem p = make_problem(d, 3 * d.extent(d.c.index[0]), 2 * d.extent(d.c.index[1]), 2 * d.extent(d.reduction()),
                             seed);
    tilelab::Plan plan;
    why = prepare(d, schedule, p, &plan);
    return why.empty() ? "" : "matmul " + p.label() + ": " + why;
  }
  if (which == "hidden_shapes") return hidden_shapes(seed);
  if (which == "faster") return faster(seed);
  return "no check case '" + which + "'";
}

}  // namespace

int main(int argc, char** argv) {
  return lab::harness_main(argc, argv, 0, [](const lab::Args& a) { return check(a.which, a.seed); });
}
