// Red team: a static constructor that never returns.
#include "ops_lab.h"
volatile int spin = 1;
struct Spin {
  Spin() {
    while (spin) {
    }
  }
} forever;
size_t execute_op(descent::stack::Op op, const descent::stack::Chunk&, size_t pc, std::vector<descent::Value>&) {
  return pc + descent::stack::instruction_length(op);
}
