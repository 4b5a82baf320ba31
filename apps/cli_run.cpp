// `descent run`, `descent dump` and `descent build`: one program given to the pipeline, and
// run, shown stage by stage, or compiled to an object file. Apart from main.cpp so that each
// subcommand's options sit beside what is done with them (cli_internal.h lists the others).
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "analysis/eva.h"
#include "proc/process.h"
#include "apps/cli_internal.h"
#include "apps/repl.h"
#include "bench/plot.h"
#include "lang/text.h"

namespace descent::cli {
namespace {

// -O and --target, as the command line gave them: a bad one is a usage error.
int apply_opt_and_target(Session& session, int opt, const std::string& target) {
  if (!session.set_opt_level(opt)) {
    fmt::print(stderr, "error: -O takes 0, 1, 2 or 3\n");
    return kUsageError;
  }
  if (std::string error; !target.empty() && !session.set_target(target, &error)) {
    fmt::print(stderr, "error: {}\n", error);
    return kUsageError;
  }
  return 0;
}

int apply_registers(Session& session, int registers) {
  if (!session.set_num_registers(registers)) {
    fmt::print(stderr, "error: --registers must be 3 to 250\n");
    return kUsageError;
  }
  return 0;
}

// --domain of dump and analyze: the domains' names, and the one named (false, after saying
// which there are, for another name).
std::string domain_names() {
  std::vector<std::string> names;
  for (auto d : analysis::all_domains()) names.push_back(analysis::domain_name(d));
  return join(names);
}

bool domain_or_say(const std::string& name, analysis::Domain* d) {
  if (analysis::parse_domain(name, d)) return true;
  fmt::print(stderr, "error: unknown domain '{}' (domains: {})\n", name, domain_names());
  return false;
}

// ---- descent run FILE ----
struct RunArgs {
  std::string file, engine = "ast", debug_level = "0", device = "ref", tensor_limit, plot, target;
  std::vector<std::string> plot_of = {"loss"};
  bool time = false, trace = false, no_tiers = false;
  int registers = 16, threads = 0, opt = 2;
  CLI::Option* registers_option = nullptr;  // given or not: a note when the engine ignores it
  TunedOptions tuned;
};

int run_program(Session& session, const RunArgs& a) {
  if (int rc = apply_opt_and_target(session, a.opt, "")) return rc;
  if (int rc = apply_registers(session, a.registers)) return rc;
  session.set_jit_tiers(!a.no_tiers);
  if (!session.set_engine(a.engine)) {
    fmt::print(stderr, "error: unknown engine '{}' (engines: {})\n", a.engine, join(Session::engines()));
    return kUsageError;
  }
  std::string error;
  // --target with --engine native: the machine the native backend writes code for (aarch64
  // runs under qemu-user).
  if (!a.target.empty()) {
    if (a.engine != "native") {
      fmt::print(stderr, "error: --target applies to --engine native (use descent build --target for the LLVM tier)\n");
      return kUsageError;
    }
    if (!session.set_native_target(a.target, &error)) {
      fmt::print(stderr, "error: --target: {}\n", error);
      return kUsageError;
    }
  }
  if (!session.set_device(a.device, &error)) {
    fmt::print(stderr, "error: --device: {}\n", error);
    return kUsageError;
  }
  session.set_threads(a.threads);
  if (!apply_tuned_options(session, a.tuned)) return kUsageError;
  if (!a.tensor_limit.empty() && !session.set_tensor_limit(a.tensor_limit, &error)) {
    fmt::print(stderr, "error: --tensor-limit: {}\n", error);
    return kUsageError;
  }
  std::string text;
  if (!read_or_say(a.file, &text)) return 2;
  RunOptions opts;
  int debug = 0;
  std::string debug_error;
  if (!parse_debug_level(a.debug_level, &debug, &debug_error)) {
    fmt::print(stderr, "error: --debug: {}\n", debug_error);
    return kUsageError;
  }
  // Launch lines on stderr, after the program output before them (flushed first).
  LaunchLog log(debug, [](std::string_view s) {
    std::fflush(stdout);
    std::fwrite(s.data(), 1, s.size(), stderr);
  });
  bool trace = a.trace;
  std::string printed;  // for --plot: what the program printed, kept as it goes
  bool keep = !a.plot.empty();
  opts.out = [&log, trace, keep, &printed](std::string_view s) {
    std::fwrite(s.data(), 1, s.size(), stdout);
    if (keep && printed.size() < (64u << 20)) printed += s;
    // Trace lines go to stderr unbuffered; flushed, the output keeps its place among them
    // when both are piped into one stream.
    if (trace) std::fflush(stdout);
    log.output(s);
  };
  if (debug >= 2) session.set_launch_observer([&log](const tensor::LaunchRecord& r) { log.launch(r); });
  if (trace) opts.trace = [](std::string_view s) { std::fwrite(s.data(), 1, s.size(), stderr); };
  // Options the chosen engine would ignore: say so rather than print nothing.
  if (trace && !Session::engine_traces(a.engine))
    fmt::print(stderr, "note: the {} engine does not trace; --trace needs --engine stack or --engine reg\n", a.engine);
  if (a.registers_option->count() && a.engine != "reg")
    fmt::print(stderr, "note: --registers sizes the register VM's file; it has no effect without --engine reg\n");
  Outcome o = session.submit(std::move(text), a.file, opts);
  std::fflush(stdout);
  log.finish(o);
  if (!o.note.empty()) fmt::print(stderr, "note: {}\n", o.note);
  for (const auto& n : o.notes) fmt::print(stderr, "note: {}\n", n);
  if (o.status != Outcome::Ok) fmt::print(stderr, "{}", o.message);
  if (a.time) fmt::print(stderr, "{}", timing_report(o, session.engine()));
  // The curve of what was printed, also after an error: the epochs that ran are not lost.
  if (!a.plot.empty()) {
    bench::XYPanel panel;
    bench::Image image;
    if (!bench::output_panel(printed, a.plot_of, a.file, &panel, &error) ||
        !bench::render_panels(a.file, bench::host_description(), {panel}, 1200, 700, &image, &error) ||
        !bench::write_png(image, a.plot, &error)) {
      fmt::print(stderr, "error: --plot: {}\n", error);
      return o.status == Outcome::Ok ? 1 : o.exit_code();
    }
    fmt::print(stderr, "wrote {}\n", a.plot);
  }
  return o.exit_code();
}

// ---- descent dump FILE --stage S ----
struct DumpArgs {
  std::string file, stage, format = "text", target, function, domain = "product";
  int unroll = analysis::Options{}.unroll;
  bool explain = false, no_thresholds = false, no_contexts = false;
  std::string stage_help;                 // "one of: tokens ast ...", for an unknown stage
  std::vector<std::string> diff_pair;
  int registers = 16, opt = 2;
  bool no_encodings = false, directives = false;
};

// The analysis settings `dump --stage analysis` and `analyze` share, onto the Session.
template <typename Args>
void apply_analysis_flags(Session& session, const Args& a) {
  session.set_analysis_unroll(a.unroll);
  session.set_analysis_thresholds(!a.no_thresholds);
  session.set_analysis_contexts(!a.no_contexts);
  session.set_analysis_explain(a.explain);
}

int dump_stage(Session& session, const DumpArgs& a) {
  if (int rc = apply_opt_and_target(session, a.opt, a.target)) return rc;
  if (int rc = apply_registers(session, a.registers)) return rc;
  Format f;
  if (a.format == "text") f = Format::Text;
  else if (a.format == "sexpr") f = Format::Sexpr;
  else if (a.format == "dot") f = Format::Dot;
  else {
    fmt::print(stderr, "error: unknown format '{}' (formats: text, sexpr, dot)\n", a.format);
    return kUsageError;
  }
  bool known = false;
  for (auto& s : Session::stages()) known |= a.stage == s.name;
  if (!known) {
    fmt::print(stderr, "error: unknown stage '{}' ({})\n", a.stage, a.stage_help);
    return kUsageError;
  }
  analysis::Domain d;
  if (!domain_or_say(a.domain, &d)) return kUsageError;
  session.set_analysis_domain(d);
  apply_analysis_flags(session, a);
  std::string text;
  if (!read_or_say(a.file, &text)) return 2;
  Outcome o = session.compile(std::move(text), a.file);
  // Tokens exist even for a program that does not compile; other stages need a clean one.
  if (o.status != Outcome::Ok && a.stage != "tokens") {
    fmt::print(stderr, "{}", o.message);
    return o.exit_code();
  }
  // The tensor graph exists once the program's code has run (kernel calls build it
  // lazily, printing evaluates it): run it, its output unwanted in a dump.
  if (a.stage == "graph") {
    RunOptions quiet;
    quiet.out = [](std::string_view) {};
    o = session.run(quiet);
    if (o.status != Outcome::Ok) {
      fmt::print(stderr, "{}", o.message);
      return o.exit_code();
    }
  }
  session.set_asm_options({!a.no_encodings, a.directives});
  StageResult r = a.diff_pair.size() == 2 ? session.diff_passes(a.diff_pair[0], a.diff_pair[1])
                                          : session.stage(a.stage, f, a.function);
  if (!r.ok) {
    fmt::print(stderr, "error: {}\n", r.text);
    return 2;
  }
  fmt::print("{}", r.text);
  return 0;
}

// ---- descent build FILE -o F.o ----
struct BuildArgs {
  std::string file, output, target, exe;
  int opt = 2;
  bool run = false, native = false;
};

// `--run`: link the object with the target's C compiler (a cross gcc for another
// architecture) and run it, under qemu-user when the target is not this machine's; with
// --native, the native backend's program image instead of LLVM's object. Its output and exit
// code pass through, as if it had run here. Ctrl-C stops it (the Session's flag: the program
// runs in a process group of its own, which the terminal's signal misses).
int build_and_run(Session& session, const BuildArgs& a) {
  proc::Limits limits;
  limits.output_cap = size_t(64) << 20;
  proc::Result r;
  std::string why;
  bool ran = a.native ? session.run_native_on_target(limits, &r, &why, a.output)
                      : session.run_on_target(limits, &r, &why, a.output, a.exe);
  if (!ran) {
    fmt::print(stderr, "error: --run: {}\n", why);
    return why.rfind("wasm32", 0) == 0 ? kUsageError : 2;
  }
  if (r.interrupted) {
    std::fwrite(r.out.data(), 1, r.out.size(), stdout);
    std::fflush(stdout);
    fmt::print(stderr, "error: --run: interrupted\n");
    return kInterrupted;
  }
  std::fwrite(r.out.data(), 1, r.out.size(), stdout);
  std::fflush(stdout);
  std::fwrite(r.err.data(), 1, r.err.size(), stderr);
  if (!r.started) {
    fmt::print(stderr, "error: --run: {}\n", r.problem);
    return 2;
  }
  if (r.signal) fmt::print(stderr, "error: --run: {}\n", r.problem);
  return r.signal ? 128 + r.signal : r.exit_code;
}

int build_object(Session& session, const BuildArgs& a) {
  if (int rc = apply_opt_and_target(session, a.opt, a.target)) return rc;
  if (a.output.empty() && !a.run) {
    fmt::print(stderr, "error: build needs -o FILE (or --run)\n");
    return kUsageError;
  }
  std::string text;
  if (!read_or_say(a.file, &text)) return 2;
  Outcome o = session.compile(std::move(text), a.file);
  if (o.status != Outcome::Ok) {
    fmt::print(stderr, "{}", o.message);
    return o.exit_code();
  }
  if (a.run) return build_and_run(session, a);  // -o: the object kept there; else a temporary one
  std::string error;
  if (a.native ? !session.write_native_executable(a.output, &error) : !session.build_object(a.output, &error)) {
    fmt::print(stderr, "error: {}\n", error);
    return 2;
  }
  return 0;
}

// ---- descent analyze FILE... [--compare-eva] ----
struct AnalyzeArgs {
  std::vector<std::string> files;
  std::string domain, frama_c = "frama-c", eva_args, keep;  // domain "": the Session's default
  int unroll = analysis::Options{}.unroll;
  bool explain = false, no_thresholds = false, no_contexts = false;
  bool compare = false, twin = false, recorded = false, record = false, totals = false;
  const std::atomic<bool>* interrupt = nullptr;  // the front end's Ctrl-C flag
};

// FILE.ds -> FILE.eva: where a recorded Eva log lives.
std::string eva_log_path(const std::string& file) {
  size_t dot = file.rfind('.');
  size_t slash = file.rfind('/');
  return (dot == std::string::npos || (slash != std::string::npos && dot < slash) ? file : file.substr(0, dot)) + ".eva";
}

// One file: its analysis, or its C twin, or the side by side with Eva. 0, or an exit code.
int analyze_one(const AnalyzeArgs& a, std::optional<analysis::Domain> d, const std::string& file,
                std::vector<std::pair<std::string, analysis::EvaCounts>>* totals) {
  Session session;  // one per file: each program on its own, as `descent run` sees it
  session.set_analysis_interrupt(a.interrupt);
  if (d) session.set_analysis_domain(*d);
  apply_analysis_flags(session, a);
  std::string text;
  if (!read_or_say(file, &text)) return 2;
  Outcome o = session.compile(std::move(text), file);
  if (o.status != Outcome::Ok) {
    fmt::print(stderr, "{}", o.message);
    return o.exit_code();
  }
  auto result = session.analyze();
  if (result && result->interrupted) {
    fmt::print(stderr, "{}: error: interrupted\n", file);
    return kInterrupted;
  }
  if (!a.compare && !a.twin) {
    fmt::print("{}", session.stage("analysis").text);
    return 0;
  }
  analysis::EvaOptions eo;
  eo.frama_c = a.frama_c;
  eo.keep_dir = a.keep;
  for (size_t at = 0, next; at < a.eva_args.size(); at = next + 1) {
    next = a.eva_args.find(' ', at);
    if (next == std::string::npos) next = a.eva_args.size();
    if (next > at) eo.extra_args.push_back(a.eva_args.substr(at, next - at));
  }
  std::string recorded, error;
  if (a.recorded && !read_or_say(eva_log_path(file), &recorded)) return 2;
  if (a.twin) {
    analysis::CTwin twin;
    if (!analysis::make_c_twin(*result->cfg.program, session.module(), &twin, &error)) {
      fmt::print(stderr, "{}: error: {}\n", file, error);
      return 2;
    }
    fmt::print("{}", twin.text);
    return 0;
  }
  analysis::EvaSideBySide s;
  if (!analysis::eva_side_by_side(*result, eo, a.recorded ? &recorded : nullptr, &s, &error)) {
    fmt::print(stderr, "{}: error: {}\n", file, error);
    return 2;
  }
  if (!s.eva.available) {  // never a failure: Descent's facts alone, and why Eva is missing
    if (!a.totals) fmt::print("{}", session.stage("analysis").text);
    fmt::print("note: {}\n", s.eva.message);
    return 0;
  }
  if (a.record) {
    std::ofstream f(eva_log_path(file), std::ios::binary);
    f << s.eva.log;
    if (!f) {
      fmt::print(stderr, "error: cannot write {}\n", eva_log_path(file));
      return 2;
    }
  }
  // The program reads no input, so one run is every run: where it fails (if it does) is the
  // one line whose error alarm is true; any other error alarm is false. A run cut short by
  // the step limit proves nothing, and no false alarms are counted for it.
  RunOptions ro;
  ro.out = [](std::string_view) {};
  ro.step_limit = 200'000'000;
  Outcome ran = session.run(ro);
  bool cut_short = ran.status == Outcome::RuntimeError && !ran.diagnostics.empty() &&
                   ran.diagnostics[0].message.find("interrupted") != std::string::npos;
  if (!cut_short) {
    uint32_t failing_line = ran.status == Outcome::Ok || ran.diagnostics.empty() ? 0 : ran.diagnostics[0].loc.line;
    analysis::count_false_alarms(&s.comparison, failing_line);
  }
  if (!a.totals) fmt::print("{}{}", a.files.size() > 1 ? "== " + file + "\n" : "", format_eva_comparison(s.comparison, *result->cfg.program->source));
  totals->push_back({file.substr(file.rfind('/') + 1), s.comparison.counts});
  return 0;
}

int analyze_files(const AnalyzeArgs& a) {
  std::optional<analysis::Domain> d;
  if (!a.domain.empty() && !domain_or_say(a.domain, &d.emplace())) return kUsageError;
  if (a.recorded && a.record) {
    fmt::print(stderr, "error: --eva-recorded reads the logs --record-eva writes: give one of them\n");
    return kUsageError;
  }
  int rc = 0;
  std::vector<std::pair<std::string, analysis::EvaCounts>> totals;
  for (const auto& f : a.files) {
    int r = analyze_one(a, d, f, &totals);
    rc = rc ? rc : r;
    if (r == kInterrupted) return r;
    if (a.files.size() > 1 && !a.totals) fmt::print("\n");
  }
  if (a.compare && (a.totals || a.files.size() > 1) && !totals.empty()) fmt::print("{}", analysis::format_eva_totals(totals));
  return rc;
}

}  // namespace

Subcommand add_analyze(CLI::App& app) {
  auto a = std::make_shared<AnalyzeArgs>();
  auto* cmd = app.add_subcommand("analyze", "abstract interpretation of a program: its facts and alarms, or beside Frama-C's Eva (docs/analysis.md)");
  cmd->add_option("FILE", a->files, "the programs")->required();
  cmd->add_option("--domain", a->domain, "the abstract domain, " + domain_names() + " (default: the Session's default domain)");
  cmd->add_option("--unroll", a->unroll, "iterations a loop runs apart before it is widened (Eva's slevel; 0: widen at once)")
      ->check(CLI::Range(0, 100000));
  cmd->add_flag("--no-thresholds", a->no_thresholds, "widen straight past every bound (no thresholds from the program's constants)");
  cmd->add_flag("--no-contexts", a->no_contexts, "every call uses its function's summary (arguments joined over all calls), not its own context");
  cmd->add_flag("--explain", a->explain, "say how each loop was solved (unrolled, widened at which thresholds, narrowed)");
  cmd->add_flag("--compare-eva", a->compare, "beside Frama-C's Eva on the program's C twin: both facts per line, both alarms, counts (frama-c-base; without it Descent's facts alone)");
  cmd->add_flag("--twin", a->twin, "print the C twin Eva analyses");
  cmd->add_flag("--eva-recorded", a->recorded, "with --compare-eva: read Eva's output from FILE.eva (written by --record-eva) instead of running frama-c");
  cmd->add_flag("--record-eva", a->record, "with --compare-eva: also write Eva's output to FILE.eva");
  cmd->add_flag("--totals", a->totals, "with --compare-eva: only the table of counts per file and their totals");
  cmd->add_option("--frama-c", a->frama_c, "the frama-c to run (default: frama-c on PATH)");
  cmd->add_option("--eva-args", a->eva_args, "more frama-c arguments, e.g. \"-eva-slevel 100\"");
  cmd->add_option("--keep-twin", a->keep, "keep the C twin and Eva's log in this folder");
  return {cmd, [a](Session& s) {
            a->interrupt = &s.interrupt_flag();
            return analyze_files(*a);
          }};
}

Subcommand add_run(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  auto* run = app.add_subcommand("run", "compile and run a .ds program");
  run->add_option("FILE", a->file, "the program")->required();
  run->add_option("--engine", a->engine, "which engine runs it: " + join(Session::engines()) + " (default ast)");
  run->add_flag("--time", a->time, "report compile and run time on stderr, stage by stage and kernel by kernel");
  run->add_option("--debug", a->debug_level,
                  "kernel launch log on stderr: 1 a summary, 2 a line per launch (name, device, "
                  "time, GFLOP/s, GB/s); 0 off (default)");
  run->add_flag("--trace", a->trace, "print every instruction the VM executes (stack, reg) on stderr");
  a->registers_option = run->add_option("--registers", a->registers, "register file size for --engine reg (3..250)");
  run->add_option("--device", a->device, "where tensor kernels run: " + join(Session::devices()) + " (default ref), as :device");
  run->add_option("--threads", a->threads, "threads for the cpu device's parallel loops (default: all)");
  run->add_option("--tensor-limit", a->tensor_limit, "the largest one tensor may be, e.g. 512M, 2G (default: half the memory)");
  run->add_option("-O", a->opt, "optimisation level 0..3 for --engine jit (default 2)");
  run->add_flag("--no-tiers", a->no_tiers, "--engine jit: compile at -O first, never -O0 first with -O in the background (docs/llvm.md, Tiers)");
  run->add_option("--target", a->target, "for --engine native: x86-64 (this machine) or aarch64 (cross-linked, run under qemu-aarch64)");
  run->add_option("--plot", a->plot, "draw what the program printed as curves (PNG): each line's 'loss NUMBER' per epoch");
  run->add_option("--plot-of", a->plot_of, "the words whose numbers --plot draws (default: loss)")->expected(1, 20);
  add_tuned_options(run, &a->tuned);
  return {run, [a](Session& s) { return run_program(s, *a); }};
}

Subcommand add_dump(CLI::App& app) {
  auto a = std::make_shared<DumpArgs>();
  a->stage_help = "one of:";
  for (auto& s : Session::stages()) a->stage_help += std::string(" ") + s.name;
  auto* dump = app.add_subcommand("dump", "show one stage of a program (tokens, AST, ...)");
  dump->add_option("FILE", a->file, "the program")->required();
  dump->add_option("--stage", a->stage, a->stage_help)->required();
  dump->add_option("--format", a->format, "text (default), sexpr or dot (tree stages)");
  dump->add_option("--registers", a->registers, "register file size for reg-alloc and live (3..250)");
  dump->add_option("-O", a->opt, "optimisation level 0..3 of the LLVM stages (default 2)");
  dump->add_option("--diff", a->diff_pair, "with --stage passes: the IR diff between two passes (names from the list)")
      ->expected(2);
  dump->add_option("--target", a->target, "triple or alias for asm/mir: x86-64, aarch64, riscv64, wasm32; the native-* stages describe x86-64 or aarch64");
  dump->add_option("--function", a->function, "code stages: only this function's code (like dis.dis(fib))");
  dump->add_flag("--no-encodings", a->no_encodings, "asm: without each instruction's encoded bytes");
  dump->add_flag("--directives", a->directives, "asm: keep the assembler directives (.text, .p2align, .cfi_*, .loc, ...)");
  dump->add_option("--domain", a->domain, "analysis: the abstract domain, " + domain_names() + " (default product)");
  dump->add_option("--unroll", a->unroll, "analysis: iterations a loop runs apart before it is widened (0: widen at once)")
      ->check(CLI::Range(0, 100000));
  dump->add_flag("--no-thresholds", a->no_thresholds, "analysis: widen straight past every bound (no thresholds from the program's constants)");
  dump->add_flag("--no-contexts", a->no_contexts, "analysis: every call uses its function's summary, not its own context");
  dump->add_flag("--explain", a->explain, "analysis: say how each loop was solved (unrolled, widened at which thresholds, narrowed)");
  return {dump, [a](Session& s) { return dump_stage(s, *a); }};
}

Subcommand add_build(CLI::App& app) {
  auto a = std::make_shared<BuildArgs>();
  auto* build = app.add_subcommand("build", "compile a program to an object file (link: cc F.o -lm), or link and run it (--run)");
  build->add_option("FILE", a->file, "the program")->required();
  build->add_option("-o", a->output, "the object file to write (with --native: the executable); without it, --run builds in a temporary directory");
  build->add_flag("--run", a->run, "link with the target's C compiler and run it (another architecture under qemu-user); its output and exit code pass through");
  build->add_flag("--native", a->native, "the native backend's code (x86-64 or aarch64) with a small runtime: -o writes an executable (its C file beside it), --run runs it");
  build->add_option("--exe", a->exe, "with --run: where to write the executable (default: beside the object)");
  build->add_option("-O", a->opt, "optimisation level 0..3 (default 2)");
  build->add_option("--target", a->target, "triple or alias: x86-64, aarch64, riscv64, wasm32 (default: this machine)");
  return {build, [a](Session& s) { return build_object(s, *a); }};
}

}  // namespace descent::cli
