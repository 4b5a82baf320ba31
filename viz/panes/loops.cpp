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
// The "iteration order" view draws the output as a grid of cells coloured by when the
// scheduled nest first writes them (Session::kernel_iteration_order walks it), with the
// schedule's tiles outlined and a step slider: a tiled nest fills one tile at a time where
// the naive nest sweeps rows. It exports as PNG at the grid's own resolution.
// Loops are named as schedules name them: the pipeline's loop-nest tree carries each
// loop's name (TreeNode::ref, from the schedule's own naming), so the pane never guesses.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <unordered_map>

#include "lang/text.h"
#include "tensor/iteration_order.h"
#include "viz/app.h"
#include "viz/pane.h"
#include "viz/widgets.h"

namespace descent::viz {

namespace {

const char* const kKinds[] = {"serial", "parallel", "vectorized", "unrolled", "bound"};
// The thread axes schedule.h's `bind` accepts (OpenCL work-group and work-item indices).
const char* const kAxes[] = {"group.x", "group.y", "group.z", "local.x", "local.y", "local.z"};

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

// ---- The iteration-order picture: one colour per cell, shared by the pane and the PNG ----

// A ramp from the first visit (dark violet) to the last (yellow), viridis's end points and
// three between: its luminance rises all the way, so it also reads in grey.
void ramp(double t, uint8_t rgb[3]) {
  static const uint8_t stops[5][3] = {
      {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(t, 0.0, 1.0) * 4;
  int i = std::min(3, static_cast<int>(t));
  double f = t - i;
  for (int c = 0; c < 3; ++c)
    rgb[c] = static_cast<uint8_t>(std::lround(stops[i][c] + f * (stops[i + 1][c] - stops[i][c])));
}
const uint8_t kUnvisited[3] = {226, 226, 226};  // not written within the visits shown
const uint8_t kOutline[3] = {20, 20, 20};       // tile boundaries

// Each element's visit number: by its first write, or (a reduction's) by its last.
std::vector<int64_t> visit_ranks(const tensor::IterationOrder& o, bool by_last) {
  std::vector<int64_t> rank(o.first.size(), -1);
  std::vector<int64_t> order = o.order;
  if (by_last)
    std::sort(order.begin(), order.end(),
              [&](int64_t a, int64_t b) { return o.last[size_t(a)] < o.last[size_t(b)]; });
  for (size_t v = 0; v < order.size(); ++v) rank[size_t(order[v])] = int64_t(v);
  return rank;
}

// The ramp spans every visit, so a cell keeps its colour as the step slider moves on.
void cell_rgb(const std::vector<int64_t>& rank, int64_t visits, int64_t all, int64_t e,
              uint8_t rgb[3]) {
  int64_t r = rank[size_t(e)];
  if (r < 0 || r >= visits) {
    std::copy(kUnvisited, kUnvisited + 3, rgb);
    return;
  }
  ramp(all > 1 ? double(r) / double(all - 1) : 0.0, rgb);
}

// Pixels per cell in the PNG: the longer side near 512 pixels, cells 1 to 32 pixels.
int cell_pixels(const tensor::IterationOrder& o) {
  int64_t longest = std::max(o.rows, o.cols);
  return static_cast<int>(std::clamp<int64_t>(512 / std::max<int64_t>(1, longest), 1, 32));
}

// The picture at the grid's resolution, each cell `scale` pixels square; a tile's edge
// is a dark line inside the cells on either side of it.
Image order_image(const tensor::IterationOrder& o, const std::vector<int64_t>& rank,
                  int64_t visits, int scale) {
  int64_t all = static_cast<int64_t>(o.order.size());
  Image img;
  img.width = static_cast<int>(o.cols) * scale;
  img.height = static_cast<int>(o.rows) * scale;
  img.rgb.resize(size_t(img.width) * size_t(img.height) * 3);
  int line = std::max(1, scale / 8);
  auto tile = [&](int64_t r, int64_t c) {
    return r < 0 || c < 0 || r >= o.rows || c >= o.cols ? -2 : o.tile[size_t(r * o.cols + c)];
  };
  for (int64_t r = 0; r < o.rows; ++r)
    for (int64_t c = 0; c < o.cols; ++c) {
      uint8_t fill[3];
      cell_rgb(rank, visits, all, r * o.cols + c, fill);
      int64_t t = tile(r, c);
      // Edges only between two tiles, so an untiled nest has no lines at all.
      bool left = o.tiles > 1 && tile(r, c - 1) != t && c > 0;
      bool right = o.tiles > 1 && tile(r, c + 1) != t && c + 1 < o.cols;
      bool top = o.tiles > 1 && tile(r - 1, c) != t && r > 0;
      bool bottom = o.tiles > 1 && tile(r + 1, c) != t && r + 1 < o.rows;
      for (int y = 0; y < scale; ++y)
        for (int x = 0; x < scale; ++x) {
          bool edge = (left && x < line) || (right && x >= scale - line) ||
                      (top && y < line) || (bottom && y >= scale - line);
          size_t at = ((size_t(r) * scale + y) * size_t(img.width) + size_t(c) * scale + x) * 3;
          std::copy(edge ? kOutline : fill, (edge ? kOutline : fill) + 3, &img.rgb[at]);
        }
    }
  return img;
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

  // ---- The iteration-order view (view_ == "order"), walked when first shown ----
  bool order_stale_ = true;
  tensor::IterationOrder order_;
  std::string order_error_;  // why there is no picture (a nest too big to walk)
  std::vector<int64_t> rank_;  // each element's visit number, -1 if never written
  bool by_last_ = false;     // number visits by the last write (a reduction's) not the first
  int64_t shown_ = -1;       // visits shown (the step slider); -1: all of them
  bool playing_ = false;     // the slider advancing by itself
  std::string export_path_ = "iteration_order.png";
  std::string exported_;     // what the last export wrote

  const char* name() const override { return "loops"; }
  const char* title() const override { return "Loop nest"; }
  const char* short_title() const override { return "Loops"; }

  std::vector<std::string> verbs() const override {
    return {"kernel NAME [DIM=N ...]", "sched STEP...", "try STEP...", "undo", "redo",
            "select LOOP", "view c|tir|tir-original|order",
            "order [step N|all|by first|by last|export FILE.png]", "run [" + join(Session::devices(), "|") + "]"};
  }

  // ---- Keeping up with the Document ----

  // A new generation is a new Session, into which the Document moved the schedule (or
  // applied its steps to a changed kernel): say what became of it.
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
    if (k.reapplied) applied_ = "the kernel changed: the schedule's steps were applied to its new nest";
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

  // ---- The iteration order ----

  // Walks the scheduled nest once per state of it; false (with order_error_) without one.
  bool order_ready(Document& doc) {
    refresh(doc);
    if (order_stale_) {
      order_stale_ = false;
      order_error_.clear();
      order_ = tensor::IterationOrder{};
      rank_.clear();
      if (!have_kernel_)
        order_error_ = "no kernel selected: " + why_empty_;
      else if (doc.session().kernel_iteration_order(&order_, &order_error_))
        rank_ = visit_ranks(order_, by_last_);
    }
    return order_error_.empty();
  }

  int64_t visits_shown() const {
    int64_t all = static_cast<int64_t>(order_.order.size());
    return shown_ < 0 ? all : std::min(shown_, all);
  }

  bool export_order(Document& doc, const std::string& path, std::string* error) {
    if (!order_ready(doc)) {
      *error = "no iteration order to export: " + order_error_;
      return false;
    }
    Image img = order_image(order_, rank_, visits_shown(), cell_pixels(order_));
    if (!write_png(path, img, error)) return false;
    exported_ = "wrote " + path + " (" + std::to_string(img.width) + " x " +
                std::to_string(img.height) + ")";
    return true;
  }

  // `order`, `order step N`, `order all`, `order by first|last`, `order export FILE.png`.
  bool order_act(Document& doc, const std::vector<std::string>& args, std::string* error) {
    view_ = "order";
    playing_ = false;
    const std::string usage = "usage: order [step N|all|by first|by last|export FILE.png]";
    if (args.empty()) return true;
    if (args[0] == "all" && args.size() == 1) {
      shown_ = -1;
      return true;
    }
    if (args[0] == "step" && args.size() == 2) {
      char* end = nullptr;
      long long n = std::strtoll(args[1].c_str(), &end, 10);
      if (*end != '\0' || n < 0 || args[1].empty()) {
        *error = "order step takes a number of visits >= 0, not '" + args[1] + "'";
        return false;
      }
      shown_ = n;
      return true;
    }
    if (args[0] == "by" && args.size() == 2 && (args[1] == "first" || args[1] == "last")) {
      by_last_ = args[1] == "last";
      order_stale_ = true;
      return true;
    }
    if (args[0] == "export" && args.size() == 2) return export_order(doc, args[1], error);
    *error = usage;
    return false;
  }

  void draw_order(Document& doc) {
    if (!order_ready(doc)) {
      ImGui::TextWrapped("No iteration order: %s", order_error_.c_str());
      return;
    }
    const tensor::IterationOrder& o = order_;
    int64_t all = static_cast<int64_t>(o.order.size());
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("number by");
    ImGui::SameLine();
    for (bool last : {false, true}) {
      if (ImGui::RadioButton(last ? "last write" : "first write", by_last_ == last) &&
          by_last_ != last) {
        by_last_ = last;
        rank_ = visit_ranks(o, by_last_);
      }
      ImGui::SameLine();
    }
    if (ImGui::Button(playing_ ? "Pause" : "Play")) {
      if (!playing_ && visits_shown() >= all) shown_ = 0;
      playing_ = !playing_;
    }
    if (playing_) {  // about four seconds from the first visit to the last
      shown_ = std::min(all, visits_shown() + std::max<int64_t>(1, all / 240));
      if (shown_ >= all) playing_ = false;
    }
    ImGui::SameLine();
    int64_t shown = visits_shown(), zero = 0;
    ImGui::SetNextItemWidth(em(200));
    if (ImGui::SliderScalar("visits", ImGuiDataType_S64, &shown, &zero, &all)) {
      shown_ = shown;
      playing_ = false;
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("show the first N elements visited");
    ImGui::SetNextItemWidth(em(200));
    ImGui::InputText("##png", &export_path_);
    ImGui::SameLine();
    std::string ignored;
    if (ImGui::Button("Export PNG") && !export_order(doc, export_path_, &ignored))
      exported_ = ignored;
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("the picture as drawn, one square of pixels per element");
    if (!exported_.empty()) {
      ImGui::SameLine();
      ImGui::TextUnformatted(exported_.c_str());
    }
    std::string info = caption();
    if (!o.note.empty()) info += "; " + o.note;
    ImGui::PushStyleColor(ImGuiCol_Text, colors::dim());
    ImGui::TextWrapped("%s", info.c_str());
    ImGui::PopStyleColor();

    // The grid, as large as fits; cells below a pixel are drawn a block of them at a time
    // (coloured as the block's first cell), so a big output costs no more than a small one.
    ImVec2 avail = ImGui::GetContentRegionAvail();
    float bar = ImGui::GetTextLineHeightWithSpacing();
    float cell = std::min(avail.x / float(o.cols), (avail.y - bar) / float(o.rows));
    int64_t stride = cell >= 2 ? 1 : static_cast<int64_t>(std::ceil(2 / std::max(cell, 1e-3f)));
    cell = std::max(cell, 2.f / float(stride)) * float(stride);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 p0 = ImGui::GetCursorScreenPos();
    int64_t hovered = -1;
    for (int64_t r = 0; r < o.rows; r += stride)
      for (int64_t c = 0; c < o.cols; c += stride) {
        uint8_t rgb[3];
        cell_rgb(rank_, shown, all, r * o.cols + c, rgb);
        ImVec2 a(p0.x + float(c / stride) * cell, p0.y + float(r / stride) * cell);
        ImVec2 b(a.x + cell, a.y + cell);
        dl->AddRectFilled(a, b, IM_COL32(rgb[0], rgb[1], rgb[2], 255));
        if (ImGui::IsMouseHoveringRect(a, b)) hovered = r * o.cols + c;
      }
    if (o.tiles > 1 && stride == 1)  // tile edges: between two cells of different tiles
      for (int64_t r = 0; r < o.rows; ++r)
        for (int64_t c = 0; c < o.cols; ++c) {
          int64_t t = o.tile[size_t(r * o.cols + c)];
          float x = p0.x + float(c) * cell, y = p0.y + float(r) * cell;
          ImU32 ink = IM_COL32(kOutline[0], kOutline[1], kOutline[2], 255);
          if (c + 1 < o.cols && o.tile[size_t(r * o.cols + c + 1)] != t)
            dl->AddLine(ImVec2(x + cell, y), ImVec2(x + cell, y + cell), ink, 2);
          if (r + 1 < o.rows && o.tile[size_t((r + 1) * o.cols + c)] != t)
            dl->AddLine(ImVec2(x, y + cell), ImVec2(x + cell, y + cell), ink, 2);
        }
    float h = float((o.rows + stride - 1) / stride) * cell;
    ImGui::Dummy(ImVec2(float((o.cols + stride - 1) / stride) * cell, h));
    if (hovered >= 0) {
      size_t e = size_t(hovered);
      ImGui::SetTooltip("%s[%lld, %lld]: visit %lld, first written at step %lld, last at %lld%s",
                        o.buffer.c_str(), (long long)(hovered / o.cols),
                        (long long)(hovered % o.cols), (long long)rank_[e],
                        (long long)o.first[e], (long long)o.last[e],
                        o.tiles > 1 ? (", tile " + std::to_string(o.tile[e])).c_str() : "");
    }
    // The ramp's legend.
    ImGui::TextDisabled("first");
    ImGui::SameLine();
    ImVec2 q = ImGui::GetCursorScreenPos();
    float w = em(160), lh = ImGui::GetTextLineHeight();
    for (int i = 0; i < 32; ++i) {
      uint8_t rgb[3];
      ramp(i / 31.0, rgb);
      dl->AddRectFilled(ImVec2(q.x + w * float(i) / 32, q.y),
                        ImVec2(q.x + w * float(i + 1) / 32, q.y + lh),
                        IM_COL32(rgb[0], rgb[1], rgb[2], 255));
    }
    ImGui::Dummy(ImVec2(w, lh));
    ImGui::SameLine();
    ImGui::TextDisabled("last visit   (grey: not yet)");
  }

  // The order view's summary: "C 64 x 64: 4096 elements, 266240 writes, 64 tiles (i_0 j_0)".
  std::string caption() const override {
    if (view_ != "order" || !order_error_.empty() || order_stale_) return "";
    const tensor::IterationOrder& o = order_;
    std::string s = o.buffer + " " + std::to_string(o.rows) + " x " + std::to_string(o.cols) +
                    ": " + std::to_string(visits_shown()) + " of " +
                    std::to_string(o.order.size()) + " elements visited, " +
                    std::to_string(o.writes) + " writes in all, ";
    if (o.tiles > 1)
      s += std::to_string(o.tiles) + " tiles (one per " + join(o.tile_loops, ", ") + ")";
    else
      s += "no tiles";
    return s;
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
    // The iteration order is a picture: give it more of the height than a listing.
    float top_h = std::max(120.f, avail_h * (view_ == "order" ? 0.4f : 0.55f));
    float nest_w = std::max(200.f, avail_w * 0.64f);
    draw_nest(ImVec2(nest_w, top_h));
    ImGui::SameLine();
    draw_trace(ImVec2(0, top_h));
    draw_view(doc);
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
      for (auto& w : split_words(t.substr(4, in - 4)))
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

  void draw_view(Document& doc) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("Show");
    for (auto [key, label] : {std::pair{"c", "C"}, std::pair{"tir", "TVMScript"},
                              std::pair{"tir-original", "as lowered"},
                              std::pair{"order", "iteration order"}}) {
      ImGui::SameLine();
      if (ImGui::RadioButton(label, view_ == key)) view_ = key;
    }
    if (view_ == "order") {
      draw_order(doc);
      return;
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
