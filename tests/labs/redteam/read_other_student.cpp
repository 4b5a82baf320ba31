// Red team: read another student's work (the test writes that student's folder's path).
#include <cstdio>
#include <cstdlib>
#include "ops_lab.h"
struct Peek {
  Peek() {
    if (std::FILE* f = std::fopen("@OTHER@/ops.cpp", "r")) {
      std::fclose(f);
      std::abort();
    }
  }
} peek;
size_t execute_op(descent::stack::Op op, const descent::stack::Chunk&, size_t pc, std::vector<descent::Value>&) {
  return pc + descent::stack::instruction_length(op);
}
