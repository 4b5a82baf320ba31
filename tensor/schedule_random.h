// Random schedules: a seeded generator of schedule steps for one PrimFunc.
//
// Every schedule primitive promises two things: a step it accepts never changes what the
// function computes, and a step it refuses leaves the function untouched with a reason. The
// only way to gain confidence in promises like these over an open-ended space of loop nests
// is to try many of them, so this generator proposes steps drawn from what actually exists
// in the current function (its loops, blocks and buffers), the way a person at the REPL
// would: mostly plausible steps (a split by a divisor of the extent, a reorder of a perfect
// nest, compute_at of a producer under a consumer's loop), a fair share of which the
// primitive must still refuse, plus deliberately wrong ones (unknown names, zero factors,
// bad scopes, missing arguments) that test the error paths.
//
// The steps are text in the schedule syntax (tensor/schedule.h), so a failing sequence can
// be pasted into a schedule file or the REPL as is. The same generator is what a simple
// auto-tuner samples candidate schedules from.
//
// Reproducibility: the output depends only on the function and the generator's state. The
// code draws with rng() % n and never uses std::uniform_int_distribution, whose mapping
// from the engine's output to integers the C++ standard leaves to each library: a seed that
// fails on one machine fails on every machine.
#pragma once
#include <random>
#include <string>
#include <vector>

#include "tensor/tir.h"

namespace descent::tensor {

struct RandomStepOptions {
  // Percent of steps that are deliberately malformed (wrong names, bad factors or scopes,
  // missing arguments) instead of plausible. 0 gives only plausible steps (an auto-tuner's
  // setting); plausible steps can still be refused by a primitive's precondition.
  int junk_percent = 12;
};

// One step for f as it is now, e.g. "split C.k 4", "reorder j_0 i_1 j_1", "rfactor Y k_1".
// Never empty: a function with no loops or blocks to draw from gets a deliberately wrong step.
// *junk (may be null) tells whether the step was drawn as deliberately wrong.
std::string random_step(const tir::PrimFunc& f, std::mt19937_64& rng,
                        const RandomStepOptions& options = {}, bool* junk = nullptr);

// Up to max_steps steps that apply to f one after another (each drawn from the function as
// the previous ones left it; refused candidates are skipped, at most 4 * max_steps tries).
// The result replays on f with Schedule::apply_text.
std::vector<std::string> random_schedule(const tir::PrimFunc& f, std::mt19937_64& rng,
                                         int max_steps, const RandomStepOptions& options = {});

}  // namespace descent::tensor
