// This machine as an LLVM target: see host.h.
#include "llvm_backend/host.h"

#include <algorithm>
#include <mutex>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm-c/Target.h>
#include <llvm/ADT/Triple.h>
#include <llvm/InitializePasses.h>
#include <llvm/PassRegistry.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

namespace descent::llvmbe {

namespace {

// Detected once: the host does not change while the process runs.
struct Detected {
  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> builder;  // null when detection failed
  std::unique_ptr<llvm::DataLayout> layout;  // of a host TargetMachine
  std::string error;
};

const Detected& detected() {
  static Detected d;
  static std::once_flag once;
  std::call_once(once, [] {
    initialize_native_target();
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) {
      d.error = error_text(jtmb.takeError());
      return;
    }
    // Position-independent code reaches the runtime and the globals (anywhere in the
    // address space) through the GOT.
    jtmb->setRelocationModel(llvm::Reloc::PIC_);
    jtmb->setCodeModel(llvm::CodeModel::Small);
    auto layout = jtmb->getDefaultDataLayoutForTarget();
    if (!layout) {
      d.error = error_text(layout.takeError());
      return;
    }
    d.layout = std::make_unique<llvm::DataLayout>(std::move(*layout));
    d.builder = std::make_unique<llvm::orc::JITTargetMachineBuilder>(std::move(*jtmb));
  });
  return d;
}

llvm::JITEvaluatedSymbol at(const void* address) {
  return llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(address),
                                  llvm::JITSymbolFlags::Exported);
}

}  // namespace

void initialize_descent_targets() {
  initialize_native_target();
  static std::once_flag once;
  std::call_once(once, [] {
    // This machine's family is initialize_native_target's (i386 and x86-64 are one target).
    const llvm::Triple host(llvm::sys::getProcessTriple());
    // The other families Descent targets, each registered in full (info, target, MC layer,
    // assembly printer) unless it is this machine's.
    struct Family {
      bool (llvm::Triple::*is)() const;
      void (*init[4])();
    };
    static const Family families[] = {
        {&llvm::Triple::isX86,
         {LLVMInitializeX86TargetInfo, LLVMInitializeX86Target, LLVMInitializeX86TargetMC,
          LLVMInitializeX86AsmPrinter}},
        {&llvm::Triple::isAArch64,
         {LLVMInitializeAArch64TargetInfo, LLVMInitializeAArch64Target, LLVMInitializeAArch64TargetMC,
          LLVMInitializeAArch64AsmPrinter}},
        {&llvm::Triple::isRISCV,
         {LLVMInitializeRISCVTargetInfo, LLVMInitializeRISCVTarget, LLVMInitializeRISCVTargetMC,
          LLVMInitializeRISCVAsmPrinter}},
        {&llvm::Triple::isWasm,
         {LLVMInitializeWebAssemblyTargetInfo, LLVMInitializeWebAssemblyTarget,
          LLVMInitializeWebAssemblyTargetMC, LLVMInitializeWebAssemblyAsmPrinter}},
    };
    for (const Family& f : families)
      if (!(host.*f.is)())
        for (auto* init : f.init) init();
    llvm::initializeCodeGen(*llvm::PassRegistry::getPassRegistry());
  });
}

void initialize_native_target() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // LLVM 15's loop vectorizer miscompiles an interleaved access group in which a store and
    // a later load of one address share an iteration: a reduction's init store and its first
    // update, once unrolling has put them side by side (rfactor of a split reduction loop
    // whose factor does not divide it: tests/tensor/random_schedule_test.cpp, "fixed
    // backend bug"). Descent vectorizes its own loops explicitly (Vectorized loops); LLVM's
    // auto-vectorizer keeps working, without interleaving. An LLVM option is process-wide,
    // like the ones PoCL sets (vectorizer-min-trip-count=2, which makes small loops hit the
    // bug), so PoCL's own compiles in this process avoid it too.
    auto& options = llvm::cl::getRegisteredOptions();
    auto it = options.find("enable-interleaved-mem-accesses");
    if (it != options.end() && it->second->getNumOccurrences() == 0)
      it->second->addOccurrence(0, "enable-interleaved-mem-accesses", "false");
  });
}

llvm::CodeGenOpt::Level codegen_level(int opt_level) {
  static const llvm::CodeGenOpt::Level levels[] = {llvm::CodeGenOpt::None, llvm::CodeGenOpt::Less,
                                                   llvm::CodeGenOpt::Default,
                                                   llvm::CodeGenOpt::Aggressive};
  return levels[std::clamp(opt_level, 0, 3)];
}

std::string error_text(llvm::Error e) { return llvm::toString(std::move(e)); }

const llvm::orc::JITTargetMachineBuilder* host_machine_builder(std::string* error) {
  const Detected& d = detected();
  if (!d.builder && error) *error = d.error;
  return d.builder.get();
}

bool describe_host(HostCpu* out, std::string* error) {
  static HostCpu cpu;
  static std::string failure;
  static bool ok = false;
  static std::once_flag once;
  std::call_once(once, [] {
    const llvm::orc::JITTargetMachineBuilder* b = host_machine_builder(&failure);
    if (!b) return;
    cpu.triple = b->getTargetTriple().str();
    cpu.cpu = b->getCPU();
    cpu.features = b->getFeatures().getString();
    cpu.data_layout = detected().layout->getStringRepresentation();
    ok = true;
  });
  if (!ok) {
    if (error) *error = failure;
    return false;
  }
  *out = cpu;
  return true;
}

std::unique_ptr<llvm::TargetMachine> make_host_target_machine(int opt_level, std::string* error) {
  const llvm::orc::JITTargetMachineBuilder* host = host_machine_builder(error);
  if (!host) return nullptr;
  llvm::orc::JITTargetMachineBuilder b = *host;
  b.setCodeGenOptLevel(codegen_level(opt_level));
  auto tm = b.createTargetMachine();
  if (!tm) {
    std::string text = error_text(tm.takeError());
    if (error) *error = std::move(text);
    return nullptr;
  }
  return std::move(*tm);
}

std::unique_ptr<llvm::orc::LLJIT> make_host_jit(const HostJitOptions& options, std::string* error) {
  const llvm::orc::JITTargetMachineBuilder* host = host_machine_builder(error);
  if (!host) return nullptr;
  llvm::orc::JITTargetMachineBuilder jtmb = *host;
  llvm::orc::LLJITBuilder builder;
  builder.setDataLayout(*detected().layout);
  if (!options.static_initializers) builder.setPlatformSetUp(llvm::orc::setUpInactivePlatform);
  if (options.compiler)
    builder.setCompileFunctionCreator(options.compiler);
  else
    jtmb.setCodeGenOptLevel(codegen_level(options.opt_level));
  builder.setJITTargetMachineBuilder(std::move(jtmb));
  auto jit = builder.create();
  if (!jit) {
    *error = error_text(jit.takeError());
    return nullptr;
  }
  // Functions of the process (expf, memset, fmod, ...) are found when the code asks for them.
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!process) {
    *error = error_text(process.takeError());
    return nullptr;
  }
  (*jit)->getMainJITDylib().addGenerator(std::move(*process));
  if (!define_symbols(**jit, options.symbols, error)) return nullptr;
  return std::move(*jit);
}

bool define_symbols(llvm::orc::LLJIT& jit, const SymbolAddresses& symbols, std::string* error,
                    llvm::orc::JITDylib* library) {
  llvm::orc::SymbolMap map;
  for (const auto& [name, address] : symbols) map[jit.mangleAndIntern(name)] = at(address);
  if (!library) library = &jit.getMainJITDylib();
  if (auto e = library->define(llvm::orc::absoluteSymbols(std::move(map)))) {
    *error = error_text(std::move(e));
    return false;
  }
  return true;
}

void DiagnosticSink::attach(llvm::LLVMContext& context) {
  context.setDiagnosticHandlerCallBack(&DiagnosticSink::handle, this);
}

void DiagnosticSink::handle(const llvm::DiagnosticInfo& info, void* sink) {
  if (info.getSeverity() != llvm::DS_Error) return;
  auto* self = static_cast<DiagnosticSink*>(sink);
  llvm::raw_string_ostream out(self->errors);
  if (!self->errors.empty()) out << "\n";
  llvm::DiagnosticPrinterRawOStream printer(out);
  info.print(printer);
}

}  // namespace descent::llvmbe
