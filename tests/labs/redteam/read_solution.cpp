// Red team: read the reference solution at run time (fopen). If it can, it crashes on
// purpose, so the test sees the difference between "could read" (crash) and "could not" (fail).
#include <cstdio>
#include <cstdlib>
#include "ops_lab.h"
struct Peek {
  Peek() {
    if (std::FILE* f = std::fopen("@SOURCE_ROOT@/labs/solutions/stack_ops/ops.cpp", "r")) {
      std::fclose(f);
      std::abort();
    }
  }
} peek;
size_t execute_op(descent::stack::Op op, const descent::stack::Chunk&, size_t pc, std::vector<descent::Value>&) {
  return pc + descent::stack::instruction_length(op);
}
