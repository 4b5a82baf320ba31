// The checks of schedules (internal.h): a schedule runs and computes what the unscheduled
// kernel computes, gives the target's loop nest, is fast enough; and the checks of search
// spaces (tune/space.h): every sample applies and replays, enough is left open, the target
// is reachable.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "labs/runner/internal.h"
#include <atomic>
#include <random>

#include "lang/text.h"
#include "lang/tree.h"
#include "lang/watchdog.h"
#include "tensor/launch.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"
#include "tune/space.h"

namespace descent::labs {
namespace {

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


}  // namespace

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

// Speed, as a ratio measured in this run against the lab's reference schedule (its target,
// or "reference" in lab.json): both at one thread, timed in turns (reference, student's,
// reference, ...) `rounds` times, each turn the median of `repeats` runs, and the best turn
// of each kept. Interleaving spreads a busy neighbour over both; the best turn is the one
// the neighbour disturbed least. The student's must reach `min_ratio` of the reference's
// speed (1.0 = as fast; a tolerance below 1 absorbs the noise that is left). The results must
// equal the reference interpreter's first. With DESCENT_LABS_EQUALITY_ONLY set (CI: a shared
// machine's timings prove nothing) only the equality is checked.
bool check_speed(Context& c, const Check& check, std::string* why) {
  std::string name, schedule;
  if (!student_file(c, check, &name, &schedule, why)) return false;
  std::string ref_name = check.spec.value("reference", "target.sched"), ref_text;
  if (!read_file((fs::path(c.lab.dir) / ref_name).string(), &ref_text, why)) return false;
  Session ref, mine;
  if (!scheduled_kernel(c.lab, ref, ref_text, "the lab's " + ref_name, why)) return false;
  if (!scheduled_kernel(c.lab, mine, schedule, name, why)) return false;
  Session::KernelRun checked = mine.run_kernel("cpu", true, c.seed | 1);
  if (!checked.ok) {
    *why = "on cpu: " + checked.error;
    return false;
  }
  const char* equality_only = std::getenv("DESCENT_LABS_EQUALITY_ONLY");
  if (equality_only && *equality_only) return true;
  ref.set_threads(1);
  mine.set_threads(1);
  int repeats = check.spec.value("repeats", 11), rounds = check.spec.value("rounds", 7);
  double min_ratio = check.spec.value("min_ratio", 0.75);
  double best_ref = 0, best_mine = 0;
  // A verdict of "too slow" near the line is measured again before it is given: on two
  // hyperthreads a neighbour that never pauses (a compiler in a loop) can slow every run of
  // one side in seven rounds (the lab's own target measured 0.75x the reference once in ten
  // checks that way). More rounds only ever lower each minimum, so a schedule that is really
  // slower stays below the line, and one four times slower than asked is not re-measured.
  int max_rounds = rounds * 3, rounds_run = 0;
  for (int round = 0; round < max_rounds; ++round) {
    if (round >= rounds) {
      double ratio_so_far = best_ref / best_mine;
      if (ratio_so_far >= min_ratio || ratio_so_far < min_ratio / 4) break;
    }
    Session::KernelRun a = ref.run_kernel("cpu", false, 7, repeats);
    Session::KernelRun b = mine.run_kernel("cpu", false, 7, repeats);
    if (!a.ok || !b.ok || a.seconds <= 0 || b.seconds <= 0) {
      *why = "the kernel could not be timed: " + (a.ok ? b.error : a.error);
      c.status = "error";
      return false;
    }
    // The fastest run of each, over every round: a neighbour on the core (a class graded on
    // one machine, a compiler) only ever adds time, so the minimum is the kernel's own; a
    // median of a round can hold the neighbour's share (the same schedule measured 0.69x
    // itself that way while a compiler ran beside it).
    best_ref = round == 0 ? a.min_seconds : std::min(best_ref, a.min_seconds);
    best_mine = round == 0 ? b.min_seconds : std::min(best_mine, b.min_seconds);
    rounds_run = round + 1;
  }
  double ratio = best_ref / best_mine;
  c.measured = fmt::format("{:.2f}x the reference's speed ({:.3f} ms against {:.3f} ms, one thread, best of {})",
                           ratio, best_mine * 1e3, best_ref * 1e3, rounds_run);
  if (ratio < min_ratio) {
    *why = fmt::format("{}; the lab asks for {:.2f}x (the reference schedule is {})", c.measured, min_ratio, ref_name);
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


namespace {

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

}  // namespace

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
          if (!interpret_seeded(f, c.limit_s(), &want, why)) {
            *why = "the unscheduled kernel does not run: " + *why;
            return false;
          }
          have_want = true;
        }
        tensor::Tensor got;
        std::string error;
        if (!interpret_seeded(s.func, c.limit_s(), &got, &error) || !tensor::allclose(got, want, 1e-4, &error)) {
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

}  // namespace descent::labs
