// Red team: 2 GB on stdout and stderr, then a wrong answer.
#include <unistd.h>
#include <vector>
#include "ops_lab.h"
size_t execute_op(descent::stack::Op op, const descent::stack::Chunk&, size_t pc, std::vector<descent::Value>&) {
  static bool flooded = false;
  if (!flooded) {
    flooded = true;
    std::vector<char> block(1 << 20, 'x');
    for (int i = 0; i < 1024; ++i) {
      (void)!write(1, block.data(), block.size());
      (void)!write(2, block.data(), block.size());
    }
  }
  return pc + descent::stack::instruction_length(op);
}
