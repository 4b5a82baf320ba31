// Tensors: dense f32 buffers with a shape, in C (row-major) order.
//
// This is the data every tensor backend reads and writes: the reference interpreter, the
// CPU code generated through LLVM, and OpenCL buffers are all filled from and copied back
// to a Tensor. Storage is 64-byte aligned so vector loads of generated code never split a
// cache line at the start of a row.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace descent::tensor {

// 64-byte aligned float storage (std::vector's allocator only promises 16), or floats
// borrowed from someone else (a NumPy array the Python module passes in without copying).
// Generated code loads and stores with 4-byte alignment, so borrowed storage need not be
// aligned: alignment only spares the first row a split cache line.
struct AlignedFloats {
  AlignedFloats() = default;
  explicit AlignedFloats(size_t n);  // zero-filled
  // n floats holding whatever they held (recycled memory): for a caller that writes them all.
  static AlignedFloats uninitialized(size_t n);
  // n floats at `data`, not copied: `owner` keeps them alive as long as this storage (or a
  // move of it) lives. A copy of borrowed storage is an ordinary owned copy.
  static AlignedFloats borrow(float* data, size_t n, std::shared_ptr<void> owner);
  bool borrowed() const { return owner_ != nullptr; }
  AlignedFloats(const AlignedFloats& other);
  AlignedFloats& operator=(const AlignedFloats& other);
  AlignedFloats(AlignedFloats&&) noexcept;
  AlignedFloats& operator=(AlignedFloats&&) noexcept;
  ~AlignedFloats();
  float* data() { return data_; }
  const float* data() const { return data_; }
  size_t size() const { return size_; }
  float& operator[](size_t i) { return data_[i]; }
  float operator[](size_t i) const { return data_[i]; }

 private:
  float* data_ = nullptr;
  size_t size_ = 0;
  std::shared_ptr<void> owner_;  // set: data_ is borrowed and owner_ keeps it alive
  // Where data_ goes back to: the allocator of the copy of this code that made it. The CPU
  // backend is a plugin with a copy of its own (plugins/), whose tensors the host frees:
  // through this, they return to the plugin's pool of buffers, which reuses them.
  void (*release_)(float*, size_t) = nullptr;
};

// Storage of 256 bytes and more is recycled: a freed buffer waits (32 MiB of them at most)
// for the next request of the same size (tensor.cpp says why). The counts, for the tests:
// buffers served from freed ones, buffers newly allocated, and those waiting. They are this
// copy of the code's: the CPU backend's plugin has a pool of its own (plugins/).
struct StorageStats {
  uint64_t reused = 0, fresh = 0;
  size_t kept_buffers = 0, kept_bytes = 0;
};
StorageStats storage_stats();
// Gives every waiting buffer back (a test that needs an empty pool; memory after a big job).
void release_kept_storage();

struct Tensor {
  std::vector<int64_t> shape;  // every dim >= 1; rank >= 1
  AlignedFloats data;          // product(shape) floats, C order

  int64_t numel() const;
  // Row-major strides in elements: shape [2, 3] -> [3, 1].
  std::vector<int64_t> strides() const;
};

// Product of dims; false (and *error) if a dim is < 1 or the product overflows or exceeds
// kMaxElements (a clear error instead of a failed 100 GB allocation).
constexpr int64_t kMaxElements = int64_t(1) << 32;  // 16 GiB of f32
bool check_shape(const std::vector<int64_t>& shape, std::string* error);
// The one message for a failed allocation, whichever layer (creation, interpreter, graph,
// device) caught it: "out of memory allocating a tensor of shape [..]".
std::string out_of_memory_text(const std::vector<int64_t>& shape);

// Creation. Each returns false with *error for a bad shape.
bool zeros(const std::vector<int64_t>& shape, Tensor* out, std::string* error);
// NumPy's empty: the storage is not cleared, for a caller that overwrites every element (a
// kernel that defines its whole output before reading it: tensor/schedule.h,
// defined_before_read).
bool empty(const std::vector<int64_t>& shape, Tensor* out, std::string* error);

bool ones(const std::vector<int64_t>& shape, Tensor* out, std::string* error);
bool full(const std::vector<int64_t>& shape, float value, Tensor* out, std::string* error);
// Uniform in [-1, 1), reproducible for a seed on every machine: a documented integer
// generator (SplitMix64), never std::uniform_real_distribution (whose output the C++
// standard leaves to the library).
bool rand(const std::vector<int64_t>& shape, int64_t seed, Tensor* out, std::string* error);
// [0, 1, ..., n-1] as f32, shape [n].
bool arange(int64_t n, Tensor* out, std::string* error);

// "tensor([2, 3], [0.5, -0.25, 1.0, ..., 3.0])": the shape and up to 6 values (first three
// and last three when there are more), each as the shortest text that reads back to the
// same f32.
std::string format_tensor(const Tensor& t);
std::string format_f32(float v);
double sum_all(const Tensor& t);  // accumulated in double, in index order
// "[1, 200]": a shape as every message and view writes it.
std::string shape_text(const std::vector<int64_t>& shape);

// Comparison used by every backend check (--check, tests): a and b agree when shapes are
// equal and every element satisfies |a - b| <= rtol * max(1, |a|, |b|) (nan only equals nan).
// On disagreement *why names the first differing index and both values.
bool allclose(const Tensor& a, const Tensor& b, double rtol, std::string* why);

// NumPy .npy files (format versions 1.0, 2.0 and 3.0 headers; little-endian '<f4', '<i4' or
// '<i8'; C order). Integer data (class labels) is converted to f32 on load; a value f32
// cannot hold exactly (above 2^24 in magnitude, not every integer is) is an error. Anything
// else (big-endian, Fortran order, other dtypes, truncated data, a bad header) is a clear
// error naming the file and the problem, never a crash. save_npy writes version 1.0 '<f4'.
bool load_npy(const std::string& path, Tensor* out, std::string* error);
bool save_npy(const Tensor& t, const std::string& path, std::string* error);
// The same, on bytes in memory (what the file functions use; tests feed malformed headers).
bool parse_npy(const std::string& bytes, Tensor* out, std::string* error);
std::string serialize_npy(const Tensor& t);

}  // namespace descent::tensor
