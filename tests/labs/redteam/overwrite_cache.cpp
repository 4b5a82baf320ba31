// Red team: truncate every compiled harness in the per-user cache (the test writes its path).
#include <dirent.h>
#include <cstdio>
#include <string>
#include "ops_lab.h"
struct Spoil {
  Spoil() {
    std::string dir = "@CACHE@";
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d))
        if (std::FILE* f = std::fopen((dir + "/" + e->d_name).c_str(), "w")) std::fclose(f);
      closedir(d);
    }
  }
} spoil;
size_t execute_op(descent::stack::Op op, const descent::stack::Chunk&, size_t pc, std::vector<descent::Value>&) {
  return pc + descent::stack::instruction_length(op);
}
