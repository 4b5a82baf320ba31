// Red team: ignores SIGTERM and sleeps, as a program that will not be stopped politely.
#include <csignal>
#include <unistd.h>
#include "ops_lab.h"
struct Stubborn {
  Stubborn() {
    std::signal(SIGTERM, SIG_IGN);
    for (;;) pause();
  }
} stubborn;
size_t execute_op(descent::stack::Op op, const descent::stack::Chunk&, size_t pc, std::vector<descent::Value>&) {
  return pc + descent::stack::instruction_length(op);
}
