// The checker's side of lab stack_ops, compiled with the student's ops.cpp against the
// project's lang/ and vm/ libraries and run in a child process (a crash here is a failed
// check, not a crash of `descent lab`). `harness observe|check CASE SEED PROGRAMS_DIR`:
// observe runs the student's execute_op and records each call on fd 3; check replays those
// records and prints one line, "PASS" or "FAIL: why" (labs/cpp_common/observe.h).
//   compares       each comparison opcode and NOT, on ints, bools and ordinary floats (fixed
//                  operands, and int operands drawn from the seed)
//   nan            the float comparisons with nan, infinities and -0.0
//   jumps          each jump, alone in a chunk made by hand: where it lands, what it leaves
//   runs_programs  the lab's programs and 200 random programs from the run's seed
//                  (tests/diff's generator),
//                  compiled by the real stack compiler and run on this file's MiniVM, which
//                  calls execute_op for the lab's opcodes, print what the AST walker prints
//
// What an opcode must do comes from the project itself: a comparison's result from
// lang/value.h's apply_binary (the rule every engine shares), a jump's from the table in
// vm/stack_chunk.h, written out once below in reference_op.
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>

// The lab's and the random programs, compiled and run on the AST walker: shared with the
// other C++ labs.
#include "labs/cpp_common/differential.h"
#include "labs/cpp_common/observe.h"
#include "ops_lab.h"
#include "vm/stack_compiler.h"

using namespace descent;
using stack::Chunk;
using stack::Op;

namespace {

// ---- the lab's opcodes and what each must do ----

bool in_lab(Op op) {
  switch (op) {
    case Op::EQ_INT: case Op::NE_INT: case Op::LT_INT: case Op::LE_INT: case Op::GT_INT:
    case Op::GE_INT: case Op::EQ_FLOAT: case Op::NE_FLOAT: case Op::LT_FLOAT:
    case Op::LE_FLOAT: case Op::GT_FLOAT: case Op::GE_FLOAT: case Op::EQ_BOOL:
    case Op::NE_BOOL: case Op::NOT: case Op::JUMP: case Op::JUMP_IF_FALSE:
    case Op::JUMP_IF_TRUE: case Op::JUMP_IF_FALSE_OR_POP: case Op::JUMP_IF_TRUE_OR_POP:
    case Op::LOOP:
      return true;
    default: return false;
  }
}

// A comparison opcode as the operator and operand type apply_binary takes.
std::optional<std::pair<BinaryOp, Type>> comparison(Op op) {
  switch (op) {
    case Op::EQ_INT: return {{BinaryOp::Eq, Type::Int}};
    case Op::NE_INT: return {{BinaryOp::Ne, Type::Int}};
    case Op::LT_INT: return {{BinaryOp::Lt, Type::Int}};
    case Op::LE_INT: return {{BinaryOp::Le, Type::Int}};
    case Op::GT_INT: return {{BinaryOp::Gt, Type::Int}};
    case Op::GE_INT: return {{BinaryOp::Ge, Type::Int}};
    case Op::EQ_FLOAT: return {{BinaryOp::Eq, Type::Float}};
    case Op::NE_FLOAT: return {{BinaryOp::Ne, Type::Float}};
    case Op::LT_FLOAT: return {{BinaryOp::Lt, Type::Float}};
    case Op::LE_FLOAT: return {{BinaryOp::Le, Type::Float}};
    case Op::GT_FLOAT: return {{BinaryOp::Gt, Type::Float}};
    case Op::GE_FLOAT: return {{BinaryOp::Ge, Type::Float}};
    case Op::EQ_BOOL: return {{BinaryOp::Eq, Type::Bool}};
    case Op::NE_BOOL: return {{BinaryOp::Ne, Type::Bool}};
    default: return std::nullopt;
  }
}

// What the instruction at pc must do to the stack; returns the next pc.
size_t reference_op(Op op, const Chunk& chunk, size_t pc, std::vector<Value>& stack) {
  size_t next = pc + stack::instruction_length(op);
  if (auto cmp = comparison(op)) {
    Value b = stack.back();
    stack.pop_back();
    Value a = stack.back(), out;
    apply_binary(cmp->first, cmp->second, a, b, &out);
    stack.back() = out;
    return next;
  }
  if (op == Op::NOT) {
    stack.back() = Value::of_bool(!stack.back().b);
    return next;
  }
  size_t target = chunk.jump_target(pc, 0);
  bool top = op != Op::JUMP && op != Op::LOOP && stack.back().b;
  switch (op) {
    case Op::JUMP: case Op::LOOP: return target;
    case Op::JUMP_IF_FALSE: stack.pop_back(); return top ? next : target;
    case Op::JUMP_IF_TRUE: stack.pop_back(); return top ? target : next;
    case Op::JUMP_IF_FALSE_OR_POP:
      if (!top) return target;
      stack.pop_back();
      return next;
    case Op::JUMP_IF_TRUE_OR_POP:
      if (top) return target;
      stack.pop_back();
      return next;
    default: return next;
  }
}

// The student's execute_op, through the trust boundary: the result and the whole stack after
// it are the record.
size_t student_op(Op op, const Chunk& chunk, size_t pc, std::vector<Value>& stack) {
  return lab::observed(
      "execute_op",
      [&](lab::Record& r) {
        size_t n = execute_op(op, chunk, pc, stack);
        r.u64(n).u64(stack.size());
        for (Value v : stack) r.i64(v.i);
      },
      [&](lab::Reader& in) {
        size_t n = in.u64();
        stack.resize(in.count());
        for (Value& v : stack) v.i = in.i64();
        return n;
      });
}

// ---- saying what went wrong ----

Type operand_type(Op op) {
  if (auto cmp = comparison(op)) return cmp->second;
  return Type::Bool;  // NOT and the conditional jumps test a bool
}

std::string show(Value v, Type t) {
  return t == Type::Bool ? (v.b ? "true" : "false") : format_value(v, t);
}

std::string show_stack(const std::vector<Value>& s, size_t from, Type t) {
  std::string out = "[";
  for (size_t i = from; i < s.size(); ++i) out += (i > from ? ", " : "") + show(s[i], t);
  return out + "]";
}

// The instruction and its operands, as a student reads it: "LT_FLOAT with a = nan, b = 1.0"
// or "JUMP_IF_FALSE (j = 6) at offset 10 with false on top".
std::string describe(Op op, const Chunk& chunk, size_t pc, const std::vector<Value>& before) {
  std::string name = stack::op_name(op);
  Type t = operand_type(op);
  if (comparison(op))
    return name + " with a = " + show(before[before.size() - 2], t) + ", b = " +
           show(before.back(), t) + " (b on top)";
  if (op == Op::NOT) return "NOT of " + show(before.back(), t);
  std::string s = name + " (j = " + std::to_string(static_cast<int32_t>(chunk.operand(pc, 0))) +
                  ") at offset " + std::to_string(pc);
  if (op != Op::JUMP && op != Op::LOOP) s += " with " + show(before.back(), t) + " on top";
  return s;
}

// How many values the instruction reads from the top of the stack.
size_t operands(Op op) {
  if (comparison(op)) return 2;
  return op == Op::JUMP || op == Op::LOOP ? 0 : 1;
}

// Runs execute_op and reference_op on the same instruction; "" when they agree, otherwise
// what the student's did and what it should have done. From `base` up the stack holds bools
// (the operands of NOT and of the jumps, the result of a comparison); what lies below the
// operands must be left alone.
std::string compare_one(Op op, const Chunk& chunk, size_t pc, std::vector<Value>& stack,
                        size_t* next) {
  std::vector<Value> want = stack;
  size_t want_pc = reference_op(op, chunk, pc, want);
  std::vector<Value> before = stack;
  *next = student_op(op, chunk, pc, stack);
  std::string what = describe(op, chunk, pc, before);
  size_t base = before.size() - operands(op);
  if (stack.size() != want.size())
    return what + " left the stack " + std::to_string(stack.size()) + " values high; it should be " +
           std::to_string(want.size()) + " (it pops " + std::to_string(operands(op)) +
           " and pushes " + std::to_string(want.size() - base) + ")";
  for (size_t i = 0; i < base; ++i)
    if (stack[i].i != before[i].i) return what + " changed a value below its operands";
  for (size_t i = base; i < want.size(); ++i)
    if (stack[i].b != want[i].b)
      return what + " left " + show_stack(stack, base, Type::Bool) + " on top; it should be " +
             show_stack(want, base, Type::Bool);
  if (*next != want_pc) {
    size_t len = stack::instruction_length(op);
    std::string s = what + " went to offset " + std::to_string(*next) + "; it should go to " +
                    std::to_string(want_pc);
    if (want_pc == pc + len)
      s += ", the instruction right after it (" + std::to_string(pc) + " + " +
           std::to_string(len) + " bytes)";
    else
      s += " (j counts from the end of the instruction: " + std::to_string(pc) + " + " +
           std::to_string(len) + " bytes + j)";
    return s;
  }
  return "";
}

// A chunk of `size` bytes that holds `op` with jump offset j at offset pc (the bytes around
// it are never run: each check calls execute_op on this one instruction).
Chunk one_instruction(Op op, size_t pc, int32_t j = 0, size_t size = 40) {
  Chunk c;
  c.code.assign(size, static_cast<uint8_t>(Op::HALT));
  c.code[pc] = static_cast<uint8_t>(op);
  if (stack::instruction_length(op) > 1) std::memcpy(&c.code[pc + 1], &j, 4);
  c.locs.assign(size, SourceLoc{0, 1, 1});
  return c;
}

// Each opcode on each pair of operands, alone; a value 7 sits under the operands, which
// the instruction must leave alone.
std::string check_comparisons(const std::vector<Op>& ops, const std::vector<std::pair<Value, Value>>& pairs) {
  for (Op op : ops) {
    Chunk c = one_instruction(op, 0);
    for (const auto& [a, b] : pairs) {
      std::vector<Value> s = {Value::of_int(7), a};
      if (op != Op::NOT) s.push_back(b);
      size_t next;
      std::string wrong = compare_one(op, c, 0, s, &next);
      if (!wrong.empty()) return wrong;
    }
  }
  return "";
}

// ---- MiniVM: the rest of the stack VM, as plainly as it can be written ----

constexpr uint64_t kMaxSteps = 20'000'000;

struct Frame {
  const Chunk* chunk;
  size_t pc = 0;
  std::vector<Value> locals;
  std::vector<Value> stack;  // the operand stack execute_op gets
};

// Stops the run: the student's instruction broke the stack (what follows would run on
// garbage), or the program ran too long.
struct Stop {
  std::string why;
};

class MiniVM {
 public:
  explicit MiniVM(const Module& m) : m_(m), globals_(m.globals.size()), assigned_(m.globals.size()) {
    for (const auto& f : m.functions)
      functions_.push_back(f.decl ? stack::compile_function(*f.decl, m) : Chunk{});
  }

  // What the program printed, then "error at line N: message" as the walker says it.
  std::string run(const Chunk& script) {
    try {
      execute(script);
    } catch (const Stop& s) {
      stopped_ = s.why;
    }
    return out_;
  }
  const std::string& first_wrong() const { return first_wrong_; }  // "" if none
  const std::string& stopped() const { return stopped_; }

 private:
  void error(const Frame& f, size_t at, const std::string& message) {
    out_ += "error at line " + std::to_string(f.chunk->locs[at].line) + ": " + message;
  }

  void execute(const Chunk& script) {
    std::vector<Frame> frames;
    frames.push_back(Frame{&script, 0, std::vector<Value>(script.num_locals()), {}});
    for (uint64_t steps = 0;; ++steps) {
      if (steps > kMaxSteps)
        throw Stop{"it ran more than 20,000,000 instructions: a jump that lands in the wrong place can loop forever"};
      Frame& f = frames.back();
      const Chunk& c = *f.chunk;
      size_t at = f.pc;
      Op op = c.op_at(at);
      size_t next = at + stack::instruction_length(op);
      auto& s = f.stack;
      auto pop = [&s] {
        Value v = s.back();
        s.pop_back();
        return v;
      };
      if (in_lab(op)) {  // the student's
        std::string wrong = compare_one(op, c, at, s, &next);
        if (!wrong.empty() && first_wrong_.empty())
          first_wrong_ = "line " + std::to_string(c.locs[at].line) + " (" + c.name + "): " + wrong;
        if (next >= c.code.size() || !starts(c).at(next))
          throw Stop{std::string(stack::op_name(op)) + " at offset " + std::to_string(at) +
                     " went to offset " + std::to_string(next) + ", which is not the start of an instruction"};
        if (!wrong.empty() && wrong.find(" values high;") != std::string::npos)
          throw Stop{"the stack's height went wrong, so nothing after it could run"};
        f.pc = next;
        continue;
      }
      uint32_t a0 = stack::instruction_length(op) > 1 ? c.operand(at, 0) : 0;
      switch (op) {
        case Op::CONST: s.push_back(c.constants[a0]); break;
        case Op::POP: pop(); break;
        case Op::LOAD_LOCAL: s.push_back(f.locals[a0]); break;
        case Op::STORE_LOCAL: f.locals[a0] = pop(); break;
        case Op::LOAD_GLOBAL_CHECKED:
          if (!assigned_[a0]) return error(f, at, "undefined variable '" + m_.globals[a0].name + "'");
          [[fallthrough]];
        case Op::LOAD_GLOBAL: s.push_back(globals_[a0]); break;
        case Op::STORE_GLOBAL: globals_[a0] = pop(), assigned_[a0] = 1; break;
        case Op::ADD_INT: case Op::SUB_INT: case Op::MUL_INT: case Op::DIV_INT: case Op::MOD_INT:
        case Op::ADD_FLOAT: case Op::SUB_FLOAT: case Op::MUL_FLOAT: case Op::DIV_FLOAT:
        case Op::MOD_FLOAT: {
          static const BinaryOp kOps[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul,
                                          BinaryOp::Div, BinaryOp::Mod};
          bool fl = op >= Op::ADD_FLOAT;
          int k = static_cast<int>(op) - static_cast<int>(fl ? Op::ADD_FLOAT : Op::ADD_INT);
          Value b = pop(), r;
          if (!apply_binary(kOps[k], fl ? Type::Float : Type::Int, s.back(), b, &r))
            return error(f, at, "division by zero");
          s.back() = r;
          break;
        }
        case Op::NEG_INT: s.back().i = wrap_neg(s.back().i); break;
        case Op::NEG_FLOAT: s.back().f = -s.back().f; break;
        case Op::INT_TO_FLOAT: s.back() = Value::of_float(static_cast<double>(s.back().i)); break;
        case Op::FLOAT_TO_INT: {
          int64_t i;
          if (!float_to_int(s.back().f, &i)) return error(f, at, "invalid conversion");
          s.back() = Value::of_int(i);
          break;
        }
        case Op::MATH: s.back().f = call_math(static_cast<Builtin>(a0), s.back().f); break;
        case Op::ABS_INT: if (s.back().i < 0) s.back().i = wrap_neg(s.back().i); break;
        case Op::MIN_INT: { Value b = pop(); s.back() = int_min(s.back(), b); break; }
        case Op::MAX_INT: { Value b = pop(); s.back() = int_max(s.back(), b); break; }
        case Op::MIN_FLOAT: { Value b = pop(); s.back() = float_min(s.back(), b); break; }
        case Op::MAX_FLOAT: { Value b = pop(); s.back() = float_max(s.back(), b); break; }
        case Op::PRINT: {
          const auto& items = c.prints[a0];
          size_t n = 0;
          for (const auto& item : items) n += item.type != Type::Str;
          size_t v = s.size() - n;
          std::string line;
          for (size_t i = 0; i < items.size(); ++i) {
            if (i) line += " ";
            line += items[i].type == Type::Str ? items[i].text : format_value(s[v++], items[i].type);
          }
          s.resize(s.size() - n);
          out_ += line + "\n";
          break;
        }
        case Op::SAFEPOINT: break;  // no tensors here
        case Op::FOR_PREP: {
          Value hi = pop(), lo = pop();
          f.locals[a0] = lo, f.locals[a0 + 1] = hi;
          if (lo.i < hi.i) s.push_back(lo);
          else next = c.jump_target(at, 1);
          break;
        }
        case Op::FOR_LOOP:
          if (++f.locals[a0].i < f.locals[a0 + 1].i) s.push_back(f.locals[a0]), next = c.jump_target(at, 1);
          break;
        case Op::PRECALL:
          if (frames.size() > kMaxCallDepth) return error(f, at, "stack overflow");
          break;
        case Op::CALL: {
          if (frames.size() > kMaxCallDepth) return error(f, at, "stack overflow");
          uint32_t n = c.operand(at, 1);
          const Chunk& callee = functions_[a0];
          Frame g{&callee, 0, std::vector<Value>(callee.num_locals()), {}};
          std::copy(s.end() - n, s.end(), g.locals.begin());
          s.resize(s.size() - n);
          f.pc = next;
          frames.push_back(std::move(g));  // f is not used after this
          continue;
        }
        case Op::RETURN: case Op::RETURN_VOID: {
          std::optional<Value> v;
          if (op == Op::RETURN) v = pop();
          frames.pop_back();
          if (v) frames.back().stack.push_back(*v);
          continue;  // the caller's pc was saved past its CALL
        }
        case Op::HALT: return;
        default:
          throw Stop{std::string("the checker's VM does not run ") + stack::op_name(op) +
                     " (a program outside the lab's scope)"};
      }
      f.pc = next;
    }
  }

  // Which offsets of a chunk start an instruction (a jump must land on one).
  const std::vector<bool>& starts(const Chunk& c) {
    auto& v = starts_[&c];
    if (v.empty()) {
      v.assign(c.code.size() + 1, false);
      for (size_t at = 0; at < c.code.size(); at += stack::instruction_length(c.op_at(at))) v[at] = true;
    }
    return v;
  }

  const Module& m_;
  std::vector<Chunk> functions_;
  std::vector<Value> globals_;
  std::vector<uint8_t> assigned_;
  std::map<const Chunk*, std::vector<bool>> starts_;
  std::string out_, first_wrong_, stopped_;
};

// ---- one program, on the walker and on MiniVM ----

struct Outcome {
  std::string walker, vm;  // what each printed ("compile error: ..." if it does not compile)
  std::string first_wrong, stopped;
};

Outcome run_both(const lab::Source& src) {
  Outcome r;
  auto c = lab::compile(src);
  if (!c->ok) {
    r.walker = r.vm = "compile error: " + c->error;
    return r;
  }
  r.walker = lab::walker_output(*c);

  // The real compiler's plain code: no superinstruction fusion, so the lab's opcodes appear
  // as themselves (fused, LT_INT + JUMP_IF_FALSE would be one JUMP_IF_GE_INT).
  Chunk script = stack::compile_script(*c->program, c->module, false);
  MiniVM vm(c->module);
  r.vm = vm.run(script);
  r.first_wrong = vm.first_wrong();
  r.stopped = vm.stopped();
  return r;
}

Value i(int64_t v) { return Value::of_int(v); }
Value f(double v) { return Value::of_float(v); }
Value b(bool v) { return Value::of_bool(v); }



std::string check(const std::string& which, uint64_t seed, const std::filesystem::path& dir) {
  const int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");

  if (which == "compares") {
    // Fixed operands, then ones drawn from the run's seed.
    std::mt19937_64 rng(seed);
    std::vector<std::pair<Value, Value>> ints = {{i(3), i(5)}, {i(5), i(3)}, {i(4), i(4)}, {i(-1), i(1)},
                                                 {i(kMin), i(kMax)}, {i(kMax), i(kMin)}};
    for (int k = 0; k < 8; ++k) {
      int64_t a = int64_t(rng() % 2001) - 1000;
      ints.push_back({i(a), i(k % 3 == 0 ? a : int64_t(rng() % 2001) - 1000)});
    }
    std::string wrong = check_comparisons({Op::EQ_INT, Op::NE_INT, Op::LT_INT, Op::LE_INT, Op::GT_INT, Op::GE_INT}, ints);
    if (wrong.empty())
      wrong = check_comparisons(
          {Op::EQ_FLOAT, Op::NE_FLOAT, Op::LT_FLOAT, Op::LE_FLOAT, Op::GT_FLOAT, Op::GE_FLOAT},
          {{f(1.5), f(2.5)}, {f(2.5), f(1.5)}, {f(0.1), f(0.1)}, {f(-3.0), f(2.0)}});
    if (wrong.empty())
      wrong = check_comparisons({Op::EQ_BOOL, Op::NE_BOOL, Op::NOT},
                                {{b(false), b(false)}, {b(false), b(true)}, {b(true), b(false)}, {b(true), b(true)}});
    return wrong;
  }

  if (which == "nan") {
    std::string wrong = check_comparisons(
        {Op::EQ_FLOAT, Op::NE_FLOAT, Op::LT_FLOAT, Op::LE_FLOAT, Op::GT_FLOAT, Op::GE_FLOAT},
        {{f(nan), f(1.0)}, {f(1.0), f(nan)}, {f(nan), f(nan)}, {f(-0.0), f(0.0)},
         {f(-inf), f(inf)}, {f(inf), f(inf)}, {f(inf), f(nan)}});
    if (!wrong.empty()) return wrong + " (every comparison with nan is false, except !=; -0.0 == 0.0)";
    return "";
  }

  if (which == "jumps") {
    // Each jump at offset 10 of a 40-byte chunk, with offsets forwards, backwards and 0,
    // and each conditional one with false and with true on top (a 7 under it).
    for (Op op : {Op::JUMP, Op::LOOP, Op::JUMP_IF_FALSE, Op::JUMP_IF_TRUE,
                  Op::JUMP_IF_FALSE_OR_POP, Op::JUMP_IF_TRUE_OR_POP})
      for (int32_t j : {6, -10, -15, 0, 20})
        for (bool top : {false, true}) {
          Chunk c = one_instruction(op, 10, j);
          std::vector<Value> s = {i(7), b(top)};
          size_t next;
          std::string wrong = compare_one(op, c, 10, s, &next);
          if (!wrong.empty()) return wrong;
        }
    return "";
  }

  if (which == "runs_programs") {
    // The lab's programs, then 200 random ones: no planted errors, no 10,000-deep recursion.
    for (const auto& src : lab::corpus(dir, 200, lab::random_options(false), seed)) {
      Outcome r = run_both(src);
      if (r.walker == r.vm && r.stopped.empty()) continue;
      std::string why = lab::described(src) + ": the AST walker prints \"" + lab::shown(r.walker, 200) +
                        "\", this VM \"" + lab::shown(r.vm, 200) + "\"";
      if (!r.stopped.empty()) why += ", then it stopped: " + r.stopped;
      if (!r.first_wrong.empty()) why += ". The first instruction that went wrong: " + r.first_wrong;
      if (src.random) why += ". The program:\n" + src.text;
      return why;
    }
    return "";
  }
  return "unknown case " + which;
}

}  // namespace

int main(int argc, char** argv) {
  return lab::harness_main(argc, argv, 1, [](const lab::Args& a) { return check(a.which, a.seed, a.data[0]); });
}
