// Lab peephole: superinstructions as a peephole pass (see peephole_lab.h and README.md).
#include "peephole_lab.h"

using namespace descent::stack;

size_t fuse_at(const std::vector<Instruction>& code, size_t i, Instruction* fused) {
  (void)code, (void)i, (void)fused;
  return 0;  // fuses nothing yet: every program runs, one dispatch per plain instruction
}
