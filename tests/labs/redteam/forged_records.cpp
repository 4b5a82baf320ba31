// Red team: a static constructor writes records of its own on fd 3 (the channel) and exits:
// answers made up without the inputs the checker will draw.
#include <cstring>
#include <unistd.h>
#include "ops_lab.h"
struct Fake {
  Fake() {
    const char line[] = "execute_op 1 2 7 1\n";
    for (int i = 0; i < 500; ++i) (void)!write(3, line, std::strlen(line));
    _exit(0);
  }
} fake;
size_t execute_op(descent::stack::Op op, const descent::stack::Chunk&, size_t pc, std::vector<descent::Value>&) {
  return pc + descent::stack::instruction_length(op);
}
