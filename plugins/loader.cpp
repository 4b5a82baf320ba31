#include "plugins/loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

namespace descent::plugins {

std::string plugin_path(const char* env_var, const char* built_path, const char* file_name) {
  if (const char* env = std::getenv(env_var); env && *env) return env;
  if (built_path && *built_path && std::filesystem::exists(built_path)) return built_path;
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ((ec ? std::filesystem::path(".") : self.parent_path()) / file_name).string();
}

void* open_plugin_entry(const std::string& path, const char* entry, const std::string& needed_by,
                        std::string* error) {
  // RTLD_LOCAL: its symbols never mix with ours (it carries its own copies of our libraries).
  // The handle stays open: closing a library that LLVM or protobuf initialised is not safe,
  // and a process opens each plugin at most once.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  void* fn = handle ? dlsym(handle, entry) : nullptr;
  if (!fn) {
    const char* why = dlerror();
    *error = "a part of Descent (" + path + ") could not be loaded: " +
             (why ? why : "unknown reason") + "; " + needed_by + " (rebuild: cmake --build build)";
  }
  return fn;
}

}  // namespace descent::plugins
