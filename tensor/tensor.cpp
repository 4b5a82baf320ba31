// Tensors: aligned storage, shapes, creation, text, comparison (see tensor.h).
#include "tensor/tensor.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>
#include <vector>

#include <sys/mman.h>

#include "lang/value.h"

namespace descent::tensor {

// ---------------------------------------------------------------------------------------------
// AlignedFloats
//
// The nothrow aligned operator new: a failed allocation leaves an empty buffer (size 0) that
// the creation functions turn into an error value, instead of an exception escaping the library.

namespace {

constexpr std::align_val_t kAlign{64};

// Large buffers come straight from the kernel (page-aligned, zero-filled) and go straight
// back when freed. Through malloc, a loop that makes and drops a 4 MiB tensor each time ran
// at 550 MB resident while holding 20 MiB: glibc raises its mmap threshold after the first
// free, serves the rest from the heap, and does not give that back.
constexpr size_t kMapBytes = size_t(1) << 20;
// Freed buffers of 256 bytes and more (at most kKeptBytes in all) are kept for the next
// buffer of the same size, the most recently freed first, whose lines are likeliest still in
// cache. A model run in a loop makes the same few tensors every batch and the collector frees
// them a few thousand at a time; without this each cost an aligned malloc and free (glibc's
// memalign path, a third of the runtime's own time on a small MLP) or, for a mapping, a page
// fault per 4 KiB written (3x slower on such a loop).
constexpr size_t kRecycleBytes = 256;
constexpr size_t kKeptBytes = size_t(32) << 20;

struct KeptBlocks {
  std::mutex mutex;
  // bytes -> storage, oldest first; a size with none waiting has no entry (a program of
  // ever-new shapes would otherwise grow the map by one empty entry per size)
  std::unordered_map<size_t, std::vector<void*>> by_size;
  size_t bytes = 0, count = 0;
  uint64_t reused = 0, fresh = 0;  // allocations of kRecycleBytes or more, by where from
};
KeptBlocks& kept() {
  static KeptBlocks* k = new KeptBlocks;  // never destroyed: tensors may outlive statics
  return *k;
}

// 64-byte aligned, zero-filled unless the caller overwrites it all; null when out of memory.
float* allocate_floats(size_t n, bool zero = true) {
  if (n == 0) return nullptr;
  if (n > SIZE_MAX / sizeof(float)) return nullptr;
  size_t bytes = n * sizeof(float);
  if (bytes >= kRecycleBytes) {
    KeptBlocks& k = kept();
    std::unique_lock<std::mutex> lock(k.mutex);
    auto it = k.by_size.find(bytes);
    if (it != k.by_size.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      if (it->second.empty()) k.by_size.erase(it);
      k.bytes -= bytes;
      --k.count;
      ++k.reused;
      lock.unlock();
      if (zero) std::memset(p, 0, bytes);
      return static_cast<float*>(p);
    }
    ++k.fresh;
  }
  if (bytes < kMapBytes) {
    void* p = ::operator new(bytes, kAlign, std::nothrow);
    if (p && zero) std::memset(p, 0, bytes);
    return static_cast<float*>(p);
  }
  // Fresh pages are zero already, and stay uncommitted until written.
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<float*>(p);
}

void free_floats(float* p, size_t n) {
  if (!p) return;
  size_t bytes = n * sizeof(float);
  if (bytes >= kRecycleBytes) {
    KeptBlocks& k = kept();
    std::lock_guard<std::mutex> lock(k.mutex);
    if (k.bytes + bytes <= kKeptBytes) {
      k.by_size[bytes].push_back(p);
      k.bytes += bytes;
      ++k.count;
      return;
    }
  }
  if (bytes < kMapBytes)
    ::operator delete(p, kAlign);
  else
    munmap(p, bytes);
}

}  // namespace

AlignedFloats::AlignedFloats(size_t n)
    : data_(allocate_floats(n)), size_(data_ ? n : 0), release_(&free_floats) {}

StorageStats storage_stats() {
  KeptBlocks& k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  return {k.reused, k.fresh, k.count, k.bytes};
}

void release_kept_storage() {
  KeptBlocks& k = kept();
  std::unordered_map<size_t, std::vector<void*>> waiting;
  {
    std::lock_guard<std::mutex> lock(k.mutex);
    waiting.swap(k.by_size);
    k.bytes = k.count = 0;
  }
  for (auto& [bytes, blocks] : waiting)
    for (void* p : blocks) {
      if (bytes < kMapBytes)
        ::operator delete(p, kAlign);
      else
        munmap(p, bytes);
    }
}

AlignedFloats AlignedFloats::uninitialized(size_t n) {
  AlignedFloats a;
  a.data_ = allocate_floats(n, /*zero=*/false);
  a.size_ = a.data_ ? n : 0;
  a.release_ = &free_floats;
  return a;
}

AlignedFloats::AlignedFloats(const AlignedFloats& other)
    : data_(allocate_floats(other.size_, /*zero=*/false)), size_(data_ ? other.size_ : 0),
      release_(&free_floats) {
  if (data_) std::memcpy(data_, other.data_, size_ * sizeof(float));
}

AlignedFloats& AlignedFloats::operator=(const AlignedFloats& other) {
  if (this == &other) return *this;
  AlignedFloats copy(other);
  *this = std::move(copy);
  return *this;
}

AlignedFloats AlignedFloats::borrow(float* data, size_t n, std::shared_ptr<void> owner) {
  AlignedFloats a;
  a.data_ = data;
  a.size_ = data ? n : 0;
  a.owner_ = std::move(owner);
  if (!a.owner_) a.owner_ = std::make_shared<int>(0);  // still borrowed: never freed here
  return a;
}

AlignedFloats::AlignedFloats(AlignedFloats&& other) noexcept
    : data_(other.data_), size_(other.size_), owner_(std::move(other.owner_)), release_(other.release_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

AlignedFloats& AlignedFloats::operator=(AlignedFloats&& other) noexcept {
  if (this == &other) return *this;
  if (!owner_ && release_) release_(data_, size_);
  data_ = other.data_;
  size_ = other.size_;
  owner_ = std::move(other.owner_);
  release_ = other.release_;
  other.data_ = nullptr;
  other.size_ = 0;
  return *this;
}

AlignedFloats::~AlignedFloats() {
  if (!owner_ && release_) release_(data_, size_);
}

// ---------------------------------------------------------------------------------------------
// Shapes

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> Tensor::strides() const {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

namespace {

void set_error(std::string* error, std::string message) {
  if (error) *error = std::move(message);
}

}  // namespace

bool check_shape(const std::vector<int64_t>& shape, std::string* error) {
  if (shape.empty()) {
    set_error(error, "a tensor shape needs at least one dimension");
    return false;
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 1) {
      set_error(error, "dimension " + std::to_string(i) + " of shape " + shape_text(shape) +
                           " is " + std::to_string(shape[i]) + "; every dimension must be >= 1");
      return false;
    }
  }
  // Divide before multiplying, so a product that would overflow int64 is caught too.
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d > kMaxElements / n) {
      set_error(error, "shape " + shape_text(shape) + " has more than " +
                           std::to_string(kMaxElements) + " elements (the tensor size limit)");
      return false;
    }
    n *= d;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Creation

namespace {

// Every creation function funnels through here: shape check, then a zeroed allocation whose
// failure is an error value.
bool make(const std::vector<int64_t>& shape, Tensor* out, std::string* error, bool zero = true) {
  if (!check_shape(shape, error)) return false;
  Tensor t;
  t.shape = shape;
  size_t n = static_cast<size_t>(t.numel());
  t.data = zero ? AlignedFloats(n) : AlignedFloats::uninitialized(n);
  if (t.data.size() != n) {
    set_error(error, out_of_memory_text(shape));
    return false;
  }
  *out = std::move(t);
  return true;
}

}  // namespace

std::string out_of_memory_text(const std::vector<int64_t>& shape) {
  return "out of memory allocating a tensor of shape " + shape_text(shape);
}

bool zeros(const std::vector<int64_t>& shape, Tensor* out, std::string* error) {
  return make(shape, out, error);
}

bool empty(const std::vector<int64_t>& shape, Tensor* out, std::string* error) {
  return make(shape, out, error, /*zero=*/false);
}

bool ones(const std::vector<int64_t>& shape, Tensor* out, std::string* error) {
  return full(shape, 1.0f, out, error);
}

bool full(const std::vector<int64_t>& shape, float value, Tensor* out, std::string* error) {
  if (!make(shape, out, error)) return false;
  float* p = out->data.data();
  for (size_t i = 0; i < out->data.size(); ++i) p[i] = value;
  return true;
}

// The generator, so that anyone can reproduce rand(shape, seed) elsewhere (Python below):
//
//   SplitMix64 (Steele, Lea, Flood 2014; the seeder of xoshiro), state = seed as uint64.
//   For each element in C order: one 64-bit draw z, then k = z >> 40 (the top 24 bits),
//   u = k * 2^-24 (exact in f32: uniform on the 2^24-point grid of [0, 1)), value = 2u - 1
//   (also exact: (k - 2^23) / 2^23), so every value lies in [-1, 1).
//
//   def rand(n, seed):
//       M = (1 << 64) - 1
//       s, out = seed & M, []
//       for _ in range(n):
//           s = (s + 0x9E3779B97F4A7C15) & M
//           z = s
//           z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
//           z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
//           z ^= z >> 31
//           out.append(2.0 * (z >> 40) / 2**24 - 1.0)
//       return np.array(out, dtype=np.float32).reshape(shape)
//
// Integer arithmetic only, so every machine and compiler produces the same bits.
bool rand(const std::vector<int64_t>& shape, int64_t seed, Tensor* out, std::string* error) {
  if (!make(shape, out, error)) return false;
  uint64_t state = static_cast<uint64_t>(seed);
  float* p = out->data.data();
  for (size_t i = 0; i < out->data.size(); ++i) {
    state += 0x9E3779B97F4A7C15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    float u = static_cast<float>(z >> 40) * 0x1p-24f;
    p[i] = 2.0f * u - 1.0f;
  }
  return true;
}

bool arange(int64_t n, Tensor* out, std::string* error) {
  if (!make({n}, out, error)) return false;
  float* p = out->data.data();
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(i);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Text

// The f32 twin of lang's format_float: the shortest digits that read back to the same f32
// (std::to_chars on a float, not on the widened double, which would print 0.1f as
// 0.10000000149011612), laid out as Python's repr lays out a float: plain notation for a
// decimal exponent in [-4, 16), scientific otherwise, always with a '.' or an exponent.
std::string format_f32(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  return repr_layout(std::string(buf, res.ptr));
}

std::string format_tensor(const Tensor& t) {
  std::string s = "tensor(" + shape_text(t.shape) + ", [";
  size_t n = t.data.size();
  auto add = [&](size_t i, bool first) {
    if (!first) s += ", ";
    s += format_f32(t.data[i]);
  };
  if (n <= 6) {
    for (size_t i = 0; i < n; ++i) add(i, i == 0);
  } else {
    for (size_t i = 0; i < 3; ++i) add(i, i == 0);
    s += ", ...";
    for (size_t i = n - 3; i < n; ++i) add(i, false);
  }
  return s + "])";
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

double sum_all(const Tensor& t) {
  double s = 0.0;
  for (size_t i = 0; i < t.data.size(); ++i) s += static_cast<double>(t.data[i]);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Comparison

namespace {

// The multi-index of flat position `flat` in C order: the form a student can look up.
std::string format_index(const Tensor& t, size_t flat) {
  std::vector<int64_t> idx(t.shape.size(), 0);
  uint64_t rest = flat;
  for (size_t i = t.shape.size(); i-- > 0;) {
    uint64_t d = t.shape[i] > 0 ? static_cast<uint64_t>(t.shape[i]) : 1;
    idx[i] = static_cast<int64_t>(rest % d);
    rest /= d;
  }
  return shape_text(idx);
}

bool close(float a, float b, double rtol) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (a == b) return true;  // also inf == inf
  // An infinity is only close to itself: rtol * inf would accept any finite partner.
  if (std::isinf(a) || std::isinf(b)) return false;
  double da = a, db = b;
  double scale = std::max({1.0, std::fabs(da), std::fabs(db)});
  return std::fabs(da - db) <= rtol * scale;
}

}  // namespace

bool allclose(const Tensor& a, const Tensor& b, double rtol, std::string* why) {
  if (a.shape != b.shape) {
    set_error(why, "shapes differ: " + shape_text(a.shape) + " vs " + shape_text(b.shape));
    return false;
  }
  if (a.data.size() != b.data.size()) {
    set_error(why, "element counts differ: " + std::to_string(a.data.size()) + " vs " +
                       std::to_string(b.data.size()));
    return false;
  }
  for (size_t i = 0; i < a.data.size(); ++i) {
    if (!close(a.data[i], b.data[i], rtol)) {
      set_error(why, "values differ at " + format_index(a, i) + ": " + format_f32(a.data[i]) +
                         " vs " + format_f32(b.data[i]));
      return false;
    }
  }
  return true;
}

}  // namespace descent::tensor
