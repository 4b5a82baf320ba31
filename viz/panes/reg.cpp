// STUB: the Register VM pane (being written).
#include <imgui.h>

#include "viz/pane.h"

namespace descent::viz {

namespace {
struct RegPane : Pane {
  const char* name() const override { return "reg"; }
  const char* title() const override { return "Register VM"; }
  void Draw(Document& doc) override {
    (void)doc;
    ImGui::TextUnformatted("Register VM: not written yet");
  }
};
}  // namespace

std::unique_ptr<Pane> make_reg_pane() { return std::make_unique<RegPane>(); }

}  // namespace descent::viz
