// The analysis suite of `descent bench`: what abstract interpretation (analysis/,
// docs/analysis.md) costs, per domain, next to what the front end costs for the same input.
//
// Each workload is a program; each engine column is a domain (constants, signs, intervals,
// product). A cell's time is the median of `repeats` analyses of the checked program (the
// graph, the fixpoint and the report's facts and alarms), in-process; its baseline is the
// front end (lex, parse, check, fold: Session::compile) of the same program in the same run,
// so "time/base" reads "the analysis costs N front ends". The programs:
//
//   b1_fib .. b3_top       the vm suite's programs (bench/programs): loops and recursion
//   big_program            4,000 generated statements: loops in loops, ifs, calls
//   and_chain              a 10,000-term `&&` chain (a malformed-input probe: conditions that
//                          tall are not used to narrow, docs/analysis.md)
//   deep_loops             40 nested counted while loops (the loop-by-loop solver re-solves
//                          each inner loop per outer iteration)
//
// The check: the analysis finished with the same alarm count on every repeat. No time is
// asserted anywhere (tests run it at quick scale).
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>

#include "analysis/analysis.h"
#include "bench/bench.h"
#include "bench/internal.h"
#include "lang/text.h"
#include "pipeline/pipeline.h"

namespace descent::bench {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Program {
  std::string name, title, source;
};

std::string big_program(int statements) {
  std::string s = "total = 0\nfn step(x: int, y: int) -> int {\n  if x > y { return x - y }\n  return y % 7 + x\n}\n";
  for (int i = 0; i < statements / 4; ++i)
    s += fmt::format(
        "for i{0} in 0..{1} {{\n  v{0} = i{0} * 3\n  if v{0} > {2} {{ total += step(v{0}, {0}) }} else {{ total -= 1 }}\n}}\n",
        i, 5 + i % 11, i % 17);
  return s + "print(total)\n";
}

std::string and_chain(int terms) {
  std::string s = "x = 3\nok = x > 0";
  for (int i = 1; i < terms; ++i) s += " && x > 0";
  return s + "\nprint(ok)\n";
}

std::string deep_loops(int depth) {
  std::string s = "x = 0\n";
  for (int i = 0; i < depth; ++i) s += fmt::format("i{0} = 0\nwhile i{0} < 2 {{\ni{0} += 1\n", i);
  s += "x += 1\n";
  for (int i = 0; i < depth; ++i) s += "}\n";
  return s + "print(x)\n";
}

std::vector<Program> programs(const BenchOptions& o, std::string* error) {
  std::string dir = o.programs_dir.empty() ? default_programs_dir() : o.programs_dir;
  std::vector<Program> out;
  for (const auto& w : workloads()) {
    if (w.suite != "vm") continue;
    std::string src;
    if (!read_file(dir + "/" + w.name + ".ds", &src, error)) return {};
    out.push_back({w.name, w.title, src});
  }
  out.push_back({"big_program", "4,000 generated statements", big_program(o.quick ? 400 : 4000)});
  out.push_back({"and_chain", "a 10,000-term && chain", and_chain(o.quick ? 1000 : 10000)});
  out.push_back({"deep_loops", "40 nested while loops", deep_loops(o.quick ? 10 : 40)});
  return out;
}

}  // namespace

std::vector<std::string> analysis_workloads() {
  return {"b1_fib",  "b2_sum_squares", "b3_mandelbrot", "b4_collatz", "b2_top",
          "b3_top",  "big_program",    "and_chain",     "deep_loops"};
}

std::vector<BenchRecord> run_analysis_benchmarks(const BenchOptions& o, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  error->clear();
  const auto known = analysis_workloads();
  for (const auto& w : o.workloads)
    if (std::find(known.begin(), known.end(), w) == known.end()) {
      *error = "unknown workload '" + w + "' in the analysis suite";
      return {};
    }
  std::vector<BenchRecord> records;
  const int repeats = std::max(1, o.repeats);
  for (const Program& p : programs(o, error)) {
    if (!o.workloads.empty() && std::find(o.workloads.begin(), o.workloads.end(), p.name) == o.workloads.end())
      continue;
    if (o.interrupt && o.interrupt->load()) {
      *error = "interrupted";
      break;
    }
    if (o.progress) o.progress("analysis " + p.name);
    // The baseline: the front end alone, in a fresh Session each time.
    std::vector<double> front;
    for (int r = 0; r < repeats; ++r) {
      Session s;
      auto t = Clock::now();
      s.compile(p.source, p.name + ".ds");
      front.push_back(since(t));
    }
    double base = median_of(front);
    for (analysis::Domain d : analysis::all_domains()) {
      BenchRecord rec;
      rec.suite = "analysis";
      rec.workload = p.name;
      rec.engine = analysis::domain_name(d);
      rec.kind = "descent";
      rec.scale = o.quick ? "quick" : "full";
      rec.baseline = "front end";
      rec.compile_s = base;
      Session s;
      Outcome out = s.compile(p.source, p.name + ".ds");
      if (out.status != Outcome::Ok) {
        rec.note = "does not compile: " + out.message;
        records.push_back(rec);
        continue;
      }
      size_t alarms = 0;
      bool same = true;
      for (int r = 0; r < repeats; ++r) {
        // analyze() caches per input and domain: a new Session input each repeat.
        if (r > 0) s.compile(p.source, p.name + ".ds");
        auto t = Clock::now();
        auto result = s.analyze(d);
        rec.runs_s.push_back(since(t));
        if (!result) {
          same = false;
          break;
        }
        if (r == 0) alarms = result->alarms.size();
        same &= result->alarms.size() == alarms;
        rec.steps = uint64_t(result->rounds);
      }
      rec.runs = int(rec.runs_s.size());
      rec.median_s = median_of(rec.runs_s);
      rec.min_s = *std::min_element(rec.runs_s.begin(), rec.runs_s.end());
      rec.max_s = *std::max_element(rec.runs_s.begin(), rec.runs_s.end());
      rec.ratio_vs_baseline = base > 0 ? rec.median_s / base : NAN;
      rec.checksum_ok = same && rec.runs == repeats;
      rec.output = fmt::format("{} alarms, {} rounds", alarms, rec.steps);
      if (!rec.checksum_ok) rec.note = "the analysis failed or changed between repeats";
      records.push_back(rec);
    }
  }
  write_outputs(o, records, error);
  return records;
}

std::string format_analysis_table(const std::vector<BenchRecord>& records) {
  std::vector<std::vector<std::string>> rows = {
      {"workload", "domain", "median", "min", "front end", "time/base", "rounds", "alarms", "check"}};
  for (const auto& r : records) {
    if (r.suite != "analysis") continue;
    rows.push_back({r.workload, r.engine, r.runs ? seconds_text(r.median_s, 3) : "-",
                    r.runs ? seconds_text(r.min_s, 3) : "-", seconds_text(r.compile_s, 3),
                    std::isnan(r.ratio_vs_baseline) ? "-" : fmt::format("{:.1f}", r.ratio_vs_baseline),
                    std::to_string(r.steps), r.output.substr(0, r.output.find(' ')),
                    r.checksum_ok ? "ok" : "FAILED"});
  }
  std::string s = render(rows, 2);
  s += "median: one analysis (graph, fixpoint, facts, alarms) of the checked program; front end:\n"
       "  lex + parse + check + fold of the same program; time/base: median / front end;\n"
       "  rounds: interprocedural rounds until the function summaries stopped changing\n";
  for (const auto& r : records)
    if (r.suite == "analysis" && !r.note.empty()) s += r.workload + " (" + r.engine + "): " + r.note + "\n";
  return s;
}

}  // namespace descent::bench
