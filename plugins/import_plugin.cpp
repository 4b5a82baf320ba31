// libdescent_import.so's entry: importer/'s functions in the table of import_api.h.
#include "plugins/import_api.h"

namespace descent::import_plugin {
namespace {

const Api kApi = {
    kApiVersion,
    [] { return importer::supported_onnx_ops(); },
    [](const std::string& path, const importer::ImportOptions& options, importer::ImportResult* out,
       std::string* error) { return importer::import_onnx_file(path, options, out, error); },
    [](const importer::ImportResult& r) { return importer::format_import_summary(r); },
    [](const std::vector<tensor::Tensor>& weights, const std::vector<tensor::Tensor>& biases,
       std::string* error) { return importer::mlp_onnx_bytes(weights, biases, error); },
};

}  // namespace
}  // namespace descent::import_plugin

extern "C" __attribute__((visibility("default"))) const descent::import_plugin::Api* descent_import_plugin() {
  return &descent::import_plugin::kApi;
}
