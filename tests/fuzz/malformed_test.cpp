// Robustness: malformed input gives errors, never a crash, a hang or a signal.
//
// Two sources of input:
//   - tests/malformed/*.ds, a hand-written corpus (regenerate with make_corpus.py), each with
//     an optional `# exit: N` (default: anything but 0) and `# error: L:C: MSG` lines;
//   - seeded, reproducible generators (std::mt19937 with fixed seeds, printed in every failure
//     message): truncations and byte-level mutations of every tests/programs/*.ds, token-level
//     shuffles, edge-value literals and swapped operators, random bytes, soups of the
//     language's characters and tokens, deep nesting of every construct, inputs too big to
//     keep as files (200 KB lines, 100,000-term chains), and one long REPL-style session.
//
// For every input, on every engine: Session::submit returns; a non-zero exit code comes with
// at least one diagnostic whose message is non-empty and one line, whose location lies inside
// the input, and Outcome::message says "error:"; a step limit bounds every run (no wall-clock
// assertions). The same input then goes through tokenize + print_tokens, needs_more_input,
// every stage in every Format and every pass snapshot, to show the printers never crash.
//
// A crash (signal) prints the input being processed before the process dies; an input that
// runs for more than a minute is printed as a likely hang (a diagnostic, not an assertion).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <thread>
#include <unistd.h>

#include "lang/source.h"
#include "lang/token.h"
#include "tests/programs_test.h"

namespace fs = std::filesystem;
using namespace descent;
using namespace descent::testing;

namespace {

constexpr uint64_t kStepLimit = 200000;

struct Input {
  std::string label;  // how to reproduce it: generator, seed, source file, edits
  std::string text;
};

// ---------------------------------------------------------------------------------------
// Reporting

// Printable form of arbitrary bytes, cut to `max` characters.
std::string escape(std::string_view s, size_t max = 600) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= max) {
      out += "...(" + std::to_string(s.size()) + " bytes in all)";
      break;
    }
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// What is being processed now, for the crash handler and the hang watchdog. The handler may
// only read a plain buffer and call write(), so the text is prepared before each input.
char g_current[4096] = "";
std::atomic<uint64_t> g_current_id{0};

void set_current(const Input& in, const std::string& engine) {
  std::string s = "\n*** fuzz input being processed: " + in.label + " (engine " + engine +
                  ")\n*** bytes: \"" + escape(in.text, 2000) + "\"\n";
  std::snprintf(g_current, sizeof g_current, "%s", s.c_str());
  g_current_id.fetch_add(1);
}

struct sigaction g_old_actions[32];
const int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

extern "C" void on_fatal_signal(int sig) {
  ssize_t ignored = write(2, g_current, std::strlen(g_current));
  (void)ignored;
  // Hand over to whatever was installed before (doctest's reporter), then to the default.
  sigaction(sig, &g_old_actions[sig], nullptr);
  raise(sig);
}

// Installs the crash reporter and a watchdog thread for the life of one test case.
class Guard {
 public:
  Guard() {
    for (int sig : kSignals) {
      struct sigaction sa {};
      sa.sa_handler = on_fatal_signal;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_ONSTACK;  // doctest installs an alternate stack for stack overflows
      sigaction(sig, &sa, &g_old_actions[sig]);
    }
    watchdog_ = std::thread([this] { watch(); });
  }
  ~Guard() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    watchdog_.join();
    for (int sig : kSignals) sigaction(sig, &g_old_actions[sig], nullptr);
    g_current[0] = '\0';
  }

 private:
  // Says (once per input) which input has been running for over a minute: a hang in the
  // library would otherwise only show up as a CTest timeout with no clue.
  void watch() {
    std::unique_lock<std::mutex> lock(mu_);
    uint64_t last = g_current_id.load();
    int quiet_seconds = 0;
    while (!done_) {
      cv_.wait_for(lock, std::chrono::seconds(1));
      uint64_t now = g_current_id.load();
      if (now != last) {
        last = now;
        quiet_seconds = 0;
      } else if (++quiet_seconds == 60) {
        std::fprintf(stderr, "\n*** possible hang: still on this input after 60 s%s", g_current);
      }
    }
  }
  std::thread watchdog_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

// ---------------------------------------------------------------------------------------
// The invariants

// The width of every line of an input, in characters as SourceFile counts columns (UTF-8
// lead bytes and stray bytes), a trailing '\r' included. Computed once per input.
struct Lines {
  std::vector<size_t> width;
  explicit Lines(const std::string& s) {
    width.push_back(0);
    for (char c : s) {
      if (c == '\n') width.push_back(0);
      else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++width.back();
    }
  }
  size_t count() const { return width.size(); }
};

// Appends to `problems` what is wrong with one diagnostic.
void check_diagnostic(const Diagnostic& d, const std::string& text, const Lines& lines,
                      std::string& problems) {
  std::string where = "diagnostic '" + escape(d.message, 200) + "'";
  if (d.message.empty()) problems += "- a diagnostic has an empty message\n";
  if (d.message.find('\n') != std::string::npos || d.message.find('\r') != std::string::npos)
    problems += "- " + where + " spans several lines\n";
  if (d.severity != Severity::Error) return;
  // Compile errors must point into the input; so must run-time errors (LANGUAGE.md: "file,
  // line and column").
  if (d.loc.line < 1 || d.loc.col < 1) {
    problems += "- " + where + " has no location (" + std::to_string(d.loc.line) + ":" +
                std::to_string(d.loc.col) + ")\n";
    return;
  }
  if (d.loc.line > lines.count() + 1) {
    problems += "- " + where + " is at line " + std::to_string(d.loc.line) + " of a " +
                std::to_string(lines.count()) + "-line input\n";
    return;
  }
  size_t width = d.loc.line <= lines.count() ? lines.width[d.loc.line - 1] : 0;
  if (d.loc.col > width + 1)
    problems += "- " + where + " is at column " + std::to_string(d.loc.col) + " of line " +
                std::to_string(d.loc.line) + ", which has " + std::to_string(width) + " characters\n";
  if (d.loc.offset > text.size())
    problems += "- " + where + " has byte offset " + std::to_string(d.loc.offset) + " past the end\n";
}

// Checks every invariant of one submitted outcome; returns the problems found (empty: fine).
std::string check_outcome(const Outcome& o, const std::string& text, const Lines& lines) {
  std::string problems;
  if (o.exit_code() != 0) {
    if (o.diagnostics.empty()) problems += "- exit code " + std::to_string(o.exit_code()) + " without a diagnostic\n";
    if (o.message.find("error:") == std::string::npos)
      problems += "- Outcome::message lacks 'error:': \"" + escape(o.message, 300) + "\"\n";
  }
  for (const auto& d : o.diagnostics) check_diagnostic(d, text, lines, problems);
  // Bounded: between two step-limit checks (loop back-edges, calls) at most one pass over
  // the program's statements can run.
  if (o.steps > kStepLimit + text.size() + 16)
    problems += "- ran " + std::to_string(o.steps) + " steps with a limit of " + std::to_string(kStepLimit) + "\n";
  return problems;
}

// The views: tokens, every stage in every format, every pass snapshot.
constexpr size_t kLlvmViewBytes = 2048;  // inputs up to this size also get the LLVM views

std::string check_views(const Session& s, const std::string& text, const Lines& lines) {
  std::string problems;
  SourceFile file("fuzz.ds", text);
  std::vector<Token> tokens = tokenize(file);
  if (tokens.empty() || tokens.back().kind != Tok::Eof) problems += "- tokenize() did not end with Eof\n";
  for (const Token& t : tokens) {
    if (t.loc.line < 1 || t.loc.col < 1 || t.loc.line > lines.count() + 1) {
      problems += "- token at bad location " + std::to_string(t.loc.line) + ":" + std::to_string(t.loc.col) + "\n";
      break;
    }
    if (t.kind == Tok::Error && (t.error.empty() || t.error.find('\n') != std::string::npos)) {
      problems += "- error token with a bad message '" + escape(t.error, 100) + "'\n";
      break;
    }
  }
  std::string dump = print_tokens(tokens);
  if (static_cast<size_t>(std::count(dump.begin(), dump.end(), '\n')) < tokens.size())
    problems += "- print_tokens printed fewer lines than there are tokens\n";
  (void)needs_more_input(text);

  // The LLVM tier's views run LLVM's optimiser and code generators, which take seconds on the
  // huge inputs; they get the small inputs (which is where malformed syntax lives anyway).
  auto is_llvm_view = [](std::string_view name) {
    return name == "llvm" || name == "llvm-opt" || name == "passes" || name == "mir" ||
           name == "mir-regalloc" || name == "asm";
  };
  bool small = text.size() <= kLlvmViewBytes;
  for (const StageInfo& st : Session::stages()) {
    if (is_llvm_view(st.name) && !small) continue;
    for (Format f : {Format::Text, Format::Sexpr, Format::Dot}) {
      StageResult r = s.stage(st.name, f);
      if (r.text.empty()) problems += std::string("- stage '") + st.name + "' gave no text\n";
      if (is_llvm_view(st.name)) break;  // the IR views have a text form only
    }
  }
  if (!small) return problems;
  for (const PassInfo& p : s.passes())
    for (bool after : {false, true})
      for (Format f : {Format::Text, Format::Sexpr, Format::Dot}) {
        StageResult r = s.pass_snapshot(p.name, after, f);
        if (r.text.empty()) problems += "- pass snapshot '" + p.name + "' gave no text\n";
        if (p.stage == "llvm") break;
      }
  return problems;
}

struct Expect {
  enum Mode { Any, Fails, Exact } mode = Any;  // any exit code, non-zero, or exactly exit_code
  int exit_code = 0;
  std::vector<std::string> errors;  // "L:C: MESSAGE" that must be among the diagnostics
};

// Runs one input on every engine and reports every broken invariant as a doctest failure.
// Returns the last engine's outcome.
Outcome check_input(const Input& in, const Expect& want = {}) {
  Outcome last;
  for (const std::string& engine : Session::engines()) {
    set_current(in, engine);
    std::string problems;
    try {
      Session s;
      s.set_engine(engine);
      RunOptions opts;
      size_t printed = 0;
      opts.out = [&](std::string_view t) { printed += t.size(); };
      opts.step_limit = kStepLimit;
      Outcome o = s.submit(in.text, "fuzz.ds", opts);
      Lines lines(in.text);
      problems += check_outcome(o, in.text, lines);
      if ((want.mode == Expect::Exact && o.exit_code() != want.exit_code) ||
          (want.mode == Expect::Fails && o.exit_code() == 0))
        problems += "- exit code " + std::to_string(o.exit_code()) + ", expected " +
                    (want.mode == Expect::Exact ? std::to_string(want.exit_code) : std::string("non-zero")) + "\n";
      for (const std::string& e : want.errors) {
        bool found = false;
        for (const auto& d : o.diagnostics)
          found |= std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message == e;
        if (!found) problems += "- missing the diagnostic '" + e + "'\n";
      }
      // The views do not depend on the engine that ran: check them once per input.
      if (engine == Session::engines().front()) problems += check_views(s, in.text, lines);
      if (!problems.empty() && !o.message.empty())
        problems += "  Outcome::message:\n" + escape(o.message, 800) + "\n";
      last = std::move(o);
    } catch (const std::exception& e) {
      problems += std::string("- an exception escaped the library: ") + e.what() + "\n";
    } catch (...) {
      problems += "- an unknown exception escaped the library\n";
    }
    if (!problems.empty())
      FAIL_CHECK("input " << in.label << " (engine " << engine << ")\n  bytes: \""
                          << escape(in.text) << "\"\n" << problems);
    // Compiling does not depend on the engine (Session::compile never asks which one will
    // run): an input that does not compile fails the same way on every engine, and most
    // malformed inputs are such. The others would only repeat this run.
    if (last.status == Outcome::CompileError) break;
  }
  return last;
}

// Checks a batch; returns a summary such as "585 inputs (exit 0: 12, 1: 3, 2: 570)".
std::string check_all(const std::vector<Input>& inputs, const std::vector<Expect>& wants = {}) {
  Guard guard;
  size_t by_exit[3] = {0, 0, 0};
  for (size_t i = 0; i < inputs.size(); ++i)
    ++by_exit[check_input(inputs[i], i < wants.size() ? wants[i] : Expect{}).exit_code()];
  return std::to_string(inputs.size()) + " inputs (exit 0: " + std::to_string(by_exit[0]) +
         ", 1: " + std::to_string(by_exit[1]) + ", 2: " + std::to_string(by_exit[2]) + ")";
}

// ---------------------------------------------------------------------------------------
// Inputs


struct Golden {
  std::string name;
  std::string text;
};

const std::vector<Golden>& programs() {
  static const std::vector<Golden> p = [] {
    std::vector<Golden> out;
    for (const auto& f : ds_files("programs")) out.push_back({f.filename().string(), read_text(f.string())});
    return out;
  }();
  return p;
}

// Characters and tokens of the language, for soups and insertions.
const std::string kLangChars =
    "abcdefghijklmnopqrstuvwxyzABCXYZ_0123456789 \t\n\r#\"\\(){}[],;:.+-*/%!&|=<>";
const std::vector<std::string> kLangTokens = {
    "fn", "return", "if", "else", "while", "for", "in", "break", "continue", "true", "false",
    "kernel", "x", "y", "n", "f", "g", "print", "sqrt", "abs", "min", "max", "int", "float",
    "bool", "0", "1", "7", "2.5", "1e308", "1e999", "9223372036854775807", "9223372036854775808",
    "\"s\"", "\"", "(", ")", "{", "}", "[", "]", ",", ";", ":", "->", "..", ".", "+", "-", "*",
    "/", "%", "!", "&&", "||", "&", "|", "==", "!=", "<", "<=", ">", ">=", "=", "+=", "-=", "*=",
    "/=", "%=", "\n", "\n", " ", "# c\n", "\xc3\xa9", "\xff", "\r\n"};

using Rng = std::mt19937;

size_t pick(Rng& rng, size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng); }

// Applies 1-4 random byte-level edits; describes them in `how`.
std::string mutate(std::string s, Rng& rng, std::string& how) {
  int edits = 1 + static_cast<int>(pick(rng, 4));
  for (int k = 0; k < edits; ++k) {
    size_t at = pick(rng, s.size() + 1);
    size_t op = pick(rng, 8);
    std::string what;
    if (s.empty()) op = 2;
    switch (op) {
      case 0:  // flip one bit
        if (at == s.size()) at = s.size() - 1;
        s[at] = static_cast<char>(s[at] ^ (1 << pick(rng, 8)));
        what = "flip";
        break;
      case 1:  // overwrite with any byte
        if (at == s.size()) at = s.size() - 1;
        s[at] = static_cast<char>(pick(rng, 256));
        what = "set";
        break;
      case 2:  // insert a character of the language
        s.insert(at, 1, kLangChars[pick(rng, kLangChars.size())]);
        what = "insert";
        break;
      case 3:  // insert a token
        s.insert(at, kLangTokens[pick(rng, kLangTokens.size())]);
        what = "insert-token";
        break;
      case 4: {  // delete a range
        size_t len = 1 + pick(rng, 16);
        s.erase(at, len);
        what = "delete";
        break;
      }
      case 5: {  // duplicate a range
        size_t len = 1 + pick(rng, 40);
        s.insert(at, s.substr(at, len));
        what = "duplicate";
        break;
      }
      case 6: {  // move a range elsewhere
        size_t len = 1 + pick(rng, 30);
        std::string piece = s.substr(at, len);
        s.erase(at, len);
        s.insert(pick(rng, s.size() + 1), piece);
        what = "move";
        break;
      }
      default:  // insert an invalid or non-ASCII UTF-8 sequence
        static const char* seqs[] = {"\xc3", "\xe2\x82", "\x80", "\xc0\xaf", "\xed\xa0\x80",
                                     "\xf4\x90\x80\x80", "\xc3\xa9", "\xf0\x9f\xa6\x80", "\0"};
        size_t i = pick(rng, 9);
        s.insert(at, std::string(seqs[i], i == 8 ? 1 : std::strlen(seqs[i])));
        what = "utf8";
        break;
    }
    how += " " + what + "@" + std::to_string(at);
  }
  return s;
}

// The text of each token of a program (Eof dropped); newlines kept as tokens.
std::vector<std::string> token_texts(const std::string& text) {
  SourceFile file("t.ds", text);
  std::vector<std::string> out;
  for (const Token& t : tokenize(file))
    if (t.kind != Tok::Eof) out.emplace_back(t.text);
  return out;
}

std::string join_tokens(const std::vector<std::string>& toks) {
  std::string s;
  for (const auto& t : toks) {
    if (!s.empty() && s.back() != '\n' && t != "\n") s += ' ';
    s += t;
  }
  return s;
}

std::string repeat(std::string_view s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------

TEST_CASE("malformed corpus: every tests/malformed/*.ds gives its errors, never a crash") {
  auto files = ds_files("malformed");
  REQUIRE(files.size() >= 40);
  Guard guard;
  for (const auto& f : files) {
    std::string text = read_text(f.string());
    Expect want;
    want.mode = Expect::Fails;
    if (text.find("# exit:") != std::string::npos) {
      Expectation e = parse_expectations(text);
      want.mode = Expect::Exact;
      want.exit_code = e.exit_code;
      want.errors = e.errors;
    }
    check_input({"tests/malformed/" + f.filename().string(), text}, want);
  }
  MESSAGE("corpus files: " << files.size());
}

TEST_CASE("fuzz: truncations of every golden program") {
  std::vector<Input> inputs;
  const auto& ps = programs();
  REQUIRE(ps.size() >= 60);
  for (size_t i = 0; i < ps.size(); ++i) {
    const std::string& t = ps[i].text;
    const uint32_t seed = 1000 + static_cast<uint32_t>(i);
    Rng rng(seed);
    std::vector<size_t> cuts;
    // Structural cuts: right after the first '{', '(' and '"', and before the last '}'.
    for (char c : {'{', '(', '"'})
      if (size_t p = t.find(c); p != std::string::npos) cuts.push_back(p + 1);
    if (size_t p = t.rfind('}'); p != std::string::npos) cuts.push_back(p);
    for (int k = 0; k < 8; ++k) cuts.push_back(pick(rng, t.size()));
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (size_t c : cuts)
      inputs.push_back({"truncate[seed=" + std::to_string(seed) + "] tests/programs/" + ps[i].name +
                            " to its first " + std::to_string(c) + " bytes",
                        t.substr(0, c)});
  }
  MESSAGE("truncations: " << check_all(inputs));
}

TEST_CASE("fuzz: random byte edits of every golden program") {
  std::vector<Input> inputs;
  const auto& ps = programs();
  for (size_t i = 0; i < ps.size(); ++i)
    for (uint32_t k = 0; k < 12; ++k) {
      const uint32_t seed = 20000 + static_cast<uint32_t>(i) * 16 + k;
      Rng rng(seed);
      std::string how;
      std::string text = mutate(ps[i].text, rng, how);
      inputs.push_back({"mutate[seed=" + std::to_string(seed) + "] tests/programs/" + ps[i].name + ":" + how, text});
    }
  MESSAGE("byte edits: " << check_all(inputs));
}

TEST_CASE("fuzz: token-level shuffles of every golden program") {
  std::vector<Input> inputs;
  const auto& ps = programs();
  for (size_t i = 0; i < ps.size(); ++i)
    for (uint32_t k = 0; k < 4; ++k) {
      const uint32_t seed = 40000 + static_cast<uint32_t>(i) * 16 + k;
      Rng rng(seed);
      std::vector<std::string> toks = token_texts(ps[i].text);
      if (toks.size() < 4) continue;
      std::string how;
      int edits = 1 + static_cast<int>(pick(rng, 3));
      for (int e = 0; e < edits; ++e) {
        size_t a = pick(rng, toks.size()), b = pick(rng, toks.size());
        switch (pick(rng, 5)) {
          case 0: std::swap(toks[a], toks[b]); how += " swap"; break;
          case 1: toks.erase(toks.begin() + static_cast<long>(a)); how += " drop"; break;
          case 2: toks.insert(toks.begin() + static_cast<long>(a), toks[b]); how += " dup"; break;
          case 3: {
            size_t end = std::min(toks.size(), a + 2 + pick(rng, 10));
            std::shuffle(toks.begin() + static_cast<long>(a), toks.begin() + static_cast<long>(end), rng);
            how += " shuffle";
            break;
          }
          default: {
            size_t end = std::min(toks.size(), a + 2 + pick(rng, 10));
            std::reverse(toks.begin() + static_cast<long>(a), toks.begin() + static_cast<long>(end));
            how += " reverse";
            break;
          }
        }
        how += "@" + std::to_string(a);
      }
      inputs.push_back({"tokens[seed=" + std::to_string(seed) + "] tests/programs/" + ps[i].name + ":" + how,
                        join_tokens(toks)});
    }
  MESSAGE("token shuffles: " << check_all(inputs));
}

TEST_CASE("fuzz: edge-value literals and swapped operators in every golden program") {
  // Unlike the byte edits these mostly still compile, so they reach the checker, the folder
  // and the engine with values at the edges: zero divisors, INT_MIN, huge floats, nan.
  static const std::vector<std::string> ints = {"0", "1", "-1", "9223372036854775807",
                                                "(-9223372036854775807 - 1)", "10000000", "2"};
  static const std::vector<std::string> floats = {"0.0", "-0.0", "1e308", "1e-308", "(0.0 / 0.0)",
                                                  "(1.0 / 0.0)", "4.9e-324", "2.5"};
  static const std::vector<std::string> ops = {"+", "-", "*", "/", "%", "<", "<=", ">", ">=",
                                               "==", "!=", "&&", "||"};
  std::vector<Input> inputs;
  const auto& ps = programs();
  for (size_t i = 0; i < ps.size(); ++i)
    for (uint32_t k = 0; k < 6; ++k) {
      const uint32_t seed = 50000 + static_cast<uint32_t>(i) * 16 + k;
      Rng rng(seed);
      SourceFile file("t.ds", ps[i].text);
      std::vector<Token> toks = tokenize(file);
      std::vector<size_t> spots;  // tokens that can be swapped for another of their class
      for (size_t t = 0; t < toks.size(); ++t) {
        Tok kd = toks[t].kind;
        if (kd == Tok::Int || kd == Tok::Float || (kd >= Tok::Plus && kd <= Tok::GreaterEq && kd != Tok::Bang))
          spots.push_back(t);
      }
      if (spots.empty()) continue;
      std::vector<std::string> texts;
      for (const Token& t : toks) texts.emplace_back(t.text);
      std::string how;
      int edits = 1 + static_cast<int>(pick(rng, 3));
      for (int e = 0; e < edits; ++e) {
        size_t t = spots[pick(rng, spots.size())];
        const auto& pool = toks[t].kind == Tok::Int ? ints : toks[t].kind == Tok::Float ? floats : ops;
        texts[t] = pool[pick(rng, pool.size())];
        how += " token" + std::to_string(t) + "=" + texts[t];
      }
      // Re-assemble with the original spacing: replace each token's bytes in place.
      std::string out;
      size_t copied = 0;
      for (size_t t = 0; t < toks.size(); ++t) {
        size_t off = toks[t].loc.offset;
        if (off < copied) continue;
        out += ps[i].text.substr(copied, off - copied);
        out += texts[t];
        copied = off + toks[t].text.size();
      }
      out += ps[i].text.substr(std::min(copied, ps[i].text.size()));
      inputs.push_back({"edge-values[seed=" + std::to_string(seed) + "] tests/programs/" + ps[i].name + ":" + how, out});
    }
  MESSAGE("edge-value substitutions: " << check_all(inputs));
}

TEST_CASE("fuzz: pure random bytes") {
  std::vector<Input> inputs;
  for (uint32_t k = 0; k < 200; ++k) {
    const uint32_t seed = 60000 + k;
    Rng rng(seed);
    std::string s(pick(rng, 400), '\0');
    for (char& c : s) c = static_cast<char>(pick(rng, 256));
    inputs.push_back({"random-bytes[seed=" + std::to_string(seed) + "]", s});
  }
  MESSAGE("random byte strings: " << check_all(inputs));
}

TEST_CASE("fuzz: soups of the language's characters and tokens") {
  std::vector<Input> inputs;
  for (uint32_t k = 0; k < 200; ++k) {
    const uint32_t seed = 70000 + k;
    Rng rng(seed);
    std::string s(pick(rng, 300), ' ');
    for (char& c : s) c = kLangChars[pick(rng, kLangChars.size())];
    inputs.push_back({"char-soup[seed=" + std::to_string(seed) + "]", s});
  }
  for (uint32_t k = 0; k < 250; ++k) {
    const uint32_t seed = 80000 + k;
    Rng rng(seed);
    std::string s;
    size_t n = 1 + pick(rng, 60);
    for (size_t i = 0; i < n; ++i) {
      s += kLangTokens[pick(rng, kLangTokens.size())];
      if (pick(rng, 2)) s += ' ';
    }
    inputs.push_back({"token-soup[seed=" + std::to_string(seed) + "]", s});
  }
  MESSAGE("soups: " << check_all(inputs));
}

TEST_CASE("fuzz: deep nesting of every construct, closed and cut off") {
  // prefix + open*depth + middle + close*depth + suffix. Nesting is limited to 256 levels and
  // expression height to 100,000 (docs/language.md), so 1000-deep nesting must fail and a
  // 5000-term chain must run; a construct cut off before its closers must fail too.
  struct Construct {
    const char* name;
    std::string prefix, open, middle, close, suffix;
    bool valid_once;  // depth 1 is a correct program
    bool chain;       // a flat chain (no closers): only height-limited
  };
  const std::vector<Construct> constructs = {
      {"parens", "x = ", "(", "1", ")", "\n", true, false},
      {"brackets", "x = ", "[", "1", "]", "\n", false, false},
      {"unary-minus", "x = ", "-", "1", "", "\n", true, false},
      {"unary-not", "x = ", "!", "true", "", "\n", true, false},
      {"minus-parens", "x = ", "-(", "1", ")", "\n", true, false},
      {"builtin-call", "x = ", "abs(", "1", ")", "\n", true, false},
      {"user-call", "fn f(n) { return n }\nx = ", "f(", "1", ")", "\n", true, false},
      {"print-call", "", "print(", "1", ")", "\n", true, false},
      {"if", "", "if true {\n", "print(1)\n", "}\n", "", true, false},
      {"if-else", "", "if false { } else {\n", "print(1)\n", "}\n", "", true, false},
      {"while", "", "while false {\n", "", "}\n", "", true, false},
      {"for", "", "for i in 0..1 {\n", "print(i)\n", "}\n", "", true, false},
      {"fn-body-blocks", "fn f() {\n", "if true {\n", "print(1)\n", "}\n", "}\nf()\n", true, false},
      {"braces", "", "{\n", "", "}\n", "", false, false},
      {"else-if", "x = 3\nif x == 0 { }", "\nelse if x == 1 { }", " else { print(x) }", "", "\n", true, true},
      {"plus-chain", "x = 1", "\n+ 1", "", "", "\n", false, true},
      {"plus-chain-parens", "x = (1", "\n+ 1", "", "", ")\n", true, true},
      {"and-chain-parens", "b = (true", "\n&& true", "", "", ")\n", true, true},
      {"right-nested-plus", "x = ", "1 + (", "1", ")", "\n", true, false},
      {"comparison-chain", "b = (1", " < 2\n", "", "", ")\n", true, true},
      {"newline-parens", "x = ", "(\n", "1", "\n)", "\n", true, false},
  };
  std::vector<Input> inputs;
  std::vector<Expect> wants;
  auto add = [&](std::string label, std::string text, Expect::Mode mode) {
    inputs.push_back({std::move(label), std::move(text)});
    Expect e;
    e.mode = mode;
    if (mode == Expect::Exact) e.exit_code = 0;
    wants.push_back(e);
  };
  for (const auto& c : constructs)
    for (size_t depth : {1, 255, 256, 257, 999, 1000, 1001, 5000}) {
      std::string open = repeat(c.open, depth), close = repeat(c.close, depth);
      std::string base = std::string("nest[") + c.name + " x" + std::to_string(depth) + "]";
      Expect::Mode mode = Expect::Any;
      if (depth == 1 && c.valid_once) mode = Expect::Exact;
      if (depth >= 1000 && !c.chain) mode = Expect::Fails;
      // A flat sum or && of 5000 terms is far under the height limit (the else-if chain nests
      // blocks, and a comparison chain compares bool with int: those fail).
      std::string_view name = c.name;
      if (depth >= 5000 && (name == "plus-chain-parens" || name == "and-chain-parens"))
        mode = Expect::Exact;
      add(base, c.prefix + open + c.middle + close + c.suffix, mode);
      if (depth >= 256 && !c.close.empty()) {
        // Cut off in the middle of the closers, and with every closer missing.
        add(base + " half-closed", c.prefix + open + c.middle + close.substr(0, close.size() / 2), Expect::Fails);
        add(base + " unclosed", c.prefix + open + c.middle, Expect::Fails);
      }
    }
  MESSAGE("deep nesting inputs: " << check_all(inputs, wants));
}

TEST_CASE("fuzz: inputs too big to keep as files") {
  std::vector<Input> inputs;
  Expect fails;
  fails.mode = Expect::Fails;
  inputs.push_back({"huge[100,001-term chain inside parens, one term per line]",
                    "x = (1" + repeat("\n+1", 100000) + ")\n"});
  inputs.push_back({"huge[100,001-term chain, 100 terms per line]",
                    "x = (1" + repeat(repeat("+1", 100) + "\n", 1000) + ")\n"});
  inputs.push_back({"huge[20,000 lines of syntax errors]", repeat("x = = 1\n", 20000)});
  inputs.push_back({"huge[20,000 lines of type errors]", "x = 1\n" + repeat("x = true\n", 20000)});
  inputs.push_back({"huge[50,000 nested ifs]", repeat("if true {\n", 50000) + repeat("}\n", 50000)});
  inputs.push_back({"huge[100,000 '(' one per line]", "x = " + repeat("(\n", 100000) + "1\n"});
  inputs.push_back({"huge[200 KB identifier]", "print(" + repeat("a", 200000) + ")\n"});
  inputs.push_back({"huge[200 KB integer literal]", "x = " + repeat("9", 200000) + "\n"});
  inputs.push_back({"huge[200 KB float literal]", "x = 0." + repeat("9", 200000) + "e999999\n"});
  inputs.push_back({"huge[200 KB comment line]", "# " + repeat("comment ", 25000) + "\nx = \n"});
  inputs.push_back({"huge[200 KB unterminated string]", "print(\"" + repeat("abcdefgh", 25000) + "\n"});
  MESSAGE("huge inputs: " << check_all(inputs, std::vector<Expect>(inputs.size(), fails)));
}

TEST_CASE("fuzz: 200 KB single-line inputs") {
  // ~100,000 tokens on one line: every token's location must be found in linear time (a
  // column counted from the start of the line for each token made these take minutes).
  std::vector<Input> inputs;
  Expect fails;
  fails.mode = Expect::Fails;
  inputs.push_back({"huge[100,001-term 1+1+... chain on one line]", "x = 1" + repeat("+1", 100000) + "\n"});
  inputs.push_back({"huge[100,000 nested parentheses on one line]",
                    "x = " + repeat("(", 100000) + "1" + repeat(")", 100000) + "\n"});
  inputs.push_back({"huge[100,000 unary minus on one line]", "x = " + repeat("-", 100000) + "1\n"});
  inputs.push_back({"huge[200 KB line of ';' then ')']", repeat(";", 200000) + ")\n"});
  inputs.push_back({"huge[200 KB line of 'x=1;' then a type error]", repeat("x=1;", 50000) + "x = true\n"});
  inputs.push_back({"huge[200 KB line of '{']", repeat("{", 200000) + "\n"});
  MESSAGE("200 KB single-line inputs: " << check_all(inputs, std::vector<Expect>(inputs.size(), fails)));
}

TEST_CASE("fuzz: one session across many bad inputs (as in the REPL)") {
  // Errors must leave a session usable: the REPL keeps one Session for all its inputs.
  Guard guard;
  Session s;
  RunOptions opts;
  opts.step_limit = kStepLimit;
  size_t n = 0;
  auto feed = [&](const Input& in) {
    set_current(in, s.engine());
    std::string problems;
    try {
      Outcome o = s.submit(in.text, "<stdin>", opts);
      Lines lines(in.text);
      problems += check_outcome(o, in.text, lines);
      problems += check_views(s, in.text, lines);
    } catch (const std::exception& e) {
      problems += std::string("- an exception escaped the library: ") + e.what() + "\n";
    }
    if (!problems.empty())
      FAIL_CHECK("input " << in.label << " (one session, after " << n << " inputs)\n  bytes: \""
                          << escape(in.text) << "\"\n" << problems);
    ++n;
  };
  feed({"repl[define]", "x = 1\nfn f(n) { return n + x }\n"});
  for (const auto& f : ds_files("malformed")) feed({"repl tests/malformed/" + f.filename().string(), read_text(f.string())});
  const auto& ps = programs();
  for (uint32_t k = 0; k < 100; ++k) {
    const uint32_t seed = 90000 + k;
    Rng rng(seed);
    std::string how;
    const Golden& p = ps[pick(rng, ps.size())];
    std::string text = mutate(p.text, rng, how);
    feed({"repl-mutate[seed=" + std::to_string(seed) + "] tests/programs/" + p.name + ":" + how, text});
  }
  // After all of that, the session still runs good code.
  std::string out;
  RunOptions ok_opts;
  ok_opts.out = [&](std::string_view t) { out += t; };
  Outcome o = s.submit("print(40 + 2)\n", "<stdin>", ok_opts);
  CHECK_MESSAGE(o.exit_code() == 0, o.message);
  CHECK(out == "42\n");
  MESSAGE("inputs fed to one session: " << n);
}
