// test_tensor_npy: .npy round trips, the checked-in sample files (tests/tensor/npy/, written
// by make_samples.py there), every malformed header we could think of, and the fuzz-style
// sweeps: every truncation and every single-byte flip of a small file is an error value or a
// valid tensor, never a crash or a hang.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "tensor/tensor.h"

using namespace descent::tensor;
namespace fs = std::filesystem;

namespace {

const std::string kSamples = std::string(DESCENT_TESTS_DIR) + "/tensor/npy/";

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Tensor make(std::vector<int64_t> shape, std::vector<float> values) {
  Tensor t;
  std::string error;
  REQUIRE(zeros(shape, &t, &error));
  REQUIRE(values.size() == t.data.size());
  for (size_t i = 0; i < values.size(); ++i) t.data[i] = values[i];
  return t;
}

// Bitwise equality, so nan payloads and -0.0 count.
bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.shape != b.shape || a.data.size() != b.data.size()) return false;
  return a.data.size() == 0 ||
         std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)) == 0;
}

// A version 1.0 file from a header dict text and data bytes, padded as numpy pads.
std::string npy_bytes(const std::string& dict, const std::string& data, int major = 1) {
  size_t pre = major == 1 ? 10 : 12;
  std::string h = dict;
  size_t total = pre + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) out += static_cast<char>(h.size() >> (8 * i));
  return out + h + data;
}

std::string f32_bytes(std::vector<float> v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

std::string parse_error(const std::string& bytes) {
  Tensor t;
  std::string error;
  CHECK_FALSE(parse_npy(bytes, &t, &error));
  return error;
}

// A scratch directory removed when the test ends.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "descent-npy-test-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

TEST_CASE("serialize_npy writes what numpy writes: version 1.0, 64-byte aligned data") {
  Tensor t = make({2, 3}, {0.5f, -0.25f, 1.0f, 2.0f, 2.5f, 3.0f});
  std::string bytes = serialize_npy(t);
  // f32_2x3.npy holds the bytes np.save writes for this array.
  CHECK(bytes == read_bytes(kSamples + "f32_2x3.npy"));
  CHECK(bytes.substr(10, 59) == "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  CHECK(bytes[10 + 117] == '\n');
  for (auto shape : std::vector<std::vector<int64_t>>{
           {1}, {7}, {3, 5}, {2, 3, 4}, {1, 2, 3, 4}, {123456, 1}, {2, 2, 2, 2, 2, 2, 2, 2}}) {
    Tensor z;
    std::string error;
    REQUIRE(zeros(shape, &z, &error));
    std::string b = serialize_npy(z);
    CHECK(b[6] == 1);
    size_t header_len = static_cast<unsigned char>(b[8]) | static_cast<unsigned char>(b[9]) << 8;
    CHECK((10 + header_len) % 64 == 0);
    CHECK(b.size() == 10 + header_len + 4 * z.data.size());
  }
  CHECK(serialize_npy(make({3}, {1, 2, 3})).find("'shape': (3,), }") != std::string::npos);
}

TEST_CASE("round trips: ranks 1 to 4, nan, inf, -0.0 and subnormals bit for bit") {
  float nan = std::numeric_limits<float>::quiet_NaN();
  float inf = std::numeric_limits<float>::infinity();
  std::vector<Tensor> cases = {
      make({5}, {nan, inf, -inf, -0.0f, 1e-45f}),
      make({2, 3}, {0.1f, -0.2f, 3.4028235e38f, -1.17549435e-38f, 0.0f, 42.0f}),
  };
  Tensor r;
  std::string error;
  REQUIRE(rand({2, 3, 4}, 7, &r, &error));
  cases.push_back(r);
  REQUIRE(rand({2, 1, 3, 5}, 8, &r, &error));
  cases.push_back(r);
  REQUIRE(rand({200, 3072}, 2, &r, &error));
  cases.push_back(r);
  for (const Tensor& t : cases) {
    Tensor back;
    REQUIRE(parse_npy(serialize_npy(t), &back, &error));
    CHECK(same_bits(t, back));
  }
  // A nan payload other than the default survives too.
  Tensor p = make({1}, {std::bit_cast<float>(0x7fc12345u)});
  Tensor back;
  REQUIRE(parse_npy(serialize_npy(p), &back, &error));
  CHECK(std::bit_cast<uint32_t>(back.data[0]) == 0x7fc12345u);
}

TEST_CASE("a header too long for version 1.0 is written as version 2.0 and reads back") {
  // 22000 dims of 1: "(1, 1, ..." is ~66 KB of header, over 1.0's uint16 length.
  Tensor t;
  std::string error;
  REQUIRE(full(std::vector<int64_t>(22000, 1), 3.5f, &t, &error));
  std::string bytes = serialize_npy(t);
  CHECK(bytes[6] == 2);
  Tensor back;
  REQUIRE(parse_npy(bytes, &back, &error));
  CHECK(same_bits(t, back));
}

TEST_CASE("sample files from other writers load") {
  Tensor t;
  std::string error;
  REQUIRE(load_npy(kSamples + "f32_2x3.npy", &t, &error));
  CHECK(format_tensor(t) == "tensor([2, 3], [0.5, -0.25, 1.0, 2.0, 2.5, 3.0])");

  REQUIRE(load_npy(kSamples + "f32_specials.npy", &t, &error));
  CHECK(format_tensor(t) == "tensor([5], [nan, inf, -inf, -0.0, 1e-45])");
  CHECK(std::signbit(t.data[3]));

  // i32 converts to f32 exactly (2^24 is still exact).
  REQUIRE(load_npy(kSamples + "i32_3x2.npy", &t, &error));
  CHECK(format_tensor(t) == "tensor([3, 2], [-2.0, -1.0, 0.0, 1.0, 2.0, 16777216.0])");

  // i64 (NumPy's default int, what a label array usually is) converts the same way.
  REQUIRE_MESSAGE(load_npy(kSamples + "i64_labels.npy", &t, &error), error);
  CHECK(format_tensor(t) == "tensor([2, 3], [3.0, 0.0, 9.0, 1.0, -7.0, 33554432.0])");

  REQUIRE(load_npy(kSamples + "f32_v2.npy", &t, &error));
  CHECK(format_tensor(t) == "tensor([2, 2], [1.0, 2.0, 3.0, 4.0])");
  REQUIRE(load_npy(kSamples + "f32_v3.npy", &t, &error));
  CHECK(format_tensor(t) == "tensor([1, 3], [7.0, 8.0, 9.0])");
  // Python 2 era: "(2L, 2L)" and 16-byte padding.
  REQUIRE(load_npy(kSamples + "f32_py2.npy", &t, &error));
  CHECK(format_tensor(t) == "tensor([2, 2], [1.0, -1.0, 0.125, 64.0])");
  // Keys in another order, double quotes, no spaces, no trailing comma.
  REQUIRE(load_npy(kSamples + "f32_4d_reordered.npy", &t, &error));
  CHECK(format_tensor(t) == "tensor([1, 2, 2, 1], [1.0, 2.0, 3.0, 4.0])");
}

TEST_CASE("malformed sample files: each a clear error naming the file") {
  struct Case {
    const char* file;
    const char* message;
  };
  const Case cases[] = {
      {"bad_magic.npy", "not a .npy file (bad magic; expected \\x93NUMPY)"},
      {"bad_version.npy", "unknown .npy format version 9.0 (supported: 1.0, 2.0, 3.0)"},
      {"bad_f8.npy", "dtype '<f8' is not supported (only little-endian f32, i32 and i64)"},
      {"bad_big_endian.npy",
       "big-endian dtype '>f4' is not supported (only little-endian f32, i32 and i64)"},
      {"bad_fortran.npy",
       "Fortran-order (column-major) arrays are not supported; save with C order"},
      {"bad_no_shape.npy", "header has no 'shape' key"},
      {"bad_0d.npy", "0-d arrays are not supported"},
      {"bad_negative_dim.npy", "negative dimension -3 in shape (2, -3)"},
      {"bad_short_data.npy", "data is truncated: shape (2, 3) needs 24 bytes, the file has 20"},
      {"bad_long_data.npy", "unexpected 4 bytes after the data of shape (2,)"},
      {"bad_header_len.npy", "header is truncated (it says 255 bytes, the file has 15)"},
      {"bad_i32_inexact.npy",
       "the i32 value 16777217 at index [1, 1] is not exactly representable as f32 (only "
       "integers up to 2^24 = 16777216 in magnitude all are)"},
      {"bad_i64_inexact.npy",
       "the i64 value 9007199254740993 at index [1] is not exactly representable as f32 (only "
       "integers up to 2^24 = 16777216 in magnitude all are)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.file);
    Tensor t;
    std::string error;
    std::string path = kSamples + c.file;
    CHECK_FALSE(load_npy(path, &t, &error));
    CHECK(error == path + ": " + c.message);
  }
}

TEST_CASE("malformed headers in memory") {
  const std::string data4 = f32_bytes({1, 2, 3, 4});
  struct Case {
    std::string dict;
    std::string message;
  };
  const Case cases[] = {
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }",
       "dtype '<f8' is not supported (only little-endian f32, i32 and i64)"},
      {"{'descr': '|f4', 'fortran_order': False, 'shape': (4,), }",
       "dtype '|f4' is not supported (only little-endian f32, i32 and i64)"},
      {"{'descr': '>i4', 'fortran_order': False, 'shape': (4,), }",
       "big-endian dtype '>i4' is not supported (only little-endian f32, i32 and i64)"},
      {"{'descr': '>i8', 'fortran_order': False, 'shape': (4,), }",
       "big-endian dtype '>i8' is not supported (only little-endian f32, i32 and i64)"},
      {"{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }",
       "data is truncated: shape (3,) needs 24 bytes, the file has 16"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }",
       "structured dtypes are not supported (only little-endian f32, i32 and i64)"},
      {"{'descr': 4, 'fortran_order': False, 'shape': (4,), }",
       "unsupported value for 'descr' in header"},
      {"{'fortran_order': False, 'shape': (4,), }", "header has no 'descr' key"},
      {"{'descr': '<f4', 'shape': (4,), }", "header has no 'fortran_order' key"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (4,), }",
       "unsupported value for 'fortran_order' in header"},
      {"{'descr': '<f4', 'fortran_order': 'no', 'shape': (4,), }",
       "'fortran_order' must be True or False"},
      {"{'descr': '<f4', 'fortran_order': Falsey, 'shape': (4,), }",
       "unsupported value for 'fortran_order' in header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'extra': 'x', }",
       "unexpected key 'extra' in header"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,)}",
       "duplicate key 'descr' in header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4), }",
       "'shape' must be a tuple of integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [4], }",
       "unsupported value for 'shape' in header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': '4', }",
       "'shape' must be a tuple of integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }",
       "'shape' must be a tuple of integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 2), }",
       "'shape' must be a tuple of integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), }", "0-d arrays are not supported"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4), }",
       "shape (0, 4) has a zero-size dimension; tensors need every dimension >= 1"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
       "dimension in 'shape' is too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000), }",
       "shape [100000, 100000] has more than 4294967296 elements (the tensor size limit)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,) ",
       "expected ',' or '}' in header dict"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), } x",
       "unexpected text after the header dict"},
      {"('descr', '<f4')", "header is not a Python dict (expected '{')"},
      {"{descr: '<f4'}", "expected a quoted key in header dict"},
      {"{'descr' '<f4'}", "expected ':' after key 'descr' in header"},
      {"{'descr': '<f4}", "unterminated string for 'descr' in header"},
      {"", "header is not a Python dict (expected '{')"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.dict);
    CHECK(parse_error(npy_bytes(c.dict, data4)) == c.message);
  }

  // Valid variations of spacing, quoting, commas and ints.
  for (std::string dict :
       {"{'descr':'<f4','fortran_order':False,'shape':(4,)}",
        "{ \"shape\" : ( 2 , 2 , ) , 'descr' : '<f4' , 'fortran_order' : False }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1L, 4L), }",
        "\t{'descr': '<i4', 'fortran_order': False, 'shape': (4,)}\r"}) {
    CAPTURE(dict);
    Tensor t;
    std::string error;
    CHECK(parse_npy(npy_bytes(dict, data4), &t, &error));
    CHECK(t.data.size() == 4);
  }
}

TEST_CASE("malformed preambles") {
  std::string good = serialize_npy(make({2}, {1, 2}));
  CHECK(parse_error("") == "file is truncated (0 bytes, inside the preamble)");
  CHECK(parse_error("\x93NUM") == "file is truncated (4 bytes, inside the preamble)");
  CHECK(parse_error("PK\x03\x04") == "not a .npy file (bad magic; expected \\x93NUMPY)");
  CHECK(parse_error(std::string("\x93NUMPY\x01\x00\x05", 9)) ==
        "file is truncated (9 bytes, inside the preamble)");
  std::string v = good;
  v[7] = 1;
  CHECK(parse_error(v) == "unknown .npy format version 1.1 (supported: 1.0, 2.0, 3.0)");
  v = good;
  v[6] = 0;
  CHECK(parse_error(v) == "unknown .npy format version 0.0 (supported: 1.0, 2.0, 3.0)");
  // Version 2.0 with a 4 GB header length: refused before anything is scanned.
  std::string huge = std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12) + "{}";
  CHECK(parse_error(huge) == "header length 4294967295 is too long (limit 1048576 bytes)");
  CHECK(parse_error(std::string("\x93NUMPY\x03\x00\x10\x00\x00\x00", 12) + "{'descr'") ==
        "header is truncated (it says 16 bytes, the file has 8)");
}

TEST_CASE("every truncation of a small file is an error, never a crash") {
  Tensor t;
  std::string error;
  REQUIRE(rand({2, 3}, 5, &t, &error));
  std::string good = serialize_npy(t);
  for (size_t n = 0; n < good.size(); ++n) {
    CAPTURE(n);
    Tensor out;
    std::string e;
    CHECK_FALSE(parse_npy(good.substr(0, n), &out, &e));
    CHECK_FALSE(e.empty());
  }
  Tensor out;
  CHECK(parse_npy(good, &out, &error));
}

TEST_CASE("every single-byte change of a small file is an error or a valid tensor") {
  Tensor t;
  std::string error;
  REQUIRE(rand({2, 3}, 5, &t, &error));
  std::string good = serialize_npy(t);
  size_t data_start = good.size() - 24;
  for (size_t i = 0; i < good.size(); ++i) {
    for (int mask : {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff}) {
      std::string bytes = good;
      bytes[i] = static_cast<char>(bytes[i] ^ mask);
      Tensor out;
      std::string e;
      bool ok = parse_npy(bytes, &out, &e);
      CAPTURE(i);
      CAPTURE(mask);
      if (ok) {
        // Whatever was accepted is a well-formed tensor that fits in the file.
        CHECK(check_shape(out.shape, &e));
        CHECK(out.data.size() * 4 <= bytes.size());
      } else {
        CHECK_FALSE(e.empty());
        CHECK(i < data_start);  // data bytes are just other floats
      }
    }
  }
  // Header padding is only whitespace: a space turned into a tab or newline is still valid.
  for (char c : {'\t', '\n', '\r'}) {
    std::string bytes = good;
    size_t pad = bytes.find("}") + 3;
    REQUIRE(bytes[pad] == ' ');
    bytes[pad] = c;
    Tensor out;
    CHECK(parse_npy(bytes, &out, &error));
    CHECK(same_bits(out, t));
  }
}

TEST_CASE("load_npy and save_npy: files, and errors naming them") {
  TempDir dir;
  std::string path = (dir.path / "x.npy").string();
  Tensor t;
  std::string error;
  REQUIRE(rand({3, 4}, 11, &t, &error));
  REQUIRE(save_npy(t, path, &error));
  Tensor back;
  REQUIRE(load_npy(path, &back, &error));
  CHECK(same_bits(t, back));
  CHECK(read_bytes(path) == serialize_npy(t));

  std::string missing = (dir.path / "missing.npy").string();
  CHECK_FALSE(load_npy(missing, &back, &error));
  CHECK(error == missing + ": cannot open: No such file or directory");

  CHECK_FALSE(load_npy(dir.path.string(), &back, &error));
  CHECK(error == dir.path.string() + ": is a directory, not a .npy file");

  std::string nowhere = (dir.path / "no" / "such" / "dir.npy").string();
  CHECK_FALSE(save_npy(t, nowhere, &error));
  CHECK(error == nowhere + ": cannot open for writing: No such file or directory");

  Tensor bad;
  bad.shape = {2, 0};
  CHECK_FALSE(save_npy(bad, path, &error));
  CHECK(error ==
        path + ": cannot save: dimension 1 of shape [2, 0] is 0; every dimension must be >= 1");
  bad.shape = {2, 2};
  bad.data = AlignedFloats(3);
  CHECK_FALSE(save_npy(bad, path, &error));
  CHECK(error == path + ": cannot save: the tensor has 3 values but its shape needs 4");

  // A failed load leaves *out untouched.
  Tensor keep = make({1}, {5.0f});
  CHECK_FALSE(load_npy(kSamples + "bad_f8.npy", &keep, &error));
  CHECK(format_tensor(keep) == "tensor([1], [5.0])");
}

TEST_CASE("a save that fails half-way leaves the file that was there, and no scratch file") {
  // A file-size limit in a forked child makes the write fail after the first 4 KiB, as a full
  // disk would: the old file must survive whole (the save writes beside it and renames).
  TempDir dir;
  std::string path = (dir.path / "keep.npy").string();
  Tensor old_t = make({2}, {1.0f, 2.0f});
  std::string error;
  REQUIRE(save_npy(old_t, path, &error));
  std::string before = read_bytes(path);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);  // the write then fails with EFBIG instead of killing us
    rlimit lim{4096, 4096};
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(77);
    Tensor big;
    std::string why;
    if (!rand({100, 100}, 3, &big, &why)) _exit(3);
    bool saved = save_npy(big, path, &why);
    _exit(!saved && why == path + ": write error: File too large" ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(read_bytes(path) == before);
  CHECK_FALSE(std::filesystem::exists(path + ".descent-tmp"));
  // Writing to a device goes in place (no scratch file beside /dev/full).
  CHECK_FALSE(save_npy(old_t, "/dev/full", &error));
  CHECK(error == "/dev/full: write error: No space left on device");
  CHECK_FALSE(std::filesystem::exists("/dev/full.descent-tmp"));
}
