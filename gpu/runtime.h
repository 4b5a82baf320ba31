// The OpenCL runtime: which devices exist, a context on one of them, device buffers, program
// builds (cached: each source is compiled once per context) and launches timed by the
// device's own profiling events, so a kernel's time is reported apart from the transfers.
//
// Written against the OpenCL 1.2 C API (CL_TARGET_OPENCL_VERSION 120): PoCL on any CPU and
// every GPU vendor's ICD accept it. The ICD loader (libOpenCL.so) finds drivers through the
// files in /etc/OpenCL/vendors (or the directory OCL_ICD_VENDORS names); when it finds none
// every function here fails with an explanation of how to get one, and the CPU backends keep
// working. Nothing here prints, exits or throws; errors are values that carry the OpenCL
// error name ("CL_OUT_OF_RESOURCES") and what was being attempted.
//
// This header does not include CL/cl.h: the lead's front ends see only plain C++ types.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace descent::gpu {

// "CL_OUT_OF_RESOURCES" for -5, ..., "CL error -9999" for codes the table does not know.
std::string error_name(int code);

struct DeviceInfo {
  int platform_index = 0;  // position in clGetPlatformIDs' list
  int device_index = 0;    // position in that platform's clGetDeviceIDs(ALL) list
  std::string platform;    // "Portable Computing Language"
  std::string name;        // "pthread-skylake-avx512"
  std::string vendor;
  std::string type;        // "GPU", "CPU", "accelerator", "other"
  std::string version;           // CL_DEVICE_VERSION: "OpenCL 3.0 PoCL ..."
  std::string opencl_c_version;  // CL_DEVICE_OPENCL_C_VERSION: "OpenCL C 1.2 pocl"
  std::string driver_version;
  int64_t compute_units = 0;
  int64_t clock_mhz = 0;
  int64_t global_mem_bytes = 0;
  int64_t local_mem_bytes = 0;    // __local memory per work-group
  int64_t max_alloc_bytes = 0;    // largest single buffer
  int64_t max_work_group_size = 0;
  std::vector<int64_t> max_work_item_sizes;  // per dimension
};

// Every device of every platform. False when there is none, with *error saying why and what
// to install (see no_platform_text()).
bool list_devices(std::vector<DeviceInfo>* out, std::string* error);
// The text of `descent devices`: one paragraph per device, or the explanation.
std::string describe_devices();
// "0.0: pthread-skylake-avx512 (CPU, Portable Computing Language)": one line per device,
// in the numbering open_context accepts. Empty when there is none.
std::vector<std::string> device_names();
// Why nothing was found: names the directory the ICD loader searched (OCL_ICD_VENDORS when
// set, else /etc/OpenCL/vendors) and how to get a driver.
std::string no_platform_text();

// Which device a context runs on. -1/-1 picks the default: the first GPU, else the first
// device of any type.
struct DeviceChoice {
  int platform = -1;
  int device = -1;
};
// "1.0" -> {1, 0}; "" -> default. False with *error for anything else.
bool parse_device_choice(const std::string& text, DeviceChoice* out, std::string* error);

struct Timing {
  double build_s = 0;     // program compilation (0 when the program came from the cache)
  double upload_s = 0;    // host -> device copies and buffer fills
  double kernel_s = 0;    // every kernel launch, from the device's profiling events
  double download_s = 0;  // device -> host copy of the result
};

class Context;

// Device memory. Move-only; released by its destructor (before its Context goes away).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  size_t bytes() const { return bytes_; }
  bool valid() const { return mem_ != nullptr; }

 private:
  friend class Context;
  void* mem_ = nullptr;  // cl_mem
  size_t bytes_ = 0;
};

// A built program (owned by its Context's cache; valid as long as the Context).
struct Program {
  void* handle = nullptr;  // cl_program
  std::string source;
};

// The shape of one NDRange launch. dims 1..3; local sizes all 0 let the driver choose.
struct LaunchDims {
  int dims = 1;
  int64_t global[3] = {1, 1, 1};
  int64_t local[3] = {0, 0, 0};
};

// One kernel argument: a buffer, or (when buffer is null) a 32-bit int value.
struct KernelArg {
  const DeviceBuffer* buffer = nullptr;
  int32_t value = 0;
};

class Context {
 public:
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Opens a context and a profiling command queue on the chosen device.
  static bool open(const DeviceChoice& choice, std::unique_ptr<Context>* out, std::string* error);

  const DeviceInfo& device() const { return info_; }

  // bytes > 0. The buffer is uninitialised until written or filled.
  bool alloc(size_t bytes, DeviceBuffer* out, std::string* error);
  // Blocking copies; *seconds (may be null) gets the device-side time of the transfer.
  bool write(DeviceBuffer& dst, const void* src, size_t bytes, double* seconds, std::string* error);
  bool read(const DeviceBuffer& src, void* dst, size_t bytes, double* seconds, std::string* error);
  bool fill_zero(DeviceBuffer& dst, double* seconds, std::string* error);

  // Compiles `source` (OpenCL C) for this device, or returns the cached program built from
  // the same source and options earlier. A failed build's *error holds the full build log.
  // *seconds (may be null) is the compile time, 0 on a cache hit.
  bool build(const std::string& source, const std::string& options, Program* out,
             double* seconds, std::string* error);
  size_t builds() const { return builds_; }  // compilations actually run (cache misses)

  // Runs kernel `name` of `program` once and waits for it. Work-group sizes the device
  // cannot run are refused before launching, naming the limit; *seconds (may be null) is
  // the kernel's execution time from its profiling event.
  bool launch(const Program& program, const std::string& name, const std::vector<KernelArg>& args,
              const LaunchDims& dims, double* seconds, std::string* error);

 private:
  Context() = default;
  DeviceInfo info_;
  void* context_ = nullptr;  // cl_context
  void* queue_ = nullptr;    // cl_command_queue
  void* device_ = nullptr;   // cl_device_id
  // build() and launch() may be called from several threads (a REPL and a benchmark); the
  // caches and the one command queue are used under this lock.
  std::mutex mutex_;
  std::map<std::string, void*> programs_;  // options + '\n' + source -> cl_program
  std::map<std::pair<void*, std::string>, void*> kernels_;  // (program, name) -> cl_kernel
  size_t builds_ = 0;
};

// The process-wide context on the default device (opened on first use; later calls return
// the same one, or the same error). The REPL and the CLI share it, so each kernel source is
// built once per process.
Context* default_context(std::string* error);

}  // namespace descent::gpu
