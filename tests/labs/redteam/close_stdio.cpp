// Red team: closes stdin, stdout, stderr and the channel, then answers nothing.
#include <unistd.h>
#include "ops_lab.h"
struct Shut {
  Shut() {
    for (int fd = 0; fd < 4; ++fd) close(fd);
  }
} shut;
size_t execute_op(descent::stack::Op op, const descent::stack::Chunk&, size_t pc, std::vector<descent::Value>&) {
  return pc + descent::stack::instruction_length(op);
}
