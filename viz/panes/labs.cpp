// The labs pane: the guided labs (docs/labs.md) inside the visualizer. The list with each
// lab's status, the chosen lab's README, and the buttons a student needs: Start (copy the
// starter into descent-labs/NAME), Check (every check, its points and why it fails), Hint,
// and Open, which loads the lab's file into the editor and brings up the stage pane the lab
// is about (the loop nest for a schedule lab, the register VM for the allocator lab).
//
// Everything a button does is the lab runner's (labs/runner/lab.h), as `descent lab` does
// it: the pane only lays it out.
#include <algorithm>
#include <cctype>
#include <imgui.h>

#include <filesystem>

#include "labs/runner/lab.h"
#include "lang/text.h"
#include "viz/pane.h"
#include "viz/widgets.h"

namespace descent::viz {

namespace {

namespace fs = std::filesystem;

// Markdown's paragraphs as one line each, so the pane wraps them to its width: lines of a
// paragraph are joined; headings, list items, table rows and blank lines stay lines.
std::string reflow(const std::string& markdown) {
  std::string out;
  bool in_paragraph = false;
  for (const auto& line : split_lines(markdown)) {
    bool blank = line.find_first_not_of(" \t") == std::string::npos;
    char first = blank ? ' ' : line[line.find_first_not_of(" \t")];
    bool fence = line.compare(line.find_first_not_of(" \t") == std::string::npos ? 0 : line.find_first_not_of(" \t"), 3, "```") == 0;
    bool own_line = blank || first == '#' || first == '-' || first == '|' || fence ||
                    (first >= '0' && first <= '9' && line.find(". ") != std::string::npos &&
                     line.find(". ") < 4);
    if (own_line || !in_paragraph) {
      if (!out.empty()) out += "\n";
      out += line;
      in_paragraph = !blank && !own_line;
      if (!blank && own_line && first != '#') in_paragraph = true;  // a list item continues
    } else {
      out += " " + line.substr(line.find_first_not_of(" \t"));
    }
  }
  return out + "\n";
}

// Markdown's inline marks that a plain text widget would show as they are: `code`, **bold**,
// *emphasis* (a star against a word; `3 * x`, with spaces around it, stays).
std::string plain(std::string line) {
  std::string out;
  auto word = [&](size_t k) { return k < line.size() && std::isalnum(static_cast<unsigned char>(line[k])); };
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '`') continue;
    if (line.compare(i, 2, "**") == 0) {
      ++i;
      continue;
    }
    if (line[i] == '*' && ((word(i + 1) && (i == 0 || !word(i - 1))) || (i > 0 && word(i - 1) && !word(i + 1))))
      continue;
    out += line[i];
  }
  return out;
}

// The README as a reader sees it: headings set apart (coloured, without their #), list items
// with a bullet, inline marks gone, every paragraph wrapped to the pane's width.
void draw_markdown(const std::string& reflowed) {
  bool fence = false;
  for (const auto& line : split_lines(reflowed)) {
    size_t at = line.find_first_not_of(" \t");
    if (at != std::string::npos && line.compare(at, 3, "```") == 0) {
      fence = !fence;
      continue;
    }
    if (fence) {
      ImGui::TextDisabled("  %s", line.c_str());
      continue;
    }
    if (at == std::string::npos) {
      ImGui::Spacing();
      continue;
    }
    if (line[at] == '#') {
      size_t text = line.find_first_not_of("# ", at);
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(colors::loop_kind("parallel")));
      ImGui::TextWrapped("%s", text == std::string::npos ? "" : plain(line.substr(text)).c_str());
      ImGui::PopStyleColor();
      continue;
    }
    if (line.compare(at, 2, "- ") == 0 || line.compare(at, 2, "* ") == 0) {
      ImGui::Bullet();
      ImGui::SameLine();
      ImGui::TextWrapped("%s", plain(line.substr(at + 2)).c_str());
      continue;
    }
    ImGui::TextWrapped("%s", plain(line).c_str());
  }
}

struct LabsPane : Pane {
  const char* name() const override { return "labs"; }
  const char* title() const override { return "Labs"; }
  std::vector<std::string> verbs() const override {
    return {"select NAME", "start", "check", "hint", "open"};
  }

  bool loaded_ = false;
  std::string load_error_;
  std::vector<labs::Lab> labs_;
  int selected_ = 0;
  std::string readme_;                 // the selected lab's README.md
  labs::LabReport report_;             // the last check of the selected lab
  bool have_report_ = false;
  std::string report_stamp_;           // the student's files' times when report_ was made
  std::string message_;                // what the last button said (start, hint, open)
  std::string caption_;

  void load() {
    if (loaded_) return;
    loaded_ = true;
    if (!labs::load_labs(labs::default_labs_dir(), &labs_, &load_error_)) labs_.clear();
    choose(0);
  }
  const labs::Lab* lab() const {
    return selected_ >= 0 && selected_ < int(labs_.size()) ? &labs_[size_t(selected_)] : nullptr;
  }
  std::string work() const { return lab() ? labs::default_work_dir(*lab()) : ""; }
  void choose(int i) {
    selected_ = i;
    have_report_ = false;
    message_.clear();
    readme_.clear();
    if (const labs::Lab* l = lab()) {
      std::string error;
      std::string text;
      if (!read_file((fs::path(l->dir) / "README.md").string(), &text, &error)) text = error;
      readme_ = reflow(text);
    }
  }

  bool start(std::string* error) {
    if (!lab()) return fail("no lab chosen", error);
    return labs::start_lab(*lab(), work(), &message_, error);
  }
  // The modification times of the lab's files in the work folder, as one string.
  std::string stamp() const {
    std::string out;
    if (const labs::Lab* l = lab())
      for (const auto& f : l->files) {
        std::error_code ec;
        auto t = fs::last_write_time(fs::path(work()) / f, ec);
        out += ec ? "-;" : std::to_string(t.time_since_epoch().count()) + ";";
      }
    return out;
  }
  bool check(std::string* error) {
    if (!lab()) return fail("no lab chosen", error);
    report_stamp_ = stamp();
    report_ = labs::check_lab(*lab(), work());
    have_report_ = true;
    message_.clear();
    if (!report_.setup_error.empty()) message_ = report_.setup_error;
    return true;
  }
  bool hint(std::string* error) {
    if (!lab()) return fail("no lab chosen", error);
    message_ = labs::next_hint(*lab(), work(), error);
    return !message_.empty();
  }
  // The lab's file in the editor and its stage pane in front: a schedule lab shows its
  // kernel with the student's schedule applied in the loop-nest pane; a search-space lab its
  // kernel, in the tuner pane (a space is not one schedule: it is edited as a file).
  bool open(Document& doc, std::string* error) {
    const labs::Lab* l = lab();
    if (!l) return fail("no lab chosen", error);
    if (l->kind == "schedule" || l->kind == "space") {
      std::string program = (fs::path(l->dir) / l->spec.value("program", "kernel.ds")).string();
      if (!doc.load(program, error)) return false;
      doc.rerun_now();
      doc.wait();
      std::string dims;
      const nlohmann::json dim_spec = l->spec.value("dims", nlohmann::json::object());  // items() needs it alive
      for (const auto& [k, v] : dim_spec.items())
        dims += (dims.empty() ? "" : " ") + k + "=" + std::to_string(v.get<int64_t>());
      if (!doc.choose_kernel(l->spec.value("kernel", ""), dims, error)) return false;
      std::string schedule, why;
      if (l->kind == "schedule" && !l->files.empty() && read_file((fs::path(work()) / l->files[0]).string(), &schedule, &why) &&
          !doc.session().schedule_text(schedule, &why))
        message_ = "your schedule does not apply: " + why;
    } else {
      if (l->files.empty()) return fail("the lab has no file", error);
      fs::path file = fs::path(work()) / l->files[0];
      if (!fs::exists(file)) file = fs::path(l->dir) / "starter" / l->files[0];
      if (!doc.load(file.string(), error)) return false;
      doc.rerun_now();
      doc.wait();
    }
    std::string pane = l->spec.value("pane", l->kind == "schedule" ? "loops"
                                             : l->kind == "space"  ? "tune"
                                                                   : "source");
    doc.request_pane(pane);
    return true;
  }
  static bool fail(const std::string& why, std::string* error) {
    *error = why;
    return false;
  }

  bool Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
           std::string* error) override {
    load();
    if (verb == "select") {
      if (args.size() != 1) return fail("select takes a lab's name", error);
      const labs::Lab* found = nullptr;
      if (!labs::find_lab(labs_, args[0], &found, error)) return false;
      choose(int(found - labs_.data()));
      return true;
    }
    if (verb == "start") return start(error);
    if (verb == "check") return check(error);
    if (verb == "hint") return hint(error);
    if (verb == "open") return open(doc, error);
    return Pane::Act(doc, verb, args, error);
  }

  std::string caption() const override { return caption_; }

  void Draw(Document& doc) override {
    load();
    if (labs_.empty()) {
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::error()), "%s",
                         load_error_.empty() ? "no labs found" : load_error_.c_str());
      caption_ = "no labs";
      return;
    }
    int passed = 0;
    std::vector<std::string> status;
    for (const auto& l : labs_) {
      status.push_back(labs::lab_status(l, labs::default_work_dir(l)));
      passed += status.back() == "passed";
    }
    const labs::Lab& l = *lab();
    caption_ = have_report_ && report_.setup_error.empty()
                   ? "lab " + l.name + ": " + std::to_string(report_.points) + "/" +
                         std::to_string(report_.max_points) + " points"
                   : "lab " + l.name + ": " + status[size_t(selected_)];
    ImGui::TextDisabled("%d of %zu labs passed", passed, labs_.size());

    // The list: the status column starts after the longest name, at any font size.
    std::vector<std::string> rows;
    float name_w = 0, status_w = ImGui::CalcTextSize("not started").x;
    for (size_t i = 0; i < labs_.size(); ++i) {
      rows.push_back(std::to_string(labs_[i].order) + ". " + labs_[i].name);
      name_w = std::max(name_w, ImGui::CalcTextSize(rows.back().c_str()).x);
      status_w = std::max(status_w, ImGui::CalcTextSize(status[i].c_str()).x);
    }
    const ImGuiStyle& style = ImGui::GetStyle();
    float status_x = style.WindowPadding.x + name_w + em(16);
    ImGui::BeginChild("##labs", ImVec2(status_x + status_w + 2 * style.WindowPadding.x + em(8), 0), true);
    for (size_t i = 0; i < labs_.size(); ++i) {
      ImU32 c = status[i] == "passed" ? colors::loop_kind("vectorized")
                : status[i] == "failing" ? colors::error() : colors::dim();  // "edited": dim until checked
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(c));
      if (ImGui::Selectable(rows[i].c_str(), int(i) == selected_)) choose(int(i));
      ImGui::PopStyleColor();
      ImGui::SameLine(status_x);
      ImGui::TextDisabled("%s", status[i].c_str());
    }
    ImGui::EndChild();
    ImGui::SameLine();

    // The chosen lab.
    ImGui::BeginChild("##lab", ImVec2(0, 0), false);
    ImGui::TextWrapped("%s", l.title.c_str());
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(colors::dim()));
    ImGui::TextWrapped("%s  |  you edit %s in %s", l.tier.c_str(), join(l.files).c_str(), work().c_str());
    ImGui::PopStyleColor();
    std::string error;
    bool acted = false, ok = true;
    if (ImGui::Button("Start")) acted = true, ok = start(&error);
    ImGui::SameLine();
    if (ImGui::Button("Check")) acted = true, ok = check(&error);
    ImGui::SameLine();
    if (ImGui::Button("Hint")) acted = true, ok = hint(&error);
    ImGui::SameLine();
    if (ImGui::Button("Open")) acted = true, ok = open(doc, &error);
    if (acted && !ok) message_ = error;
    if (!message_.empty()) ImGui::TextWrapped("%s", message_.c_str());
    // A report about an older version of the file is not shown as if it were current: a
    // quick lab is checked again at once, a C++ lab (a compile) says so and waits for Check.
    if (have_report_ && stamp() != report_stamp_) {
      if (l.kind != "cpp") {
        std::string why;
        check(&why);
      } else {
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::dim()),
                           "your file changed since this check: press Check to check it again");
      }
    }
    if (have_report_ && report_.setup_error.empty()) {
      ImGui::Separator();
      for (const auto& c : report_.checks) {
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(c.passed ? colors::loop_kind("vectorized") : colors::error()),
                           "%s", c.passed ? "pass" : "FAIL");
        ImGui::SameLine();
        std::string kind = c.status == "pass" || c.status == "fail" ? "" : " [" + c.status + "]";
        ImGui::TextWrapped("%s (%d/%d)%s", c.name.c_str(), c.points, c.max_points, kind.c_str());
        if (!c.passed || !c.measured.empty()) {
          ImGui::Indent();
          ImGui::TextWrapped("%s", c.passed ? c.measured.c_str() : c.reason.c_str());
          ImGui::Unindent();
        }
      }
      if (report_.sandbox.rfind("none: ", 0) == 0)
        ImGui::TextWrapped("note: your code ran without a sandbox (%s)", report_.sandbox.substr(6).c_str());
      ImGui::Text("%d/%d points%s", report_.points, report_.max_points,
                  report_.passed() ? ", every check passes" : "");
    }
    ImGui::Separator();
    ImGui::BeginChild("##readme", ImVec2(0, 0), false);
    draw_markdown(readme_);
    ImGui::EndChild();
    ImGui::EndChild();
  }
};

}  // namespace

std::unique_ptr<Pane> make_labs_pane() { return std::make_unique<LabsPane>(); }

}  // namespace descent::viz
