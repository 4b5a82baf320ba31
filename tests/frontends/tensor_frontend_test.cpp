// The tensor tier through the front ends: `descent kernel` (dumps, schedules, --check, bad
// input) on the real binary, and the REPL's :kernel / :sched / :undo / :redo / :run /
// :graph / :device in-process.
#include <algorithm>
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/repl.h"
#include "frontend_util.h"
#include "pipeline/pipeline.h"

using descent::Repl;
using descent::Session;
using fe::contains;
using fe::describe;
using fe::ProcResult;
using fe::run_descent;
namespace fs = std::filesystem;

namespace {
constexpr int kUsageError = 64;

// A scratch file that disappears with the test.
struct TempFile {
  fs::path path;
  TempFile(const std::string& name, const std::string& text)
      : path(fs::temp_directory_path() / name) {
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
  std::string str() const { return path.string(); }
};

const char* kProgram =
    "kernel mm_relu(A: f32[64, 64], B: f32[64, 64]) -> f32[64, 64] {\n"
    "  Y[i, j] = sum(k) A[i, k] * B[k, j]\n"
    "  C[i, j] = max(Y[i, j], 0.0)\n"
    "  return C\n"
    "}\n"
    "x = rand([1, 300], 1)\n"
    "w = rand([20, 300], 2)\n"
    "y = relu(linear(x, w))\n"
    "print(y.shape)\n"
    "print(sum_all(y) > 0.0)\n";

using R = fe::ReplHarness;
}  // namespace

TEST_SUITE("tensor front ends") {

TEST_CASE("descent kernel --dump tir --no-default-schedule shows the lowered loop nest") {
  TempFile f("descent_fe_kernel.ds", kProgram);
  ProcResult r = run_descent({"kernel", f.str(), "mm_relu", "--dump", "tir", "--no-default-schedule"});
  INFO(describe(r));
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "def mm_relu(A: T.Buffer((64, 64), \"float32\")"));
  CHECK(contains(r.out, "for i, j, k in T.grid(64, 64, 64):"));
  CHECK(contains(r.out, "vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])"));
  CHECK(contains(r.out, "C[vi, vj] = T.max(Y[vi, vj], T.float32(0))"));
}

TEST_CASE("descent kernel: with no schedule file, the default schedule runs and says so") {
  TempFile f("descent_fe_kernel_default.ds", kProgram);
  // The view: the rules' register tile of the matmul stage (tune/rules.h).
  ProcResult dump = run_descent({"kernel", f.str(), "mm_relu", "--dump", "schedule"});
  INFO(describe(dump));
  CHECK(dump.exit_code == 0);
  CHECK(contains(dump.out, "tile Y.i Y.j 8 "));  // the j factor follows the CPU's vector width
  CHECK(contains(dump.out, "cache_write Y local\n"));
  // The run names where its schedule came from, and still matches the reference.
  ProcResult run = run_descent({"kernel", f.str(), "mm_relu", "--check"});
  INFO(describe(run));
  CHECK(run.exit_code == 0);
  CHECK(contains(run.out, "mm_relu on cpu (default schedule): output [64, 64]"));
  CHECK(contains(run.out, "matches the reference interpreter"));
  // A time under a millisecond keeps four significant figures (0.01234 ms, not 0.012); from
  // a millisecond on, three decimals.
  {
    size_t at = run.out.find(" ms kernel time");
    REQUIRE(at != std::string::npos);
    size_t start = run.out.rfind(' ', at - 1) + 1;
    std::string number = run.out.substr(start, at - start);
    INFO(number);
    double ms = std::stod(number);
    REQUIRE(ms > 0);
    if (ms < 1) {
      size_t first = number.find_first_not_of("0.");
      REQUIRE(first != std::string::npos);
      CHECK(number.size() - first == 4);
    } else {
      CHECK(number.size() - number.find('.') == 4);
    }
  }
  ProcResult naive = run_descent({"kernel", f.str(), "mm_relu", "--check", "--no-default-schedule"});
  CHECK(contains(naive.out, "mm_relu on cpu: output [64, 64]"));
  // The reference interpreter never gets one: it is the oracle.
  ProcResult ref = run_descent({"kernel", f.str(), "mm_relu", "--backend", "ref"});
  CHECK(contains(ref.out, "mm_relu on ref: output [64, 64]"));
}

TEST_CASE("descent tune: a kernel's schedule searched, recorded, and used by descent kernel --tuned") {
  TempFile f("descent_fe_tune.ds", kProgram);
  TempFile db("descent_fe_tune.jsonl", "");
  std::vector<std::string> args = {"tune", f.str(), "matmul", "--dim", "n=32", "--dim", "m=32",
                                   "--dim", "k=32", "--trials", "3", "--repeats", "1",
                                   "--strategy", "random", "--db", db.str()};
  ProcResult r = run_descent(args);
  INFO(describe(r));
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "kernel             inputs                   as lowered      default        tuned"));
  CHECK(contains(r.out, "matmul             32x32 32x32"));
  CHECK(contains(r.out, "best schedule for matmul (32x32 32x32)"));
  CHECK(contains(r.out, "records appended to " + db.str()));
  CHECK(contains(r.err, "matmul 32x32 32x32: as lowered"));  // progress on stderr
  std::ifstream in(db.path);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) lines += !line.empty();
  CHECK(lines >= 2);  // the default schedule and the candidates
  ProcResult k = run_descent({"kernel", f.str(), "matmul", "--dim", "n=32", "--dim", "m=32",
                              "--dim", "k=32", "--tuned", db.str(), "--check"});
  INFO(describe(k));
  CHECK(contains(k.out, "matmul on cpu (tuned schedule): output [32, 32]"));
  CHECK(contains(k.out, "matches the reference interpreter"));
  // Mistakes: a strategy it does not know, the oracle as a device, a kernel it lacks.
  ProcResult bad = run_descent({"tune", f.str(), "matmul", "--strategy", "anneal"});
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "error: unknown strategy 'anneal' (strategies: random, ga, beam, evolutionary)"));
  ProcResult oracle = run_descent({"tune", f.str(), "matmul", "--device", "ref"});
  CHECK(contains(oracle.err, "the reference interpreter is the oracle"));
  ProcResult missing = run_descent({"tune", f.str(), "nope"});
  CHECK(contains(missing.err, "error: no kernel named 'nope'"));
  // --tuned with a database that does not exist stops with a usage error, on kernel and run.
  for (const char* command : {"kernel", "run"}) {
    std::vector<std::string> args = {command, f.str()};
    if (std::string(command) == "kernel") args.push_back("matmul");
    args.push_back("--tuned");
    args.push_back("/nonexistent/descent_tune.jsonl");
    ProcResult nodb = run_descent(args);
    INFO(describe(nodb));
    CHECK(nodb.exit_code == 64);  // a usage error, as a bad --device is
    CHECK(contains(nodb.err, "error: --tuned: no tuning database at '/nonexistent/descent_tune.jsonl'"));
  }
  fs::remove(fs::path(db.path).parent_path() / "descent_fe_tune.matmul.32x32_32x32.sched");
}

TEST_CASE("descent tune: CSV, JSON, plot, a schedule compared, the best schedule beside the database") {
  TempFile f("descent_fe_tune_out.ds", kProgram);
  TempFile db("descent_fe_tune_out.jsonl", "");
  TempFile hand("descent_fe_tune_hand.sched", "split i 8\n");
  TempFile bad_hand("descent_fe_tune_bad.sched", "split nowhere 8\n");
  fs::path dir = fs::path(db.path).parent_path();
  fs::path csv = dir / "descent_fe_tune_out.csv", json = dir / "descent_fe_tune_out.json",
           png = dir / "descent_fe_tune_out.png",
           best = dir / "descent_fe_tune_out.matmul.32x32_32x32.sched";
  for (const auto& p : {csv, json, png, best}) fs::remove(p);
  ProcResult r = run_descent({"tune", f.str(), "matmul", "--dim", "n=32", "--dim", "m=32", "--dim",
                              "k=32", "--trials", "11", "--repeats", "1", "--threads", "1",
                              "--strategy", "random", "--db", db.str(), "--compare", hand.str(),
                              "--compare", bad_hand.str(), "--csv", csv.string(), "--json",
                              json.string(), "--plot", png.string()});
  INFO(describe(r));
  CHECK(r.exit_code == 0);
  // The yardsticks are measured beside the search; one that does not apply says why.
  CHECK(contains(r.out, "compared with " + hand.str() + ": "));
  // The faster side is named, never "0.51x the tuned time".
  CHECK((contains(r.out, "x faster than the tuned schedule)") ||
         contains(r.out, "(the tuned schedule is ")));
  CHECK(!contains(r.out, "x the tuned time"));
  CHECK(contains(r.out, "compared with " + bad_hand.str() + ": does not apply: "));
  // The live table: a row per candidate with its rate and the best so far.
  CHECK(contains(r.err, "  #1/11 "));
  CHECK(!contains(r.err, "  #12/11 "));
  CHECK(contains(r.err, " GFLOP/s  best "));
  // Its columns stay put when the trial number reaches two digits.
  std::set<size_t> rate_columns;
  for (const auto& line : fe::split_lines(r.err))
    if (line.rfind("  #", 0) == 0 && contains(line, " GFLOP/s")) rate_columns.insert(line.find(" GFLOP/s"));
  CHECK(rate_columns.size() == 1);
  // The best schedule, written beside the database, replays.
  std::string text;
  {
    std::ifstream in(best);
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  CHECK(contains(text, "# the best schedule known for matmul (32x32 32x32) on cpu: "));
  ProcResult replay = run_descent({"kernel", f.str(), "matmul", "--dim", "n=32", "--dim", "m=32",
                                   "--dim", "k=32", "--schedule", best.string(), "--check"});
  INFO(describe(replay));
  CHECK(replay.exit_code == 0);
  CHECK(contains(replay.out, "matches the reference interpreter"));
  // CSV: a header and one row per candidate; JSON: the same candidates, the yardsticks.
  std::ifstream cin(csv);
  std::string header, row;
  std::getline(cin, header);
  CHECK(header == "kernel,shape,device,strategy,trial,ok,seconds,gflops,predicted,from_database,trace,error");
  int rows = 0;
  while (std::getline(cin, row)) rows += !row.empty();
  std::ifstream jin(json);
  auto doc = nlohmann::json::parse(jin);
  CHECK(doc["schema"] == "descent-tune/1");
  REQUIRE(doc["tasks"].size() == 1);
  CHECK(doc["tasks"][0]["candidates"].size() == size_t(rows));
  CHECK(rows >= 2);  // the default schedule (recorded before the search) and the candidates
  CHECK(rows <= 12);
  CHECK(doc["tasks"][0]["compared"].size() == 2);
  CHECK(doc["tasks"][0]["compared"][0]["seconds"].is_number());
  CHECK(doc["tasks"][0]["compared"][1]["seconds"].is_null());
  // The plot: a PNG file.
  std::ifstream pin(png, std::ios::binary);
  char magic[4] = {};
  pin.read(magic, 4);
  CHECK(std::string(magic + 1, 3) == "PNG");
  for (const auto& p : {csv, json, png, best}) fs::remove(p);
}

namespace {
// The database's non-empty lines, and how many of them parse as JSON objects.
std::pair<int, int> database_lines(const std::string& path) {
  std::ifstream in(path);
  int lines = 0, good = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    ++lines;
    good += nlohmann::json::accept(line) ? 1 : 0;
  }
  return {lines, good};
}
// Waits (pumping the child's output) until the database holds `n` lines or the child ended.
bool wait_for_records(fe::Child& c, const std::string& path, int n) {
  for (int i = 0; i < 3000; ++i) {  // a generous bound: 60 s of 20 ms pumps
    if (database_lines(path).first >= n) return true;
    c.pump(20);
  }
  return false;
}
}  // namespace

TEST_CASE("descent tune: Ctrl-C keeps the database intact, and a killed job's database resumes") {
  fe::TempDir dir;
  std::string f = dir.write("tune_kill.ds", kProgram);
  std::string db = dir.path("tune.jsonl");
  std::vector<std::string> args = {DESCENT_BIN, "tune", f, "matmul", "--dim", "n=64", "--dim",
                                   "m=64", "--dim", "k=64", "--trials", "100000", "--repeats",
                                   "1", "--strategy", "random", "--db", db};
  {
    fe::Child c(args);
    REQUIRE(c.wait_for_handler(SIGINT));
    REQUIRE(wait_for_records(c, db, 4));
    c.send_signal(SIGINT);
    ProcResult r = c.finish();
    INFO(describe(r));
    CHECK(r.exit_code == 130);
    CHECK(contains(r.err, "error: interrupted: the results above are partial"));
    CHECK(contains(r.out, "best schedule for matmul (64x64 64x64)"));  // what it had so far
  }
  auto [lines, good] = database_lines(db);
  CHECK(lines >= 4);
  CHECK(good == lines);  // every record whole
  {
    fe::Child c(args);
    REQUIRE(wait_for_records(c, db, lines + 3));
    c.send_signal(SIGKILL);  // no handler, no chance to finish a line
    c.finish();
  }
  // The next job reads what the killed one left (a torn last line is reported, not fatal)
  // and does not measure those traces again: every searched trace is in the database once
  // (the default schedule is recorded again by each job; its record has no decisions).
  ProcResult again = run_descent({"tune", f, "matmul", "--dim", "n=64", "--dim", "m=64", "--dim",
                                  "k=64", "--trials", "2", "--repeats", "1", "--strategy",
                                  "random", "--db", db});
  INFO(describe(again));
  CHECK(again.exit_code == 0);
  std::ifstream in(db);
  std::map<std::string, int> searched;
  for (std::string line; std::getline(in, line);) {
    if (!nlohmann::json::accept(line)) continue;  // the torn line SIGKILL may have left
    auto rec = nlohmann::json::parse(line);
    if (rec["ok"] == true && !rec["decisions"].empty()) ++searched[rec["trace"].get<std::string>()];
  }
  CHECK(searched.size() >= 4);
  for (const auto& [trace, count] : searched) {
    INFO(trace);
    CHECK(count == 1);
  }
}

TEST_CASE("descent kernel: a schedule file changes the nest, --check runs it against the reference") {
  TempFile f("descent_fe_kernel2.ds", kProgram);
  TempFile s("descent_fe_kernel2.sched", "# split the matmul stage, vectorize the relu stage\nsplit Y.i 16\nvectorize C.j\n");
  ProcResult dump = run_descent({"kernel", f.str(), "mm_relu", "--schedule", s.str(), "--dump", "tir"});
  INFO(describe(dump));
  CHECK(dump.exit_code == 0);
  CHECK(contains(dump.out, "i_0"));
  CHECK(contains(dump.out, "T.vectorized(64)"));
  for (const char* backend : {"ref", "cpu"}) {
    ProcResult run = run_descent({"kernel", f.str(), "mm_relu", "--schedule", s.str(),
                                  "--backend", backend, "--check"});
    INFO(describe(run));
    CHECK(run.exit_code == 0);
    CHECK(contains(run.out, "mm_relu on " + std::string(backend) + ": output [64, 64]"));
    CHECK(contains(run.out, "matches the reference interpreter"));
  }
  ProcResult c = run_descent({"kernel", f.str(), "mm_relu", "--schedule", s.str(), "--dump", "c"});
  CHECK(c.exit_code == 0);
  CHECK(contains(c.out, "void mm_relu("));
  ProcResult ir = run_descent({"kernel", f.str(), "mm_relu", "--schedule", s.str(), "--dump", "llvm-opt"});
  CHECK(ir.exit_code == 0);
  CHECK(contains(ir.out, "<64 x float>"));
}

TEST_CASE("descent kernel: prelude kernels take named dims from --dim") {
  TempFile f("descent_fe_kernel3.ds", "print(1)\n");
  ProcResult r = run_descent({"kernel", f.str(), "matmul", "--dim", "n=8", "--dim", "k=4",
                              "--dim", "m=16", "--dump", "tir"});
  INFO(describe(r));
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "A: T.Buffer((8, 4)"));
  CHECK(contains(r.out, "B: T.Buffer((4, 16)"));
}

TEST_CASE("descent kernel --dump graph: the named kernel's own graph, without running the file") {
  TempFile f("descent_fe_kernel4.ds", kProgram);
  ProcResult r = run_descent({"kernel", f.str(), "mm_relu", "--dump", "graph"});
  INFO(describe(r));
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("# graph as built\n", 0) == 0);  // no program output before it
  CHECK(contains(r.out, "%2 = mm_relu(%0, %1)  [64, 64]"));
  CHECK(contains(r.out, "# after graph.fuse_elementwise (no change)"));
  CHECK_FALSE(contains(r.out, "linear"));
}

TEST_CASE("descent dump --stage graph: the program's graph as its last evaluation ran it") {
  // linear then relu fuses; the program's output is not part of the dump.
  TempFile f("descent_fe_kernel4b.ds", kProgram);
  ProcResult r = run_descent({"dump", f.str(), "--stage", "graph"});
  INFO(describe(r));
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "= linear_relu(%0, %1)  [1, 20]"));
  CHECK_FALSE(contains(r.out, "true"));
  ProcResult dot = run_descent({"dump", f.str(), "--stage", "graph", "--format", "dot"});
  CHECK(dot.exit_code == 0);
  CHECK(dot.out.rfind("digraph", 0) == 0);
  CHECK(contains(dot.out, "linear_relu"));
  // No tensor code: still DOT where DOT was asked for.
  TempFile scalar("descent_fe_kernel4c.ds", "print(1)\n");
  ProcResult empty = run_descent({"dump", scalar.str(), "--stage", "graph", "--format", "dot"});
  CHECK(empty.exit_code == 0);
  CHECK(empty.out.rfind("digraph", 0) == 0);
  CHECK(contains(empty.out, "}"));
}

TEST_CASE("descent kernel --dim: a dim the kernel does not have is a usage error naming its dims") {
  TempFile f("descent_fe_kernel4d.ds", "print(1)\n");
  ProcResult r = run_descent({"kernel", f.str(), "matmul", "--dim", "N=1024"});
  INFO(describe(r));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "kernel 'matmul' has no dim 'N' (its dims: n, k, m)"));
  CHECK(r.out.empty());
}

TEST_CASE("descent kernel: bad input is a clear error, never a crash") {
  TempFile f("descent_fe_kernel5.ds", kProgram);
  TempFile bad("descent_fe_bad.sched", "split Y.i 16\nvectorize k\n");
  ProcResult r = run_descent({"kernel", f.str(), "mm_relu", "--schedule", bad.str()});
  INFO(describe(r));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "line 2"));
  CHECK(contains(r.err, "cannot vectorize 'k'"));
  ProcResult nope = run_descent({"kernel", f.str(), "nope"});
  CHECK(nope.exit_code == 2);
  CHECK(contains(nope.err, "no kernel named 'nope'"));
  CHECK(contains(nope.err, "mm_relu"));
  ProcResult dim = run_descent({"kernel", f.str(), "matmul", "--dim", "n=0"});
  CHECK(dim.exit_code == kUsageError);
  ProcResult backend = run_descent({"kernel", f.str(), "mm_relu", "--backend", "tpu"});
  CHECK(backend.exit_code == kUsageError);
  CHECK(contains(backend.err, "unknown backend 'tpu'"));
  ProcResult view = run_descent({"kernel", f.str(), "mm_relu", "--dump", "nope"});
  CHECK(view.exit_code == kUsageError);
  CHECK(contains(view.err, "unknown kernel view 'nope'"));
}

TEST_CASE("descent run: tensor code on the jit runs there, with no note") {
  TempFile f("descent_fe_kernel6.ds", kProgram);
  ProcResult r = run_descent({"run", f.str(), "--engine", "jit"});
  INFO(describe(r));
  CHECK(r.exit_code == 0);
  CHECK(r.out == "[1, 20]\ntrue\n");
  CHECK_FALSE(contains(r.err, "note: tensor code runs on the ast engine"));
}

TEST_CASE("descent build: tensor code is a clear error, not an object file") {
  TempFile f("descent_fe_kernel7.ds", kProgram);
  std::string out = (fs::temp_directory_path() / "descent_fe_kernel7.o").string();
  ProcResult r = run_descent({"build", f.str(), "-o", out});
  INFO(describe(r));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "error: tensor code cannot be built into an object file"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("REPL: select a kernel, schedule it step by step, undo, redo, run") {
  R r;
  r.repl.feed("kernel add2(a: f32[32, 8], b: f32[32, 8]) -> f32[32, 8] { out[i, j] = a[i, j] + b[i, j]; return out }");
  CHECK(r.take_err() == "");
  r.repl.feed(":kernel add2");
  std::string nest = r.take_out();
  CHECK(contains(nest, "for i, j in T.grid(32, 8):"));
  r.repl.feed(":sched split i 8");
  std::string split = r.take_out();
  CHECK(contains(split, "for i_0, i_1, j in T.grid(4, 8, 8):"));
  r.repl.feed(":sched vectorize i_1");  // not innermost: refused, nest unchanged
  CHECK(contains(r.take_err(), "cannot vectorize 'i_1'"));
  r.repl.feed(":sched vectorize j");
  CHECK(contains(r.take_out(), "T.vectorized(8)"));
  r.repl.feed(":trace-schedule");
  CHECK(r.take_out() == "split i 8\nvectorize j\n");
  r.repl.feed(":undo");
  CHECK(r.take_out() == split);
  r.repl.feed(":redo");
  CHECK(contains(r.take_out(), "T.vectorized(8)"));
  for (const char* device : {":run ref", ":run cpu"}) {
    r.repl.feed(device);
    std::string ran = r.take_out();
    INFO(r.take_err());
    CHECK(contains(ran, "matches the reference interpreter"));
  }
  r.repl.feed(":c");
  CHECK(contains(r.take_out(), "void add2("));
  // The schedule applies when scalar code calls the kernel, on the cpu device too.
  r.repl.feed(":device cpu");
  r.repl.feed("print(sum_all(add2(ones([32, 8]), ones([32, 8]))))");
  CHECK(r.take_out() == "512.0\n");
  CHECK(r.take_err() == "");
}

TEST_CASE("REPL: :tune, :sched auto, :defaults and :tuned") {
  R r;
  r.repl.feed(":tune");  // nothing has run, nothing is selected
  CHECK(contains(r.take_err(), "error: no kernel has run yet"));
  r.repl.feed(":kernel matmul n=32 m=32 k=32");
  r.take_out();
  r.repl.feed(":tune trials=3 strategy=random");
  std::string out = r.take_out();
  INFO(out, r.take_err());
  CHECK(contains(out, "matmul 32x32 32x32: as lowered"));  // progress
  CHECK(contains(out, "best schedule for matmul (32x32 32x32)"));
  CHECK(contains(out, "the kernels run tuned from now on on cpu (:sched auto puts the best schedule under the microscope)"));
  r.repl.feed(":sched auto");
  std::string sched = r.take_out();
  CHECK(contains(sched, "# the tuned schedule for cpu:"));
  CHECK(contains(sched, "cache_write C local"));
  r.repl.feed(":tune trials=x");
  CHECK(contains(r.take_err(), "error: 'trials=x' needs a number"));
  r.repl.feed(":defaults off");
  CHECK(r.take_out() == "default schedules: off\n");
  r.repl.feed(":defaults maybe");
  CHECK(contains(r.take_err(), "usage: :defaults on|off"));
  r.repl.feed(":tuned");
  CHECK(contains(r.take_out(), "tuning database: none ("));
  // A database that is not there is an error, not an empty database used in silence.
  r.repl.feed(":tuned /nonexistent/descent_tune.jsonl");
  CHECK(contains(r.take_err(), "error: no tuning database at '/nonexistent/descent_tune.jsonl' (descent tune --db"));
  r.repl.feed(":tuned");
  CHECK(contains(r.take_out(), "tuning database: none ("));
}

TEST_CASE("REPL: :graph shows the passes of the last evaluation, :device switches") {
  R r;
  r.repl.feed(":device");
  CHECK(r.take_out() == "device: ref (devices: ref cpu opencl)\n");
  r.repl.feed(":device gpu");
  CHECK(contains(r.take_err(), "unknown device 'gpu'"));
  r.repl.feed("y = relu(linear(rand([1, 30], 1), rand([5, 30], 2)))");
  r.repl.feed(":graph pending");
  CHECK(contains(r.take_out(), "relu("));
  r.repl.feed("print(y.shape)");
  CHECK(r.take_out() == "[1, 5]\n");
  r.repl.feed("sum_all(y)");
  r.take_out();
  r.repl.feed(":graph before");
  CHECK(contains(r.take_out(), "= relu("));
  r.repl.feed(":graph fuse_elementwise");
  CHECK(contains(r.take_out(), "= linear_relu("));
  r.repl.feed(":graph dot");
  CHECK(contains(r.take_out(), "digraph"));
  r.repl.feed(":graph nope");
  CHECK(contains(r.take_err(), "unknown graph view 'nope'"));
  r.repl.feed(":sched split i 2");
  CHECK(contains(r.take_err(), "no kernel selected"));
}

TEST_CASE("descent devices lists OpenCL devices, or says why there are none") {
  ProcResult r = run_descent({"devices"});
  INFO(describe(r));
  CHECK(r.exit_code == 0);
  CHECK((contains(r.out, "OpenCL C") || contains(r.out, "no OpenCL platform found")));
  // No ICD at all: a plain explanation, and the CPU path keeps working.
  TempFile f("descent_fe_nocl.ds", kProgram);
  ProcResult none = run_descent({"devices"}, "", {"OCL_ICD_VENDORS=/nonexistent-descent-icd-dir"});
  CHECK(none.exit_code == 0);
  CHECK(contains(none.out, "no OpenCL platform found"));
  CHECK(contains(none.out, "/nonexistent-descent-icd-dir"));
  ProcResult run = run_descent({"kernel", f.str(), "mm_relu", "--backend", "opencl"}, "",
                               {"OCL_ICD_VENDORS=/nonexistent-descent-icd-dir"});
  CHECK(run.exit_code == 1);
  CHECK(contains(run.err, "error: no OpenCL platform found"));
  ProcResult cpu = run_descent({"kernel", f.str(), "mm_relu", "--backend", "cpu", "--check"}, "",
                               {"OCL_ICD_VENDORS=/nonexistent-descent-icd-dir"});
  CHECK(cpu.exit_code == 0);
  CHECK(contains(cpu.out, "matches the reference interpreter"));
}

TEST_CASE("descent kernel --backend opencl runs the kernel through OpenCL and checks it") {
  if (!contains(run_descent({"devices"}).out, "OpenCL C")) {
    MESSAGE("no OpenCL device on this machine: install pocl-opencl-icd (CI has it)");
    return;
  }
  TempFile f("descent_fe_cl.ds", kProgram);
  TempFile s("descent_fe_cl.sched", "split C.i 16\nbind C.i_0 group.x\nbind C.i_1 local.x\n");
  ProcResult r = run_descent({"kernel", f.str(), "mm_relu", "--schedule", s.str(), "--backend",
                              "opencl", "--check"});
  INFO(describe(r));
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "mm_relu on opencl: output [64, 64]"));
  CHECK(contains(r.out, "matches the reference interpreter"));
  ProcResult src = run_descent({"kernel", f.str(), "mm_relu", "--schedule", s.str(), "--dump", "opencl"});
  CHECK(src.exit_code == 0);
  CHECK(contains(src.out, "__kernel"));
  CHECK(contains(src.out, "get_group_id(0)"));
  CHECK(contains(src.out, "get_local_id(0)"));
  // Tensor code in the REPL on the OpenCL device.
  ProcResult repl = run_descent({}, ":device opencl\nprint(sum_all(add(ones([4, 4]), ones([4, 4]))))\n");
  CHECK(repl.out == "32.0\n");
}

}  // TEST_SUITE

TEST_CASE("REPL: :view shows any view of the selected kernel, each device's included") {
  R r;
  r.repl.feed(":view");
  std::string list = r.take_out();
  for (const char* v : {"tir", "c", "llvm", "llvm-opt", "opencl", "schedule"})
    CHECK_MESSAGE(contains(list, std::string("  ") + v + " "), v);
  r.repl.feed(":view llvm");
  CHECK(contains(r.take_err(), "no kernel selected"));
  r.repl.feed(":kernel add n=4 m=4");
  r.take_out();
  r.repl.feed(":view llvm");
  CHECK(contains(r.take_out(), "define"));
  r.repl.feed(":view nope");
  CHECK(contains(r.take_err(), "unknown kernel view 'nope'"));
}

TEST_CASE("REPL: two schedules of one kernel side by side; :schedules lists them, :kernel ID goes back") {
  R r;
  r.repl.feed(":schedules");
  CHECK(r.take_out() == "no schedules open (:kernel NAME opens one)\n");
  r.repl.feed(":kernel matmul n=64 m=64 k=64");
  r.repl.feed(":sched split i 4");
  // A second schedule of matmul, at other dims, starts from the steps the kernel has.
  r.repl.feed(":kernel matmul n=128 m=16 k=32");
  CHECK(contains(r.take_out(), "T.grid(32, 4, 16, 32)"));
  r.repl.feed(":sched split j 8");
  r.take_out();
  r.repl.feed(":schedules");
  CHECK(r.take_out() ==
        "  1   matmul k=64 m=64 n=64: 1 step\n"
        "* 2   matmul k=32 m=16 n=128: 2 steps (the kernel's calls use it)\n");
  r.repl.feed(":kernel 1");
  std::string back = r.take_out();
  CHECK_MESSAGE(contains(back, "i_0"), back);
  CHECK_MESSAGE(!contains(back, "j_0"), back);
  r.repl.feed(":view schedule");
  CHECK(r.take_out() == "split i 4\n");
  r.repl.feed(":kernel");
  CHECK(r.take_out() == "kernel: matmul (schedule 1)\n");
  r.repl.feed(":sched unroll i_1");  // editing 1 makes it the one the calls use
  r.take_out();
  r.repl.feed(":schedules");
  CHECK(r.take_out() ==
        "* 1   matmul k=64 m=64 n=64: 2 steps (the kernel's calls use it)\n"
        "  2   matmul k=32 m=16 n=128: 2 steps\n");
  r.repl.feed("print(sum_all(matmul(ones([8, 4]), ones([4, 2]))))");
  CHECK(r.take_out() == "64.0\n");  // schedule 1's steps, applied at these shapes
  r.repl.feed(":kernel 7");
  CHECK(r.take_err() == "error: no schedule 7 (it was closed, or never opened)\n");
  r.repl.feed(":kernel 2x");
  CHECK(r.take_err() == "error: no schedule 2x (:schedules lists them)\n");
  auto words = r.repl.complete(":kernel ", "2");
  CHECK(std::find(words.begin(), words.end(), "2") != words.end());
  CHECK(r.take_err() == "");
}

TEST_CASE("REPL: flash attention step by step, and what each version moves (:traffic)") {
  R r;
  r.repl.feed(":kernel attention h=1 s=64 t=64 d=16 e=16");
  r.take_out();
  r.repl.feed(":traffic 2K");
  std::string unfused = r.take_out();
  INFO(unfused, r.take_err());
  CHECK(contains(unfused, "bytes moved through a cache of 2.0 KiB"));
  CHECK(contains(unfused, "sc           intermediate     16.0 KiB"));  // the scores in memory
  r.repl.feed(":traffic lots");
  CHECK(contains(r.take_err(), "error: 'lots' is not a size (e.g. 32K, 1M)"));
  for (const char* step :
       {"reverse_compute_at mx sc_acc.i", "reverse_compute_at p sc_acc.i",
        "reverse_compute_at l sc_acc.i", "reverse_compute_at out_acc sc_acc.i",
        "reverse_compute_at out sc_acc.i", "set_scope sc local", "set_scope sc_acc local",
        "set_scope p local", "set_scope mx local", "set_scope l local", "set_scope out_acc local",
        "reorder out_acc.j out_acc.c", "online_softmax mx", "merge sc.j mx.j"}) {
    r.repl.feed(std::string(":sched ") + step);
    INFO(step);
    CHECK(r.take_err() == "");
    r.take_out();
  }
  r.repl.feed(":traffic");
  std::string flash = r.take_out();
  INFO(flash);
  CHECK_FALSE(contains(flash, "intermediate"));  // nothing but q, k, v and out in memory
  CHECK(contains(flash, "k            input             4.0 KiB   256.0 KiB      64.0x"));
  r.repl.feed(":run cpu");
  CHECK(contains(r.take_out(), "matches the reference interpreter"));
}
