// The views of both VMs that students read beside Python's dis (issue 14): `>>` marks
// exactly the instructions a jump lands on in every listing, and with the trace on, an
// instruction's trace line comes before what it prints and before its runtime error.
#include <doctest/doctest.h>

#include <regex>
#include <set>
#include <sstream>

#include "lang/walker.h"
#include "tests/engine_util.h"
#include "vm/reg_disasm.h"
#include "vm/reg_vm.h"
#include "vm/stack_disasm.h"
#include "vm/stack_vm.h"

using namespace descent;

namespace {

// Loops of each kind, branches both ways, short-circuits, calls and early returns: every
// jump instruction both compilers and both fusion passes emit has a chance to appear.
const char* kJumpy =
    "fn fib(n: int) -> int {\n"
    "  if n < 2 { return n }\n"
    "  return fib(n - 1) + fib(n - 2)\n"
    "}\n"
    "fn sum(n: int) -> int {\n"
    "  s = 0\n"
    "  for i in 0..n {\n"
    "    if i % 3 == 0 || i > 10 { continue }\n"
    "    if i == 7 && s > 2 { break }\n"
    "    s = s + i\n"
    "  }\n"
    "  return s\n"
    "}\n"
    "i = 0\n"
    "while i < 3 { i = i + 1 }\n"
    "b = i > 1 && !(i == 2)\n"
    "print(fib(5), sum(20), b)\n";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Checks one body at a time: the rows marked `>>` are the targets its `->` operands name,
// and every instruction row starts with the mark or the same width of spaces.
// jump: how an operand names its target ("-> 0047" or "->2"); index: the row's own offset.
void check_marks(const std::string& listing, const std::regex& jump, const std::regex& index) {
  std::set<int> marked, targets;
  int rows = 0;
  auto finish = [&] {
    CHECK(marked == targets);
    marked.clear(), targets.clear();
  };
  for (const std::string& l : lines_of(listing)) {
    std::smatch m;
    if (!std::regex_search(l, m, index)) {  // a header or the blank line between bodies
      finish();
      continue;
    }
    ++rows;
    INFO(l);
    REQUIRE(l.size() > 3);
    std::string mark = l.substr(0, 3);
    CHECK((mark == ">> " || mark == "   "));
    if (mark == ">> ") marked.insert(std::stoi(m[1]));
    for (auto it = std::sregex_iterator(l.begin(), l.end(), jump); it != std::sregex_iterator();
         ++it)
      targets.insert(std::stoi((*it)[1]));
  }
  finish();
  CHECK(rows > 20);
}

struct Listed {
  testing::EngineRunner runner{make_ast_walker()};
  std::shared_ptr<Program> program;
  explicit Listed(const char* text) : program(runner.compile(text)) { REQUIRE(program); }
};

}  // namespace

TEST_CASE("views: `>>` marks exactly the jump targets in the stack listings, fused or not") {
  Listed l(kJumpy);
  for (bool fused : {false, true}) {
    INFO("fused ", fused);
    std::string text = stack::dump_stack(*l.program, l.runner.module, false, fused);
    CHECK(text.find(">> ") != std::string::npos);
    check_marks(text, std::regex(R"(-> (\d{4}))"), std::regex(R"(^(?:>> |   )?(\d{4}) )"));
  }
}

TEST_CASE("views: `>>` marks exactly the jump targets in the register listings, every form") {
  Listed l(kJumpy);
  for (RegForm form : {RegForm::Virtual, RegForm::Allocated, RegForm::Fused}) {
    for (int file : {16, 3}) {
      INFO("form ", static_cast<int>(form), ", ", file, " registers");
      std::string text = dump_reg(*l.program, l.runner.module, form, file);
      CHECK(text.find(">> ") != std::string::npos);
      check_marks(text, std::regex(R"(->(\d+))"), std::regex(R"(^(?:>> |   )?(\d{4}) )"));
    }
  }
}

namespace {

// What a student sees with the trace on: trace lines and the program's output in one
// stream, as the REPL writes them (output lines tagged "OUT ").
struct Traced {
  std::vector<std::string> lines;
  std::string error;
};

Traced run_traced(std::unique_ptr<Engine> engine, const std::string& text) {
  testing::EngineRunner r(std::move(engine));
  auto prog = r.compile(text);
  REQUIRE(prog);
  std::string stream;
  RunOptions opts;
  opts.echo = true;
  opts.out = [&](std::string_view s) {
    for (const auto& l : lines_of(std::string(s))) stream += "OUT " + l + "\n";
  };
  opts.trace = [&](std::string_view s) { stream += s; };
  RunResult rr = r.engine->run(*prog, r.module, r.globals, opts);
  return Traced{lines_of(stream), rr.ok ? "" : rr.error.message};
}

bool has(const std::string& line, const char* a, const char* b) {
  return line.find(a) != std::string::npos || line.find(b) != std::string::npos;
}

// Every output line comes right after the trace line of the print or echo that wrote it
// (the output of a print that writes one line), and the failing instruction's trace line,
// naming the error, is the last line.
void check_order(std::unique_ptr<Engine> engine, const char* print, const char* echo,
                 const char* div) {
  const char* program =
      "fn show(n: int) -> int {\n"
      "  print(\"in show\", n)\n"
      "  return n * 2\n"
      "}\n"
      "print(1)\n"
      "show(20) + 1\n"
      "z = 0\n"
      "for i in 0..2 { print(i) }\n"
      "n = 7 / z\n"
      "print(n)\n";
  Traced t = run_traced(std::move(engine), program);
  CHECK(t.error == "division by zero");
  std::vector<std::string> want_out = {"OUT 1", "OUT in show 20", "OUT 41", "OUT 0", "OUT 1"};
  std::vector<std::string> outs;
  for (size_t i = 0; i < t.lines.size(); ++i) {
    if (t.lines[i].rfind("OUT ", 0) != 0) continue;
    outs.push_back(t.lines[i]);
    INFO("output line ", i, ": ", t.lines[i]);
    REQUIRE(i > 0);
    CHECK(has(t.lines[i - 1], print, echo));
  }
  CHECK(outs == want_out);
  REQUIRE(!t.lines.empty());
  INFO("last line: ", t.lines.back());
  CHECK(t.lines.back().find(div) != std::string::npos);
  CHECK(t.lines.back().find("error: division by zero") != std::string::npos);
}

}  // namespace

TEST_CASE("views: the stack VM's trace line comes before the instruction's output and error") {
  for (bool fused : {true, false}) {
    INFO("fused ", fused);
    check_order(make_stack_vm(fused), " PRINT ", " ECHO ", " DIV_INT");
  }
}

TEST_CASE("views: the register VM's trace line comes before the instruction's output and error") {
  for (int file : {16, 3, 0}) {
    INFO(file, " registers");
    check_order(make_reg_vm(file), "  print ", "  echo ", "  div_int ");
  }
}
