// STUB: the Loop nest pane (being written).
#include <imgui.h>

#include "viz/pane.h"

namespace descent::viz {

namespace {
struct LoopsPane : Pane {
  const char* name() const override { return "loops"; }
  const char* title() const override { return "Loop nest"; }
  void Draw(Document& doc) override {
    (void)doc;
    ImGui::TextUnformatted("Loop nest: not written yet");
  }
};
}  // namespace

std::unique_ptr<Pane> make_loops_pane() { return std::make_unique<LoopsPane>(); }

}  // namespace descent::viz
