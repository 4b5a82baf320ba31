// The checker's side of lab stack_if_while (docs/labs.md "How a C++ lab is graded"). It is
// built twice against the project's lang/ and vm/ libraries: linked with the student's
// control.cpp it runs as `harness observe CASE SEED PROGRAMS_DIR`, calls the student's code
// and writes what each call did as records on fd 3; linked with the lab's starter file, never
// the student's, it runs as `harness check CASE SEED PROGRAMS_DIR` with those records on
// stdin, replays them instead of calling anything, and prints the verdict: "PASS",
// "FAIL: why", or "END ..." when the records stop short (labs/cpp_common/observe.h). SEED is
// drawn by the runner for each run.
//   ifs            the lab's if_*.ds programs print on the stack VM what the AST walker prints
//   whiles         the same for the while_*.ds programs (break and continue included)
//   random         200 random programs from the run's seed (tests/diff's generator) print the same
//   jumps_patched  in the lab's programs, every jump you emit or get from end_loop is patched,
//                  and none of yours lands on the very next instruction (a jump that does nothing)
//   back_edge      in the lab's programs, each while has exactly one LOOP, back to the first
//                  instruction of its condition; an if has none
//
// The programs run on the real stack VM (make_stack_vm), with superinstructions (as
// `descent run` runs them) and without (the compiler's plain code): both must be right.
//
// The records. The student's compile_if and compile_while change the compiler only through
// the Emitter they are given, and the compiler's state (the chunk's code, line table,
// constants, print and tensor tables, hidden locals, stack depth, open loops) is private to
// it: the checker cannot be handed that state, only make it again. So a call's record is the
// list of Emitter calls it made, with their arguments (an expression or block named by its
// number within the statement, a jump's opcode and source location, an offset to patch), and
// the checker makes the same calls on its own compiler, through the same Recorder. Only the
// outermost student call is observed: the `if` that e.block() compiles inside another runs
// the student's code again, and its Emitter calls go into the outer record between markers;
// the checker, replaying the outer record's e.block(), meets that nested statement in its own
// compiler and replays its part there. In observe mode the Emitter calls are made the same
// way, from the events as recorded, so both builds go on from the same compiler state.
#include <cstdio>
#include <limits>
#include <optional>
#include <set>
#include <string>

#include "control_lab.h"
// The lab's and the random programs, compiled and run on any engine: shared with the other
// C++ labs.
#include "labs/cpp_common/differential.h"
#include "labs/cpp_common/observe.h"
#include "vm/stack_disasm.h"
#include "vm/stack_vm.h"

using namespace descent;
using stack::Emitter;
using stack::Op;

namespace {

// ---- watching the student's emitting ----

// What the recording Emitters saw, over all statements of one compilation: the first
// problem of each kind, as a sentence.
struct Findings {
  std::string unpatched, next_instruction, back_edge;
};

// An Emitter that passes every call on to the compiler's and notes what it needs for the
// structural checks. One per if/while statement (a nested one gets its own).
class Recorder final : public Emitter {
 public:
  Recorder(const Stmt& s, Emitter& real, Findings& f) : s_(s), real_(real), f_(f), start_(real.here()) {}

  size_t here() const override { return real_.here(); }
  void expr(const Expr& e) override { real_.expr(e); }
  void block(const Block& b) override { real_.block(b); }
  size_t emit_jump(Op op, SourceLoc loc) override {
    size_t at = real_.emit_jump(op, loc);
    if (at == SIZE_MAX) return at;  // not a jump: the compiler emitted nothing
    if (op == Op::LOOP) ++loops_;
    jumps_.push_back({at, std::string(stack::op_name(op)) + " at offset " + std::to_string(at), true});
    return at;
  }
  void patch_jump(size_t at) override {
    real_.patch_jump(at);
    for (auto& j : jumps_)
      if (j.at == at) {
        ++j.patches;
        if (j.own && here() == at + stack::instruction_length(Op::JUMP) && f_.next_instruction.empty())
          f_.next_instruction = where() + ": the " + j.what +
                                " lands on the very next instruction, so it does nothing (an if " +
                                "without else needs no jump over an else)";
      }
  }
  void emit_loop(size_t target, SourceLoc loc) override {
    ++loops_;
    loop_target_ = target;
    real_.emit_loop(target, loc);
  }
  void begin_loop() override { real_.begin_loop(); }
  stack::LoopJumps end_loop() override {
    stack::LoopJumps j = real_.end_loop();
    for (size_t at : j.breaks) jumps_.push_back({at, "break (JUMP at offset " + std::to_string(at) + ")", false});
    for (size_t at : j.continues)
      jumps_.push_back({at, "continue (JUMP at offset " + std::to_string(at) + ")", false});
    return j;
  }

  // After the statement's code: what it should look like.
  void finish() {
    for (const auto& j : jumps_)
      if (j.patches != 1 && f_.unpatched.empty())
        f_.unpatched = where() + ": the " + j.what +
                       (j.patches == 0 ? " was never patched (its offset is still the placeholder 0, "
                                         "so it goes to the next instruction)"
                                       : " was patched " + std::to_string(j.patches) + " times");
    if (!f_.back_edge.empty()) return;
    if (s_.kind == StmtKind::If && loops_ > 0)
      f_.back_edge = where() + ": an if has no back-edge, yet it emitted a LOOP";
    if (s_.kind != StmtKind::While) return;
    if (loops_ != 1)
      f_.back_edge = where() + ": the while emitted " + std::to_string(loops_) +
                     " LOOPs; it needs exactly one (continue jumps forward to it)";
    else if (loop_target_ != start_)
      f_.back_edge = where() + ": the LOOP goes back to offset " + std::to_string(loop_target_) +
                     ", but the while's code starts at offset " + std::to_string(start_) +
                     " (with the condition, which must be tested again before every round)";
  }

 private:
  struct Jump {
    size_t at;
    std::string what;
    bool own;  // emitted by the student (not a break/continue of the compiler's)
    int patches = 0;
  };
  std::string where() const {
    return std::string(s_.kind == StmtKind::If ? "the if" : "the while") + " at line " +
           std::to_string(s_.loc.line);
  }

  const Stmt& s_;
  Emitter& real_;
  Findings& f_;
  size_t start_;  // here() when the statement began
  std::vector<Jump> jumps_;
  int loops_ = 0;
  size_t loop_target_ = 0;
};

// ---- the trust boundary: the student's calls as records ----

// "the if at line 4": a statement in a message.
std::string statement_name(const Stmt& s) {
  return std::string(s.kind == StmtKind::If ? "the if" : "the while") + " at line " + std::to_string(s.loc.line);
}

// The parts of a statement an Emitter call may name: every Block and Expr in it, numbered in
// one fixed order (the statement's body, its else-body, its condition's tree, then the same
// for each statement of the body and of the else-body), so that a record names a part by its
// number and the checker finds the same part in its own tree. The usual ones come first:
// body 0, else-body 1, condition 2.
struct Part {
  const Expr* expr = nullptr;
  const Block* block = nullptr;
};

// Calls f(number, part) for each part in that order until f returns true. Iterative: a
// condition can be a deep tree.
template <class F>
void each_part(const Stmt& s, F&& f) {
  struct Item {
    const Stmt* stmt;
    Part part;
  };
  std::vector<Item> todo{{&s, {}}};
  uint64_t n = 0;
  while (!todo.empty()) {
    Item it = todo.back();
    todo.pop_back();
    if (it.stmt) {
      const Stmt& t = *it.stmt;
      for (auto k = t.else_body.rbegin(); k != t.else_body.rend(); ++k)
        if (*k) todo.push_back({k->get(), {}});
      for (auto k = t.body.rbegin(); k != t.body.rend(); ++k)
        if (*k) todo.push_back({k->get(), {}});
      if (t.expr2) todo.push_back({nullptr, {t.expr2.get(), nullptr}});
      if (t.expr) todo.push_back({nullptr, {t.expr.get(), nullptr}});
      todo.push_back({nullptr, {nullptr, &t.else_body}});
      todo.push_back({nullptr, {nullptr, &t.body}});
      continue;
    }
    if (f(n++, it.part)) return;
    if (it.part.expr)
      for (auto k = it.part.expr->kids.rbegin(); k != it.part.expr->kids.rend(); ++k)
        if (*k) todo.push_back({nullptr, {k->get(), nullptr}});
  }
}

// The number of the part at expr or block in s; none when it is not in s.
std::optional<uint64_t> part_number(const Stmt& s, const Expr* expr, const Block* block) {
  std::optional<uint64_t> found;
  each_part(s, [&](uint64_t n, const Part& p) {
    if ((expr && p.expr == expr) || (block && p.block == block)) found = n;
    return found.has_value();
  });
  return found;
}

// Part number n of s (both fields null when s has fewer parts).
Part part_at(const Stmt& s, uint64_t n) {
  Part found;
  each_part(s, [&](uint64_t k, const Part& p) {
    if (k == n) found = p;
    return k >= n;
  });
  return found;
}

// One Emitter call of the student's code (here() aside: it changes nothing), or a marker
// around the calls of a nested statement's student code. The record: the tag, then
//   kExpr n, kBlock n         the statement's part number n
//   kEmitJump op LOC          the opcode's number; LOC is 0 for the statement's own location
//   kEmitLoop target LOC      (s.loc), else 1 OFFSET LINE COL IN_FILE (IN_FILE 1: the
//                             program's file, 0: none)
//   kPatchJump at
// and nothing more for the others. kEmptyBlock is an empty block that is no part of the
// statement (e.block({})); kForeignExpr and kForeignBlock are an expression or a block from
// elsewhere, which the checker cannot name in its own tree: the check fails on them.
enum Tag : uint64_t {
  kExpr = 1, kBlock, kEmptyBlock, kEmitJump, kPatchJump, kEmitLoop, kBeginLoop, kEndLoop,
  kNestedBegin, kNestedEnd, kForeignExpr, kForeignBlock, kTagEnd
};

struct Event {
  uint64_t tag = 0;
  uint64_t a = 0;         // the part number, opcode, offset to patch or LOOP target
  bool own_loc = true;    // emit_jump / emit_loop: the location is the statement's (s.loc)
  SourceLoc loc;          // else this one (file left null: see in_file)
  bool in_file = false;   // loc's file is the program's (the statement's), not none
};

Event event(uint64_t tag, uint64_t a = 0) {
  Event ev;
  ev.tag = tag;
  ev.a = a;
  return ev;
}

// A call the checker cannot make again from its record: the check fails with `why`, in both
// builds (the student's stops on it after the call, the checker's when it comes to it).
struct Refused {
  std::string why;
};

// The outermost student call in progress, and what its record holds.
struct Call {
  std::string name;           // "compile_if" or "compile_while": the record's call
  std::vector<Event> events;  // observe: as they happen; check: read from the record
  size_t next = 0;            // check: the next event to replay
  size_t record = 0;          // check: the record's index, for a message about it
  // The offsets the code may patch: the jumps its emit_jump, emit_loop and end_loop calls
  // gave, all in the chunk being compiled. Another offset could lie outside the code or in
  // the middle of an instruction, where the compiler's patch would write out of bounds.
  std::set<size_t> jumps;
  std::string refused;        // observe: the first call the checker will refuse
};

Call* g_call = nullptr;  // null: no student call in progress

bool observing() { return lab::Channel::get().mode == lab::Mode::Observe; }

// A record that cannot be what the student's code did (only a forged one, or a broken harness).
[[noreturn]] void bad_record(const Call& c, const std::string& what) {
  throw lab::RecordsEnd{c.name, c.record, "record " + std::to_string(c.record + 1) + " (" + c.name + ") " + what};
}

void refuse(Call& c, const std::string& why) {
  if (!observing()) throw Refused{why};
  if (c.refused.empty()) c.refused = why;
}

bool same_loc(const SourceLoc& a, const SourceLoc& b) {
  return a.offset == b.offset && a.line == b.line && a.col == b.col && a.file == b.file;
}

Event with_loc(Event ev, const SourceLoc& loc, const Stmt& s) {
  ev.own_loc = same_loc(loc, s.loc);
  if (!ev.own_loc) {
    ev.loc = SourceLoc{loc.offset, loc.line, loc.col, nullptr};
    ev.in_file = loc.file != nullptr;
  }
  return ev;
}

SourceLoc loc_of(const Event& ev, const Stmt& s) {
  if (ev.own_loc) return s.loc;
  SourceLoc l = ev.loc;
  l.file = ev.in_file ? s.loc.file : nullptr;
  return l;
}

void write_event(lab::Record& r, const Event& ev) {
  r.u64(ev.tag);
  if (ev.tag == kExpr || ev.tag == kBlock || ev.tag == kPatchJump) r.u64(ev.a);
  if (ev.tag != kEmitJump && ev.tag != kEmitLoop) return;
  r.u64(ev.a);
  if (ev.own_loc) {
    r.u64(0);
    return;
  }
  r.u64(1).u64(ev.loc.offset).u64(ev.loc.line).u64(ev.loc.col).u64(ev.in_file ? 1 : 0);
}

Event read_event(lab::Reader& in, const Call& c) {
  auto u32 = [&] {
    uint64_t v = in.u64();
    if (v > std::numeric_limits<uint32_t>::max()) bad_record(c, "has a source location out of range");
    return static_cast<uint32_t>(v);
  };
  Event ev;
  ev.tag = in.u64();
  if (ev.tag == 0 || ev.tag >= kTagEnd) bad_record(c, "has an Emitter call of unknown kind " + std::to_string(ev.tag));
  if (ev.tag == kExpr || ev.tag == kBlock || ev.tag == kPatchJump) ev.a = in.u64();
  if (ev.tag != kEmitJump && ev.tag != kEmitLoop) return ev;
  ev.a = in.u64();
  uint64_t own = in.u64();
  if (own > 1) bad_record(c, "has a location that is neither 0 nor 1 OFFSET LINE COL IN_FILE");
  ev.own_loc = own == 0;
  if (ev.own_loc) return ev;
  ev.loc.offset = u32();
  ev.loc.line = u32();
  ev.loc.col = u32();
  uint64_t in_file = in.u64();
  if (in_file > 1) bad_record(c, "has a location whose IN_FILE is neither 0 nor 1");
  ev.in_file = in_file == 1;
  return ev;
}

// What an Emitter call gave back.
struct Result {
  size_t at = 0;          // emit_jump
  stack::LoopJumps jumps;  // end_loop
};

// Makes the call an event stands for on e (the Recorder over the compiler), for statement s:
// in observe mode as the student's code makes it, in check mode from the record.
Result make_call(const Event& ev, const Stmt& s, Emitter& e, Call& c) {
  Result r;
  switch (ev.tag) {
    case kExpr: {
      Part p = part_at(s, ev.a);
      if (!p.expr) bad_record(c, "names part " + std::to_string(ev.a) + " of " + statement_name(s) + " as an expression; it is not one");
      e.expr(*p.expr);
      break;
    }
    case kBlock: {
      Part p = part_at(s, ev.a);
      if (!p.block) bad_record(c, "names part " + std::to_string(ev.a) + " of " + statement_name(s) + " as a block; it is not one");
      e.block(*p.block);
      break;
    }
    case kEmptyBlock: {
      static const Block kNoStatements;
      e.block(kNoStatements);
      break;
    }
    case kForeignExpr:
      refuse(c, statement_name(s) + ": your code passed e.expr an expression that is not part of this statement " +
                    "(the Emitter compiles the statement's own condition and what its blocks hold)");
      break;
    case kForeignBlock:
      refuse(c, statement_name(s) + ": your code passed e.block a block that is not part of this statement " +
                    "(its body, its else-body, or a block inside them)");
      break;
    case kEmitJump:
      // Not an opcode at all: as for any opcode that is not a jump, nothing is emitted.
      if (ev.a >= static_cast<uint64_t>(stack::kOpCount)) {
        r.at = SIZE_MAX;
        break;
      }
      r.at = e.emit_jump(static_cast<Op>(ev.a), loc_of(ev, s));
      if (r.at != SIZE_MAX) c.jumps.insert(r.at);
      break;
    case kPatchJump:
      if (!c.jumps.count(ev.a)) {
        std::string at = ev.a == SIZE_MAX ? "SIZE_MAX" : std::to_string(ev.a);
        refuse(c, statement_name(s) + ": your code called e.patch_jump(" + at + "), but no jump it emitted or got " +
                      "from e.end_loop is at offset " + at +
                      (ev.a == SIZE_MAX ? " (e.emit_jump returns SIZE_MAX, and emits nothing, for an opcode that is not a jump)"
                                        : " (patch the offsets e.emit_jump returns, and those from e.end_loop)"));
        break;
      }
      e.patch_jump(static_cast<size_t>(ev.a));
      break;
    case kEmitLoop:
      c.jumps.insert(e.here());
      e.emit_loop(static_cast<size_t>(ev.a), loc_of(ev, s));
      break;
    case kBeginLoop: e.begin_loop(); break;
    case kEndLoop:
      r.jumps = e.end_loop();
      for (size_t at : r.jumps.breaks) c.jumps.insert(at);
      for (size_t at : r.jumps.continues) c.jumps.insert(at);
      break;
    default: bad_record(c, "has a nested statement's marker where " + statement_name(s) + "'s code makes a call");
  }
  return r;
}

// The Emitter the student's code gets in observe mode: each call becomes an event of the
// record, then is made from that event, exactly as the checker will make it.
class Tracing final : public Emitter {
 public:
  Tracing(const Stmt& s, Emitter& next, Call& call) : s_(s), next_(next), call_(call) {}

  size_t here() const override { return next_.here(); }
  void expr(const Expr& x) override {
    std::optional<uint64_t> n = part_number(s_, &x, nullptr);
    run(n ? event(kExpr, *n) : event(kForeignExpr));
  }
  void block(const Block& b) override {
    std::optional<uint64_t> n = part_number(s_, nullptr, &b);
    run(n ? event(kBlock, *n) : b.empty() ? event(kEmptyBlock) : event(kForeignBlock));
  }
  size_t emit_jump(Op op, SourceLoc loc) override {
    return run(with_loc(event(kEmitJump, static_cast<uint64_t>(op)), loc, s_)).at;
  }
  void patch_jump(size_t at) override { run(event(kPatchJump, at)); }
  void emit_loop(size_t target, SourceLoc loc) override { run(with_loc(event(kEmitLoop, target), loc, s_)); }
  void begin_loop() override { run(event(kBeginLoop)); }
  stack::LoopJumps end_loop() override { return run(event(kEndLoop)).jumps; }

 private:
  Result run(const Event& ev) {
    call_.events.push_back(ev);  // before the call: a nested statement's events come after it
    return make_call(ev, s_, next_, call_);
  }
  const Stmt& s_;
  Emitter& next_;
  Call& call_;
};

void call_student(const Stmt& s, Emitter& e) {
  if (s.kind == StmtKind::If) compile_if(s, e);
  else compile_while(s, e);
}

// The student's compile_if or compile_while for s, writing through e (the Recorder): the
// outermost call through lab::observed, a nested one (compiled by an e.block of the
// outermost's) as part of the outermost's record.
void student_code(const Stmt& s, Emitter& e) {
  if (g_call) {
    Call& c = *g_call;
    if (observing()) {
      c.events.push_back(event(kNestedBegin));
      Tracing t(s, e, c);
      call_student(s, t);
      c.events.push_back(event(kNestedEnd));
      return;
    }
    auto take = [&] {
      if (c.next >= c.events.size()) bad_record(c, "ends inside the code of " + statement_name(s) + ", nested in it");
      return c.events[c.next++];
    };
    if (take().tag != kNestedBegin)
      bad_record(c, "lacks the code of " + statement_name(s) + ", nested in it, where the compiler compiles it");
    for (Event ev = take(); ev.tag != kNestedEnd; ev = take()) {
      if (ev.tag == kNestedBegin)
        bad_record(c, "has a nested statement's code inside " + statement_name(s) + "'s where the compiler compiles none");
      make_call(ev, s, e, c);
    }
    return;
  }

  Call call;
  call.name = s.kind == StmtKind::If ? "compile_if" : "compile_while";
  struct InProgress {
    explicit InProgress(Call* c) { g_call = c; }
    ~InProgress() { g_call = nullptr; }
  } in_progress(&call);
  lab::observed(
      call.name,
      [&](lab::Record& r) {
        Tracing t(s, e, call);
        call_student(s, t);
        r.u64(call.events.size());
        for (const Event& ev : call.events) write_event(r, ev);
      },
      [&](lab::Reader& in) {
        if (observing()) {  // the calls were made from these events already
          if (!call.refused.empty()) throw Refused{call.refused};
          return;
        }
        call.record = lab::Channel::get().index() - 1;
        // Grown as the events parse: a forged count alone allocates nothing.
        for (size_t n = in.count(); call.events.size() < n;) call.events.push_back(read_event(in, call));
        while (call.next < call.events.size()) {
          Event ev = call.events[call.next++];
          if (ev.tag == kNestedBegin || ev.tag == kNestedEnd)
            bad_record(call, "has a nested statement's marker where " + statement_name(s) + "'s code makes a call");
          make_call(ev, s, e, call);
        }
      });
}

// The compiler's hook: the student's functions, each behind a Recorder, through the trust
// boundary.
stack::CompileHooks student_hooks(Findings& findings) {
  stack::CompileHooks h;
  h.control_flow = [&findings](const Stmt& s, Emitter& real) {
    Recorder r(s, real, findings);
    student_code(s, r);
    r.finish();
  };
  return h;
}

// ---- one program, on the walker and on the stack VM with the student's code ----

// The plain bytecode the student's code makes for the program (script and functions), as
// `descent dump --stage stack` lists it; what the recorders found goes to *findings.
std::string code_of(const lab::Compiled& c, Findings* findings) {
  Findings ignored;
  stack::CompileHooks hooks = student_hooks(findings ? *findings : ignored);
  return stack::disassemble(stack::compile_stack(*c.program, c.module, false, &hooks), c.module);
}

struct Outcome {
  std::string walker, plain, fused;  // what each printed, then "error at line N: ..."
  std::string code;  // a lab program's that fails: the plain bytecode of the student's code
};

// lab::run stops a run after 50,000,000 steps as "interrupted": a wrong jump can loop forever.
Outcome run_all(const lab::Source& src) {
  Outcome r;
  auto c = lab::compile(src);
  if (!c->ok) {
    r.walker = r.plain = r.fused = "compile error: " + c->error;
    return r;
  }
  Findings ignored;  // the structural checks compile without running (code_of)
  r.walker = lab::walker_output(*c);
  r.plain = lab::run(*make_stack_vm(false, student_hooks(ignored)), *c);
  r.fused = lab::run(*make_stack_vm(true, student_hooks(ignored)), *c);
  // Only a lab program's message shows the code: compiled (and recorded) only for one.
  if (!src.random && (r.plain != r.walker || r.fused != r.walker)) r.code = code_of(*c, nullptr);
  return r;
}

// ---- reporting ----

// The first `max` lines of a listing.
std::string first_lines(const std::string& s, int max) {
  size_t at = 0;
  for (int n = 0; n < max && at != std::string::npos; ++n) at = s.find('\n', at + 1);
  return at == std::string::npos ? s : s.substr(0, at + 1) + "...\n";
}

// A program whose compiling the checker refused (Refused).
std::string refused(const lab::Source& src, const std::string& why) {
  return lab::described(src) + ": " + why + (src.random ? ". The program:\n" + src.text : "");
}

// "" when every program prints the same on the walker and on the stack VM (both ways). A
// random program's message shows its text, a lab program's its bytecode.
std::string same_output(const std::vector<lab::Source>& programs) {
  for (const auto& src : programs) {
    Outcome r;
    try {
      r = run_all(src);
    } catch (const Refused& e) {
      return refused(src, e.why);
    }
    bool plain_ok = r.plain == r.walker, fused_ok = r.fused == r.walker;
    if (plain_ok && fused_ok) continue;
    std::string why = lab::described(src) + ": the AST walker prints \"" + lab::shown(r.walker, 200) +
                      "\", the stack VM with your code \"" + lab::shown(plain_ok ? r.fused : r.plain, 200) + "\"" +
                      (plain_ok ? " (with superinstructions)" : "");
    if (src.random) why += ". The program:\n" + src.text;
    else why += ". Its bytecode (`descent dump " + src.name + " --stage stack` shows the compiler's own):\n" + first_lines(r.code, 40);
    return why;
  }
  return "";
}

std::string check(const std::string& which, uint64_t seed, const std::filesystem::path& dir) {
  if (which == "ifs") return same_output(lab::lab_programs(dir, "if_"));
  if (which == "whiles") return same_output(lab::lab_programs(dir, "while_"));
  if (which == "random")
    // The generator's own options: planted runtime errors and 10,000-deep recursion included.
    return same_output(lab::random_programs(200, testing::GenOptions{}, lab::first_seed(seed)));
  if (which == "jumps_patched" || which == "back_edge") {
    for (const auto& src : lab::lab_programs(dir)) {
      auto c = lab::compile(src);
      if (!c->ok) return src.name + " does not compile: " + c->error;
      Findings f;
      try {
        code_of(*c, &f);
      } catch (const Refused& e) {
        return refused(src, e.why);
      }
      std::string found = which == "back_edge" ? f.back_edge
                          : !f.unpatched.empty() ? f.unpatched
                                                 : f.next_instruction;
      if (!found.empty()) return src.name + ", " + found;
    }
    return "";
  }
  return "unknown case " + which;
}

}  // namespace

int main(int argc, char** argv) {
  return lab::harness_main(argc, argv, 1, [](const lab::Args& a) { return check(a.which, a.seed, a.data[0]); });
}
