// Searching a space: candidates, the measurer that times them, and the strategies (issue 17):
// random, a genetic algorithm over decision lists, and a beam search that fixes one decision
// at a time (the cost-model-guided evolutionary strategy will build on the same pieces).
//
//   tune::Space space;  tune::parse_space(text, &space, &error);
//   MyMeasurer m;                                  // times one scheduled function
//   tune::SearchResult r = tune::search(space, f, m, {.trials = 64, .seed = 1});
//   r.candidates[r.best].trace                     // the fastest schedule found
//
// The measurer is an interface so that tests can stand a fixed function of the loop nest in
// for the clock: every strategy is then exact and deterministic, and no test times anything.
// A candidate whose schedule is refused, or that fails to build or run, is recorded with its
// reason and the search goes on.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tensor/tir.h"
#include "tune/space.h"

namespace descent::tune {

class Measurer {
 public:
  virtual ~Measurer() = default;
  // The time of one run of `f` (scheduled by `trace`), in seconds; false with *error when it
  // does not build, does not run, or computes something else than the reference.
  virtual bool measure(const tir::PrimFunc& f, const std::string& trace, double* seconds,
                       std::string* error) = 0;
};

struct Candidate {
  int trial = 0;                // 0-based, in the order measured
  std::vector<int> decisions;   // replay(space, f, decisions) gives it again
  std::string trace;            // the schedule ("" when the space refused it)
  bool ok = false;
  std::string error;            // the space's refusal, or the measurer's
  double seconds = 0;           // ok only
};

struct SearchOptions {
  std::string strategy = "random";  // random, ga, beam
  int population = 16;              // ga: individuals per generation
  int beam_width = 4;               // beam: decision lists kept at each depth
  int trials = 64;        // candidates measured (duplicates of a trace are not measured twice)
  uint64_t seed = 1;
  const std::atomic<bool>* interrupt = nullptr;  // set: stop after the current candidate
};

struct SearchResult {
  std::vector<Candidate> candidates;  // every one tried, failed ones included
  int best = -1;                      // index of the fastest ok candidate; -1 when none is ok
  std::string error;                  // an unknown strategy
  bool interrupted = false;
  // The best time after each trial (0 until one is ok): the "best so far" curve.
  std::vector<double> best_so_far;
};

// The strategies `search` knows.
std::vector<std::string> strategies();

// Runs a strategy over `space` on `f`. `observe` (may be null) hears of each candidate as it
// is recorded (a progress bar, a live table).
SearchResult search(const Space& space, const tir::PrimFunc& f, Measurer& measurer,
                    const SearchOptions& options,
                    const std::function<void(const Candidate&)>& observe = nullptr);

}  // namespace descent::tune
