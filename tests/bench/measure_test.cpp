// The tensor suite's measuring instruments: the BLAS wrappers compute what they claim (against
// naive loops), and the roofline microbenchmarks return usable numbers. Nothing here asserts
// a speed: these tests must pass on a loaded laptop and in a slow CI container alike.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "bench/blas.h"
#include "bench/roofline.h"
#include "tensor/tensor.h"

using namespace descent::bench;
using descent::tensor::Tensor;

namespace {

Tensor random_tensor(std::vector<int64_t> shape, int64_t seed) {
  Tensor t;
  std::string error;
  REQUIRE(descent::tensor::rand(shape, seed, &t, &error));
  return t;
}

// C[i, j] = sum_r A[i, r] * B[r, j], accumulated in double as a referee.
Tensor naive_matmul(const Tensor& a, const Tensor& b) {
  int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  Tensor c;
  std::string error;
  REQUIRE(descent::tensor::zeros({m, n}, &c, &error));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t r = 0; r < k; ++r) s += double(a.data[i * k + r]) * b.data[r * n + j];
      c.data[i * n + j] = static_cast<float>(s);
    }
  return c;
}

// out[i, j] = sum_r x[i, r] * w[j, r]: the `linear` kernel.
Tensor naive_linear(const Tensor& x, const Tensor& w) {
  int64_t rows = x.shape[0], k = x.shape[1], m = w.shape[0];
  Tensor y;
  std::string error;
  REQUIRE(descent::tensor::zeros({rows, m}, &y, &error));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < m; ++j) {
      double s = 0;
      for (int64_t r = 0; r < k; ++r) s += double(x.data[i * k + r]) * w.data[j * k + r];
      y.data[i * m + j] = static_cast<float>(s);
    }
  return y;
}

}  // namespace

TEST_CASE("blas: description, threads") {
  CHECK_FALSE(blas_description().empty());
  if (blas_available()) {
    // The kernels OpenBLAS really runs, and whether the environment forced them: a benchmark
    // against a forced older kernel must say so.
    CHECK(blas_description().find("; running its ") != std::string::npos);
    const char* before = std::getenv("OPENBLAS_CORETYPE");
    std::string saved = before ? before : "";
    setenv("OPENBLAS_CORETYPE", "Haswell", 1);
    CHECK(blas_description().find("(forced by OPENBLAS_CORETYPE=Haswell)") != std::string::npos);
    if (before) setenv("OPENBLAS_CORETYPE", saved.c_str(), 1);
    else unsetenv("OPENBLAS_CORETYPE");
    if (!before) CHECK(blas_description().find("forced") == std::string::npos);
  }
  blas_set_threads(1);
  blas_set_threads(0);  // one per hardware thread: accepted, not an error
  blas_set_threads(2);
}

TEST_CASE("blas_sgemm and blas_matmul agree with a naive loop") {
  std::string error;
  for (auto [m, n, k] : {std::tuple{1, 1, 1}, {3, 5, 7}, {17, 9, 33}, {64, 48, 80}}) {
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(k);
    Tensor a = random_tensor({m, k}, 1), b = random_tensor({k, n}, 2);
    Tensor want = naive_matmul(a, b);
    Tensor got;
    REQUIRE(blas_matmul(a, b, &got, &error));
    CHECK(descent::tensor::allclose(want, got, 1e-4, &error));
    CHECK(error == "");

    // The raw pointer form overwrites C (beta = 0): garbage in C must not leak through.
    Tensor c;
    REQUIRE(descent::tensor::full({m, n}, 1e30f, &c, &error));
    blas_sgemm(m, n, k, a.data.data(), b.data.data(), c.data.data());
    CHECK(descent::tensor::allclose(want, c, 1e-4, &error));
  }
  // A tiny exact case: [[1, 2], [3, 4]] x [[5, 6], [7, 8]] = [[19, 22], [43, 50]].
  Tensor a, b, c;
  REQUIRE(descent::tensor::arange(4, &a, &error));
  a.shape = {2, 2};
  for (int i = 0; i < 4; ++i) a.data[i] += 1;
  REQUIRE(descent::tensor::arange(4, &b, &error));
  b.shape = {2, 2};
  for (int i = 0; i < 4; ++i) b.data[i] += 5;
  REQUIRE(blas_matmul(a, b, &c, &error));
  CHECK(descent::tensor::format_tensor(c) == "tensor([2, 2], [19.0, 22.0, 43.0, 50.0])");
}

TEST_CASE("blas_sgemv and blas_linear agree with the linear kernel's loop") {
  std::string error;
  for (auto [rows, m, k] : {std::tuple{1, 1, 1}, {1, 200, 307}, {1, 10, 784}, {4, 13, 29}}) {
    CAPTURE(rows);
    CAPTURE(m);
    CAPTURE(k);
    Tensor x = random_tensor({rows, k}, 3), w = random_tensor({m, k}, 4);
    Tensor want = naive_linear(x, w);
    Tensor got;
    REQUIRE(blas_linear(x, w, &got, &error));
    CHECK(got.shape == std::vector<int64_t>{rows, m});
    CHECK(descent::tensor::allclose(want, got, 1e-4, &error));
    if (rows == 1) {
      Tensor y;
      REQUIRE(descent::tensor::full({m}, 1e30f, &y, &error));
      blas_sgemv(m, k, w.data.data(), x.data.data(), y.data.data());
      y.shape = {1, m};
      CHECK(descent::tensor::allclose(want, y, 1e-4, &error));
    }
  }
}

TEST_CASE("blas shape errors are values") {
  std::string error;
  Tensor out;
  Tensor a = random_tensor({2, 3}, 1), b = random_tensor({4, 5}, 2), v = random_tensor({3}, 3);
  CHECK_FALSE(blas_matmul(a, b, &out, &error));
  CHECK(error == "matmul: shapes [2, 3] and [4, 5] do not multiply");
  CHECK_FALSE(blas_matmul(a, v, &out, &error));
  CHECK(error == "matmul: shapes [2, 3] and [3] do not multiply");
  CHECK_FALSE(blas_linear(a, b, &out, &error));
  CHECK(error == "linear: shapes [2, 3] and [4, 5] do not match (want x [n, k] and w [m, k])");
  Tensor broken = random_tensor({3, 2}, 4);
  broken.shape = {3, 5};  // buffer of 6 floats claiming 15
  CHECK_FALSE(blas_matmul(a, broken, &out, &error));
  CHECK(error == "matmul: a tensor's buffer does not match its shape");
}

TEST_CASE("vector ISA detection") {
  VectorIsa isa = detect_vector_isa();
  CHECK_FALSE(isa.name.empty());
  bool known = (isa.name == "avx512f" && isa.f32_lanes == 16) ||
               (isa.name == "avx2+fma" && isa.f32_lanes == 8) ||
               (isa.name == "scalar" && isa.f32_lanes == 1);
  CHECK(known);
  std::vector<VectorIsa> all = supported_vector_isas();
  REQUIRE_FALSE(all.empty());
  CHECK(all.front().name == isa.name);
  CHECK(all.back().name == "scalar");
}

TEST_CASE("roofline measurements are positive and finite") {
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    double peak = measure_fma_peak_gflops(threads);
    CHECK(std::isfinite(peak));
    CHECK(peak > 0);
    double bw = measure_bandwidth_gbs(threads);
    CHECK(std::isfinite(bw));
    CHECK(bw > 0);
  }
  // Every kernel the CPU supports runs (the default one above is only the widest).
  for (const VectorIsa& isa : supported_vector_isas()) {
    CAPTURE(isa.name);
    double peak = measure_fma_peak_gflops(1, isa);
    CHECK(std::isfinite(peak));
    CHECK(peak > 0);
  }
  Roofline r;
  r.isa = detect_vector_isa();
  r.threads = 2;
  r.peak_gflops = 100;
  r.bandwidth_gbs = 20;
  CHECK(r.ridge_intensity() == 5.0);
  CHECK(r.attainable_gflops(0.25) == 5.0);    // memory-bound: 20 GB/s * 0.25 flop/byte
  CHECK(r.attainable_gflops(50.0) == 100.0);  // compute-bound
  CHECK(format_roofline(r) == r.isa.name +
                                  " x 2 threads: peak 100.0 GFLOP/s, bandwidth 20.0 GB/s, "
                                  "ridge 5.0 flop/byte");
}

TEST_CASE("cache-aware roofline: the roof of the level a working set fits in") {
  Roofline r;
  r.isa = detect_vector_isa();
  r.threads = 2;
  r.peak_gflops = 100;
  r.bandwidth_gbs = 20;
  const double inf = std::numeric_limits<double>::infinity();
  r.levels = {{"L1", 64 * 1024, 400}, {"L2", 1024 * 1024, 200}, {"DRAM", inf, 20}};
  CHECK(r.level_for(1000).name == "L1");
  CHECK(r.level_for(64 * 1024).name == "L1");
  CHECK(r.level_for(64 * 1024 + 1).name == "L2");
  CHECK(r.level_for(1e9).name == "DRAM");
  // 0.25 flop/byte: from L1 100 (400 * 0.25, also the compute roof), from L2 50, DRAM 5.
  CHECK(r.attainable_gflops(0.25, 1000) == 100.0);
  CHECK(r.attainable_gflops(0.25, 512 * 1024) == 50.0);
  CHECK(r.attainable_gflops(0.25, 1e9) == 5.0);
  CHECK(r.attainable_gflops(0.25, 1e9) == r.attainable_gflops(0.25));
  CHECK(format_roofline(r) == r.isa.name +
                                  " x 2 threads: peak 100.0 GFLOP/s, bandwidth 20.0 GB/s, "
                                  "ridge 5.0 flop/byte; L1 (64 KiB) 400.0 GB/s, L2 (1024 KiB) "
                                  "200.0 GB/s");
  Roofline none;  // nothing measured: DRAM, with no bandwidth known
  CHECK(none.level_for(10).name == "DRAM");
}

TEST_CASE("cache-aware roofline: measured levels, smallest first, never slower than DRAM") {
  for (const CacheInfo& c : detect_data_caches()) {
    CAPTURE(c.level);
    CHECK(c.bytes > 0);
    CHECK(c.shared_by >= 1);
  }
  double l1ish = measure_bandwidth_gbs(1, 16 * 1024);
  CHECK(std::isfinite(l1ish));
  CHECK(l1ish > 0);
  Roofline r = measure_roofline(1);
  REQUIRE_FALSE(r.levels.empty());
  CHECK(r.levels.back().name == "DRAM");
  CHECK(r.levels.back().bandwidth_gbs == r.bandwidth_gbs);
  CHECK(r.levels.size() == detect_data_caches().size() + 1);
  for (size_t i = 0; i + 1 < r.levels.size(); ++i) {
    CAPTURE(r.levels[i].name);
    CHECK(r.levels[i].capacity < r.levels[i + 1].capacity);
    CHECK(r.levels[i].bandwidth_gbs >= r.levels[i + 1].bandwidth_gbs);
  }
}
