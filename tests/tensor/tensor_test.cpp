// test_tensor_tensor: storage alignment, shapes, creation, rand's documented generator,
// the f32 printer, sum_all and allclose.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "tensor/tensor.h"

using namespace descent::tensor;

namespace {

Tensor make(std::vector<int64_t> shape, std::vector<float> values) {
  Tensor t;
  std::string error;
  REQUIRE(zeros(shape, &t, &error));
  REQUIRE(values.size() == t.data.size());
  for (size_t i = 0; i < values.size(); ++i) t.data[i] = values[i];
  return t;
}

}  // namespace

TEST_CASE("AlignedFloats: 64-byte aligned, zero-filled, deep copies") {
  for (size_t n : {1, 3, 17, 1000}) {
    AlignedFloats a(n);
    CHECK(a.size() == n);
    CHECK(reinterpret_cast<uintptr_t>(a.data()) % 64 == 0);
    for (size_t i = 0; i < n; ++i) CHECK(a[i] == 0.0f);
  }
  AlignedFloats a(5);
  a[2] = 7.0f;
  AlignedFloats b(a);
  b[2] = 1.0f;
  CHECK(a[2] == 7.0f);
  CHECK(reinterpret_cast<uintptr_t>(b.data()) % 64 == 0);
  AlignedFloats c;
  c = a;
  CHECK(c.size() == 5);
  CHECK(c[2] == 7.0f);
  AlignedFloats d(std::move(c));
  CHECK(d.size() == 5);
  CHECK(c.size() == 0);
  CHECK(c.data() == nullptr);
  d = AlignedFloats(2);
  CHECK(d.size() == 2);
  AlignedFloats empty;
  CHECK(empty.size() == 0);
  AlignedFloats empty_copy(empty);
  CHECK(empty_copy.data() == nullptr);
}

TEST_CASE("numel and row-major strides") {
  Tensor t;
  t.shape = {2, 3, 4};
  CHECK(t.numel() == 24);
  CHECK(t.strides() == std::vector<int64_t>{12, 4, 1});
  t.shape = {5};
  CHECK(t.strides() == std::vector<int64_t>{1});
  t.shape = {2, 3};
  CHECK(t.strides() == std::vector<int64_t>{3, 1});
}

TEST_CASE("check_shape: rank, non-positive dims, element limit, overflow") {
  std::string error;
  CHECK(check_shape({1}, &error));
  CHECK(check_shape({200, 3072}, &error));
  CHECK(check_shape({int64_t(1) << 16, int64_t(1) << 16}, &error));  // exactly the limit

  CHECK_FALSE(check_shape({}, &error));
  CHECK(error == "a tensor shape needs at least one dimension");
  CHECK_FALSE(check_shape({2, 0}, &error));
  CHECK(error == "dimension 1 of shape [2, 0] is 0; every dimension must be >= 1");
  CHECK_FALSE(check_shape({-3}, &error));
  CHECK(error == "dimension 0 of shape [-3] is -3; every dimension must be >= 1");
  CHECK_FALSE(check_shape({int64_t(1) << 16, (int64_t(1) << 16) + 1}, &error));
  CHECK(error == "shape [65536, 65537] has more than 4294967296 elements (the tensor size limit)");
  // Each dim fits, but the product overflows int64: still the limit error, never a wrap.
  int64_t big = int64_t(1) << 40;
  CHECK_FALSE(check_shape({big, big, big}, &error));
  CHECK(error.find("has more than 4294967296 elements") != std::string::npos);
  CHECK_FALSE(check_shape({std::numeric_limits<int64_t>::max(), 2}, &error));
}

TEST_CASE("zeros, ones, full, arange") {
  Tensor t;
  std::string error;
  REQUIRE(zeros({2, 3}, &t, &error));
  CHECK(t.shape == std::vector<int64_t>{2, 3});
  CHECK(t.data.size() == 6);
  CHECK(sum_all(t) == 0.0);

  REQUIRE(ones({4, 5}, &t, &error));
  CHECK(t.data.size() == 20);
  CHECK(sum_all(t) == 20.0);

  REQUIRE(full({3}, -2.5f, &t, &error));
  CHECK(format_tensor(t) == "tensor([3], [-2.5, -2.5, -2.5])");

  REQUIRE(arange(5, &t, &error));
  CHECK(format_tensor(t) == "tensor([5], [0.0, 1.0, 2.0, 3.0, 4.0])");
  CHECK(sum_all(t) == 10.0);

  CHECK_FALSE(arange(0, &t, &error));
  CHECK(error == "dimension 0 of shape [0] is 0; every dimension must be >= 1");
  CHECK_FALSE(zeros({3, -1}, &t, &error));
  CHECK(error == "dimension 1 of shape [3, -1] is -1; every dimension must be >= 1");
  CHECK_FALSE(ones({}, &t, &error));
  CHECK_FALSE(full({1 << 20, 1 << 20}, 1.0f, &t, &error));
  CHECK(error.find("the tensor size limit") != std::string::npos);
}

TEST_CASE("rand: the documented SplitMix64 generator, values in [-1, 1)") {
  Tensor t;
  std::string error;
  REQUIRE(rand({2, 3}, 1, &t, &error));
  // Values computed independently with the Python code in tensor.cpp's comment.
  CHECK(t.data[0] == 0.13312304019927979f);
  CHECK(t.data[1] == 0.49156343936920166f);
  CHECK(t.data[2] == 0.9420053958892822f);
  CHECK(t.data[3] == -0.1112816333770752f);
  CHECK(t.data[4] == -0.11147069931030273f);
  CHECK(t.data[5] == 0.5257886648178101f);

  // A negative seed is its two's-complement uint64.
  REQUIRE(rand({3}, -7, &t, &error));
  CHECK(t.data[0] == -0.15533161163330078f);
  CHECK(t.data[1] == -0.04272603988647461f);
  CHECK(t.data[2] == 0.8140028715133667f);

  REQUIRE(rand({1000}, 42, &t, &error));
  CHECK(sum_all(t) == doctest::Approx(-20.450694918632507).epsilon(1e-12));
  for (size_t i = 0; i < t.data.size(); ++i) {
    CHECK(t.data[i] >= -1.0f);
    CHECK(t.data[i] < 1.0f);
    // Every value is on the 2^-23 grid: (k - 2^23) / 2^23 for an integer k.
    float scaled = t.data[i] * 8388608.0f;
    CHECK(scaled == std::floor(scaled));
  }

  // Same seed, same values; the shape only groups them.
  Tensor a, b;
  REQUIRE(rand({6}, 1, &a, &error));
  REQUIRE(rand({2, 3}, 1, &b, &error));
  for (size_t i = 0; i < 6; ++i) CHECK(a.data[i] == b.data[i]);
  REQUIRE(rand({6}, 2, &b, &error));
  CHECK(a.data[0] != b.data[0]);

  CHECK_FALSE(rand({0}, 1, &t, &error));
}

TEST_CASE("format_f32: shortest round trip, Python repr layout") {
  CHECK(format_f32(1.0f) == "1.0");
  CHECK(format_f32(0.5f) == "0.5");
  CHECK(format_f32(-0.25f) == "-0.25");
  CHECK(format_f32(0.0f) == "0.0");
  CHECK(format_f32(-0.0f) == "-0.0");
  CHECK(format_f32(0.1f) == "0.1");  // not 0.10000000149011612 (the widened double)
  CHECK(format_f32(1e20f) == "1e+20");
  CHECK(format_f32(1.5e-7f) == "1.5e-07");
  CHECK(format_f32(0.0001f) == "0.0001");
  CHECK(format_f32(123456.0f) == "123456.0");
  CHECK(format_f32(16777216.0f) == "16777216.0");
  CHECK(format_f32(3.4028235e38f) == "3.4028235e+38");
  CHECK(format_f32(1e-45f) == "1e-45");  // the smallest subnormal
  CHECK(format_f32(std::numeric_limits<float>::infinity()) == "inf");
  CHECK(format_f32(-std::numeric_limits<float>::infinity()) == "-inf");
  CHECK(format_f32(std::nanf("")) == "nan");
  // Round trip on rand values.
  Tensor t;
  std::string error;
  REQUIRE(rand({200}, 9, &t, &error));
  for (size_t i = 0; i < t.data.size(); ++i)
    CHECK(std::strtof(format_f32(t.data[i]).c_str(), nullptr) == t.data[i]);
}

TEST_CASE("format_tensor: shape and up to six values") {
  CHECK(format_tensor(make({2, 3}, {0.5f, -0.25f, 1.0f, 2.0f, 2.5f, 3.0f})) ==
        "tensor([2, 3], [0.5, -0.25, 1.0, 2.0, 2.5, 3.0])");
  CHECK(format_tensor(make({7}, {0, 1, 2, 3, 4, 5, 6})) ==
        "tensor([7], [0.0, 1.0, 2.0, ..., 4.0, 5.0, 6.0])");
  CHECK(format_tensor(make({1, 1}, {0.1f})) == "tensor([1, 1], [0.1])");
}

TEST_CASE("sum_all accumulates in double, in index order") {
  // 2^24 + 1 + 1 ... in f32 would stick at 2^24; in double it does not.
  Tensor t = make({3}, {16777216.0f, 1.0f, 1.0f});
  CHECK(sum_all(t) == 16777218.0);
}

TEST_CASE("allclose: relative tolerance, nan, inf, first difference named") {
  std::string why;
  Tensor a = make({2, 2}, {1.0f, 2.0f, 1000.0f, 0.0f});
  Tensor b = make({2, 2}, {1.0f, 2.0f, 1000.05f, 0.00005f});
  CHECK(allclose(a, b, 1e-4, &why));
  b.data[2] = 1000.5f;
  CHECK_FALSE(allclose(a, b, 1e-4, &why));
  CHECK(why == "values differ at [1, 0]: 1000.0 vs 1000.5");
  // The scale is at least 1: tiny absolute errors near 0 pass.
  Tensor z1 = make({1}, {0.0f}), z2 = make({1}, {9e-5f});
  CHECK(allclose(z1, z2, 1e-4, &why));
  z2.data[0] = 2e-4f;
  CHECK_FALSE(allclose(z1, z2, 1e-4, &why));
  CHECK(why == "values differ at [0]: 0.0 vs 0.0002");

  float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
  CHECK(allclose(make({2}, {nan, inf}), make({2}, {nan, inf}), 1e-4, &why));
  CHECK_FALSE(allclose(make({1}, {nan}), make({1}, {1.0f}), 1e-4, &why));
  CHECK(why == "values differ at [0]: nan vs 1.0");
  CHECK_FALSE(allclose(make({1}, {1.0f}), make({1}, {nan}), 1e-4, &why));
  CHECK_FALSE(allclose(make({1}, {inf}), make({1}, {3e38f}), 1e-4, &why));
  CHECK(why == "values differ at [0]: inf vs 3e+38");
  CHECK_FALSE(allclose(make({1}, {inf}), make({1}, {-inf}), 1e-4, &why));

  CHECK_FALSE(
      allclose(make({2, 3}, {0, 0, 0, 0, 0, 0}), make({3, 2}, {0, 0, 0, 0, 0, 0}), 1e-4, &why));
  CHECK(why == "shapes differ: [2, 3] vs [3, 2]");
  CHECK(allclose(a, a, 0.0, nullptr));
}

TEST_CASE("storage of 256 bytes and more is recycled: the next tensor of that size reuses it") {
  release_kept_storage();  // a full pool (after other tests) would keep nothing more
  CHECK(storage_stats().kept_buffers == 0);
  CHECK(storage_stats().kept_bytes == 0);
  std::string error;
  const float* first = nullptr;
  {
    Tensor t;
    REQUIRE(full({3, 100}, 5.0f, &t, &error));  // 1,200 bytes
    first = t.data.data();
  }
  StorageStats before = storage_stats();
  CHECK(before.kept_buffers >= 1);
  Tensor z, e;
  REQUIRE(zeros({300}, &z, &error));  // the same 1,200 bytes: the freed buffer, cleared
  CHECK(z.data.data() == first);
  CHECK(storage_stats().reused == before.reused + 1);
  for (size_t i = 0; i < z.data.size(); ++i) REQUIRE(z.data[i] == 0.0f);
  {
    Tensor t;
    REQUIRE(full({300}, 5.0f, &t, &error));
    first = t.data.data();
  }
  REQUIRE(empty({300}, &e, &error));  // not cleared: for a writer of every element
  CHECK(e.data.data() == first);
  CHECK(e.data[7] == 5.0f);
  // Small buffers are malloc's: not counted, not kept.
  uint64_t fresh = storage_stats().fresh, reused = storage_stats().reused;
  { Tensor s; REQUIRE(zeros({8}, &s, &error)); }
  CHECK(storage_stats().fresh == fresh);
  CHECK(storage_stats().reused == reused);
}
