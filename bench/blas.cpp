// OpenBLAS wrappers (see blas.h). DESCENT_HAVE_OPENBLAS comes from bench/CMakeLists.txt.
#include "bench/blas.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <vector>
#include <climits>
#include <thread>

#include <dlfcn.h>

#if DESCENT_HAVE_OPENBLAS
#include <cblas.h>  // the enums only: the functions come from the library opened below
#endif

namespace descent::bench {

namespace {

// OpenBLAS, opened the first time the benchmark asks for it rather than linked: loading it
// (and the libgfortran it brings) costs every start of `descent` milliseconds, and only the
// benchmark's baseline columns use it (docs/benchmarks.md, start-up).
struct OpenBlas {
  void (*sgemm)(int, int, int, int, int, int, float,  // order and transposes: C enums, ints
                const float*, int, const float*, int, float, float*, int) = nullptr;
  void (*sgemv)(int, int, int, int, float, const float*, int, const float*,
                int, float, float*, int) = nullptr;
  void (*set_num_threads)(int) = nullptr;
  char* (*get_config)() = nullptr;
  char* (*get_corename)() = nullptr;
  std::string error;  // why it is not there
};

const OpenBlas& openblas() {
  static const OpenBlas lib = [] {
    OpenBlas l;
#if DESCENT_HAVE_OPENBLAS
    void* h = dlopen(DESCENT_OPENBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* why = dlerror();
      l.error = why ? why : "libopenblas could not be opened";
      return l;
    }
    auto sym = [h](const char* name) { return dlsym(h, name); };
    l.sgemm = reinterpret_cast<decltype(l.sgemm)>(sym("cblas_sgemm"));
    l.sgemv = reinterpret_cast<decltype(l.sgemv)>(sym("cblas_sgemv"));
    l.set_num_threads = reinterpret_cast<decltype(l.set_num_threads)>(sym("openblas_set_num_threads"));
    l.get_config = reinterpret_cast<decltype(l.get_config)>(sym("openblas_get_config"));
    l.get_corename = reinterpret_cast<decltype(l.get_corename)>(sym("openblas_get_corename"));
    if (!l.sgemm || !l.sgemv) {
      l.sgemm = nullptr;
      l.sgemv = nullptr;
      l.error = "the BLAS library opened has no cblas_sgemm/cblas_sgemv";
    }
#else
    l.error = "built without OpenBLAS";
#endif
    return l;
  }();
  return lib;
}

// The stand-ins when there is no OpenBLAS: the textbook loops, i-k-j so the inner loop walks
// rows of B and C contiguously.
void naive_sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b,
                                  float* c, bool b_transposed) {
  for (int64_t i = 0; i < m * n; ++i) c[i] = 0.0f;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t r = 0; r < k; ++r) {
      float air = a[i * k + r];
      for (int64_t j = 0; j < n; ++j)
        c[i * n + j] += air * (b_transposed ? b[j * k + r] : b[r * n + j]);
    }
}

void naive_sgemv(int64_t m, int64_t k, const float* w, const float* x, float* y) {
  for (int64_t j = 0; j < m; ++j) {
    float s = 0.0f;
    for (int64_t r = 0; r < k; ++r) s += w[j * k + r] * x[r];
    y[j] = s;
  }
}

void gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
          bool b_transposed) {
#if DESCENT_HAVE_OPENBLAS
  if (openblas().sgemm) {
    openblas().sgemm(CblasRowMajor, CblasNoTrans, int(b_transposed ? CblasTrans : CblasNoTrans),
                     static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a,
                     static_cast<int>(k), b, static_cast<int>(b_transposed ? k : n), 0.0f, c,
                     static_cast<int>(n));
    return;
  }
#endif
  naive_sgemm(m, n, k, a, b, c, b_transposed);
}

std::string dims(const tensor::Tensor& t) { return tensor::shape_text(t.shape); }

// A tensor whose buffer does not hold its shape's element count would make BLAS read past it.
bool well_formed(const tensor::Tensor& t) {
  return static_cast<int64_t>(t.data.size()) == t.numel();
}

bool fits_int(std::initializer_list<int64_t> sizes) {
  for (int64_t s : sizes)
    if (s > INT_MAX) return false;
  return true;
}

}  // namespace

bool blas_available() { return openblas().sgemm != nullptr; }

void blas_set_threads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (openblas().set_num_threads) openblas().set_num_threads(threads);
}

std::string blas_description() {
  const OpenBlas& lib = openblas();
  if (!lib.sgemm) return "no BLAS (" + lib.error + "): plain C++ loops";
  const char* config = lib.get_config ? lib.get_config() : nullptr;
  const char* core = lib.get_corename ? lib.get_corename() : nullptr;
  std::string text = config ? std::string(config) : std::string("OpenBLAS");
  // The kernel set it really runs: OPENBLAS_CORETYPE can force an older one (Haswell's AVX2
  // on an AVX-512 machine runs at half speed), and a comparison must say which it was.
  if (core) text += std::string("; running its ") + core + " kernels";
  if (const char* forced = std::getenv("OPENBLAS_CORETYPE"); forced && *forced)
    text += std::string(" (forced by OPENBLAS_CORETYPE=") + forced + ")";
  return text;
}

void blas_sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  gemm(m, n, k, a, b, c, false);
}

void blas_sgemv(int64_t m, int64_t k, const float* w, const float* x, float* y) {
#if DESCENT_HAVE_OPENBLAS
  if (openblas().sgemv) {
    openblas().sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(m), static_cast<int>(k), 1.0f,
                     w, static_cast<int>(k), x, 1, 0.0f, y, 1);
    return;
  }
#endif
  naive_sgemv(m, k, w, x, y);
}

bool blas_matmul(const tensor::Tensor& a, const tensor::Tensor& b, tensor::Tensor* out,
                 std::string* error) {
  if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[1] != b.shape[0]) {
    if (error) *error = "matmul: shapes " + dims(a) + " and " + dims(b) + " do not multiply";
    return false;
  }
  if (!well_formed(a) || !well_formed(b)) {
    if (error) *error = "matmul: a tensor's buffer does not match its shape";
    return false;
  }
  int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  if (!fits_int({m, n, k})) {
    if (error) *error = "matmul: dimensions beyond BLAS's 32-bit int";
    return false;
  }
  tensor::Tensor c;
  if (!tensor::zeros({m, n}, &c, error)) return false;
  blas_sgemm(m, n, k, a.data.data(), b.data.data(), c.data.data());
  *out = std::move(c);
  return true;
}

bool blas_linear(const tensor::Tensor& x, const tensor::Tensor& w, tensor::Tensor* out,
                 std::string* error) {
  if (x.shape.size() != 2 || w.shape.size() != 2 || x.shape[1] != w.shape[1]) {
    if (error)
      *error = "linear: shapes " + dims(x) + " and " + dims(w) +
               " do not match (want x [n, k] and w [m, k])";
    return false;
  }
  if (!well_formed(x) || !well_formed(w)) {
    if (error) *error = "linear: a tensor's buffer does not match its shape";
    return false;
  }
  int64_t rows = x.shape[0], k = x.shape[1], m = w.shape[0];
  if (!fits_int({rows, m, k})) {
    if (error) *error = "linear: dimensions beyond BLAS's 32-bit int";
    return false;
  }
  tensor::Tensor y;
  if (!tensor::zeros({rows, m}, &y, error)) return false;
  // One input row is a matrix-vector product, which BLAS does with a different (memory-bound)
  // kernel; more rows are X * W^T.
  if (rows == 1)
    blas_sgemv(m, k, w.data.data(), x.data.data(), y.data.data());
  else
    gemm(rows, m, k, x.data.data(), w.data.data(), y.data.data(), true);
  *out = std::move(y);
  return true;
}

// ---- the plain C++ baselines ----------------------------------------------------------

namespace {
// Rows split over threads (std::thread per call: tens of microseconds, negligible next to
// 16M elements).
void parallel_rows(int64_t rows, int threads, const std::function<void(int64_t, int64_t)>& fn) {
  threads = int(std::max<int64_t>(1, std::min<int64_t>(threads, rows)));
  if (threads == 1) return fn(0, rows);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(fn, rows * t / threads, rows * (t + 1) / threads);
  for (auto& th : pool) th.join();
}

}  // namespace

void cpp_add(const tensor::Tensor& a, const tensor::Tensor& b, tensor::Tensor* c, int threads) {
  c->shape = a.shape;
  if (c->data.size() != a.data.size()) c->data = tensor::AlignedFloats(a.data.size());
  const float* x = a.data.data();
  const float* y = b.data.data();
  float* z = c->data.data();
  // Chunks of whole cache lines, so no two threads write the same line.
  int64_t n = int64_t(a.data.size()), lines = (n + 15) / 16;
  parallel_rows(lines, threads, [&](int64_t l0, int64_t l1) {
    for (int64_t i = l0 * 16, e = std::min(n, l1 * 16); i < e; ++i) z[i] = x[i] + y[i];
  });
}

// The stable softmax of the prelude, row by row: the same four passes, fused per row.
void cpp_softmax(const tensor::Tensor& x, tensor::Tensor* out, int threads) {
  out->shape = x.shape;
  if (out->data.size() != x.data.size()) out->data = tensor::AlignedFloats(x.data.size());
  int64_t rows = x.shape[0], cols = x.shape[1];
  const float* in = x.data.data();
  float* o = out->data.data();
  parallel_rows(rows, threads, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* row = in + r * cols;
      float* dst = o + r * cols;
      float mx = row[0];
      for (int64_t c = 1; c < cols; ++c) mx = row[c] > mx ? row[c] : mx;
      float s = 0;
      for (int64_t c = 0; c < cols; ++c) s += dst[c] = std::exp(row[c] - mx);
      for (int64_t c = 0; c < cols; ++c) dst[c] /= s;
    }
  });
}

void cpp_layer_norm(const tensor::Tensor& x, const tensor::Tensor& gamma, const tensor::Tensor& beta,
                    tensor::Tensor* out, int threads) {
  out->shape = x.shape;
  if (out->data.size() != x.data.size()) out->data = tensor::AlignedFloats(x.data.size());
  int64_t rows = x.shape[0], cols = x.shape[1];
  const float *in = x.data.data(), *g = gamma.data.data(), *b = beta.data.data();
  float* o = out->data.data();
  parallel_rows(rows, threads, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* row = in + r * cols;
      float* dst = o + r * cols;
      float mu = 0, var = 0;
      for (int64_t c = 0; c < cols; ++c) mu += row[c] / float(cols);
      for (int64_t c = 0; c < cols; ++c) var += (row[c] - mu) * (row[c] - mu) / float(cols);
      float scale = 1.0f / std::sqrt(var + 0.00001f);
      for (int64_t c = 0; c < cols; ++c) dst[c] = (row[c] - mu) * scale * g[c] + b[c];
    }
  });
}

}  // namespace descent::bench
