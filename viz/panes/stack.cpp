// STUB: the Stack VM pane (being written).
#include <imgui.h>

#include "viz/pane.h"

namespace descent::viz {

namespace {
struct StackPane : Pane {
  const char* name() const override { return "stack"; }
  const char* title() const override { return "Stack VM"; }
  void Draw(Document& doc) override {
    (void)doc;
    ImGui::TextUnformatted("Stack VM: not written yet");
  }
};
}  // namespace

std::unique_ptr<Pane> make_stack_pane() { return std::make_unique<StackPane>(); }

}  // namespace descent::viz
