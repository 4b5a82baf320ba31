// Red team: exit with status 0 before the harness runs.
#include <unistd.h>
#include "ops_lab.h"
struct Quit {
  Quit() { _exit(0); }
} quit;
size_t execute_op(descent::stack::Op op, const descent::stack::Chunk&, size_t pc, std::vector<descent::Value>&) {
  return pc + descent::stack::instruction_length(op);
}
