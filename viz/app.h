// The visualizer's window: GLFW + OpenGL 3 + Dear ImGui, the editor on the left and one
// pane per stage in tabs on the right.
//
//   std::string err;
//   auto app = App::create(AppOptions{}, &err);   // a window (or a hidden one)
//   app->document().load("examples/tour.ds", &err);
//   app->select_pane("stack", &err);
//   app->act("stack step 3", &err);                // what the Step button does, three times
//   app->screenshot("out.png", &err);
//
// Nothing here prints or exits: descent-viz (main.cpp) does.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "viz/document.h"
#include "viz/pane.h"

struct GLFWwindow;

namespace descent::viz {

struct AppOptions {
  int width = 1280, height = 800;  // the window (and screenshot) size in pixels
  bool hidden = false;   // render off screen (screenshots, tests): no window appears
  float font_size = 16;  // pixels; larger for a projector
  bool dark = false;     // the dark theme (the light one reads better projected)
};

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // rows top to bottom, 3 bytes a pixel
};

class App {
 public:
  static std::unique_ptr<App> create(const AppOptions& options, std::string* error);
  ~App();

  Document& document() { return doc_; }
  const std::vector<std::unique_ptr<Pane>>& panes() const { return panes_; }
  Pane* pane(std::string_view name);
  // Shows the pane in the right-hand tabs ("source" widens the editor to the whole window).
  bool select_pane(std::string_view name, std::string* error);
  const std::string& selected_pane() const { return selected_; }

  // Opens a file: a program (.ds, or any other text) becomes the document; a schedule
  // (.sched) is applied, step by step, in the loop-nest pane to the kernel its name gives
  // (matmul.sched, matmul.opencl.sched: matmul), which the document or the prelude must
  // define; otherwise it is refused with the reason, and the document is left as it was.
  bool open(const std::string& path, std::string* error);

  // A scripted command: "PANE VERB ARGS..." (see Pane::Act), or "pane NAME", or
  // "open FILE". Runs after any pending pipeline run has finished.
  bool act(std::string_view command, std::string* error);

  // One frame: poll the document, draw every visible pane, render.
  void frame();
  // Waits for the pipeline, then renders a few frames so the layout settles.
  void settle(int frames = 4);
  Image capture();  // the last frame's pixels
  bool screenshot(const std::string& path, std::string* error);

  // The status bar's text as last drawn: the run's outcome, with its step count in the
  // engine's unit, and the selected VM pane's count beside it.
  const std::string& status_text() const { return status_text_; }

  // Where the last frame drew each pane's tab, and the width its label needs: at any
  // font size every tab must be inside the tab bar and wide enough for its label.
  struct TabPlace {
    std::string pane, label;
    float x0, x1, needed;
  };
  const std::vector<TabPlace>& tab_places() const { return tab_places_; }
  float tab_bar_x0() const { return tab_bar_x0_; }
  float tab_bar_x1() const { return tab_bar_x1_; }

  // The interactive loop, until the window is closed.
  void run();

 private:
  App() = default;
  void draw();
  void draw_menu();
  void draw_status();

  AppOptions options_;
  GLFWwindow* window_ = nullptr;
  void* imgui_ = nullptr;  // ImGuiContext
  unsigned fbo_ = 0, color_rb_ = 0;
  Document doc_;
  std::vector<std::unique_ptr<Pane>> panes_;
  std::string selected_ = "ast";
  bool select_request_ = true;   // make the tab bar switch to selected_ on the next frame
  float split_ = 0.38f;          // the editor's share of the width
  std::string status_message_;
  std::string status_text_;
  std::vector<TabPlace> tab_places_;
  float tab_bar_x0_ = 0, tab_bar_x1_ = 0;
  bool show_open_ = false, show_save_ = false;
  char path_buf_[512] = {};
};

// Writes an RGB image as PNG.
bool write_png(const std::string& path, const Image& image, std::string* error);

}  // namespace descent::viz
