// Cross toolchains: linking an object file for another architecture and running the result
// under qemu-user (Debian's gcc-aarch64-linux-gnu, gcc-riscv64-linux-gnu, qemu-user). On a
// machine of that architecture, its own cc and no emulator.
//
//   proc::CrossTools t;
//   if (!proc::find_cross_tools("aarch64", &t, &why)) ...;   // why: which package is missing
//   proc::link_executable(t, "prog.o", "prog", &why);        // <arch>-linux-gnu-gcc prog.o -lm
//   proc::Result r = proc::run_executable(t, "prog", limits); // qemu-aarch64 -L /usr/aarch64-linux-gnu prog
//
// Nothing here knows the project's languages: the object comes from anywhere (Descent's LLVM
// tier writes them, `descent build --target aarch64 --run` uses this).
#pragma once
#include <string>

#include "proc/process.h"

namespace descent::proc {

struct CrossTools {
  std::string arch;     // "aarch64", "riscv64", "x86_64"
  std::string cc;       // the C compiler driver that links for it
  std::string emulator; // "" on a machine of that architecture, else qemu-<arch>
  std::string sysroot;  // the target's libraries, for the emulator's -L
};

// The machine's own architecture, as uname -m says it ("x86_64", "aarch64").
std::string host_arch();

// The tools for `arch` (x86_64, aarch64 or riscv64); false with *why naming the Debian
// package to install when one is missing.
bool find_cross_tools(const std::string& arch, CrossTools* out, std::string* why);

// Links `object` (and libm) into the executable `exe`; false with the linker's message.
// `static_link`: no dynamic loader, so an instruction count starts at the program's own entry.
bool link_executable(const CrossTools& tools, const std::string& object, const std::string& exe, std::string* why,
                     bool static_link = false);

// Runs `exe` (under the emulator when there is one) with these limits; its stdout, stderr and
// exit code in the Result.
Result run_executable(const CrossTools& tools, const std::string& exe, const Limits& limits,
                      const std::atomic<bool>* interrupt = nullptr);

// All of `descent build --run` after the object: find the tools for the triple's
// architecture (x86_64-..., aarch64-..., riscv64-...; "" for this machine), link `object`
// into `exe` and run it. false with *why when a tool is missing or linking fails (wasm32:
// refused); otherwise *result is the run.
bool link_and_run(const std::string& triple, const std::string& object, const std::string& exe,
                  const Limits& limits, const std::atomic<bool>* interrupt, Result* result, std::string* why);

// Runs `exe` under qemu-<arch> (even on a machine of that architecture) one instruction per
// translation block with the execution log on (-singlestep -d nochain,exec), streamed through
// a pipe and counted: *instructions is the number the program executed, start-up included.
Result count_instructions(const CrossTools& tools, const std::string& exe, const Limits& limits,
                          uint64_t* instructions);

}  // namespace descent::proc
