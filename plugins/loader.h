// Opening our own plugins: shared objects of Descent's that hold what a run rarely needs and
// is slow to load (llvm_api.h says why), opened with dlopen on first use.
#pragma once
#include <string>

namespace descent::plugins {

// Where plugin `file_name` ("libdescent_llvm.so") is: $env_var when set, else `built_path`
// (where the build put it) when that exists, else beside the running executable.
std::string plugin_path(const char* env_var, const char* built_path, const char* file_name);

// Opens the plugin at `path` and returns the table its `entry` function gives, whose first
// member is an int version that must equal `version`. Null with *error saying what failed and
// `needed_by` (what needs it) otherwise. A plugin once opened stays open.
const void* open_plugin(const std::string& path, const char* entry, int version,
                        const std::string& needed_by, std::string* error);

}  // namespace descent::plugins
