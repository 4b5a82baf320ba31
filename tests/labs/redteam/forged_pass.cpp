// Red team: a static constructor prints the harness's old verdict and exits before main.
#include <cstdio>
#include <unistd.h>
#include "ops_lab.h"
struct Fake {
  Fake() {
    std::fputs("PASS\n", stdout);
    std::fflush(stdout);
    _exit(0);
  }
} fake;
size_t execute_op(descent::stack::Op op, const descent::stack::Chunk&, size_t pc, std::vector<descent::Value>&) {
  return pc + descent::stack::instruction_length(op);
}
