// Start-up (issue 34): a scalar `descent run` never opens LLVM or the ONNX importer, which
// live in plugins opened on first use (plugins/). Shown by running with both plugins pointed
// at files that do not exist: the scalar engines still run, and what needs a plugin fails with
// a message that says which part could not be loaded and what needs it, never a crash.
#include <doctest/doctest.h>

#include "frontend_util.h"

using fe::contains;

namespace {

const std::vector<std::string> kNoPlugins = {
    "DESCENT_LLVM_PLUGIN=/nonexistent/libdescent_llvm.so",
    "DESCENT_IMPORT_PLUGIN=/nonexistent/libdescent_import.so"};

const char* kProgram =
    "fn add3(a: int) -> int { return a + 3 }\n"
    "s = 0\n"
    "for i in 0..10 { s = s + add3(i) }\n"
    "print(s)\n";

}  // namespace

TEST_CASE("the scalar engines run without the LLVM and ONNX plugins") {
  fe::TempDir dir;
  std::string file = dir.write("p.ds", kProgram);
  for (const char* engine : {"ast", "stack", "reg", "native"}) {
    CAPTURE(engine);
    fe::ProcResult r = fe::run_descent({"run", file, "--engine", engine}, "", kNoPlugins);
    CHECK_MESSAGE(r.exited, fe::describe(r));
    CHECK(r.exit_code == 0);
    CHECK(r.out == "75\n");
    CHECK(r.err.empty());
  }
}

TEST_CASE("without the LLVM plugin, the jit and the cpu device say why and exit cleanly") {
  fe::TempDir dir;
  std::string file = dir.write("p.ds", kProgram);
  fe::ProcResult jit = fe::run_descent({"run", file, "--engine", "jit"}, "", kNoPlugins);
  CHECK_MESSAGE(jit.exited, fe::describe(jit));
  CHECK(jit.exit_code != 0);
  CHECK(contains(jit.err, "/nonexistent/libdescent_llvm.so) could not be loaded"));
  CHECK(contains(jit.err, "the jit engine"));
  std::string tensors = dir.write("t.ds", "print(sum_all(matmul(ones([4, 4]), ones([4, 4]))))\n");
  fe::ProcResult cpu = fe::run_descent({"run", tensors, "--device", "cpu"}, "", kNoPlugins);
  CHECK_MESSAGE(cpu.exited, fe::describe(cpu));
  CHECK(cpu.exit_code != 0);
  CHECK(contains(cpu.err, "could not be loaded"));
  // The same programs with the plugin where the build put it.
  fe::ProcResult ok = fe::run_descent({"run", file, "--engine", "jit"});
  CHECK(ok.exit_code == 0);
  CHECK(ok.out == "75\n");
  fe::ProcResult cpu_ok = fe::run_descent({"run", tensors, "--device", "cpu"});
  CHECK(cpu_ok.exit_code == 0);
  CHECK(cpu_ok.out == "64.0\n");
}

TEST_CASE("without the ONNX plugin, descent import says why") {
  fe::TempDir dir;
  std::string model = dir.write("m.onnx", "not a model");
  fe::ProcResult r = fe::run_descent({"import", model, "-o", dir.path("out")}, "", kNoPlugins);
  CHECK_MESSAGE(r.exited, fe::describe(r));
  CHECK(r.exit_code != 0);
  CHECK(contains(r.err, "/nonexistent/libdescent_import.so) could not be loaded"));
  CHECK(contains(r.err, "ONNX import needs it"));
  // With the plugin, the same file is read, and refused for what it is.
  fe::ProcResult read = fe::run_descent({"import", model, "-o", dir.path("out")});
  CHECK(read.exit_code != 0);
  CHECK(contains(read.err, "not an ONNX model"));
}
