// Search spaces: schedules with random decisions in them (issue 17, docs/tuning.md).
//
// A schedule (tensor/schedule.h) says exactly what to do: `split i 32`. A search space is the
// same text with some choices left open, the way the MLC course writes a "probabilistic
// program" and TVM's MetaSchedule samples one (sample_perfect_tile, sample_categorical):
//
//   split i ?                  a factor drawn from the divisors of i's extent (as the loop
//                              is when the line runs: after the earlier steps)
//   split j ?{4,8,16}          a factor drawn from the list
//   tile i j ? ?               both: i's divisors, then j's
//   maybe 0.5 unroll k_1       the step applied with probability 0.5 (else skipped)
//   one_of vectorize j_1 | unroll j_1    one of the alternatives (each a step, `?` allowed)
//   maybe 0.5 cache_read C B local ; compute_at B_local j_0
//                              an alternative of several steps, separated by `;`, taken
//                              together (in `maybe` and in each alternative of `one_of`)
//
// Every choice is a decision point; taking each one gives a sample, whose trace is an
// ordinary schedule (no `?` left) that replays to the same loop nest. The decisions alone are
// a sample's genome: a list of small integers, one per point met, in order. Replaying a
// space with a list of decisions makes the same sample, so a tuner can keep, mutate and
// cross decision lists (the GA of the seed notes) and a database can store them. A decision
// out of range is taken modulo the number of options, so every list of integers is a valid
// sample: mutation and crossover never need to know the options.
//
// Reproducibility: samples depend only on the space, the function and the generator's
// state; draws use rng() % n (never std::uniform_*_distribution, whose results differ
// between standard libraries), as tensor/schedule_random.h does.
#pragma once
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/tir.h"

namespace descent::tune {

// One line of a space: a step (possibly with `?` arguments), a `maybe`, or a `one_of`.
struct SpaceLine {
  enum class Kind { Step, Maybe, OneOf };
  Kind kind = Kind::Step;
  int line = 0;                          // 1-based, in the space's text
  double probability = 1;                // Maybe: the chance the step is applied
  std::vector<std::string> alternatives;  // Step, Maybe: one; OneOf: two or more
};

struct Space {
  std::vector<SpaceLine> lines;
  std::string text;  // as written
  // Decision points a sample meets at most (every `?`, `maybe` and `one_of`).
  int max_decisions() const;
};

// Parses a space. False with *error "line N: ..." for a malformed line: `maybe` without a
// probability in [0, 1] or a step, `one_of` with fewer than two alternatives, `?` where no
// loop extent gives it meaning (only split and tile take one), an empty or unclosed `?{}`.
bool parse_space(std::string_view text, Space* out, std::string* error);

// A decision point met by a sample: where, what was chosen among what.
struct Decision {
  int line = 0;
  std::string what;                  // "factor of i (extent 128)", "maybe unroll k_1", ...
  std::vector<std::string> options;  // "1", "2", "4", ... / "skip", "apply" / the steps
  int chosen = 0;
};

struct Sample {
  bool ok = false;
  std::string error;             // the first step a primitive refused: "line 3 (split i 48): ..."
  std::vector<int> decisions;    // the genome: one index per decision point, in order
  std::vector<Decision> points;  // the same, explained
  std::string trace;             // the schedule taken, one step per line (no `?`)
  tir::PrimFunc func;            // the scheduled function (ok only)
};

// Takes every decision with `choose(point, number of options)`, which returns an index.
Sample realize(const Space& space, const tir::PrimFunc& f,
               const std::function<int(const Decision&, int)>& choose);
// Draws every decision from rng.
Sample sample(const Space& space, const tir::PrimFunc& f, std::mt19937_64& rng);
// Takes decisions[k] (modulo the options) at the k-th point; points past the end take 0.
Sample replay(const Space& space, const tir::PrimFunc& f, const std::vector<int>& decisions);

// The divisors of n in increasing order (1 and n included): the options of `?`.
std::vector<int64_t> divisors(int64_t n);

}  // namespace descent::tune
