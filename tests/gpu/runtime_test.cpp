// test_gpu_runtime: the OpenCL runtime on the first device (PoCL in CI): discovery and its
// text, contexts, buffers, cached builds with the full log on failure, launches refused with
// the limit they exceed, and a process with no OpenCL platform at all (the ICD loader pointed
// at an empty vendor directory, in a child process since the loader reads it only once).
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpu/opencl_codegen.h"
#include "gpu/runtime.h"
#include "tensor/tensor.h"

using namespace descent;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

gpu::Context& context() {
  std::string error;
  gpu::Context* c = gpu::default_context(&error);
  REQUIRE_MESSAGE(c != nullptr, error);
  return *c;
}

const char* kScale = R"(
__kernel void scale(__global float* x, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] = x[i] * 2.0f;
}
)";

}  // namespace

TEST_CASE("error names") {
  CHECK(gpu::error_name(0) == "CL_SUCCESS");
  CHECK(gpu::error_name(-5) == "CL_OUT_OF_RESOURCES");
  CHECK(gpu::error_name(-11) == "CL_BUILD_PROGRAM_FAILURE");
  CHECK(gpu::error_name(-54) == "CL_INVALID_WORK_GROUP_SIZE");
  CHECK(gpu::error_name(-1001) == "CL_PLATFORM_NOT_FOUND_KHR");
  CHECK(gpu::error_name(-4242) == "CL error -4242");
}

TEST_CASE("device choice text") {
  gpu::DeviceChoice c;
  std::string error;
  REQUIRE(gpu::parse_device_choice("1.2", &c, &error));
  CHECK(c.platform == 1);
  CHECK(c.device == 2);
  REQUIRE(gpu::parse_device_choice("", &c, &error));
  CHECK(c.platform == -1);
  CHECK_FALSE(gpu::parse_device_choice("gpu", &c, &error));
  CHECK(error == "bad device 'gpu': expected PLATFORM.DEVICE, e.g. 0.0 (see `descent devices`)");
  CHECK_FALSE(gpu::parse_device_choice("1.", &c, &error));
}

TEST_CASE("discovery: every device, described") {
  if (std::getenv("DESCENT_GPU_NO_PLATFORM_CHILD")) return;
  std::vector<gpu::DeviceInfo> devices;
  std::string error;
  REQUIRE_MESSAGE(gpu::list_devices(&devices, &error), error);
  REQUIRE(!devices.empty());
  for (const auto& d : devices) {
    CHECK(!d.name.empty());
    CHECK(d.compute_units > 0);
    CHECK(d.global_mem_bytes > 0);
    CHECK(d.max_work_group_size > 0);
    CHECK(d.opencl_c_version.rfind("OpenCL C ", 0) == 0);
  }
  std::string text = gpu::describe_devices();
  CHECK(text.rfind("device 0.0: " + devices[0].name + "\n", 0) == 0);
  for (const char* field : {"  platform ", "  vendor ", "  type ", "  compute units ", "  global memory ",
                            "  local memory ", "  max work-group ", "  OpenCL C ", "  version "})
    CHECK_MESSAGE(text.find(field) != std::string::npos, field);
  std::vector<std::string> names = gpu::device_names();
  REQUIRE(names.size() == devices.size());
  CHECK(names[0] == "0.0: " + devices[0].name + " (" + devices[0].type + ", " + devices[0].platform + ")");

  // The default is the first GPU, else the first device.
  gpu::Context& c = context();
  bool any_gpu = false;
  for (const auto& d : devices) any_gpu = any_gpu || d.type == "GPU";
  if (!any_gpu) CHECK(c.device().name == devices[0].name);
  else CHECK(c.device().type == "GPU");

  std::unique_ptr<gpu::Context> other;
  CHECK_FALSE(gpu::Context::open({7, 3}, &other, &error));
  CHECK(error.rfind("no OpenCL device 7.3 (devices: 0.0 " + devices[0].name, 0) == 0);
}

TEST_CASE("buffers, a cached build, a profiled launch") {
  if (std::getenv("DESCENT_GPU_NO_PLATFORM_CHILD")) return;
  gpu::Context& c = context();
  std::vector<float> host(100);
  for (size_t i = 0; i < host.size(); ++i) host[i] = float(i);
  gpu::DeviceBuffer buf;
  std::string error;
  REQUIRE_MESSAGE(c.alloc(host.size() * sizeof(float), &buf, &error), error);
  double up = -1;
  REQUIRE_MESSAGE(c.write(buf, host.data(), buf.bytes(), &up, &error), error);
  CHECK(up >= 0);

  size_t before = c.builds();
  gpu::Program p;
  double build_s = 0;
  REQUIRE_MESSAGE(c.build(kScale, "", &p, &build_s, &error), error);
  CHECK(c.builds() == before + 1);
  gpu::Program again;
  double again_s = -1;
  REQUIRE(c.build(kScale, "", &again, &again_s, &error));
  CHECK(c.builds() == before + 1);  // the same source is compiled once
  CHECK(again_s == 0.0);
  CHECK(again.handle == p.handle);

  gpu::LaunchDims dims;
  dims.global[0] = 128;
  dims.local[0] = 32;
  double kernel_s = -1;
  REQUIRE_MESSAGE(c.launch(p, "scale", {{&buf, 0}, {nullptr, 100}}, dims, &kernel_s, &error), error);
  CHECK(kernel_s >= 0);
  std::vector<float> back(100, -1.0f);
  REQUIRE(c.read(buf, back.data(), buf.bytes(), nullptr, &error));
  for (size_t i = 0; i < back.size(); ++i) CHECK(back[i] == 2.0f * float(i));

  REQUIRE(c.fill_zero(buf, nullptr, &error));
  REQUIRE(c.read(buf, back.data(), buf.bytes(), nullptr, &error));
  CHECK(back[42] == 0.0f);

  CHECK_FALSE(c.launch(p, "nope", {{&buf, 0}}, dims, nullptr, &error));
  CHECK(error == "clCreateKernel 'nope' failed: CL_INVALID_KERNEL_NAME");
  CHECK_FALSE(c.alloc(0, &buf, &error));
  CHECK(error == "cannot allocate an empty OpenCL buffer");
}

TEST_CASE("a build failure reports the full build log") {
  if (std::getenv("DESCENT_GPU_NO_PLATFORM_CHILD")) return;
  gpu::Context& c = context();
  gpu::Program p;
  std::string error;
  const char* broken =
      "__kernel void broken(__global float* x) {\n"
      "  x[0] = not_declared_anywhere;\n"
      "  x[1] = also_missing;\n"
      "}\n";
  CHECK_FALSE(c.build(broken, "", &p, nullptr, &error));
  CHECK(error.rfind("OpenCL program build failed on '" + c.device().name + "' (CL_BUILD_PROGRAM_FAILURE):\n", 0) == 0);
  // Both errors, with their lines: the whole log, not its first line.
  CHECK(error.find("not_declared_anywhere") != std::string::npos);
  CHECK(error.find("also_missing") != std::string::npos);
  CHECK(error.find(":2:") != std::string::npos);
  CHECK(error.find(":3:") != std::string::npos);
  // A failed build is not cached: the next attempt compiles (and fails) again.
  size_t before = c.builds();
  CHECK_FALSE(c.build(broken, "", &p, nullptr, &error));
  CHECK(c.builds() == before + 1);
}

TEST_CASE("launches the device cannot run are refused with the limit they exceed") {
  if (std::getenv("DESCENT_GPU_NO_PLATFORM_CHILD")) return;
  gpu::Context& c = context();
  gpu::Program p;
  std::string error;
  REQUIRE(c.build(kScale, "", &p, nullptr, &error));
  gpu::DeviceBuffer buf;
  REQUIRE(c.alloc(4096, &buf, &error));
  int64_t max = c.device().max_work_group_size;
  gpu::LaunchDims dims;
  dims.global[0] = 4 * max;
  dims.local[0] = 2 * max;
  CHECK_FALSE(c.launch(p, "scale", {{&buf, 0}, {nullptr, 0}}, dims, nullptr, &error));
  CHECK(error == "cannot launch kernel 'scale' on '" + c.device().name + "': work-group " +
                     std::to_string(2 * max) + " (" + std::to_string(2 * max) +
                     " work-items) exceeds the device's maximum work-group size " + std::to_string(max) +
                     " (CL_INVALID_WORK_GROUP_SIZE)");
  dims.global[0] = 100;
  dims.local[0] = 32;
  CHECK_FALSE(c.launch(p, "scale", {{&buf, 0}, {nullptr, 0}}, dims, nullptr, &error));
  CHECK(error == "cannot launch kernel 'scale' on '" + c.device().name +
                     "': work-group 32 (32 work-items) does not divide the global size 100 in dimension 0 "
                     "(CL_INVALID_WORK_GROUP_SIZE)");
  dims.dims = 4;
  CHECK_FALSE(c.launch(p, "scale", {{&buf, 0}, {nullptr, 0}}, dims, nullptr, &error));
  CHECK(error == "kernel 'scale': 4 dimensions (1 to 3 allowed)");
}

// The child half: run with OCL_ICD_VENDORS at an empty directory.
TEST_CASE("no platform: clear errors, and nothing crashes") {
  const char* child = std::getenv("DESCENT_GPU_NO_PLATFORM_CHILD");
  std::string dir = "/tmp/descent_no_icd_" + std::to_string(::getpid());
  if (!child) {
    // The parent: start this test case again in a fresh process whose ICD loader finds
    // nothing, and check that every assertion there passed.
    std::filesystem::create_directories(dir);
    char self[4096];
    ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    REQUIRE(n > 0);
    self[n] = '\0';
    std::string log = dir + ".log";
    std::string cmd = "OCL_ICD_VENDORS=" + dir + " DESCENT_GPU_NO_PLATFORM_CHILD=" + dir + " '" +
                      std::string(self) + "' -tc='no platform*' > " + log + " 2>&1";
    int rc = std::system(cmd.c_str());
    std::string out = read_file(log);
    INFO(out);
    CHECK(WIFEXITED(rc));
    CHECK(WEXITSTATUS(rc) == 0);
    CHECK(out.find("1 passed") != std::string::npos);
    std::filesystem::remove_all(dir);
    std::filesystem::remove(log);
    return;
  }
  std::string want = "no OpenCL platform found: install pocl-opencl-icd (CPU) or your GPU vendor's ICD; "
                     "the ICD loader looked in " + std::string(child) + " (from OCL_ICD_VENDORS)";
  std::vector<gpu::DeviceInfo> devices;
  std::string error;
  CHECK_FALSE(gpu::list_devices(&devices, &error));
  CHECK(error == want);
  CHECK(gpu::describe_devices() == want + "\n");
  CHECK(gpu::device_names().empty());
  std::unique_ptr<gpu::Context> c;
  CHECK_FALSE(gpu::Context::open({}, &c, &error));
  CHECK(error == want);
  error.clear();
  CHECK(gpu::default_context(&error) == nullptr);
  CHECK(error == want);
  CHECK(gpu::default_context(&error) == nullptr);  // asked again: the same answer
  // Generating OpenCL C needs no device.
  tir::PrimFunc f;
  f.name = "one";
  tir::Buffer out;
  out.name = "y";
  out.shape = {4};
  out.role = tir::BufferRole::Output;
  f.buffers = {out};
  f.output = 0;
  f.body = tir::make_for("i", 4, tir::make_store(0, [] {
                           std::vector<tir::ExprPtr> v;
                           v.push_back(tir::var("i"));
                           return v;
                         }(), tir::float_imm(1)));
  gpu::OpenCLProgram p;
  CHECK(gpu::generate_opencl(f, &p, &error));
}
