// The checker's side of lab a64_constants, compiled with the student's a64_constants.cpp
// against the project's lang/, vm/, native/ and proc/ libraries and run in a child process.
// `harness observe|check CASE SEED PROGRAMS_DIR` (labs/cpp_common/observe.h):
//   covers    every value (the edges, then 3,000 drawn from the seed: chunks of 0, 0xffff and
//             anything, logical immediates, small and negative numbers) is built exactly, into
//             the register asked for, by movz/movn/movk/orr-from-xzr alone, each a valid word
//   cheapest  no value takes more instructions than the fewest (a64::materialize)
//   programs  the lab's programs and 12 random ones, with every constant built by yours, run
//             under qemu-aarch64 and print what the AST walker prints
#include <cstdio>
#include <string>
#include <vector>

#include "a64_constants_lab.h"
#include "labs/cpp_common/differential.h"
#include "labs/cpp_common/observe.h"
#include "native/native.h"

using namespace descent::native;
using a64::A64Inst;
using a64::Form;

namespace {

constexpr int kRandomValues = 3000;
constexpr int kRandomPrograms = 12;

// The student's build_constant through the trust boundary: the record is the instructions.
std::vector<A64Inst> observed_build(int64_t value, int reg) {
  return lab::observed(
      "build_constant",
      [&](lab::Record& r) {
        std::vector<A64Inst> seq = build_constant(value, reg);
        r.u64(seq.size());
        for (const A64Inst& i : seq)
          r.i64(int(i.form)).i64(i.r[0]).i64(i.r[1]).i64(i.imm).i64(i.shift).i64(i.offset).i64(int(i.cc));
      },
      [&](lab::Reader& in) {
        std::vector<A64Inst> seq(in.count(64));
        for (A64Inst& i : seq) {
          int64_t form = in.i64();
          i.form = form >= 0 && form < a64::kNumForms ? Form(form) : Form::RET;
          i.r[0] = uint8_t(in.i64());
          i.r[1] = uint8_t(in.i64());
          i.imm = in.i64();
          i.shift = int(in.i64());
          i.offset = in.i64();
          i.cc = a64::Cond(in.i64() & 15);
        }
        return seq;
      });
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string listing(const std::vector<A64Inst>& seq) {
  std::string s;
  for (const A64Inst& i : seq) s += (s.empty() ? "" : "; ") + a64::format(i);
  return s.empty() ? "(nothing)" : s;
}

// What the sequence leaves in the register, starting from `start` (movk keeps the rest:
// a first instruction that is a movk shows up as a wrong value); "" and *out, or why not.
std::string evaluate(const std::vector<A64Inst>& seq, int reg, uint64_t start, uint64_t* out) {
  uint64_t x = start;
  for (const A64Inst& i : seq) {
    std::string why;
    if (!a64::valid(i, &why)) return "'" + a64::format(i) + "' is not a valid instruction: " + why;
    if (i.r[0] != reg) return "'" + a64::format(i) + "' writes x" + std::to_string(i.r[0]) + ", not x" + std::to_string(reg);
    uint64_t chunk = uint64_t(i.imm) << i.shift;
    switch (i.form) {
      case Form::MOVZ: x = chunk; break;
      case Form::MOVN: x = ~chunk; break;
      case Form::MOVK: x = (x & ~(uint64_t(0xffff) << i.shift)) | chunk; break;
      case Form::ORR_RRI:
        if (i.r[1] != 31) return "'" + a64::format(i) + "' reads x" + std::to_string(i.r[1]) + ": orr builds from xzr";
        x = uint64_t(i.imm);
        break;
      default: return "'" + a64::format(i) + "': only movz, movn, movk and orr (from xzr) build constants";
    }
  }
  *out = x;
  return "";
}

// The values: edges, then the seed's: each 16-bit chunk 0, 0xffff or anything; logical
// immediates (decoded from random fields); small numbers of both signs.
std::vector<int64_t> values(uint64_t seed) {
  std::vector<int64_t> v = {0, 1, -1, 0xffff, 0x10000, 0xffff0000, -65536, -65537, 0x7fffffffffffffff,
                            int64_t(0x8000000000000000ull), int64_t(0x5555555555555555ull),
                            int64_t(0x00ff00ff00ff00ffull), int64_t(0xffff0000ffff0000ull), 0x123456789abcdef0,
                            int64_t(0xfffffffffffe0000ull), 0x0000ffff0000ffff, 4095, 4096, -4096};
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  auto next = [&s] {
    s += 0x9e3779b97f4a7c15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  for (int k = 0; k < kRandomValues; ++k) {
    uint64_t r = next();
    switch (k % 4) {
      case 0: case 1: {
        uint64_t x = 0;
        for (int c = 0; c < 4; ++c) {
          uint64_t pick = (r >> (2 * c)) & 3, chunk = pick == 0 ? 0 : pick == 1 ? 0xffff : (next() & 0xffff);
          x |= chunk << (16 * c);
        }
        v.push_back(int64_t(x));
        break;
      }
      case 2:
        if (uint64_t x = a64::decode_logical_imm(uint32_t(r & 0x1fff))) v.push_back(int64_t(x));
        break;
      default: v.push_back(int64_t(r % 200001) - 100000); break;
    }
  }
  return v;
}

std::string check(const std::string& which, uint64_t seed, const std::string& dir) {
  if (which == "covers" || which == "cheapest") {
    std::vector<int64_t> vs = values(seed);
    for (size_t k = 0; k < vs.size(); ++k) {
      int reg = int(k % 29);  // x0 .. x28
      std::vector<A64Inst> seq = observed_build(vs[k], reg);
      std::string what = hex(uint64_t(vs[k])) + " (" + std::to_string(vs[k]) + ") into x" + std::to_string(reg);
      if (which == "covers") {
        uint64_t got = 0;
        std::string why = evaluate(seq, reg, 0xdeadbeefcafef00dull, &got);
        if (!why.empty()) return "building " + what + ": " + why;
        if (got != uint64_t(vs[k]))
          return "building " + what + ": " + listing(seq) + " leaves " + hex(got) +
                 (seq.empty() || seq[0].form != Form::MOVK ? "" : " (a movk first keeps the register's old bits)");
      } else {
        std::vector<A64Inst> best = a64::materialize(vs[k], reg);
        if (seq.size() > best.size())
          return "building " + what + " takes " + std::to_string(seq.size()) + " instructions (" + listing(seq) +
                 "); it can be done in " + std::to_string(best.size());
      }
    }
    return "";
  }
  if (which != "programs") return "unknown case " + which;
  a64::ConstantBuilder mine = [](int64_t value, int reg) { return observed_build(value, reg); };
  auto engine = make_image_engine(aarch64_target(), mine);
  for (const auto& src : lab::corpus(dir, kRandomPrograms, lab::random_options(), seed)) {
    auto c = lab::compile(src);
    if (!c->ok) return lab::described(src) + " does not compile: " + c->error;
    std::string want = lab::walker_output(*c);
    std::string got = lab::run(*engine, *c);
    if (got != want)
      return lab::described(src) + ": the AST walker prints \"" + lab::shown(want) +
             "\", the native backend under qemu-aarch64 with your constants \"" + lab::shown(got) + "\"";
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  return lab::harness_main(argc, argv, 1, [](const lab::Args& a) { return check(a.which, a.seed, a.data[0]); });
}
