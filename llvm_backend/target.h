// Machine code made visible: LLVM IR -> MIR -> assembly (with encodings) -> object files,
// for several target triples.
//
// LLVM's code generator lowers a module in stages (docs/llvm.md, "Machine code"):
//   SelectionDAG built per basic block -> type and operation legalisation -> instruction
//   selection (finalize-isel: machine instructions on virtual registers) -> scheduling ->
//   register allocation (virtual registers become physical ones) -> prologue/epilogue ->
//   emission (assembly text, or encoded bytes in an object file).
// Every function here works on any llvm::Module and never changes it: each call copies the
// module into a private LLVMContext, retargets the copy (triple, data layout, no host CPU
// attributes) and runs the codegen pipeline of that target on the copy. So one module can be
// shown for every target, from any thread, while its own context is in use elsewhere.
//
//   std::string err;
//   std::string asm_text = emit_asm(module, "aarch64", 2, /*with_encodings=*/true, &err);
//   std::string mir = emit_mir(module, "x86-64", 2, "regalloc", &err);
//   emit_object(module, "host", 2, "prog.o", &err);   // then: cc prog.o -lm -o prog
//
// Errors are values: on failure a function returns "" / false and, when `error` is not null,
// sets it to a one-line message (several lines for verifier output). Nothing is printed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class Module;
}

namespace descent::llvmbe {

// The triples Descent shows machine code for, in display order:
// x86_64-unknown-linux-gnu, aarch64-unknown-linux-gnu, riscv64-unknown-linux-gnu,
// wasm32-unknown-unknown.
std::vector<std::string> supported_targets();

// A user's target name -> the triple to generate code for. Accepts a supported triple, an
// alias (x86-64 x86_64 x64 | aarch64 arm64 | riscv64 rv64 | wasm32 wasm; any case), "host"
// or "" (this machine's default triple, for objects to link here), or any other full triple
// whose architecture is one of the four (x86_64-pc-linux-gnu). Anything else: "" and
// "unknown target 'T'; supported targets: ..." listing every triple and alias.
std::string resolve_target(const std::string& name, std::string* error);

// Assembly text for `triple` (a name resolve_target accepts) at codegen level -O0..-O3,
// verbose (block and loop comments). With `with_encodings`, each instruction is followed by
// its encoded bytes, as `llc -show-mc-encoding` prints them:
//   addq $10, %rax                # encoding: [0x48,0x83,0xc0,0x0a]
// (a byte still waiting for a relocation prints as A, with a "fixup" line below).
// `opt_level` drives only the code generator (like llc -O); run the IR pipeline first for
// optimised IR.
std::string emit_asm(const llvm::Module& module, const std::string& triple, int opt_level,
                     bool with_encodings, std::string* error);

// Stop points emit_mir understands besides any codegen pass name (llc -debug-pass=Arguments
// lists them: "machine-scheduler", "prologepilog", ...):
inline constexpr const char* kMirAfterIsel = "finalize-isel";  // alias "isel": virtual registers
inline constexpr const char* kMirAfterRegalloc = "regalloc";   // alias "ra": physical registers
                                                               // (wasm: after explicit locals)
// Machine IR (LLVM's .mir text: one YAML document per function, its body in MIR syntax) of
// every defined function as it stands right after the codegen pass `stop_after`, like
// `llc -stop-after=PASS` without the IR header. After "finalize-isel" instructions use
// virtual registers (%0, %1, ...); after "regalloc" physical ones ($rdi, $x0, $x10, ...).
// Error when the pass does not run for that target at that level.
std::string emit_mir(const llvm::Module& module, const std::string& triple, int opt_level,
                     const std::string& stop_after, std::string* error);

// emit_mir's text cut down to what a student reads: per function a "; function NAME" line
// and its body (blocks and instructions), without the YAML frame, stack and register-class
// fields. Text that is not MIR comes back unchanged.
std::string compact_mir(const std::string& mir);

// A relocatable object file (ELF for the Linux triples, a wasm object for wasm32) written to
// `path`. Linux objects are position-independent, so `cc prog.o -o prog` links them into
// Debian's default PIE executables.
bool emit_object(const llvm::Module& module, const std::string& triple, int opt_level,
                 const std::string& path, std::string* error);

// The same object file's bytes, in memory.
bool emit_object_bytes(const llvm::Module& module, const std::string& triple, int opt_level,
                       std::vector<uint8_t>* bytes, std::string* error);

}  // namespace descent::llvmbe
