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
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "control_lab.h"
#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "lang/walker.h"
#include "vm/stack_disasm.h"
#include "vm/stack_vm.h"
// The project's random program generator (the differential tests' own), compiled in here.
#include "tests/diff/program_gen.cpp"

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
std::string code_of(const Program& program, const Module& module, Findings* findings) {
  Findings ignored;
  stack::CompileHooks hooks = student_hooks(findings ? *findings : ignored);
  return stack::disassemble(stack::compile_stack(program, module, false, &hooks), module);
}

// Parses and checks a program; null on a compile error (its message in *error).
std::shared_ptr<Program> compile(const std::string& text, Module& module, std::string* error) {
  auto file = std::make_shared<SourceFile>("program.ds", text);
  std::vector<Diagnostic> diags;
  auto program = std::make_shared<Program>(parse(file, diags));
  if (!diags.empty() || !check(*program, module, {}, diags)) {
    *error = "compile error: " + (diags.empty() ? std::string("?") : diags[0].message);
    return nullptr;
  }
  module.programs.push_back(program);
  return program;
}

struct Outcome {
  std::string walker, plain, fused;  // what each printed, then "error at line N: ..."
  std::string code;  // the plain bytecode of the student's code, for a failure's message
};

std::string run_on(Engine& engine, const Program& program, const Module& module) {
  std::string out;
  GlobalStore globals;
  globals.resize(module.globals.size());
  RunOptions opts;
  opts.out = [&out](std::string_view t) { out += t; };
  opts.step_limit = 50'000'000;  // a wrong jump can loop forever: stop it as "interrupted"
  RunResult rr;
  run_on_big_stack([&] { rr = engine.run(program, module, globals, opts); });
  if (!rr.ok) out += "error at line " + std::to_string(rr.error.loc.line) + ": " + rr.error.message;
  return out;
}

Outcome run_all(const std::string& text) {
  Outcome r;
  Module module;
  std::string error;
  auto program = compile(text, module, &error);
  if (!program) {
    r.walker = r.plain = r.fused = error;
    return r;
  }
  Findings ignored;  // the structural checks compile without running (code_of)
  r.walker = run_on(*make_ast_walker(), *program, module);
  r.plain = run_on(*make_stack_vm(false, student_hooks(ignored)), *program, module);
  r.fused = run_on(*make_stack_vm(true, student_hooks(ignored)), *program, module);
  r.code = code_of(*program, module, nullptr);
  return r;
}

// ---- reporting ----

std::string read(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int fail(const std::string& why) {
  std::printf("FAIL: %s\n", why.c_str());
  return 0;
}

// The first `max` lines of a listing.
std::string first_lines(const std::string& s, int max) {
  size_t at = 0;
  for (int n = 0; n < max && at != std::string::npos; ++n) at = s.find('\n', at + 1);
  return at == std::string::npos ? s : s.substr(0, at + 1) + "...\n";
}

std::string shown(std::string s, size_t max = 200) {
  for (auto& c : s)
    if (c == '\n') c = '|';
  return s.size() > max ? s.substr(0, max - 3) + "..." : s;
}

// The lab's programs whose names start with `prefix` ("" for all), sorted.
std::vector<std::pair<std::string, std::string>> lab_programs(const std::filesystem::path& dir,
                                                              const std::string& prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (e.path().extension() == ".ds" && name.rfind(prefix, 0) == 0) out.push_back({name, read(e.path())});
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "" when every program prints the same on the walker and on the stack VM (both ways).
std::string same_output(const std::vector<std::pair<std::string, std::string>>& programs, bool show_text) {
  for (const auto& [name, text] : programs) {
    Outcome r = run_all(text);
    bool plain_ok = r.plain == r.walker, fused_ok = r.fused == r.walker;
    if (plain_ok && fused_ok) continue;
    std::string why = name + ": the AST walker prints \"" + shown(r.walker) + "\", the stack VM with your code \"" +
                      shown(plain_ok ? r.fused : r.plain) + "\"" +
                      (plain_ok ? " (with superinstructions)" : "");
    if (show_text) why += ". The program:\n" + text;
    else why += ". Its bytecode (`descent dump " + name + " --stage stack` shows the compiler's own):\n" + first_lines(r.code, 40);
    return why;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return fail("usage: harness CASE PROGRAMS_DIR");
  std::string which = argv[1];
  std::filesystem::path dir = argv[2];
  std::string why;
  if (which == "ifs") {
    why = same_output(lab_programs(dir, "if_"), false);
  } else if (which == "whiles") {
    why = same_output(lab_programs(dir, "while_"), false);
  } else if (which == "random") {
    std::vector<std::pair<std::string, std::string>> programs;
    for (uint64_t seed = 1; seed <= 200; ++seed)
      programs.push_back({"random program " + std::to_string(seed) + " (tests/diff's generator, seed " +
                              std::to_string(seed) + ")",
                          testing::ProgramGenerator(seed).source()});
    why = same_output(programs, true);
  } else if (which == "jumps_patched" || which == "back_edge") {
    for (const auto& [name, text] : lab_programs(dir, "")) {
      Module module;
      auto program = compile(text, module, &why);
      if (!program) break;
      Findings f;
      code_of(*program, module, &f);
      std::string found = which == "back_edge" ? f.back_edge
                          : !f.unpatched.empty() ? f.unpatched
                                                 : f.next_instruction;
      if (!found.empty()) {
        why = name + ", " + found;
        break;
      }
    }
  } else {
    why = "unknown case " + which;
  }
  if (!why.empty()) return fail(why);
  std::printf("PASS\n");
  return 0;
}
