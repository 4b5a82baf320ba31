// STUB: the Machine code pane (being written).
#include <imgui.h>

#include "viz/pane.h"

namespace descent::viz {

namespace {
struct MachinePane : Pane {
  const char* name() const override { return "machine"; }
  const char* title() const override { return "Machine code"; }
  void Draw(Document& doc) override {
    (void)doc;
    ImGui::TextUnformatted("Machine code: not written yet");
  }
};
}  // namespace

std::unique_ptr<Pane> make_machine_pane() { return std::make_unique<MachinePane>(); }

}  // namespace descent::viz
