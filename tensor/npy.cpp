// NumPy .npy files (see tensor.h), following numpy/lib/format.py:
//
//   "\x93NUMPY" major minor   6-byte magic, then the format version (1.0, 2.0 or 3.0)
//   HEADER_LEN                little-endian uint16 in 1.0, uint32 in 2.0 and 3.0
//   HEADER                    a Python dict literal, padded with spaces, ending in '\n':
//                             {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//   DATA                      product(shape) items, C order, nothing after them
//
// The header is parsed as the small Python grammar it is (strings, True/False, tuples of
// ints, in any key order, with any spacing and trailing commas), not matched against the
// exact text numpy writes today: files from older numpy (and other writers) differ in
// spacing, key order and padding.
#include "tensor/tensor.h"

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>

namespace descent::tensor {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// No valid header for our dtypes comes near this; a larger length field is a corrupt or
// hostile file, and refusing it keeps a 4 GB "header" from being scanned.
constexpr uint32_t kMaxHeaderLen = 1 << 20;

// ---------------------------------------------------------------------------------------------
// The header's dict literal

struct HeaderValue {
  enum class Kind { String, Bool, Tuple } kind = Kind::String;
  std::string str;            // String
  bool boolean = false;       // Bool
  std::vector<int64_t> ints;  // Tuple
};

// A recursive-descent reader for the subset of Python literals a .npy header uses:
//   dict  := '{' (string ':' value (',' string ':' value)* ','?)? '}'
//   value := string | 'True' | 'False' | tuple
//   tuple := '(' ')' | '(' int ',' ')' | '(' int (',' int)+ ','? ')'
// An int may carry Python 2's 'L' suffix (numpy under Python 2 wrote "(3L, 4L)").
class HeaderParser {
 public:
  explicit HeaderParser(const std::string& text) : s_(text) {}

  bool parse(std::vector<std::pair<std::string, HeaderValue>>* entries, std::string* error) {
    skip_space();
    if (!eat('{')) return fail("header is not a Python dict (expected '{')", error);
    skip_space();
    while (!eat('}')) {
      std::string key;
      if (!string_literal(&key)) return fail("expected a quoted key in header dict", error);
      skip_space();
      if (!eat(':')) return fail("expected ':' after key '" + key + "' in header", error);
      skip_space();
      HeaderValue v;
      if (!value(&v, key, error)) return false;
      entries->emplace_back(key, std::move(v));
      skip_space();
      if (eat(',')) {
        skip_space();
        continue;
      }
      skip_space();
      if (!eat('}')) return fail("expected ',' or '}' in header dict", error);
      break;
    }
    skip_space();
    if (pos_ != s_.size()) return fail("unexpected text after the header dict", error);
    return true;
  }

 private:
  static bool fail(const std::string& message, std::string* error) {
    *error = message;
    return false;
  }

  void skip_space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  bool eat_word(const char* w) {
    size_t n = std::strlen(w);
    if (s_.compare(pos_, n, w) != 0) return false;
    // "Truex" is a name, not True.
    if (pos_ + n < s_.size() &&
        (std::isalnum(static_cast<unsigned char>(s_[pos_ + n])) || s_[pos_ + n] == '_'))
      return false;
    pos_ += n;
    return true;
  }

  // A '...' or "..." literal. No escapes: numpy's descr strings never contain any, and a
  // backslash is treated as an ordinary character (the dtype check rejects it afterwards).
  bool string_literal(std::string* out) {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return false;
    char quote = s_[pos_++];
    size_t end = s_.find(quote, pos_);
    if (end == std::string::npos) return false;
    *out = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }

  bool integer(int64_t* out, std::string* error) {
    bool neg = eat('-');
    if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_])))
      return fail("'shape' must be a tuple of integers", error);
    int64_t v = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      int d = s_[pos_++] - '0';
      if (v > (INT64_MAX - d) / 10) return fail("dimension in 'shape' is too large", error);
      v = v * 10 + d;
    }
    eat('L');
    *out = neg ? -v : v;
    return true;
  }

  bool value(HeaderValue* v, const std::string& key, std::string* error) {
    if (pos_ < s_.size() && (s_[pos_] == '\'' || s_[pos_] == '"')) {
      v->kind = HeaderValue::Kind::String;
      if (!string_literal(&v->str))
        return fail("unterminated string for '" + key + "' in header", error);
      return true;
    }
    for (bool b : {true, false}) {
      if (eat_word(b ? "True" : "False")) {
        v->kind = HeaderValue::Kind::Bool;
        v->boolean = b;
        return true;
      }
    }
    if (eat('(')) {
      v->kind = HeaderValue::Kind::Tuple;
      skip_space();
      if (eat(')')) return true;
      bool comma_seen = false;
      for (;;) {
        int64_t n = 0;
        if (!integer(&n, error)) return false;
        v->ints.push_back(n);
        skip_space();
        if (eat(')')) break;
        if (!eat(',')) return fail("'shape' must be a tuple of integers", error);
        comma_seen = true;
        skip_space();
        if (eat(')')) break;
      }
      // "(3)" is the int 3 in Python, not a tuple.
      if (v->ints.size() == 1 && !comma_seen)
        return fail("'shape' must be a tuple of integers", error);
      return true;
    }
    if (key == "descr" && pos_ < s_.size() && s_[pos_] == '[')
      return fail("structured dtypes are not supported (only little-endian f32, i32 and i64)", error);
    return fail("unsupported value for '" + key + "' in header", error);
  }

  const std::string& s_;
  size_t pos_ = 0;
};

std::string format_dims(const std::vector<int64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  if (dims.size() == 1) s += ",";
  return s + ")";
}

uint32_t read_le32(const unsigned char* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// ---------------------------------------------------------------------------------------------
// Header -> (dtype, shape)

enum class DType { F32, I32, I64 };

bool read_header(const std::string& text, DType* dtype, std::vector<int64_t>* shape,
                 std::string* error) {
  std::vector<std::pair<std::string, HeaderValue>> entries;
  HeaderParser parser(text);
  if (!parser.parse(&entries, error)) return false;

  const HeaderValue* descr = nullptr;
  const HeaderValue* fortran = nullptr;
  const HeaderValue* dims = nullptr;
  for (const auto& [key, v] : entries) {
    const HeaderValue** slot = key == "descr"           ? &descr
                               : key == "fortran_order" ? &fortran
                               : key == "shape"         ? &dims
                                                        : nullptr;
    if (!slot) {
      *error = "unexpected key '" + key + "' in header";
      return false;
    }
    if (*slot) {
      *error = "duplicate key '" + key + "' in header";
      return false;
    }
    *slot = &v;
  }
  for (auto [name, v] : {std::pair{"descr", descr}, {"fortran_order", fortran}, {"shape", dims}}) {
    if (!v) {
      *error = std::string("header has no '") + name + "' key";
      return false;
    }
  }

  if (descr->kind != HeaderValue::Kind::String) {
    *error = "'descr' must be a string";
    return false;
  }
  const std::string& d = descr->str;
  if (d == "<f4") {
    *dtype = DType::F32;
  } else if (d == "<i4") {
    *dtype = DType::I32;
  } else if (d == "<i8") {  // NumPy's default int on Linux: labels often come as int64
    *dtype = DType::I64;
  } else if (d == ">f4" || d == ">i4" || d == ">i8") {
    *error = "big-endian dtype '" + d + "' is not supported (only little-endian f32, i32 and i64)";
    return false;
  } else {
    *error = "dtype '" + d + "' is not supported (only little-endian f32, i32 and i64)";
    return false;
  }

  if (fortran->kind != HeaderValue::Kind::Bool) {
    *error = "'fortran_order' must be True or False";
    return false;
  }
  if (fortran->boolean) {
    *error = "Fortran-order (column-major) arrays are not supported; save with C order";
    return false;
  }

  if (dims->kind != HeaderValue::Kind::Tuple) {
    *error = "'shape' must be a tuple of integers";
    return false;
  }
  if (dims->ints.empty()) {
    *error = "0-d arrays are not supported";
    return false;
  }
  for (int64_t n : dims->ints) {
    if (n < 0) {
      *error = "negative dimension " + std::to_string(n) + " in shape " + format_dims(dims->ints);
      return false;
    }
  }
  for (int64_t n : dims->ints) {
    if (n == 0) {
      *error = "shape " + format_dims(dims->ints) +
               " has a zero-size dimension; tensors need every dimension >= 1";
      return false;
    }
  }
  if (!check_shape(dims->ints, error)) return false;
  *shape = dims->ints;
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Bytes

bool parse_npy(const std::string& bytes, Tensor* out, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t have = bytes.size();

  if (bytes.compare(0, std::min(have, kMagicLen), kMagic, std::min(have, kMagicLen)) != 0) {
    *error = "not a .npy file (bad magic; expected \\x93NUMPY)";
    return false;
  }
  if (have < kMagicLen + 2) {
    *error = "file is truncated (" + std::to_string(have) + " bytes, inside the preamble)";
    return false;
  }
  int major = u[6], minor = u[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    *error = "unknown .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
             " (supported: 1.0, 2.0, 3.0)";
    return false;
  }
  size_t len_bytes = major == 1 ? 2 : 4;
  size_t preamble = kMagicLen + 2 + len_bytes;
  if (have < preamble) {
    *error = "file is truncated (" + std::to_string(have) + " bytes, inside the preamble)";
    return false;
  }
  uint32_t header_len = major == 1 ? uint32_t(u[8]) | uint32_t(u[9]) << 8 : read_le32(u + 8);
  if (header_len > kMaxHeaderLen) {
    *error = "header length " + std::to_string(header_len) + " is too long (limit " +
             std::to_string(kMaxHeaderLen) + " bytes)";
    return false;
  }
  if (have - preamble < header_len) {
    *error = "header is truncated (it says " + std::to_string(header_len) +
             " bytes, the file has " + std::to_string(have - preamble) + ")";
    return false;
  }

  DType dtype;
  std::vector<int64_t> shape;
  if (!read_header(bytes.substr(preamble, header_len), &dtype, &shape, error)) return false;

  // check_shape bounds numel by 2^32, so the byte count below cannot overflow.
  uint64_t numel = 1;
  for (int64_t n : shape) numel *= static_cast<uint64_t>(n);
  uint64_t item = dtype == DType::I64 ? 8 : 4;
  uint64_t need = numel * item;
  uint64_t data = have - preamble - header_len;
  if (data < need) {
    *error = "data is truncated: shape " + format_dims(shape) + " needs " + std::to_string(need) +
             " bytes, the file has " + std::to_string(data);
    return false;
  }
  if (data > need) {
    *error = "unexpected " + std::to_string(data - need) + " bytes after the data of shape " +
             format_dims(shape);
    return false;
  }

  Tensor t;
  if (!zeros(shape, &t, error)) return false;
  const unsigned char* p = u + preamble + header_len;
  float* dst = t.data.data();
  for (uint64_t i = 0; i < numel; ++i, p += item) {
    uint32_t bits = read_le32(p);
    if (dtype == DType::F32) {
      dst[i] = std::bit_cast<float>(bits);
      continue;
    }
    // Integers (class labels) become f32 values, which must be the same integers: f32 holds
    // every integer up to 2^24 in magnitude, and only some above.
    int64_t v = dtype == DType::I32 ? int64_t(int32_t(bits))
                                    : int64_t(uint64_t(bits) | uint64_t(read_le32(p + 4)) << 32);
    dst[i] = static_cast<float>(v);
    // Compared as integers: a double cannot hold every i64 either (2^53 + 1).
    double back = dst[i];
    if (!(back >= -0x1p63 && back < 0x1p63 && int64_t(back) == v)) {
      std::vector<int64_t> index(shape.size());
      for (size_t d = shape.size(), rest = i; d-- > 0; rest /= uint64_t(shape[d]))
        index[d] = int64_t(rest % uint64_t(shape[d]));
      *error = "the " + std::string(dtype == DType::I32 ? "i32" : "i64") + " value " +
               std::to_string(v) + " at index " + shape_text(index) +
               " is not exactly representable as f32 (only integers up to 2^24 = 16777216 "
               "in magnitude all are)";
      return false;
    }
  }
  *out = std::move(t);
  return true;
}

namespace {

// The preamble and the header of t's .npy file: everything before the data.
std::string npy_header(const Tensor& t) {
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': " + format_dims(t.shape) + ", }";
  // Version 1.0 unless the header outgrows its uint16 length (only an absurd rank can):
  // then 2.0, as numpy itself does.
  int major = 1;
  size_t preamble = kMagicLen + 2 + 2;
  // Pad with spaces and a final '\n' so the data starts on a 64-byte boundary (numpy's rule,
  // which lets a reader mmap the data aligned).
  auto padded = [&](size_t pre) {
    size_t total = pre + header.size() + 1;
    return header.size() + 1 + (64 - total % 64) % 64;
  };
  size_t hlen = padded(preamble);
  if (hlen > 0xFFFF) {
    major = 2;
    preamble = kMagicLen + 2 + 4;
    hlen = padded(preamble);
  }
  header.append(hlen - header.size() - 1, ' ');
  header += '\n';

  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    out += static_cast<char>((hlen >> (8 * i)) & 0xFF);
  out += header;
  return out;
}

// n floats as little-endian f32 bytes at dst.
void put_le_floats(const float* src, size_t n, char* dst) {
  if constexpr (std::endian::native == std::endian::little) {
    if (n) std::memcpy(dst, src, 4 * n);
  } else {
    for (size_t i = 0; i < n; ++i) {
      uint32_t bits = std::bit_cast<uint32_t>(src[i]);
      for (int b = 0; b < 4; ++b) dst[4 * i + b] = static_cast<char>((bits >> (8 * b)) & 0xFF);
    }
  }
}

}  // namespace

std::string serialize_npy(const Tensor& t) {
  std::string out = npy_header(t);
  size_t n = t.data.size();
  size_t base = out.size();
  out.resize(base + 4 * n);
  put_le_floats(t.data.data(), n, out.data() + base);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Files: every message starts with the path, so "load(...)" errors say which file.

bool load_npy(const std::string& path, Tensor* out, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    *error = path + ": is a directory, not a .npy file";
    return false;
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    *error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  // The whole file is held while it is parsed: a file larger than the memory left is an
  // error, not an escaped std::bad_alloc (which would end a REPL session).
  std::string bytes;
  char buf[1 << 16];
  size_t n;
  bool failed = false;
  int err = 0;
  long size = std::fseek(f, 0, SEEK_END) == 0 ? std::ftell(f) : -1;
  std::rewind(f);
  try {
    if (size > 0) bytes.reserve(static_cast<size_t>(size));
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, n);
    failed = std::ferror(f) != 0;
    err = errno;
  } catch (const std::exception&) {  // std::bad_alloc, or std::length_error past max_size()
    std::fclose(f);
    *error = path + ": out of memory reading the file (" +
             std::to_string(std::max<long>(size, 0)) + " bytes)";
    return false;
  }
  std::fclose(f);
  if (failed) {
    *error = path + ": read error: " + std::strerror(err);
    return false;
  }
  std::string why;
  if (!parse_npy(bytes, out, &why)) {
    *error = path + ": " + why;
    return false;
  }
  return true;
}

bool save_npy(const Tensor& t, const std::string& path, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  std::string why;
  if (!check_shape(t.shape, &why)) {
    *error = path + ": cannot save: " + why;
    return false;
  }
  if (static_cast<int64_t>(t.data.size()) != t.numel()) {
    *error = path + ": cannot save: the tensor has " + std::to_string(t.data.size()) +
             " values but its shape needs " + std::to_string(t.numel());
    return false;
  }
  // The data goes from the tensor to the file in slices: no second copy of a large tensor
  // (which could fail for want of memory when the tensor itself fits).
  std::string header = npy_header(t);
  // A regular file is written beside itself and renamed over the old one at the end, so a
  // save that fails half-way (disk full, file-size limit) leaves the file that was there.
  // Devices and pipes (/dev/stdout, /dev/full) are written in place.
  struct stat st;
  bool in_place = ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  std::string target = in_place ? path : path + ".descent-tmp";
  FILE* f = std::fopen(target.c_str(), "wb");
  if (!f) {
    // The folder may forbid a new file where the file itself is writable: report the path.
    *error = path + ": cannot open for writing: " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(header.data(), 1, header.size(), f) == header.size();
  char slice[1 << 16];
  constexpr size_t kPerSlice = sizeof slice / 4;
  for (size_t i = 0, n = t.data.size(); ok && i < n; i += kPerSlice) {
    size_t m = std::min(kPerSlice, n - i);
    put_le_floats(t.data.data() + i, m, slice);
    ok = std::fwrite(slice, 1, 4 * m, f) == 4 * m;
  }
  int err = errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && !in_place && std::rename(target.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    if (!in_place) std::remove(target.c_str());
    *error = path + ": write error: " + std::strerror(err);
    return false;
  }
  return true;
}

}  // namespace descent::tensor
