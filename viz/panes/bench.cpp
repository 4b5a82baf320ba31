// STUB: the Benchmarks pane (being written).
#include <imgui.h>

#include "viz/pane.h"

namespace descent::viz {

namespace {
struct BenchPane : Pane {
  const char* name() const override { return "bench"; }
  const char* title() const override { return "Benchmarks"; }
  void Draw(Document& doc) override {
    (void)doc;
    ImGui::TextUnformatted("Benchmarks: not written yet");
  }
};
}  // namespace

std::unique_ptr<Pane> make_bench_pane() { return std::make_unique<BenchPane>(); }

}  // namespace descent::viz
