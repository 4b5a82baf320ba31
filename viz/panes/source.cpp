// STUB: the Source pane (being written).
#include <imgui.h>

#include "viz/pane.h"

namespace descent::viz {

namespace {
struct SourcePane : Pane {
  const char* name() const override { return "source"; }
  const char* title() const override { return "Source"; }
  void Draw(Document& doc) override {
    (void)doc;
    ImGui::TextUnformatted("Source: not written yet");
  }
};
}  // namespace

std::unique_ptr<Pane> make_source_pane() { return std::make_unique<SourcePane>(); }

}  // namespace descent::viz
