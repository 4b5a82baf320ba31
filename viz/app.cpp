#include "viz/app.h"
#include "viz/widgets.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#define GLFW_INCLUDE_NONE
#include <GL/glcorearb.h>
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <stb/stb_image_write.h>

#include "lang/text.h"

namespace descent::viz {

namespace {

std::string g_glfw_error;  // the last error GLFW reported (it reports through a callback)

bool init_glfw(std::string* error) {
  static bool ok = false;
  if (ok) return true;
  glfwSetErrorCallback([](int, const char* msg) { g_glfw_error = msg ? msg : "unknown"; });
  if (!glfwInit()) {
    *error = "cannot initialise GLFW: " + g_glfw_error;
    return false;
  }
  ok = true;
  return true;
}

// The few GL entry points beyond what ImGui's backend loads: an off-screen framebuffer
// to render screenshots into, and reading it back.
struct GL {
  PFNGLGENFRAMEBUFFERSPROC GenFramebuffers;
  PFNGLDELETEFRAMEBUFFERSPROC DeleteFramebuffers;
  PFNGLBINDFRAMEBUFFERPROC BindFramebuffer;
  PFNGLGENRENDERBUFFERSPROC GenRenderbuffers;
  PFNGLDELETERENDERBUFFERSPROC DeleteRenderbuffers;
  PFNGLBINDRENDERBUFFERPROC BindRenderbuffer;
  PFNGLRENDERBUFFERSTORAGEPROC RenderbufferStorage;
  PFNGLFRAMEBUFFERRENDERBUFFERPROC FramebufferRenderbuffer;
  PFNGLCHECKFRAMEBUFFERSTATUSPROC CheckFramebufferStatus;
  PFNGLVIEWPORTPROC Viewport;
  PFNGLCLEARCOLORPROC ClearColor;
  PFNGLCLEARPROC Clear;
  PFNGLREADPIXELSPROC ReadPixels;
  PFNGLPIXELSTOREIPROC PixelStorei;
  PFNGLFINISHPROC Finish;
  bool load() {
#define LOAD(name) name = reinterpret_cast<decltype(name)>(glfwGetProcAddress("gl" #name)); if (!name) return false;
    LOAD(GenFramebuffers) LOAD(DeleteFramebuffers) LOAD(BindFramebuffer) LOAD(GenRenderbuffers)
    LOAD(DeleteRenderbuffers) LOAD(BindRenderbuffer) LOAD(RenderbufferStorage)
    LOAD(FramebufferRenderbuffer) LOAD(CheckFramebufferStatus) LOAD(Viewport) LOAD(ClearColor)
    LOAD(Clear) LOAD(ReadPixels) LOAD(PixelStorei) LOAD(Finish)
#undef LOAD
    return true;
  }
} gl;

const char* kFonts[] = {"/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
                        "/usr/share/fonts/truetype/liberation/LiberationMono-Regular.ttf"};

std::vector<std::string> split_command(std::string_view s) {
  // Words separated by spaces; "double quotes" keep spaces inside one word, and \" is a
  // quote character (a program text with a string literal in it).
  std::vector<std::string> words;
  std::string cur;
  bool quoted = false, any = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\' && i + 1 < s.size() && s[i + 1] == '"') {  // \" is a literal quote
      cur += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (c == ' ' && !quoted) {
      if (any || !cur.empty()) words.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
    }
  }
  if (any || !cur.empty()) words.push_back(cur);
  return words;
}

}  // namespace

std::unique_ptr<App> App::create(const AppOptions& options, std::string* error) {
  if (!init_glfw(error)) return nullptr;
  std::unique_ptr<App> app(new App());
  app->options_ = options;
  glfwDefaultWindowHints();
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_VISIBLE, options.hidden ? GLFW_FALSE : GLFW_TRUE);
  g_glfw_error.clear();
  app->window_ = glfwCreateWindow(options.width, options.height, "Descent", nullptr, nullptr);
  if (!app->window_) {
    *error = "cannot open an OpenGL 3.3 window: " + g_glfw_error;
    return nullptr;
  }
  glfwMakeContextCurrent(app->window_);
  glfwSwapInterval(options.hidden ? 0 : 1);
  if (!gl.load()) {
    *error = "the OpenGL driver lacks framebuffer objects";
    return nullptr;
  }
  if (options.hidden) {
    // Render into our own framebuffer: a hidden window's pixels are undefined.
    gl.GenFramebuffers(1, &app->fbo_);
    gl.BindFramebuffer(GL_FRAMEBUFFER, app->fbo_);
    gl.GenRenderbuffers(1, &app->color_rb_);
    gl.BindRenderbuffer(GL_RENDERBUFFER, app->color_rb_);
    gl.RenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, options.width, options.height);
    gl.FramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER,
                               app->color_rb_);
    if (gl.CheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
      *error = "cannot make an off-screen framebuffer";
      return nullptr;
    }
    gl.BindFramebuffer(GL_FRAMEBUFFER, 0);
  }

  IMGUI_CHECKVERSION();
  app->imgui_ = ImGui::CreateContext();
  // Several windows may live in one process (the tests make many): each has its context.
  ImGui::SetCurrentContext(static_cast<ImGuiContext*>(app->imgui_));
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is fixed; nothing to remember between runs
  io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
  bool font = false;
  for (const char* f : kFonts) {
    if (FILE* fp = std::fopen(f, "rb")) {
      std::fclose(fp);
      font = io.Fonts->AddFontFromFileTTF(f, options.font_size) != nullptr;
      if (font) break;
    }
  }
  if (!font) {  // ImGui's own monospace font, scaled
    io.Fonts->AddFontDefault();
    io.FontGlobalScale = options.font_size / 13.f;
  }
  if (options.dark) ImGui::StyleColorsDark();
  else ImGui::StyleColorsLight();
  ImGuiStyle& style = ImGui::GetStyle();
  style.WindowRounding = 0;
  style.FrameRounding = 3;
  style.TabRounding = 3;
  style.ScrollbarSize = 14;
  ImGui_ImplGlfw_InitForOpenGL(app->window_, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");
  app->panes_ = make_panes();
  return app;
}

App::~App() {
  if (imgui_) {
    ImGui::SetCurrentContext(static_cast<ImGuiContext*>(imgui_));
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext(static_cast<ImGuiContext*>(imgui_));
  }
  if (window_) {
    glfwMakeContextCurrent(window_);
    if (fbo_) gl.DeleteFramebuffers(1, &fbo_);
    if (color_rb_) gl.DeleteRenderbuffers(1, &color_rb_);
    glfwDestroyWindow(window_);
  }
}

Pane* App::pane(std::string_view name) {
  for (auto& p : panes_)
    if (name == p->name()) return p.get();
  return nullptr;
}

bool App::select_pane(std::string_view name, std::string* error) {
  if (!pane(name)) {
    std::string names;
    for (auto& p : panes_) names += std::string(names.empty() ? "" : ", ") + p->name();
    *error = "no pane '" + std::string(name) + "' (panes: " + names + ")";
    return false;
  }
  selected_ = std::string(name);
  select_request_ = true;
  return true;
}

bool App::open(const std::string& path, std::string* error) {
  std::string base = std::filesystem::path(path).filename().string();
  bool sched = base.size() > 6 && base.compare(base.size() - 6, 6, ".sched") == 0;
  if (!sched) {
    if (!doc_.load(path, error)) return false;
    doc_.wait();
    return true;
  }
  // A schedule names no kernel inside; its file name does, as bench/schedules/ and the
  // labs' target.sched are named.
  std::string text;
  if (!read_file(path, &text, error)) return false;
  std::string kernel = base.substr(0, base.find('.'));
  doc_.wait();
  std::string why;
  // Its own default sizes, as the pane picks for a program's kernel (the matmul's dims as
  // the pane names them).
  if (!doc_.choose_kernel(kernel, kernel == kDefaultKernel ? kDefaultDims : "", &why)) {
    *error = path + " is a schedule, not a program, and its kernel '" + kernel +
             "' (from the file name) cannot be shown: " + why +
             ". Open the program that defines the kernel, then apply the schedule in the "
             "loop-nest pane (loops sched STEP)";
    return false;
  }
  // Step by step through the pane, as a student would type them, so undo works per step
  // and a refusal names its line.
  std::vector<std::string> lines = split_lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = lines[i].substr(0, lines[i].find('#'));
    if (split_words(line).empty()) continue;
    if (!act("loops sched " + line, &why)) {
      *error = path + ":" + std::to_string(i + 1) + ": " + why;
      return false;
    }
  }
  return select_pane("loops", error);
}

bool App::act(std::string_view command, std::string* error) {
  auto words = split_command(command);
  if (words.empty()) {
    *error = "empty command";
    return false;
  }
  doc_.wait();
  if (words[0] == "pane") {
    if (words.size() != 2) {
      *error = "usage: pane NAME";
      return false;
    }
    return select_pane(words[1], error);
  }
  if (words[0] == "open") {
    if (words.size() != 2) {
      *error = "usage: open FILE";
      return false;
    }
    return open(words[1], error);
  }
  Pane* p = pane(words[0]);
  if (!p) {
    std::string names;
    for (auto& q : panes_) names += std::string(names.empty() ? "" : ", ") + q->name();
    *error = "unknown command '" + words[0] + "' (pane, open, or a pane: " + names + ")";
    return false;
  }
  if (words.size() < 2) {
    *error = "usage: " + words[0] + " VERB ARGS...";
    return false;
  }
  std::vector<std::string> args(words.begin() + 2, words.end());
  bool ok = p->Act(doc_, words[1], args, error);
  doc_.wait();  // an action may have started a re-run (a settings change)
  if (std::string want = doc_.take_requested_pane(); !want.empty()) {
    std::string ignored;
    select_pane(want, &ignored);  // as the next frame would
  }
  return ok;
}

void App::frame() {
  ImGui::SetCurrentContext(static_cast<ImGuiContext*>(imgui_));
  glfwMakeContextCurrent(window_);
  glfwPollEvents();
  doc_.poll();
  doc_.begin_frame();
  if (std::string want = doc_.take_requested_pane(); !want.empty()) {
    std::string ignored;
    select_pane(want, &ignored);
  }
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  if (options_.hidden) {  // no window manager decides the size: we do
    ImGui::GetIO().DisplaySize = ImVec2(float(options_.width), float(options_.height));
    ImGui::GetIO().DisplayFramebufferScale = ImVec2(1, 1);
  }
  ImGui::NewFrame();
  draw();
  ImGui::Render();
  int w = options_.width, h = options_.height;
  if (!options_.hidden) glfwGetFramebufferSize(window_, &w, &h);
  if (fbo_) gl.BindFramebuffer(GL_FRAMEBUFFER, fbo_);
  gl.Viewport(0, 0, w, h);
  ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  gl.ClearColor(bg.x, bg.y, bg.z, 1);
  gl.Clear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  if (fbo_) gl.BindFramebuffer(GL_FRAMEBUFFER, 0);
  else glfwSwapBuffers(window_);
}

void App::settle(int frames) {
  doc_.wait();
  for (int i = 0; i < frames; ++i) {
    frame();
    if (doc_.busy()) doc_.wait(), ++frames;
  }
}

Image App::capture() {
  Image img;
  img.width = options_.width;
  img.height = options_.height;
  img.rgb.resize(size_t(img.width) * img.height * 3);
  glfwMakeContextCurrent(window_);
  if (fbo_) gl.BindFramebuffer(GL_FRAMEBUFFER, fbo_);
  gl.Finish();
  gl.PixelStorei(GL_PACK_ALIGNMENT, 1);
  std::vector<uint8_t> flipped(img.rgb.size());
  gl.ReadPixels(0, 0, img.width, img.height, GL_RGB, GL_UNSIGNED_BYTE, flipped.data());
  if (fbo_) gl.BindFramebuffer(GL_FRAMEBUFFER, 0);
  size_t row = size_t(img.width) * 3;
  for (int y = 0; y < img.height; ++y)  // GL's rows go bottom to top
    std::copy_n(flipped.data() + (img.height - 1 - y) * row, row, img.rgb.data() + y * row);
  return img;
}

bool write_png(const std::string& path, const Image& image, std::string* error) {
  if (!stbi_write_png(path.c_str(), image.width, image.height, 3, image.rgb.data(),
                      image.width * 3)) {
    *error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

bool App::screenshot(const std::string& path, std::string* error) {
  settle();
  return write_png(path, capture(), error);
}

void App::run() {
  while (!glfwWindowShouldClose(window_)) {
    frame();
    // Idle politely: wake on input, or every 50 ms while a run is in flight.
    if (!doc_.busy()) glfwWaitEventsTimeout(0.25);
  }
}

void App::draw_menu() {
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open...")) show_open_ = true;
    if (ImGui::MenuItem("Save", nullptr, false, !doc_.path().empty())) {
      std::string err;
      status_message_ = doc_.save(doc_.path(), &err) ? "saved " + doc_.path() : err;
    }
    if (ImGui::MenuItem("Save as...")) show_save_ = true;
    ImGui::Separator();
    if (ImGui::MenuItem("Quit")) glfwSetWindowShouldClose(window_, GLFW_TRUE);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Run")) {
    if (ImGui::MenuItem("Run again")) doc_.rerun_now();
    if (ImGui::MenuItem("Stop", nullptr, false, doc_.busy())) doc_.stop();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Pane")) {
    for (auto& p : panes_)
      if (ImGui::MenuItem(p->title(), nullptr, selected_ == p->name())) {
        std::string ignored;
        select_pane(p->name(), &ignored);
      }
    ImGui::EndMenu();
  }
  ImGui::EndMenuBar();
  // File dialogs: a path field is all a classroom needs, and it works on every platform.
  for (int which = 0; which < 2; ++which) {
    bool& show = which == 0 ? show_open_ : show_save_;
    const char* title = which == 0 ? "Open file" : "Save as";
    if (show) {
      ImGui::OpenPopup(title);
      std::snprintf(path_buf_, sizeof path_buf_, "%s", doc_.path().c_str());
      show = false;
    }
    if (ImGui::BeginPopupModal(title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
      ImGui::SetNextItemWidth(480);
      bool enter = ImGui::InputText("path", path_buf_, sizeof path_buf_,
                                    ImGuiInputTextFlags_EnterReturnsTrue);
      if (enter || ImGui::Button("OK")) {
        std::string err;
        bool ok = which == 0 ? doc_.load(path_buf_, &err) : doc_.save(path_buf_, &err);
        status_message_ = ok ? (which == 0 ? "opened " : "saved ") + std::string(path_buf_) : err;
        ImGui::CloseCurrentPopup();
      }
      ImGui::SameLine();
      if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
      ImGui::EndPopup();
    }
  }
}

void App::draw_status() {
  const Outcome& o = doc_.outcome();
  char buf[200];
  std::string text;
  if (doc_.busy()) {
    std::snprintf(buf, sizeof buf, "running... %.1f s", doc_.busy_seconds());
    ImGui::TextUnformatted(buf);
    text = buf;
    ImGui::SameLine();
    if (ImGui::SmallButton("Stop")) doc_.stop();
  } else if (o.status == Outcome::Ok) {
    // Steps in the engine's own unit: the ast engine counts statements, the VMs
    // instructions. A bare "steps" next to the stack debugger's instruction count read as
    // two answers to one question.
    const std::string& engine = doc_.session().engine();
    const char* unit = engine == "ast"                      ? "statements"
                       : engine == "stack" || engine == "reg" ? "instructions"
                                                              : "steps";
    std::snprintf(buf, sizeof buf, "ok: compiled in %.1f ms, ran on the %s engine in %.1f ms "
                  "(%llu %s)", o.compile_seconds * 1e3, engine.c_str(), o.run_seconds * 1e3,
                  static_cast<unsigned long long>(o.steps), unit);
    ImGui::TextUnformatted(buf);
    text = buf;
  } else {
    text = o.status == Outcome::CompileError ? "compile error" : "runtime error";
    ImGui::PushStyleColor(ImGuiCol_Text, colors::error());
    ImGui::TextUnformatted(text.c_str());
    ImGui::PopStyleColor();
  }
  auto more = [&](const std::string& s) {
    if (s.empty()) return;
    ImGui::SameLine();
    ImGui::TextDisabled("| %s", s.c_str());
    text += " | " + s;
  };
  if (selected_ == "stack" || selected_ == "reg")
    if (Pane* p = pane(selected_)) more(p->caption());
  more(o.note);
  more(status_message_);
  status_text_ = text;
}

void App::draw() {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                           ImGuiWindowFlags_NoResize | ImGuiWindowFlags_MenuBar |
                           ImGuiWindowFlags_NoBringToFrontOnFocus |
                           ImGuiWindowFlags_NoSavedSettings;
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(6, 4));
  ImGui::Begin("Descent", nullptr, flags);
  ImGui::PopStyleVar();
  draw_menu();
  float status_h = ImGui::GetFrameHeightWithSpacing();
  ImVec2 avail = ImGui::GetContentRegionAvail();
  float body_h = avail.y - status_h;
  Pane* source = pane("source");
  bool editor_only = selected_ == "source";
  float editor_w = editor_only ? avail.x : std::max(200.f, avail.x * split_);
  ImGui::BeginChild("##editor", ImVec2(editor_w, body_h), false);
  if (source) source->Draw(doc_);
  ImGui::EndChild();
  if (!editor_only) {
    ImGui::SameLine(0, 0);
    // A splitter: drag to give the editor or the panes more room.
    ImGui::InvisibleButton("##split", ImVec2(6, body_h));
    if (ImGui::IsItemActive()) {
      split_ += ImGui::GetIO().MouseDelta.x / std::max(1.f, avail.x);
      split_ = std::clamp(split_, 0.15f, 0.8f);
    }
    if (ImGui::IsItemHovered() || ImGui::IsItemActive())
      ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
    ImGui::SameLine(0, 0);
    ImGui::BeginChild("##panes", ImVec2(0, body_h), false);
    // The full titles when they all fit, else the short ones (a projector's font); tabs
    // that still do not fit shrink rather than scroll out of sight.
    const ImGuiStyle& style = ImGui::GetStyle();
    auto tab_width = [&](const char* label) {
      return ImGui::CalcTextSize(label).x + 2 * style.FramePadding.x + style.ItemInnerSpacing.x;
    };
    float full = 0, short_text = 0, padding = 0;
    for (auto& p : panes_)
      if (std::string_view(p->name()) != "source") {
        full += tab_width(p->title());
        short_text += ImGui::CalcTextSize(p->short_title()).x;
        padding += tab_width("");
      }
    const float bar = ImGui::GetContentRegionAvail().x;
    bool use_short = full > bar;
    // When even the short titles do not fit (a projector's font, twelve tabs), their text
    // gets smaller, down to three quarters: a tab narrower than its label cut it off. The
    // margin covers what tab_width() leaves out (ImGui adds a pixel a tab, and rounds).
    float label_scale = 1;
    if (use_short && padding + short_text > bar && short_text > 0)
      label_scale = std::clamp((bar - padding - em(12)) / short_text, 0.75f, 1.f);
    tab_places_.clear();
    tab_bar_x0_ = ImGui::GetCursorScreenPos().x;
    tab_bar_x1_ = tab_bar_x0_ + ImGui::GetContentRegionAvail().x;
    if (ImGui::BeginTabBar("##tabs", ImGuiTabBarFlags_FittingPolicyResizeDown)) {
      for (auto& p : panes_) {
        if (std::string_view(p->name()) == "source") continue;
        ImGuiTabItemFlags tf = 0;
        if (select_request_ && selected_ == p->name()) tf |= ImGuiTabItemFlags_SetSelected;
        // "###name": the tab keeps its identity when its label changes.
        std::string label = use_short ? p->short_title() : p->title();
        if (label_scale < 1) ImGui::SetWindowFontScale(label_scale);
        bool open = ImGui::BeginTabItem((label + "###" + p->name()).c_str(), nullptr, tf);
        tab_places_.push_back({p->name(), label, ImGui::GetItemRectMin().x,
                               ImGui::GetItemRectMax().x,
                               ImGui::CalcTextSize(label.c_str()).x + 2 * style.FramePadding.x});
        // Back to full size before the pane draws: a child window's font scale is its
        // parent's times its own.
        if (label_scale < 1) ImGui::SetWindowFontScale(1);
        if (use_short && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", p->title());
        if (open) {
          if (!select_request_) selected_ = p->name();
          ImGui::BeginChild(p->name(), ImVec2(0, 0), false);
          p->Draw(doc_);
          ImGui::EndChild();
          ImGui::EndTabItem();
        }
      }
      ImGui::EndTabBar();
    }
    ImGui::EndChild();
  }
  select_request_ = false;
  ImGui::Separator();
  draw_status();
  ImGui::End();
}

}  // namespace descent::viz
