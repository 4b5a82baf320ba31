// The two target descriptions (target.h).
#include "native/target.h"

#include "native/a64.h"
#include "native/backend.h"
#include "native/x86.h"

namespace descent::native {

namespace {

std::string xmm_name(int r) { return "xmm" + std::to_string(r); }
const char* a64_gpr(int r) { return a64::x_name(r, false); }
std::string a64_fpr(int r) { return "d" + std::to_string(r); }

}  // namespace

const Target& x86_64_target() {
  // System V AMD64: rax rcx rdx rsi rdi r8-r11 and every xmm register are the callee's to
  // overwrite; rbx rbp r12-r15 are kept. Descent reserves rsp/rbp (the frame), r15 (the
  // runtime context), r14 (the call depth), and rax, rdx, r11, xmm0, xmm1 for the emitter
  // (idiv's fixed registers, spilled operands).
  static const Target t = {
      Arch::X86_64, "x86-64", "System V AMD64",
      RegisterFile{{6 /*rsi*/, 7 /*rdi*/, 1 /*rcx*/, 8, 9, 10},
                   {3 /*rbx*/, 12, 13},
                   {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
                   {},
                   {7 /*rdi*/, 6 /*rsi*/, 2 /*rdx*/, 1 /*rcx*/, 8, 9},
                   8,
                   {4, 5, 15, 14, 0, 2, 11},
                   {"rsp: the stack", "rbp: the frame", "r15: the runtime context", "r14: the call depth",
                    "rax: idiv, results", "rdx: idiv", "r11: the emitter's scratch"}},
      true, true, gpr_name, xmm_name};
  return t;
}

const Target& aarch64_target() {
  // AAPCS64: x0-x7 arguments and results, x8 the indirect result, x9-x15 temporaries, all
  // the callee's to overwrite, as are x16/x17 (IP0/IP1, the linker's veneers) and d0-d7,
  // d16-d31; x19-x28 and the low halves of d8-d15 are kept; x18 is the platform's, x29 the
  // frame pointer, x30 the link register. Descent reserves x28 (the runtime context), x27
  // (the call depth), x16/x17 and d30/d31 (the emitter's scratch).
  static const Target t = {
      Arch::AArch64, "aarch64", "AAPCS64",
      RegisterFile{{9, 10, 11, 12, 13, 14, 15, 8, 7, 6, 5, 4, 3, 2, 1, 0},
                   {19, 20, 21, 22, 23, 24, 25, 26},
                   {16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 7, 6, 5, 4, 3, 2, 1, 0,
                    8, 9, 10, 11, 12, 13, 14, 15},
                   {8, 9, 10, 11, 12, 13, 14, 15},
                   {0, 1, 2, 3, 4, 5, 6, 7},
                   8,
                   {31, 29, 30, 28, 27, 18, 16, 17},
                   {"sp: the stack", "x29: the frame", "x30: the link register", "x28: the runtime context",
                    "x27: the call depth", "x18: the platform's", "x16: the emitter's scratch (IP0)",
                    "x17: the emitter's scratch (IP1)"}},
      false, true, a64_gpr, a64_fpr};
  return t;
}

const Target* find_target(std::string_view name) {
  // Only names no Descent function could be mistaken for (`:native isel f` names a function).
  if (name == "x86-64" || name == "x86_64") return &x86_64_target();
  if (name == "aarch64" || name == "arm64") return &aarch64_target();
  return nullptr;
}

std::string target_names() { return "x86-64, aarch64"; }

const std::vector<Pattern>& patterns(const Target& t) {
  return t.arch == Arch::AArch64 ? a64_patterns() : patterns();
}

}  // namespace descent::native
