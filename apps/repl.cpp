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
}  // namespace

std::string launch_line(const tensor::LaunchRecord& r, size_t number) {
  return fmt::format("[launch {}] {} on {} ({}): {:.4g} ms, {:.4g} GFLOP/s, {:.4g} GB/s, {}\n",
                     number, r.kernel, r.device, r.device_name, r.seconds * 1e3, r.gflops(),
                     r.gbs(),
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
        text += fmt::format("compared with {}: {} ({:.2f}x the tuned time)\n", c.name,
                            ms(c.seconds), c.seconds / t.best_seconds);
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
  for (const auto& s : o.stages) {
    std::string indent(size_t(2 + 2 * s.depth), ' ');
    text += fmt::format("{}{:<{}} {:>10.3f} ms\n", indent, s.stage, 18 - 2 * s.depth,
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
  // The handlers are lambdas here so that they may use the Repl's private parts.
  static const std::vector<Command> before = {
      {":help", "", "this list",
       [](Repl& r, const Call&) {
         r.out_ << "Type Descent statements; an expression's value is echoed. Commands:\n";
         size_t name_w = 0, args_w = 0;
         for (const auto& k : command_table()) {
           name_w = std::max(name_w, std::strlen(k.name));
           args_w = std::max(args_w, std::min<size_t>(std::strlen(k.args), 30));
         }
         for (const auto& k : command_table())
           r.out_ << fmt::format("  {:<{}} {:<{}} {}\n", k.name, name_w, k.args, args_w, k.help);
       }},
      {":tokens", "", "the tokens of the last input",
       [](Repl& r, const Call&) { r.show_stage("tokens", Format::Text); }},
      {":ast", "[sexpr|dot]", "the checked syntax tree of the last input",
       [](Repl& r, const Call& c) {
         Format f = Format::Text;
         if (format_arg(r.err_, c.words, 1, &f)) r.show_stage("ast", f);
       },
       first<format_names>},
      {":folded", "[sexpr|dot]", "the tree after the fold_constants pass",
       [](Repl& r, const Call& c) {
         Format f = Format::Text;
         if (format_arg(r.err_, c.words, 1, &f)) r.show_stage("ast-folded", f);
       },
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
       [](Repl& r, const Call& c) {
         std::string fn;
         std::string which = r.code_args(c, {"alloc", "fused", "live"}, &fn);
         if (which == "?") return;
         r.show_stage(which.empty()   ? "reg"
                      : which == "alloc" ? "reg-alloc"
                      : which == "fused" ? "reg-fused"
                                         : "live",
                      Format::Text, fn);
       },
       [](const Session& s, const Words& w) { return code_view(s, w, {"alloc", "fused", "live"}); }},
      {":native", "[dag|legal|combine|isel|sched|regalloc|asm|patterns] [FUNCTION]",
       "the native backend's stages for the last input or a function (default: asm; patterns: isel's table)",
       [](Repl& r, const Call& c) {
         std::string fn;
         std::string which =
             r.code_args(c, {"dag", "legal", "combine", "isel", "sched", "regalloc", "asm", "patterns"}, &fn);
         if (which == "?") return;
         if (which == "patterns" && fn.empty()) {  // the table, not a view of code
           r.show_stage("native-patterns", Format::Text);
           return;
         }
         r.show_stage("native-" + (which.empty() ? std::string("asm") : which), Format::Text, fn);
       },
       [](const Session& s, const Words& w) {
         return code_view(s, w, {"dag", "legal", "combine", "isel", "sched", "regalloc", "asm", "patterns"});
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
      {":trace", "", "toggle tracing every instruction the VMs (stack, reg) execute",
       [](Repl& r, const Call&) {
         r.trace_ = !r.trace_;
         r.out_ << "trace " << (r.trace_ ? "on" : "off") << '\n';
         if (r.trace_) r.note_untraced();
       }},
      {":analyze", "[constants|signs|intervals|product] [states|multiply]",
       "abstract interpretation of the last input: facts per line and alarms (states: per block)",
       [](Repl& r, const Call& c) {
         std::string view = "analysis";
         for (size_t i = 1; i < c.words.size(); ++i) {
           analysis::Domain d;
           if (analysis::parse_domain(c.words[i], &d)) r.session_.set_analysis_domain(d);
           else if (c.words[i] == "states") view = "analysis-cfg";
           else if (c.words[i] == "multiply") view = "analysis-mul";
           else {
             r.err_ << "error: usage: :analyze [constants|signs|intervals|product] [states|multiply]\n";
             return;
           }
         }
         r.show_stage(view, Format::Text);
       },
       [](const Session&, const Words& w) {
         Words v = {"states", "multiply"};
         for (auto d : analysis::all_domains()) v.push_back(analysis::domain_name(d));
         return w.size() <= 2 ? v : Words{};
       }},
      {":cfg", "[dot]", "the control-flow graph of the last input (what :analyze walks)",
       [](Repl& r, const Call& c) {
         Format f = Format::Text;
         if (format_arg(r.err_, c.words, 1, &f)) r.show_stage("cfg", f);
       },
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
       [](Repl& r, const Call& c) {
         if (c.words.size() < 3) {
           r.err_ << "error: usage: :diff PASS_A PASS_B (see :passes)\n";
           return;
         }
         StageResult d = r.session_.diff_passes(c.words[1], c.words[2]);
         if (d.ok) r.out_ << d.text;
         else r.err_ << "error: " << d.text << '\n';
       },
       [](const Session& s, const Words& w) {
         Words v;
         if (w.size() < 3)
           for (const auto& p : s.passes()) v.push_back(p.name);
         return v;
       }},
      {":asm", "[TARGET] [FUNCTION] [directives] [no-encodings]",
       "assembly with encodings (x86-64, aarch64, riscv64, wasm32); directives: with .text, .cfi_*, ...",
       [](Repl& r, const Call& c) { r.show_machine(c, "asm", {"directives", "no-encodings"}); },
       [](const Session& s, const Words& w) {
         return code_view(s, w, plus({"directives", "no-encodings"}, target_names()));
       }},
      {":mir", "[regalloc] [TARGET] [FUNCTION]", "machine IR after isel, or after register allocation",
       [](Repl& r, const Call& c) { r.show_machine(c, "mir", {"regalloc"}); },
       [](const Session& s, const Words& w) {
         return code_view(s, w, plus({"regalloc"}, target_names()));
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
      {":stage", "NAME [FORMAT] [FUNCTION]",
       "any stage by name (formats: text, sexpr, dot; a function for code stages)",
       [](Repl& r, const Call& c) {
         const auto& w = c.words;
         Format f = Format::Text;
         std::string fn = w.size() > 3 ? w[3] : "";
         if (w.size() < 2)
           r.err_ << "error: usage: :stage NAME [text|sexpr|dot] [FUNCTION] (see :stages)\n";
         else if (w.size() == 3 && !parse_format(w[2], &f))
           r.show_stage(w[1], f, w[2]);  // :stage reg-alloc fib
         else if (format_arg(r.err_, w, 2, &f))
           r.show_stage(w[1], f, fn);
       },
       [](const Session& s, const Words& w) {
         if (w.size() == 1) return stage_names(s, w);
         Words fns = Session::stage_takes_function(w[1]) ? function_names(s) : Words{};
         return w.size() == 2 ? plus(format_names(), fns) : w.size() == 3 ? fns : Words{};
       }},
      {":engine", "[NAME]", "show or choose the engine that runs input",
       [](Repl& r, const Call& c) {
         if (c.words.size() < 2) {
           r.out_ << "engine: " << r.session_.engine() << " (engines:";
           for (auto& e : Session::engines()) r.out_ << ' ' << e;
           r.out_ << ")\n";
         } else if (!r.session_.set_engine(c.words[1])) {
           std::string guess = closest_name(c.words[1], Session::engines());
           r.err_ << "error: unknown engine '" << c.words[1] << "' ("
                  << (guess.empty() ? "" : "did you mean '" + guess + "'? ") << "engines:";
           for (auto& e : Session::engines()) r.err_ << ' ' << e;
           r.err_ << ")\n";
         } else if (r.trace_) {
           r.note_untraced();
         }
       },
       first<Session::engines>},
      {":time", "", "toggle timing of each input, stage by stage and kernel by kernel",
       [](Repl& r, const Call&) {
         r.time_ = !r.time_;
         r.out_ << "timing " << (r.time_ ? "on" : "off") << '\n';
       }},
      {":debug", "[0|1|2|off]",
       "show or set the kernel launch log: 1 a summary per input, 2 a line per launch",
       [](Repl& r, const Call& c) {
         std::string error;
         if (c.words.size() < 2)
           r.out_ << "debug " << r.debug_ << '\n';
         else if (!parse_debug_level(c.words[1], &r.debug_, &error))
           r.err_ << "error: " << error << '\n';
       },
       [](const Session&, const Words& w) {
         return w.size() == 1 ? Words{"0", "1", "2", "off"} : Words{};
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
       first<device_names>},
      {":memory", "[LIMIT]",
       "tensor memory: live tensors, bytes, peak, collections; LIMIT (512M, 2G) caps one tensor",
       [](Repl& r, const Call& c) {
         std::string error;
         if (c.words.size() < 2) r.out_ << r.session_.memory_report();
         else if (!r.session_.set_tensor_limit(c.words[1], &error)) r.err_ << "error: " << error << '\n';
       }},
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
       },
       [](const Session& s, const Words&) {
         Words v = {"pending", "before", "executed", "dot"};
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
       [](Repl& r, const Call& c) {
         Session::TuneRequest req;
         req.device = r.session_.device() == "ref" ? "cpu" : r.session_.device();
         std::vector<std::string> dim_words;
         bool all = false;
         for (size_t i = 1; i < c.words.size(); ++i) {
           const std::string& w = c.words[i];
           size_t eq = w.find('=');
           std::string key = w.substr(0, eq), value = eq == std::string::npos ? "" : w.substr(eq + 1);
           try {
             if (eq == std::string::npos && i == 1) {
               if (w == "all") all = true;
               else req.kernel = w;
             } else if (key == "strategy") req.strategy = value;
             else if (key == "trials") req.trials = std::stoi(value);
             else if (key == "seed") req.seed = std::stoull(value);
             else if (key == "device") req.device = value;
             else if (key == "db") req.database = value;
             else dim_words.push_back(w);
           } catch (const std::exception&) {
             r.err_ << "error: '" << w << "' needs a number\n";
             return;
           }
         }
         if (!all && req.kernel.empty() && !r.session_.selected_kernel().empty()) {
           req.kernel = r.session_.selected_kernel();
           req.dims = r.session_.selected_kernel_dims();
         }
         std::string error;
         if (!Session::parse_dims(dim_words, &req.dims, &error)) {
           r.err_ << "error: " << error << '\n';
           return;
         }
         Session::TuneReport rep = r.session_.tune(req, [&r](const std::string& line) {
           r.out_ << line << '\n';
           r.out_.flush();
         });
         if (!rep.ok) {
           r.err_ << "error: " << rep.error << '\n';
           return;
         }
         r.out_ << tune_report(rep, req);
         r.out_ << "the kernels run tuned from now on on " << req.device
                << (req.kernel == r.session_.selected_kernel() && !req.kernel.empty()
                        ? " (:sched auto puts the best schedule under the microscope)\n"
                        : "\n");
       },
       kernel_names},
      {":defaults", "[on|off]",
       "kernels nobody scheduled run with the rule-based default schedule on cpu and OpenCL (on), or as lowered (off)",
       [](Repl& r, const Call& c) {
         if (c.words.size() > 1 && c.words[1] != "on" && c.words[1] != "off") {
           r.err_ << "error: usage: :defaults on|off\n";
           return;
         }
         if (c.words.size() > 1) r.session_.set_default_schedules(c.words[1] == "on");
         r.out_ << "default schedules: " << (r.session_.default_schedules() ? "on" : "off") << '\n';
       }},
      {":tuned", "[FILE|off]", "use a tuning database's best records for kernels nobody scheduled",
       [](Repl& r, const Call& c) {
         if (c.words.size() > 1) r.session_.set_tuning_database(c.words[1] == "off" ? "" : c.words[1]);
         for (const auto& p : r.session_.tuning_problems()) r.err_ << "warning: " << p << '\n';
         r.out_ << "tuning database: "
                << (r.session_.tuning_database().empty() ? std::string("none")
                                                         : r.session_.tuning_database())
                << " (" << r.session_.tuning_records() << " records)\n";
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
       first<device_names>},
      {":quit", "", "leave (Ctrl-D works too)", [](Repl& r, const Call&) { r.quit_ = true; },
       nullptr, {":q", ":exit"}},
    };
    all.insert(all.end(), after.begin(), after.end());
    return all;
  }();
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
    // The jit counts no steps: "-", not a 0 that reads as "did nothing".
    std::string steps = c.outcome.steps ? std::to_string(c.outcome.steps) : "-";
    out_ << fmt::format("{:<7} {:>12} {:>8.3f} ms  {}\n", c.engine, steps,
                        c.outcome.run_seconds * 1e3, result);
  }
  out_ << "output (" << runs.front().engine << "):\n" << ref;
}

void Repl::show_stage(const std::string& stage, Format format, const std::string& function) {
  StageResult r = session_.stage(stage, format, function);
  if (r.ok)
    out_ << r.text << std::flush;
  else
    err_ << "error: " << r.text << '\n';
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

void Repl::note_untraced() {
  if (!Session::engine_traces(session_.engine()))
    err_ << "note: the " << session_.engine()
         << " engine does not trace; the stack and reg VMs do (:engine stack)\n";
}

void Repl::show_kernel(const std::string& view) {
  StageResult r = session_.kernel_view(view);
  if (r.ok) out_ << r.text;
  else err_ << "error: " << r.text << '\n';
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
