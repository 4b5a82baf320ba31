// importer/'s calls through libdescent_import.so, opened on the first one (import_api.h).
// Without the plugin each fails with a message saying so; nothing else in Descent needs it.
#pragma once
#include <string>
#include <vector>

#include "importer/onnx_import.h"

namespace descent::import_plugin {

std::vector<std::string> supported_onnx_ops();  // empty without the plugin
bool import_onnx_file(const std::string& path, const importer::ImportOptions& options,
                      importer::ImportResult* out, std::string* error);
std::string format_import_summary(const importer::ImportResult& r);
std::string mlp_onnx_bytes(const std::vector<tensor::Tensor>& weights,
                           const std::vector<tensor::Tensor>& biases, std::string* error);
bool opened();  // whether this process has opened it

}  // namespace descent::import_plugin
