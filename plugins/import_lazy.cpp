#include "plugins/import_lazy.h"

#include <atomic>

#include "plugins/import_api.h"
#include "plugins/loader.h"

namespace descent::import_plugin {

namespace {

std::atomic<bool> g_opened{false};

const Api* api(std::string* error) {
  struct Loaded {
    const Api* api = nullptr;
    std::string error;
  };
  static const Loaded l = [] {
#ifdef DESCENT_IMPORT_PLUGIN_PATH
    const char* built = DESCENT_IMPORT_PLUGIN_PATH;
#else
    const char* built = "";
#endif
    Loaded r;
    r.api = plugins::open_plugin<Api>(
        plugins::plugin_path("DESCENT_IMPORT_PLUGIN", built, "libdescent_import.so"), kEntrySymbol,
        kApiVersion, "ONNX import needs it", &r.error);
    g_opened = r.api != nullptr;
    return r;
  }();
  if (!l.api && error) *error = l.error;
  return l.api;
}

}  // namespace

std::vector<std::string> supported_onnx_ops() {
  const Api* a = api(nullptr);
  return a ? a->supported_onnx_ops() : std::vector<std::string>{};
}

bool import_onnx_file(const std::string& path, const importer::ImportOptions& options,
                      importer::ImportResult* out, std::string* error) {
  const Api* a = api(error);
  return a && a->import_onnx_file(path, options, out, error);
}

std::string format_import_summary(const importer::ImportResult& r) {
  std::string why;
  const Api* a = api(&why);
  return a ? a->format_import_summary(r) : why + "\n";
}

std::string mlp_onnx_bytes(const std::vector<tensor::Tensor>& weights,
                           const std::vector<tensor::Tensor>& biases, std::string* error) {
  const Api* a = api(error);
  return a ? a->mlp_onnx_bytes(weights, biases, error) : std::string();
}

bool opened() { return g_opened.load(); }

}  // namespace descent::import_plugin
