// Red team: write beside the work folder and in the shared /tmp (the test writes the path).
#include <cstdio>
#include "ops_lab.h"
struct Scribble {
  Scribble() {
    for (const char* p : {"@OUTSIDE@/pwned.txt", "/tmp/descent-redteam-pwned.txt"})
      if (std::FILE* f = std::fopen(p, "w")) {
        std::fputs("pwned\n", f);
        std::fclose(f);
      }
  }
} scribble;
size_t execute_op(descent::stack::Op op, const descent::stack::Chunk&, size_t pc, std::vector<descent::Value>&) {
  return pc + descent::stack::instruction_length(op);
}
