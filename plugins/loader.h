// Opening our own plugins: shared objects of Descent's that hold what a run rarely needs and
// is slow to load (llvm_api.h says why), opened with dlopen on first use.
#pragma once
#include <string>

namespace descent::plugins {

// Where plugin `file_name` ("libdescent_llvm.so") is: $env_var when set, else `built_path`
// (where the build put it) when that exists, else beside the running executable.
std::string plugin_path(const char* env_var, const char* built_path, const char* file_name);

// Opens the plugin at `path` and returns the address of its function `entry`; null with
// *error saying what failed and `needed_by` (what needs it). A plugin once opened stays open.
void* open_plugin_entry(const std::string& path, const char* entry, const std::string& needed_by,
                        std::string* error);

// The table `entry` returns (a `const Api* entry()` with C linkage), whose first member is an
// int version that must equal `version`; null with *error otherwise. The entry is called as
// the type it was defined with (UBSan's -fsanitize=function checks exactly that).
template <class Api>
const Api* open_plugin(const std::string& path, const char* entry, int version,
                       const std::string& needed_by, std::string* error) {
  void* fn = open_plugin_entry(path, entry, needed_by, error);
  const Api* api = fn ? reinterpret_cast<const Api* (*)()>(fn)() : nullptr;
  if (fn && (!api || api->version != version)) {
    *error = "a part of Descent (" + path + ") is from another build of Descent; " + needed_by +
             " (rebuild: cmake --build build)";
    return nullptr;
  }
  return api;
}

}  // namespace descent::plugins
