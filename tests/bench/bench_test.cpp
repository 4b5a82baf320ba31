// test_bench: the `descent bench` runner at quick scale. Checks records, checksums, the
// CSV/JSON writers and the failure paths; never asserts anything about how long runs take.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/bench.h"
#include "pipeline/pipeline.h"

using namespace descent::bench;
namespace fs = std::filesystem;

namespace {

// A scratch directory removed when the test ends.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "descent-bench-test-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  // A copy of the real programs to tamper with.
  void copy_programs() {
    for (const auto& e : fs::directory_iterator(DESCENT_BENCH_PROGRAMS_DIR))
      fs::copy_file(e.path(), path / e.path().filename());
  }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

BenchOptions quick_on(std::vector<std::string> engines, int repeats = 2) {
  BenchOptions o;
  o.quick = true;
  o.repeats = repeats;
  o.engines = std::move(engines);
  o.programs_dir = DESCENT_BENCH_PROGRAMS_DIR;
  return o;
}

bool on_path(const std::string& tool) {
  std::string cmd = "command -v " + tool + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

}  // namespace

TEST_CASE("the vm suite has the four workloads with their checksums") {
  CHECK(suites() == std::vector<std::string>{"vm", "tensor", "model", "tune", "train", "analysis", "isa", "startup"});
  std::vector<std::string> names;
  for (const auto& w : workloads()) {
    CHECK(w.suite == "vm");
    CHECK(!w.params.empty());
    CHECK(!w.expected_quick.empty());
    names.push_back(w.name);
    // Every workload has its program and both twins.
    for (const char* ext : {".ds", ".lua", ".py"})
      CHECK_MESSAGE(fs::exists(fs::path(DESCENT_BENCH_PROGRAMS_DIR) / (w.name + ext)),
                    (w.name + ext));
  }
  CHECK(names ==
        std::vector<std::string>{"b1_fib", "b2_sum_squares", "b3_mandelbrot", "b4_collatz", "b2_top", "b3_top"});
  CHECK(workloads()[0].expected == "2178309");
  CHECK(workloads()[1].expected == "954980");
  CHECK(workloads()[2].expected == "13428357");
  CHECK(workloads()[3].expected == "131434424");
  CHECK(workloads()[4].expected == workloads()[1].expected);  // B2 at top level: the same sums
  CHECK(workloads()[5].expected == workloads()[2].expected);
}

TEST_CASE("the program files hold the full-scale parameter values") {
  // The files run standalone (`descent run bench/programs/b1_fib.ds`) at full scale.
  for (const auto& w : workloads()) {
    std::string text = slurp(fs::path(DESCENT_BENCH_PROGRAMS_DIR) / (w.name + ".ds"));
    for (const auto& p : w.params)
      CHECK_MESSAGE(text.find("\n" + p.name + " = " + std::to_string(p.full)) != std::string::npos,
                    (w.name + " " + p.name));
  }
}

TEST_CASE("quick suite on the ast engine: every checksum matches") {
  std::vector<std::string> lines;
  BenchOptions o = quick_on({"ast"});
  o.progress = [&](std::string_view line) { lines.emplace_back(line); };
  std::string error;
  auto records = run_benchmarks(o, &error);
  CHECK(error.empty());
  REQUIRE(records.size() == workloads().size());
  CHECK(all_ok(records));
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    INFO(r.workload, " ", r.note);
    CHECK(r.suite == "vm");
    CHECK(r.workload == workloads()[i].name);
    CHECK(r.engine == "ast");
    CHECK(r.kind == "descent");
    CHECK(r.scale == "quick");
    CHECK(r.checksum_ok);
    CHECK(r.output == workloads()[i].expected_quick);
    CHECK(r.expected == workloads()[i].expected_quick);
    CHECK(r.runs == 2);
    CHECK(r.runs_s.size() == 2);
    CHECK(r.median_s > 0);
    CHECK(r.min_s <= r.median_s);
    CHECK(r.median_s <= r.max_s);
    CHECK(r.cpu_s >= 0);
    CHECK(r.compile_s >= 0);          // measured for Descent engines
    CHECK(std::isnan(r.startup_s));   // only external baselines have one
    CHECK(r.steps > 0);
    CHECK(r.baseline == "ast");
    CHECK(r.ratio_vs_baseline == doctest::Approx(1.0));
    CHECK(r.note.empty());
  }
  // A line when each cell starts and one when it ends; no trailing newlines.
  CHECK(lines.size() == 2 * records.size());
  for (const auto& l : lines) CHECK((l.empty() || l.back() != '\n'));
  CHECK(lines.front().find("[1/6] vm/b1_fib on ast") == 0);
  CHECK(lines.back().find("ok") != std::string::npos);

  std::string table = format_table(records);
  CHECK(table.find("b3_mandelbrot") != std::string::npos);
  CHECK(table.find("FAILED") == std::string::npos);
  std::string summary = format_summary(records);
  CHECK(summary.find("vm/b4_collatz") != std::string::npos);
  CHECK(summary.find("(1.00x)") != std::string::npos);
}

TEST_CASE("quick suite on every engine Session has") {
  auto engines = descent::Session::engines();
  std::string error;
  auto records = run_benchmarks(quick_on(engines, 1), &error);
  CHECK(error.empty());
  CHECK(records.size() == workloads().size() * engines.size());
  for (const auto& r : records) {
    INFO(r.workload, " on ", r.engine, ": ", r.note);
    CHECK(r.checksum_ok);
  }
}

TEST_CASE("CSV and JSON: records with suite, workload, engine, median_s") {
  TempDir dir;
  BenchOptions o = quick_on({"ast"}, 1);
  o.workloads = {"b1_fib", "b4_collatz"};
  o.csv = (dir.path / "out.csv").string();
  o.json = (dir.path / "out.json").string();
  std::string error;
  auto records = run_benchmarks(o, &error);
  CHECK(error.empty());
  REQUIRE(records.size() == 2);

  std::string csv = slurp(o.csv);
  CHECK(csv == to_csv(records));
  std::vector<std::string> lines;
  std::istringstream in(csv);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] ==
        "suite,workload,engine,kind,scale,median_s,min_s,max_s,cpu_s,runs,compile_s,startup_s,"
        "steps,baseline,ratio_vs_baseline,checksum_ok,note,threads,gflops,gbs,roof_fraction,"
        "roof_level,trials,search_s,library");
  CHECK(lines[1].find("vm,b1_fib,ast,descent,quick,") == 0);
  CHECK(lines[2].find("vm,b4_collatz,ast,descent,quick,") == 0);
  for (size_t i = 1; i < lines.size(); ++i) {
    CHECK(std::count(lines[i].begin(), lines[i].end(), ',') == 24);
    CHECK(lines[i].find(",true,") != std::string::npos);
  }

  auto doc = nlohmann::json::parse(slurp(o.json));
  CHECK(doc["schema"] == "descent-bench/1");
  CHECK(doc["host"].is_string());
  REQUIRE(doc["records"].size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const auto& j = doc["records"][i];
    CHECK(j["suite"] == "vm");
    CHECK(j["workload"] == records[i].workload);
    CHECK(j["engine"] == "ast");
    CHECK(j["median_s"].is_number());
    CHECK(j["median_s"].get<double>() == doctest::Approx(records[i].median_s));
    CHECK(j["cpu_s"].is_number());
    CHECK(j["runs"] == 1);
    CHECK(j["runs_s"].size() == 1);
    CHECK(j["startup_s"].is_null());  // only external baselines have one
    CHECK(j["checksum_ok"] == true);
    CHECK(j["ratio_vs_baseline"].get<double>() == doctest::Approx(1.0));
    CHECK(j["output"] == records[i].expected);
  }
}

TEST_CASE("CSV quoting and NaN ratios") {
  BenchRecord r;
  r.suite = "vm";
  r.workload = "w";
  r.engine = "e";
  r.note = "printed \"1,2\"";
  std::string csv = to_csv({r});
  // ... ratio (NaN: empty), checksum_ok, the quoted note, threads 0, three NaNs, an empty
  // roof level, trials 0, the search time (NaN) and no library.
  CHECK(csv.find(",,false,\"printed \"\"1,2\"\"\",0,,,,,0,,\n") != std::string::npos);
  auto doc = nlohmann::json::parse(to_json({r}));
  CHECK(doc["records"][0]["ratio_vs_baseline"].is_null());
}

TEST_CASE("bad options are errors, not records") {
  std::string error;
  BenchOptions o = quick_on({"ast"});
  o.suite = "nope";
  CHECK(run_benchmarks(o, &error).empty());
  CHECK(error.find("unknown suite 'nope'") != std::string::npos);

  o = quick_on({"no-such-engine"});
  CHECK(run_benchmarks(o, &error).empty());
  CHECK(error.find("unknown engine 'no-such-engine'") != std::string::npos);

  o = quick_on({"ast"});
  o.workloads = {"b9_nothing"};
  CHECK(run_benchmarks(o, &error).empty());
  CHECK(error.find("no workload 'b9_nothing'") != std::string::npos);

  o = quick_on({"ast"});
  o.programs_dir = "/nonexistent/descent/bench";
  CHECK(run_benchmarks(o, &error).empty());
  CHECK(error.find("/nonexistent/descent/bench") != std::string::npos);

  o = quick_on({"ast"});
  o.repeats = 0;
  CHECK(run_benchmarks(o, &error).empty());
  CHECK(!error.empty());

  o = quick_on({"ast"}, 1);
  o.workloads = {"b1_fib"};
  o.csv = "/nonexistent/dir/out.csv";
  auto records = run_benchmarks(o, &error);
  CHECK(records.size() == 1);  // the runs happened; only the file failed
  CHECK(error.find("cannot write") != std::string::npos);
}

TEST_CASE("a wrong checksum, a runtime error or a missing parameter fails the record") {
  TempDir dir;
  dir.copy_programs();
  std::string fib = slurp(dir.path / "b1_fib.ds");
  dir.write("b1_fib.ds", replace_all(fib, "print(fib(N))", "print(fib(N) + 1)"));
  std::string sums = slurp(dir.path / "b2_sum_squares.ds");
  dir.write("b2_sum_squares.ds", replace_all(sums, "% 1000003", "% (i - i)"));
  std::string mandel = slurp(dir.path / "b3_mandelbrot.ds");
  dir.write("b3_mandelbrot.ds", replace_all(mandel, "MAX_ITER = 200", "LIMIT = 200"));

  BenchOptions o = quick_on({"ast"}, 3);
  o.programs_dir = dir.path.string();
  std::string error;
  auto records = run_benchmarks(o, &error);
  CHECK(error.empty());
  REQUIRE(records.size() == 6);
  CHECK(!all_ok(records));

  CHECK(!records[0].checksum_ok);
  CHECK(records[0].output == "6766");
  CHECK(records[0].note.find("expected '6765'") != std::string::npos);
  CHECK(records[0].runs == 1);  // no more runs after a failure
  CHECK(std::isnan(records[0].ratio_vs_baseline));

  CHECK(!records[1].checksum_ok);
  CHECK(records[1].note.find("division by zero") != std::string::npos);

  CHECK(!records[2].checksum_ok);
  CHECK(records[2].runs == 0);
  CHECK(records[2].note.find("MAX_ITER") != std::string::npos);

  CHECK(records[3].checksum_ok);
  CHECK(records[4].checksum_ok);  // b2_top and b3_top: untouched
  CHECK(records[5].checksum_ok);
  CHECK(format_table(records).find("FAILED") != std::string::npos);
}

TEST_CASE("external baselines: run, build step, missing tool, missing twin") {
  TempDir dir;
  dir.copy_programs();
  // A shell "twin" of b1_fib that answers from its argument; a broken one of b4_collatz.
  dir.write("b1_fib.sh", "[ \"$1\" = 20 ] && echo 6765\n");
  dir.write("b4_collatz.sh", "echo oops >&2; exit 3\n");
  std::vector<std::string> lines;
  BenchOptions o = quick_on({"ast", "sh", "copied-sh", "not-installed"}, 2);
  o.programs_dir = dir.path.string();
  o.workloads = {"b1_fib", "b2_sum_squares", "b4_collatz"};
  o.baselines = {
      {"sh", "sh", "sh", {}, {"{tool}", "{src}"}, {"{tool}", "-c", "true"}},
      {"copied-sh", "sh", "sh", {"cp", "{src}", "{exe}"}, {"{tool}", "{exe}"}, {}},
      {"not-installed", "xyz", "descent-no-such-tool-42", {}, {"{tool}", "{src}"}, {}},
  };
  o.progress = [&](std::string_view l) { lines.emplace_back(l); };
  std::string error;
  auto records = run_benchmarks(o, &error);
  CHECK(error.empty());
  // b1: ast, sh, copied-sh; b2: ast (no .sh twin); b4: ast, sh, copied-sh.
  REQUIRE(records.size() == 7);
  CHECK(records[1].engine == "sh");
  CHECK(records[1].kind == "external");
  CHECK(records[1].checksum_ok);
  CHECK(records[1].runs == 2);
  CHECK(records[1].steps == 0);
  CHECK(records[1].startup_s > 0);
  CHECK(std::isnan(records[2].startup_s));  // copied-sh has no start-up command
  CHECK(!std::isnan(records[1].ratio_vs_baseline));
  CHECK(records[2].engine == "copied-sh");
  CHECK(records[2].checksum_ok);
  CHECK(records[3].workload == "b2_sum_squares");
  CHECK(records[3].engine == "ast");
  CHECK(records[5].engine == "sh");
  CHECK(!records[5].checksum_ok);
  CHECK(records[5].note.find("exit status 3") != std::string::npos);
  CHECK(records[5].note.find("oops") != std::string::npos);
  bool noted_tool = false, noted_twin = false;
  for (const auto& l : lines) {
    noted_tool |= l.find("descent-no-such-tool-42 not found") != std::string::npos;
    noted_twin |= l.find("b2_sum_squares.sh is missing") != std::string::npos;
  }
  CHECK(noted_tool);
  CHECK(noted_twin);
}

TEST_CASE("the Lua and Python twins print the quick checksums") {
  for (const char* tool : {"lua5.4", "python3"}) {
    if (!on_path(tool)) {
      MESSAGE(tool << " is not installed; skipped");
      continue;
    }
    std::string error;
    auto records = run_benchmarks(quick_on({tool}, 1), &error);
    CHECK(error.empty());
    CHECK(records.size() == workloads().size());
    for (const auto& r : records) {
      INFO(tool, " ", r.workload, ": ", r.note);
      CHECK(r.checksum_ok);
      CHECK(std::isnan(r.ratio_vs_baseline));  // the ast baseline did not run in this call
      CHECK(r.startup_s > 0);
      CHECK(std::isnan(r.compile_s));
      CHECK(r.kind == "external");
    }
  }
}

TEST_CASE("the C twins, built with clang -O2, print the quick checksums") {
  if (!on_path("clang-15")) {
    MESSAGE("clang-15 is not installed; skipped");
    return;
  }
  std::string error;
  auto records = run_benchmarks(quick_on({"clang-O2"}, 1), &error);
  CHECK(error.empty());
  REQUIRE(records.size() == workloads().size());
  for (const auto& r : records) {
    INFO("clang-O2 ", r.workload, ": ", r.note);
    CHECK(r.checksum_ok);
    CHECK(r.kind == "external");
  }
}

TEST_CASE("an interrupt stops the run") {
  std::atomic<bool> stop{true};
  BenchOptions o = quick_on({"ast"});
  o.interrupt = &stop;
  std::string error;
  auto records = run_benchmarks(o, &error);
  CHECK(records.empty());
  CHECK(error == "interrupted");
}
