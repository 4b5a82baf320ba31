// A program image: what the native backend emitted for every body of a run, for either target,
// written out as one C file (the code as words or bytes, a small runtime around it) that the
// target's gcc links statically and qemu-user runs (or this machine, for its own architecture:
// image_engine.cpp). Text in, text out: nothing here starts a process.
//
// The runtime is the in-process x86-64 engine's (engine.cpp) in C: the same Context at the same offsets
// in x28 or r15, the print helpers (floats in the walker's shortest round-trip layout), libm, the
// slow-path trampoline (it saves every caller-saved register: AArch64's written here in
// assembly, x86-64's the bytes frame.cpp makes for the engine) and the error exit.
// How it reports back: run as `prog --descent STEP_LIMIT`, on file descriptor 3, as lines:
// "steps N" (slow-path entries: back-edges and calls while a limit watches), "site N" (a
// runtime error at site N), "interrupted N" (the step limit), then
// "global I BITS DEFINED" for every global, so the REPL's next input sees what this one
// assigned. Without it (the ELF run by hand), an error prints its line on stderr and exits 1.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "native/backend.h"

namespace descent::native {

struct NativeImage {
  Arch arch = Arch::AArch64;
  using Code = std::vector<uint8_t>;
  std::vector<const Code*> functions;        // by the Module's function index; null: none
  const Code* top = nullptr;                 // the top-level code: entered with the Context as
                                             // its one argument
  std::vector<std::string> strings;          // print's strings, numbered as emission numbered them
  std::vector<std::string> site_text;        // per site: "3:5: runtime error: division by zero"
  std::vector<uint8_t> site_is_call;         // per site: a call's depth check (stack overflow)
  std::vector<int64_t> globals;              // the globals' bits when the run starts
  std::vector<uint8_t> defined;
};

// The whole C file.
std::string image_c_source(const NativeImage& image);

}  // namespace descent::native
