// The lab runner (lab.h): loading labs, starting them, checking, hints, status, grading.
#include "labs/runner/lab.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "bench/internal.h"
#include "bench/roofline.h"
#include "lang/watchdog.h"
#include "tensor/launch.h"
#include "tensor/tir.h"
#include "lang/text.h"
#include "lang/token.h"
#include "lang/tree.h"
#include "pipeline/pipeline.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"
#include "tune/space.h"

namespace descent::labs {
namespace {

namespace fs = std::filesystem;

bool write_text(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  return bool(f);
}

std::string quoted_output(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '"') out += "\\\"";
    else out += c;
  }
  if (out.size() > 200) out = out.substr(0, 197) + "...";
  return out + "\"";
}

// Runs `source` on one engine in a fresh Session with a time limit: a watchdog sets the
// Session's interrupt flag (the REPL's Ctrl-C) when the program runs too long.
struct Run {
  Outcome outcome;
  std::string printed;
  bool timed_out = false;
};

// `base`: the folder the program's relative load() and save() paths mean (the work folder,
// where `start` copied the lab's data files).
Run run_program(const std::string& source, const std::string& name, const std::string& engine,
                double limit_s, const std::string& base) {
  Run r;
  Session s;
  s.set_engine(engine);
  s.set_file_base(base);
  RunOptions opts;
  opts.out = [&r](std::string_view t) {
    if (r.printed.size() < (1u << 20)) r.printed += t;
  };
  {
    Watchdog dog(limit_s, [&s] { s.interrupt_flag() = true; });
    r.outcome = s.submit(source, name, opts);
    r.timed_out = dog.fired();
  }
  return r;
}

// What a failed run says to the student: the error, or that it ran too long.
std::string failure_text(const Run& r, double limit_s) {
  if (r.timed_out) return fmt::format("it was stopped after {:g} s (an endless loop?)", limit_s);
  std::string m = r.outcome.message;
  while (!m.empty() && m.back() == '\n') m.pop_back();
  return m;
}

// ---- the loop nest, without its names --------------------------------------------------

// One line per node of a scheduled loop nest, in a form where two nests that differ only in
// their loop variables' names are equal: loops are renamed L0, L1, ... in the order they
// appear, everywhere they are used. `shown` keeps the lines with the real names.
void flatten_nest(const TreeNode& n, int depth, std::vector<std::string>* canon,
                  std::vector<std::string>* shown, std::map<std::string, std::string>* names) {
  if (n.head == "for" && !names->count(n.atom)) {
    std::string fresh = "L" + std::to_string(names->size());
    (*names)[n.atom] = fresh;
  }
  auto rename = [&](const std::string& text) {
    std::string out = text;
    for (const auto& [from, to] : *names) {
      std::regex word("\\b" + from + "\\b");
      out = std::regex_replace(out, word, to);
    }
    return out;
  };
  std::string indent(size_t(depth) * 2, ' ');
  std::string real, line;
  if (n.head == "for") {
    real = fmt::format("for {} in {} {}", n.atom, n.detail, n.type);
    line = fmt::format("for {} in {} {}", names->at(n.atom), n.detail, n.type);
  } else if (n.head == "block") {
    real = fmt::format("block {} {}", n.atom, n.detail);
    line = rename(real);
  } else {
    real = n.head + (n.atom.empty() ? "" : " " + n.atom);
    line = rename(real);
  }
  canon->push_back(indent + line);
  shown->push_back(indent + real);
  for (const auto& k : n.kids) flatten_nest(k, depth + 1, canon, shown, names);
}

struct Nest {
  bool ok = false;
  std::string error;
  std::vector<std::string> canon, shown;
};

// The named dims the lab's kernel is lowered for ("dims" in lab.json).
std::map<std::string, int64_t> lab_dims(const Lab& lab) {
  std::map<std::string, int64_t> dims;
  // A named json first: items() of a temporary would outlive it.
  const nlohmann::json dim_spec = lab.spec.value("dims", nlohmann::json::object());
  for (const auto& [k, v] : dim_spec.items()) dims[k] = v.get<int64_t>();
  return dims;
}

// The lab's kernel (its program file, kernel and dims) selected in `s`, with `schedule`
// applied; false with *error naming the schedule (`what`) and the step that was refused.
bool scheduled_kernel(const Lab& lab, Session& s, const std::string& schedule,
                      const std::string& what, std::string* error) {
  const auto& spec = lab.spec;
  std::string program_file = (fs::path(lab.dir) / spec.value("program", "kernel.ds")).string();
  std::string source;
  if (!read_file(program_file, &source, error)) return false;
  Outcome o = s.compile(source, program_file);
  if (o.status != Outcome::Ok) {
    *error = o.message;
    return false;
  }
  if (!s.select_kernel(spec.value("kernel", ""), lab_dims(lab), error)) return false;
  if (!s.schedule_text(schedule, error)) {
    *error = what + ": " + *error;
    return false;
  }
  return true;
}

Nest scheduled_nest(const Lab& lab, const std::string& schedule, const std::string& what) {
  Nest nest;
  Session s;
  if (!scheduled_kernel(lab, s, schedule, what, &nest.error)) return nest;
  StageResult tir = s.kernel_view("tir");
  if (!tir.tree) {
    nest.error = "the loop nest has no tree view";
    return nest;
  }
  std::map<std::string, std::string> names;
  flatten_nest(*tir.tree, 0, &nest.canon, &nest.shown, &names);
  nest.ok = true;
  return nest;
}

// ---- the checks ---------------------------------------------------------------------------

struct Context {
  const Lab& lab;
  fs::path work;
  double limit_s;
  std::map<std::string, std::string> files;  // the student's files, read once
  // C++ labs: the harness built with the student's file, once per check_lab.
  bool cpp_tried = false;
  std::string cpp_exe, cpp_error;
};

bool student_file(Context& c, const Check& check, std::string* name, std::string* text,
                  std::string* why) {
  *name = check.spec.value("file", c.lab.files.empty() ? "" : c.lab.files[0]);
  auto it = c.files.find(*name);
  if (it == c.files.end()) {
    *why = fmt::format("{} is missing from {}", *name, c.work.string());
    return false;
  }
  *text = it->second;
  return true;
}

// Each check: true when it passes, else *why in the student's terms.
bool check_output(Context& c, const Check& check, std::string* why) {
  std::string name, source;
  if (!student_file(c, check, &name, &source, why)) return false;
  std::string expect = check.spec.value("expect", "");
  std::vector<std::string> engines = check.spec.value("engines", std::vector<std::string>{"ast"});
  for (const auto& engine : engines) {
    Run r = run_program(source, name, engine, c.limit_s, c.work.string());
    if (r.outcome.status != Outcome::Ok || r.timed_out) {
      *why = fmt::format("on the {} engine: {}", engine, failure_text(r, c.limit_s));
      return false;
    }
    if (r.printed != expect) {
      *why = fmt::format("on the {} engine it printed {}; the lab expects {}", engine,
                         quoted_output(r.printed), quoted_output(expect));
      return false;
    }
  }
  return true;
}

// Numbers within a relative tolerance, every other word exactly: two correct programs may
// round differently in the last bits of a float.
bool outputs_close(const std::string& got, const std::string& want, double rtol, std::string* where) {
  std::regex word("[^\\s,\\[\\]()]+|[,\\[\\]()]");
  auto words = [&](const std::string& text) {
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), word); it != std::sregex_iterator(); ++it)
      out.push_back(it->str());
    return out;
  };
  auto a = words(got), b = words(want);
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] == b[i]) continue;
    char* end_a = nullptr;
    char* end_b = nullptr;
    double x = std::strtod(a[i].c_str(), &end_a), y = std::strtod(b[i].c_str(), &end_b);
    bool numbers = *end_a == '\0' && *end_b == '\0' && !a[i].empty() && !b[i].empty();
    if (numbers && std::fabs(x - y) <= rtol * std::max({1.0, std::fabs(x), std::fabs(y)})) continue;
    *where = fmt::format("'{}' where the reference prints '{}'", a[i], b[i]);
    return false;
  }
  if (a.size() != b.size()) {
    *where = fmt::format("{} words where the reference prints {}", a.size(), b.size());
    return false;
  }
  return true;
}

// The student's file with the lab's driver appended, against the lab's reference with the
// same driver (run on ast): numbers to a relative tolerance.
bool check_output_close(Context& c, const Check& check, std::string* why) {
  std::string name, source;
  if (!student_file(c, check, &name, &source, why)) return false;
  std::string driver, reference;
  if (check.spec.contains("append") &&
      !read_file((fs::path(c.lab.dir) / check.spec.value("append", "")).string(), &driver, why))
    return false;
  if (!read_file((fs::path(c.lab.dir) / check.spec.value("reference", "")).string(), &reference, why))
    return false;
  // The reference reads its data from the lab's folder (reference_dir in it), never from the
  // student's: what it compares against cannot be edited away.
  std::string ref_base = (fs::path(c.lab.dir) / check.spec.value("reference_dir", "")).string();
  Run want = run_program(reference + "\n" + driver, "reference", "ast", c.limit_s, ref_base);
  if (want.outcome.status != Outcome::Ok) {
    *why = "the lab's reference does not run: " + want.outcome.message;
    return false;
  }
  double rtol = check.spec.value("rtol", 1e-4);
  for (const auto& engine : check.spec.value("engines", std::vector<std::string>{"ast"})) {
    Run r = run_program(source + "\n" + driver, name, engine, c.limit_s, c.work.string());
    if (r.outcome.status != Outcome::Ok || r.timed_out) {
      *why = fmt::format("on the {} engine: {}", engine, failure_text(r, c.limit_s));
      return false;
    }
    std::string where;
    if (!outputs_close(r.printed, want.printed, rtol, &where)) {
      *why = fmt::format("on the {} engine it printed {}: {}", engine, quoted_output(r.printed), where);
      return false;
    }
  }
  return true;
}

bench::ProcResult run_child(const std::vector<std::string>& argv, double limit_s, bool* timed_out);
std::string first_lines(const std::string& text, int n);

// Ahead of time: the student's program built into an object file (`descent build`), linked
// with the system's C compiler (`cc prog.o -lm`) and run as a program of its own, in a child
// process with the time limit; what it prints must be `expect`.
bool check_aot_output(Context& c, const Check& check, std::string* why) {
  std::string name, source;
  if (!student_file(c, check, &name, &source, why)) return false;
  Session s;
  Outcome o = s.compile(source, name);
  if (o.status != Outcome::Ok) {
    *why = o.message;
    return false;
  }
  fs::path dir = c.work / ".descent-lab-build";
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::string object = (dir / "aot.o").string(), exe = (dir / "aot").string();
  if (!s.build_object(object, why)) return false;
  std::string cc = bench::find_on_path("cc");
  if (cc.empty()) {
    *why = "no C compiler `cc` on PATH to link the object with (Debian: apt-get install gcc)";
    return false;
  }
  bool timed_out = false;
  bench::ProcResult link = run_child({cc, object, "-lm", "-o", exe}, 120, &timed_out);
  if (!link.ok) {
    *why = "cc could not link the object: " + first_lines(link.err + link.problem, 10);
    return false;
  }
  bench::ProcResult r = run_child({exe}, c.limit_s, &timed_out);
  if (timed_out) {
    *why = fmt::format("the built program was stopped after {:g} s (an endless loop?)", c.limit_s);
    return false;
  }
  std::string expect = check.spec.value("expect", "");
  if (!r.ok && r.out.empty()) {
    *why = "the built program failed: " + first_lines(r.err + r.problem, 5);
    return false;
  }
  if (r.out != expect) {
    *why = fmt::format("built with `descent build` and run, it printed {}; the lab expects {}",
                       quoted_output(r.out), quoted_output(expect));
    return false;
  }
  return true;
}

// The student's file (with the lab's driver appended) run once: it may launch at most `max`
// kernels. A kernel the graph passes could not fuse into its neighbour is one more launch
// (one more pass over memory), so this checks the shape of the program, not its values.
bool check_max_kernels(Context& c, const Check& check, std::string* why) {
  std::string name, source, driver;
  if (!student_file(c, check, &name, &source, why)) return false;
  if (check.spec.contains("append") &&
      !read_file((fs::path(c.lab.dir) / check.spec.value("append", "")).string(), &driver, why))
    return false;
  size_t max = check.spec.value("max", size_t(1));
  Run r = run_program(source + "\n" + driver, name, "ast", c.limit_s, c.work.string());
  if (r.outcome.status != Outcome::Ok || r.timed_out) {
    *why = failure_text(r, c.limit_s);
    return false;
  }
  if (r.outcome.launches.size() <= max) return true;
  std::vector<std::string> names;
  for (const auto& l : r.outcome.launches) names.push_back(l.kernel);
  *why = fmt::format("it launched {} kernels ({}); the lab allows {}", names.size(), join(names), max);
  return false;
}

bool check_max_steps(Context& c, const Check& check, std::string* why) {
  std::string name, source;
  if (!student_file(c, check, &name, &source, why)) return false;
  std::string engine = check.spec.value("engine", "stack");
  uint64_t max = check.spec.value("max", uint64_t(0));
  Run r = run_program(source, name, engine, c.limit_s, c.work.string());
  if (r.outcome.status != Outcome::Ok || r.timed_out) {
    *why = fmt::format("on the {} engine: {}", engine, failure_text(r, c.limit_s));
    return false;
  }
  if (r.outcome.steps > max) {
    *why = fmt::format("the {} VM executed {} instructions; the budget is {} (`descent run {} "
                       "--engine {} --trace` shows each one)",
                       engine, r.outcome.steps, max, name, engine);
    return false;
  }
  return true;
}

bool check_no_spills(Context& c, const Check& check, std::string* why) {
  std::string name, source;
  if (!student_file(c, check, &name, &source, why)) return false;
  int registers = check.spec.value("registers", 4);
  Session s;
  s.set_num_registers(registers);
  Outcome o = s.compile(source, name);
  if (o.status != Outcome::Ok) {
    *why = o.message;
    return false;
  }
  for (const auto& f : s.live_ranges()) {
    for (const auto& r : f.ranges) {
      if (!r.spilled) continue;
      *why = fmt::format("with {} registers, {} in {} spills to {} (live from instruction {} to "
                         "{}; `descent dump {} --stage live --registers {}` draws them all)",
                         registers, r.value, f.function, r.location, r.start, r.end, name, registers);
      return false;
    }
  }
  return true;
}

bool check_schedule_runs(Context& c, const Check& check, std::string* why) {
  std::string name, schedule;
  if (!student_file(c, check, &name, &schedule, why)) return false;
  Session s;
  if (!scheduled_kernel(c.lab, s, schedule, name, why)) return false;
  // The scheduled nest on each device against the unscheduled one on the reference
  // interpreter, on the same seeded inputs.
  for (const auto& device : check.spec.value("devices", std::vector<std::string>{"ref", "cpu"})) {
    Session::KernelRun run = s.run_kernel(device, true, 7);
    if (!run.ok) {
      *why = fmt::format("on {}: {}", device, run.error);
      return false;
    }
  }
  return true;
}

// Speed, as a ratio measured in this run: the student's schedule against the unscheduled
// nest on the cpu device (medians of `repeats` runs), at least `min_speedup` times faster,
// and (when `min_share` is given) at least that share of this machine's f32 FMA peak,
// measured just before. The results must equal the reference interpreter's first. With
// DESCENT_LABS_EQUALITY_ONLY set (CI: a shared machine's timings prove nothing) only the
// equality is checked.
bool check_speed(Context& c, const Check& check, std::string* why) {
  std::string name, schedule;
  if (!student_file(c, check, &name, &schedule, why)) return false;
  Session base, mine;
  if (!scheduled_kernel(c.lab, base, "", "the unscheduled kernel", why)) return false;
  if (!scheduled_kernel(c.lab, mine, schedule, name, why)) return false;
  Session::KernelRun checked = mine.run_kernel("cpu", true, 7);
  if (!checked.ok) {
    *why = "on cpu: " + checked.error;
    return false;
  }
  const char* equality_only = std::getenv("DESCENT_LABS_EQUALITY_ONLY");
  if (equality_only && *equality_only) return true;
  int repeats = check.spec.value("repeats", 20);
  double peak = bench::measure_fma_peak_gflops(0);
  Session::KernelRun before = base.run_kernel("cpu", false, 7, repeats);
  Session::KernelRun after = mine.run_kernel("cpu", false, 7, repeats);
  if (!before.ok || !after.ok || after.seconds <= 0) {
    *why = "the kernel could not be timed: " + (before.ok ? after.error : before.error);
    return false;
  }
  tir::PrimFunc f;
  double flops = 0;
  if (mine.lower_kernel(c.lab.spec.value("kernel", ""), lab_dims(c.lab), schedule, &f, why))
    flops = tensor::kernel_cost(f).flops;
  double speedup = before.seconds / after.seconds;
  double gflops = flops / after.seconds / 1e9, share = gflops / peak;
  double min_speedup = check.spec.value("min_speedup", 1.0), min_share = check.spec.value("min_share", 0.0);
  std::string measured = fmt::format(
      "{:.3f} ms against {:.3f} ms unscheduled ({:.1f}x); {:.1f} GFLOP/s, {:.0f}% of the "
      "{:.0f} GFLOP/s FMA peak measured just now", after.seconds * 1e3, before.seconds * 1e3,
      speedup, gflops, share * 100, peak);
  if (speedup < min_speedup || share < min_share) {
    *why = fmt::format("{}; the lab asks for {:g}x{}", measured, min_speedup,
                       min_share > 0 ? fmt::format(" and {:.0f}% of the peak", min_share * 100) : "");
    return false;
  }
  return true;
}

bool check_nest_equals(Context& c, const Check& check, std::string* why) {
  std::string name, schedule;
  if (!student_file(c, check, &name, &schedule, why)) return false;
  std::string target_text;
  std::string target_file = (fs::path(c.lab.dir) / check.spec.value("target", "target.sched")).string();
  if (!read_file(target_file, &target_text, why)) return false;
  Nest mine = scheduled_nest(c.lab, schedule, name), target = scheduled_nest(c.lab, target_text, "the target");
  if (!mine.ok) {
    *why = mine.error;
    return false;
  }
  if (!target.ok) {
    *why = "the lab's target does not apply: " + target.error;
    return false;
  }
  size_t n = std::min(mine.canon.size(), target.canon.size());
  for (size_t i = 0; i < n; ++i) {
    if (mine.canon[i] == target.canon[i]) continue;
    *why = fmt::format("line {} of the loop nest differs (loop names aside):\n      target: {}\n      yours:  {}",
                       i + 1, target.shown[i], mine.shown[i]);
    return false;
  }
  if (mine.canon.size() != target.canon.size()) {
    *why = mine.canon.size() < target.canon.size()
               ? fmt::format("your loop nest ends where the target goes on with: {}", target.shown[n])
               : fmt::format("your loop nest goes on where the target ends: {}", mine.shown[n]);
    return false;
  }
  return true;
}

// ---- search spaces (tune/space.h): the tune_space lab --------------------------------------

// The lab's kernel lowered for its dims, with `schedule` applied ("" for the nest as lowered,
// which a space's samples start from), without a kernel under the microscope.
bool lowered_kernel(const Lab& lab, const std::string& schedule, const std::string& what,
                    tir::PrimFunc* out, std::string* error) {
  std::string program_file = (fs::path(lab.dir) / lab.spec.value("program", "kernel.ds")).string();
  std::string source;
  if (!read_file(program_file, &source, error)) return false;
  Session s;
  Outcome o = s.compile(source, program_file);
  if (o.status != Outcome::Ok) {
    *error = o.message;
    return false;
  }
  if (!s.lower_kernel(lab.spec.value("kernel", ""), lab_dims(lab), schedule, out, error)) {
    if (!schedule.empty()) *error = what + ": " + *error;
    return false;
  }
  return true;
}

// `text` with its identifiers renamed by `names` (loop variables to L0, L1, ...). A scan, not
// a regex per name: the reachability check compares thousands of nests.
std::string renamed(const std::string& text, const std::map<std::string, std::string>& names) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    auto ident = [&](size_t k, bool first) {
      unsigned char ch = static_cast<unsigned char>(text[k]);
      return std::isalpha(ch) || ch == '_' || (!first && std::isdigit(ch));
    };
    if (!ident(i, true)) {
      out += text[i++];
      continue;
    }
    size_t j = i;
    while (j < text.size() && ident(j, false)) ++j;
    std::string word = text.substr(i, j - i);
    auto it = names.find(word);
    out += it == names.end() ? word : it->second;
    i = j;
  }
  return out;
}

// The lines of a loop nest as flatten_nest writes the Session's tree (loops renamed L0, L1,
// ... in order of appearance in `canon`; the real names in `shown`), straight from a
// PrimFunc: a space's samples are functions, not kernels under a microscope.
void func_lines(const tir::PrimFunc& f, const tir::Stmt* s, int depth,
                std::map<std::string, std::string>* names, Nest* out) {
  if (!s) return;
  auto expr = [&f](const tir::ExprPtr& e) { return e ? tir::print_expr(f, *e) : std::string("?"); };
  auto add = [&](int d, const std::string& line) {
    std::string indent(size_t(d) * 2, ' ');
    out->canon.push_back(indent + renamed(line, *names));
    out->shown.push_back(indent + line);
  };
  auto buffer = [&f](int b) {
    return b >= 0 && size_t(b) < f.buffers.size() ? f.buffers[size_t(b)].name : "#" + std::to_string(b);
  };
  switch (s->kind) {
    case tir::StmtKind::Seq:
      for (const auto& k : s->stmts) func_lines(f, k.get(), depth, names, out);
      return;
    case tir::StmtKind::For: {
      if (!names->count(s->var)) {
        std::string fresh = "L" + std::to_string(names->size());
        (*names)[s->var] = fresh;
      }
      std::string line = fmt::format("for {} in 0..{} {}", s->var, s->extent, tir::for_kind_name(s->for_kind));
      if (s->for_kind == tir::ForKind::Bound) line += " " + s->thread_tag;
      add(depth, line);
      func_lines(f, s->body.get(), depth + 1, names, out);
      return;
    }
    case tir::StmtKind::Block: {
      std::string line = "block " + s->name;
      for (size_t i = 0; i < s->iters.size(); ++i) {
        const auto& it = s->iters[i];
        line += (i ? ", " : " ") + it.name + "=" + (it.kind == tir::IterKind::Spatial ? "S(" : "R(") +
                expr(it.binding) + ")";
      }
      if (s->predicate) line += " where " + expr(s->predicate);
      add(depth, line);
      if (s->init) {
        add(depth + 1, "init");
        func_lines(f, s->init.get(), depth + 2, names, out);
      }
      func_lines(f, s->body.get(), depth + 1, names, out);
      return;
    }
    case tir::StmtKind::Store: {
      std::string target = buffer(s->buffer) + "[";
      for (size_t i = 0; i < s->indices.size(); ++i) target += (i ? ", " : "") + expr(s->indices[i]);
      add(depth, target + "] = " + expr(s->value));
      return;
    }
    case tir::StmtKind::If:
      add(depth, "if " + expr(s->predicate));
      func_lines(f, s->body.get(), depth + 1, names, out);
      return;
    case tir::StmtKind::Allocate:
      if (s->buffer >= 0 && size_t(s->buffer) < f.buffers.size()) {
        const auto& b = f.buffers[size_t(s->buffer)];
        add(depth, "alloc " + b.name + tensor::shape_text(b.shape) + " " + tir::scope_name(b.scope));
      }
      func_lines(f, s->body.get(), depth, names, out);
      return;
    case tir::StmtKind::Barrier: add(depth, "barrier"); return;
  }
}

void allocated_buffers(const tir::Stmt* s, std::set<int>* out) {
  if (!s) return;
  if (s->kind == tir::StmtKind::Allocate) out->insert(s->buffer);
  allocated_buffers(s->init.get(), out);
  allocated_buffers(s->body.get(), out);
  for (const auto& k : s->stmts) allocated_buffers(k.get(), out);
}

Nest func_nest(const tir::PrimFunc& f) {
  Nest nest;
  std::map<std::string, std::string> names;
  // The function-wide temporaries first (the script's T.alloc_buffer lines); the inputs and
  // the output are the same in every schedule, and scoped buffers come where they are made.
  std::set<int> skip(f.params.begin(), f.params.end());
  skip.insert(f.output);
  allocated_buffers(f.body.get(), &skip);
  for (size_t b = 0; b < f.buffers.size(); ++b) {
    if (skip.count(int(b))) continue;
    const auto& buf = f.buffers[b];
    std::string line = "alloc " + buf.name + tensor::shape_text(buf.shape) + " " + tir::scope_name(buf.scope);
    nest.canon.push_back(line);
    nest.shown.push_back(line);
  }
  func_lines(f, f.body.get(), 0, &names, &nest);
  nest.ok = true;
  return nest;
}

// Where two nests first differ, as nest_equals says it: "" when they are equal.
std::string nest_difference(const Nest& want, const Nest& got, const std::string& want_name,
                            const std::string& got_name) {
  size_t n = std::min(want.canon.size(), got.canon.size());
  size_t w = std::max(want_name.size(), got_name.size()) + 1;
  for (size_t i = 0; i < n; ++i) {
    if (want.canon[i] == got.canon[i]) continue;
    return fmt::format("line {} of the loop nest differs (loop names aside):\n      {:<{}} {}\n      {:<{}} {}",
                       i + 1, want_name + ":", w, want.shown[i], got_name + ":", w, got.shown[i]);
  }
  if (want.canon.size() == got.canon.size()) return "";
  return want.canon.size() > got.canon.size()
             ? fmt::format("the loop nest ends where {} goes on with: {}", want_name, want.shown[n])
             : fmt::format("the loop nest goes on where {} ends: {}", want_name, got.shown[n]);
}

// How many loop-nest lines two nests share from the top (the nearest schedule to a target).
size_t common_lines(const Nest& a, const Nest& b) {
  size_t n = 0;
  while (n < a.canon.size() && n < b.canon.size() && a.canon[n] == b.canon[n]) ++n;
  return n;
}

std::string decisions_text(const std::vector<int>& d) {
  std::vector<std::string> words;
  for (int v : d) words.push_back(std::to_string(v));
  return "[" + join(words, " ") + "]";
}

// A trace as one line: "split i 4; split j 16; ...".
std::string trace_line(const std::string& trace) {
  std::vector<std::string> steps;
  for (const auto& l : split_lines(trace))
    if (!l.empty()) steps.push_back(l);
  return steps.empty() ? "(no steps)" : join(steps, "; ");
}

// The student's space, parsed; and the kernel it is sampled on.
bool student_space(Context& c, const Check& check, std::string* name, tune::Space* space,
                   tir::PrimFunc* f, std::string* why) {
  std::string text;
  if (!student_file(c, check, name, &text, why)) return false;
  std::string error;
  if (!tune::parse_space(text, space, &error)) {
    *why = *name + ": " + error;
    return false;
  }
  if (!lowered_kernel(c.lab, "", "", f, why)) {
    *why = "the lab's kernel does not lower: " + *why;
    return false;
  }
  return true;
}

// The same seeded samples for every check of a lab: `samples` draws from a generator seeded
// with `seed` (tune::sample, rng() % n: the same on every machine).
std::vector<tune::Sample> seeded_samples(const tune::Space& space, const tir::PrimFunc& f,
                                         const Check& check) {
  std::mt19937_64 rng(check.spec.value("seed", uint64_t(1)));
  std::vector<tune::Sample> out;
  int n = check.spec.value("samples", 24);
  for (int k = 0; k < n; ++k) out.push_back(tune::sample(space, f, rng));
  return out;
}

// Runs f on the reference interpreter on seeded inputs (seeds 1, 2, ...), with a time limit.
bool interpret_seeded(const tir::PrimFunc& f, double limit_s, tensor::Tensor* out, std::string* why) {
  std::vector<tensor::Tensor> inputs(f.params.size());
  std::vector<const tensor::Tensor*> args;
  for (size_t i = 0; i < f.params.size(); ++i) {
    if (!tensor::rand(f.buffers[size_t(f.params[i])].shape, int64_t(i) + 1, &inputs[i], why)) return false;
    args.push_back(&inputs[i]);
  }
  std::atomic<bool> stop{false};
  bool ok = false;
  bool timed_out = false;
  {
    Watchdog dog(limit_s, [&stop] { stop = true; });
    ok = tir::interpret(f, args, out, why, &stop);
    timed_out = dog.fired();
  }
  if (timed_out) *why = fmt::format("the reference interpreter was stopped after {:g} s", limit_s);
  return ok && !timed_out;
}

// Every one of `samples` seeded samples of the student's space applies; its trace (as a
// schedule) and its decisions (tune::replay) both give its loop nest again; and it computes
// what the unscheduled kernel computes, on the reference interpreter and each other device
// listed (through the Session, as schedule_runs runs a schedule). Distinct traces are run
// once each.
bool check_space_samples(Context& c, const Check& check, std::string* why) {
  std::string name;
  tune::Space space;
  tir::PrimFunc f;
  if (!student_space(c, check, &name, &space, &f, why)) return false;
  std::vector<tune::Sample> samples = seeded_samples(space, f, check);
  std::vector<std::string> devices = check.spec.value("devices", std::vector<std::string>{"ref"});
  tensor::Tensor want;
  bool have_want = false;
  std::set<std::string> ran;
  for (size_t k = 0; k < samples.size(); ++k) {
    const tune::Sample& s = samples[k];
    std::string which = fmt::format("sample {} of {} (decisions {})", k + 1, samples.size(),
                                    decisions_text(s.decisions));
    if (!s.ok) {
      *why = fmt::format("{} is refused at {} (every schedule a space holds must apply)", which, s.error);
      return false;
    }
    Nest mine = func_nest(s.func);
    tune::Sample again = tune::replay(space, f, s.decisions);
    std::string diff = again.ok ? nest_difference(mine, func_nest(again.func), "sampled", "replayed")
                                : "the replay is refused at " + again.error;
    if (!diff.empty()) {
      *why = fmt::format("{}: its decisions replay to another loop nest: {}", which, diff);
      return false;
    }
    tir::PrimFunc traced = f;
    for (const auto& step : split_lines(s.trace)) {
      std::string canonical, error;
      if (step.empty() || tensor::apply_step(traced, step, &canonical, &error)) continue;
      *why = fmt::format("{}: its trace's step `{}` does not apply on its own: {}", which, step, error);
      return false;
    }
    diff = nest_difference(mine, func_nest(traced), "sampled", "its trace");
    if (!diff.empty()) {
      *why = fmt::format("{}: its trace `{}` gives another loop nest: {}", which, trace_line(s.trace), diff);
      return false;
    }
    if (!ran.insert(s.trace).second) continue;
    for (const auto& device : devices) {
      if (device == "ref") {
        if (!have_want) {
          if (!interpret_seeded(f, c.limit_s, &want, why)) {
            *why = "the unscheduled kernel does not run: " + *why;
            return false;
          }
          have_want = true;
        }
        tensor::Tensor got;
        std::string error;
        if (!interpret_seeded(s.func, c.limit_s, &got, &error) || !tensor::allclose(got, want, 1e-4, &error)) {
          *why = fmt::format("{}, `{}`, on ref: {}", which, trace_line(s.trace), error);
          return false;
        }
        continue;
      }
      Session session;
      if (!scheduled_kernel(c.lab, session, s.trace, which, why)) return false;
      Session::KernelRun run = session.run_kernel(device, true, 7);
      if (!run.ok) {
        *why = fmt::format("{}, `{}`, on {}: {}", which, trace_line(s.trace), device, run.error);
        return false;
      }
    }
  }
  return true;
}

// The space leaves enough open: at least `min_decisions` decision points (each `?`, `maybe`
// and `one_of`), and at least `min_distinct` different schedules that apply among the seeded
// samples.
bool check_space_choices(Context& c, const Check& check, std::string* why) {
  std::string name;
  tune::Space space;
  tir::PrimFunc f;
  if (!student_space(c, check, &name, &space, &f, why)) return false;
  int min_decisions = check.spec.value("min_decisions", 3), min_distinct = check.spec.value("min_distinct", 8);
  std::vector<std::string> where;
  for (const auto& l : space.lines) {
    tune::Space one;
    one.lines = {l};
    if (int n = one.max_decisions(); n > 0) where.push_back(fmt::format("line {}: {}", l.line, n));
  }
  int decisions = space.max_decisions();
  if (decisions < min_decisions) {
    *why = fmt::format("{} has {} decision point{}{}; the lab asks for at least {} (each `?`, `maybe` "
                       "and `one_of` is one)",
                       name, decisions, decisions == 1 ? "" : "s",
                       where.empty() ? "" : " (" + join(where, ", ") + ")", min_decisions);
    return false;
  }
  std::vector<tune::Sample> samples = seeded_samples(space, f, check);
  std::set<std::string> distinct;
  int refused = 0;
  for (const auto& s : samples) {
    if (s.ok) distinct.insert(s.trace);
    refused += !s.ok;
  }
  if (int(distinct.size()) < min_distinct) {
    *why = fmt::format("{} samples gave {} different schedule{} that apply{}; the lab asks for at least {} "
                       "(a `?` over a loop's divisors, or a longer ?{{...}} list, gives more)",
                       samples.size(), distinct.size(), distinct.size() == 1 ? "" : "s",
                       refused ? fmt::format(" ({} refused)", refused) : "", min_distinct);
    return false;
  }
  return true;
}

// The space holds the lab's target schedule: some list of decisions replays to the target's
// loop nest (names aside). Every decision list is enumerated, in order, up to `max_schedules`
// of them; a failure names the nearest schedule found and its first line that differs.
bool check_space_reaches(Context& c, const Check& check, std::string* why) {
  std::string name;
  tune::Space space;
  tir::PrimFunc f;
  if (!student_space(c, check, &name, &space, &f, why)) return false;
  std::string target_name = check.spec.value("target", "target.sched"), target_text;
  if (!read_file((fs::path(c.lab.dir) / target_name).string(), &target_text, why)) return false;
  tir::PrimFunc target_func;
  if (!lowered_kernel(c.lab, target_text, "the lab's " + target_name, &target_func, why)) return false;
  Nest target = func_nest(target_func);
  size_t max = check.spec.value("max_schedules", size_t(20000));
  std::vector<int> prefix;
  size_t tried = 0, refused = 0, best_common = 0;
  bool have_best = false;
  Nest best;
  std::string best_trace;
  std::set<std::string> seen;
  while (true) {
    std::vector<int> counts;
    tune::Sample s = tune::realize(space, f, [&](const tune::Decision&, int n) {
      size_t k = counts.size();
      counts.push_back(n);
      return k < prefix.size() ? prefix[k] : 0;
    });
    ++tried;
    if (!s.ok) {
      ++refused;
    } else if (seen.insert(s.trace).second) {
      Nest mine = func_nest(s.func);
      size_t common = common_lines(target, mine);
      if (common == target.canon.size() && common == mine.canon.size()) return true;
      if (!have_best || common > best_common) {
        have_best = true;
        best_common = common;
        best = std::move(mine);
        best_trace = s.trace;
      }
    }
    // The next decision list, as an odometer over the points this one met: the last point
    // with an option left moves on, and the points after it start again from 0.
    std::vector<int> d = s.decisions;
    int k = int(d.size()) - 1;
    while (k >= 0 && d[size_t(k)] + 1 >= counts[size_t(k)]) --k;
    if (k < 0) break;
    prefix.assign(d.begin(), d.begin() + k + 1);
    ++prefix.back();
    if (tried >= max) {
      *why = fmt::format("{} holds more than {} schedules; the checker looked at the first {} (in the "
                         "order of their decisions) and none gives the target's loop nest ({}): leave "
                         "fewer choices open where the target needs none",
                         name, max, max, target_name);
      return false;
    }
  }
  if (!have_best) {
    *why = fmt::format("no schedule of {} applies ({} decision list{} tried)", name, tried, tried == 1 ? "" : "s");
    return false;
  }
  std::string more = refused ? fmt::format(" ({} more refused)", refused) : "";
  std::string diff = nest_difference(target, best, "target", seen.size() == 1 ? "yours" : "nearest");
  if (seen.size() == 1)
    *why = fmt::format("the one schedule {} holds{}, `{}`, does not give the target's loop nest ({}): {}",
                       name, more, trace_line(best_trace), target_name, diff);
  else
    *why = fmt::format("none of the {} schedules {} holds{} gives the target's loop nest ({}). The "
                       "nearest, `{}`: {}",
                       seen.size(), name, more, target_name, trace_line(best_trace), diff);
  return false;
}

bool check_source_lacks(Context& c, const Check& check, std::string* why) {
  std::string name, source;
  if (!student_file(c, check, &name, &source, why)) return false;
  // Comments do not count: a student may write about what the lab rules out.
  std::string code;
  for (const auto& line : split_lines(source)) code += line.substr(0, line.find('#')) + "\n";
  for (const auto& word : check.spec.value("words", std::vector<std::string>{})) {
    std::regex re("\\b" + word + "\\b");
    if (std::regex_search(code, re)) {
      *why = fmt::format("{} uses '{}', which this lab rules out", name, word);
      return false;
    }
  }
  return true;
}

// ---- questions about a stage ---------------------------------------------------------------

// The answer file: "key: value" lines, '#' comments.
std::map<std::string, std::string> parse_answers(const std::string& text) {
  std::map<std::string, std::string> out;
  for (const auto& raw : split_lines(text)) {
    std::string line = raw.substr(0, raw.find('#'));
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto trim = [](std::string t) {
      t.erase(0, t.find_first_not_of(" \t\r"));
      t.erase(t.find_last_not_of(" \t\r") + 1);
      return t;
    };
    out[trim(line.substr(0, colon))] = trim(line.substr(colon + 1));
  }
  return out;
}

// ---- the syntax questions: tokens, errors and grouping ------------------------------------

// The tokens of `text` as `descent dump --stage tokens` names them (IDENT, INT, <=, for, ...),
// without the layout tokens (NEWLINE, EOF).
std::vector<std::string> token_names(const std::string& text) {
  SourceFile file("question.ds", text);
  std::vector<std::string> out;
  for (const auto& t : tokenize(file))
    if (t.kind != Tok::Newline && t.kind != Tok::Eof) out.push_back(tok_name(t.kind));
  return out;
}

// The tree of `expr` as the parser groups it, checked after the lab's program (which declares
// its variables); false with *why when it does not compile.
bool expression_tree(const std::string& program, const std::string& expr, TreeNode* out,
                     std::string* why) {
  Session s;
  Outcome o = s.compile(program + "\nprint(" + expr + ")\n", "answer.ds");
  if (o.status != Outcome::Ok) {
    *why = o.diagnostics.empty() ? o.message : o.diagnostics[0].message;
    return false;
  }
  StageResult ast = s.stage("ast", Format::Text);
  if (!ast.ok || !ast.tree || ast.tree->kids.empty() || ast.tree->kids.back().kids.empty()) {
    *why = "no expression";
    return false;
  }
  *out = ast.tree->kids.back().kids.back();  // print(expr)'s argument
  return true;
}

// How many binary operations an s-expression holds: a list with two operands.
int binary_operations(const TreeNode& n) {
  int count = n.kids.size() == 2 && n.head != "call" && n.head != "index" ? 1 : 0;
  for (const auto& k : n.kids) count += binary_operations(k);
  return count;
}

// "parenthesize": the student's answer must group exactly as the parser does and put every
// binary operation in its own parentheses (writing the expression back unchanged would
// otherwise pass).
bool check_parenthesized(Context& c, const Check& check, const std::string& answer, std::string* why) {
  std::string program;
  if (!read_file((fs::path(c.lab.dir) / c.lab.spec.value("program", "program.ds")).string(), &program, why))
    return false;
  std::string expr = check.spec.value("text", "");
  TreeNode truth, mine;
  if (!expression_tree(program, expr, &truth, why)) {
    *why = "the lab could not compute its answer: " + *why;
    return false;
  }
  if (!expression_tree(program, answer, &mine, why)) {
    *why = fmt::format("'{}' does not compile: {}", answer, *why);
    return false;
  }
  if (print_tree_sexpr(mine) != print_tree_sexpr(truth)) {
    std::string grouped = print_tree_sexpr(mine);
    while (!grouped.empty() && grouped.back() == '\n') grouped.pop_back();
    *why = fmt::format("'{}' groups as {}; the parser groups `{}` differently (look: {})", answer,
                       grouped, expr, check.spec.value("look", ""));
    return false;
  }
  int ops = binary_operations(truth);
  int parens = static_cast<int>(std::count(answer.begin(), answer.end(), '('));
  if (parens < ops) {
    *why = fmt::format("right grouping, but {} pairs of parentheses for {} binary operations: "
                       "put each operation in its own", parens, ops);
    return false;
  }
  return true;
}

// The true answer to a question, from the Session's view of the lab's program: it is computed,
// never stored, so it stays right when the compiler changes. "" and *why when it cannot be.
std::string true_answer(const Lab& lab, const nlohmann::json& q, std::string* why) {
  std::string ask = q.value("ask", "");
  // The lexer's questions are about a line of text given in the question.
  if (ask == "count_tokens") return std::to_string(token_names(q.value("text", "")).size());
  if (ask == "token_kinds") return join(token_names(q.value("text", "")), " ");
  if (ask == "jit_functions") {
    // A REPL session on the jit engine: each line of the lab's session file is one input.
    // The answer: how many Descent functions the JIT compiled for input `input` (1-based).
    std::string text;
    if (!read_file((fs::path(lab.dir) / q.value("session", "session.ds")).string(), &text, why)) return "";
    std::vector<std::string> inputs;
    for (const auto& line : split_lines(text))
      if (line.find_first_not_of(" \t") != std::string::npos && line[line.find_first_not_of(" \t")] != '#')
        inputs.push_back(line);
    size_t upto = q.value("input", inputs.size());
    if (upto < 1 || upto > inputs.size()) {
      *why = fmt::format("the session has {} inputs, not {}", inputs.size(), upto);
      return "";
    }
    Session s;
    s.set_engine("jit");
    RunOptions quiet;
    quiet.out = [](std::string_view) {};
    for (size_t i = 0; i < upto; ++i) {
      Outcome o = s.submit(inputs[i] + "\n", "session", quiet);
      if (o.status != Outcome::Ok) {
        *why = fmt::format("input {} fails: {}", i + 1, o.message);
        return "";
      }
    }
    Session::JitStats st;
    if (!s.jit_stats(&st)) {
      *why = "the JIT did not run";
      return "";
    }
    return std::to_string(st.functions_compiled);
  }
  if (ask == "error_at") {
    // Where the first error of the text is reported: "line:column".
    Session s;
    Outcome o = s.compile(q.value("text", ""), "question.ds");
    if (o.diagnostics.empty()) {
      *why = "the text compiles without an error";
      return "";
    }
    return fmt::format("{}:{}", o.diagnostics[0].loc.line, o.diagnostics[0].loc.col);
  }
  std::string program_file = (fs::path(lab.dir) / lab.spec.value("program", "program.ds")).string();
  std::string source;
  if (!read_file(program_file, &source, why)) return "";
  Session s;
  // The graph questions are about what ran: the program is run, not only compiled.
  bool run = ask.rfind("graph_", 0) == 0;
  RunOptions quiet;
  quiet.out = [](std::string_view) {};
  Outcome o = run ? s.submit(source, program_file, quiet) : s.compile(source, program_file);
  if (o.status != Outcome::Ok) {
    *why = o.message;
    return "";
  }
  if (run) {
    // The dataflow graph of the program's last evaluation: "before" (as the program built
    // it) or "executed" (after the graph passes).
    StageResult g = s.graph_view(q.value("view", "executed"));
    if (!g.ok || !g.graph) {
      *why = g.text;
      return "";
    }
    std::vector<std::string> kernels;
    for (const auto& n : g.graph->nodes)
      if (n.kind == "kernel") kernels.push_back(n.label);
    if (ask == "graph_kernels") return std::to_string(kernels.size());
    if (ask == "graph_kernel_names") return join(kernels);
  }
  std::string stage = q.value("stage", "stack"), function = q.value("function", "");
  if (ask == "count_instructions") {
    int n = 0;
    for (const auto& line : s.listing(stage, function)) n += line.pc >= 0;
    return std::to_string(n);
  }
  if (ask == "jump_target") {
    std::string opcode = q.value("opcode", "JUMP_IF_FALSE");
    for (const auto& line : s.listing(stage, function)) {
      if (line.pc < 0 || line.text.find(opcode) == std::string::npos) continue;
      size_t arrow = line.text.find("-> ");
      if (arrow == std::string::npos) continue;
      return std::to_string(std::stol(line.text.substr(arrow + 3)));
    }
    *why = "no " + opcode + " in the listing";
    return "";
  }
  if (ask == "first_pass_without") {
    // The first LLVM pass after which the module's IR no longer holds `text`.
    std::string text = q.value("text", "");
    for (const auto& p : s.passes()) {
      if (p.stage != "llvm") continue;
      StageResult after = s.pass_snapshot(p.name, true);
      if (after.ok && after.text.find(text) == std::string::npos) return p.name.substr(0, p.name.find('#'));
    }
    *why = "no pass removes '" + text + "'";
    return "";
  }
  if (ask == "asm_instructions" || ask == "encoding_of" || ask == "encoding_length") {
    // The machine code of one function for a target (x86-64 unless the question says), as
    // `descent dump FILE --stage asm --target T --function F` prints it.
    if (!s.set_target(q.value("target", "x86-64"), why)) return "";
    StageResult asm_text = s.stage("asm", Format::Text, function);
    if (!asm_text.ok) {
      *why = asm_text.text;
      return "";
    }
    std::string mnemonic = q.value("mnemonic", "");
    int count = 0;
    for (const auto& line : split_lines(asm_text.text)) {
      size_t enc = line.find("# encoding: [");
      if (enc == std::string::npos) continue;
      ++count;
      std::string head = line.substr(0, enc);
      head.erase(0, head.find_first_not_of(" \t"));
      std::string op = head.substr(0, head.find_first_of(" \t"));
      if (ask == "asm_instructions" || op != mnemonic) continue;
      std::string bytes = line.substr(enc + 13, line.find(']', enc) - enc - 13);  // "0x48,0x83"
      if (ask == "encoding_length") return std::to_string(std::count(bytes.begin(), bytes.end(), ',') + 1);
      const std::string& hex = bytes;
      std::string out;
      for (size_t i = 0; i < hex.size(); ++i)
        if (hex.compare(i, 2, "0x") == 0) {
          out += (out.empty() ? "" : " ") + hex.substr(i + 2, 2);
          i += 1;
        }
      return out;
    }
    if (ask == "asm_instructions") return std::to_string(count);
    *why = "no " + mnemonic + " in " + function + "'s code";
    return "";
  }
  if (ask == "mir_vregs" || ask == "mir_phis" || ask == "spill_slots") {
    // The machine IR of one function (x86-64), before register allocation ("mir") or after
    // ("mir-regalloc"), at the question's -O level.
    s.set_opt_level(q.value("opt", 2));
    if (!s.set_target("x86-64", why)) return "";
    StageResult mir = s.stage(ask == "spill_slots" ? "mir-regalloc" : "mir", Format::Text, function);
    if (!mir.ok) {
      *why = mir.text;
      return "";
    }
    if (ask == "mir_phis") {
      int phis = 0;
      for (const auto& line : split_lines(mir.text)) phis += line.find(" = PHI ") != std::string::npos;
      return std::to_string(phis);
    }
    // Distinct virtual registers (%12) or stack slots (%stack.3) named anywhere.
    std::regex name(ask == "mir_vregs" ? "%[0-9]+\\b" : "%stack\\.[0-9]+");
    std::set<std::string> seen;
    for (auto it = std::sregex_iterator(mir.text.begin(), mir.text.end(), name); it != std::sregex_iterator(); ++it)
      seen.insert(it->str());
    return std::to_string(seen.size());
  }
  if (ask == "saved_registers") {
    // The callee-saved registers (System V: rbx, rbp, r12-r15) the function's prologue pushes.
    // Other pushes are not saves: `pushq %rax` only moves the stack to a 16-byte boundary.
    if (!s.set_target("x86-64", why)) return "";
    StageResult asm_text = s.stage("asm", Format::Text, function);
    if (!asm_text.ok) {
      *why = asm_text.text;
      return "";
    }
    static const std::set<std::string> kCalleeSaved = {"rbx", "rbp", "r12", "r13", "r14", "r15"};
    std::vector<std::string> saved;
    std::regex push("^\\s*pushq\\s+%(\\w+)");
    for (const auto& line : split_lines(asm_text.text)) {
      std::smatch m;
      if (std::regex_search(line, m, push) && kCalleeSaved.count(m[1].str())) saved.push_back(m[1].str());
    }
    return join(saved, " ");
  }
  *why = "unknown question kind '" + ask + "'";
  return "";
}

bool check_answer(Context& c, const Check& check, std::string* why) {
  std::string name, text;
  if (!student_file(c, check, &name, &text, why)) return false;
  std::string key = check.spec.value("key", "");
  auto answers = parse_answers(text);
  auto it = answers.find(key);
  if (it == answers.end() || it->second.empty()) {
    *why = fmt::format("{} has no answer for '{}' (a line '{}: ...')", name, key, key);
    return false;
  }
  if (check.spec.value("ask", "") == "parenthesize") return check_parenthesized(c, check, it->second, why);
  std::string truth = true_answer(c.lab, check.spec, why);
  if (truth.empty()) {
    *why = "the lab could not compute its answer: " + *why;
    return false;
  }
  // Case, "0x" prefixes, brackets and commas do not matter: "C3", "0xc3" and "[0xc3]" are
  // one answer, as "48 83 ff 02" and "0x48,0x83,0xff,0x02" are.
  auto norm = [](std::string v) {
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return std::tolower(ch); });
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v.compare(i, 2, "0x") == 0) {
        ++i;
        continue;
      }
      char ch = v[i];
      if (ch == '[' || ch == ']') continue;
      if (ch == ',' || ch == ' ' || ch == '\t') {
        if (!out.empty() && out.back() != ' ') out += ' ';
        continue;
      }
      out += ch;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  };
  // Sets ("unordered": true): the words in any order, registers with or without % or $.
  auto as_set = [&norm](const std::string& v) {
    std::vector<std::string> words;
    std::istringstream in(norm(v));
    for (std::string w; in >> w;) {
      w.erase(std::remove_if(w.begin(), w.end(), [](char ch) { return ch == '%' || ch == '$'; }), w.end());
      words.push_back(w);
    }
    std::sort(words.begin(), words.end());
    return join(words, " ");
  };
  if (check.spec.value("unordered", false) ? as_set(it->second) == as_set(truth)
                                           : norm(it->second) == norm(truth))
    return true;
  // Not the answer itself: where to look for it.
  *why = fmt::format("'{}' is not it; look again: {}", it->second, check.spec.value("look", ""));
  return false;
}

// ---- C++ labs -----------------------------------------------------------------------------

// Runs argv in a child process with a time limit (the bench's runner: stdin from /dev/null,
// stdout and stderr captured); a watchdog kills it when the limit passes.
bench::ProcResult run_child(const std::vector<std::string>& argv, double limit_s, bool* timed_out) {
  std::atomic<bool> stop{false};
  Watchdog dog(limit_s, [&stop] { stop = true; });
  bench::ProcResult r = bench::run_process(argv, &stop);
  *timed_out = dog.fired();
  return r;
}

std::string first_lines(const std::string& text, int n) {
  std::string out;
  int i = 0;
  for (const auto& line : split_lines(text)) {
    if (i++ == n) {
      out += "    ...\n";
      break;
    }
    out += "    " + line + "\n";
  }
  return out;
}

// The linker arguments for the libraries a C++ lab names ("libraries" in lab.json), each
// followed by what it stands on, in the order a static link needs: tune -> tensor -> llvm ->
// lang, vm -> lang, Debian's shared libLLVM under descent_llvm (with its rpath, so the
// harness runs from the work folder), and libxgboost under tune (its cost model).
bool link_arguments(const std::vector<std::string>& names, std::vector<std::string>* out,
                    std::string* error) {
  static const std::vector<std::pair<std::string, std::string>> kLibs = {
      {"tune", DESCENT_LABS_TUNE_LIB},   {"tensor", DESCENT_LABS_TENSOR_LIB},
      {"llvm", DESCENT_LABS_LLVM_LIB},   {"vm", DESCENT_LABS_VM_LIB},
      {"lang", DESCENT_LABS_LANG_LIB}};
  static const std::map<std::string, std::vector<std::string>> kNeeds = {
      {"tune", {"tune", "tensor", "llvm", "lang"}}, {"tensor", {"tensor", "llvm", "lang"}},
      {"llvm", {"llvm", "lang"}}, {"vm", {"vm", "lang"}}, {"lang", {"lang"}}};
  std::set<std::string> wanted;
  for (const auto& n : names) {
    auto it = kNeeds.find(n);
    if (it == kNeeds.end()) {
      *error = fmt::format("lab.json names library '{}'; the labs can link lang, vm, llvm, tensor, tune", n);
      return false;
    }
    wanted.insert(it->second.begin(), it->second.end());
  }
  for (const auto& [name, file] : kLibs)
    if (wanted.count(name)) out->push_back(file);
  if (wanted.count("tune")) out->push_back(DESCENT_LABS_XGBOOST_LIB);
  if (wanted.count("llvm")) {
    out->push_back("-L" + std::string(DESCENT_LABS_LLVM_LIBDIR));
    out->push_back("-Wl,-rpath," + std::string(DESCENT_LABS_LLVM_LIBDIR));
    out->push_back("-lLLVM-15");
  }
  out->push_back("-lpthread");
  return true;
}

// Where compiled harnesses are kept between checks: $DESCENT_LABS_CACHE, else
// $XDG_CACHE_HOME/descent-labs, else ~/.cache/descent-labs, else the temp folder.
fs::path harness_cache_dir() {
  if (const char* d = std::getenv("DESCENT_LABS_CACHE"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return fs::path(d) / "descent-labs";
  if (const char* d = std::getenv("HOME"); d && *d) return fs::path(d) / ".cache" / "descent-labs";
  return fs::temp_directory_path() / "descent-labs-cache";
}

// Runs the compiler; false with *error (the compiler's first lines) when it fails.
bool compile_step(const std::vector<std::string>& argv, const std::string& what, std::string* error) {
  bool timed_out = false;
  bench::ProcResult r = run_child(argv, 300, &timed_out);
  if (r.ok) return true;
  *error = timed_out ? "the compiler ran for more than 300 s"
                     : fmt::format("{} does not compile:\n{}", what, first_lines(r.err.empty() ? r.problem : r.err, 20));
  while (!error->empty() && error->back() == '\n') error->pop_back();
  return false;
}

// The lab's harness as an object file, compiled once and kept: it is most of the compile
// time (LLVM's headers, the program generator), and it is the same for every student. The
// key covers its text, the lab's headers, the flags, and the libraries it will be linked
// with (their build times: a rebuilt project makes a new object). Written under a
// temporary name and renamed, so two checkers at once never see half an object.
bool harness_object(const Lab& lab, const std::vector<std::string>& student_flags,
                    const std::vector<std::string>& libs, std::string* object, std::string* error) {
  // Without -g: a backtrace of a crash points into the student's file, which keeps it, and
  // the harness compiles a quarter faster.
  std::vector<std::string> flags;
  for (const auto& f : student_flags)
    if (f != "-g") flags.push_back(f);
  fs::path source = fs::path(lab.dir) / lab.spec.value("harness", "harness.cpp");
  std::string key, text;
  if (!read_file(source.string(), &text, error)) return false;
  key += text;
  std::error_code ec;
  std::vector<fs::path> headers;
  for (const auto& e : fs::directory_iterator(lab.dir, ec))
    if (e.path().extension() == ".h") headers.push_back(e.path());
  std::sort(headers.begin(), headers.end());
  for (const auto& h : headers)
    if (read_file(h.string(), &text, error)) key += text;
  for (const auto& f : flags) key += "\n" + f;
  for (const auto& l : libs) {
    key += "\n" + l;
    auto t = fs::last_write_time(l, ec);
    if (!ec) key += std::to_string(t.time_since_epoch().count());
  }
  fs::path dir = harness_cache_dir();
  fs::create_directories(dir, ec);
  fs::path final_path = dir / fmt::format("{}-{:016x}.o", lab.name, std::hash<std::string>{}(key));
  *object = final_path.string();
  if (fs::exists(final_path, ec)) return true;
  fs::path temp = final_path;
  temp += fmt::format(".{}.tmp", ::getpid());
  std::vector<std::string> argv = flags;
  argv.insert(argv.end(), {"-c", source.string(), "-o", temp.string()});
  if (!compile_step(argv, "the lab's " + source.filename().string(), error)) return false;
  fs::rename(temp, final_path, ec);
  if (ec) {
    *error = fmt::format("cannot keep the compiled harness in {}: {}", dir.string(), ec.message());
    return false;
  }
  // One object per lab is kept: the ones made before the harness or the project changed go.
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (e.path() != final_path && name.rfind(lab.name + "-", 0) == 0 && e.path().extension() == ".o")
      fs::remove(e.path(), ec);
  }
  return true;
}

// The lab's harness and the student's file, compiled against the project's headers the way
// the project itself is built, and linked with the libraries the lab names.
bool build_cpp(Context& c) {
  if (c.cpp_tried) return c.cpp_error.empty();
  c.cpp_tried = true;
  const Lab& lab = c.lab;
  std::string file = lab.files.empty() ? "" : lab.files[0];
  if (!c.files.count(file)) {
    c.cpp_error = fmt::format("{} is missing from {}", file, c.work.string());
    return false;
  }
  fs::path out_dir = c.work / ".descent-lab-build";
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  c.cpp_exe = (out_dir / "harness").string();
  std::vector<std::string> libs;
  if (!link_arguments(lab.spec.value("libraries", std::vector<std::string>{"lang"}), &libs,
                      &c.cpp_error))
    return false;
  std::vector<std::string> flags = {DESCENT_LABS_CXX, "-std=c++20", "-O1", "-g",
                                    "-I" + std::string(DESCENT_LABS_SOURCE_ROOT), "-I" + lab.dir};
  std::string sanitize = DESCENT_LABS_SANITIZE;
  if (!sanitize.empty()) flags.push_back("-fsanitize=" + sanitize);
  if (std::find(libs.begin(), libs.end(), "-lLLVM-15") != libs.end())
    flags.push_back("-isystem" + std::string(DESCENT_LABS_LLVM_INCLUDE));
  std::string harness;
  if (!harness_object(lab, flags, libs, &harness, &c.cpp_error)) return false;
  std::string student = (out_dir / "student.o").string();
  std::vector<std::string> argv = flags;
  argv.insert(argv.end(), {"-c", (c.work / file).string(), "-o", student});
  if (!compile_step(argv, file, &c.cpp_error)) return false;
  argv = {DESCENT_LABS_CXX};
  if (!sanitize.empty()) argv.push_back("-fsanitize=" + sanitize);
  argv.insert(argv.end(), {harness, student});
  argv.insert(argv.end(), libs.begin(), libs.end());
  argv.insert(argv.end(), {"-o", c.cpp_exe});
  // A link error is the student's too: a function declared in the lab's header and not
  // defined, or defined twice.
  return compile_step(argv, file + " (linking)", &c.cpp_error);
}

// What a signal that ended the harness says about the student's code.
std::string crash_text(const std::string& problem) {
  if (problem.find("signal 8") != std::string::npos)
    return "your code crashed: SIGFPE (an integer division by zero, or INT64_MIN / -1)";
  if (problem.find("signal 11") != std::string::npos)
    return "your code crashed: SIGSEGV (a null or dangling pointer, or an out-of-range index)";
  if (problem.find("signal 6") != std::string::npos)
    return "your code crashed: SIGABRT (an exception nobody caught, or a failed assertion)";
  return "the checker stopped: " + problem;
}

bool check_cpp(Context& c, const Check& check, std::string* why) {
  if (!build_cpp(c)) {
    *why = c.cpp_error;
    return false;
  }
  std::vector<std::string> argv = {c.cpp_exe, check.spec.value("case", "")};
  for (const auto& a : c.lab.spec.value("harness_args", std::vector<std::string>{}))
    argv.push_back((fs::path(c.lab.dir) / a).string());
  bool timed_out = false;
  bench::ProcResult r = run_child(argv, c.limit_s, &timed_out);
  std::string out = r.out;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (timed_out) {
    *why = fmt::format("it was stopped after {:g} s (an endless loop?)", c.limit_s);
    return false;
  }
  if (!r.ok) {
    *why = crash_text(r.problem);
    return false;
  }
  if (out == "PASS") return true;
  *why = out.rfind("FAIL: ", 0) == 0 ? out.substr(6) : "the checker printed: " + out;
  return false;
}

using CheckFn = bool (*)(Context&, const Check&, std::string*);
const std::map<std::string, CheckFn>& check_table() {
  static const std::map<std::string, CheckFn> t = {
      {"output", check_output},           {"max_steps", check_max_steps},
      {"no_spills", check_no_spills},     {"schedule_runs", check_schedule_runs},
      {"nest_equals", check_nest_equals}, {"source_lacks", check_source_lacks},
      {"answer", check_answer},           {"output_close", check_output_close},
      {"cpp", check_cpp},                 {"max_kernels", check_max_kernels},
      {"aot_output", check_aot_output},   {"speed", check_speed},
      {"space_samples", check_space_samples}, {"space_choices", check_space_choices},
      {"space_reaches", check_space_reaches}};
  return t;
}

}  // namespace

std::string default_labs_dir() {
  const char* env = std::getenv("DESCENT_LABS_DIR");
  return env ? env : DESCENT_LABS_SOURCE_DIR;
}

bool load_labs(const std::string& root, std::vector<Lab>* out, std::string* error) {
  out->clear();
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    *error = fmt::format("{}: no labs folder here", root);
    return false;
  }
  for (const auto& e : fs::directory_iterator(root, ec)) {
    fs::path json = e.path() / "lab.json";
    if (!e.is_directory() || !fs::exists(json)) continue;
    std::string text;
    if (!read_file(json.string(), &text, error)) return false;
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      *error = json.string() + ": not valid JSON";
      return false;
    }
    Lab lab;
    lab.name = e.path().filename().string();
    lab.dir = e.path().string();
    lab.spec = j;
    try {
      lab.title = j.at("title").get<std::string>();
      lab.tier = j.at("tier").get<std::string>();
      lab.kind = j.value("kind", "program");
      lab.order = j.at("order").get<int>();
      lab.concepts = j.value("concepts", std::vector<std::string>{});
      lab.files = j.at("files").get<std::vector<std::string>>();
      lab.hints = j.value("hints", std::vector<std::string>{});
      for (const auto& c : j.at("checks")) {
        Check check;
        check.name = c.at("name").get<std::string>();
        check.type = c.at("type").get<std::string>();
        check.points = c.value("points", 1);
        check.spec = c;
        if (!check_table().count(check.type)) {
          *error = fmt::format("{}: check '{}' has an unknown type '{}'", json.string(), check.name, check.type);
          return false;
        }
        lab.checks.push_back(std::move(check));
      }
    } catch (const nlohmann::json::exception& ex) {
      *error = fmt::format("{}: {}", json.string(), ex.what());
      return false;
    }
    out->push_back(std::move(lab));
  }
  std::sort(out->begin(), out->end(), [](const Lab& a, const Lab& b) {
    return a.order != b.order ? a.order < b.order : a.name < b.name;
  });
  return true;
}

bool find_lab(const std::vector<Lab>& labs, const std::string& name, const Lab** out,
              std::string* error) {
  std::vector<std::string> names;
  for (const auto& l : labs) {
    if (l.name == name) {
      *out = &l;
      return true;
    }
    names.push_back(l.name);
  }
  std::string near = closest_name(name, names);
  *error = fmt::format("no lab '{}'{} (labs: {})", name, near.empty() ? "" : "; did you mean '" + near + "'?",
                       join(names));
  return false;
}

std::string default_work_dir(const Lab& lab) { return (fs::path("descent-labs") / lab.name).string(); }

bool start_lab(const Lab& lab, const std::string& work_dir, std::string* message, std::string* error) {
  std::error_code ec;
  fs::create_directories(work_dir, ec);
  if (ec) {
    *error = fmt::format("{}: cannot create the folder: {}", work_dir, ec.message());
    return false;
  }
  std::vector<std::string> copied, kept;
  for (const auto& f : lab.files) {
    fs::path from = fs::path(lab.dir) / "starter" / f, to = fs::path(work_dir) / f;
    if (fs::exists(to)) {
      kept.push_back(f);  // the student's work: never overwritten
      continue;
    }
    fs::copy_file(from, to, ec);
    if (ec) {
      *error = fmt::format("{}: cannot copy the starter: {}", from.string(), ec.message());
      return false;
    }
    copied.push_back(f);
  }
  // The lab's data (weights, inputs): the programs read them from the work folder.
  for (const auto& f : lab.spec.value("data", std::vector<std::string>{})) {
    fs::path from = fs::path(lab.dir) / f, to = fs::path(work_dir) / fs::path(f).filename();
    if (fs::exists(to)) continue;
    fs::copy_file(from, to, ec);
    if (ec) {
      *error = fmt::format("{}: cannot copy the lab's data: {}", from.string(), ec.message());
      return false;
    }
    copied.push_back(to.filename().string());
  }
  std::string m = fmt::format("lab {}: {} ({})\n", lab.name, lab.title, lab.tier);
  if (!copied.empty()) m += fmt::format("copied {} into {}\n", join(copied), work_dir);
  if (!kept.empty()) m += fmt::format("kept your {} (already in {})\n", join(kept), work_dir);
  m += fmt::format("read {}/README.md, edit the file{} in {}, then:\n  descent lab check {}{}\n",
                   lab.dir, lab.files.size() == 1 ? "" : "s", work_dir, lab.name,
                   work_dir == default_work_dir(lab) ? "" : " --dir " + work_dir);
  *message = m;
  return true;
}

LabReport check_lab(const Lab& lab, const std::string& work_dir, double time_limit_s) {
  LabReport r;
  r.lab = lab.name;
  Context c{lab, work_dir, time_limit_s, {}, false, {}, {}};
  std::error_code ec;
  if (!fs::is_directory(work_dir, ec)) {
    r.setup_error = fmt::format("{}: no such folder; `descent lab start {}` makes it", work_dir, lab.name);
    return r;
  }
  for (const auto& f : lab.files) {
    std::string text, why;
    if (read_file((fs::path(work_dir) / f).string(), &text, &why)) c.files[f] = text;
  }
  for (const auto& check : lab.checks) {
    CheckResult cr;
    cr.name = check.name;
    cr.max_points = check.points;
    std::string why;
    try {
      cr.passed = check_table().at(check.type)(c, check, &why);
    } catch (const std::exception& ex) {
      cr.passed = false;
      why = std::string("the check itself failed: ") + ex.what();
    }
    cr.points = cr.passed ? check.points : 0;
    cr.reason = cr.passed ? "" : why;
    r.points += cr.points;
    r.max_points += cr.max_points;
    r.checks.push_back(std::move(cr));
  }
  write_text(fs::path(work_dir) / ".descent-lab-status", r.passed() ? "passed\n" : "failing\n");
  return r;
}

std::string format_report(const LabReport& r) {
  if (!r.setup_error.empty()) return "error: " + r.setup_error + "\n";
  std::string s;
  for (const auto& c : r.checks) {
    s += fmt::format("{} {} ({}/{})\n", c.passed ? "pass" : "FAIL", c.name, c.points, c.max_points);
    if (!c.passed) s += "    " + c.reason + "\n";
  }
  s += fmt::format("{}: {}/{} points{}\n", r.lab, r.points, r.max_points,
                   r.passed() ? ", every check passes" : "");
  return s;
}

std::string next_hint(const Lab& lab, const std::string& work_dir, std::string* error) {
  if (lab.hints.empty()) {
    *error = fmt::format("lab {} has no hints", lab.name);
    return "";
  }
  fs::path state = fs::path(work_dir) / ".descent-lab-hints";
  size_t used = 0;
  std::string text, why;
  if (read_file(state.string(), &text, &why)) used = std::strtoul(text.c_str(), nullptr, 10);
  size_t i = std::min(used, lab.hints.size() - 1);
  std::error_code ec;
  if (fs::is_directory(work_dir, ec)) write_text(state, std::to_string(i + 1) + "\n");
  return fmt::format("hint {} of {}: {}\n", i + 1, lab.hints.size(), lab.hints[i]);
}

std::string lab_status(const Lab& lab, const std::string& work_dir) {
  (void)lab;
  std::error_code ec;
  if (!fs::is_directory(work_dir, ec)) return "not started";
  std::string text, why;
  if (!read_file((fs::path(work_dir) / ".descent-lab-status").string(), &text, &why)) return "started";
  return text.rfind("passed", 0) == 0 ? "passed" : "failing";
}

std::string format_list(const std::vector<Lab>& labs, const std::string& work_root) {
  std::string s;
  size_t wn = 4, wt = 4;
  for (const auto& l : labs) {
    wn = std::max(wn, l.name.size());
    wt = std::max(wt, l.tier.size());
  }
  int passed = 0;
  s += fmt::format("  #  {:<{}}  {:<{}}  {:<11}  {}\n", "lab", wn, "tier", wt, "status", "title");
  for (const auto& l : labs) {
    std::string status = lab_status(l, (fs::path(work_root) / l.name).string());
    passed += status == "passed";
    s += fmt::format("{:>3}  {:<{}}  {:<{}}  {:<11}  {}\n", l.order, l.name, wn, l.tier, wt, status, l.title);
  }
  s += fmt::format("{} of {} labs passed\n", passed, labs.size());
  return s;
}

std::string grade_csv(const std::vector<Lab>& labs, const std::vector<std::string>& student_dirs) {
  std::string csv = "student,lab,points,max_points,passed,checks\n";
  for (const auto& dir : student_dirs) {
    std::string student = fs::path(dir).filename().string();
    if (student.empty()) student = fs::path(dir).parent_path().filename().string();
    for (const auto& lab : labs) {
      fs::path work = fs::path(dir) / lab.name;
      std::error_code ec;
      if (!fs::is_directory(work, ec)) continue;
      LabReport r = check_lab(lab, work.string());
      std::vector<std::string> per;
      for (const auto& c : r.checks) per.push_back(fmt::format("{}={}/{}", c.name, c.points, c.max_points));
      std::string checks = join(per, "; ");
      std::string quoted = "\"";
      for (char ch : checks) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
      quoted += "\"";
      csv += fmt::format("{},{},{},{},{},{}\n", student, lab.name, r.points, r.max_points,
                         r.passed() ? "yes" : "no", quoted);
    }
  }
  return csv;
}

}  // namespace descent::labs
