#include "apps/repl.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "lang/ast.h"
#include "lang/text.h"
#include "lang/token.h"

namespace descent {

namespace {
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

// Word i of a command, if there is one, as a format; false (and says why) if it is none.
bool format_arg(std::ostream& err, const std::vector<std::string>& w, size_t i, Format* f) {
  if (w.size() <= i) return true;
  if (parse_format(w[i], f)) return true;
  err << "error: unknown format '" << w[i] << "' (formats: text, sexpr, dot)\n";
  return false;
}

std::vector<std::string> stage_names(const Session&) {
  std::vector<std::string> v;
  for (const auto& s : Session::stages()) v.push_back(s.name);
  return v;
}
std::vector<std::string> engine_names(const Session&) { return Session::engines(); }
std::vector<std::string> device_names(const Session&) { return Session::devices(); }
std::vector<std::string> kernel_view_names(const Session&) {
  std::vector<std::string> v;
  for (const auto& k : Session::kernel_views()) v.push_back(k.name);
  return v;
}
std::vector<std::string> kernel_names(const Session& s) {
  std::vector<std::string> v;
  for (const auto& k : s.module().kernels) v.push_back(k.name);
  return v;
}
}  // namespace

const std::vector<Repl::Command>& Repl::command_table() {
  // The handlers are lambdas here so that they may use the Repl's private parts.
  static const std::vector<Command> t = {
      {":help", "", "this list",
       [](Repl& r, const Call&) {
         r.out_ << "Type Descent statements; an expression's value is echoed. Commands:\n";
         for (const auto& k : command_table())
           r.out_ << fmt::format("  {:<8} {:<22} {}\n", k.name, k.args, k.help);
       }},
      {":tokens", "", "the tokens of the last input",
       [](Repl& r, const Call&) { r.show_stage("tokens", Format::Text); }},
      {":ast", "[sexpr|dot]", "the checked syntax tree of the last input",
       [](Repl& r, const Call& c) {
         Format f = Format::Text;
         if (format_arg(r.err_, c.words, 1, &f)) r.show_stage("ast", f);
       }},
      {":folded", "[sexpr|dot]", "the tree after the fold_constants pass",
       [](Repl& r, const Call& c) {
         Format f = Format::Text;
         if (format_arg(r.err_, c.words, 1, &f)) r.show_stage("ast-folded", f);
       }},
      {":stack", "[fused]", "stack bytecode of the last input (fused: what the VM runs)",
       [](Repl& r, const Call& c) {
         const auto& w = c.words;
         r.show_stage(w.size() > 1 && w[1] == "fused" ? "stack-fused" : "stack", Format::Text);
       }},
      {":reg", "[alloc|fused|live]",
       "register bytecode: virtual, allocated, fused (what runs), live intervals",
       [](Repl& r, const Call& c) {
         std::string which = c.words.size() > 1 ? c.words[1] : "";
         if (which == "alloc") r.show_stage("reg-alloc", Format::Text);
         else if (which == "fused") r.show_stage("reg-fused", Format::Text);
         else if (which == "live") r.show_stage("live", Format::Text);
         else if (which.empty()) r.show_stage("reg", Format::Text);
         else r.err_ << "error: usage: :reg [alloc|fused|live]\n";
       }},
      {":registers", "[N]", "show or set the register VM's register file size (3..250)",
       [](Repl& r, const Call& c) {
         if (c.words.size() < 2) {
           r.out_ << "registers: " << r.session_.num_registers() << '\n';
           return;
         }
         int n = 0;
         try {
           n = std::stoi(c.words[1]);
         } catch (...) {
         }
         if (!r.session_.set_num_registers(n))
           r.err_ << "error: the register file holds 3 to 250 registers\n";
       }},
      {":trace", "", "toggle tracing every instruction the VMs execute",
       [](Repl& r, const Call&) {
         r.trace_ = !r.trace_;
         r.out_ << "trace " << (r.trace_ ? "on" : "off") << " (the ast engine does not trace)\n";
       }},
      {":compare", "", "run the last input on every engine: output, steps, time",
       [](Repl& r, const Call&) { r.compare(); }},
      {":llvm", "[opt]", "LLVM IR of the last input (opt: after the -O pipeline)",
       [](Repl& r, const Call& c) {
         const auto& w = c.words;
         r.show_stage(w.size() > 1 && w[1] == "opt" ? "llvm-opt" : "llvm", Format::Text);
       }},
      {":passes", "", "the passes that ran on the last input, and what each changed",
       [](Repl& r, const Call&) {
         auto passes = r.session_.passes();
         if (passes.empty()) r.out_ << "no passes ran (no input compiled yet)\n";
         for (const auto& p : passes)
           r.out_ << fmt::format("  {:<24} [{}] {}{}\n", p.name, p.stage,
                                 p.changed ? "changed: " : "no change: ", p.summary);
       }},
      {":diff", "PASS_A PASS_B", "how the IR changed between two passes (names from :passes)",
       [](Repl& r, const Call& c) {
         if (c.words.size() < 3) {
           r.err_ << "error: usage: :diff PASS_A PASS_B (see :passes)\n";
           return;
         }
         StageResult d = r.session_.diff_passes(c.words[1], c.words[2]);
         if (d.ok) r.out_ << d.text;
         else r.err_ << "error: " << d.text << '\n';
       }},
      {":asm", "[TARGET]", "assembly with encodings (x86-64, aarch64, riscv64, wasm32)",
       [](Repl& r, const Call& c) { r.show_machine(c.words, "asm", 1); },
       [](const Session&) { return Session::targets(); }},
      {":mir", "[regalloc] [TARGET]", "machine IR after isel, or after register allocation",
       [](Repl& r, const Call& c) {
         bool regalloc = c.words.size() > 1 && c.words[1] == "regalloc";
         r.show_machine(c.words, regalloc ? "mir-regalloc" : "mir", regalloc ? 2 : 1);
       },
       [](const Session&) {
         std::vector<std::string> v = Session::targets();
         v.insert(v.begin(), "regalloc");
         return v;
       }},
      {":opt", "[N]", "show or set the -O level (0..3) of the LLVM views and the jit",
       [](Repl& r, const Call& c) {
         if (c.words.size() < 2) {
           r.out_ << "-O" << r.session_.opt_level() << '\n';
           return;
         }
         int n = -1;
         try {
           n = std::stoi(c.words[1]);
         } catch (...) {
         }
         if (!r.session_.set_opt_level(n)) r.err_ << "error: the -O level is 0, 1, 2 or 3\n";
       }},
      {":stages", "", "every stage the pipeline can show",
       [](Repl& r, const Call&) {
         for (const auto& s : Session::stages())
           r.out_ << fmt::format("  {:<12} {}\n", s.name, s.description);
       }},
      {":stage", "NAME [text|sexpr|dot]", "any stage of the last input by name",
       [](Repl& r, const Call& c) {
         Format f = Format::Text;
         if (c.words.size() < 2)
           r.err_ << "error: usage: :stage NAME [text|sexpr|dot] (see :stages)\n";
         else if (format_arg(r.err_, c.words, 2, &f))
           r.show_stage(c.words[1], f);
       },
       stage_names},
      {":engine", "[NAME]", "show or choose the engine that runs input",
       [](Repl& r, const Call& c) {
         if (c.words.size() < 2) {
           r.out_ << "engine: " << r.session_.engine() << " (engines:";
           for (auto& e : Session::engines()) r.out_ << ' ' << e;
           r.out_ << ")\n";
         } else if (!r.session_.set_engine(c.words[1])) {
           r.err_ << "error: unknown engine '" << c.words[1] << "' (engines:";
           for (auto& e : Session::engines()) r.err_ << ' ' << e;
           r.err_ << ")\n";
         }
       },
       engine_names},
      {":time", "", "toggle timing of each input",
       [](Repl& r, const Call&) {
         r.time_ = !r.time_;
         r.out_ << "timing " << (r.time_ ? "on" : "off") << '\n';
       }},
      {":load", "FILE", "compile and run a .ds file in this session",
       [](Repl& r, const Call& c) {
         if (c.words.size() < 2) {
           r.err_ << "error: usage: :load FILE\n";
           return;
         }
         std::string text, error;
         if (!read_file(c.words[1], &text, &error)) {
           r.err_ << "error: " << error << '\n';
           return;
         }
         r.submit(text, c.words[1]);
       }},
      {":device", "[DEVICE]",
       "show the tensor devices (ref, cpu, opencl, ...) or choose where kernels run",
       [](Repl& r, const Call& c) {
         std::string error;
         if (c.words.size() < 2)
           r.out_ << "device: " << r.session_.device()
                  << " (devices: " << join(Session::devices(), " ") << ")\n";
         else if (!r.session_.set_device(c.words[1], &error))
           r.err_ << "error: " << error << '\n';
       },
       device_names},
      {":graph", "[pending|before|PASS|executed] [dot]",
       "the tensor dataflow graph of the last evaluation",
       [](Repl& r, const Call& c) {
         Format f = Format::Text;
         std::string which = "executed";
         for (size_t i = 1; i < c.words.size(); ++i) {
           if (c.words[i] == "dot") f = Format::Dot;
           else which = c.words[i];
         }
         StageResult g = r.session_.graph_view(which, f);
         if (which == "executed" && !g.ok) g = r.session_.graph_view("pending", f);
         if (g.ok) r.out_ << g.text;
         else r.err_ << "error: " << g.text << '\n';
       }},
      {":kernel", "NAME [n=SIZE ...]",
       "lower a kernel to its loop nest for scheduling (named dims default to 64)",
       [](Repl& r, const Call& c) {
         const auto& w = c.words;
         if (w.size() < 2) {
           if (r.session_.selected_kernel().empty())
             r.err_ << "error: usage: :kernel NAME [n=SIZE ...]\n";
           else
             r.out_ << "kernel: " << r.session_.selected_kernel() << '\n';
           return;
         }
         std::map<std::string, int64_t> dims;
         std::string error;
         if (!Session::parse_dims({w.begin() + 2, w.end()}, &dims, &error) ||
             !r.session_.select_kernel(w[1], dims, &error))
           r.err_ << "error: " << error << '\n';
         else
           r.out_ << r.session_.kernel_view("tir").text;
       },
       kernel_names},
      {":tir", "[original]", "the selected kernel's loop nest (after the schedule)",
       [](Repl& r, const Call& c) {
         r.show_kernel(c.words.size() > 1 && c.words[1] == "original" ? "tir-original" : "tir");
       }},
      {":c", "", "the selected kernel's loop nest as C",
       [](Repl& r, const Call&) { r.show_kernel("c"); }},
      {":opencl", "", "the selected kernel's loop nest as OpenCL C",
       [](Repl& r, const Call&) { r.show_kernel("opencl"); }},
      {":view", "VIEW", "any view of the selected kernel, each device's generated code too (:view alone lists them)",
       [](Repl& r, const Call& c) {
         if (c.words.size() < 2) {
           for (const auto& v : Session::kernel_views())
             r.out_ << fmt::format("  {:<14}{}\n", v.name, v.description);
           return;
         }
         r.show_kernel(c.words[1]);
       },
       kernel_view_names},
      {":sched", "STEP", "apply a schedule step, e.g. :sched split i 32 (docs/tensor.md lists them)",
       [](Repl& r, const Call& c) {
         std::string step = c.line.substr(std::min(c.line.size(), c.line.find(":sched") + 6));
         std::string error;
         if (step.find_first_not_of(" \t") == std::string::npos)
           r.err_ << "error: usage: :sched STEP (e.g. :sched split i 32)\n";
         else if (!r.session_.schedule_step(step, &error))
           r.err_ << "error: " << error << '\n';
         else
           r.out_ << r.session_.kernel_view("tir").text;
       }},
      {":undo", "", "undo the last schedule step",
       [](Repl& r, const Call&) {
         if (!r.session_.schedule_undo()) r.err_ << "error: nothing to undo\n";
         else r.out_ << r.session_.kernel_view("tir").text;
       }},
      {":redo", "", "redo an undone schedule step",
       [](Repl& r, const Call&) {
         if (!r.session_.schedule_redo()) r.err_ << "error: nothing to redo\n";
         else r.out_ << r.session_.kernel_view("tir").text;
       }},
      {":trace-schedule", "", "the schedule steps in effect (replayable)",
       [](Repl& r, const Call&) {
         std::string t = r.session_.schedule_trace();
         r.out_ << (t.empty() ? "(no schedule steps)\n" : t);
       }},
      {":run", "[DEVICE]",
       "run the selected kernel on random inputs and check it against the reference",
       [](Repl& r, const Call& c) {
         std::string device = c.words.size() > 1 ? c.words[1] : r.session_.device();
         Session::KernelRun k = r.session_.run_kernel(device, true);
         if (!k.ok) {
           r.err_ << "error: " << k.error << '\n';
           return;
         }
         std::string shape;
         for (auto d : k.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
         r.out_ << fmt::format(
             "{} on {}: output [{}], sum {:.6g}, {:.3f} ms; matches the reference interpreter\n",
             r.session_.selected_kernel(), device, shape, k.checksum, k.seconds * 1e3);
       },
       device_names},
      {":quit", "", "leave (Ctrl-D works too)", [](Repl& r, const Call&) { r.quit_ = true; },
       nullptr, {":q", ":exit"}},
  };
  return t;
}

Repl::Repl(Session& session, std::ostream& out, std::ostream& err)
    : session_(session), out_(out), err_(err) {}

std::vector<std::string> Repl::commands() {
  std::vector<std::string> c;
  for (const auto& k : command_table()) c.push_back(k.name);
  return c;
}

std::vector<std::string> Repl::complete(const std::string& prefix) const {
  return complete("", prefix);
}

std::vector<std::string> Repl::complete(const std::string& before,
                                        const std::string& prefix) const {
  std::vector<std::string> pool;
  std::vector<std::string> w = words(before);
  const Command* cmd = nullptr;
  if (!w.empty())
    for (const auto& k : command_table())
      if (w[0] == k.name) cmd = &k;
  if (cmd) {
    // The word after a command is its argument.
    if (w.size() == 1 && cmd->arguments) pool = cmd->arguments(session_);
  } else if (!prefix.empty() && prefix[0] == ':') {
    pool = commands();
  } else {
    pool = session_.known_names();
    for (std::string_view kw : keywords()) pool.emplace_back(kw);
    // Type names are identifiers to the lexer, and only these three are whole words.
    for (Type t : {Type::Int, Type::Float, Type::Bool}) pool.push_back(type_name(t));
    std::sort(pool.begin(), pool.end());
    pool.erase(std::unique(pool.begin(), pool.end()), pool.end());
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
  opts.step_limit = step_limit_;
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
  for (const auto& n : o.notes) err_ << "note: " << n << '\n';
  if (o.status != Outcome::Ok) err_ << o.message << std::flush;
  if (time_)
    out_ << fmt::format("[{}] compile {:.3f} ms, run {:.3f} ms, {} steps\n", session_.engine(),
                        o.compile_seconds * 1e3, o.run_seconds * 1e3, o.steps);
}

void Repl::compare() {
  RunOptions opts;
  opts.echo = true;
  opts.step_limit = step_limit_;
  auto runs = session_.compare(opts);
  if (runs.empty()) {
    err_ << "error: nothing to compare (the last input did not compile)\n";
    return;
  }
  const std::string& ref = runs.front().output;
  out_ << fmt::format("{:<7} {:>12} {:>11}  {}\n", "engine", "steps", "time", "result");
  for (const auto& c : runs) {
    if (!c.not_run.empty()) {
      out_ << fmt::format("{:<7} {:>12} {:>11}  not run: {}\n", c.engine, "-", "-", c.not_run);
      continue;
    }
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

void Repl::show_kernel(const std::string& view) {
  StageResult r = session_.kernel_view(view);
  if (r.ok) out_ << r.text;
  else err_ << "error: " << r.text << '\n';
}

// :asm and :mir: words[target_at], if given, is a target for this view only.
void Repl::show_machine(const std::vector<std::string>& w, const std::string& stage,
                        size_t target_at) {
  std::string error, saved = session_.target();
  if (w.size() > target_at && !session_.set_target(w[target_at], &error)) {
    err_ << "error: " << error << '\n';
    return;
  }
  show_stage(stage, Format::Text);
  if (w.size() > target_at) session_.set_target(saved.empty() ? "host" : saved, &error);
}

bool Repl::command(const std::string& line) {
  std::vector<std::string> w = words(line);
  for (const auto& k : command_table()) {
    bool match = w[0] == k.name;
    for (const char* a : k.aliases) match |= w[0] == a;
    if (!match) continue;
    k.run(*this, Call{w, line});
    out_.flush();
    return !quit_;
  }
  err_ << "error: unknown command '" << w[0] << "' (try :help)\n";
  out_.flush();
  return true;
}

}  // namespace descent
