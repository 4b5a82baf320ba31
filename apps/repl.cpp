#include "apps/repl.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "lang/text.h"
#include "lang/token.h"

namespace descent {

namespace {
struct CommandHelp {
  const char* name;
  const char* args;
  const char* help;
};
const CommandHelp kCommands[] = {
    {":help", "", "this list"},
    {":tokens", "", "the tokens of the last input"},
    {":ast", "[sexpr|dot]", "the checked syntax tree of the last input"},
    {":folded", "[sexpr|dot]", "the tree after the fold_constants pass"},
    {":stack", "[fused]", "stack bytecode of the last input (fused: what the VM runs)"},
    {":reg", "[alloc|fused|live]", "register bytecode: virtual, allocated, fused (what runs), live intervals"},
    {":registers", "[N]", "show or set the register VM's register file size (3..250)"},
    {":trace", "", "toggle tracing every instruction the VMs execute"},
    {":compare", "", "run the last input on every engine: output, steps, time"},
    {":llvm", "[opt]", "LLVM IR of the last input (opt: after the -O pipeline)"},
    {":passes", "", "the passes that ran on the last input, and what each changed"},
    {":diff", "PASS_A PASS_B", "how the IR changed between two passes (names from :passes)"},
    {":asm", "[TARGET]", "assembly with encodings (x86-64, aarch64, riscv64, wasm32)"},
    {":mir", "[regalloc] [TARGET]", "machine IR after isel, or after register allocation"},
    {":opt", "[N]", "show or set the -O level (0..3) of the LLVM views and the jit"},
    {":stages", "", "every stage the pipeline can show"},
    {":stage", "NAME [text|sexpr|dot]", "any stage of the last input by name"},
    {":engine", "[NAME]", "show or choose the engine that runs input"},
    {":time", "", "toggle timing of each input"},
    {":load", "FILE", "compile and run a .ds file in this session"},
    {":device", "[DEVICE]", "show the tensor devices (ref, cpu, opencl, ...) or choose where kernels run"},
    {":graph", "[pending|before|PASS|executed] [dot]", "the tensor dataflow graph of the last evaluation"},
    {":kernel", "NAME [n=SIZE ...]", "lower a kernel to its loop nest for scheduling (named dims default to 64)"},
    {":tir", "[original]", "the selected kernel's loop nest (after the schedule)"},
    {":c", "", "the selected kernel's loop nest as C"},
    {":opencl", "", "the selected kernel's loop nest as OpenCL C"},
    {":sched", "STEP", "apply a schedule step, e.g. :sched split i 32 (docs/tensor.md lists them)"},
    {":undo", "", "undo the last schedule step"},
    {":redo", "", "redo an undone schedule step"},
    {":trace-schedule", "", "the schedule steps in effect (replayable)"},
    {":run", "[DEVICE]", "run the selected kernel on random inputs and check it against the reference"},
    {":quit", "", "leave (Ctrl-D works too)"},
};

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

bool parse_format(const std::string& s, Format* f) {
  if (s == "text") *f = Format::Text;
  else if (s == "sexpr") *f = Format::Sexpr;
  else if (s == "dot") *f = Format::Dot;
  else return false;
  return true;
}
}  // namespace

Repl::Repl(Session& session, std::ostream& out, std::ostream& err)
    : session_(session), out_(out), err_(err) {}

std::vector<std::string> Repl::commands() {
  std::vector<std::string> c;
  for (const auto& k : kCommands) c.push_back(k.name);
  return c;
}

std::vector<std::string> Repl::complete(const std::string& prefix) const {
  std::vector<std::string> pool;
  if (!prefix.empty() && prefix[0] == ':') {
    pool = commands();
  } else {
    pool = session_.known_names();
    for (const char* kw : {"fn", "return", "if", "else", "while", "for", "in", "break",
                           "continue", "true", "false", "int", "float", "bool"})
      pool.push_back(kw);
  }
  std::vector<std::string> out;
  for (auto& p : pool)
    if (p.compare(0, prefix.size(), prefix) == 0) out.push_back(p);
  return out;
}

bool Repl::feed(const std::string& line) {
  if (buffer_.empty()) {
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos) return true;
    if (line[first] == ':') return command(line.substr(first));
  }
  buffer_ += line;
  buffer_ += '\n';
  if (needs_more_input(buffer_)) return true;
  std::string text;
  text.swap(buffer_);
  submit(text, "<repl:" + std::to_string(++entry_) + ">");
  return true;
}

void Repl::submit(const std::string& text, const std::string& name) {
  RunOptions opts;
  opts.echo = true;
  opts.out = [this](std::string_view s) {
    out_ << s;
    out_.flush();
  };
  if (trace_) opts.trace = [this](std::string_view s) { out_ << "  | " << s; };
  Outcome o = session_.submit(text, name, opts);
  // Say once per engine choice that tensor code ran on the walker, not every line.
  if (!o.note.empty() && noted_engine_ != session_.engine()) {
    err_ << "note: " << o.note << '\n';
    noted_engine_ = session_.engine();
  }
  if (o.status != Outcome::Ok) err_ << o.message << std::flush;
  if (time_)
    out_ << fmt::format("[{}] compile {:.3f} ms, run {:.3f} ms, {} steps\n", session_.engine(),
                        o.compile_seconds * 1e3, o.run_seconds * 1e3, o.steps);
}

void Repl::compare() {
  RunOptions opts;
  opts.echo = true;
  auto runs = session_.compare(opts);
  if (runs.empty()) {
    err_ << "error: nothing to compare (the last input did not compile)\n";
    return;
  }
  const std::string& ref = runs.front().output;
  out_ << fmt::format("{:<7} {:>12} {:>11}  {}\n", "engine", "steps", "time", "result");
  for (const auto& c : runs) {
    std::string result = c.outcome.status == Outcome::Ok ? "ok" : c.outcome.diagnostics.empty() ? "error" : c.outcome.diagnostics[0].message;
    result += c.output == ref ? "" : "  (OUTPUT DIFFERS from " + runs.front().engine + ")";
    out_ << fmt::format("{:<7} {:>12} {:>8.3f} ms  {}\n", c.engine, c.outcome.steps,
                        c.outcome.run_seconds * 1e3, result);
  }
  out_ << "output (" << runs.front().engine << "):\n" << ref;
}

void Repl::show_stage(const std::string& stage, Format format) {
  StageResult r = session_.stage(stage, format);
  if (r.ok)
    out_ << r.text << std::flush;
  else
    err_ << "error: " << r.text << '\n';
}

bool Repl::command(const std::string& line) {
  std::vector<std::string> w = words(line);
  const std::string& cmd = w[0];
  auto format_arg = [&](size_t i, Format* f) {
    if (w.size() <= i) return true;
    if (parse_format(w[i], f)) return true;
    err_ << "error: unknown format '" << w[i] << "' (formats: text, sexpr, dot)\n";
    return false;
  };
  if (cmd == ":quit" || cmd == ":q" || cmd == ":exit") return false;
  if (cmd == ":help") {
    out_ << "Type Descent statements; an expression's value is echoed. Commands:\n";
    for (const auto& k : kCommands)
      out_ << fmt::format("  {:<8} {:<22} {}\n", k.name, k.args, k.help);
  } else if (cmd == ":tokens") {
    show_stage("tokens", Format::Text);
  } else if (cmd == ":ast" || cmd == ":folded") {
    Format f = Format::Text;
    if (format_arg(1, &f)) show_stage(cmd == ":ast" ? "ast" : "ast-folded", f);
  } else if (cmd == ":stage") {
    Format f = Format::Text;
    if (w.size() < 2)
      err_ << "error: usage: :stage NAME [text|sexpr|dot] (see :stages)\n";
    else if (format_arg(2, &f))
      show_stage(w[1], f);
  } else if (cmd == ":stack") {
    show_stage(w.size() > 1 && w[1] == "fused" ? "stack-fused" : "stack", Format::Text);
  } else if (cmd == ":reg") {
    std::string which = w.size() > 1 ? w[1] : "";
    if (which == "alloc") show_stage("reg-alloc", Format::Text);
    else if (which == "fused") show_stage("reg-fused", Format::Text);
    else if (which == "live") show_stage("live", Format::Text);
    else if (which.empty()) show_stage("reg", Format::Text);
    else err_ << "error: usage: :reg [alloc|fused|live]\n";
  } else if (cmd == ":registers") {
    if (w.size() < 2) {
      out_ << "registers: " << session_.num_registers() << '\n';
    } else {
      int n = 0;
      try {
        n = std::stoi(w[1]);
      } catch (...) {
      }
      if (!session_.set_num_registers(n)) err_ << "error: the register file holds 3 to 250 registers\n";
    }
  } else if (cmd == ":trace") {
    trace_ = !trace_;
    out_ << "trace " << (trace_ ? "on" : "off") << " (the ast engine does not trace)\n";
  } else if (cmd == ":compare") {
    compare();
  } else if (cmd == ":llvm") {
    show_stage(w.size() > 1 && w[1] == "opt" ? "llvm-opt" : "llvm", Format::Text);
  } else if (cmd == ":diff") {
    if (w.size() < 3) {
      err_ << "error: usage: :diff PASS_A PASS_B (see :passes)\n";
    } else {
      StageResult r = session_.diff_passes(w[1], w[2]);
      if (r.ok) out_ << r.text;
      else err_ << "error: " << r.text << '\n';
    }
  } else if (cmd == ":asm" || cmd == ":mir") {
    size_t i = 1;
    bool regalloc = cmd == ":mir" && w.size() > 1 && w[1] == "regalloc";
    if (regalloc) ++i;
    std::string error, saved = session_.target();
    if (w.size() > i && !session_.set_target(w[i], &error)) {
      err_ << "error: " << error << '\n';
    } else {
      show_stage(cmd == ":asm" ? "asm" : regalloc ? "mir-regalloc" : "mir", Format::Text);
      if (w.size() > i) session_.set_target(saved.empty() ? "host" : saved, &error);
    }
  } else if (cmd == ":opt") {
    if (w.size() < 2) {
      out_ << "-O" << session_.opt_level() << '\n';
    } else {
      int n = -1;
      try {
        n = std::stoi(w[1]);
      } catch (...) {
      }
      if (!session_.set_opt_level(n)) err_ << "error: the -O level is 0, 1, 2 or 3\n";
    }
  } else if (cmd == ":stages") {
    for (const auto& s : Session::stages()) out_ << fmt::format("  {:<12} {}\n", s.name, s.description);
  } else if (cmd == ":passes") {
    auto passes = session_.passes();
    if (passes.empty()) out_ << "no passes ran (no input compiled yet)\n";
    for (const auto& p : passes)
      out_ << fmt::format("  {:<24} [{}] {}{}\n", p.name, p.stage, p.changed ? "changed: " : "no change: ",
                          p.summary);
  } else if (cmd == ":engine") {
    if (w.size() < 2) {
      out_ << "engine: " << session_.engine() << " (engines:";
      for (auto& e : Session::engines()) out_ << ' ' << e;
      out_ << ")\n";
    } else if (!session_.set_engine(w[1])) {
      err_ << "error: unknown engine '" << w[1] << "' (engines:";
      for (auto& e : Session::engines()) err_ << ' ' << e;
      err_ << ")\n";
    }
  } else if (cmd == ":time") {
    time_ = !time_;
    out_ << "timing " << (time_ ? "on" : "off") << '\n';
  } else if (cmd == ":device") {
    std::string error;
    if (w.size() < 2)
      out_ << "device: " << session_.device() << " (devices: " << join(Session::devices(), " ") << ")\n";
    else if (!session_.set_device(w[1], &error))
      err_ << "error: " << error << '\n';
  } else if (cmd == ":graph") {
    Format f = Format::Text;
    std::string which = "executed";
    for (size_t i = 1; i < w.size(); ++i) {
      if (w[i] == "dot") f = Format::Dot;
      else which = w[i];
    }
    StageResult r = session_.graph_view(which, f);
    if (which == "executed" && !r.ok) r = session_.graph_view("pending", f);
    if (r.ok) out_ << r.text;
    else err_ << "error: " << r.text << '\n';
  } else if (cmd == ":kernel") {
    if (w.size() < 2) {
      if (session_.selected_kernel().empty()) err_ << "error: usage: :kernel NAME [n=SIZE ...]\n";
      else out_ << "kernel: " << session_.selected_kernel() << '\n';
    } else {
      std::map<std::string, int64_t> dims;
      std::string error;
      bool ok = Session::parse_dims({w.begin() + 2, w.end()}, &dims, &error);
      if (!ok) err_ << "error: " << error << '\n';
      if (ok && !session_.select_kernel(w[1], dims, &error)) err_ << "error: " << error << '\n';
      else if (ok) out_ << session_.kernel_view("tir").text;
    }
  } else if (cmd == ":tir" || cmd == ":c" || cmd == ":opencl") {
    StageResult r = session_.kernel_view(cmd == ":c" ? "c" : cmd == ":opencl" ? "opencl" : w.size() > 1 && w[1] == "original" ? "tir-original" : "tir");
    if (r.ok) out_ << r.text;
    else err_ << "error: " << r.text << '\n';
  } else if (cmd == ":sched") {
    std::string step = line.substr(std::min(line.size(), line.find(":sched") + 6));
    std::string error;
    if (step.find_first_not_of(" \t") == std::string::npos)
      err_ << "error: usage: :sched STEP (e.g. :sched split i 32)\n";
    else if (!session_.schedule_step(step, &error))
      err_ << "error: " << error << '\n';
    else
      out_ << session_.kernel_view("tir").text;
  } else if (cmd == ":undo" || cmd == ":redo") {
    bool ok = cmd == ":undo" ? session_.schedule_undo() : session_.schedule_redo();
    if (!ok) err_ << "error: nothing to " << cmd.substr(1) << '\n';
    else out_ << session_.kernel_view("tir").text;
  } else if (cmd == ":trace-schedule") {
    std::string t = session_.schedule_trace();
    out_ << (t.empty() ? "(no schedule steps)\n" : t);
  } else if (cmd == ":run") {
    std::string device = w.size() > 1 ? w[1] : session_.device();
    Session::KernelRun r = session_.run_kernel(device, true);
    if (!r.ok) {
      err_ << "error: " << r.error << '\n';
    } else {
      std::string shape;
      for (auto d : r.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
      out_ << fmt::format("{} on {}: output [{}], sum {:.6g}, {:.3f} ms; matches the reference interpreter\n",
                          session_.selected_kernel(), device, shape, r.checksum, r.seconds * 1e3);
    }
  } else if (cmd == ":load") {
    if (w.size() < 2) {
      err_ << "error: usage: :load FILE\n";
    } else {
      std::ifstream in(w[1], std::ios::binary);
      if (!in) {
        err_ << "error: cannot read '" << w[1] << "'\n";
      } else {
        std::stringstream ss;
        ss << in.rdbuf();
        submit(ss.str(), w[1]);
      }
    }
  } else {
    err_ << "error: unknown command '" << cmd << "' (try :help)\n";
  }
  out_.flush();
  return true;
}

}  // namespace descent
