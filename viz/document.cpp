#include "viz/document.h"

#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "lang/text.h"

namespace descent::viz {

namespace {
using Clock = std::chrono::steady_clock;
constexpr double kDebounceSeconds = 0.35;  // a pause in typing, not every keystroke
constexpr size_t kMaxOutput = 1 << 20;     // keep the first MiB a program prints
}  // namespace

Document::Document() : session_(std::make_unique<Session>()) {}

Document::~Document() {
  if (worker_.joinable()) {
    if (next_session_) next_session_->interrupt_flag().store(true);
    worker_.join();
  }
}

void Document::set_text(std::string text, bool debounce) {
  if (text == text_ && generation_ > 0) return;
  text_ = std::move(text);
  modified_ = true;
  pending_ = true;
  pending_since_ = debounce ? Clock::now() : Clock::time_point{};
}

bool Document::load(const std::string& path, std::string* error) {
  std::string text;
  if (!read_file(path, &text, error)) return false;
  path_ = path;
  set_text(std::move(text), false);
  modified_ = false;
  return true;
}

bool Document::save(const std::string& path, std::string* error) {
  // Write beside it and rename, so a failed write never loses the file that was there.
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out || !(out << text_) || !out.flush()) {
      *error = "cannot write '" + tmp + "'";
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot replace '" + path + "'";
    std::remove(tmp.c_str());
    return false;
  }
  path_ = path;
  modified_ = false;
  return true;
}

void Document::rerun_now() {
  pending_ = true;
  pending_since_ = Clock::time_point{};
}

double Document::busy_seconds() const {
  if (!busy()) return 0;
  return std::chrono::duration<double>(Clock::now() - started_).count();
}

void Document::stop() {
  if (busy() && next_session_) next_session_->interrupt_flag().store(true);
}

void Document::start_run() {
  pending_ = false;
  worker_done_.store(false);
  next_session_ = std::make_unique<Session>();
  next_output_.clear();
  next_outcome_ = Outcome{};
  started_ = Clock::now();
  Session* s = next_session_.get();
  std::string text = text_, name = path_.empty() ? "<editor>" : path_;
  Settings st = settings_;
  worker_ = std::thread([this, s, text = std::move(text), name = std::move(name), st] {
    // The settings a pane changed apply to every run after it.
    s->set_opt_level(st.opt_level);
    std::string ignored;
    if (!st.target.empty()) s->set_target(st.target, &ignored);
    s->set_num_registers(st.num_registers);
    if (st.device != "ref") s->set_device(st.device, &ignored);
    RunOptions opts;
    opts.out = [this](std::string_view t) {
      if (next_output_.size() < kMaxOutput) next_output_.append(t);
    };
    next_outcome_ = s->submit(text, name, opts);
    worker_done_.store(true);
  });
}

void Document::finish_run() {
  worker_.join();
  // The Session before the run keeps the schedule in effect now (steps taken while the run
  // was in flight included) until carry_kernel has moved it over.
  std::unique_ptr<Session> before = std::move(session_);
  session_ = std::move(next_session_);
  outcome_ = std::move(next_outcome_);
  output_ = std::move(next_output_);
  if (output_.size() >= kMaxOutput) output_ += "\n... (output cut at 1 MiB)\n";
  ++generation_;
  current = SourceRange{};
  carry_kernel(*before);
}

namespace {
bool select_on(Session& s, const std::string& name, const std::string& dims_text,
               std::string* error) {
  std::map<std::string, int64_t> dims;
  return Session::parse_dims(split_words(dims_text), &dims, error) &&
         s.select_kernel(name, dims, error);
}
}  // namespace

bool Document::choose_kernel(const std::string& name, const std::string& dims,
                             std::string* error) {
  if (!select_on(*session_, name, dims, error)) return false;
  KernelChoice k;
  k.name = name;
  k.dims = dims;
  k.selected = true;
  kernel_ = std::move(k);
  kernel_trace_.clear();
  return true;
}

void Document::carry_kernel(Session& before) {
  KernelChoice& k = kernel_;
  bool was_selected = k.selected;
  std::string trace = was_selected ? before.schedule_trace() : kernel_trace_;
  k.selected = false;
  k.error.clear();
  k.note.clear();
  k.carried = k.reapplied = k.switched = false;
  if (k.name.empty()) return;  // no kernel chosen yet
  const Module& m = session_->module();
  if (m.kernels.empty()) {
    k.error = "the program declares no kernels (did it compile?)";
    kernel_trace_ = std::move(trace);
    return;
  }
  if (!k.lost.empty() && m.find_kernel(k.lost) >= 0) {
    // The kernel is back (it was renamed or half-typed for a moment): so is its schedule.
    k.name = k.lost;
    k.dims = k.lost_dims;
    trace = k.lost_trace;
    k.lost.clear();
    k.switched = true;
  }
  if (m.find_kernel(k.name) < 0) {
    // The kernel went away with the edit: show another one meanwhile, and keep the
    // student's work in case it comes back.
    if (k.lost.empty()) {
      k.lost = k.name;
      k.lost_dims = k.dims;
      k.lost_trace = trace;
    }
    k.name = default_kernel();
    trace.clear();
    k.switched = true;
  }
  if (!k.lost.empty())
    k.note = "kernel '" + k.lost + "' is not in the program " +
             (outcome_.status == Outcome::CompileError ? "while it does not compile"
                                                       : "any more") +
             ": showing " + k.name + " (" + k.lost + "'s schedule comes back with it)";
  if (was_selected && !k.switched) {
    // The same kernel: the Session moves the schedule object over, history and all; it
    // applies the steps again only where the edit changed the kernel.
    std::string note;
    bool reapplied = false;
    if (!session_->adopt_schedule(before, 0, &reapplied, &note, &k.error)) {
      kernel_trace_ = std::move(trace);
      return;
    }
    k.selected = true;
    kernel_trace_.clear();
    k.carried = !reapplied;
    k.reapplied = reapplied && note.empty() && !trace.empty();
    if (!note.empty()) k.note = note;
    return;
  }
  // Another kernel than before, or one that could not be selected then: a new schedule,
  // with the steps kept for it (a kernel that comes back is a new declaration).
  if (!select_on(*session_, k.name, k.dims, &k.error)) {
    kernel_trace_ = std::move(trace);
    return;
  }
  k.selected = true;
  kernel_trace_.clear();
  if (trace.empty()) return;
  std::string error;
  if (!session_->schedule_text(trace, &error))
    k.note = "after the edit the schedule applied only in part: " + error +
             " (the steps before it are kept)";
  else
    k.reapplied = k.note.empty();
}

std::string Document::default_kernel() {
  const Module& m = session_->module();
  const SourceFile* own = session_->last_source();  // the program; the prelude came first
  for (auto it = m.kernels.rbegin(); it != m.kernels.rend(); ++it)
    if (own && it->decl && it->decl->loc.file == own) return it->name;
  if (m.find_kernel(kDefaultKernel) >= 0) return kDefaultKernel;
  return m.kernels.empty() ? "" : m.kernels[0].name;
}

bool Document::poll() {
  bool changed = false;
  if (busy() && worker_done_.load()) {
    finish_run();
    changed = true;
  }
  if (busy() && busy_seconds() > settings_.run_timeout_s) stop();
  if (!busy() && pending_ &&
      std::chrono::duration<double>(Clock::now() - pending_since_).count() >= kDebounceSeconds)
    start_run();
  return changed;
}

void Document::wait() {
  while (pending_ || busy()) {
    if (pending_ && !busy()) start_run();
    if (busy()) {
      while (!worker_done_.load()) {
        if (busy_seconds() > settings_.run_timeout_s) stop();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      finish_run();
    }
  }
}

void Document::begin_frame() {
  hover_ = hover_next_;
  hover_next_ = SourceRange{};
}

SourceRange Document::range_of(const SourceLoc& loc, const SourceLoc& end) const {
  if (!loc.valid()) return {};
  if (end.valid() && end.offset > loc.offset) return {loc.offset, end.offset};
  for (const Token& t : session_->last_tokens()) {
    if (t.loc.offset == loc.offset && !t.text.empty())
      return {loc.offset, loc.offset + static_cast<uint32_t>(t.text.size())};
    if (t.loc.offset > loc.offset) break;
  }
  return {loc.offset, loc.offset + 1};
}

}  // namespace descent::viz
