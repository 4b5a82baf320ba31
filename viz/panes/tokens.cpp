// STUB: the Tokens pane (being written).
#include <imgui.h>

#include "viz/pane.h"

namespace descent::viz {

namespace {
struct TokensPane : Pane {
  const char* name() const override { return "tokens"; }
  const char* title() const override { return "Tokens"; }
  void Draw(Document& doc) override {
    (void)doc;
    ImGui::TextUnformatted("Tokens: not written yet");
  }
};
}  // namespace

std::unique_ptr<Pane> make_tokens_pane() { return std::make_unique<TokensPane>(); }

}  // namespace descent::viz
