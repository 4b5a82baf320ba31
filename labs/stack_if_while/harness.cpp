// The checker's side of lab stack_if_while, compiled with the student's control.cpp against
// the project's lang/ and vm/ libraries and run in a child process (a crash here is a failed
// check, not a crash of `descent lab`). `harness CASE PROGRAMS_DIR` prints one line: "PASS"
// or "FAIL: why".
//   ifs            the lab's if_*.ds programs print on the stack VM what the AST walker prints
//   whiles         the same for the while_*.ds programs (break and continue included)
//   random         200 seeded random programs (tests/diff's generator) print the same
//   jumps_patched  in the lab's programs, every jump you emit or get from end_loop is patched,
//                  and none of yours lands on the very next instruction (a jump that does nothing)
//   back_edge      in the lab's programs, each while has exactly one LOOP, back to the first
//                  instruction of its condition; an if has none
//
// The programs run on the real stack VM (make_stack_vm), with superinstructions (as
// `descent run` runs them) and without (the compiler's plain code): both must be right.
#include <cstdio>
#include <string>

#include "control_lab.h"
// The lab's and the random programs, compiled and run on any engine: shared with the other
// C++ labs.
#include "labs/cpp_common/differential.h"
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

// The compiler's hook: the student's functions, each behind a Recorder.
stack::CompileHooks student_hooks(Findings& findings) {
  stack::CompileHooks h;
  h.control_flow = [&findings](const Stmt& s, Emitter& real) {
    Recorder r(s, real, findings);
    if (s.kind == StmtKind::If) compile_if(s, r);
    else compile_while(s, r);
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
  std::string code;  // the plain bytecode of the student's code, for a failure's message
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
  r.code = code_of(*c, nullptr);
  return r;
}

// ---- reporting ----

// The first `max` lines of a listing.
std::string first_lines(const std::string& s, int max) {
  size_t at = 0;
  for (int n = 0; n < max && at != std::string::npos; ++n) at = s.find('\n', at + 1);
  return at == std::string::npos ? s : s.substr(0, at + 1) + "...\n";
}

// "" when every program prints the same on the walker and on the stack VM (both ways). A
// random program's message shows its text, a lab program's its bytecode.
std::string same_output(const std::vector<lab::Source>& programs) {
  for (const auto& src : programs) {
    Outcome r = run_all(src);
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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return lab::fail("usage: harness CASE PROGRAMS_DIR");
  std::string which = argv[1];
  std::filesystem::path dir = argv[2];
  std::string why;
  if (which == "ifs") {
    why = same_output(lab::lab_programs(dir, "if_"));
  } else if (which == "whiles") {
    why = same_output(lab::lab_programs(dir, "while_"));
  } else if (which == "random") {
    // The generator's own options: planted runtime errors and 10,000-deep recursion included.
    why = same_output(lab::random_programs(200, testing::GenOptions{}));
  } else if (which == "jumps_patched" || which == "back_edge") {
    for (const auto& src : lab::lab_programs(dir)) {
      auto c = lab::compile(src);
      if (!c->ok) {
        why = src.name + " does not compile: " + c->error;
        break;
      }
      Findings f;
      code_of(*c, &f);
      std::string found = which == "back_edge" ? f.back_edge
                          : !f.unpatched.empty() ? f.unpatched
                                                 : f.next_instruction;
      if (!found.empty()) {
        why = src.name + ", " + found;
        break;
      }
    }
  } else {
    why = "unknown case " + which;
  }
  return why.empty() ? lab::pass() : lab::fail(why);
}
