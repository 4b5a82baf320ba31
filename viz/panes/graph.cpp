// STUB: the Tensor graph pane (being written).
#include <imgui.h>

#include "viz/pane.h"

namespace descent::viz {

namespace {
struct GraphPane : Pane {
  const char* name() const override { return "graph"; }
  const char* title() const override { return "Tensor graph"; }
  void Draw(Document& doc) override {
    (void)doc;
    ImGui::TextUnformatted("Tensor graph: not written yet");
  }
};
}  // namespace

std::unique_ptr<Pane> make_graph_pane() { return std::make_unique<GraphPane>(); }

}  // namespace descent::viz
