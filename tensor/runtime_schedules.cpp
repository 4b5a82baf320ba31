// The graph runtime's schedules: the steps installed per kernel (with a version, and the
// installing schedule object's own nest), and lowering a kernel call once per (kernel
// declaration, input shapes, schedule version). Everything else of the runtime is
// runtime.cpp.
#include <string>
#include <vector>

#include "tensor/lower.h"
#include "tensor/runtime.h"
#include "tensor/schedule.h"

namespace descent::tensor {

void GraphRuntime::set_schedule(const std::string& kernel_name, const std::string& text) {
  set_schedule(kernel_name, text, nullptr, {}, nullptr);
}

void GraphRuntime::set_schedule(const std::string& kernel_name, const std::string& text,
                                const KernelDecl* kernel,
                                std::vector<std::vector<int64_t>> shapes,
                                std::shared_ptr<const tir::PrimFunc> func) {
  if (text.empty()) {
    schedules_.erase(kernel_name);
    return;
  }
  InstalledSchedule& s = schedules_[kernel_name];
  s.text = text;
  s.version = ++schedule_versions_;
  s.kernel = kernel;
  s.shapes = std::move(shapes);
  s.func = std::move(func);
}

std::string GraphRuntime::lowered_key(const Node& n,
                                      const std::vector<std::vector<int64_t>>& shapes) const {
  std::string key = std::to_string(uintptr_t(n.kernel)) + "/" + std::to_string(n.version);
  for (const auto& shape : shapes) {
    key += '(';
    for (int64_t d : shape) key += std::to_string(d) + ",";
  }
  auto it = schedules_.find(n.label);
  if (it != schedules_.end()) key += "@" + std::to_string(it->second.version);
  return key;
}

bool GraphRuntime::lower_node(const Node& n, std::shared_ptr<const tir::PrimFunc>* func,
                              std::string* error) {
  std::vector<std::vector<int64_t>> shapes;
  for (int64_t in : n.inputs) shapes.push_back(nodes_[size_t(in)].shape);
  std::string key = lowered_key(n, shapes);
  if (auto hit = lowered_.find(key); hit != lowered_.end()) {
    *func = hit->second;
    return true;
  }
  auto sched = schedules_.find(n.label);
  if (sched != schedules_.end() && sched->second.func && sched->second.kernel == n.kernel &&
      sched->second.shapes == shapes) {
    *func = sched->second.func;  // the schedule object's own nest: nothing to apply again
  } else {
    tir::PrimFunc f;
    Diagnostic d;
    ++lowerings_;
    if (!lower(*n.kernel, shapes, &f, &d)) {
      *error = "kernel '" + n.label + "': " + d.message;
      return false;
    }
    if (sched != schedules_.end()) {
      Schedule s(std::move(f));
      StepFailure failed;
      if (!s.apply_text(sched->second.text, nullptr, &failed)) {
        *error = "schedule of kernel '" + n.label + "', step '" + failed.step + "': " + failed.why;
        return false;
      }
      f = s.func();
    }
    *func = std::make_shared<const tir::PrimFunc>(std::move(f));
  }
  if (lowered_.size() >= 4096) lowered_.clear();  // ever-new shapes: start over
  lowered_.emplace(std::move(key), *func);
  return true;
}

}  // namespace descent::tensor
