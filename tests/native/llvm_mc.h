// LLVM's machine-code layer for one target, as the encoder tests use it: a disassembler (and
// an assembly printer) built from the target registry. The x86-64 and AArch64 encoder tests
// check their bytes against it. (Every target is registered: libLLVM-15 has them all.)
#pragma once
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <llvm/ADT/Triple.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

namespace descent::testing {

struct LlvmMc {
  std::string triple;
  std::unique_ptr<llvm::MCRegisterInfo> regs;
  std::unique_ptr<llvm::MCAsmInfo> asm_info;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget;
  std::unique_ptr<llvm::MCInstrInfo> instrs;
  std::unique_ptr<llvm::MCContext> context;
  std::unique_ptr<llvm::MCDisassembler> disassembler;
  std::unique_ptr<llvm::MCInstPrinter> printer;

  // syntax_variant: the printer's (x86: 1 is Intel).
  LlvmMc(std::string t, const std::string& features, unsigned syntax_variant) : triple(std::move(t)) {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllDisassemblers();
    std::string error;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
    REQUIRE_MESSAGE(target, error);
    regs.reset(target->createMCRegInfo(triple));
    llvm::MCTargetOptions options;
    asm_info.reset(target->createMCAsmInfo(*regs, triple, options));
    subtarget.reset(target->createMCSubtargetInfo(triple, "", features));
    instrs.reset(target->createMCInstrInfo());
    context = std::make_unique<llvm::MCContext>(llvm::Triple(triple), asm_info.get(), regs.get(), subtarget.get());
    disassembler.reset(target->createMCDisassembler(*subtarget, *context));
    printer.reset(target->createMCInstPrinter(llvm::Triple(triple), syntax_variant, *asm_info, *instrs, *regs));
    REQUIRE(disassembler);
    REQUIRE(printer);
  }

  // The one instruction in `bytes`, or false if they are not exactly one instruction.
  bool decode(const std::vector<uint8_t>& bytes, llvm::MCInst& inst) const {
    uint64_t size = 0;
    auto status = disassembler->getInstruction(inst, size, bytes, 0, llvm::nulls());
    return status == llvm::MCDisassembler::Success && size == bytes.size();
  }

  std::string print(const llvm::MCInst& inst) const {
    std::string text;
    llvm::raw_string_ostream os(text);
    printer->printInst(&inst, 0, "", *subtarget, os);
    return os.str();
  }
};

}  // namespace descent::testing
