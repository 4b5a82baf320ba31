// Searching a space: candidates, the measurer that times them, and the strategies (issue 17):
// random, a genetic algorithm over decision lists, a beam search that fixes one decision at
// a time, and MetaSchedule's evolutionary search, where a learned cost model ranks many
// mutations and only the most promising few are measured.
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
#include <map>
#include <string>
#include <vector>

#include "tensor/tir.h"
#include "tune/space.h"

namespace descent::tune {

// One candidate of a batch handed to a measurer.
struct MeasureItem {
  const tir::PrimFunc* func = nullptr;
  const std::string* trace = nullptr;
  bool measured = false;  // set once the measurer got to it (a stopped batch leaves the rest)
  bool ok = false;
  double seconds = 0;
  std::string error;
};

class Measurer {
 public:
  virtual ~Measurer() = default;
  // The time of one run of `f` (scheduled by `trace`), in seconds; false with *error when it
  // does not build, does not run, or computes something else than the reference.
  virtual bool measure(const tir::PrimFunc& f, const std::string& trace, double* seconds,
                       std::string* error) = 0;
  // A batch, in order; after each item, `next(k)` hears of it and returns false to stop the
  // batch there. The default measures one at a time; a measurer may build the next
  // candidate while the current one runs (tune/measure.h does).
  virtual void measure_batch(std::vector<MeasureItem>& items,
                             const std::function<bool(size_t)>& next);
};

// What the evolutionary strategy learns from: a model of a loop nest's speed (cost_model.h).
class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual std::string name() const = 0;
  // Learns from every candidate measured so far (their loop nests and times); replaces what
  // it knew. False with *error when the learner fails (the search goes on unguided).
  virtual bool fit(const std::vector<const tir::PrimFunc*>& funcs,
                   const std::vector<double>& seconds, std::string* error) = 0;
  // A score per loop nest: higher is predicted faster. Only the order matters.
  virtual std::vector<double> predict(const std::vector<const tir::PrimFunc*>& funcs) = 0;
};

struct Candidate {
  int trial = 0;                // 0-based, in the order measured
  std::vector<int> decisions;   // replay(space, f, decisions) gives it again
  std::string trace;            // the schedule ("" when the space refused it)
  bool ok = false;
  std::string error;            // the space's refusal, or the measurer's
  double seconds = 0;           // ok only
  bool from_database = false;   // measured by an earlier search (SearchOptions::known)
  double predicted = 0;         // the cost model's score when it chose this one
  bool has_prediction = false;  // (evolutionary, once the model has learned something)
};

struct SearchOptions {
  std::string strategy = "random";  // random, ga, beam, evolutionary
  int population = 16;              // ga: individuals per generation
  int beam_width = 4;               // beam: decision lists kept at each depth
  int trials = 64;        // candidates measured (duplicates of a trace are not measured twice)
  uint64_t seed = 1;
  const std::atomic<bool>* interrupt = nullptr;  // set: stop after the current candidate
  // Traces measured before (the database of an earlier search): their times are taken as
  // measured, they are never measured again and do not count as trials.
  const std::map<std::string, double>* known = nullptr;
  int batch = 8;                     // random: samples drawn (and built) together
  CostModel* model = nullptr;        // evolutionary: required
  int measure_per_round = 8;         // evolutionary: candidates measured per round
  int mutants_per_round = 256;       // evolutionary: candidates the model ranks per round
};

struct SearchResult {
  std::vector<Candidate> candidates;  // every one tried, failed ones included
  int best = -1;                      // index of the fastest ok candidate; -1 when none is ok
  std::string error;                  // an unknown strategy
  bool interrupted = false;
  // The best time after each trial (0 until one is ok): the "best so far" curve.
  std::vector<double> best_so_far;
  // Evolutionary: Spearman's rank correlation between the model's scores and the measured
  // speeds of the candidates it scored before they were measured (it had not seen them);
  // `ranked` of them. 0 and 0 when the model never predicted.
  double rank_correlation = 0;
  int ranked = 0;
  std::string model_error;  // the last fit that failed, if any
};

// Spearman's rank correlation of two equally long lists (ties share their mean rank); 0 for
// fewer than two pairs.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

// The strategies `search` knows, by name, and each one's line of help ("random: samples the
// space uniformly; ga: ..."), from one table in search.cpp.
std::vector<std::string> strategies();
std::string strategy_help();

// Runs a strategy over `space` on `f`. `observe` (may be null) hears of each candidate as it
// is recorded (a progress bar, a live table).
SearchResult search(const Space& space, const tir::PrimFunc& f, Measurer& measurer,
                    const SearchOptions& options,
                    const std::function<void(const Candidate&)>& observe = nullptr);

}  // namespace descent::tune
