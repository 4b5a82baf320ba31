// Shared by the libFuzzer harnesses of fuzz/: reading structured choices out of the fuzzer's
// bytes, refusing inputs that would only find "out of memory", and failing loudly.
//
// A harness fails by printing what disagreed and calling __builtin_trap(): libFuzzer (and the
// replay main, replay_main.cpp) then stops with the input saved, whatever the build's flags.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace descent::fuzz {

// Prints `what` and the texts that disagree, then stops the process.
[[noreturn]] inline void fail(const std::string& what, const std::string& a = "",
                              const std::string& b = "") {
  std::fprintf(stderr, "\n*** fuzz check failed: %s\n", what.c_str());
  if (!a.empty()) std::fprintf(stderr, "--- first ---\n%s\n", a.c_str());
  if (!b.empty()) std::fprintf(stderr, "--- second ---\n%s\n", b.c_str());
  std::fflush(stderr);
  __builtin_trap();
}

// The fuzzer's bytes as a stream of choices. Past the end every read gives 0, so any input,
// even an empty one, decodes to something.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  // A number in [0, n) (n >= 1).
  size_t below(size_t n) { return byte() % n; }
  // Up to `max` raw bytes, stopping after a newline: free text inside a structured input.
  std::string line(size_t max) {
    std::string s;
    while (!empty() && s.size() < max) {
      char c = static_cast<char>(byte());
      if (c == '\n') break;
      s += c;
    }
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// True when the text holds a run of digits whose value exceeds `max` (leading zeros aside):
// harnesses that let programs allocate tensors refuse such inputs, so the fuzzer explores
// behaviour instead of rediscovering that 100000 x 100000 floats do not fit.
inline bool has_number_above(std::string_view text, uint64_t max) {
  uint64_t value = 0;
  bool in_number = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      value = in_number ? value * 10 + uint64_t(c - '0') : uint64_t(c - '0');
      in_number = true;
      if (value > max) return true;
    } else {
      in_number = false;
    }
  }
  return false;
}

}  // namespace descent::fuzz
