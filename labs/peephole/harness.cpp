// The checker's side of lab peephole, built twice with the project's lang/ and vm/ libraries
// (labs/cpp_common/observe.h): with the student's peephole.cpp, run as
// `harness observe CASE SEED PROGRAMS_DIR`, it makes the calls to fuse_at and writes what each
// returned on fd 3; with the lab's starter peephole.cpp, run as
// `harness check CASE SEED PROGRAMS_DIR` on those records, it calls nothing of the student's
// and prints one line: "PASS" or "FAIL: why". SEED is the runner's, drawn per run.
//   same_output    on the real stack VM after the student's pass, every program prints what
//                  the AST walker prints (the lab's programs and 60 random ones from the
//                  run's seed)
//   no_target_fusion  no fusion swallows an instruction a jump lands on: a chunk built by
//                  hand with jumps into the middle of the patterns (the compiler's code
//                  rarely has one), then every program
//   bench_steps    bench.ds executes at most the project's own fused count + 5%; a miss
//                  names the opcodes that run more often than after the project's pass
//
// A call's record is what fuse_at returned, every field of the Instruction it filled, and
// whether it changed `code` (a const reference; a change is a failed check, and the observing
// run puts code back as it was). Both runs go on with the fused instruction rebuilt from the
// record, once unsafe_fusion() below has made sure the real stack VM can run it: the VM runs
// bytecode as it is, so an instruction that breaks it is a failed check with a message, not
// a crash of the checker. One exception keeps the checks as they were: a fusion that swallows
// a jump target is still made (no_target_fusion reports it, the others judge what the program
// prints), though a jump that lands on it with the stack at another height can make the VM
// go wrong, in the observing run first.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "labs/cpp_common/differential.h"
#include "labs/cpp_common/observe.h"
#include "peephole_lab.h"
#include "vm/stack_vm.h"

using namespace descent;
using stack::Instruction;
using stack::Op;

namespace {

constexpr int kRandomPrograms = 60;
constexpr double kMargin = 0.05;

// The first fusion that swallowed a jump target, in words ("" while there is none).
std::string g_target_fusion;
// The first fusion the checker would not run (an instruction that breaks the stack VM, or a
// change to code), in words ("" while there is none).
std::string g_unsafe_fusion;

// An opcode's name, also for a byte that is none.
std::string name_of(Op op) {
  if (static_cast<int>(op) < stack::kOpCount) return stack::op_name(op);
  return "opcode " + std::to_string(static_cast<int>(op));
}

// ---- fuse_at, through the trust boundary ----

// An Instruction's fields, in the record's order. loc.file is a pointer: the record says
// whether it is null (0), the file of code[i] (1: every instruction of a program's chunks has
// that one) or another (2, rebuilt as null: only a message with a file name reads it, and the
// VM's output has none).
void write_instruction(lab::Record& r, const Instruction& x, const SourceFile* file) {
  r.u64(static_cast<uint64_t>(x.op)).u64(x.arg[0]).u64(x.arg[1]).u64(x.arg[2]);
  r.u64(x.loc.offset).u64(x.loc.line).u64(x.loc.col).u64(!x.loc.file ? 0 : x.loc.file == file ? 1 : 2);
  r.u64(x.target).u64(x.is_target ? 1 : 0);
}

Instruction read_instruction(lab::Reader& in, const SourceFile* file) {
  Instruction x;
  x.op = static_cast<Op>(in.count(255));
  for (auto& a : x.arg) a = static_cast<uint32_t>(in.count(UINT32_MAX));
  x.loc.offset = static_cast<uint32_t>(in.count(UINT32_MAX));
  x.loc.line = static_cast<uint32_t>(in.count(UINT32_MAX));
  x.loc.col = static_cast<uint32_t>(in.count(UINT32_MAX));
  x.loc.file = in.count(2) == 1 ? file : nullptr;
  x.target = static_cast<size_t>(in.u64());
  x.is_target = in.count(1) != 0;
  return x;
}

bool same(const Instruction& a, const Instruction& b) {
  return a.op == b.op && a.arg[0] == b.arg[0] && a.arg[1] == b.arg[1] && a.arg[2] == b.arg[2] &&
         a.loc.offset == b.loc.offset && a.loc.line == b.loc.line && a.loc.col == b.loc.col &&
         a.loc.file == b.loc.file && a.target == b.target && a.is_target == b.is_target;
}

// The student's fuse_at(code, i, fused). *changed_at is 0, or 1 + the first instruction of
// code the call changed (code is then as it was before the call, in both runs).
size_t student_fuse(const std::vector<Instruction>& code, size_t i, Instruction* fused, size_t* changed_at) {
  const SourceFile* file = code[i].loc.file;
  auto [n, at] = lab::observed(
      "fuse_at",
      [&](lab::Record& r) {
        std::vector<Instruction> before = code;
        size_t got = fuse_at(code, i, fused);
        size_t first = 0;  // 1 + the first instruction that differs
        size_t common = std::min(code.size(), before.size());
        for (size_t k = 0; k < common && !first; ++k)
          if (!same(code[k], before[k])) first = k + 1;
        if (!first && code.size() != before.size()) first = common + 1;
        // code is the pass's own vector (apply_peephole_rule's), not a const object: put back.
        if (first) const_cast<std::vector<Instruction>&>(code) = std::move(before);
        r.u64(got);
        write_instruction(r, *fused, file);
        r.u64(first);
      },
      [&](lab::Reader& in) {
        size_t got = static_cast<size_t>(in.u64());
        *fused = read_instruction(in, file);
        size_t first = in.count(code.size() + 1);
        return std::pair<size_t, size_t>{got, first};
      });
  *changed_at = at;
  return n;
}

// ---- can the real stack VM run it? ----

// What an instruction does to the operand stack: it pops, then pushes; a jump's taken path
// may differ from its fall-through (JUMP_IF_FALSE_OR_POP keeps its operand when it jumps).
struct Effect {
  int pops = 0, pushes = 0;
  bool jump = false;
  int taken_pops = 0, taken_pushes = 0;
};

// False for the instructions whose effect depends on a table (CALL, PRINT, TENSOR), that
// step a for loop, return or end the code: no fusion makes or swallows one.
bool effect_of(Op op, Effect* e) {
  auto plain = [e](int pops, int pushes) {
    e->pops = pops, e->pushes = pushes;
    return true;
  };
  auto jump = [e](int pops, int taken_pops) {
    e->jump = true, e->pops = pops, e->taken_pops = taken_pops;
    return true;
  };
  if (static_cast<int>(op) >= stack::kOpCount) return false;
  if (op >= Op::JUMP_IF_EQ_INT && op <= Op::JUMP_IF_NOT_GE_FLOAT) return jump(2, 2);
  if (op >= Op::JUMP_IF_EQ_LOCAL_CONST_INT && op <= Op::JUMP_IF_GE_LOCAL_CONST_INT) return jump(0, 0);
  if (op >= Op::ADD_CONST_INT && op <= Op::DIV_CONST_FLOAT) return plain(1, 1);
  if (op >= Op::EQ_INT && op <= Op::NE_BOOL) return plain(2, 1);
  switch (op) {
    case Op::CONST: case Op::LOAD_LOCAL: case Op::LOAD_GLOBAL: case Op::LOAD_GLOBAL_CHECKED:
    case Op::ADD_LOCAL_CONST_INT: case Op::SUB_LOCAL_CONST_INT:
      return plain(0, 1);
    case Op::POP: case Op::STORE_LOCAL: case Op::STORE_GLOBAL: case Op::ADD_TO_LOCAL_INT:
    case Op::ADD_TO_LOCAL_FLOAT:
      return plain(1, 0);
    case Op::ADD_INT: case Op::SUB_INT: case Op::MUL_INT: case Op::DIV_INT: case Op::MOD_INT:
    case Op::ADD_FLOAT: case Op::SUB_FLOAT: case Op::MUL_FLOAT: case Op::DIV_FLOAT: case Op::MOD_FLOAT:
    case Op::MIN_INT: case Op::MAX_INT: case Op::MIN_FLOAT: case Op::MAX_FLOAT:
      return plain(2, 1);
    case Op::NEG_INT: case Op::NEG_FLOAT: case Op::NOT: case Op::INT_TO_FLOAT: case Op::FLOAT_TO_INT:
    case Op::MATH: case Op::ABS_INT:
      return plain(1, 1);
    case Op::INC_LOCAL_INT: case Op::SAFEPOINT:
      return plain(0, 0);
    case Op::JUMP: case Op::LOOP: return jump(0, 0);
    case Op::JUMP_IF_FALSE: case Op::JUMP_IF_TRUE: return jump(1, 1);
    case Op::JUMP_IF_FALSE_OR_POP: case Op::JUMP_IF_TRUE_OR_POP: return jump(1, 0);
    default: return false;
  }
}

std::string signed_count(int n) { return (n > 0 ? "+" : "") + std::to_string(n); }

// "" if the stack VM can run `fused` in place of code[i .. i+n), else why not (a phrase that
// follows "you fused ... into OP"): an opcode, operands the chunk has, the same change to the
// stack's height on every path, a fused jump landing where the replaced one does.
std::string unsafe_fusion(const stack::Chunk& chunk, const std::vector<Instruction>& code, size_t i, size_t n,
                          const Instruction& fused) {
  if (static_cast<int>(fused.op) >= stack::kOpCount)
    return ", which is not an opcode (vm/stack_chunk.h has " + std::to_string(stack::kOpCount) + ")";
  stack::Format format = stack::op_format(fused.op);
  int operands = stack::operand_count(format);
  Effect f;
  bool known = effect_of(fused.op, &f);
  // One instruction given back as it was: nothing changes.
  if (n == 1 && fused.op == code[i].op) {
    bool as_it_was = true;
    for (int a = 0; a < operands; ++a) {
      if (stack::operand_kind(format, a) != stack::Operand::Jump) as_it_was &= fused.arg[a] == code[i].arg[a];
      else as_it_was &= fused.target == code[i].target;  // the jump's operand is its target
    }
    if (as_it_was) return "";
  }
  if (!known)
    return ", which no fusion may make (the checker runs fused instructions that pop and push a fixed number "
           "of values: no call, print, for-loop step or return)";
  // The replaced instructions, on the fall-through path; `lowest`: the deepest they reach
  // below the height they start at.
  int height = 0, lowest = 0, taken = 0;
  Effect last;
  for (size_t k = i; k < i + n; ++k) {
    Effect e;
    if (!effect_of(code[k].op, &e))
      return ", but " + name_of(code[k].op) + " (instruction " + std::to_string(k) +
             ") cannot be part of a fusion: no fused instruction calls, prints, steps a for loop or returns";
    lowest = std::min(lowest, height - e.pops);
    taken = height - e.taken_pops + e.taken_pushes;
    height += e.pushes - e.pops;
    last = e;
  }
  for (int a = 0; a < operands; ++a) {
    uint32_t v = fused.arg[a];
    std::string which = "arg[" + std::to_string(a) + "] = " + std::to_string(v);
    switch (stack::operand_kind(format, a)) {
      case stack::Operand::Const:
        if (v >= chunk.constants.size())
          return ", whose constant index (" + which + ") is past the end of the chunk's " +
                 std::to_string(chunk.constants.size()) + " constants";
        break;
      case stack::Operand::Local:
        if (v >= chunk.num_locals())
          return ", whose local slot (" + which + ") is past the end of the chunk's " +
                 std::to_string(chunk.num_locals()) + " locals";
        break;
      case stack::Operand::Global: {
        bool found = false;
        for (size_t k = i; k < i + n; ++k) {
          stack::Format g = stack::op_format(code[k].op);
          for (int b = 0; b < stack::operand_count(g); ++b)
            found |= stack::operand_kind(g, b) == stack::Operand::Global && code[k].arg[b] == v;
        }
        if (!found) return ", whose global (" + which + ") is none of the replaced instructions' globals";
        break;
      }
      default: break;  // a jump's is its target; a builtin's may be any (MATH leaves others alone)
    }
  }
  if ((fused.op == Op::DIV_CONST_INT || fused.op == Op::MOD_CONST_INT) && chunk.constants[fused.arg[0]].i == 0)
    return ", by the constant 0: it never fails, so an int / or % by 0 must stay as it is (an error at its line)";
  if (f.pops > -lowest)
    return ", which pops " + std::to_string(f.pops) + " values; the instructions it replaces reach only " +
           std::to_string(-lowest) + " below the top of the stack";
  if (f.pushes - f.pops != height)
    return ", which changes the stack's height by " + signed_count(f.pushes - f.pops) +
           "; the instructions it replaces change it by " + signed_count(height);
  if (f.jump) {
    const Instruction& j = code[i + n - 1];
    if (!last.jump) return ", a jump, but the instructions it replaces do not end with one";
    if (fused.target != j.target)
      return ", which lands on instruction " + std::to_string(fused.target) + "; the " + name_of(j.op) +
             " it replaces lands on instruction " + std::to_string(j.target) +
             " (a fused jump lands where the jump it replaces does: fused->target)";
    if (f.taken_pushes - f.taken_pops != taken)
      return ", which changes the stack's height by " + signed_count(f.taken_pushes - f.taken_pops) +
             " when it jumps; the instructions it replaces change it by " + signed_count(taken);
  }
  return "";
}

// "LOAD_LOCAL; CONST; ADD_INT (instructions 3..5)"
std::string fused_sequence(const std::vector<Instruction>& code, size_t i, size_t n) {
  std::string seq;
  for (size_t m = i; m < i + n; ++m) seq += std::string(m > i ? "; " : "") + name_of(code[m].op);
  if (n == 1) return seq + " (instruction " + std::to_string(i) + ")";
  return seq + " (instructions " + std::to_string(i) + ".." + std::to_string(i + n - 1) + ")";
}

bool student_rule(stack::Chunk& chunk, const std::vector<Instruction>& code, size_t i,
                  stack::Rewrite& r) {
  Instruction fused;
  fused.loc = code[i].loc;
  size_t changed_at = 0;
  size_t n = student_fuse(code, i, &fused, &changed_at);
  if (changed_at) {
    if (g_unsafe_fusion.empty())
      g_unsafe_fusion = "fuse_at, called at instruction " + std::to_string(i) + " of " + chunk.name +
                        ", changed code (instruction " + std::to_string(changed_at - 1) +
                        "): code is the pass's, given as a const reference; fuse_at only reads it and fills *fused";
    return false;
  }
  if (n == 0) return false;
  if (n > code.size() - i) {
    if (g_target_fusion.empty())
      g_target_fusion = "fuse_at returned " + std::to_string(n) + " at instruction " + std::to_string(i) +
                        " of " + chunk.name + ", past the end of its " + std::to_string(code.size()) + " instructions";
    return false;
  }
  // Swallowing a jump target is reported, not refused: the program runs with it, as it did
  // before the checker ran in a separate process (a message then says what it prints).
  for (size_t k = i + 1; k < i + n && g_target_fusion.empty(); ++k)
    if (code[k].is_target) {
      std::string seq;
      for (size_t m = i; m < i + n; ++m) seq += std::string(m > i ? "; " : "") + name_of(code[m].op);
      g_target_fusion = "in " + chunk.name + ", you fused " + seq + " (instructions " + std::to_string(i) +
                        ".." + std::to_string(i + n - 1) + ") into " + name_of(fused.op) +
                        ", but a jump lands on its " + name_of(code[k].op) + " (instruction " +
                        std::to_string(k) + "): that jump would now land inside your instruction";
    }
  std::string unsafe = unsafe_fusion(chunk, code, i, n, fused);
  if (!unsafe.empty()) {
    if (g_unsafe_fusion.empty())
      g_unsafe_fusion = "in " + chunk.name + ", you fused " + fused_sequence(code, i, n) + " into " +
                        name_of(fused.op) + unsafe + " (the checker does not run it: the stack VM would go wrong)";
    return false;
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

std::string check(const std::string& which, uint64_t seed, const std::filesystem::path& dir) {
  if (which == "same_output" || which == "no_target_fusion") {
    std::vector<lab::Source> programs = lab::corpus(dir, kRandomPrograms, lab::random_options(), seed);
    if (which == "no_target_fusion") {
      stack::Chunk trap = trap_chunk();
      stack::apply_peephole_rule(trap, student_rule);
      if (!g_target_fusion.empty())
        return g_target_fusion + " (the trap: x = x + 1 and x < 1, with jumps into their middle)";
      if (!g_unsafe_fusion.empty())
        return g_unsafe_fusion + " (the trap: x = x + 1 and x < 1, with jumps into their middle)";
    }
    for (const auto& src : programs) {
      auto c = lab::compile(src);
      if (!c->ok) return lab::described(src) + " does not compile: " + c->error;
      std::string want = lab::walker_output(*c);
      auto vm = student_vm();
      std::string got = lab::run(*vm, *c);
      if (which == "no_target_fusion" && !g_target_fusion.empty())
        return lab::described(src) + ": " + g_target_fusion +
               (got == want ? "" : "; it prints \"" + lab::shown(got) + "\" instead of \"" + lab::shown(want) + "\"");
      if (!g_unsafe_fusion.empty()) return lab::described(src) + ": " + g_unsafe_fusion;
      if (which == "same_output" && got != want)
        return lab::described(src) + ": the AST walker prints \"" + lab::shown(want) +
               "\", the stack VM after your pass \"" + lab::shown(got) + "\"";
    }
    return "";
  }
  if (which == "bench_steps") {
    lab::Source src{"bench.ds", lab::read_file(dir / "bench.ds"), false};
    auto c = lab::compile(src);
    if (!c->ok) return "bench.ds does not compile: " + c->error;
    auto project = make_stack_vm(true);
    auto plain = make_stack_vm(false);
    auto mine = student_vm();
    uint64_t theirs = 0, unfused = 0, yours = 0;
    std::string want = lab::run(*project, *c, &theirs);
    lab::run(*plain, *c, &unfused);
    std::string got = lab::run(*mine, *c, &yours);
    if (!g_unsafe_fusion.empty()) return "bench.ds: " + g_unsafe_fusion;
    if (got != want)
      return "bench.ds prints \"" + lab::shown(got) + "\" after your pass, \"" + lab::shown(want) + "\" after the project's";
    uint64_t budget = theirs + static_cast<uint64_t>(static_cast<double>(theirs) * kMargin);
    if (yours <= budget) return "";
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
    return "bench.ds executes " + std::to_string(yours) + " instructions after your pass (" +
           std::to_string(unfused) + " unfused); the project's pass gets " + std::to_string(theirs) +
           ", the budget is " + std::to_string(budget) + ". Run more often than after the project's pass: " +
           more + " (the patterns that start or end with them are missing)";
  }
  return "unknown case " + which;
}

}  // namespace

int main(int argc, char** argv) {
  return lab::harness_main(argc, argv, 1, [](const lab::Args& a) { return check(a.which, a.seed, a.data[0]); });
}
