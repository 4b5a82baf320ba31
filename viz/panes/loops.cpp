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
//
// The pane's state and its methods are declared in loops_internal.h; this file keeps up with
// the Document and does what the buttons and Act() ask. The nest, the trace and the listing
// are drawn in loops_nest.cpp, the iteration-order picture in loops_order.cpp.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdio>

#include "viz/panes/loops_internal.h"
#include "viz/widgets.h"

namespace descent::viz {

namespace loops_internal {

namespace {

// The thread axes schedule.h's `bind` accepts (OpenCL work-group and work-item indices).
const char* const kAxes[] = {"group.x", "group.y", "group.z", "local.x", "local.y", "local.z"};

}  // namespace

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

// ---- Keeping up with the Document ----

// A new generation is a new Session, into which the Document moved the schedule (or
// applied its steps to a changed kernel): say what became of it.
void LoopsPane::sync(Document& doc) {
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
  if (k.reapplied) applied_ = "the kernel changed: the schedule's steps were applied to its new nest";
}

bool LoopsPane::select(Document& doc, const std::string& kernel, const std::string& dims_text,
                       std::string* error) {
  if (!doc.choose_kernel(kernel, dims_text, error)) return false;
  dims_field_ = dims_text;
  have_kernel_ = true;
  why_empty_.clear();
  dirty_ = true;
  return true;
}

void LoopsPane::refresh(Document& doc) {
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
  order_stale_ = true;
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
void LoopsPane::index_loops() {
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

void LoopsPane::select_loop(const std::string& name) {
  selected_ = name;
  for (const auto& [node, info] : loops_)
    if (info.name == name) {
      reorder_field_ = join(info.nest, " ");
      selected_path_ = info.path;
    }
}

// Remembers the listings as they were, so the next refresh can mark what the step changed.
void LoopsPane::before_change() {
  prev_lines_ = view_lines_;
}

bool LoopsPane::apply(Document& doc, const std::string& step, std::string* error) {
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

bool LoopsPane::undo_redo(Document& doc, bool redo, std::string* error) {
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

bool LoopsPane::choose_kernel(Document& doc, const std::string& kernel, const std::string& dims,
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

bool LoopsPane::run_check(Document& doc, std::string* error) {
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

bool LoopsPane::Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
                    std::string* error) {
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
    if (args.size() != 1 || (args[0] != "c" && args[0] != "tir" &&
                             args[0] != "tir-original" && args[0] != "order")) {
      *error = "usage: view c|tir|tir-original|order";
      return false;
    }
    view_ = args[0];
    return true;
  }
  if (verb == "order") return order_act(doc, args, error);
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

void LoopsPane::Draw(Document& doc) {
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
  // The iteration order is a picture: give it more of the height than a listing.
  float top_h = std::max(120.f, avail_h * (view_ == "order" ? 0.4f : 0.55f));
  float nest_w = std::max(200.f, avail_w * 0.64f);
  draw_nest(ImVec2(nest_w, top_h));
  ImGui::SameLine();
  draw_trace(ImVec2(0, top_h));
  draw_view(doc);
}

void LoopsPane::draw_kernel_row(Document& doc, std::string& ignored) {
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

void LoopsPane::draw_controls(Document& doc, std::string& ignored) {
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

void LoopsPane::draw_messages() {
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

}  // namespace loops_internal

std::unique_ptr<Pane> make_loops_pane() { return std::make_unique<loops_internal::LoopsPane>(); }

}  // namespace descent::viz
