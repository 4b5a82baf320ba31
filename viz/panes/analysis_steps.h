// What the analysis pane's solver-step slider shows, as functions the tests can call: which
// trace entry gives each block's state "as of step k", and which earlier entry step k is
// compared with to mark what it changed.
//
// Header-only on purpose (like debugger.h): the pane and tests/viz/analysis_pane_test.cpp
// both include it, so the test checks the same rule the picture is drawn by.
#pragma once
#include <algorithm>
#include <vector>

#include "analysis/analysis.h"

namespace descent::viz {

// For each block of function `f`: the index of the latest solver step at or before step `k`
// (0-based, inclusive) that computed that block's entry state, i.e. the state the solver had
// for it once step k was done; -1 for a block no step had reached yet. Empty when `f` is not
// a function of the graph.
inline std::vector<int> latest_steps(const analysis::Result& r, int f, int k) {
  std::vector<int> out;
  if (f < 0 || static_cast<size_t>(f) >= r.cfg.functions.size()) return out;
  out.assign(r.cfg.functions[static_cast<size_t>(f)].blocks.size(), -1);
  const int last = std::min(k, static_cast<int>(r.trace.size()) - 1);
  for (int j = 0; j <= last; ++j) {
    const analysis::SolverStep& s = r.trace[static_cast<size_t>(j)];
    if (s.function == f && s.block >= 0 && static_cast<size_t>(s.block) < out.size())
      out[static_cast<size_t>(s.block)] = j;
  }
  return out;
}

// The step before `k` that computed the same block as step k (its state before step k), or
// -1 when step k is the first to reach that block.
inline int previous_step(const analysis::Result& r, int k) {
  if (k <= 0 || static_cast<size_t>(k) >= r.trace.size()) return -1;
  const analysis::SolverStep& s = r.trace[static_cast<size_t>(k)];
  for (int j = k - 1; j >= 0; --j) {
    const analysis::SolverStep& t = r.trace[static_cast<size_t>(j)];
    if (t.function == s.function && t.block == s.block) return j;
  }
  return -1;
}

}  // namespace descent::viz
