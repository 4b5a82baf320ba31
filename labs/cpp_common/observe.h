// The trust boundary of the C++ labs: the process that holds a student's code never decides
// the grade (docs/labs.md "How a C++ lab is graded").
//
// A harness is built twice. The student build links the harness with the student's file and
// runs in "observe" mode: every call into the student's code goes through lab::observed, which
// makes the call and writes what it returned (and what it changed) as one record on fd 3. The
// checker build links the same harness with the lab's starter file, never with student code,
// and runs in "check" mode on the same case and seed: lab::observed makes no call, it reads the
// student's next record and returns it as if the call had returned it. Everything else the
// harness does is the same in both runs, so the checker reaches the same verdict the harness
// would have reached in-process, with the same messages, and it prints it.
//
// What a student's code can do to that: print "PASS" (nobody reads its stdout for a verdict),
// exit early (the checker finds the records end and says where), or write records of its own
// (they must then be the right answers to inputs drawn from a seed chosen at check time, which
// is doing the lab).
//
//   size_t next = lab::observed("execute_op", [&](lab::Record& r) {   // the student's call
//     size_t n = execute_op(op, chunk, pc, stack);
//     r.u64(n).values(stack);          // the result, and the stack it changed
//   }, [&](lab::Reader& in) {          // the checker: the same fields, in the same order
//     size_t n = in.u64();
//     stack = in.values();
//     return n;
//   });
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace lab {

enum class Mode { Observe, Check };

// Thrown in check mode when the student's records stop before the harness's next call (the
// student's process crashed, ran out of time or exited early) or do not parse.
struct RecordsEnd {
  std::string call;  // the call the checker wanted a record for
  size_t index = 0;  // how many records came before it
  std::string problem;
};

// One record as it is written: fields separated by spaces, strings hex-encoded.
class Record {
 public:
  Record& u64(uint64_t v) { return word(std::to_string(v)); }
  Record& i64(int64_t v) { return word(std::to_string(v)); }
  Record& f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    return u64(bits);  // the bits: a nan's payload and -0.0 survive
  }
  Record& str(const std::string& s) {
    static const char* kHex = "0123456789abcdef";
    std::string h = "s";
    for (unsigned char c : s) {
      h += kHex[c >> 4];
      h += kHex[c & 15];
    }
    return word(h);
  }
  const std::string& text() const { return text_; }

 private:
  Record& word(const std::string& w) {
    if (!text_.empty()) text_ += ' ';
    text_ += w;
    return *this;
  }
  std::string text_;
};

class Reader {
 public:
  Reader(std::string call, size_t index, const std::string& text) : call_(std::move(call)), index_(index), in_(text) {}
  uint64_t u64() {
    std::string w = next();
    char* end = nullptr;
    uint64_t v = std::strtoull(w.c_str(), &end, 10);
    if (w.empty() || *end) bad("a number");
    return v;
  }
  int64_t i64() {
    std::string w = next();
    char* end = nullptr;
    int64_t v = std::strtoll(w.c_str(), &end, 10);
    if (w.empty() || *end) bad("a number");
    return v;
  }
  double f64() {
    uint64_t bits = u64();
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  std::string str() {
    std::string w = next();
    if (w.empty() || w[0] != 's' || w.size() % 2 == 0) bad("a string");
    std::string out;
    auto nibble = [this](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      bad("a string");
      return 0;
    };
    for (size_t i = 1; i + 1 < w.size(); i += 2) out += char(nibble(w[i]) * 16 + nibble(w[i + 1]));
    return out;
  }
  // A count that sizes a container: bounded, so a forged record cannot make the checker
  // allocate without end.
  size_t count(size_t max = 1u << 24) {
    uint64_t n = u64();
    if (n > max) bad("a count of at most " + std::to_string(max));
    return size_t(n);
  }

 private:
  std::string next() {
    std::string w;
    if (!(in_ >> w)) bad("another field");
    return w;
  }
  [[noreturn]] void bad(const std::string& what) {
    throw RecordsEnd{call_, index_, "record " + std::to_string(index_ + 1) + " (" + call_ + ") lacks " + what};
  }
  std::string call_;
  size_t index_;
  std::istringstream in_;
};

class Channel {
 public:
  static Channel& get() {
    static Channel c;
    return c;
  }
  Mode mode = Mode::Observe;
  // Observe: the records go to fd 3 (when the runner opened it; else nowhere). Check: they
  // come from stdin, one a line: "CALL FIELDS...".
  void write(const std::string& call, const Record& r) {
    std::string line = call + (r.text().empty() ? "" : " " + r.text()) + "\n";
    const char* p = line.data();
    size_t left = line.size();
    while (left > 0) {
      ssize_t n = ::write(3, p, left);
      if (n <= 0) return;
      p += n;
      left -= size_t(n);
    }
  }
  std::string read(const std::string& call) {
    std::string line;
    if (!std::getline(std::cin, line))
      throw RecordsEnd{call, index_, "the records end before call " + std::to_string(index_ + 1)};
    size_t space = line.find(' ');
    std::string got = line.substr(0, space);
    if (got != call)
      throw RecordsEnd{call, index_,
                       "record " + std::to_string(index_ + 1) + " is for " + got + ", not " + call};
    ++index_;
    return space == std::string::npos ? "" : line.substr(space + 1);
  }
  size_t index() const { return index_; }

 private:
  size_t index_ = 0;
};

// A call into the student's code: made and recorded (observe), or replayed from the student's
// record (check). `call` does the call and writes its results into the record; `replay` reads
// the same fields back and returns what the call returned (and restores what it changed).
template <class Replay>
auto observed(const std::string& call, const std::function<void(Record&)>& make, Replay replay)
    -> decltype(replay(std::declval<Reader&>())) {
  Channel& ch = Channel::get();
  if (ch.mode == Mode::Observe) {
    Record r;
    make(r);
    ch.write(call, r);
    Reader again(call, ch.index(), r.text());
    return replay(again);  // the caller goes on with what the record says, as the checker will
  }
  size_t index = ch.index();
  std::string text = ch.read(call);
  Reader in(call, index, text);
  return replay(in);
}


// What the harness's main returns through: the verdict, printed by the checker (in observe
// mode it goes to stdout, where nobody reads it: the student's own prints may be there too).
inline int verdict(const std::string& why) {
  if (why.empty()) std::printf("PASS\n");
  else std::printf("FAIL: %s\n", why.c_str());
  return 0;
}

// Runs the harness's body; in check mode a RecordsEnd becomes the line the runner reads
// ("END index call: problem").
inline int run(const std::function<std::string()>& body) {
  try {
    return verdict(body());
  } catch (const RecordsEnd& e) {
    std::printf("END %zu %s: %s\n", e.index, e.call.c_str(), e.problem.c_str());
    return 0;
  }
}

// What a harness is asked: "harness observe|check CASE SEED DATA...".
struct Args {
  std::string which;              // the check's case
  uint64_t seed = 0;              // the hidden inputs' seed, drawn by the runner
  std::vector<std::string> data;  // the lab's harness_args (its programs' folder, ...)
};

// Every harness's main: parses the command line (the mode set, the seed a number), runs
// `check` through `run`, and answers a malformed command line with a usage verdict.
//   int main(int argc, char** argv) {
//     return lab::harness_main(argc, argv, 1, [](const lab::Args& a) { return check(a.which, a.seed, a.data[0]); });
//   }
inline int harness_main(int argc, char** argv, size_t data_args, const std::function<std::string(const Args&)>& check) {
  std::string usage = "usage: harness observe|check CASE SEED" + std::string(data_args ? " DATA..." : "");
  if (argc < 4 + int(data_args)) return verdict(usage);
  std::string mode = argv[1];
  if (mode == "observe") Channel::get().mode = Mode::Observe;
  else if (mode == "check") Channel::get().mode = Mode::Check;
  else return verdict(usage);
  Args a;
  a.which = argv[2];
  char* end = nullptr;
  a.seed = std::strtoull(argv[3], &end, 10);
  if (!*argv[3] || *end) return verdict(usage + " (SEED a number, not '" + argv[3] + "')");
  for (int i = 4; i < argc; ++i) a.data.push_back(argv[i]);
  return run([&] { return check(a); });
}

}  // namespace lab
