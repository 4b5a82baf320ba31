// The tuner pane (issue 17, docs/tuning.md): the kernel under the microscope (the loop-nest
// pane's) tuned on a device, with every candidate in a table (its time, the cost model's
// score where the model ranked it, or why it failed), the two charts of `descent tune --plot`
// updating live as candidates are measured (best so far against trials; the model's score
// against the measured time), and the three times that matter side by side: the nest as
// lowered, the default schedule, the best found. Click a candidate (or `show N`) to read its
// loop nest; Apply puts the best schedule under the microscope as steps.
//
// A tuning job takes seconds to minutes, so the button runs it on a thread the pane owns,
// in a Session of its own (the program's text compiled again): the Document's Session stays
// the GUI's. Stop sets that Session's interrupt flag; what was measured is kept. The
// scripted form (`--do "tune run trials=8"`, the tests) runs in the calling thread.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "lang/text.h"
#include "viz/pane.h"
#include "viz/widgets.h"

namespace descent::viz {

namespace {

std::string ms(double s) { return s > 0 ? fmt::format("{:.4g} ms", s * 1e3) : std::string("-"); }

struct TunePane : Pane {
  const char* name() const override { return "tune"; }
  const char* title() const override { return "Tuner"; }
  std::vector<std::string> verbs() const override {
    return {"run [trials=N] [strategy=S] [device=D]", "show N", "apply"};
  }
  // The candidate whose loop nest is shown (its trial, 0-based; -1: none), and that nest.
  int shown_ = -1;
  std::string shown_nest_;

  // The job's settings (the controls).
  int trials_ = 16;
  int strategy_ = 3;  // index into tune::strategies(): evolutionary
  int device_ = 0;    // index into the devices that are not the reference interpreter

  // The running or finished job, shared with its thread.
  struct Job {
    std::mutex mu;
    std::vector<std::string> lines;  // progress, as `descent tune` prints it
    std::vector<tune::Candidate> live;  // every candidate so far (the charts while it runs)
    bool done = false;
    Session::TuneReport report;
    Session::TuneRequest request;
    std::unique_ptr<Session> session;
  };
  std::shared_ptr<Job> job_;
  std::thread thread_;
  std::string message_, caption_;

  ~TunePane() override {
    if (job_ && job_->session) job_->session->interrupt_flag() = true;
    if (thread_.joinable()) thread_.join();
  }

  static std::vector<std::string> devices() {
    std::vector<std::string> out;
    for (const auto& d : Session::devices())
      if (d != "ref") out.push_back(d);
    return out;
  }

  bool running() const {
    if (!job_) return false;
    std::lock_guard<std::mutex> lock(job_->mu);
    return !job_->done;
  }

  // A job for the Document's selected kernel; false with *error when there is none.
  bool prepare(Document& doc, std::shared_ptr<Job>* out, std::string* error) {
    Session& s = doc.session();
    if (s.selected_kernel().empty()) {
      *error = "no kernel selected: choose one in the loop-nest pane (or `loops kernel NAME`)";
      return false;
    }
    auto job = std::make_shared<Job>();
    job->request.kernel = s.selected_kernel();
    job->request.dims = s.selected_kernel_dims();
    job->request.trials = trials_;
    const auto strategies = tune::strategies();
    job->request.strategy = strategies[size_t(std::clamp(strategy_, 0, int(strategies.size()) - 1))];
    const auto devs = devices();
    job->request.device = devs.empty() ? "cpu" : devs[size_t(std::clamp(device_, 0, int(devs.size()) - 1))];
    job->request.repeats = 3;
    job->session = std::make_unique<Session>();
    Outcome o = job->session->compile(doc.text(), doc.path().empty() ? "<editor>" : doc.path());
    if (o.status != Outcome::Ok) {
      *error = "the program does not compile: " + o.message;
      return false;
    }
    *out = job;
    return true;
  }

  static void work(const std::shared_ptr<Job>& job) {
    Session::TuneReport r = job->session->tune(
        job->request,
        [job](const std::string& line) {
          std::lock_guard<std::mutex> lock(job->mu);
          job->lines.push_back(line);
        },
        [job](const tune::Candidate& c) {
          std::lock_guard<std::mutex> lock(job->mu);
          job->live.push_back(c);
        });
    std::lock_guard<std::mutex> lock(job->mu);
    job->report = std::move(r);
    job->done = true;
  }

  bool start(Document& doc, bool wait, std::string* error) {
    if (running()) {
      *error = "a tuning job is running (Stop it first)";
      return false;
    }
    if (thread_.joinable()) thread_.join();
    std::shared_ptr<Job> job;
    if (!prepare(doc, &job, error)) return false;
    job_ = job;
    message_.clear();
    shown_ = -1;
    shown_nest_.clear();
    if (wait) work(job);
    else thread_ = std::thread([job] { work(job); });
    return true;
  }

  // A finished job's candidate `k`: its loop nest, as the loop-nest pane's "tir" view prints
  // it (the job's Session lowers the kernel and replays the candidate's trace).
  bool show(size_t k, std::string* error) {
    const tune::Candidate& c = job_->report.tasks[0].result.candidates[k];
    if (!c.ok && c.trace.empty()) {
      shown_ = int(k);
      shown_nest_ = "candidate " + std::to_string(k + 1) + " failed: " + c.error;
      return true;
    }
    std::string text;
    if (!job_->session->kernel_script(job_->request.kernel, job_->request.dims, c.trace, &text, error))
      return false;
    shown_ = int(k);
    shown_nest_ = fmt::format("candidate {} ({}):\n{}", k + 1, c.ok ? ms(c.seconds) : "failed: " + c.error, text);
    return true;
  }

  // A chart's frame with its axes: the title above, the y range's ends at the left, the x
  // range's ends and the x title below. Returns the inner rectangle to plot in.
  struct Plot {
    ImVec2 lo, hi;  // inner rectangle, screen coordinates
  };
  static Plot axes(ImDrawList* dl, ImVec2 p0, float w, float h, const std::string& title,
                   const std::string& x_title, const std::string& x_lo, const std::string& x_hi,
                   const std::string& y_lo, const std::string& y_hi) {
    const ImU32 frame = IM_COL32(150, 150, 150, 255), ink = IM_COL32(70, 70, 70, 255);
    const float line = ImGui::GetTextLineHeight();
    const float left = std::max(ImGui::CalcTextSize(y_lo.c_str()).x, ImGui::CalcTextSize(y_hi.c_str()).x) + 6;
    Plot pl{ImVec2(p0.x + left, p0.y + line + 2), ImVec2(p0.x + w, p0.y + h - line - 2)};
    dl->AddText(ImVec2(p0.x + left, p0.y), ink, title.c_str());
    dl->AddRect(pl.lo, pl.hi, frame);
    dl->AddText(ImVec2(p0.x, pl.lo.y - 2), ink, y_hi.c_str());
    dl->AddText(ImVec2(p0.x, pl.hi.y - line + 2), ink, y_lo.c_str());
    dl->AddText(ImVec2(pl.lo.x, pl.hi.y + 2), ink, x_lo.c_str());
    float xw = ImGui::CalcTextSize(x_hi.c_str()).x, tw = ImGui::CalcTextSize(x_title.c_str()).x;
    dl->AddText(ImVec2(pl.hi.x - xw, pl.hi.y + 2), ink, x_hi.c_str());
    dl->AddText(ImVec2((pl.lo.x + pl.hi.x - tw) / 2, pl.hi.y + 2), ink, x_title.c_str());
    return pl;
  }

  // The two charts of `descent tune --plot`, drawn with ImGui's draw list: the best time so
  // far against the candidates measured, with the default schedule's time as a reference
  // line, and each candidate the model scored before it ran, its score (x) against its
  // measured time (y, lower is faster).
  static void charts(const std::vector<tune::Candidate>& cands, double default_s = 0) {
    std::vector<float> best;
    float b = 0;
    struct Dot { float score, time; };
    std::vector<Dot> dots;
    for (const auto& c : cands) {
      if (c.ok && (b <= 0 || float(c.seconds * 1e3) < b)) b = float(c.seconds * 1e3);
      if (b > 0) best.push_back(b);
      if (c.ok && c.has_prediction) dots.push_back({float(c.predicted), float(c.seconds * 1e3)});
    }
    if (best.empty()) return;
    float lo = *std::min_element(best.begin(), best.end()), hi = *std::max_element(best.begin(), best.end());
    const float def = float(default_s * 1e3);
    if (def > 0) {  // the default's line on the chart when it is within reach of the search
      lo = std::min(lo, def);
      if (def < hi * 3) hi = std::max(hi, def);
    }
    auto ms_text = [](float v) { return fmt::format("{:.3g} ms", v); };
    ImGui::Text("best so far: %.4g ms after the first candidate, %.4g ms after %zu", best.front(),
                best.back(), best.size());
    ImVec2 p0 = ImGui::GetCursorScreenPos();
    float full = std::max(240.0f, ImGui::GetContentRegionAvail().x), h = 170;
    float w = dots.empty() ? full : full * 0.5f - 8;
    ImGui::Dummy(ImVec2(full, h));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImU32 blue = IM_COL32(30, 90, 180, 255), orange = IM_COL32(220, 100, 20, 255),
                grey = IM_COL32(120, 120, 120, 255);
    Plot pl = axes(dl, p0, w, h, "best time so far (lower is faster)", "candidates measured", "1",
                   std::to_string(best.size()), ms_text(lo), ms_text(hi));
    float span = std::max(hi - lo, hi * 0.01f);
    auto at = [&](size_t k, float v) {
      float x = pl.lo.x + 3 + (pl.hi.x - pl.lo.x - 6) * (best.size() > 1 ? float(k) / float(best.size() - 1) : 0.f);
      float y = pl.lo.y + 3 + (pl.hi.y - pl.lo.y - 6) * (1 - (std::min(v, hi) - lo) / span);
      return ImVec2(x, y);
    };
    if (def > 0 && def <= hi) {
      ImVec2 a = at(0, def), z = at(best.size() > 1 ? best.size() - 1 : 0, def);
      for (float x = a.x; x < z.x; x += 8) dl->AddLine(ImVec2(x, a.y), ImVec2(std::min(x + 4, z.x), a.y), grey, 1);
      dl->AddText(ImVec2(z.x - ImGui::CalcTextSize("default").x, a.y - ImGui::GetTextLineHeight()), grey, "default");
    }
    // A step down at every candidate that found a faster schedule.
    for (size_t k = 1; k < best.size(); ++k) {
      dl->AddLine(at(k - 1, best[k - 1]), at(k, best[k - 1]), blue, 2);
      dl->AddLine(at(k, best[k - 1]), at(k, best[k]), blue, 2);
    }
    if (dots.empty()) return;
    float slo = dots[0].score, shi = slo, tlo = dots[0].time, thi = tlo;
    for (const auto& d : dots) {
      slo = std::min(slo, d.score);
      shi = std::max(shi, d.score);
      tlo = std::min(tlo, d.time);
      thi = std::max(thi, d.time);
    }
    Plot q = axes(dl, ImVec2(p0.x + w + 16, p0.y), w, h,
                  fmt::format("model score vs time ({} ranked)", dots.size()), "model score",
                  fmt::format("{:.2f}", slo), fmt::format("{:.2f}", shi), ms_text(tlo), ms_text(thi));
    float sspan = std::max(shi - slo, 1e-6f), tspan = std::max(thi - tlo, thi * 0.01f);
    for (const auto& d : dots) {
      float x = q.lo.x + 4 + (q.hi.x - q.lo.x - 8) * (d.score - slo) / sspan;
      float y = q.lo.y + 4 + (q.hi.y - q.lo.y - 8) * (1 - (d.time - tlo) / tspan);
      dl->AddCircleFilled(ImVec2(x, y), 3.5f, orange);
    }
  }

  // The best schedule under the microscope: the kernel chosen again, then the steps.
  bool apply(Document& doc, std::string* error) {
    if (!job_ || running() || !job_->report.ok || job_->report.tasks.empty() ||
        job_->report.tasks[0].best_trace.empty()) {
      *error = "no finished tuning job with a schedule to apply";
      return false;
    }
    const Session::TuneRequest& req = job_->request;
    std::string dims;
    for (const auto& [k, v] : req.dims) dims += (dims.empty() ? "" : " ") + k + "=" + std::to_string(v);
    if (!doc.choose_kernel(req.kernel, dims, error)) return false;
    if (!doc.session().schedule_text(job_->report.tasks[0].best_trace, error)) return false;
    message_ = "applied: the loop-nest pane shows the tuned schedule";
    doc.request_pane("loops");
    return true;
  }

  bool Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
           std::string* error) override {
    if (verb == "run") {
      for (const auto& a : args) {
        size_t eq = a.find('=');
        std::string key = a.substr(0, eq), value = eq == std::string::npos ? "" : a.substr(eq + 1);
        if (key == "trials") {
          trials_ = std::atoi(value.c_str());
          if (trials_ < 1) return fail("trials must be at least 1", error);
        } else if (key == "strategy") {
          auto s = tune::strategies();
          auto it = std::find(s.begin(), s.end(), value);
          if (it == s.end()) return fail("unknown strategy '" + value + "'", error);
          strategy_ = int(it - s.begin());
        } else if (key == "device") {
          auto d = devices();
          auto it = std::find(d.begin(), d.end(), value);
          if (it == d.end()) return fail("unknown device '" + value + "' (devices: " + join(d) + ")", error);
          device_ = int(it - d.begin());
        } else {
          return fail("run takes trials=N, strategy=S, device=D, not '" + a + "'", error);
        }
      }
      if (!start(doc, true, error)) return false;
      if (!job_->report.ok) return fail(job_->report.error, error);
      return true;
    }
    if (verb == "apply") return apply(doc, error);
    if (verb == "show") {
      if (!job_ || running() || !job_->report.ok || job_->report.tasks.empty())
        return fail("no finished tuning job to show a candidate of", error);
      int n = args.empty() ? 0 : std::atoi(args[0].c_str());
      const auto& cands = job_->report.tasks[0].result.candidates;
      if (n < 1 || n > int(cands.size()))
        return fail(fmt::format("show takes a candidate's number, 1..{}", cands.size()), error);
      return show(size_t(n - 1), error);
    }
    *error = "tune has no action '" + std::string(verb) + "' (actions: run, show, apply)";
    return false;
  }
  static bool fail(const std::string& why, std::string* error) {
    *error = why;
    return false;
  }

  std::string caption() const override { return caption_; }

  void Draw(Document& doc) override {
    Session& s = doc.session();
    const bool busy = running();
    std::string kernel = s.selected_kernel();
    ImGui::TextUnformatted(kernel.empty() ? "No kernel selected: choose one in the loop-nest pane."
                                          : ("Kernel: " + kernel).c_str());
    ImGui::SetNextItemWidth(120);
    ImGui::SliderInt("trials", &trials_, 4, 128);
    ImGui::SameLine();
    const auto strategies = tune::strategies();
    ImGui::SetNextItemWidth(140);
    if (ImGui::BeginCombo("strategy", strategies[size_t(strategy_)].c_str())) {
      for (size_t i = 0; i < strategies.size(); ++i)
        if (ImGui::Selectable(strategies[i].c_str(), int(i) == strategy_)) strategy_ = int(i);
      ImGui::EndCombo();
    }
    ImGui::SameLine();
    const auto devs = devices();
    ImGui::SetNextItemWidth(100);
    if (!devs.empty() && ImGui::BeginCombo("device", devs[size_t(std::min<int>(device_, int(devs.size()) - 1))].c_str())) {
      for (size_t i = 0; i < devs.size(); ++i)
        if (ImGui::Selectable(devs[i].c_str(), int(i) == device_)) device_ = int(i);
      ImGui::EndCombo();
    }
    ImGui::SameLine();
    if (busy) {
      if (ImGui::Button("Stop")) job_->session->interrupt_flag() = true;
    } else {
      if (ImGui::Button("Tune") && !start(doc, false, &message_)) {
      }
      ImGui::SameLine();
      if (ImGui::Button("Apply")) {
        std::string why;
        if (!apply(doc, &why)) message_ = why;
      }
    }
    if (!message_.empty()) ImGui::TextWrapped("%s", message_.c_str());
    ImGui::Separator();
    if (!job_) {
      caption_ = kernel.empty() ? "no kernel selected" : "kernel " + kernel + ": not tuned yet";
      ImGui::TextWrapped("Tune searches schedules for the selected kernel: each candidate is "
                         "built, checked against the reference interpreter and timed "
                         "(docs/tuning.md).");
      return;
    }
    std::lock_guard<std::mutex> lock(job_->mu);
    if (!job_->done) {
      caption_ = fmt::format("tuning {}: {} candidates of {}", job_->request.kernel,
                             job_->live.size(), job_->request.trials);
      ImGui::TextUnformatted(caption_.c_str());
      charts(job_->live);
      ImGui::BeginChild("progress", ImVec2(0, 0), true);
      for (const auto& l : job_->lines) ImGui::TextUnformatted(l.c_str());
      ImGui::SetScrollHereY(1.0f);
      ImGui::EndChild();
      return;
    }
    const Session::TuneReport& r = job_->report;
    if (!r.ok) {
      caption_ = "tuning failed: " + r.error;
      ImGui::TextWrapped("error: %s", r.error.c_str());
      return;
    }
    const Session::TuneTask& t = r.tasks[0];
    const tune::SearchResult& sr = t.result;
    caption_ = fmt::format("{} {} on {}: as lowered {}, default {}, tuned {} ({} candidates{})",
                           t.kernel, t.shape, job_->request.device, ms(t.naive_seconds),
                           ms(t.default_seconds), ms(t.best_seconds), sr.candidates.size(),
                           sr.interrupted ? ", stopped" : "");
    if (shown_ >= 0)
      caption_ += fmt::format("; candidate {}'s loop nest shown ({} lines)", shown_ + 1,
                              std::count(shown_nest_.begin(), shown_nest_.end(), '\n'));
    ImGui::TextWrapped("%s", caption_.c_str());
    // The three times as bars, longest = full width.
    double longest = std::max({t.naive_seconds, t.default_seconds, t.best_seconds, 1e-12});
    const char* names[] = {"as lowered", "default", "tuned"};
    double values[] = {t.naive_seconds, t.default_seconds, t.best_seconds};
    for (int i = 0; i < 3; ++i) {
      ImGui::Text("%-10s %10s", names[i], ms(values[i]).c_str());
      ImGui::SameLine();
      ImGui::ProgressBar(float(values[i] / longest), ImVec2(-1, 0), "");
    }
    charts(sr.candidates, t.default_seconds);
    if (sr.ranked > 0)
      ImGui::Text("cost model: rank correlation %.2f on %d candidates it ranked before they ran",
                  sr.rank_correlation, sr.ranked);
    const float nest_h = shown_nest_.empty() ? 0.0f : ImGui::GetContentRegionAvail().y * 0.45f;
    if (ImGui::BeginTable("candidates", 4,
                          ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY,
                          ImVec2(0, shown_nest_.empty() ? 0.0f : ImGui::GetContentRegionAvail().y - nest_h))) {
      ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_WidthFixed, 30);
      ImGui::TableSetupColumn("time", ImGuiTableColumnFlags_WidthFixed, 90);
      ImGui::TableSetupColumn("model", ImGuiTableColumnFlags_WidthFixed, 60);
      ImGui::TableSetupColumn("schedule, or why it failed");
      ImGui::TableHeadersRow();
      for (const auto& c : sr.candidates) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        // The row is a button: its loop nest appears below the table.
        std::string label = std::to_string(c.trial + 1);
        if (ImGui::Selectable(label.c_str(), c.trial == shown_, ImGuiSelectableFlags_SpanAllColumns)) {
          std::string why;
          if (!show(size_t(c.trial), &why)) shown_nest_ = why;
        }
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(c.ok ? ms(c.seconds).c_str() : "failed");
        ImGui::TableNextColumn();
        if (c.has_prediction) ImGui::Text("%.2f", c.predicted);
        ImGui::TableNextColumn();
        std::string what = c.ok ? c.trace : c.error;
        for (char& ch : what)
          if (ch == '\n') ch = ';';
        ImGui::TextUnformatted(what.c_str());
        if (c.trial == sr.best) {
          ImGui::SameLine();
          ImGui::TextColored(ImVec4(0.2f, 0.7f, 0.3f, 1), " (best)");
        }
      }
      ImGui::EndTable();
    }
    if (!shown_nest_.empty()) {
      ImGui::BeginChild("nest", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
      ImGui::TextUnformatted(shown_nest_.c_str());
      ImGui::EndChild();
    }
  }
};

}  // namespace

std::unique_ptr<Pane> make_tune_pane() { return std::make_unique<TunePane>(); }

}  // namespace descent::viz
