// Features of a loop nest (issue 17): the numbers a cost model reads instead of running the
// kernel. TVM's cost model reads the same kind of thing (its "per-store features"): how much
// work there is, how it is spread over threads, vector lanes and unrolled copies, how many
// bytes each loop level touches and how often each is reused, and how the innermost loop
// walks memory. Every feature is a float, most on a log2 scale (extents span 1 to 10^9).
//
//   std::vector<float> v = tune::features(scheduled);   // feature_names()[k] names v[k]
//
// The features see only the loop nest, never a clock, so they are the same on every machine;
// what they are worth on a given machine is what the model learns from measurements.
#pragma once
#include <string>
#include <vector>

#include "tensor/tir.h"

namespace descent::tune {

// One vector per loop nest, always feature_names().size() long.
std::vector<float> features(const tir::PrimFunc& f);
const std::vector<std::string>& feature_names();

}  // namespace descent::tune
