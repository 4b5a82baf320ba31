// The Session's schedule objects as its files see them (not a front end's header): one
// kernel lowered at one set of dims, and the tensor::Schedule that holds its history.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pipeline/pipeline.h"
#include "tensor/schedule.h"

namespace descent {

struct Session::OpenSchedule {
  std::string kernel;                        // the kernel's name
  std::map<std::string, int64_t> dims;       // the dims it was opened with
  const KernelDecl* decl = nullptr;          // the declaration it was lowered from
  std::vector<std::vector<int64_t>> shapes;  // the input shapes those dims give
  tensor::Schedule schedule;
};

}  // namespace descent
