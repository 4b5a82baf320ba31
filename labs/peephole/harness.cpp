// The checker's side of lab peephole, compiled with the student's peephole.cpp against the
// project's lang/ and vm/ libraries and run in a child process. `harness CASE PROGRAMS_DIR`
// prints one line: "PASS" or "FAIL: why".
//   same_output    on the real stack VM after the student's pass, every program prints what
//                  the AST walker prints (the lab's programs and 60 seeded random ones)
//   no_target_fusion  no fusion swallows an instruction a jump lands on: a chunk built by
//                  hand with jumps into the middle of the patterns (the compiler's code
//                  rarely has one), then every program
//   bench_steps    bench.ds executes at most the project's own fused count + 5%; a miss
//                  names the opcodes that run more often than after the project's pass
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "labs/cpp_common/differential.h"
#include "peephole_lab.h"
#include "vm/stack_vm.h"

using namespace descent;
using stack::Instruction;

namespace {

constexpr int kRandomPrograms = 60;
constexpr double kMargin = 0.05;

// The first fusion that swallowed a jump target, in words ("" while there is none).
std::string g_target_fusion;

bool student_rule(stack::Chunk& chunk, const std::vector<Instruction>& code, size_t i,
                  stack::Rewrite& r) {
  Instruction fused;
  fused.loc = code[i].loc;
  size_t n = fuse_at(code, i, &fused);
  if (n == 0) return false;
  if (i + n > code.size()) {
    if (g_target_fusion.empty())
      g_target_fusion = "fuse_at returned " + std::to_string(n) + " at instruction " + std::to_string(i) +
                        " of " + chunk.name + ", past the end of its " + std::to_string(code.size()) + " instructions";
    return false;
  }
  for (size_t k = i + 1; k < i + n && g_target_fusion.empty(); ++k)
    if (code[k].is_target) {
      std::string seq;
      for (size_t m = i; m < i + n; ++m) seq += std::string(m > i ? "; " : "") + stack::op_name(code[m].op);
      g_target_fusion = "in " + chunk.name + ", you fused " + seq + " (instructions " + std::to_string(i) +
                        ".." + std::to_string(i + n - 1) + ") into " + stack::op_name(fused.op) +
                        ", but a jump lands on its " + stack::op_name(code[k].op) + " (instruction " +
                        std::to_string(k) + "): that jump would now land inside your instruction";
    }
  r.out = {fused};
  r.used = n;
  return true;
}

// The trap, built by hand (the compiler rarely jumps into the middle of a pattern):
//   0 LOAD_LOCAL x   1 CONST 1   2 ADD_INT   3 STORE_LOCAL x     x = x + 1, a jump lands on 2
//   4 LOAD_LOCAL x   5 CONST 1   6 LT_INT    7 JUMP_IF_FALSE 10  x < 1, a jump lands on 7
//   8 JUMP 7         9 JUMP 2   10 HALT
// Every pattern of the lab that starts at 0, 1, 4, 5 or 6 has a jump target inside it.
stack::Chunk trap_chunk() {
  using stack::Op;
  struct At {
    Op op;
    uint32_t arg;
    int target;  // jumps: the instruction it lands on
  };
  const std::vector<At> code = {{Op::LOAD_LOCAL, 0, -1}, {Op::CONST, 0, -1}, {Op::ADD_INT, 0, -1},
                                {Op::STORE_LOCAL, 0, -1}, {Op::LOAD_LOCAL, 0, -1}, {Op::CONST, 0, -1},
                                {Op::LT_INT, 0, -1},     {Op::JUMP_IF_FALSE, 0, 10}, {Op::JUMP, 0, 7},
                                {Op::JUMP, 0, 2},        {Op::HALT, 0, -1}};
  std::vector<size_t> offset(code.size() + 1, 0);
  for (size_t n = 0; n < code.size(); ++n) offset[n + 1] = offset[n] + stack::instruction_length(code[n].op);
  stack::Chunk c;
  c.name = "the trap chunk";
  c.local_names = {"x"};
  c.local_types = {Type::Int};
  c.constants = {Value::of_int(1)};
  c.constant_types = {Type::Int};
  for (size_t n = 0; n < code.size(); ++n) {
    c.code.push_back(static_cast<uint8_t>(code[n].op));
    if (stack::operand_count(stack::op_format(code[n].op)) == 1) {
      uint32_t a = code[n].target < 0 ? code[n].arg
                                      : static_cast<uint32_t>(static_cast<int64_t>(offset[static_cast<size_t>(code[n].target)]) -
                                                              static_cast<int64_t>(offset[n + 1]));
      for (int b = 0; b < 4; ++b) c.code.push_back(static_cast<uint8_t>(a >> (8 * b)));
    }
    c.locs.resize(c.code.size(), SourceLoc{0, 1, 1});
  }
  return c;
}

std::unique_ptr<Engine> student_vm() {
  return make_stack_vm_with_pass([](stack::Chunk& c) { stack::apply_peephole_rule(c, student_rule); });
}

// Instructions executed per opcode (the first word of each traced instruction).
std::map<std::string, uint64_t> opcode_counts(Engine& engine, const lab::Compiled& c) {
  std::map<std::string, uint64_t> counts;
  GlobalStore globals;
  globals.resize(c.module.globals.size());
  RunOptions opts;
  opts.step_limit = 50'000'000;
  opts.trace_steps = [&counts](const TraceStep& t) {
    std::istringstream words(t.instruction);
    std::string op;
    words >> op;
    ++counts[op];
  };
  run_on_big_stack([&] { engine.run(*c.program, c.module, globals, opts); });
  return counts;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return lab::fail("usage: harness CASE PROGRAMS_DIR");
  std::string which = argv[1];
  std::filesystem::path dir = argv[2];
  if (which == "same_output" || which == "no_target_fusion") {
    std::vector<lab::Source> programs = lab::corpus(dir, kRandomPrograms);
    if (which == "no_target_fusion") {
      stack::Chunk trap = trap_chunk();
      stack::apply_peephole_rule(trap, student_rule);
      if (!g_target_fusion.empty())
        return lab::fail(g_target_fusion + " (the trap: x = x + 1 and x < 1, with jumps into their middle)");
    }
    for (const auto& src : programs) {
      auto c = lab::compile(src);
      if (!c->ok) return lab::fail(lab::described(src) + " does not compile: " + c->error);
      std::string want = lab::walker_output(*c);
      auto vm = student_vm();
      std::string got = lab::run(*vm, *c);
      if (which == "no_target_fusion" && !g_target_fusion.empty())
        return lab::fail(lab::described(src) + ": " + g_target_fusion +
                         (got == want ? "" : "; it prints \"" + lab::shown(got) + "\" instead of \"" +
                                                 lab::shown(want) + "\""));
      if (which == "same_output" && got != want)
        return lab::fail(lab::described(src) + ": the AST walker prints \"" + lab::shown(want) +
                         "\", the stack VM after your pass \"" + lab::shown(got) + "\"");
    }
    return lab::pass();
  }
  if (which == "bench_steps") {
    lab::Source src{"bench.ds", lab::read_file(dir / "bench.ds"), false};
    auto c = lab::compile(src);
    if (!c->ok) return lab::fail("bench.ds does not compile: " + c->error);
    auto project = make_stack_vm(true);
    auto plain = make_stack_vm(false);
    auto mine = student_vm();
    uint64_t theirs = 0, unfused = 0, yours = 0;
    std::string want = lab::run(*project, *c, &theirs);
    lab::run(*plain, *c, &unfused);
    std::string got = lab::run(*mine, *c, &yours);
    if (got != want)
      return lab::fail("bench.ds prints \"" + lab::shown(got) + "\" after your pass, \"" + lab::shown(want) + "\" after the project's");
    uint64_t budget = theirs + static_cast<uint64_t>(static_cast<double>(theirs) * kMargin);
    if (yours <= budget) return lab::pass();
    // Which opcodes still run more often than after the project's pass: the start of a
    // pattern that was missed.
    auto a = opcode_counts(*mine, *c), b = opcode_counts(*project, *c);
    std::vector<std::pair<int64_t, std::string>> extra;
    for (const auto& [op, n] : a) {
      int64_t d = static_cast<int64_t>(n) - static_cast<int64_t>(b.count(op) ? b.at(op) : 0);
      if (d > 0) extra.push_back({d, op});
    }
    std::sort(extra.rbegin(), extra.rend());
    std::string more;
    for (size_t k = 0; k < extra.size() && k < 4; ++k)
      more += std::string(k ? ", " : "") + extra[k].second + " +" + std::to_string(extra[k].first);
    return lab::fail("bench.ds executes " + std::to_string(yours) + " instructions after your pass (" +
                     std::to_string(unfused) + " unfused); the project's pass gets " + std::to_string(theirs) +
                     ", the budget is " + std::to_string(budget) + ". Run more often than after the project's pass: " +
                     more + " (the patterns that start or end with them are missing)");
  }
  return lab::fail("unknown case " + which);
}
