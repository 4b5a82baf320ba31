// STUB: the LLVM IR pane (being written).
#include <imgui.h>

#include "viz/pane.h"

namespace descent::viz {

namespace {
struct LlvmPane : Pane {
  const char* name() const override { return "llvm"; }
  const char* title() const override { return "LLVM IR"; }
  void Draw(Document& doc) override {
    (void)doc;
    ImGui::TextUnformatted("LLVM IR: not written yet");
  }
};
}  // namespace

std::unique_ptr<Pane> make_llvm_pane() { return std::make_unique<LlvmPane>(); }

}  // namespace descent::viz
