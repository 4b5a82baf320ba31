// The benchmarks pane: the classroom suite (`descent bench`) run from the window, with its
// results as a table and as a grouped bar chart like the one `descent bench --plot` writes.
//
// A run takes seconds (quick) to minutes (full), so it happens on a thread the pane owns:
// the button only starts it, progress lines come back through BenchOptions::progress under
// a mutex, and Stop sets BenchOptions::interrupt. The suite builds its own Sessions, so the
// pane does not touch the Document's: the benchmarks do not depend on the program shown.
#include <fmt/format.h>
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench.h"
#include "viz/pane.h"
#include "viz/widgets.h"

namespace descent::viz {

namespace {

using bench::BenchOptions;
using bench::BenchRecord;

// Column colours, the same as bench/plot.cpp's so the window and the PNG for the slides
// agree: each family in one hue, naive light and scheduled dark; the libraries in green.
ImU32 engine_colour(const std::string& e, size_t index) {
  static const std::map<std::string, ImU32> known = {
      {"ref", IM_COL32(150, 150, 150, 255)},          {"cpu-naive", IM_COL32(140, 180, 230, 255)},
      {"cpu-sched", IM_COL32(30, 90, 180, 255)},      {"opencl-naive", IM_COL32(250, 180, 110, 255)},
      {"cpu-default", IM_COL32(90, 140, 210, 255)},   {"opencl-default", IM_COL32(240, 150, 70, 255)},
      {"opencl-sched", IM_COL32(220, 100, 20, 255)},  {"opencl-hand", IM_COL32(160, 60, 10, 255)},
      {"openblas", IM_COL32(50, 160, 80, 255)},       {"cpp", IM_COL32(120, 190, 90, 255)},
      {"ast", IM_COL32(150, 150, 150, 255)},          {"stack", IM_COL32(140, 180, 230, 255)},
      {"reg", IM_COL32(30, 90, 180, 255)},            {"jit", IM_COL32(220, 100, 20, 255)},
      {"lua5.4", IM_COL32(120, 80, 170, 255)},        {"python3", IM_COL32(200, 170, 40, 255)},
      {"clang-O2", IM_COL32(50, 160, 80, 255)}};
  auto it = known.find(e);
  if (it != known.end()) return it->second;
  static const ImU32 extra[] = {IM_COL32(200, 60, 90, 255), IM_COL32(90, 60, 200, 255),
                                IM_COL32(60, 170, 170, 255), IM_COL32(170, 120, 60, 255)};
  return extra[index % 4];
}

std::string seconds_text(double s) {
  if (!std::isfinite(s)) return "-";
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.2f} s", s);
}
std::string number_text(double v, const char* format = "{:.2f}") {
  return std::isfinite(v) ? fmt::format(fmt::runtime(format), v) : "-";
}
// A gridline's label: 1 us, 10 us, ... for times; 0.1, 1, 10, ... for rates.
std::string decade_text(int e, bool time) {
  if (time) {
    static const char* units[] = {"ns", "us", "ms", "s"};
    int u = static_cast<int>(std::floor((e + 9) / 3.0));
    if (u < 0 || u > 3) return fmt::format("1e{} s", e);
    int mult = e + 9 - 3 * u;
    return fmt::format("{} {}", mult == 0 ? 1 : mult == 1 ? 10 : 100, units[u]);
  }
  if (e >= 0 && e <= 6) return fmt::format("{}", static_cast<int64_t>(std::llround(std::pow(10.0, e))));
  if (e < 0 && e >= -4) return fmt::format("{:.{}f}", std::pow(10.0, e), -e);
  return fmt::format("1e{}", e);
}

// "[=====>   ]  7/40 ..." (tensor: 7 cells done) or "[ 7/28] ..." (vm: cell 7 starting, or
// done when the line gives its result): the fraction done, or -1 for other lines.
float progress_of(const std::string& line) {
  if (line.empty() || line[0] != '[') return -1;
  size_t slash = line.find('/');
  if (slash == std::string::npos || slash == 0) return -1;
  size_t a = slash;
  while (a > 0 && std::isdigit(static_cast<unsigned char>(line[a - 1]))) --a;
  size_t b = slash + 1;
  while (b < line.size() && std::isdigit(static_cast<unsigned char>(line[b]))) ++b;
  if (a == slash || b == slash + 1 || b - a > 12) return -1;
  double done = std::stod(line.substr(a, slash - a));
  double total = std::stod(line.substr(slash + 1, b - slash - 1));
  if (total <= 0) return -1;
  bool inside = slash < line.find(']');  // the vm form: the number of the cell in hand
  if (inside && line.size() >= 3 && line.compare(line.size() - 3, 3, "...") == 0) done -= 1;
  return static_cast<float>(std::clamp(done / total, 0.0, 1.0));
}

// One run in flight, shared between the pane and its worker thread.
struct Job {
  BenchOptions options;
  std::atomic<bool> interrupt{false};
  std::atomic<bool> done{false};
  std::mutex mu;  // guards what follows
  std::vector<std::string> log;
  float fraction = 0;
  std::vector<BenchRecord> records;
  std::string error;
};

struct Choice {
  std::string name;
  bool on = true;
};

struct BenchPane : Pane {
  const char* name() const override { return "bench"; }
  const char* title() const override { return "Benchmarks"; }
  const char* short_title() const override { return "Bench"; }

  // ---- Controls ----
  int suite = 0;  // 0: tensor, 1: vm
  bool quick = true;  // the classroom window: seconds; full scale takes minutes
  int repeats = 3;
  std::string threads = "1 2";
  std::vector<Choice> workloads[2], engines[2];
  bool time_metric = false;  // the chart: GFLOP/s (tensor) or median time

  // ---- The run ----
  std::shared_ptr<Job> job;
  std::thread worker;
  std::vector<std::string> log;  // the last run's progress lines (a copy, for drawing)
  float fraction = 0;

  // ---- The results of the last finished run ----
  std::vector<BenchRecord> records;
  std::string error;
  std::string described;  // what was run: "tensor, quick, 3 repeats"

  BenchPane() {
    for (const auto& w : bench::tensor_workloads()) workloads[0].push_back({w, true});
    for (const auto& e : bench::tensor_engines()) engines[0].push_back({e, true});
    for (const auto& w : bench::workloads())
      if (w.suite == "vm") workloads[1].push_back({w.name, true});
    for (const auto& e : Session::engines()) engines[1].push_back({e, true});
    for (const auto& b : bench::default_baselines()) engines[1].push_back({b.name, true});
  }
  ~BenchPane() override {
    if (job) job->interrupt = true;
    if (worker.joinable()) worker.join();
  }

  bool running() const { return worker.joinable(); }
  const char* suite_name() const { return suite == 0 ? "tensor" : "vm"; }

  static std::vector<std::string> selected(const std::vector<Choice>& v, bool* all) {
    std::vector<std::string> out;
    for (const auto& c : v)
      if (c.on) out.push_back(c.name);
    *all = out.size() == v.size();
    return out;
  }

  bool start(std::string* err) {
    if (running()) {
      *err = "a benchmark run is in progress (bench stop ends it)";
      return false;
    }
    auto j = std::make_shared<Job>();
    BenchOptions& o = j->options;
    o.suite = suite_name();
    o.quick = quick;
    o.repeats = repeats;
    o.cell_budget_s = 3.0;  // as `descent bench` does by default: a slow cell runs fewer times
    bool all = false;
    o.workloads = selected(workloads[suite], &all);
    if (o.workloads.empty()) {
      *err = "no workload chosen";
      return false;
    }
    if (all) o.workloads.clear();
    o.engines = selected(engines[suite], &all);
    if (o.engines.empty()) {
      *err = "no engine chosen";
      return false;
    }
    if (all) o.engines.clear();
    if (suite == 0) {
      std::vector<int> t;
      std::istringstream in(threads);
      std::string word;
      while (in >> word) {
        bool digits = word.size() < 5 &&
                      std::all_of(word.begin(), word.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
        int n = digits ? std::stoi(word) : 0;
        if (n < 1 || n > 256) {
          *err = "threads: '" + word + "' is not a thread count (1..256)";
          return false;
        }
        t.push_back(n);
      }
      if (t.empty()) {
        *err = "threads: give one or more thread counts, e.g. 1 2";
        return false;
      }
      o.threads = t;
    }
    if (repeats < 1 || repeats > 1000) {
      *err = "repeats must be 1..1000";
      return false;
    }
    Job* raw = j.get();
    o.interrupt = &raw->interrupt;
    o.progress = [raw](std::string_view line) {
      std::lock_guard<std::mutex> lock(raw->mu);
      raw->log.emplace_back(line);
      float f = progress_of(raw->log.back());
      if (f >= 0) raw->fraction = f;
    };
    described = fmt::format("{} suite, {} scale, {} repeat{}", o.suite, quick ? "quick" : "full",
                            repeats, repeats == 1 ? "" : "s");
    log.clear();
    fraction = 0;
    job = j;
    // The worker holds its own reference: the pane may drop `job` (a new run) first.
    worker = std::thread([j] {
      std::string e;
      auto r = bench::run_benchmarks(j->options, &e);
      {
        std::lock_guard<std::mutex> lock(j->mu);
        j->records = std::move(r);
        j->error = std::move(e);
      }
      j->done = true;
    });
    return true;
  }

  // Copies the worker's progress, and takes its results when it has finished.
  void poll(bool wait) {
    if (!job) return;
    if (wait && worker.joinable()) worker.join();
    {
      std::lock_guard<std::mutex> lock(job->mu);
      if (job->log.size() != log.size()) log = job->log;
      fraction = job->fraction;
    }
    if (!job->done) return;
    if (worker.joinable()) worker.join();
    std::lock_guard<std::mutex> lock(job->mu);
    log = job->log;
    records = std::move(job->records);
    error = std::move(job->error);
    job.reset();
  }

  void stop() {
    if (job) job->interrupt = true;
  }

  // ---- Drawing ----
  void checkboxes(const char* label, std::vector<Choice>& v) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(label);
    float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    ImGui::SameLine(ImGui::CalcTextSize("Workloads").x + ImGui::GetStyle().ItemSpacing.x * 2);
    float indent = ImGui::GetCursorPosX();  // wrapped rows line up under the first box
    ImGui::PushID(label);
    for (size_t i = 0; i < v.size(); ++i) {
      ImGui::PushID(static_cast<int>(i));
      float w = ImGui::CalcTextSize(v[i].name.c_str()).x + ImGui::GetFrameHeight() +
                ImGui::GetStyle().ItemInnerSpacing.x;
      if (i > 0) {
        ImGui::SameLine();
        if (ImGui::GetCursorScreenPos().x + w > right) {
          ImGui::NewLine();
          ImGui::SetCursorPosX(indent);
        }
      }
      ImGui::Checkbox(v[i].name.c_str(), &v[i].on);
      ImGui::PopID();
    }
    ImGui::PopID();
  }

  void draw_controls() {
    ImGui::BeginDisabled(running());
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Suite");
    ImGui::SameLine();
    ImGui::RadioButton("tensor", &suite, 0);
    ImGui::SameLine();
    ImGui::RadioButton("vm", &suite, 1);
    ImGui::SameLine(0, 24);
    if (ImGui::RadioButton("quick", quick)) quick = true;
    ImGui::SameLine();
    if (ImGui::RadioButton("full", !quick)) quick = false;
    ImGui::SameLine(0, 24);
    ImGui::SetNextItemWidth(ImGui::CalcTextSize("0000").x + ImGui::GetFrameHeight() * 2 + 8);
    ImGui::InputInt("repeats", &repeats);
    repeats = std::clamp(repeats, 1, 1000);
    if (suite == 0) {
      ImGui::SameLine(0, 24);
      ImGui::SetNextItemWidth(ImGui::CalcTextSize("1 2 4 8").x + 12);
      ImGui::InputText("threads", &threads);
    }
    checkboxes("Workloads", workloads[suite]);
    checkboxes("Columns", engines[suite]);
    ImGui::EndDisabled();

    if (!running()) {
      if (ImGui::Button("Run")) {
        std::string err;
        if (!start(&err)) error = err;
      }
    } else if (ImGui::Button("Stop")) {
      stop();
    }
    ImGui::SameLine();
    if (running()) {
      std::string overlay = log.empty() ? "starting..." : log.back();
      ImGui::ProgressBar(fraction, ImVec2(-1, 0), overlay.c_str());
    } else if (!error.empty()) {
      ImGui::PushStyleColor(ImGuiCol_Text, colors::error());
      ImGui::TextWrapped("%s", error.c_str());
      ImGui::PopStyleColor();
    } else if (!records.empty()) {
      size_t failed = 0, skipped = 0;
      for (const auto& r : records) r.skipped ? ++skipped : failed += !r.checksum_ok;
      ImGui::Text("%s: %zu cells, %zu failed, %zu skipped", described.c_str(), records.size(),
                  failed, skipped);
    } else {
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::dim()),
                         "Run times every chosen workload on every chosen column.");
    }
  }

  // The bars: per (workload, engine) the record that ran, passed its check and has the
  // metric, at its highest thread count (what bench/plot.cpp draws).
  struct Bars {
    std::vector<std::string> workloads, engines;
    std::map<std::pair<std::string, std::string>, const BenchRecord*> bar;
    double lo = INFINITY, hi = 0;
  };
  // The vm suite measures time only: its chart shows time whatever was chosen.
  bool has_rates() const {
    return std::any_of(records.begin(), records.end(),
                       [](const BenchRecord& r) { return std::isfinite(r.gflops); });
  }
  bool showing_time() const { return time_metric || !has_rates(); }

  Bars bars() const {
    const bool time_metric = showing_time();
    Bars b;
    for (const auto& r : records) {
      double v = time_metric ? r.median_s : r.gflops;
      if (!r.checksum_ok || r.skipped || r.runs == 0 || !std::isfinite(v) || v <= 0) continue;
      auto key = std::make_pair(r.workload, r.engine);
      auto it = b.bar.find(key);
      if (it != b.bar.end() && it->second->threads >= r.threads) continue;
      b.bar[key] = &r;
      if (std::find(b.workloads.begin(), b.workloads.end(), r.workload) == b.workloads.end())
        b.workloads.push_back(r.workload);
      if (std::find(b.engines.begin(), b.engines.end(), r.engine) == b.engines.end())
        b.engines.push_back(r.engine);
    }
    // Columns in the suite's own order (tensor_engines(): ref, naive, scheduled, libraries),
    // as the PNG chart orders them, not in the order the cells happened to finish.
    auto rank = [&](const std::string& e) {
      for (int s = 0; s < 2; ++s)
        for (size_t i = 0; i < engines[s].size(); ++i)
          if (engines[s][i].name == e) return static_cast<int>(i);
      return 1000;
    };
    std::stable_sort(b.engines.begin(), b.engines.end(),
                     [&](const std::string& x, const std::string& y) { return rank(x) < rank(y); });
    for (const auto& [key, r] : b.bar) {
      double v = time_metric ? r->median_s : r->gflops;
      b.lo = std::min(b.lo, v);
      b.hi = std::max(b.hi, v);
    }
    return b;
  }

  void draw_chart(ImVec2 size) {
    const bool time_metric = showing_time();
    ImGui::BeginChild("chart", size, true);
    Bars b = bars();
    if (b.bar.empty()) {
      ImGui::TextWrapped(time_metric ? "not available: no record ran and passed its check"
                                     : "not available: no record that passed its check has a "
                                       "GFLOP/s figure (the vm suite has none: show time)");
      ImGui::EndChild();
      return;
    }
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImVec2 avail = ImGui::GetContentRegionAvail();
    float lh = ImGui::GetTextLineHeight();
    ImU32 text = colors::text(), dim = colors::dim();

    // Legend, wrapped to the width.
    float x = p0.x, y = p0.y;
    for (size_t i = 0; i < b.engines.size(); ++i) {
      float w = lh + 6 + ImGui::CalcTextSize(b.engines[i].c_str()).x + 16;
      if (x + w > p0.x + avail.x && x > p0.x) x = p0.x, y += lh + 4;
      dl->AddRectFilled(ImVec2(x, y + 2), ImVec2(x + lh - 4, y + lh - 2), engine_colour(b.engines[i], i));
      dl->AddText(ImVec2(x + lh + 2, y), text, b.engines[i].c_str());
      x += w;
    }
    const char* axis = time_metric ? "median time per run (log scale, lower is better)"
                                   : "GFLOP/s (log scale, higher is better)";
    y += lh + 6;
    dl->AddText(ImVec2(p0.x, y), dim, axis);
    y += lh * 2 + 6;  // and room for the tallest bar's value

    // Plot area: decades on the left, workload names below.
    float left = p0.x + ImGui::CalcTextSize("100 ms").x + 10;
    float top = y + 4, bottom = p0.y + avail.y - lh - 8, right = p0.x + avail.x - 4;
    if (bottom - top < 40 || right - left < 60) {
      ImGui::TextUnformatted("(too small to draw the chart)");
      ImGui::EndChild();
      return;
    }
    // Whole decades beyond the extremes, as the PNG chart: the smallest bar is never empty.
    int dlo = static_cast<int>(std::ceil(std::log10(b.lo))) - 1;
    int dhi = static_cast<int>(std::floor(std::log10(b.hi))) + 1;
    auto ypos = [&](double v) {
      return bottom - static_cast<float>((std::log10(v) - dlo) / (dhi - dlo)) * (bottom - top);
    };
    for (int e = dlo; e <= dhi; ++e) {
      float gy = ypos(std::pow(10.0, e));
      dl->AddLine(ImVec2(left, gy), ImVec2(right, gy), IM_COL32(0, 0, 0, 30));
      std::string t = decade_text(e, time_metric);
      dl->AddText(ImVec2(left - 6 - ImGui::CalcTextSize(t.c_str()).x, gy - lh / 2), dim, t.c_str());
    }
    dl->AddLine(ImVec2(left, top), ImVec2(left, bottom), IM_COL32(0, 0, 0, 120));
    dl->AddLine(ImVec2(left, bottom), ImVec2(right, bottom), IM_COL32(0, 0, 0, 120));

    float group_w = (right - left) / b.workloads.size();
    float bar_w = group_w * 0.8f / b.engines.size();
    const BenchRecord* hovered = nullptr;
    ImVec2 mouse = ImGui::GetMousePos();
    bool in_window = ImGui::IsWindowHovered();
    for (size_t wi = 0; wi < b.workloads.size(); ++wi) {
      float gx = left + wi * group_w + group_w * 0.1f;
      for (size_t ei = 0; ei < b.engines.size(); ++ei) {
        auto it = b.bar.find({b.workloads[wi], b.engines[ei]});
        if (it == b.bar.end()) continue;
        const BenchRecord& r = *it->second;
        double v = time_metric ? r.median_s : r.gflops;
        ImVec2 a(gx + ei * bar_w + 1, ypos(v)), c(gx + (ei + 1) * bar_w - 1, bottom);
        bool hover = in_window && mouse.x >= a.x && mouse.x < c.x && mouse.y >= top && mouse.y < c.y;
        if (hover) hovered = &r;
        dl->AddRectFilled(a, c, engine_colour(b.engines[ei], ei));
        if (hover) dl->AddRect(a, c, IM_COL32(0, 0, 0, 255), 0, 0, 2);
        std::string label = time_metric ? seconds_text(v) : number_text(v, v >= 100 ? "{:.0f}" : v >= 10 ? "{:.1f}" : "{:.2g}");
        float tw = ImGui::CalcTextSize(label.c_str()).x;
        if (tw <= bar_w + 2)
          dl->AddText(ImVec2((a.x + c.x - tw) / 2, a.y - lh - 1), text, label.c_str());
      }
      // The workload's name under its group (cut to the group's width).
      std::string name = b.workloads[wi];
      while (name.size() > 3 && ImGui::CalcTextSize(name.c_str()).x > group_w - 4) name.pop_back();
      float tw = ImGui::CalcTextSize(name.c_str()).x;
      dl->AddText(ImVec2(left + wi * group_w + (group_w - tw) / 2, bottom + 4), text, name.c_str());
    }
    if (hovered) {
      const BenchRecord& r = *hovered;
      ImGui::BeginTooltip();
      ImGui::Text("%s on %s%s", r.workload.c_str(), r.engine.c_str(),
                  r.threads > 0 ? fmt::format(", {} thread{}", r.threads, r.threads == 1 ? "" : "s").c_str() : "");
      ImGui::Text("median %s (%d run%s)", seconds_text(r.median_s).c_str(), r.runs, r.runs == 1 ? "" : "s");
      if (std::isfinite(r.gflops))
        ImGui::Text("%s GFLOP/s, %s GB/s, %s of the roofline", number_text(r.gflops).c_str(),
                    number_text(r.gbs, "{:.1f}").c_str(),
                    std::isfinite(r.roof_fraction) ? fmt::format("{:.0f}%", r.roof_fraction * 100).c_str() : "-");
      if (std::isfinite(r.ratio_vs_baseline))
        ImGui::Text("%.2fx the time of %s", r.ratio_vs_baseline, r.baseline.empty() ? "the baseline" : r.baseline.c_str());
      ImGui::EndTooltip();
    }
    ImGui::Dummy(avail);
    ImGui::EndChild();
  }

  void draw_table(ImVec2 size) {
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("records", 9, flags, size)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"workload", "engine", "thr", "median", "GFLOP/s", "GB/s", "% roof",
                          "x base", "check"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(records.size()));
    while (clipper.Step())
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        const BenchRecord& r = records[i];
        ImGui::TableNextRow();
        auto cell = [](const std::string& s) {
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(s.c_str());
        };
        cell(r.workload);
        cell(r.engine);
        cell(r.threads > 0 ? std::to_string(r.threads) : "-");
        cell(r.skipped ? "-" : seconds_text(r.median_s));
        cell(number_text(r.gflops));
        cell(number_text(r.gbs, "{:.1f}"));
        cell(std::isfinite(r.roof_fraction) ? fmt::format("{:.0f}%", r.roof_fraction * 100) : "-");
        cell(number_text(r.ratio_vs_baseline, "{:.3g}"));
        ImGui::TableNextColumn();
        if (r.skipped) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::dim()), "skipped");
        else if (r.checksum_ok) ImGui::TextUnformatted("ok");
        else ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::error()), "FAILED");
        if (!r.note.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.note.c_str());
      }
    ImGui::EndTable();
  }

  void Draw(Document& doc) override {
    (void)doc;
    poll(false);
    draw_controls();
    ImGui::Separator();
    ImVec2 avail = ImGui::GetContentRegionAvail();
    if (running() || (records.empty() && !log.empty())) {
      // While it runs, the log is the picture (and what was said when nothing came back).
      ListingStyle st;
      if (running()) st.scroll_to = static_cast<int>(log.size()) - 1;
      if (log.empty()) ImGui::TextDisabled("starting: the suite first measures this machine");
      else Listing("log", log, st);
      return;
    }
    if (records.empty()) {
      ImGui::TextWrapped(
          "No results yet. Choose workloads and columns, then Run. Quick scale takes seconds, "
          "full scale minutes. Where a column cannot run here (no OpenCL device, no shipped "
          "schedule) its cells are skipped, not failed.");
      return;
    }
    ImGui::TextUnformatted("Chart:");
    ImGui::SameLine();
    ImGui::BeginDisabled(!has_rates());
    if (ImGui::RadioButton("GFLOP/s", !showing_time())) time_metric = false;
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::RadioButton("time", showing_time())) time_metric = true;
    ImGui::SameLine(0, 24);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::dim()),
                       "bars: the highest thread count that passed");
    avail = ImGui::GetContentRegionAvail();
    float chart_h = std::max(200.f, avail.y * 0.58f);
    draw_chart(ImVec2(0, chart_h));
    draw_table(ImVec2(0, 0));
  }

  // ---- Scripted actions ----
  bool Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
           std::string* err) override {
    poll(false);
    if (verb == "run" || verb == "start") {
      size_t k = 0;
      if (k < args.size() && (args[k] == "quick" || args[k] == "full")) quick = args[k++] == "quick";
      if (k < args.size()) {
        std::vector<std::string> names(args.begin() + k, args.end());
        auto known = [&](int s, const std::string& n) {
          for (const auto& c : workloads[s])
            if (c.name == n) return true;
          return false;
        };
        int s = known(0, names[0]) ? 0 : known(1, names[0]) ? 1 : -1;
        for (const auto& n : names)
          if (s < 0 || !known(s, n)) {
            std::string list;
            for (int t = 0; t < 2; ++t)
              for (const auto& c : workloads[t]) list += (list.empty() ? "" : ", ") + c.name;
            *err = "no workload '" + n + "'" + (s >= 0 ? std::string(" in the ") + (s == 0 ? "tensor" : "vm") + " suite" : "") + " (workloads: " + list + ")";
            return false;
          }
        suite = s;
        for (auto& c : workloads[s]) c.on = std::find(names.begin(), names.end(), c.name) != names.end();
      }
      if (!start(err)) return false;
      if (verb == "start") return true;  // what the Run button does: the frames go on
      poll(true);  // synchronous: a script draws the chart next
      if (records.empty() && !error.empty()) {
        *err = error;
        return false;
      }
      return true;
    }
    if (verb == "stop") {
      if (!running()) {
        *err = "no benchmark run in progress";
        return false;
      }
      stop();
      poll(true);
      return true;
    }
    if (verb == "metric") {
      if (args.size() != 1 || (args[0] != "time" && args[0] != "gflops")) {
        *err = "usage: metric time|gflops";
        return false;
      }
      time_metric = args[0] == "time";
      return true;
    }
    if (running() && (verb == "suite" || verb == "columns" || verb == "threads" || verb == "repeats")) {
      *err = "a benchmark run is in progress";
      return false;
    }
    if (verb == "suite") {
      if (args.size() != 1 || (args[0] != "tensor" && args[0] != "vm")) {
        *err = "usage: suite tensor|vm";
        return false;
      }
      suite = args[0] == "tensor" ? 0 : 1;
      return true;
    }
    if (verb == "columns") {
      if (args.empty()) {
        *err = "usage: columns all|NAME...";
        return false;
      }
      bool all = args.size() == 1 && args[0] == "all";
      for (const auto& n : args) {
        bool found = all;
        for (const auto& c : engines[suite]) found |= c.name == n;
        if (!found) {
          std::string list;
          for (const auto& c : engines[suite]) list += (list.empty() ? "" : ", ") + c.name;
          *err = "no column '" + n + "' in the " + suite_name() + " suite (columns: " + list + ")";
          return false;
        }
      }
      for (auto& c : engines[suite]) c.on = all || std::find(args.begin(), args.end(), c.name) != args.end();
      return true;
    }
    if (verb == "threads" || verb == "repeats") {
      if (args.empty() || (verb == "repeats" && args.size() != 1)) {
        *err = verb == "threads" ? "usage: threads N..." : "usage: repeats N";
        return false;
      }
      for (const auto& a : args) {
        bool digits = !a.empty() && a.size() < 5 && std::all_of(a.begin(), a.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
        int n = digits ? std::stoi(a) : 0;
        if (n < 1 || n > (verb == "threads" ? 256 : 1000)) {
          *err = std::string(verb) + ": '" + a + "' is out of range";
          return false;
        }
      }
      if (verb == "repeats") {
        repeats = std::stoi(args[0]);
      } else {
        threads.clear();
        for (const auto& a : args) threads += (threads.empty() ? "" : " ") + a;
      }
      return true;
    }
    return Pane::Act(doc, verb, args, err);
  }
  std::vector<std::string> verbs() const override {
    return {"run [quick|full] [WORKLOAD...]", "start [quick|full] [WORKLOAD...]", "stop", "metric time|gflops", "suite tensor|vm",
            "columns all|NAME...", "threads N...", "repeats N"};
  }
};

}  // namespace

std::unique_ptr<Pane> make_bench_pane() { return std::make_unique<BenchPane>(); }

}  // namespace descent::viz
