// Schedules as objects: the Session holds any number of them, each one kernel lowered at
// one set of dims with its own history, by id. The REPL's :kernel and :sched, `descent
// kernel`, the visualizer, the Python module's Schedule, the tuner and the labs all drive
// these objects; none of them replays a trace or compares lists of names to learn what a
// step did (tensor::StepResult says so).
//
// Installing is how a schedule reaches the program: the runtime keeps, per kernel, the
// steps of the schedule installed last (and that schedule's own nest, for calls at its
// shapes). Stepping, undoing or redoing a schedule installs it.
#include <algorithm>

#include "lang/text.h"
#include "pipeline/kernel_lookup.h"
#include "pipeline/open_schedule.h"
#include "pipeline/pipeline.h"
#include "tensor/lower.h"
#include "tensor/runtime.h"
#include "tensor/schedule.h"
#include "tensor/tir.h"

namespace descent {

bool Session::lower_for_schedule(const std::string& name,
                                 const std::map<std::string, int64_t>& dims,
                                 std::unique_ptr<OpenSchedule>* out, std::string* error) const {
  const KernelDecl* found = find_kernel_or_error(module_, name, error);
  if (!found) return false;
  const KernelDecl& decl = *found;
  // A dim the kernel does not have would be ignored silently (and the kernel lowered at 64):
  // say which dims it has instead.
  std::vector<std::string> names = tensor::dim_names(decl);
  for (const auto& [dim, value] : dims) {
    if (std::find(names.begin(), names.end(), dim) == names.end()) {
      *error = "kernel '" + name + "' has no dim '" + dim + "' (" +
               (names.empty() ? "its shapes are all fixed" : "its dims: " + join(names)) + ")";
      return false;
    }
    if (value < 1) {
      *error = "dim '" + dim + "' must be at least 1";
      return false;
    }
  }
  std::vector<std::vector<int64_t>> shapes = tensor::shapes_for(decl, dims);
  tir::PrimFunc f;
  Diagnostic d;
  if (!tensor::lower(decl, shapes, &f, &d)) {
    *error = "cannot lower kernel '" + name + "': " + d.message;
    return false;
  }
  *out = std::make_unique<OpenSchedule>(
      OpenSchedule{name, dims, found, std::move(shapes), tensor::Schedule(std::move(f))});
  return true;
}

Session::ScheduleId Session::open_schedule(const std::string& name,
                                           const std::map<std::string, int64_t>& dims,
                                           bool restore, std::string* error) {
  std::unique_ptr<OpenSchedule> s;
  if (!lower_for_schedule(name, dims, &s, error)) return 0;
  if (restore) restore_schedule(name, s->schedule);
  ScheduleId id = next_schedule_id_++;
  schedules_[id] = std::move(s);
  return id;
}

bool Session::close_schedule(ScheduleId id) {
  auto it = schedules_.find(id);
  if (it == schedules_.end()) return false;
  // What it installed stays installed: the program keeps running the way it did.
  auto inst = installed_.find(it->second->kernel);
  if (inst != installed_.end() && inst->second == id) inst->second = 0;
  schedules_.erase(it);
  if (current_ == id) current_ = 0;
  return true;
}

Session::OpenSchedule* Session::schedule_or_error(ScheduleId id, std::string* error) const {
  if (id == 0 && current_ == 0) {
    if (error) *error = "no kernel selected (use :kernel NAME)";
    return nullptr;
  }
  auto it = schedules_.find(id == 0 ? current_ : id);
  if (it == schedules_.end()) {
    if (error) *error = "no schedule " + std::to_string(id) + " (it was closed, or never opened)";
    return nullptr;
  }
  return it->second.get();
}

bool Session::use_schedule(ScheduleId id, std::string* error) {
  if (!schedule_or_error(id, error)) return false;
  if (id != 0) current_ = id;
  return true;
}

void Session::install(const OpenSchedule& s) {
  auto func = std::make_shared<const tir::PrimFunc>(s.schedule.func());
  tensors_->set_schedule(s.kernel, s.schedule.trace(), s.decl, s.shapes, std::move(func));
}

bool Session::install_schedule(ScheduleId id, std::string* error) {
  OpenSchedule* s = schedule_or_error(id, error);
  if (!s) return false;
  install(*s);
  installed_[s->kernel] = id == 0 ? current_ : id;
  return true;
}

std::vector<Session::ScheduleInfo> Session::open_schedules() const {
  std::vector<ScheduleInfo> out;
  for (const auto& [id, s] : schedules_) {
    auto inst = installed_.find(s->kernel);
    out.push_back(ScheduleInfo{id, s->kernel, s->dims, s->schedule.num_applied(),
                               inst != installed_.end() && inst->second == id, id == current_});
  }
  return out;
}

Session::ScheduleId Session::adopt_schedule(Session& from, ScheduleId id, bool* reapplied,
                                            std::string* note, std::string* error) {
  OpenSchedule* old = from.schedule_or_error(id, error);
  if (!old) return 0;
  std::unique_ptr<OpenSchedule> fresh;
  if (!lower_for_schedule(old->kernel, old->dims, &fresh, error)) return 0;
  *reapplied = tir::print_script(fresh->schedule.original()) !=
               tir::print_script(old->schedule.original());
  note->clear();
  std::string why;
  if (!*reapplied)
    fresh->schedule = std::move(old->schedule);  // the same nest: the history moves as it is
  else if (!fresh->schedule.apply_text(old->schedule.trace(), &why))
    *note = "after the edit the schedule applied only in part: " + why +
            " (the steps before it are kept)";
  from.close_schedule(id == 0 ? from.current_ : id);
  ScheduleId mine = next_schedule_id_++;
  schedules_[mine] = std::move(fresh);
  current_ = mine;
  install_schedule(mine, nullptr);
  return mine;
}

bool Session::select_kernel(const std::string& name, const std::map<std::string, int64_t>& dims,
                            std::string* error) {
  ScheduleId id = open_schedule(name, dims, /*restore=*/true, error);
  if (!id) return false;
  current_ = id;
  return true;
}

const std::string& Session::selected_kernel() const {
  static const std::string none;
  const OpenSchedule* s = schedule_or_error(0, nullptr);
  return s ? s->kernel : none;
}

const std::map<std::string, int64_t>& Session::selected_kernel_dims() const {
  static const std::map<std::string, int64_t> none;
  const OpenSchedule* s = schedule_or_error(0, nullptr);
  return s ? s->dims : none;
}

bool Session::restore_schedule(const std::string& name, tensor::Schedule& sched) {
  // A schedule given earlier for this kernel (e.g. on other shapes) comes back if it
  // applies in full. One that does not is dropped everywhere: kept half-applied here it
  // would differ from what calls run, and kept in the runtime every call would fail on it.
  auto it = tensors_->schedules().find(name);
  if (it == tensors_->schedules().end()) return true;
  tensor::Schedule trial(sched.original());
  std::string why;
  if (trial.apply_text(it->second.text, &why)) {
    sched = std::move(trial);
    return true;
  }
  tensors_->set_schedule(name, "");
  installed_.erase(name);
  return false;
}

std::vector<std::string> Session::forget_stale_schedules(const std::vector<uint32_t>& versions) {
  std::vector<std::string> notes;
  for (size_t k = 0; k < versions.size() && k < module_.kernels.size(); ++k) {
    const KernelInfo& info = module_.kernels[k];
    if (info.version == versions[k]) continue;
    auto it = tensors_->schedules().find(info.name);
    bool had = it != tensors_->schedules().end();
    std::string steps = had ? it->second.text : "";
    // Every schedule object of the kernel is lowered again from the new definition and its
    // steps applied again; the dims it was opened with carry over where the new definition
    // has them. One whose steps no longer apply starts again from the new nest; one that
    // cannot be lowered any more is closed.
    std::vector<std::string> names = tensor::dim_names(*info.decl);
    auto inst = installed_.find(info.name);
    ScheduleId installer = inst == installed_.end() ? 0 : inst->second;
    bool checked = false, applies = true;
    for (auto sit = schedules_.begin(); sit != schedules_.end();) {
      ScheduleId id = sit->first;
      if (sit->second->kernel != info.name) {
        ++sit;
        continue;
      }
      std::map<std::string, int64_t> dims;
      for (const auto& [dim, size] : sit->second->dims)
        if (std::find(names.begin(), names.end(), dim) != names.end()) dims[dim] = size;
      std::unique_ptr<OpenSchedule> fresh;
      std::string why;
      if (!lower_for_schedule(info.name, dims, &fresh, &why)) {
        if (id == current_) {
          notes.push_back("kernel '" + info.name + "' was redefined and " + why +
                          ": it is no longer selected (:kernel " + info.name + " again)");
          current_ = 0;
        }
        if (id == installer) {  // said above: no second note about its schedule
          tensors_->set_schedule(info.name, "");
          installed_.erase(info.name);
          checked = true;
        }
        sit = schedules_.erase(sit);
        continue;
      }
      bool ok = fresh->schedule.apply_text(sit->second->schedule.trace(), &why);
      if (!ok) fresh->schedule = tensor::Schedule(fresh->schedule.original());
      sit->second = std::move(fresh);
      if (id == installer) {
        checked = true;
        applies = ok;
        if (ok) install(*sit->second);
      }
      ++sit;
    }
    if (had && !checked) {
      // Installed by a schedule file or text (or by a schedule since closed): tried on the
      // new definition at its default shapes.
      tir::PrimFunc f;
      Diagnostic d;
      std::string why;
      applies = tensor::lower(*info.decl, tensor::shapes_for(*info.decl, {}), &f, &d) &&
                tensor::Schedule(std::move(f)).apply_text(steps, &why);
    }
    if (had && !applies) {
      tensors_->set_schedule(info.name, "");
      installed_.erase(info.name);
      notes.push_back("kernel '" + info.name + "' was redefined: its schedule (" +
                      join(split_lines(steps), ";") + ") no longer applies and was dropped");
    }
  }
  return notes;
}

bool Session::schedule_step(std::string_view step, std::string* error, tensor::StepResult* made,
                            ScheduleId id) {
  OpenSchedule* s = schedule_or_error(id, error);
  if (!s) return false;
  if (!s->schedule.apply(step, error, made)) return false;
  return install_schedule(id, error);
}

bool Session::schedule_text(std::string_view text, std::string* error) {
  OpenSchedule* s = schedule_or_error(0, error);
  if (!s) return false;
  bool ok = s->schedule.apply_text(text, error);
  install_schedule(0, nullptr);
  return ok;
}

bool Session::schedule_undo(ScheduleId id) {
  OpenSchedule* s = schedule_or_error(id, nullptr);
  if (!s || !s->schedule.undo()) return false;
  return install_schedule(id, nullptr);
}

bool Session::schedule_redo(ScheduleId id) {
  OpenSchedule* s = schedule_or_error(id, nullptr);
  if (!s || !s->schedule.redo()) return false;
  return install_schedule(id, nullptr);
}

std::string Session::schedule_trace(ScheduleId id) const {
  const OpenSchedule* s = schedule_or_error(id, nullptr);
  return s ? s->schedule.trace() : "";
}

std::vector<std::string> Session::schedule_primitives() {
  return tensor::schedule_primitives();
}

std::vector<std::string> Session::schedule_names(ScheduleId id) const {
  const OpenSchedule* s = schedule_or_error(id, nullptr);
  if (!s) return {};
  std::vector<std::string> names = tensor::sched::loop_names(s->schedule.func());
  for (auto& b : tensor::sched::block_names(s->schedule.func())) names.push_back(b);
  return names;
}

bool Session::schedule_loops(const std::string& block, std::vector<std::string>* out,
                             std::string* error, ScheduleId id) const {
  const OpenSchedule* s = schedule_or_error(id, error);
  if (!s) return false;
  return tensor::sched::block_loops(s->schedule.func(), block, out, error);
}

}  // namespace descent
