// Red team: five children leave the process group and sleep 90 s holding stdout and stderr.
#include <unistd.h>
#include "ops_lab.h"
struct Linger {
  Linger() {
    for (int i = 0; i < 5; ++i)
      if (fork() == 0) {
        setsid();
        sleep(90);
        _exit(0);
      }
  }
} linger;
size_t execute_op(descent::stack::Op op, const descent::stack::Chunk&, size_t pc, std::vector<descent::Value>&) {
  return pc + descent::stack::instruction_length(op);
}
