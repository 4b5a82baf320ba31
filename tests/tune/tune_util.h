// Helpers of the tuner's tests: the prelude's matmul as a loop nest, and a space that parses.
#pragma once
#include <doctest/doctest.h>

#include <string>

#include "pipeline/pipeline.h"
#include "tensor/tir.h"
#include "tune/space.h"

namespace descent::testing {

// The prelude's matmul lowered for n = m = k = `size`, unscheduled.
inline tir::PrimFunc matmul(int64_t size) {
  Session s;
  tir::PrimFunc f;
  std::string error;
  REQUIRE_MESSAGE(s.lower_kernel("matmul", {{"n", size}, {"m", size}, {"k", size}}, "", &f, &error), error);
  return f;
}

inline tune::Space parsed(const std::string& text) {
  tune::Space space;
  std::string error;
  REQUIRE_MESSAGE(tune::parse_space(text, &space, &error), error);
  return space;
}

}  // namespace descent::testing
