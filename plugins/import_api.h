// ONNX import as a plugin, opened on first use: protobuf and ONNX's libraries cost every start
// of `descent` milliseconds of loading and static constructors, and only `descent import` and
// the benchmark's model suite read ONNX. The same seam as llvm_api.h: a table of importer/'s
// functions (importer/onnx_import.h, whose types need no protobuf), filled in by
// import_plugin.cpp inside libdescent_import.so, called through import_lazy.h.
#pragma once
#include <string>
#include <vector>

#include "importer/onnx_import.h"

namespace descent::import_plugin {

constexpr int kApiVersion = 1;

struct Api {
  int version = kApiVersion;
  std::vector<std::string> (*supported_onnx_ops)();
  bool (*import_onnx_file)(const std::string& path, const importer::ImportOptions& options,
                           importer::ImportResult* out, std::string* error);
  std::string (*format_import_summary)(const importer::ImportResult& r);
  std::string (*mlp_onnx_bytes)(const std::vector<tensor::Tensor>& weights,
                                const std::vector<tensor::Tensor>& biases, std::string* error);
};

inline constexpr const char* kEntrySymbol = "descent_import_plugin";

}  // namespace descent::import_plugin
