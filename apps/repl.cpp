// The REPL (repl.h): the one table of : commands, dispatch and completion through it, input
// gathered until it is whole and submitted to the Session, and the launch log and reports
// that `descent run` prints too. The commands' longer handlers are in repl_scalar.cpp,
// repl_session.cpp and repl_kernel.cpp.
#include "apps/repl.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "lang/ast.h"
#include "lang/text.h"
#include "lang/token.h"

namespace descent {

namespace {
// ---- completion: what each command's next word can be --------------------------------
// Each takes the words before the one being completed (w[0]: the command).
using Words = std::vector<std::string>;

Words plus(Words a, const Words& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
Words function_names(const Session& s) {
  Words v;
  for (const auto& f : s.module().functions) v.push_back(f.name);
  return v;
}
Words stage_names(const Session&, const Words& w) {
  if (w.size() == 1) {
    Words v;
    for (const auto& s : Session::stages()) v.push_back(s.name);
    return v;
  }
  return {};
}
// The first word only.
template <Words (*list)()>
Words first(const Session&, const Words& w) {
  return w.size() == 1 ? list() : Words{};
}
Words format_names() { return {"text", "sexpr", "dot"}; }
// Each target's architecture, which is also its shortest alias ("aarch64", "x86_64").
Words target_names() {
  Words v;
  for (const auto& t : Session::targets()) v.push_back(t.substr(0, t.find('-')));
  return v;
}
Words device_names() { return Session::devices(); }
Words kernel_names(const Session& s, const Words& w) {
  Words v;
  if (w.size() == 1)
    for (const auto& k : s.module().kernels) v.push_back(k.name);
  return v;
}
// A code view: its keywords (once, before the function) and then a function of the session.
Words code_view(const Session& s, const Words& w, const Words& keywords) {
  for (size_t i = 1; i < w.size(); ++i)
    if (std::find(keywords.begin(), keywords.end(), w[i]) == keywords.end()) return {};
  return w.size() == 1 ? plus(keywords, function_names(s)) : function_names(s);
}
// How a yardstick's time reads beside the tuned one, the faster side named: a ratio under 1
// printed as "0.51x the tuned time" reads backwards.
std::string speed_versus_tuned(double ratio) {
  if (ratio < 1) return fmt::format("{:.2f}x faster than the tuned schedule", 1 / ratio);
  return fmt::format("the tuned schedule is {:.2f}x faster", ratio);
}

}  // namespace

std::string launch_line(const tensor::LaunchRecord& r, size_t number) {
  // Which schedule ran says why the time is what it is: "user", "tuned", "default", or the
  // nest as lowered.
  std::string schedule = r.schedule.empty() ? "as lowered" : r.schedule + " schedule";
  return fmt::format("[launch {}] {} on {} ({}), {}: {:.4g} ms, {:.4g} GFLOP/s, {:.4g} GB/s, {}\n",
                     number, r.kernel, r.device, r.device_name, schedule, r.seconds * 1e3,
                     r.gflops(), r.gbs(),
                     r.compiled ? fmt::format("compiled in {:.4g} ms", r.compile_s * 1e3)
                                : std::string("cached"));
}

std::string launch_summary(const tensor::LaunchTotals& t) {
  if (t.count == 0) return "";
  tensor::LaunchRecord all;  // the launches as one, for its rates
  all.seconds = t.seconds;
  all.flops = t.flops;
  all.bytes = t.bytes;
  return fmt::format("[launches] {} kernel{} on {} ({}), {} compiled: {:.4g} ms, {:.4g} GFLOP/s, "
                     "{:.4g} GB/s\n",
                     t.count, t.count == 1 ? "" : "s", t.device, t.device_name, t.compiled,
                     t.seconds * 1e3, all.gflops(), all.gbs());
}

bool parse_debug_level(const std::string& word, int* level, std::string* error) {
  if (word == "0" || word == "off") *level = 0;
  else if (word == "1") *level = 1;
  else if (word == "2") *level = 2;
  else {
    *error = "the debug level is 0 (or off), 1 (a launch summary per input) or 2 (a line per "
             "kernel launch), not '" + word + "'";
    return false;
  }
  return true;
}

std::string tune_report(const Session::TuneReport& r, const Session::TuneRequest& request) {
  auto ms = [](double s) { return s > 0 ? fmt::format("{:.4g} ms", s * 1e3) : std::string("-"); };
  size_t name_w = 18, shape_w = 22;  // widened for a long fused name or many inputs
  for (const auto& t : r.tasks) {
    name_w = std::max(name_w, t.kernel.size());
    shape_w = std::max(shape_w, t.shape.size());
  }
  std::string text = fmt::format("{:<{}} {:<{}} {:>12} {:>12} {:>12} {:>8} {:>10}  {}\n", "kernel",
                                 name_w, "inputs", shape_w, "as lowered", "default", "tuned",
                                 "speedup", "GFLOP/s", "candidates");
  for (const auto& t : r.tasks) {
    const tune::SearchResult& s = t.result;
    double best = t.best_seconds;
    int failed = 0, reused = 0;
    for (const auto& c : s.candidates) {
      if (c.from_database) ++reused;
      else if (!c.ok) ++failed;
    }
    std::string speedup = best > 0 && t.naive_seconds > 0 ? fmt::format("{:.1f}x", t.naive_seconds / best) : "-";
    std::string rate = best > 0 ? fmt::format("{:.3g}", t.flops / best / 1e9) : "-";
    std::string count = fmt::format("{} measured", s.candidates.size() - size_t(reused));
    if (failed) count += fmt::format(", {} failed", failed);
    if (reused) count += fmt::format(", {} from the database", reused);
    text += fmt::format("{:<{}} {:<{}} {:>12} {:>12} {:>12} {:>8} {:>10}  {}\n", t.kernel, name_w,
                        t.shape, shape_w, ms(t.naive_seconds), ms(t.default_seconds), ms(best),
                        speedup, rate, count);
  }
  for (const auto& t : r.tasks) {
    const tune::SearchResult& s = t.result;
    if (t.best_trace.empty()) {
      text += fmt::format("\n{}: no candidate built and matched the reference\n", t.kernel);
      for (const auto& c : s.candidates)
        if (!c.ok) {
          text += "  first failure: " + c.error + "\n";
          break;
        }
      continue;
    }
    text += fmt::format("\nbest schedule for {} ({}){}:\n", t.kernel, t.shape,
                        t.best_is_default ? ", the default one: no candidate beat it" : "");
    std::string trace = t.best_trace;
    size_t at = 0;
    while (at < trace.size()) {
      size_t end = trace.find('\n', at);
      if (end == std::string::npos) end = trace.size();
      text += "  " + trace.substr(at, end - at) + "\n";
      at = end + 1;
    }
    for (const auto& c : t.compared) {
      if (!c.error.empty()) text += fmt::format("compared with {}: {}\n", c.name, c.error);
      else if (t.best_seconds <= 0) text += fmt::format("compared with {}: {}\n", c.name, ms(c.seconds));
      else
        text += fmt::format("compared with {}: {} ({})\n", c.name, ms(c.seconds),
                            speed_versus_tuned(c.seconds / t.best_seconds));
    }
    if (s.ranked > 0)
      text += fmt::format("cost model: rank correlation {:.2f} between its scores and the measured "
                          "speeds of the {} candidates it ranked before they ran\n",
                          s.rank_correlation, s.ranked);
    if (!s.model_error.empty()) text += "cost model: " + s.model_error + "\n";
  }
  text += fmt::format("\n{} on {}, {} trials per kernel; ", request.strategy, request.device, request.trials);
  text += r.database.empty() ? std::string("records kept in this session only\n")
                             : "records appended to " + r.database + "\n";
  return text;
}

std::string timing_report(const Outcome& o, const std::string& engine) {
  std::string text = fmt::format("[{}] compile {:.3f} ms, run {:.3f} ms, {} steps\n", engine,
                                 o.compile_seconds * 1e3, o.run_seconds * 1e3, o.steps);
  // The names' column: 18 wide, or as wide as the longest name (the JIT's tier lines).
  size_t width = 18;
  for (const auto& s : o.stages) width = std::max(width, s.stage.size() + 2 * size_t(s.depth));
  for (const auto& s : o.stages) {
    std::string indent(size_t(2 + 2 * s.depth), ' ');
    // A negative time: none to show (the JIT's -O2 code still in the making at the end).
    text += s.seconds < 0
                ? fmt::format("{}{:<{}} {:>10}\n", indent, s.stage, width - 2 * size_t(s.depth), "-")
                : fmt::format("{}{:<{}} {:>10.3f} ms\n", indent, s.stage, width - 2 * size_t(s.depth),
                              s.seconds * 1e3);
    if (s.stage != "kernels") continue;
    for (size_t i = 0; i < o.launches.size(); ++i) {
      const auto& r = o.launches[i];
      text += fmt::format("      {:<14} {:>10.3f} ms  #{} on {}{}\n", r.kernel, r.seconds * 1e3,
                          i + 1, r.device, r.compiled ? ", compiled" : "");
    }
    if (o.launch_totals.count > o.launches.size())
      text += fmt::format("      ... and {} more launches ({} in all; the log keeps the first {})\n",
                          o.launch_totals.count - o.launches.size(), o.launch_totals.count,
                          o.launches.size());
  }
  return text;
}

void LaunchLog::output(std::string_view text) {
  if (text.empty()) return;
  mid_line_ = text.back() != '\n';
  if (!mid_line_ && !waiting_.empty()) {
    write_(waiting_);
    waiting_.clear();
  }
}

void LaunchLog::launch(const tensor::LaunchRecord& r) {
  std::string line = launch_line(r, ++count_);
  if (mid_line_) waiting_ += line;
  else write_(line);
}

void LaunchLog::finish(const Outcome& o) {
  if (!waiting_.empty()) write_(waiting_);
  waiting_.clear();
  if (level_ == 1) {
    std::string summary = launch_summary(o.launch_totals);
    if (!summary.empty()) write_(summary);
  }
}

const std::vector<Repl::Command>& Repl::command_table() {
  // A handler is a one-line lambda here (in a member, a lambda may use the Repl's private
  // parts) or a member function, handled_by<&Repl::NAME_command>, in the file of its concern:
  // repl_scalar.cpp (views of the last input), repl_session.cpp (settings and runs),
  // repl_kernel.cpp (kernels, schedules, the graph, tuning).
  static const std::vector<Command> before = {
      {":help", "", "this list", handled_by<&Repl::help_command>},
      {":tokens", "", "the tokens of the last input",
       [](Repl& r, const Call&) { r.show_stage("tokens", Format::Text); }},
      {":ast", "[sexpr|dot]", "the checked syntax tree of the last input",
       [](Repl& r, const Call& c) { r.show_formatted(c, "ast"); },
       first<format_names>},
      {":folded", "[sexpr|dot]", "the tree after the fold_constants pass",
       [](Repl& r, const Call& c) { r.show_formatted(c, "ast-folded"); },
       first<format_names>},
      {":stack", "[fused] [FUNCTION]",
       "stack bytecode of the last input, or of a function (fused: what the VM runs)",
       [](Repl& r, const Call& c) {
         std::string fn;
         std::string fused = r.code_args(c, {"fused"}, &fn);
         if (fused != "?") r.show_stage(fused.empty() ? "stack" : "stack-fused", Format::Text, fn);
       },
       [](const Session& s, const Words& w) { return code_view(s, w, {"fused"}); }},
      {":reg", "[alloc|fused|live] [FUNCTION]",
       "register bytecode: virtual, allocated, fused (what runs), live intervals",
       handled_by<&Repl::reg_command>,
       [](const Session& s, const Words& w) { return code_view(s, w, {"alloc", "fused", "live"}); }},
      {":native", "[dag|legal|combine|isel|sched|regalloc|asm|patterns] [x86-64|aarch64 ...] [FUNCTION]",
       "the native backend's stages for the last input or a function (default: asm; patterns: isel's table), "
       "for the target (x86-64 here) or the targets named, one after the other",
       handled_by<&Repl::native_command>,
       [](const Session& s, const Words& w) {
         return code_view(s, w, {"dag", "legal", "combine", "isel", "sched", "regalloc", "asm", "patterns",
                                 "x86-64", "aarch64"});
       }},
      {":registers", "[N]", "show or set the register VM's register file size (3..250)",
       handled_by<&Repl::registers_command>},
      {":trace", "", "toggle tracing every instruction the VMs (stack, reg) execute",
       handled_by<&Repl::trace_command>},
      {":analyze", "[DOMAIN] [states|multiply] [explain] [unroll=N] [contexts|summaries]",
       "abstract interpretation of the last input: facts per line and alarms (states: per block; explain: how each loop "
       "and function was solved; summaries: one summary per function instead of each call's context)",
       handled_by<&Repl::analyze_command>,
       [](const Session&, const Words& w) {
         Words v = {"states", "multiply", "explain", "unroll=", "contexts", "summaries"};
         for (auto d : analysis::all_domains()) v.push_back(analysis::domain_name(d));
         return w.size() <= 2 ? v : Words{};
       }},
      {":cfg", "[dot]", "the control-flow graph of the last input (what :analyze walks)",
       [](Repl& r, const Call& c) { r.show_formatted(c, "cfg"); },
       first<format_names>},
      {":compare", "", "run the last input on every engine: output, steps, time",
       [](Repl& r, const Call&) { r.compare(); }},
      {":llvm", "[opt] [FUNCTION]",
       "LLVM IR of the last input or a function (opt: after the -O pipeline)",
       [](Repl& r, const Call& c) {
         std::string fn;
         std::string opt = r.code_args(c, {"opt"}, &fn);
         if (opt != "?") r.show_stage(opt.empty() ? "llvm" : "llvm-opt", Format::Text, fn);
       },
       [](const Session& s, const Words& w) { return code_view(s, w, {"opt"}); }},
      {":passes", "[llvm]", "the passes that ran on the last input (llvm: each LLVM pass)",
       [](Repl& r, const Call& c) { r.show_passes(c.words.size() > 1 && c.words[1] == "llvm"); },
       [](const Session&, const Words& w) { return w.size() == 1 ? Words{"llvm"} : Words{}; }},
      {":diff", "PASS_A PASS_B", "how the IR changed between two passes (names from :passes)",
       handled_by<&Repl::diff_command>,
       [](const Session& s, const Words& w) {
         Words v;
         if (w.size() < 3)
           for (const auto& p : s.passes()) v.push_back(p.name);
         return v;
       }},
      {":asm", "[TARGET] [FUNCTION] [directives] [no-encodings] [run]",
       "assembly with encodings (x86-64, aarch64, riscv64, wasm32); directives: with .text, .cfi_*, ...; "
       "run: link the last input for TARGET and run it (another architecture under qemu-user)",
       [](Repl& r, const Call& c) { r.show_machine(c, "asm", {"directives", "no-encodings", "run"}); },
       [](const Session& s, const Words& w) {
         return code_view(s, w, plus({"directives", "no-encodings", "run"}, target_names()));
       }},
      {":mir", "[regalloc] [TARGET] [FUNCTION]", "machine IR after isel, or after register allocation",
       [](Repl& r, const Call& c) { r.show_machine(c, "mir", {"regalloc"}); },
       [](const Session& s, const Words& w) {
         return code_view(s, w, plus({"regalloc"}, target_names()));
       }},
      {":target", "[NAME]",
       "show or set the target (x86-64: this machine, aarch64, riscv64, wasm32) of the machine-code views, "
       ":asm run and :engine native (aarch64: run under qemu-aarch64)",
       [](Repl& r, const Call& c) {
         std::string error;
         if (c.words.size() > 1 && !r.session_.set_target(c.words[1], &error)) {
           r.err_ << "error: " << error << '\n';
           return;
         }
         r.out_ << "target " << (r.session_.target().empty() ? "this machine" : r.session_.target()) << '\n';
       },
       first<target_names>},
      {":opt", "[N]", "show or set the -O level (0..3) of the LLVM views and the jit",
       handled_by<&Repl::opt_command>},
      {":stages", "", "every stage the pipeline can show",
       [](Repl& r, const Call&) {
         for (const auto& s : Session::stages())
           r.out_ << fmt::format("  {:<12} {}\n", s.name, s.description);
       }},
      {":stage", "NAME [FORMAT] [FUNCTION]",
       "any stage by name (formats: text, sexpr, dot; a function for code stages)",
       handled_by<&Repl::stage_command>,
       [](const Session& s, const Words& w) {
         if (w.size() == 1) return stage_names(s, w);
         Words fns = Session::stage_takes_function(w[1]) ? function_names(s) : Words{};
         return w.size() == 2 ? plus(format_names(), fns) : w.size() == 3 ? fns : Words{};
       }},
      {":engine", "[NAME]", "show or choose the engine that runs input",
       handled_by<&Repl::engine_command>,
       first<Session::engines>},
      {":time", "", "toggle timing of each input, stage by stage and kernel by kernel",
       [](Repl& r, const Call&) {
         r.time_ = !r.time_;
         r.out_ << "timing " << (r.time_ ? "on" : "off") << '\n';
       }},
      {":debug", "[0|1|2|off]",
       "show or set the kernel launch log: 1 a summary per input, 2 a line per launch",
       handled_by<&Repl::debug_command>,
       [](const Session&, const Words& w) {
         return w.size() == 1 ? Words{"0", "1", "2", "off"} : Words{};
       }},
      {":load", "FILE", "compile and run a .ds file in this session",
       handled_by<&Repl::load_command>},
      {":device", "[DEVICE]",
       "show the tensor devices (ref, cpu, opencl, ...) or choose where kernels run",
       handled_by<&Repl::device_command>,
       first<device_names>},
      {":memory", "[LIMIT]",
       "tensor memory: live tensors, bytes, peak, collections; LIMIT (512M, 2G) caps one tensor",
       [](Repl& r, const Call& c) {
         std::string error;
         if (c.words.size() < 2) r.out_ << r.session_.memory_report();
         else if (!r.session_.set_tensor_limit(c.words[1], &error)) r.err_ << "error: " << error << '\n';
       }},
      {":graph", "[pending|backward|before|PASS|executed] [dot]",
       "the tensor dataflow graph of the last evaluation",
       handled_by<&Repl::graph_command>,
       [](const Session& s, const Words&) {
         Words v = {"pending", "backward", "before", "executed", "dot"};
         for (const auto& p : s.passes())
           if (p.stage == "graph") v.push_back(p.name.substr(6));  // "graph.fuse_..." -> "fuse_..."
         return v;
       }},
      // :kernel, :schedules, :tir, :c, :opencl, :view and :sched: repl_kernel.cpp
  };
  static const std::vector<Command> t = [] {
    std::vector<Command> all = before;
    for (const Command& c : kernel_commands()) all.push_back(c);
    std::vector<Command> after = {
      {":tune", "[all|KERNEL] [n=SIZE ...] [strategy=S] [trials=N] [device=D] [db=FILE]",
       "search a schedule, measuring candidates (the selected kernel, a named one, or all the last run launched)",
       handled_by<&Repl::tune_command>,
       kernel_names},
      {":defaults", "[on|off]",
       "kernels nobody scheduled run with the rule-based default schedule on cpu and OpenCL (on), or as lowered (off)",
       handled_by<&Repl::defaults_command>},
      {":tuned", "[FILE|off]", "use a tuning database's best records for kernels nobody scheduled",
       handled_by<&Repl::tuned_command>},
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
       handled_by<&Repl::run_command>,
       first<device_names>},
      {":quit", "", "leave (Ctrl-D works too)", [](Repl& r, const Call&) { r.quit_ = true; },
       nullptr, {":q", ":exit"}},
    };
    all.insert(all.end(), after.begin(), after.end());
    return all;
  }();
  return t;
}

void Repl::help_command(const Call&) {
  out_ << "Type Descent statements; an expression's value is echoed. Commands:\n";
  size_t name_w = 0, args_w = 0;
  for (const auto& k : command_table()) {
    name_w = std::max(name_w, std::strlen(k.name));
    args_w = std::max(args_w, std::min<size_t>(std::strlen(k.args), 30));
  }
  for (const auto& k : command_table())
    out_ << fmt::format("  {:<{}} {:<{}} {}\n", k.name, name_w, k.args, args_w, k.help);
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
  std::vector<std::string> w = split_words(before);
  if (!w.empty() && w[0][0] == ':' && !continuing()) {
    // A command's next word: what that command takes there, and nothing else.
    for (const auto& k : command_table())
      if (w[0] == k.name && k.arguments) pool = k.arguments(session_, w);
  } else if (w.empty() && !prefix.empty() && prefix[0] == ':' && !continuing()) {
    pool = commands();
  } else {
    // Code: names and keywords; what can be called completes with its '(' (as Python's
    // rlcompleter does), so `fi` becomes `fib(` and the call reads as typed.
    std::vector<std::string> globals;
    for (const auto& g : session_.module().globals) globals.push_back(g.name);
    for (auto& n : session_.known_names())
      pool.push_back(std::find(globals.begin(), globals.end(), n) != globals.end() ? n : n + "(");
    for (std::string_view kw : keywords()) pool.emplace_back(kw);
    // Type names are identifiers to the lexer, and only these three are whole words.
    for (Type t : {Type::Int, Type::Float, Type::Bool}) pool.push_back(type_name(t));
    std::sort(pool.begin(), pool.end());
  }
  // In the list's own order (engines and devices as the registry has them), each once.
  std::vector<std::string> out;
  for (auto& p : pool)
    if (p.compare(0, prefix.size(), prefix) == 0 &&
        std::find(out.begin(), out.end(), p) == out.end())
      out.push_back(p);
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
  // Launch lines go where notes go (err_), after the program output before them.
  LaunchLog log(debug_, [this](std::string_view s) { err_ << s << std::flush; });
  opts.out = [this, &log](std::string_view s) {
    out_ << s;
    out_.flush();
    log.output(s);
  };
  if (trace_) opts.trace = [this](std::string_view s) { out_ << "  | " << s; };
  if (debug_ >= 2) session_.set_launch_observer([&log](const tensor::LaunchRecord& r) { log.launch(r); });
  Outcome o = session_.submit(text, name, opts);
  session_.set_launch_observer(nullptr);
  log.finish(o);
  // Say once per engine choice that tensor code ran on the walker, not every line.
  if (!o.note.empty() && noted_engine_ != session_.engine()) {
    err_ << "note: " << o.note << '\n';
    noted_engine_ = session_.engine();
  }
  for (const auto& n : o.notes) err_ << "note: " << n << '\n';
  if (o.status != Outcome::Ok) err_ << o.message << std::flush;
  if (time_) out_ << timing_report(o, session_.engine());
}

std::string Repl::usage(const std::string& name) {
  for (const auto& k : command_table())
    if (name == k.name) return k.args;
  return "";
}

bool Repl::command(const std::string& text) {
  // A '#' starts a comment, as in programs (":device cpu   # kernels now run compiled").
  std::string line = text.substr(0, text.find('#'));
  std::vector<std::string> w = split_words(line);
  for (const auto& k : command_table()) {
    bool match = w[0] == k.name;
    for (const char* a : k.aliases) match |= w[0] == a;
    if (!match) continue;
    // The usage text is the spec: as many words as it names, any number after "...".
    size_t max = split_words(k.args).size();
    if (w.size() > max + 1 && std::string_view(k.args).find("...") == std::string_view::npos) {
      err_ << "error: " << k.name << " takes " << (max == 0 ? "no" : "at most " + std::to_string(max))
           << " argument" << (max == 1 ? "" : "s") << ", not '" << w[max + 1] << "' (usage: " << k.name
           << (max ? " " : "") << k.args << ")\n";
    } else {
      k.run(*this, Call{w, line});
    }
    out_.flush();
    return !quit_;
  }
  std::string guess = closest_name(w[0], commands());
  err_ << "error: unknown command '" << w[0] << "' ("
       << (guess.empty() ? "" : "did you mean " + guess + "? ") << "try :help)\n";
  out_.flush();
  return true;
}

}  // namespace descent
