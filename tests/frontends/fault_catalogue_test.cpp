// The fault catalogue (issue 13): each fault a user can meet, provoked for real and driven
// through the front ends (the `descent` binary as a child process, or the REPL in process),
// checking what the user sees: the message and its location, the exit code, and that the
// session goes on (a following input works). Allocation failures, Ctrl-C in kernels and
// errors in earlier inputs have their own files (faults_test.cpp, earlier_input_errors_test.cpp,
// tests/tensor/, tests/gpu/); the library-level OpenCL errors are in tests/gpu/runtime_test.cpp.
// Cases that need an OpenCL device say so and pass where there is none.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "frontend_util.h"

using fe::contains;
namespace fs = std::filesystem;

namespace {

const std::string kNoPlatform =
    "no OpenCL platform found: install pocl-opencl-icd (CPU) or your GPU vendor's ICD; "
    "the ICD loader looked in ";

// The default OpenCL device of `descent devices` (the first GPU, else the first device):
// its name and maximum work-group size; an empty name when there is none.
struct ClDevice {
  std::string name;
  long max_group = 0;
};
ClDevice default_opencl_device() {
  static const ClDevice dev = [] {
    ClDevice first, gpu;
    std::istringstream in(fe::run_descent({"devices"}).out);
    ClDevice cur;
    bool is_gpu = false;
    auto done = [&] {
      if (cur.name.empty()) return;
      if (first.name.empty()) first = cur;
      if (is_gpu && gpu.name.empty()) gpu = cur;
    };
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("device ", 0) == 0 && line.find(": ") != std::string::npos) {
        done();
        cur = {line.substr(line.find(": ") + 2), 0};
        is_gpu = false;
      } else if (line.rfind("  type ", 0) == 0) {
        is_gpu = contains(line, "GPU");
      } else if (line.rfind("  max work-group ", 0) == 0) {
        cur.max_group = std::stol(line.substr(line.find_first_of("0123456789")));
      }
    }
    done();
    return gpu.name.empty() ? first : gpu;
  }();
  return dev;
}

bool have_opencl() {
  if (!default_opencl_device().name.empty()) return true;
  MESSAGE("no OpenCL device on this machine: install pocl-opencl-icd (CI has it)");
  return false;
}

std::string file_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

const char* kScale =
    "kernel scale(a: f32[n]) -> f32[n] {\n"
    "  y[i] = a[i] * 2.0\n"
    "  return y\n"
    "}\n";

}  // namespace

TEST_SUITE("fault catalogue") {

TEST_CASE("no OpenCL platform: :device opencl and :run opencl say why, the REPL goes on") {
  fe::TempDir icd;  // an empty vendors directory: the ICD loader finds no driver
  std::string env = "OCL_ICD_VENDORS=" + icd.path("");
  auto r = fe::run_descent({},
                           ":device opencl\n"
                           "print(sum_all(ones([2, 2])))\n"
                           ":device\n"
                           ":kernel add n=4 m=4\n"
                           ":run opencl\n"
                           ":device cpu\n"
                           "print(sum_all(add(ones([2, 2]), ones([2, 2]))))\n",
                           {env});
  INFO(fe::describe(r));
  CHECK(r.exited);
  CHECK(r.exit_code == 0);
  std::string why = "error: " + kNoPlatform + icd.path("") + " (from OCL_ICD_VENDORS)\n";
  CHECK(r.err == why + why);  // once for :device opencl, once for :run opencl
  // The device stayed ref, the kernel was still selected, and the cpu device works.
  CHECK(contains(r.out, "4.0\ndevice: ref (devices: ref cpu opencl)\n"));
  CHECK(contains(r.out, "def add("));
  CHECK(contains(r.out, "\n8.0\n"));
}

TEST_CASE("no OpenCL platform: the bench skips the opencl columns, saying why, and runs the rest") {
  fe::TempDir icd;
  auto r = fe::run_descent({"bench", "--suite", "tensor", "--quick", "--workload", "vector_add",
                            "--engine", "cpu-naive", "--engine", "opencl-naive", "--engine",
                            "opencl-sched", "--threads", "1", "--repeats", "1"},
                           "", {"OCL_ICD_VENDORS=" + icd.path("")});
  INFO(fe::describe(r));
  CHECK(r.exited);
  CHECK(r.exit_code == 0);  // skipped columns are not failures
  std::string why = kNoPlatform + icd.path("") + " (from OCL_ICD_VENDORS)";
  for (const char* column : {"opencl-naive", "opencl-sched"})
    CHECK(contains(r.out, std::string("vector_add on ") + column +
                              ": skipped: no opencl device: " + why + "\n"));
  CHECK(contains(r.err, "opencl: no device, the opencl columns are skipped: " + why + "\n"));
  CHECK(contains(r.out, "vector_add  cpu-naive"));
  CHECK(contains(r.out, "ok\n"));
}

TEST_CASE("a work-group larger than the device allows is refused naming the limit; :undo and it runs") {
  if (!have_opencl()) return;
  ClDevice dev = default_opencl_device();
  REQUIRE(dev.max_group > 0);
  std::string group = std::to_string(2 * dev.max_group), n = std::to_string(4 * dev.max_group);
  std::string refused = "cannot launch kernel 'scale' on '" + dev.name + "': work-group (" + group +
                        ") (" + group + " work-items) exceeds the device's maximum work-group size " +
                        std::to_string(dev.max_group) +
                        " (CL_INVALID_WORK_GROUP_SIZE); bind shorter loops to local.*\n";
  std::string steps = "split i " + group + "\nbind i_0 group.x\nbind i_1 local.x\n";
  // The REPL: refused at :run, before any launch; one :undo and the same kernel runs.
  std::string input = std::string(kScale) + ":kernel scale n=" + n + "\n";
  for (const auto& step : fe::split_lines(steps)) input += ":sched " + step + "\n";
  input += ":run opencl\n:undo\n:run opencl\nprint(1 + 2)\n";
  auto r = fe::run_descent({}, input);
  INFO(fe::describe(r));
  CHECK(r.exit_code == 0);
  CHECK(r.err == "error: " + refused);
  CHECK(contains(r.out, "scale on opencl: output [" + n + "], sum "));
  CHECK(contains(r.out, "; matches the reference interpreter\n3\n"));
  // The CLI: the same refusal, exit 1.
  fe::TempDir dir;
  auto k = fe::run_descent({"kernel", dir.write("scale.ds", kScale), "scale", "--dim", "n=" + n,
                            "--backend", "opencl", "--schedule", dir.write("big.sched", steps)});
  INFO(fe::describe(k));
  CHECK(k.exit_code == 1);
  CHECK(k.err == "error: kernel 'scale' on opencl: " + refused);
}

TEST_CASE("an OpenCL build failure: the build log reaches the user, naming the file") {
  if (!have_opencl()) return;
  // The bench's hand-written kernels are read from <schedules>/../opencl/: a copy with a
  // syntax error on its line 2 stands in for a student's broken kernel.
  fe::TempDir dir;
  fs::create_directories(dir.path("schedules"));
  fs::create_directories(dir.path("opencl"));
  std::string cl = dir.write("opencl/matmul_4x16.cl",
                             "__kernel void matmul_4x16(__global float* c) {\n"
                             "  c[0] = undeclared_thing;\n"
                             "}\n");
  auto r = fe::run_descent({"bench", "--suite", "tensor", "--quick", "--workload", "matmul_128",
                            "--engine", "opencl-hand", "--repeats", "1"},
                           "", {"DESCENT_SCHEDULES_DIR=" + dir.path("schedules")});
  INFO(fe::describe(r));
  CHECK(r.exited);
  CHECK(r.exit_code == 1);  // a failed column fails the run
  CHECK(contains(r.out, "matmul_128 on opencl-hand: " + cl + ": OpenCL program build failed on '" +
                            default_opencl_device().name + "' (CL_BUILD_PROGRAM_FAILURE):\n"));
  // The driver's log itself, with the line of the error.
  CHECK(contains(r.out, ":2:"));
  CHECK(contains(r.out, "undeclared_thing"));
  CHECK(contains(r.out, "FAILED"));
}

TEST_CASE("save to an unwritable path: the error names the path and why, the session keeps its data") {
  fe::ReplHarness r;
  fe::TempDir dir;
  REQUIRE(r.feed("x = ones([2, 2])"));
  // Tests run as root, so permissions refuse nothing: a directory, a missing directory,
  // /proc (no file can be created there) and /dev/full (every write fails).
  struct Case {
    std::string path, why;
  } cases[] = {
      {dir.path(""), "cannot open for writing: Is a directory"},
      {dir.path("missing/x.npy"), "cannot open for writing: No such file or directory"},
      {"/proc/descent-x.npy", "cannot open for writing: "},
      {"/dev/full", "write error: No space left on device"},
  };
  int input = 1;
  for (const auto& c : cases) {
    INFO(c.path);
    std::string line = "save(x, \"" + c.path + "\")";
    REQUIRE(r.feed(line));
    ++input;
    std::string err = r.take_err();
    std::string label = "<repl:" + std::to_string(input) + ">";
    if (c.path.rfind("/proc", 0) == 0)  // the reason /proc gives varies between kernels
      CHECK(err.rfind(label + ":1:1: error: " + c.path + ": " + c.why, 0) == 0);
    else
      CHECK(fe::check_diagnostic(err, label, 1, 1, c.path + ": " + c.why, line) == "");
  }
  CHECK_FALSE(fs::exists(dir.path("missing")));
  REQUIRE(r.feed("print(sum_all(x))"));
  CHECK(r.take_out() == "4.0\n");
  std::string good = dir.path("x.npy");
  REQUIRE(r.feed("save(x, \"" + good + "\")"));
  REQUIRE(r.feed("print(sum_all(load(\"" + good + "\")))"));
  CHECK(r.take_err() == "");
  CHECK(r.take_out() == "4.0\n");
}

TEST_CASE("save to an unwritable path in `descent run`: a located runtime error, exit 1") {
  fe::TempDir dir;
  std::string prog = dir.write("s.ds", "x = ones([2, 2])\nsave(x, \"" + dir.path("") + "\")\nprint(1)\n");
  auto r = fe::run_descent({"run", prog});
  INFO(fe::describe(r));
  CHECK(r.exit_code == 1);
  CHECK(r.out == "");
  CHECK(fe::check_diagnostic(r.err, prog, 2, 1, dir.path("") + ": cannot open for writing: Is a directory",
                             "save(x, \"" + dir.path("") + "\")") == "");
}

TEST_CASE(".npy removed or truncated between inputs: loaded data stays, a new load is a located error") {
  fe::ReplHarness r;
  fe::TempDir dir;
  std::string p = dir.path("a.npy");
  REQUIRE(r.feed("save(arange(100), \"" + p + "\")"));
  REQUIRE(r.feed("x = load(\"" + p + "\")"));
  std::string full = file_text(p);
  REQUIRE(full.size() == 528);  // a 128-byte header, then 100 floats
  fs::remove(p);
  REQUIRE(r.feed("print(sum_all(x))"));  // load read the file at the call: nothing is lazy
  CHECK(r.take_out() == "4950.0\n");
  REQUIRE(r.feed("y = load(\"" + p + "\")"));
  CHECK(fe::check_diagnostic(r.take_err(), "<repl:4>", 1, 5, p + ": cannot open: No such file or directory",
                             "y = load(\"" + p + "\")") == "");
  dir.write("a.npy", full.substr(0, 200));
  REQUIRE(r.feed("y = load(\"" + p + "\")"));
  CHECK(fe::check_diagnostic(r.take_err(), "<repl:5>", 1, 5,
                             p + ": data is truncated: shape (100,) needs 400 bytes, the file has 72",
                             "y = load(\"" + p + "\")") == "");
  REQUIRE(r.feed("print(sum_all(x) + 1.0)"));
  CHECK(r.take_out() == "4951.0\n");
  CHECK(r.take_err() == "");
}

TEST_CASE(".npy removed or truncated while one input keeps loading it: a located error, then the next input") {
  // One input loads the file again and again; once it has printed, the file is removed (or
  // atomically replaced by a truncated copy). Whenever that lands, a load sees either the
  // whole file or none (or the truncated one): the loop ends with that load's error.
  fe::TempDir dir;
  std::string p = dir.path("a.npy");
  REQUIRE(fe::run_descent({}, "save(arange(100), \"" + p + "\")\n").exit_code == 0);
  std::string full = file_text(p);
  for (bool truncate : {false, true}) {
    INFO(std::string(truncate ? "truncated" : "removed"));
    dir.write("a.npy", full);
    fe::Child c({DESCENT_BIN});
    std::string loop = "while true { print(sum_all(load(\"" + p + "\"))) }";
    c.write(loop + "\nprint(7)\n");
    REQUIRE(c.wait_until([](const std::string& out, const std::string&) {
      return contains(out, "4950.0\n");
    }));
    if (truncate) {
      dir.write("b.npy", full.substr(0, 200));
      fs::rename(dir.path("b.npy"), p);
    } else {
      fs::remove(p);
    }
    auto r = c.finish();
    INFO(fe::describe(r));
    CHECK(r.exit_code == 0);
    std::string why = truncate ? "data is truncated: shape (100,) needs 400 bytes, the file has 72"
                               : "cannot open: No such file or directory";
    CHECK(fe::check_diagnostic(r.err, "<repl:1>", 1, int(loop.find("load") + 1), p + ": " + why,
                               loop) == "");
    CHECK(r.out.size() >= 7);
    CHECK(r.out.substr(r.out.size() - 9) == "4950.0\n7\n");
  }
}

TEST_CASE("ulimit -v during a session: saving and loading large tensors fail cleanly or not at all") {
  // Under a 3.3 GiB address-space limit: a 1.8 GiB tensor fits once, not twice. Saving it
  // must not copy it (before the fix save serialised the whole file in memory first and
  // the process aborted on std::bad_alloc); a .npy file larger than the memory left is an
  // error at the load (the file is sparse: it takes no disk); the session goes on.
  fe::TempDir dir;
  std::string huge = dir.path("huge.npy");
  {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (40000, 40000), }";
    while ((10 + header.size() + 1) % 64) header += ' ';
    header += '\n';
    std::string pre = std::string("\x93NUMPY\x01\x00", 8);
    pre += char(header.size() & 0xFF);
    pre += char(header.size() >> 8);
    dir.write("huge.npy", pre + header);
    fs::resize_file(huge, 10 + header.size() + uint64_t(40000) * 40000 * 4);
  }
  // :memory 1T: past the tensor limit, to the allocation that fails under the ulimit.
  auto r = fe::run_descent_limited("3500000", {},
                                   ":memory 1T\n"
                                   "x = arange(10)\n"
                                   "big = zeros([30000, 16000])\n"
                                   "save(big, \"/dev/null\")\n"
                                   "print(big[1, 2])\n"
                                   "h = load(\"" + huge + "\")\n"
                                   "print(sum_all(x))\n"
                                   "c = zeros([60000, 60000])\n"
                                   "print(sum_all(x) + 1.0)\n");
  if (fe::limit_unsupported(r)) return;
  INFO(fe::describe(r));
  CHECK(r.exited);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "0.0\n45.0\n46.0\n");
  std::string load_line = "h = load(\"" + huge + "\")";
  CHECK(fe::check_diagnostic(r.err, "<repl:5>", 1, 5,
                             huge + ": out of memory reading the file (" +
                                 std::to_string(fs::file_size(huge)) + " bytes)",
                             load_line) == "");
  CHECK(fe::check_diagnostic(r.err, "<repl:7>", 1, 5,
                             "out of memory allocating a tensor of shape [60000, 60000]",
                             "c = zeros([60000, 60000])", 3) == "");
}

// Starts `descent bench ARGS`, waits until its progress says `marker` (the cell is running),
// sends SIGINT and collects the result. No wall-clock bound: a bench that ignored the signal
// would never end the endless cell below and be killed at finish()'s deadline (a failure), and
// that a kernel stops at its own interrupt poll is tested deterministically in
// tests/tensor/interrupt_test.cpp.
fe::ProcResult interrupt_bench(const std::vector<std::string>& args, const std::string& marker,
                               const std::vector<std::string>& env) {
  std::vector<std::string> argv = {DESCENT_BIN, "bench"};
  argv.insert(argv.end(), args.begin(), args.end());
  fe::Child c(argv, env);
  REQUIRE(c.wait_until([&](const std::string&, const std::string& err) { return contains(err, marker); },
                       60.0));
  REQUIRE(c.wait_for_handler(SIGINT));
  c.send_signal(SIGINT);
  return c.finish();
}

TEST_CASE("SIGINT during descent bench: it stops, shows what finished, writes no file, exit 130") {
  // The programs directory is a copy whose second workload never ends, so the signal always
  // lands while that cell is measuring, however fast the machine.
  fe::TempDir dir;
  fs::copy_file(std::string(DESCENT_TESTS_DIR) + "/../bench/programs/b1_fib.ds", dir.path("b1_fib.ds"));
  dir.write("b2_sum_squares.ds", "N = 100000000  # bench parameter\nwhile true { }\n");
  std::string csv = dir.write("out.csv", "an earlier complete run\n");
  std::string json = dir.write("out.json", "{}\n");
  std::vector<std::string> env = {"DESCENT_BENCH_DIR=" + dir.path("")};
  auto r = interrupt_bench({"--suite", "vm", "--quick", "--workload", "b1_fib", "--workload",
                            "b2_sum_squares", "--engine", "ast", "--csv", csv, "--json", json},
                           "[2/2] vm/b2_sum_squares on ast: 3 runs ...", env);
  INFO(fe::describe(r));
  CHECK(r.exited);
  CHECK(r.exit_code == 130);
  CHECK_FALSE(r.timed_out);  // the endless program stopped at its loop's interrupt check
  CHECK(contains(r.out, "b1_fib"));  // the finished cell's row
  CHECK(contains(r.err, "[2/2] vm/b2_sum_squares on ast: interrupted\n"));
  CHECK(contains(r.err, "error: interrupted: the results above are partial; not written: " + csv +
                            ", " + json + "\n"));
  // The files of the earlier run are untouched.
  CHECK(file_text(csv) == "an earlier complete run\n");
  CHECK(file_text(json) == "{}\n");

  // Interrupted in the first cell: nothing finished, nothing written.
  auto first = interrupt_bench({"--suite", "vm", "--quick", "--workload", "b2_sum_squares",
                                "--engine", "ast", "--csv", dir.path("new.csv")},
                               "[1/1] vm/b2_sum_squares on ast: 3 runs ...", env);
  INFO(fe::describe(first));
  CHECK(first.exit_code == 130);
  CHECK(contains(first.err, "error: interrupted: no cell finished; not written: " + dir.path("new.csv") + "\n"));
  CHECK_FALSE(fs::exists(dir.path("new.csv")));
}

TEST_CASE("SIGINT during a tensor bench cell: the kernel stops at its interrupt poll, exit 130") {
  // A naive 1024^3 matmul on one thread takes seconds per run: the signal lands inside it.
  fe::TempDir dir;
  std::string csv = dir.path("t.csv");
  auto r = interrupt_bench({"--suite", "tensor", "--workload", "matmul_1024", "--engine",
                            "cpu-naive", "--threads", "1", "--csv", csv},
                           "matmul_1024 on cpu-naive x1 ...", {});
  INFO(fe::describe(r));
  CHECK(r.exit_code == 130);
  CHECK_FALSE(r.timed_out);
  CHECK(contains(r.err, "matmul_1024 on cpu-naive x1: FAILED: interrupted\n"));
  CHECK(contains(r.err, "error: interrupted: the results above are partial; not written: " + csv + "\n"));
  CHECK_FALSE(fs::exists(csv));
}

}  // TEST_SUITE
