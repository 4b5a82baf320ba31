// The loop-nest pane: one kernel lowered to loops, and the schedule that reshapes them.
//
// This is the lab bench of the ML-compiler half of the course: pick a kernel, click a loop,
// press split / reorder / vectorize / parallel / bind, and watch the nest, the schedule
// trace and the equivalent C change together. A refused step shows the primitive's own
// reason (schedule.h explains every precondition) and leaves the nest as it was, which is
// the point: the student learns WHY a reduction loop cannot be vectorized from the tool.
//
// The kernel, its dims and the steps in effect belong to the Document and its Session:
// every edit of the program makes a new Session, and the Document selects the kernel again
// on it and replays the schedule (viz/document.h), so an edit of the source never throws
// the schedule away. The pane reads them there and says what happened.
// Loops are named as schedules name them: the pipeline's loop-nest tree carries each
// loop's name (TreeNode::ref, from the schedule's own naming), so the pane never guesses.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <unordered_map>

#include "lang/text.h"
#include "viz/pane.h"
#include "viz/widgets.h"

namespace descent::viz {

namespace {

const char* const kKinds[] = {"serial", "parallel", "vectorized", "unrolled", "bound"};
// The thread axes schedule.h's `bind` accepts (OpenCL work-group and work-item indices).
const char* const kAxes[] = {"group.x", "group.y", "group.z", "local.x", "local.y", "local.z"};

std::vector<std::string> words_of(std::string_view s) {
  std::vector<std::string> out;
  std::istringstream in{std::string(s)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

struct LoopInfo {
  std::string name;                 // as a schedule names it: "i_0", or "C.i" when ambiguous
  std::string var;                  // its variable: "i"
  std::string block;                // the first block under it, or ""
  std::vector<std::string> nest;    // the loops around the first block under it (reorder's default)
  std::string kind;
  std::vector<size_t> path;         // where it is in the tree: kid indices from the root
};

struct LoopsPane : Pane {
  // ---- What the student chose here (the kernel and its schedule: the Document's) ----
  std::string selected_;     // the selected loop's schedule name, or ""
  std::vector<size_t> selected_path_;  // where it is in the tree, to follow it across a step
  std::string device_ = "ref";  // where Run & check runs: a name from Session::devices()

  // ---- Control fields ----
  std::string dims_field_ = kDefaultDims;
  int factor_ = 16;
  int axis_ = 0;
  std::string reorder_field_, step_field_;
  std::string view_ = "c";   // the listing under the nest: "c", "tir" or "tir-original"

  // ---- Messages ----
  std::string error_;        // the last refusal (red)
  std::string applied_;      // the last accepted step
  std::string note_;         // what happened to the schedule across an edit
  std::string run_;          // the last "Run & check" result
  bool run_ok_ = false;
  bool last_was_step_ = false;  // mark the trace's newest step (not after an undo)

  // ---- Cached for one (generation, schedule state) ----
  uint64_t gen_ = ~uint64_t(0);
  bool dirty_ = true;
  bool have_kernel_ = false;
  std::string why_empty_;    // why there is no nest to show
  TreeNode tree_;
  std::unordered_map<const TreeNode*, LoopInfo> loops_;
  std::vector<std::string> loop_names_;  // program order
  std::map<std::string, std::string> aliases_;  // "C.i" and "i" -> the loop's name
  std::vector<std::string> trace_lines_;
  std::map<std::string, std::vector<std::string>> view_lines_, prev_lines_;
  std::map<std::string, std::vector<bool>> view_changed_;
  int scroll_view_to_ = -1;
  bool trace_scroll_ = false;  // the trace changed: show its newest step
  bool scroll_top_ = false;  // another kernel is shown: start its listing at the top
  std::string sel_key_;      // what sel_line_ was found for
  int sel_line_ = -1;        // the selected loop's line in the view

  const char* name() const override { return "loops"; }
  const char* title() const override { return "Loop nest"; }
  const char* short_title() const override { return "Loops"; }

  std::vector<std::string> verbs() const override {
    return {"kernel NAME [DIM=N ...]", "sched STEP...", "try STEP...", "undo", "redo",
            "select LOOP", "view c|tir|tir-original", "run [" + join(Session::devices(), "|") + "]"};
  }

  // ---- Keeping up with the Document ----

  // A new generation is a new Session, on which the Document selected the kernel again
  // and replayed its schedule: say what became of them.
  void sync(Document& doc) {
    if (doc.generation() == gen_) return;
    gen_ = doc.generation();
    dirty_ = true;
    note_.clear();
    run_.clear();
    applied_.clear();
    error_.clear();
    prev_lines_.clear();
    last_was_step_ = false;
    Session& s = doc.session();
    if (s.module().kernels.empty()) {
      have_kernel_ = false;
      why_empty_ = doc.generation() == 0 ? "the program has not run yet"
                                         : "the program declares no kernels (did it compile?)";
      return;
    }
    std::string err;
    std::string first = doc.kernel().name.empty() ? doc.default_kernel() : "";
    // kDefaultDims name the prelude matmul's dims; the program's own kernel starts at its
    // default sizes.
    if (!first.empty() &&
        !doc.choose_kernel(first, first == kDefaultKernel ? kDefaultDims : "", &err)) {
      have_kernel_ = false;
      why_empty_ = err;
      return;
    }
    const KernelChoice& k = doc.kernel();
    note_ = k.note;
    if (k.switched) scroll_top_ = true;
    if (!k.selected) {
      have_kernel_ = false;
      why_empty_ = k.error;
      return;
    }
    dims_field_ = k.dims;
    have_kernel_ = true;
    why_empty_.clear();
    if (k.replayed) applied_ = "the program changed: the schedule was replayed on it";
  }

  bool select(Document& doc, const std::string& kernel, const std::string& dims_text,
              std::string* error) {
    if (!doc.choose_kernel(kernel, dims_text, error)) return false;
    dims_field_ = dims_text;
    have_kernel_ = true;
    why_empty_.clear();
    dirty_ = true;
    return true;
  }

  void refresh(Document& doc) {
    sync(doc);
    if (!dirty_) return;
    dirty_ = false;
    tree_ = TreeNode{};
    loops_.clear();
    loop_names_.clear();
    aliases_.clear();
    trace_lines_.clear();
    view_lines_.clear();
    view_changed_.clear();
    if (!have_kernel_) return;
    Session& s = doc.session();
    StageResult tir = s.kernel_view("tir");
    if (!tir.ok) {
      why_empty_ = tir.text;
      have_kernel_ = false;
      return;
    }
    if (!tir.tree) {
      why_empty_ = "the pipeline gave no loop-nest tree for this kernel";
      have_kernel_ = false;
      return;
    }
    tree_ = *tir.tree;
    index_loops();
    if (!selected_.empty() &&
        std::find(loop_names_.begin(), loop_names_.end(), selected_) == loop_names_.end()) {
      // A step renamed the selected loop (a split makes i_0 and i_1 of i): follow it to the
      // loop now in its place (the split's outer half).
      const TreeNode* n = &tree_;
      for (size_t i : selected_path_) n = n && i < n->kids.size() ? &n->kids[i] : nullptr;
      if (n && n->head == "for" && !n->ref.empty())
        select_loop(n->ref);
      else
        selected_.clear();
    }
    trace_lines_ = split_lines(s.schedule_trace());
    trace_scroll_ = true;
    for (const char* v : {"c", "tir", "tir-original"}) {
      StageResult r = s.kernel_view(v);
      std::vector<std::string> lines = split_lines(r.text);
      if (std::string_view(v) == "c") {
        // The #include lines are the same for every kernel: give their rows to the loops.
        size_t skip = 0;
        while (skip < lines.size() && lines[skip].rfind("#include", 0) == 0) ++skip;
        if (skip > 0 && skip < lines.size() && trim(lines[skip]).empty()) ++skip;
        lines.erase(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(skip));
      }
      view_lines_[v] = std::move(lines);
      auto prev = prev_lines_.find(v);
      if (prev != prev_lines_.end())
        view_changed_[v] = descent::changed_lines(prev->second, view_lines_[v]);
    }
    scroll_view_to_ = scroll_top_ ? 0 : -1;
    scroll_top_ = false;
    sel_key_.clear();
    const auto& changed = view_changed_[view_];
    for (size_t i = 0; i < changed.size(); ++i)
      if (changed[i]) {
        scroll_view_to_ = static_cast<int>(i);
        break;
      }
  }

  // Indexes the loops of the tree by their names (the tree's `ref`: the schedule's own),
  // with the nest reorder starts from, and the "BLOCK.i" spellings a schedule also accepts.
  void index_loops() {
    std::vector<const TreeNode*> above;  // the loops around the node being visited
    std::vector<size_t> path;
    std::vector<std::pair<const TreeNode*, std::vector<size_t>>> fors;
    auto walk = [&](auto& self, const TreeNode& n) -> void {
      bool is_for = n.head == "for" && !n.ref.empty();
      if (is_for) {
        fors.push_back({&n, path});
        above.push_back(&n);
      }
      if (n.head == "block")
        for (const TreeNode* l : above) aliases_.emplace(n.atom + "." + l->atom, l->ref);
      for (size_t i = 0; i < n.kids.size(); ++i) {
        path.push_back(i);
        self(self, n.kids[i]);
        path.pop_back();
      }
      if (is_for) above.pop_back();
    };
    walk(walk, tree_);
    // The first block under a loop, and the loops between the loop and that block.
    auto first_block = [](auto& self, const TreeNode& n,
                          std::vector<const TreeNode*>& nest) -> const TreeNode* {
      if (n.head == "block") return &n;
      if (n.head == "for") nest.push_back(&n);
      for (const auto& k : n.kids)
        if (const TreeNode* b = self(self, k, nest)) return b;
      if (n.head == "for") nest.pop_back();
      return nullptr;
    };
    for (auto& [loop, where] : fors) {
      LoopInfo info;
      info.name = loop->ref;
      info.var = loop->atom;
      info.kind = loop->type.empty() ? "serial" : loop->type;
      info.path = where;
      // The nest: the loops above this one, then those from it down to its first block.
      const TreeNode* n = &tree_;
      for (size_t i : where) {
        if (n->head == "for") info.nest.push_back(n->ref);
        n = &n->kids[i];
      }
      std::vector<const TreeNode*> below;
      const TreeNode* b = first_block(first_block, *loop, below);
      info.block = b ? b->atom : "";
      for (const TreeNode* l : below) info.nest.push_back(l->ref);
      loop_names_.push_back(info.name);
      aliases_[info.name] = info.name;
      loops_[loop] = std::move(info);
    }
  }

  // ---- The operations (buttons and Act both come here) ----

  void select_loop(const std::string& name) {
    selected_ = name;
    for (const auto& [node, info] : loops_)
      if (info.name == name) {
        reorder_field_ = join(info.nest, " ");
        selected_path_ = info.path;
      }
  }

  // Remembers the listings as they were, so the next refresh can mark what the step changed.
  void before_change() {
    prev_lines_ = view_lines_;
  }

  bool apply(Document& doc, const std::string& step, std::string* error) {
    refresh(doc);
    applied_.clear();
    run_.clear();
    std::string err;
    if (!have_kernel_) {
      err = "no kernel selected: " + why_empty_;
    } else if (trim(step).empty()) {
      err = "an empty step (write one as in docs/tensor.md: split i 16)";
    } else {
      before_change();
      if (doc.session().schedule_step(step, &err)) {
        error_.clear();
        applied_ = trim(step);
        last_was_step_ = true;
        dirty_ = true;
        refresh(doc);
        return true;
      }
    }
    // The nest is unchanged: drop the marks of an earlier step so nothing looks changed.
    view_changed_.clear();
    last_was_step_ = false;
    error_ = "'" + trim(step) + "' refused: " + err;
    *error = error_;
    return false;
  }

  bool undo_redo(Document& doc, bool redo, std::string* error) {
    refresh(doc);
    applied_.clear();
    run_.clear();
    before_change();
    Session& s = doc.session();
    bool ok = have_kernel_ && (redo ? s.schedule_redo() : s.schedule_undo());
    if (!ok) {
      error_ = have_kernel_ ? std::string("nothing to ") + (redo ? "redo" : "undo")
                            : "no kernel selected: " + why_empty_;
      *error = error_;
      return false;
    }
    error_.clear();
    applied_ = redo ? "redo" : "undo";
    last_was_step_ = redo;  // after a redo the newest step is the one that came back
    dirty_ = true;
    refresh(doc);
    return true;
  }

  bool choose_kernel(Document& doc, const std::string& kernel, const std::string& dims,
                     std::string* error) {
    refresh(doc);
    applied_.clear();
    run_.clear();
    std::string err;
    if (!select(doc, kernel, dims, &err)) {
      error_ = err;
      *error = err;
      return false;
    }
    error_.clear();
    last_was_step_ = false;
    note_.clear();  // the Document let a lost kernel go: the student chose another
    scroll_top_ = true;
    selected_.clear();
    reorder_field_.clear();
    prev_lines_.clear();
    refresh(doc);
    return true;
  }

  bool run_check(Document& doc, std::string* error) {
    refresh(doc);
    if (!have_kernel_) {
      run_ok_ = false;
      run_ = "cannot run: no kernel selected: " + why_empty_;
      *error = run_;
      return false;
    }
    const std::string& device = device_;
    Session::KernelRun r = doc.session().run_kernel(device, /*check=*/true);
    run_ok_ = r.ok;
    if (!r.ok) {
      run_ = "run on " + device + " failed: " + r.error;
      *error = run_;
      return false;
    }
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s on %s: %.3f ms", r.checked ? "matches the reference" : "ran",
                  device.c_str(), r.seconds * 1e3);
    run_ = buf;
    if (r.compile_seconds > 0) {
      std::snprintf(buf, sizeof buf, " (compiled in %.0f ms)", r.compile_seconds * 1e3);
      run_ += buf;
    }
    std::snprintf(buf, sizeof buf, ", checksum %.6g", r.checksum);
    run_ += buf;
    return true;
  }

  bool Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
           std::string* error) override {
    refresh(doc);
    if (verb == "kernel") {
      if (args.empty()) {
        *error = "usage: kernel NAME [DIM=N ...]";
        return false;
      }
      return choose_kernel(doc, args[0],
                           args.size() > 1 ? join(args, " ", 1) : doc.kernel().dims, error);
    }
    if (verb == "sched" || verb == "try") {
      bool ok = apply(doc, join(args, " "), error);
      // `try` is the scripted Apply button: a refusal is shown in the pane, not an error of
      // the script (so a screenshot can show the reason).
      return ok || verb == "try";
    }
    if (verb == "undo" || verb == "redo") {
      if (!args.empty()) {
        *error = std::string(verb) + " takes no arguments";
        return false;
      }
      return undo_redo(doc, verb == "redo", error);
    }
    if (verb == "select") {
      if (args.size() != 1) {
        *error = "usage: select LOOP";
        return false;
      }
      auto alias = aliases_.find(args[0]);
      if (alias == aliases_.end()) {
        *error = "no loop '" + args[0] + "' (loops: " +
                 (loop_names_.empty() ? std::string("none") : join(loop_names_)) + ")";
        return false;
      }
      select_loop(alias->second);
      return true;
    }
    if (verb == "view") {
      if (args.size() != 1 || (args[0] != "c" && args[0] != "tir" && args[0] != "tir-original")) {
        *error = "usage: view c|tir|tir-original";
        return false;
      }
      view_ = args[0];
      return true;
    }
    if (verb == "run") {
      auto devices = Session::devices();
      if (args.size() > 1 ||
          (args.size() == 1 && std::find(devices.begin(), devices.end(), args[0]) == devices.end())) {
        *error = "usage: run [" + join(devices, "|") + "]";
        return false;
      }
      if (args.size() == 1) device_ = args[0];
      return run_check(doc, error);
    }
    return Pane::Act(doc, verb, args, error);
  }

  // ---- Drawing ----

  void Draw(Document& doc) override {
    refresh(doc);
    std::string ignored;
    draw_kernel_row(doc, ignored);
    draw_controls(doc, ignored);
    draw_messages();
    draw_legend();
    if (!have_kernel_) {
      ImGui::Spacing();
      ImGui::TextWrapped("Loop nest not available: %s", why_empty_.c_str());
      return;
    }
    float avail_h = ImGui::GetContentRegionAvail().y;
    float avail_w = ImGui::GetContentRegionAvail().x;
    float top_h = std::max(120.f, avail_h * 0.55f);
    float nest_w = std::max(200.f, avail_w * 0.64f);
    draw_nest(ImVec2(nest_w, top_h));
    ImGui::SameLine();
    draw_trace(ImVec2(0, top_h));
    draw_view();
  }

  void draw_kernel_row(Document& doc, std::string& ignored) {
    const auto& kernels = doc.session().module().kernels;
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Kernel");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(em(150));
    const std::string& chosen = doc.kernel().name;
    if (ImGui::BeginCombo("##kernel", have_kernel_ ? chosen.c_str() : "(none)")) {
      for (const auto& k : kernels) {
        if (ImGui::Selectable(k.name.c_str(), k.name == chosen))
          choose_kernel(doc, k.name, dims_field_, &ignored);
      }
      ImGui::EndCombo();
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(em(190));
    bool enter = ImGui::InputTextWithHint("##dims", "n=64 m=64 k=64", &dims_field_,
                                          ImGuiInputTextFlags_EnterReturnsTrue);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("the kernel's dims as NAME=SIZE words; the others are 64");
    ImGui::SameLine();
    if (ImGui::Button("Select") || enter) choose_kernel(doc, chosen, dims_field_, &ignored);
    ImGui::SameLine();
    ImGui::TextDisabled("|");
    ImGui::SameLine();
    // As wide as the longest device name, so "opencl" (or a later device) is not clipped.
    float widest = 0;
    for (const auto& d : Session::devices()) widest = std::max(widest, ImGui::CalcTextSize(d.c_str()).x);
    ImGui::SetNextItemWidth(widest + ImGui::GetFrameHeight() + 2 * ImGui::GetStyle().FramePadding.x);
    if (ImGui::BeginCombo("##device", device_.c_str())) {
      for (const auto& d : Session::devices())
        if (ImGui::Selectable(d.c_str(), d == device_)) device_ = d;
      ImGui::EndCombo();
    }
    ImGui::SameLine();
    if (ImGui::Button("Run & check")) run_check(doc, &ignored);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("run the scheduled kernel on random inputs and compare it with the\n"
                        "unscheduled kernel on the reference interpreter");
  }

  void draw_controls(Document& doc, std::string& ignored) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Loop");
    ImGui::SameLine();
    if (selected_.empty()) {
      ImGui::TextDisabled("(click one)");
    } else {
      ImGui::PushStyleColor(ImGuiCol_Text, colors::current() | IM_COL32_A_MASK);
      ImGui::TextUnformatted(selected_.c_str());
      ImGui::PopStyleColor();
    }
    bool none = selected_.empty() || !have_kernel_;
    ImGui::SameLine();
    ImGui::BeginDisabled(none);
    if (ImGui::Button("Split"))
      apply(doc, "split " + selected_ + " " + std::to_string(factor_), &ignored);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(em(48));
    ImGui::InputInt("##factor", &factor_, 0, 0);
    if (factor_ < 1) factor_ = 1;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("the split factor: the inner loop's extent");
    ImGui::SameLine();
    if (ImGui::Button("Unroll")) apply(doc, "unroll " + selected_, &ignored);
    ImGui::SameLine();
    if (ImGui::Button("Vectorize")) apply(doc, "vectorize " + selected_, &ignored);
    ImGui::SameLine();
    if (ImGui::Button("Parallel")) apply(doc, "parallel " + selected_, &ignored);
    ImGui::SameLine();
    if (ImGui::Button("Bind")) apply(doc, "bind " + selected_ + " " + kAxes[axis_], &ignored);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(em(96));
    ImGui::Combo("##axis", &axis_, kAxes, IM_ARRAYSIZE(kAxes));
    ImGui::EndDisabled();

    ImGui::BeginDisabled(!have_kernel_);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Order");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(em(260));
    bool enter = ImGui::InputTextWithHint("##reorder", "loops, outermost first",
                                          &reorder_field_, ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    if (ImGui::Button("Reorder") || enter) apply(doc, "reorder " + reorder_field_, &ignored);
    ImGui::SameLine();
    ImGui::TextDisabled("|");
    ImGui::SameLine();
    if (ImGui::Button("Undo")) undo_redo(doc, false, &ignored);
    ImGui::SameLine();
    if (ImGui::Button("Redo")) undo_redo(doc, true, &ignored);

    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Step ");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - 70);
    bool go = ImGui::InputTextWithHint("##step", "tile i j 8 8 | fuse | cache_read C B local | ...",
                                       &step_field_, ImGuiInputTextFlags_EnterReturnsTrue);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("any step of the schedule language (docs/tensor.md, section 5):\n"
                        "split tile reorder fuse unroll vectorize parallel bind compute_at\n"
                        "reverse_compute_at compute_inline cache_read cache_write\n"
                        "decompose_reduction rfactor");
    ImGui::SameLine();
    if ((ImGui::Button("Apply") || go) && apply(doc, step_field_, &ignored)) step_field_.clear();
    ImGui::EndDisabled();
  }

  void draw_messages() {
    auto colored = [](ImU32 c, const std::string& text) {
      ImGui::PushStyleColor(ImGuiCol_Text, c);
      ImGui::TextWrapped("%s", text.c_str());
      ImGui::PopStyleColor();
    };
    if (!error_.empty()) colored(colors::error(), error_);
    else if (!applied_.empty()) colored(IM_COL32(30, 130, 60, 255), "applied: " + applied_);
    if (!note_.empty()) colored(IM_COL32(200, 110, 0, 255), note_);
    if (!run_.empty()) colored(run_ok_ ? IM_COL32(30, 130, 60, 255) : colors::error(), run_);
  }

  void draw_legend() {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    float h = ImGui::GetTextLineHeight();
    ImGui::TextDisabled("loop kinds:");
    for (const char* k : kKinds) {
      ImGui::SameLine();
      ImVec2 p = ImGui::GetCursorScreenPos();
      dl->AddRectFilled(ImVec2(p.x, p.y + h * 0.2f), ImVec2(p.x + h * 0.6f, p.y + h * 0.8f),
                        colors::loop_kind(k), 2);
      ImGui::Dummy(ImVec2(h * 0.6f, h));
      ImGui::SameLine(0, 4);
      ImGui::PushStyleColor(ImGuiCol_Text, colors::loop_kind(k));
      ImGui::TextUnformatted(k);
      ImGui::PopStyleColor();
    }
  }

  void draw_nest(ImVec2 size) {
    ImGui::BeginChild("##nest", size, true, ImGuiWindowFlags_HorizontalScrollbar);
    ImGui::TextDisabled("Loop nest (click a loop to select it)");
    ImGui::Separator();
    draw_node(tree_);
    ImGui::EndChild();
  }

  void draw_node(const TreeNode& n) {
    ImGuiTreeNodeFlags flags = ImGuiTreeNodeFlags_DefaultOpen | ImGuiTreeNodeFlags_OpenOnArrow |
                               ImGuiTreeNodeFlags_SpanAvailWidth;
    bool leaf = n.kids.empty();
    if (leaf) flags |= ImGuiTreeNodeFlags_Leaf | ImGuiTreeNodeFlags_NoTreePushOnOpen;
    auto it = n.head == "for" ? loops_.find(&n) : loops_.end();
    const LoopInfo* loop = it == loops_.end() ? nullptr : &it->second;
    if (loop && loop->name == selected_) flags |= ImGuiTreeNodeFlags_Selected;

    std::string label, extra;
    ImU32 color = 0;
    if (loop) {
      label = "for " + n.atom + " in " + n.detail;
      if (loop->kind != "serial") extra = loop->kind;
      color = colors::loop_kind(loop->kind);
    } else if (n.head == "func") {
      label = "kernel " + n.atom;
    } else if (n.head == "block") {
      label = "block " + n.atom;
      extra = n.detail;
      color = IM_COL32(20, 110, 50, 255);
    } else if (n.head == "init") {
      label = "init";
      color = colors::dim();
    } else if (n.head == "if") {
      label = "if " + n.atom;
    } else if (n.head == "alloc") {
      label = "alloc " + n.atom;
      color = colors::dim();
    } else if (n.head == "stmt") {
      label = n.atom;
    } else {
      label = n.head + (n.atom.empty() ? "" : " " + n.atom);
    }
    if (color) ImGui::PushStyleColor(ImGuiCol_Text, color);
    bool open = ImGui::TreeNodeEx(static_cast<const void*>(&n), flags, "%s", label.c_str());
    if (color) ImGui::PopStyleColor();
    if (loop && ImGui::IsItemClicked() && !ImGui::IsItemToggledOpen()) select_loop(loop->name);
    if (loop && ImGui::IsItemHovered())
      ImGui::SetTooltip("%s loop '%s'%s", loop->kind.c_str(), loop->name.c_str(),
                        loop->nest.empty() ? "" : ("\nits nest: " + join(loop->nest, " ")).c_str());
    if (!extra.empty()) {
      ImGui::SameLine();
      if (loop) {
        // The kind as a coloured tag, so it reads on a projector without the legend.
        ImVec2 p = ImGui::GetCursorScreenPos();
        ImVec2 ts = ImGui::CalcTextSize(extra.c_str());
        ImGui::GetWindowDrawList()->AddRectFilled(
            ImVec2(p.x - 3, p.y), ImVec2(p.x + ts.x + 3, p.y + ts.y), color, 3);
        ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 255, 255, 255));
        ImGui::TextUnformatted(extra.c_str());
        ImGui::PopStyleColor();
      } else {
        ImGui::TextDisabled("%s", extra.c_str());
      }
    }
    if (open && !leaf) {
      for (const auto& k : n.kids) draw_node(k);
      ImGui::TreePop();
    }
  }

  void draw_trace(ImVec2 size) {
    ImGui::BeginChild("##trace_box", size, false);
    ImGui::TextDisabled("Schedule trace (%zu step%s)", trace_lines_.size(),
                        trace_lines_.size() == 1 ? "" : "s");
    if (trace_lines_.empty()) {
      ImGui::TextDisabled("none: the nest is as lowered");
    } else {
      ListingStyle style;
      style.line_numbers = true;
      int last = static_cast<int>(trace_lines_.size()) - 1;
      bool fresh = last_was_step_;
      style.background = [last, fresh](int i) {
        return fresh && i == last ? colors::changed() : 0;
      };
      style.scroll_to = trace_scroll_ ? last : -1;  // once, so the student can scroll up
      trace_scroll_ = false;
      Listing("##trace", trace_lines_, style);
    }
    ImGui::EndChild();
  }

  int find_header(const std::vector<std::string>& lines) const {
    int sel_line = -1;
    const LoopInfo* loop = nullptr;
    for (const auto& [node, info] : loops_)
      if (info.name == selected_) loop = &info;
    if (!loop) return -1;
    const std::string& var = loop->var;
    std::string pat = "int64_t " + var + " = ";
    // "C.j" is the j above block C: search back from the block's line.
    size_t from = lines.size();
    if (loop->name != var && !loop->block.empty()) {
      const std::string& block = loop->block;
      std::string mark =
          view_ == "c" ? "/* block " + block + " */" : "T.block(\"" + block + "\")";
      for (size_t i = 0; i < lines.size() && from == lines.size(); ++i)
        if (lines[i].find(mark) != std::string::npos) from = i;
    }
    auto header = [&](size_t i) {
      if (view_ == "c") return lines[i].find(pat) != std::string::npos;
      // TVMScript: "for i, j, k in T.grid(...)" declares several loops on one line.
      std::string t = trim(lines[i]);
      size_t in = t.find(" in ");
      if (t.rfind("for ", 0) != 0 || in == std::string::npos) return false;
      for (auto& w : words_of(t.substr(4, in - 4)))
        if (w == var || w == var + ",") return true;
      return false;
    };
    if (from < lines.size()) {
      for (size_t i = from + 1; i-- > 0 && sel_line < 0;)
        if (header(i)) sel_line = static_cast<int>(i);
    } else {
      for (size_t i = 0; i < lines.size() && sel_line < 0; ++i)
        if (header(i)) sel_line = static_cast<int>(i);
    }
    return sel_line;
  }

  void draw_view() {
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("Show");
    for (auto [key, label] : {std::pair{"c", "C"}, std::pair{"tir", "TVMScript"},
                              std::pair{"tir-original", "as lowered"}}) {
      ImGui::SameLine();
      if (ImGui::RadioButton(label, view_ == key)) view_ = key;
    }
    ImGui::SameLine();
    ImGui::TextDisabled(" (green: changed by the last step)");
    const auto& lines = view_lines_[view_];
    const auto& changed = view_changed_[view_];
    // The selected loop's header line, found by the variable it declares; searched again only
    // when the selection, the view or the nest changes.
    std::string key = selected_ + "|" + view_;
    if (key != sel_key_) {
      sel_key_ = key;
      sel_line_ = find_header(lines);
      if (sel_line_ >= 0 && scroll_view_to_ < 0) scroll_view_to_ = sel_line_;
    }
    int sel_line = sel_line_;
    ListingStyle style;
    style.line_numbers = true;
    style.background = [&changed, sel_line](int i) -> ImU32 {
      if (i == sel_line) return colors::current();
      return size_t(i) < changed.size() && changed[size_t(i)] ? colors::changed() : 0;
    };
    style.scroll_to = scroll_view_to_;
    scroll_view_to_ = -1;
    Listing("##view", lines, style);
  }
};

}  // namespace

std::unique_ptr<Pane> make_loops_pane() { return std::make_unique<LoopsPane>(); }

}  // namespace descent::viz
