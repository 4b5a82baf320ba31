// STUB: the AST pane (being written).
#include <imgui.h>

#include "viz/pane.h"

namespace descent::viz {

namespace {
struct AstPane : Pane {
  const char* name() const override { return "ast"; }
  const char* title() const override { return "AST"; }
  void Draw(Document& doc) override {
    (void)doc;
    ImGui::TextUnformatted("AST: not written yet");
  }
};
}  // namespace

std::unique_ptr<Pane> make_ast_pane() { return std::make_unique<AstPane>(); }

}  // namespace descent::viz
