// Listings as a student reads them, each line with the source line it came from: the
// assembly cut down as Compiler Explorer's filters cut it, and the debug locations of
// assembly (.loc) and IR (!dbg) turned into data, so a front end colours lines by source
// line without parsing anything (viz/panes/machine.cpp, viz/panes/llvm.cpp).
#pragma once
#include <string>
#include <vector>

namespace llvm {
class Module;
}

namespace descent::llvmbe {

// A view's text and, for each of its lines (text ends in '\n'; every line counts once), the
// line of the source it came from: 1-based, in the input that defined the code; 0 for lines
// of no source line (labels, directives, code the compiler made up).
struct Listing {
  std::string text;
  std::vector<int> lines;
};

// LLVM's assembly text (with debug line tables, so with `.loc FILE LINE COL` directives) as
// a listing. Each instruction gets the line of the last .loc before it in its function; a
// comment-only line continuing an instruction (a fixup) gets the instruction's line.
// Without `directives` the listing keeps what Compiler Explorer keeps with its "Directives"
// and "Unused labels" filters on: instructions, labels (a local .L label only where code
// refers to it), comments in code, and data under a label that is kept (a string constant's
// .asciz); not .text, .p2align, .cfi_*, .loc, .section, .type, .size, .file, the DWARF
// sections ... WebAssembly's .functype and .local stay: they are the function's signature
// and its numbered locals, which the instructions use.
Listing asm_listing(const std::string& text, bool directives);

// The module printed as `llvm::Module::print` prints it after llvm::StripDebugInfo (so the
// same text as the module generated without debug info: no !dbg, no DI metadata), with
// each instruction's line from its debug location. Strips the module's debug info.
Listing ir_listing(llvm::Module& module);

}  // namespace descent::llvmbe
