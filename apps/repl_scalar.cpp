// The REPL's views of the last input down the scalar tiers: the trees, the stack and register
// bytecode, the native backend's stages, LLVM IR, machine IR and assembly, the passes and
// their diffs, the abstract interpreter's facts, and any stage by name. Each is a handler of
// the one command table (repl.cpp); the Session computes every view, these parse the words
// after the command and print.
#include <fmt/format.h>

#include <algorithm>

#include "apps/repl.h"
#include "native/target.h"
#include "proc/process.h"

namespace descent {

namespace {
bool parse_format(const std::string& s, Format* f) {
  if (s == "text") *f = Format::Text;
  else if (s == "sexpr") *f = Format::Sexpr;
  else if (s == "dot") *f = Format::Dot;
  else return false;
  return true;
}

// Word i of a command, if there is one, as a format; false (and says why) if it is none.
bool format_arg(std::ostream& err, const std::vector<std::string>& w, size_t i, Format* f) {
  if (w.size() <= i) return true;
  if (parse_format(w[i], f)) return true;
  err << "error: unknown format '" << w[i] << "' (formats: text, sexpr, dot)\n";
  return false;
}
}  // namespace

void Repl::show_stage(const std::string& stage, Format format, const std::string& function) {
  StageResult r = session_.stage(stage, format, function);
  if (r.ok)
    out_ << r.text << std::flush;
  else
    err_ << "error: " << r.text << '\n';
}

// :ast, :folded and :cfg: the stage in the format the first word names (text when none).
void Repl::show_formatted(const Call& c, const std::string& stage) {
  Format f = Format::Text;
  if (format_arg(err_, c.words, 1, &f)) show_stage(stage, f);
}

std::string Repl::code_args(const Call& c, const std::vector<std::string>& keywords,
                            std::string* function) {
  std::string keyword;
  for (size_t i = 1; i < c.words.size(); ++i) {
    const std::string& w = c.words[i];
    bool is_keyword = std::find(keywords.begin(), keywords.end(), w) != keywords.end();
    std::string& slot = is_keyword ? keyword : *function;
    if (!slot.empty()) {
      err_ << "error: usage: " << c.words[0] << ' ' << usage(c.words[0]) << '\n';
      return "?";
    }
    slot = w;
  }
  return keyword;
}

void Repl::reg_command(const Call& c) {
  std::string fn;
  std::string which = code_args(c, {"alloc", "fused", "live"}, &fn);
  if (which == "?") return;
  show_stage(which.empty()        ? "reg"
             : which == "alloc" ? "reg-alloc"
             : which == "fused" ? "reg-fused"
                                : "live",
             Format::Text, fn);
}

// :native [STAGE] [x86-64|aarch64 ...] [FUNCTION]: one target (the Session's, x86-64 here,
// unless named) or several, one after the other.
void Repl::native_command(const Call& c) {
  std::vector<std::string> targets, words;
  for (const std::string& w : c.words)
    if (&w != &c.words[0] && native::find_target(w)) targets.push_back(w);
    else words.push_back(w);
  Call rest{words, c.line};
  std::string fn;
  std::string which =
      code_args(rest, {"dag", "legal", "combine", "isel", "sched", "regalloc", "asm", "patterns"}, &fn);
  if (which == "?") return;
  std::string stage = "native-" + (which.empty() ? std::string("asm") : which);
  if (targets.empty()) targets.push_back("");
  for (const std::string& t : targets) {
    std::string error;
    session_.set_native_target(t, &error);
    if (targets.size() > 1) out_ << "== " << native::find_target(t)->name << "\n";
    if (which == "patterns" && fn.empty()) show_stage("native-patterns", Format::Text);  // the table
    else show_stage(stage, Format::Text, fn);
  }
  std::string error;
  session_.set_native_target("", &error);
}

void Repl::analyze_command(const Call& c) {
  std::string view = "analysis";
  bool explain = false;
  for (size_t i = 1; i < c.words.size(); ++i) {
    analysis::Domain d;
    if (analysis::parse_domain(c.words[i], &d)) session_.set_analysis_domain(d);
    else if (c.words[i] == "states") view = "analysis-cfg";
    else if (c.words[i] == "multiply") view = "analysis-mul";
    else if (c.words[i] == "explain") explain = true;
    else if (c.words[i] == "contexts" || c.words[i] == "summaries") session_.set_analysis_contexts(c.words[i] == "contexts");
    else if (c.words[i].rfind("unroll=", 0) == 0 && c.words[i].size() > 7 &&
             c.words[i].find_first_not_of("0123456789", 7) == std::string::npos && c.words[i].size() < 12)
      session_.set_analysis_unroll(std::stoi(c.words[i].substr(7)));
    else {
      err_ << "error: usage: :analyze [constants|signs|intervals|congruences|sets|product] [states|multiply] "
              "[explain] [unroll=N] [contexts|summaries]\n";
      return;
    }
  }
  session_.set_analysis_explain(explain);
  show_stage(view, Format::Text);
}

void Repl::diff_command(const Call& c) {
  if (c.words.size() < 3) {
    err_ << "error: usage: :diff PASS_A PASS_B (see :passes)\n";
    return;
  }
  StageResult d = session_.diff_passes(c.words[1], c.words[2]);
  if (d.ok) out_ << d.text;
  else err_ << "error: " << d.text << '\n';
}

void Repl::stage_command(const Call& c) {
  const auto& w = c.words;
  Format f = Format::Text;
  std::string fn = w.size() > 3 ? w[3] : "";
  if (w.size() < 2)
    err_ << "error: usage: :stage NAME [text|sexpr|dot] [FUNCTION] (see :stages)\n";
  else if (w.size() == 3 && !parse_format(w[2], &f))
    show_stage(w[1], f, w[2]);  // :stage reg-alloc fib
  else if (format_arg(err_, w, 2, &f))
    show_stage(w[1], f, fn);
}

void Repl::show_passes(bool llvm) {
  auto passes = session_.passes();
  if (passes.empty()) {
    out_ << "no passes ran (no input compiled yet)\n";
    return;
  }
  // The LLVM pipeline runs some 90 passes: one summary line unless asked for (:passes llvm).
  size_t width = 0, llvm_ran = 0, llvm_changed = 0;
  for (const auto& p : passes) {
    if (p.stage == "llvm") {
      ++llvm_ran;
      llvm_changed += p.changed ? 1 : 0;
    }
    if (llvm == (p.stage == "llvm")) width = std::max(width, p.name.size());
  }
  for (const auto& p : passes) {
    if (llvm != (p.stage == "llvm")) continue;
    out_ << fmt::format("  {:<{}}  [{}] {}{}\n", p.name, width, p.stage,
                        p.changed ? "changed" : "no change", llvm ? "" : ": " + p.summary);
  }
  if (!llvm && llvm_ran)
    out_ << fmt::format("  and {} LLVM passes at -O{}, {} of them changed the IR (:passes llvm)\n",
                        llvm_ran, session_.opt_level(), llvm_changed);
}

// :asm and :mir: a target and keywords, if given, are for this view only; a word that is
// neither a keyword nor a target is a function. Each keyword at most once.
void Repl::show_machine(const Call& c, std::string stage,
                        const std::vector<std::string>& keywords) {
  std::string fn, target, error, saved = session_.target();
  std::vector<std::string> chosen;
  for (size_t i = 1; i < c.words.size(); ++i) {
    const std::string& w = c.words[i];
    bool is_keyword = std::find(keywords.begin(), keywords.end(), w) != keywords.end();
    bool is_target = !is_keyword && session_.module().find_function(w) < 0;
    std::string& slot = is_target ? target : fn;
    if (is_keyword ? std::find(chosen.begin(), chosen.end(), w) != chosen.end() : !slot.empty()) {
      err_ << "error: usage: " << c.words[0] << ' ' << usage(c.words[0]) << '\n';
      return;
    }
    if (is_keyword) chosen.push_back(w);
    else slot = w;
  }
  if (std::find(chosen.begin(), chosen.end(), "run") != chosen.end()) {
    run_for_target(target);
    return;
  }
  Session::AsmOptions saved_asm = session_.asm_options(), asm_options = saved_asm;
  for (const std::string& k : chosen) {
    if (k == "directives") asm_options.directives = true;
    else if (k == "no-encodings") asm_options.encodings = false;
    else stage += "-" + k;  // mir -> mir-regalloc
  }
  if (!target.empty() && !session_.set_target(target, &error)) {
    err_ << "error: " << error << '\n';
    return;
  }
  session_.set_asm_options(asm_options);
  show_stage(stage, Format::Text, fn);
  session_.set_asm_options(saved_asm);
  if (!target.empty()) session_.set_target(saved.empty() ? "host" : saved, &error);
}

// `:asm TARGET run`: the last input built by the LLVM tier for TARGET as a whole program,
// linked with that target's gcc and run (under qemu-user for another architecture), as
// `descent build --target TARGET --run` does; its output, then how it ended.
void Repl::run_for_target(const std::string& target) {
  std::string error, saved = session_.target();
  if (!target.empty() && !session_.set_target(target, &error)) {
    err_ << "error: " << error << '\n';
    return;
  }
  proc::Limits limits;
  limits.wall_s = 300;
  limits.output_cap = size_t(16) << 20;
  proc::Result r;
  session_.interrupt_flag().store(false);  // a Ctrl-C at the prompt is not this run's
  if (!session_.run_on_target(limits, &r, &error)) {
    err_ << "error: " << error << '\n';
  } else {
    out_ << r.out;
    err_ << r.err;
    if (r.interrupted) err_ << "error: interrupted\n";
    else if (!r.started || r.signal) err_ << "error: " << r.problem << '\n';
    else out_ << "(exit code " << r.exit_code << ")\n";
  }
  if (!target.empty()) session_.set_target(saved.empty() ? "host" : saved, &error);
}

}  // namespace descent
