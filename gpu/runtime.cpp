// [SECTION] index: error names | discovery | describe | Context | buffers | programs |
// launches | the default context.
//
// Every OpenCL call's status is checked and turned into text naming the call, the error
// and, where it helps, the limit that was exceeded; the caller decides what to print.
#include "gpu/runtime.h"

#include <CL/cl.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <sstream>

namespace descent::gpu {

// ---------------------------------------------------------------------------------------
// [SECTION] error names
// ---------------------------------------------------------------------------------------

std::string error_name(int code) {
  switch (code) {
#define NAME(c) case c: return #c;
    NAME(CL_SUCCESS)
    NAME(CL_DEVICE_NOT_FOUND)
    NAME(CL_DEVICE_NOT_AVAILABLE)
    NAME(CL_COMPILER_NOT_AVAILABLE)
    NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    NAME(CL_OUT_OF_RESOURCES)
    NAME(CL_OUT_OF_HOST_MEMORY)
    NAME(CL_PROFILING_INFO_NOT_AVAILABLE)
    NAME(CL_MEM_COPY_OVERLAP)
    NAME(CL_IMAGE_FORMAT_MISMATCH)
    NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    NAME(CL_BUILD_PROGRAM_FAILURE)
    NAME(CL_MAP_FAILURE)
    NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    NAME(CL_COMPILE_PROGRAM_FAILURE)
    NAME(CL_LINKER_NOT_AVAILABLE)
    NAME(CL_LINK_PROGRAM_FAILURE)
    NAME(CL_DEVICE_PARTITION_FAILED)
    NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    NAME(CL_INVALID_VALUE)
    NAME(CL_INVALID_DEVICE_TYPE)
    NAME(CL_INVALID_PLATFORM)
    NAME(CL_INVALID_DEVICE)
    NAME(CL_INVALID_CONTEXT)
    NAME(CL_INVALID_QUEUE_PROPERTIES)
    NAME(CL_INVALID_COMMAND_QUEUE)
    NAME(CL_INVALID_HOST_PTR)
    NAME(CL_INVALID_MEM_OBJECT)
    NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    NAME(CL_INVALID_IMAGE_SIZE)
    NAME(CL_INVALID_SAMPLER)
    NAME(CL_INVALID_BINARY)
    NAME(CL_INVALID_BUILD_OPTIONS)
    NAME(CL_INVALID_PROGRAM)
    NAME(CL_INVALID_PROGRAM_EXECUTABLE)
    NAME(CL_INVALID_KERNEL_NAME)
    NAME(CL_INVALID_KERNEL_DEFINITION)
    NAME(CL_INVALID_KERNEL)
    NAME(CL_INVALID_ARG_INDEX)
    NAME(CL_INVALID_ARG_VALUE)
    NAME(CL_INVALID_ARG_SIZE)
    NAME(CL_INVALID_KERNEL_ARGS)
    NAME(CL_INVALID_WORK_DIMENSION)
    NAME(CL_INVALID_WORK_GROUP_SIZE)
    NAME(CL_INVALID_WORK_ITEM_SIZE)
    NAME(CL_INVALID_GLOBAL_OFFSET)
    NAME(CL_INVALID_EVENT_WAIT_LIST)
    NAME(CL_INVALID_EVENT)
    NAME(CL_INVALID_OPERATION)
    NAME(CL_INVALID_GL_OBJECT)
    NAME(CL_INVALID_BUFFER_SIZE)
    NAME(CL_INVALID_MIP_LEVEL)
    NAME(CL_INVALID_GLOBAL_WORK_SIZE)
    NAME(CL_INVALID_PROPERTY)
    NAME(CL_INVALID_IMAGE_DESCRIPTOR)
    NAME(CL_INVALID_COMPILER_OPTIONS)
    NAME(CL_INVALID_LINKER_OPTIONS)
    NAME(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef NAME
    // The ICD loader's own code for "no driver registered" (cl_khr_icd).
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "CL error " + std::to_string(code);
  }
}

namespace {

bool fail(std::string* error, const std::string& text) {
  if (error) *error = text;
  return false;
}

bool fail_cl(std::string* error, const std::string& what, cl_int code) {
  return fail(error, what + " failed: " + error_name(code));
}

// ---------------------------------------------------------------------------------------
// [SECTION] discovery
// ---------------------------------------------------------------------------------------

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (clGetPlatformInfo(p, what, n, s.data(), nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string device_string(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (clGetDeviceInfo(d, what, n, s.data(), nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

template <class T>
int64_t device_number(cl_device_id d, cl_device_info what) {
  T v{};
  if (clGetDeviceInfo(d, what, sizeof v, &v, nullptr) != CL_SUCCESS) return 0;
  return int64_t(v);
}

DeviceInfo query(cl_device_id d, int platform_index, int device_index, const std::string& platform) {
  DeviceInfo info;
  info.platform_index = platform_index;
  info.device_index = device_index;
  info.platform = platform;
  info.name = device_string(d, CL_DEVICE_NAME);
  info.vendor = device_string(d, CL_DEVICE_VENDOR);
  info.version = device_string(d, CL_DEVICE_VERSION);
  info.opencl_c_version = device_string(d, CL_DEVICE_OPENCL_C_VERSION);
  info.driver_version = device_string(d, CL_DRIVER_VERSION);
  cl_device_type type = 0;
  clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
  info.type = (type & CL_DEVICE_TYPE_GPU) ? "GPU"
              : (type & CL_DEVICE_TYPE_CPU) ? "CPU"
              : (type & CL_DEVICE_TYPE_ACCELERATOR) ? "accelerator" : "other";
  info.compute_units = device_number<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS);
  info.clock_mhz = device_number<cl_uint>(d, CL_DEVICE_MAX_CLOCK_FREQUENCY);
  info.global_mem_bytes = device_number<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE);
  info.local_mem_bytes = device_number<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE);
  info.max_alloc_bytes = device_number<cl_ulong>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  info.max_work_group_size = device_number<size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  cl_uint dims = 0;
  clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, sizeof dims, &dims, nullptr);
  if (dims > 0 && dims <= 16) {
    std::vector<size_t> sizes(dims);
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(size_t) * dims, sizes.data(),
                        nullptr) == CL_SUCCESS)
      for (size_t s : sizes) info.max_work_item_sizes.push_back(int64_t(s));
  }
  return info;
}

struct Found {
  DeviceInfo info;
  cl_device_id id;
};

// Every device of every platform, in (platform, device) order.
bool discover(std::vector<Found>* out, std::string* error) {
  out->clear();
  cl_uint np = 0;
  cl_int rc = clGetPlatformIDs(0, nullptr, &np);
  // -1001 (CL_PLATFORM_NOT_FOUND_KHR) is what the ICD loader answers when no vendor file
  // names a driver it can load; some loaders answer 0 platforms instead.
  if (rc == -1001 || (rc == CL_SUCCESS && np == 0)) return fail(error, no_platform_text());
  if (rc != CL_SUCCESS) return fail_cl(error, "clGetPlatformIDs", rc);
  std::vector<cl_platform_id> platforms(np);
  rc = clGetPlatformIDs(np, platforms.data(), nullptr);
  if (rc != CL_SUCCESS) return fail_cl(error, "clGetPlatformIDs", rc);
  for (cl_uint p = 0; p < np; ++p) {
    std::string pname = platform_string(platforms[p], CL_PLATFORM_NAME);
    cl_uint nd = 0;
    rc = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &nd);
    if (rc == CL_DEVICE_NOT_FOUND || nd == 0) continue;  // a platform with nothing plugged in
    if (rc != CL_SUCCESS) continue;
    std::vector<cl_device_id> devices(nd);
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, nd, devices.data(), nullptr) != CL_SUCCESS)
      continue;
    for (cl_uint d = 0; d < nd; ++d)
      out->push_back({query(devices[d], int(p), int(d), pname), devices[d]});
  }
  if (out->empty())
    return fail(error, "OpenCL platforms were found (" + std::to_string(np) +
                           ") but none has a usable device; " + no_platform_text());
  return true;
}

std::string bytes_text(int64_t b) {
  std::ostringstream s;
  s.precision(3);
  if (b >= (int64_t(1) << 30)) s << double(b) / double(int64_t(1) << 30) << " GiB";
  else if (b >= (int64_t(1) << 20)) s << double(b) / double(int64_t(1) << 20) << " MiB";
  else if (b >= 1024) s << double(b) / 1024.0 << " KiB";
  else s << b << " B";
  return s.str();
}

}  // namespace

std::string no_platform_text() {
  const char* env = std::getenv("OCL_ICD_VENDORS");
  std::string where = env && *env ? std::string(env) + " (from OCL_ICD_VENDORS)"
                                  : std::string("/etc/OpenCL/vendors");
  return "no OpenCL platform found: install pocl-opencl-icd (CPU) or your GPU vendor's ICD; "
         "the ICD loader looked in " + where;
}

bool list_devices(std::vector<DeviceInfo>* out, std::string* error) {
  std::vector<Found> found;
  if (!discover(&found, error)) return false;
  out->clear();
  for (const Found& f : found) out->push_back(f.info);
  return true;
}

// ---------------------------------------------------------------------------------------
// [SECTION] describe
// ---------------------------------------------------------------------------------------

std::string describe_devices() {
  std::vector<DeviceInfo> devices;
  std::string error;
  if (!list_devices(&devices, &error)) return error + "\n";
  std::ostringstream s;
  for (const DeviceInfo& d : devices) {
    s << "device " << d.platform_index << "." << d.device_index << ": " << d.name << "\n";
    s << "  platform          " << d.platform << "\n";
    s << "  vendor            " << d.vendor << "\n";
    s << "  type              " << d.type << "\n";
    s << "  compute units     " << d.compute_units;
    if (d.clock_mhz) s << " at " << d.clock_mhz << " MHz";
    s << "\n";
    s << "  global memory     " << bytes_text(d.global_mem_bytes) << " (largest buffer "
      << bytes_text(d.max_alloc_bytes) << ")\n";
    s << "  local memory      " << bytes_text(d.local_mem_bytes) << " per work-group\n";
    s << "  max work-group    " << d.max_work_group_size << " work-items";
    if (!d.max_work_item_sizes.empty()) {
      s << " (per dimension ";
      for (size_t i = 0; i < d.max_work_item_sizes.size(); ++i)
        s << (i ? " x " : "") << d.max_work_item_sizes[i];
      s << ")";
    }
    s << "\n";
    s << "  OpenCL C          " << d.opencl_c_version << "\n";
    s << "  version           " << d.version << " (driver " << d.driver_version << ")\n";
  }
  return s.str();
}

std::vector<std::string> device_names() {
  std::vector<DeviceInfo> devices;
  std::vector<std::string> out;
  if (!list_devices(&devices, nullptr)) return out;
  for (const DeviceInfo& d : devices)
    out.push_back(std::to_string(d.platform_index) + "." + std::to_string(d.device_index) + ": " +
                  d.name + " (" + d.type + ", " + d.platform + ")");
  return out;
}

bool parse_device_choice(const std::string& text, DeviceChoice* out, std::string* error) {
  *out = DeviceChoice{};
  if (text.empty()) return true;
  size_t dot = text.find('.');
  auto number = [](const std::string& s, int* v) {
    if (s.empty() || s.size() > 4) return false;
    for (char c : s)
      if (c < '0' || c > '9') return false;
    *v = std::stoi(s);
    return true;
  };
  if (dot == std::string::npos || !number(text.substr(0, dot), &out->platform) ||
      !number(text.substr(dot + 1), &out->device)) {
    *out = DeviceChoice{};
    return fail(error, "bad device '" + text + "': expected PLATFORM.DEVICE, e.g. 0.0 (see `descent devices`)");
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// [SECTION] Context
// ---------------------------------------------------------------------------------------

Context::~Context() {
  for (auto& [key, k] : kernels_) clReleaseKernel(static_cast<cl_kernel>(k));
  for (auto& [key, p] : programs_) clReleaseProgram(static_cast<cl_program>(p));
  if (queue_) clReleaseCommandQueue(static_cast<cl_command_queue>(queue_));
  if (context_) clReleaseContext(static_cast<cl_context>(context_));
}

bool Context::open(const DeviceChoice& choice, std::unique_ptr<Context>* out, std::string* error) {
  std::vector<Found> found;
  if (!discover(&found, error)) return false;
  const Found* pick = nullptr;
  if (choice.platform < 0) {
    for (const Found& f : found)
      if (f.info.type == "GPU") {
        pick = &f;
        break;
      }
    if (!pick) pick = &found.front();
  } else {
    for (const Found& f : found)
      if (f.info.platform_index == choice.platform && f.info.device_index == choice.device) pick = &f;
    if (!pick) {
      std::string list;
      for (const Found& f : found)
        list += (list.empty() ? "" : ", ") + std::to_string(f.info.platform_index) + "." +
                std::to_string(f.info.device_index) + " " + f.info.name;
      return fail(error, "no OpenCL device " + std::to_string(choice.platform) + "." +
                             std::to_string(choice.device) + " (devices: " + list + ")");
    }
  }
  cl_int rc = CL_SUCCESS;
  cl_device_id dev = pick->id;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &rc);
  if (rc != CL_SUCCESS || !ctx)
    return fail_cl(error, "clCreateContext on '" + pick->info.name + "'", rc);
  // clCreateCommandQueue is deprecated from 2.0 on but is the only form 1.2 drivers have.
  cl_command_queue q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &rc);
  if (rc != CL_SUCCESS || !q) {
    clReleaseContext(ctx);
    return fail_cl(error, "clCreateCommandQueue on '" + pick->info.name + "'", rc);
  }
  std::unique_ptr<Context> c(new Context());
  c->info_ = pick->info;
  c->context_ = ctx;
  c->queue_ = q;
  c->device_ = dev;
  *out = std::move(c);
  return true;
}

// ---------------------------------------------------------------------------------------
// [SECTION] buffers
// ---------------------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept : mem_(other.mem_), bytes_(other.bytes_) {
  other.mem_ = nullptr;
  other.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (mem_) clReleaseMemObject(static_cast<cl_mem>(mem_));
    mem_ = other.mem_;
    bytes_ = other.bytes_;
    other.mem_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (mem_) clReleaseMemObject(static_cast<cl_mem>(mem_));
}

namespace {

// Waits for `ev` and returns its execution time from the profiling counters (nanoseconds on
// the device's clock), releasing it.
bool event_seconds(cl_event ev, double* seconds, const std::string& what, std::string* error) {
  cl_int rc = clWaitForEvents(1, &ev);
  if (rc != CL_SUCCESS) {
    // The event's own status says why the command failed (e.g. CL_OUT_OF_RESOURCES).
    cl_int status = CL_SUCCESS;
    clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
    clReleaseEvent(ev);
    return fail_cl(error, what, status < 0 ? status : rc);
  }
  cl_ulong start = 0, end = 0;
  cl_int r1 = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
  cl_int r2 = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
  clReleaseEvent(ev);
  if (seconds) *seconds = (r1 == CL_SUCCESS && r2 == CL_SUCCESS && end >= start)
                              ? double(end - start) * 1e-9 : 0.0;
  return true;
}

}  // namespace

bool Context::alloc(size_t bytes, DeviceBuffer* out, std::string* error) {
  if (bytes == 0) return fail(error, "cannot allocate an empty OpenCL buffer");
  if (info_.max_alloc_bytes > 0 && int64_t(bytes) > info_.max_alloc_bytes)
    return fail(error, "buffer of " + bytes_text(int64_t(bytes)) + " exceeds the device's largest allocation (" +
                           bytes_text(info_.max_alloc_bytes) + ") on '" + info_.name + "'");
  cl_int rc = CL_SUCCESS;
  cl_mem m = clCreateBuffer(static_cast<cl_context>(context_), CL_MEM_READ_WRITE, bytes, nullptr, &rc);
  if (rc != CL_SUCCESS || !m)
    return fail_cl(error, "clCreateBuffer (" + bytes_text(int64_t(bytes)) + ")", rc);
  *out = DeviceBuffer();
  out->mem_ = m;
  out->bytes_ = bytes;
  return true;
}

bool Context::write(DeviceBuffer& dst, const void* src, size_t bytes, double* seconds, std::string* error) {
  if (!dst.valid() || bytes > dst.bytes()) return fail(error, "write of " + std::to_string(bytes) + " bytes into a buffer of " + std::to_string(dst.bytes()));
  cl_event ev = nullptr;
  cl_int rc = clEnqueueWriteBuffer(static_cast<cl_command_queue>(queue_), static_cast<cl_mem>(dst.mem_),
                                   CL_FALSE, 0, bytes, src, 0, nullptr, &ev);
  if (rc != CL_SUCCESS) return fail_cl(error, "clEnqueueWriteBuffer", rc);
  return event_seconds(ev, seconds, "clEnqueueWriteBuffer", error);
}

bool Context::read(const DeviceBuffer& src, void* dst, size_t bytes, double* seconds, std::string* error) {
  if (!src.valid() || bytes > src.bytes()) return fail(error, "read of " + std::to_string(bytes) + " bytes from a buffer of " + std::to_string(src.bytes()));
  cl_event ev = nullptr;
  cl_int rc = clEnqueueReadBuffer(static_cast<cl_command_queue>(queue_), static_cast<cl_mem>(src.mem_),
                                  CL_FALSE, 0, bytes, dst, 0, nullptr, &ev);
  if (rc != CL_SUCCESS) return fail_cl(error, "clEnqueueReadBuffer", rc);
  return event_seconds(ev, seconds, "clEnqueueReadBuffer", error);
}

bool Context::fill_zero(DeviceBuffer& dst, double* seconds, std::string* error) {
  if (!dst.valid()) return fail(error, "fill of an unallocated buffer");
  float zero = 0.0f;
  cl_event ev = nullptr;
  cl_int rc = clEnqueueFillBuffer(static_cast<cl_command_queue>(queue_), static_cast<cl_mem>(dst.mem_),
                                  &zero, sizeof zero, 0, dst.bytes() / sizeof zero * sizeof zero,
                                  0, nullptr, &ev);
  if (rc != CL_SUCCESS) return fail_cl(error, "clEnqueueFillBuffer", rc);
  return event_seconds(ev, seconds, "clEnqueueFillBuffer", error);
}

// ---------------------------------------------------------------------------------------
// [SECTION] programs
// ---------------------------------------------------------------------------------------

bool Context::build(const std::string& source, const std::string& options, Program* out,
                    double* seconds, std::string* error) {
  if (seconds) *seconds = 0;
  std::lock_guard<std::mutex> lock(mutex_);
  std::string key = options + "\n" + source;
  auto hit = programs_.find(key);
  if (hit != programs_.end()) {
    out->handle = hit->second;
    out->source = source;
    return true;
  }
  const char* text = source.c_str();
  size_t length = source.size();
  cl_int rc = CL_SUCCESS;
  cl_program p = clCreateProgramWithSource(static_cast<cl_context>(context_), 1, &text, &length, &rc);
  if (rc != CL_SUCCESS || !p) return fail_cl(error, "clCreateProgramWithSource", rc);
  cl_device_id dev = static_cast<cl_device_id>(device_);
  auto t0 = std::chrono::steady_clock::now();
  rc = clBuildProgram(p, 1, &dev, options.c_str(), nullptr, nullptr);
  auto t1 = std::chrono::steady_clock::now();
  ++builds_;
  if (rc != CL_SUCCESS) {
    // The log is the compiler's own diagnostics (line:column: error: ...): the whole of it,
    // because the first error is often explained by a later note.
    size_t n = 0;
    std::string log;
    if (clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) == CL_SUCCESS && n > 0) {
      log.assign(n, '\0');
      clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    clReleaseProgram(p);
    return fail(error, "OpenCL program build failed on '" + info_.name + "' (" + error_name(rc) +
                           "):\n" + (log.empty() ? std::string("(the driver gave no build log)") : log));
  }
  programs_[key] = p;
  out->handle = p;
  out->source = source;
  if (seconds) *seconds = std::chrono::duration<double>(t1 - t0).count();
  return true;
}

// ---------------------------------------------------------------------------------------
// [SECTION] launches
// ---------------------------------------------------------------------------------------

bool Context::launch(const Program& program, const std::string& name,
                     const std::vector<KernelArg>& args, const LaunchDims& dims, double* seconds,
                     std::string* error) {
  if (seconds) *seconds = 0;
  if (!program.handle) return fail(error, "launch of kernel '" + name + "' from an unbuilt program");
  if (dims.dims < 1 || dims.dims > 3)
    return fail(error, "kernel '" + name + "': " + std::to_string(dims.dims) + " dimensions (1 to 3 allowed)");
  std::lock_guard<std::mutex> lock(mutex_);
  cl_program p = static_cast<cl_program>(program.handle);
  cl_kernel k;
  auto cached = kernels_.find({program.handle, name});
  cl_int rc = CL_SUCCESS;
  if (cached != kernels_.end()) {
    k = static_cast<cl_kernel>(cached->second);
  } else {
    k = clCreateKernel(p, name.c_str(), &rc);
    if (rc != CL_SUCCESS || !k) return fail_cl(error, "clCreateKernel '" + name + "'", rc);
    kernels_[{program.handle, name}] = k;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].buffer) {
      cl_mem m = static_cast<cl_mem>(args[i].buffer->mem_);
      rc = clSetKernelArg(k, cl_uint(i), sizeof m, &m);
    } else {
      cl_int v = args[i].value;
      rc = clSetKernelArg(k, cl_uint(i), sizeof v, &v);
    }
    if (rc != CL_SUCCESS)
      return fail_cl(error, "clSetKernelArg " + std::to_string(i) + " of kernel '" + name + "'", rc);
  }
  size_t global[3], local[3];
  bool has_local = false;
  int64_t group = 1;
  for (int d = 0; d < dims.dims; ++d) {
    global[d] = size_t(dims.global[d]);
    local[d] = size_t(dims.local[d]);
    if (dims.local[d] > 0) has_local = true;
    group *= dims.local[d] > 0 ? dims.local[d] : 1;
  }
  if (has_local) {
    // Checked here rather than left to the driver, which answers only
    // CL_INVALID_WORK_GROUP_SIZE (or, on some, crashes): say which limit and by how much.
    std::string sizes;
    for (int d = 0; d < dims.dims; ++d) sizes += (d ? " x " : "") + std::to_string(dims.local[d]);
    std::string pre = "cannot launch kernel '" + name + "' on '" + info_.name + "': work-group " +
                      sizes + " (" + std::to_string(group) + " work-items) ";
    size_t kmax = 0;
    cl_device_id dev = static_cast<cl_device_id>(device_);
    if (clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax, nullptr) != CL_SUCCESS)
      kmax = 0;
    if (info_.max_work_group_size > 0 && group > info_.max_work_group_size)
      return fail(error, pre + "exceeds the device's maximum work-group size " +
                             std::to_string(info_.max_work_group_size) + " (CL_INVALID_WORK_GROUP_SIZE)");
    if (kmax > 0 && group > int64_t(kmax))
      return fail(error, pre + "exceeds this kernel's maximum work-group size " + std::to_string(kmax) +
                             " (its registers or local memory limit it; CL_OUT_OF_RESOURCES)");
    for (int d = 0; d < dims.dims; ++d) {
      if (size_t(d) < info_.max_work_item_sizes.size() && dims.local[d] > info_.max_work_item_sizes[size_t(d)])
        return fail(error, pre + "exceeds the device's limit of " +
                               std::to_string(info_.max_work_item_sizes[size_t(d)]) + " in dimension " +
                               std::to_string(d) + " (CL_INVALID_WORK_ITEM_SIZE)");
      if (dims.local[d] <= 0 || dims.global[d] % dims.local[d] != 0)
        return fail(error, pre + "does not divide the global size " + std::to_string(dims.global[d]) +
                               " in dimension " + std::to_string(d) + " (CL_INVALID_WORK_GROUP_SIZE)");
    }
    cl_ulong lmem = 0;
    if (clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof lmem, &lmem, nullptr) == CL_SUCCESS &&
        info_.local_mem_bytes > 0 && int64_t(lmem) > info_.local_mem_bytes)
      return fail(error, "cannot launch kernel '" + name + "' on '" + info_.name + "': it needs " +
                             bytes_text(int64_t(lmem)) + " of __local memory, the device has " +
                             bytes_text(info_.local_mem_bytes) + " (CL_OUT_OF_RESOURCES)");
  }
  cl_event ev = nullptr;
  rc = clEnqueueNDRangeKernel(static_cast<cl_command_queue>(queue_), k, cl_uint(dims.dims), nullptr,
                              global, has_local ? local : nullptr, 0, nullptr, &ev);
  if (rc != CL_SUCCESS) return fail_cl(error, "launch of kernel '" + name + "' on '" + info_.name + "'", rc);
  return event_seconds(ev, seconds, "kernel '" + name + "' on '" + info_.name + "'", error);
}

// ---------------------------------------------------------------------------------------
// [SECTION] the default context
// ---------------------------------------------------------------------------------------

Context* default_context(std::string* error) {
  static std::once_flag once;
  // Never destroyed: releasing OpenCL objects from a static destructor races the driver's
  // own teardown at exit (some ICDs crash there); the process's end frees everything.
  static Context* context = nullptr;
  static std::string open_error;
  std::call_once(once, [] {
    std::unique_ptr<Context> c;
    if (Context::open(DeviceChoice{}, &c, &open_error)) context = c.release();
  });
  if (!context) fail(error, open_error);
  return context;
}

}  // namespace descent::gpu
