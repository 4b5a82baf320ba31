// The visualizer's model: the program being shown, the Session that last compiled and ran
// it, and the cross-pane links (what the mouse is over, where the debugger stands).
//
// Every edit re-runs the whole pipeline on a fresh Session, on a worker thread, so a slow
// or endless program never freezes the window: the panes keep showing the last finished
// run until the new one is ready, and then all of them switch at once (generation()
// changes, and each pane drops what it had cached). A run that takes too long is
// interrupted through Session::interrupt_flag(), like Ctrl-C in the REPL.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <thread>

#include "pipeline/pipeline.h"

namespace descent::viz {

// A byte range [begin, end) of the source text.
struct SourceRange {
  uint32_t begin = 0, end = 0;
  bool valid() const { return end > begin; }
  bool contains(uint32_t offset) const { return offset >= begin && offset < end; }
  bool operator==(const SourceRange&) const = default;
};

// What every new Session gets before it compiles: the options the panes can change.
struct Settings {
  int opt_level = 2;
  std::string target;   // "" = this machine
  int num_registers = 16;
  std::string device = "ref";  // tensor device
  double run_timeout_s = 5;    // a run longer than this is interrupted
};

// The kernel the loop-nest pane starts with when the program declares none of its own (the
// prelude's, so every program has it), at dims small enough that the reference
// interpreter checks a schedule in a blink.
inline constexpr const char* kDefaultKernel = "matmul";
inline constexpr const char* kDefaultDims = "n=64 m=64 k=64";

// The kernel under the microscope, as the Document carries it across re-runs.
struct KernelChoice {
  std::string name;   // the chosen kernel ("" = none chosen yet)
  std::string dims;   // its dims as typed: "n=64 m=64 k=64"
  bool selected = false;  // selected on session(); else `error` says why not
  std::string error;
  // A kernel an edit removed, with its dims and schedule: an edit that brings it back
  // brings them back; meanwhile `name` is another kernel.
  std::string lost, lost_dims, lost_trace;
  // What the last re-run did with the schedule, for the pane to say.
  std::string note;        // the lost kernel, or steps that stopped applying at one
  bool carried = false;    // the schedule object moved into the fresh Session as it was
  bool reapplied = false;  // the edit changed the kernel: its steps all apply to the new nest
  bool switched = false;   // the re-run shows another kernel than the one before it
};

class Document {
 public:
  Document();
  ~Document();
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;

  // ---- The program ----
  const std::string& text() const { return text_; }
  const std::string& path() const { return path_; }
  // Replaces the text (an edit); the pipeline re-runs after a short pause in typing
  // (immediately with rerun_now() or when `debounce` is false).
  void set_text(std::string text, bool debounce = true);
  bool load(const std::string& path, std::string* error);
  bool save(const std::string& path, std::string* error);
  bool modified() const { return modified_; }

  Settings& settings() { return settings_; }
  // Re-runs with the current text and settings now (e.g. after a settings change).
  void rerun_now();

  // ---- The kernel under the microscope (the loop-nest pane's) ----
  // The Document owns the choice, as it owns the settings: every re-run selects the kernel
  // again on the fresh Session with the same dims and replays the schedule the Session
  // before it had. While a Session is current it owns the schedule (panes step, undo and
  // read it there); the Document holds a copy only across a re-run that cannot take it.
  const KernelChoice& kernel() const { return kernel_; }
  // Selects `name` at `dims` ("n=64 k=32") on session() and carries it from now on (a lost
  // kernel is let go); false with *error, and nothing changed, when that fails.
  bool choose_kernel(const std::string& name, const std::string& dims, std::string* error);
  // The kernel to show first: the last one the program itself declares, else the
  // prelude's kDefaultKernel (else any); "" when session() has no kernels.
  std::string default_kernel();

  // ---- The last finished run ----
  Session& session() { return *session_; }
  // Changes whenever session() is a different run: panes compare it with what they cached.
  uint64_t generation() const { return generation_; }
  const Outcome& outcome() const { return outcome_; }
  const std::string& output() const { return output_; }  // what the program printed
  // Is a run in flight? How long has it been going?
  bool busy() const { return worker_.joinable(); }
  double busy_seconds() const;
  void stop();   // interrupts the run in flight
  // Called once per frame: starts a pending run, finishes a completed one, enforces the
  // timeout. Returns true when a new run became current this frame.
  bool poll();
  // Waits until no run is pending or in flight (scripts and screenshots).
  void wait();

  // ---- Cross-pane links ----
  // A pane that hovers something with a source range calls hover_source(); the editor
  // highlights it. The editor calls hover_source() for the text under the mouse too, and
  // panes highlight their items that contain hovered(). Values set during a frame are
  // read during the next (begin_frame() moves them).
  void begin_frame();
  void hover_source(SourceRange r) { hover_next_ = r; }
  SourceRange hovered() const { return hover_; }
  // The step debugger's current instruction (stays until cleared).
  SourceRange current;
  // A pane asks for another pane to be brought to the front (the labs pane's Open shows the
  // stage its lab is about); the app takes the request at its next frame.
  void request_pane(std::string name) { requested_pane_ = std::move(name); }
  std::string take_requested_pane() { return std::exchange(requested_pane_, std::string()); }
  // The range of a located node: from loc to end, or (without an end) to the end of the
  // token starting at loc.
  SourceRange range_of(const SourceLoc& loc, const SourceLoc& end = SourceLoc{}) const;

 private:
  void start_run();
  void finish_run();
  // Carries the kernel under the microscope from `before` (the Session of the last run) to
  // the fresh session_: its schedule object moves over (Session::adopt_schedule).
  void carry_kernel(Session& before);

  std::string text_, path_;
  std::string requested_pane_;
  bool modified_ = false;
  Settings settings_;
  std::unique_ptr<Session> session_;
  uint64_t generation_ = 0;
  Outcome outcome_;
  std::string output_;

  // The run in flight: it owns its own Session until it becomes current.
  bool pending_ = false;
  std::chrono::steady_clock::time_point pending_since_;
  std::thread worker_;
  std::atomic<bool> worker_done_{false};
  std::unique_ptr<Session> next_session_;
  Outcome next_outcome_;
  std::string next_output_;
  std::chrono::steady_clock::time_point started_;

  SourceRange hover_, hover_next_;
  KernelChoice kernel_;
  // The schedule's steps while no Session has the kernel selected (it did not compile, or
  // went away with an edit): applied again when it can be selected.
  std::string kernel_trace_;
};

}  // namespace descent::viz
