// The CPU backend's vector exp (cpu/vector_math.cpp) through the real backend: a vectorized
// exp kernel is compiled from Descent source, scheduled and run over a strided sweep of all
// 2^32 float bit patterns and over the edges of exp's range, and its results are compared
// with the exact e^x (computed in double) and with libm's expf.
#include <doctest/doctest.h>

#include "tests/tensor/kernel_util.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "cpu/cpu.h"
#include "tensor/lower.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"

namespace tensor = descent::tensor;
namespace cpu = descent::cpu;
namespace tir = descent::tir;
using descent::tensor::Tensor;
using descent::testing::lower_kernel_text;

namespace {

constexpr const char* kExp = R"(kernel vexp(x: f32[n]) -> f32[n] {
  y[i] = exp(x[i])
  return y
}
)";

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// exp over n floats, with the loop split by `lanes` and vectorized (or left serial).
std::unique_ptr<cpu::CpuKernel> exp_kernel(int64_t n, bool vectorized, std::string* ir = nullptr,
                                           int lanes = 16) {
  tensor::Schedule s(lower_kernel_text(kExp, {{n}}));
  std::string error;
  if (vectorized)
    REQUIRE_MESSAGE(s.apply_text("split y.i " + std::to_string(lanes) + "\nvectorize y.i_1", &error), error);
  std::unique_ptr<cpu::CpuKernel> k;
  REQUIRE_MESSAGE(cpu::compile_cpu(s.func(), cpu::CpuOptions{}, &k, &error), error);
  if (ir) *ir = k->llvm_ir();
  return k;
}

Tensor vector_of(const std::vector<float>& v) {
  Tensor t;
  t.shape = {static_cast<int64_t>(v.size())};
  t.data = tensor::AlignedFloats(v.size());
  for (size_t i = 0; i < v.size(); ++i) t.data[i] = v[i];
  return t;
}

// How far `got` is from the exact e^x, in units of the float spacing (ulp) at e^x: 2^(e-23)
// for e^x in [2^e, 2^(e+1)), and 2^-149 (the subnormal spacing) below the smallest normal.
// An overflow must be inf exactly where the correctly rounded result is; nan must stay nan.
double ulp_error(float x, float got) {
  if (std::isnan(x)) return std::isnan(got) ? 0 : INFINITY;
  const double exact = std::exp(static_cast<double>(x));
  if (std::isinf(static_cast<float>(exact)) || std::isinf(got))
    return std::isinf(static_cast<float>(exact)) == std::isinf(got) ? 0 : INFINITY;
  int e = 0;
  std::frexp(exact, &e);  // exact = m 2^e, m in [0.5, 1)
  const double ulp = std::ldexp(1.0, std::max(e - 1, -126) - 23);
  return std::fabs(static_cast<double>(got) - exact) / ulp;
}

// How many floats lie between got and libm's expf(x) (both are >= 0 or nan).
int64_t steps_from_libm(float x, float got) {
  const float want = std::exp(x);
  if (std::isnan(want)) return std::isnan(got) ? 0 : INT64_MAX;
  return std::llabs(static_cast<int64_t>(to_bits(got)) - static_cast<int64_t>(to_bits(want)));
}

struct Worst {
  double ulp = 0;
  int64_t steps = 0;
  float at = 0, got = 0;
  void add(float x, float y) {
    double u = ulp_error(x, y);
    steps = std::max(steps, steps_from_libm(x, y));
    if (u > ulp) ulp = u, at = x, got = y;
  }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("vector exp: a vectorized loop computes exp inline, a serial one calls expf") {
  std::string vec_ir, serial_ir;
  exp_kernel(64, true, &vec_ir);
  exp_kernel(64, false, &serial_ir);
  CHECK(vec_ir.find("<16 x float>") != std::string::npos);
  CHECK(vec_ir.find("expf") == std::string::npos);  // no call per lane
  CHECK(vec_ir.find("llvm.exp") == std::string::npos);
  CHECK(vec_ir.find("descent.notes") == std::string::npos);  // no scalar fallback
  CHECK((serial_ir.find("expf") != std::string::npos ||
         serial_ir.find("llvm.exp") != std::string::npos));
  // With AVX-512 the scaling by 2^n is one vscalefps (vector_math.cpp, step 5): the sweeps
  // below then check that form; elsewhere the exponent-bit form.
  const bool scalef = vec_ir.find("llvm.x86.avx512.mask.scalef.ps.512") != std::string::npos;
  CHECK(scalef == (descent::cpu::host_vector_lanes() == 16));
}

TEST_CASE("vector exp: within 2 ulp on every 251st float bit pattern") {
  // 251 is prime, so the sweep's low mantissa bits take every value as it crosses each
  // binade: ~17 million inputs from every exponent, both signs, nans and infinities.
  const int64_t chunk = int64_t(1) << 20;
  const uint64_t stride = 251;
  auto k = exp_kernel(chunk, true);
  Worst worst;
  int64_t checked = 0;
  for (uint64_t start = 0; start < (uint64_t(1) << 32); start += stride * uint64_t(chunk)) {
    std::vector<float> xs(static_cast<size_t>(chunk), 0.0f);
    for (int64_t j = 0; j < chunk; ++j) {
      uint64_t u = start + stride * uint64_t(j);
      if (u >= (uint64_t(1) << 32)) break;  // the last chunk: zeros after the end
      xs[size_t(j)] = from_bits(uint32_t(u));
      ++checked;
    }
    Tensor x = vector_of(xs), y;
    std::string error;
    REQUIRE_MESSAGE(k->run({&x}, &y, &error), error);
    for (int64_t j = 0; j < chunk; ++j) worst.add(xs[size_t(j)], y.data[size_t(j)]);
  }
  CHECK(checked > 17000000);
  CHECK_MESSAGE(worst.ulp <= 2.0, "exp(" << worst.at << ") = " << worst.got << ", "
                                         << worst.ulp << " ulp from e^x");
  CHECK(worst.steps <= 2);
}

TEST_CASE("vector exp: a loop vectorized 32 or 64 wide gives the 16-wide loop's bits") {
  // Wider vectors go through vscalefps 16 lanes at a time (vector_math.cpp): each lane must
  // come back to its own place.
  const int64_t n = 1 << 16;
  std::vector<float> xs(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) xs[size_t(j)] = -110.0f + 220.0f * float(j) / float(n) + 1e-3f * float(j % 7);
  Tensor x = vector_of(xs), want, got;
  std::string error;
  REQUIRE_MESSAGE(exp_kernel(n, true)->run({&x}, &want, &error), error);
  for (int lanes : {32, 64}) {
    INFO(lanes, " lanes");
    REQUIRE_MESSAGE(exp_kernel(n, true, nullptr, lanes)->run({&x}, &got, &error), error);
    size_t differ = 0;
    for (size_t j = 0; j < xs.size(); ++j) differ += to_bits(got.data[j]) != to_bits(want.data[j]);
    CHECK(differ == 0);
  }
}

TEST_CASE("vector exp: the edges of the range and the special values") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float tiny = std::numeric_limits<float>::denorm_min();
  const float max = std::numeric_limits<float>::max();
  const float min_normal = std::numeric_limits<float>::min();
  std::vector<float> xs = {
      0.0f, -0.0f, tiny, -tiny, min_normal, -min_normal,
      from_bits(0x007fffff),  // the largest subnormal
      1.0f, -1.0f, 0.5f, 0.34657359f, -0.34657359f,  // +-ln2 / 2: the reduction's edge
      88.72f, -88.72f,
      from_bits(0x42b17217),  // 88.7228317: the largest x with a finite expf(x)
      88.7228394f,            // the next float: expf overflows to inf
      -87.33f, -87.3365479f,  // e^x crosses the smallest normal, 2^-126
      -100.0f, -103.97f,
      from_bits(0xc2cff1b4), from_bits(0xc2cff1b5),  // either side of ln(2^-150) = -103.9720771
      -104.0f, -110.0f, 100.0f, 104.0f, 1000.0f, -1000.0f,
      max, -max, inf, -inf, nan, -nan};
  // 16 lanes to a vector: pad with zeros.
  while (xs.size() % 16) xs.push_back(0.0f);
  auto k = exp_kernel(int64_t(xs.size()), true);
  Tensor x = vector_of(xs), y;
  std::string error;
  REQUIRE_MESSAGE(k->run({&x}, &y, &error), error);
  std::vector<float> got(y.data.data(), y.data.data() + y.data.size());
  for (size_t j = 0; j < xs.size(); ++j) {
    CAPTURE(xs[j]);
    CAPTURE(got[j]);
    CHECK(ulp_error(xs[j], got[j]) <= 2.0);
    CHECK(steps_from_libm(xs[j], got[j]) <= 2);
    // Overflow, underflow to 0 and the subnormal results are exactly libm's.
    if (std::exp(xs[j]) < min_normal || std::isinf(std::exp(xs[j]))) CHECK(got[j] == std::exp(xs[j]));
  }
  auto at = [&](float v) {
    for (size_t j = 0; j < xs.size(); ++j)
      if (to_bits(xs[j]) == to_bits(v)) return got[j];
    FAIL("no input " << v);
    return 0.0f;
  };
  CHECK(at(0.0f) == 1.0f);
  CHECK(at(-0.0f) == 1.0f);
  CHECK(at(tiny) == 1.0f);
  CHECK(at(-tiny) == 1.0f);
  CHECK(at(from_bits(0x42b17217)) < inf);
  CHECK(at(88.7228394f) == inf);
  // e^x = 2^-150 is half the smallest subnormal: just above it rounds up, just below to 0.
  CHECK(at(from_bits(0xc2cff1b4)) == tiny);
  CHECK(at(from_bits(0xc2cff1b5)) == 0.0f);
  CHECK(at(-104.0f) == 0.0f);
  CHECK(at(max) == inf);
  CHECK(at(-max) == 0.0f);
  CHECK(at(inf) == inf);
  CHECK(at(-inf) == 0.0f);
  CHECK(!std::signbit(at(-inf)));
  CHECK(std::isnan(at(nan)));
  CHECK(std::isnan(at(-nan)));
}

TEST_CASE("vector exp: the shipped softmax schedule against the interpreter") {
  // bench/schedules/softmax.sched vectorizes e[i, j] = exp(x[i, j] - mx[i]), so this is the
  // vector exp inside the kernel the benchmark runs, on inputs spread over [-40, 40) (tensor::rand
  // is uniform in [-1, 1)).
  auto p = descent::testing::parse_and_check(slurp(std::string(DESCENT_SOURCE_DIR) +
                                                   "/tensor/prelude.ds"), "prelude.ds");
  tir::PrimFunc f;
  {
    descent::Diagnostic d;
    REQUIRE_MESSAGE(tensor::lower(*p->kernel("softmax"), {{256, 1024}}, &f, &d), d.message);
  }
  tensor::Schedule s(std::move(f));
  std::string error;
  REQUIRE_MESSAGE(
      s.apply_text(slurp(std::string(DESCENT_SOURCE_DIR) + "/bench/schedules/softmax.sched"), &error),
      error);
  Tensor x;
  REQUIRE(tensor::rand({256, 1024}, 5, &x, &error));
  for (size_t j = 0; j < x.data.size(); ++j) x.data[j] *= 40.0f;
  Tensor want, got;
  REQUIRE_MESSAGE(tir::interpret(s.func(), {&x}, &want, &error), error);
  std::unique_ptr<cpu::CpuKernel> k;
  REQUIRE_MESSAGE(cpu::compile_cpu(s.func(), cpu::CpuOptions{}, &k, &error), error);
  CHECK(k->llvm_ir().find("expf") == std::string::npos);
  REQUIRE_MESSAGE(k->run({&x}, &got, &error), error);
  std::string why;
  CHECK_MESSAGE(tensor::allclose(want, got, 1e-5, &why), why);
}
