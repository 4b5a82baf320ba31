// Machine code for several targets: see target.h. The one translation unit of Descent that
// includes LLVM's code generator headers.
//
// [SECTION] targets: the supported triples, aliases, one-time LLVM initialisation
// [SECTION] copies: the module copied into a private context and retargeted
// [SECTION] emission: assembly and objects through TargetMachine::addPassesToEmitFile
// [SECTION] MIR: the codegen pipeline built by hand with a capture pass inserted after a pass
#include "llvm_backend/target.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <string_view>

#include "llvm-c/Target.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Triple.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/CodeGen/MIRPrinter.h"
#include "llvm/CodeGen/MachineFunctionPass.h"
#include "llvm/CodeGen/MachineModuleInfo.h"
#include "llvm/CodeGen/TargetPassConfig.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/InitializePasses.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Pass.h"
#include "llvm/PassInfo.h"
#include "llvm/PassRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Host.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"

#include "llvm_backend/host.h"

namespace descent::llvmbe {
namespace {

void set_error(std::string* error, std::string message) {
  if (error) *error = std::move(message);
}

// ---------------------------------------------------------------------------------------
// [SECTION] targets
// ---------------------------------------------------------------------------------------

struct TargetEntry {
  const char* triple;
  std::vector<const char*> aliases;  // lower case; the first one is shown in errors first
};

const std::vector<TargetEntry>& target_table() {
  static const std::vector<TargetEntry> table = {
      {"x86_64-unknown-linux-gnu", {"x86-64", "x86_64", "x64"}},
      {"aarch64-unknown-linux-gnu", {"aarch64", "arm64"}},
      {"riscv64-unknown-linux-gnu", {"riscv64", "rv64"}},
      {"wasm32-unknown-unknown", {"wasm32", "wasm"}},
  };
  return table;
}

bool supported_arch(llvm::Triple::ArchType arch) {
  return arch == llvm::Triple::x86_64 || arch == llvm::Triple::aarch64 ||
         arch == llvm::Triple::riscv64 || arch == llvm::Triple::wasm32;
}

// The four back ends, their assembly printers (which also emit objects), and the codegen
// pass registry (emit_mir looks passes up by name), through host.h's one registration point
// (a target registered twice while another thread compiles would be a data race). Nothing
// else: no AsmParsers, no other targets (disassemblers: native/'s tests register their own).
void initialize_llvm() { initialize_descent_targets(); }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string target_list() {
  std::string out;
  for (const auto& entry : target_table()) {
    if (!out.empty()) out += ", ";
    out += entry.triple;
    out += " (";
    for (size_t i = 0; i < entry.aliases.size(); ++i) {
      if (i) out += ", ";
      out += entry.aliases[i];
    }
    out += ")";
  }
  return out + ", or host";
}

// CPU, features and ABI per architecture: fixed, so the assembly a student sees does not
// depend on the machine the REPL runs on. riscv64 gets RV64GC with the lp64d ABI, as clang
// and Linux distributions use (plain RV64I would call __muldi3 for every multiply).
struct CpuChoice {
  const char* cpu;
  const char* features;
  const char* abi;
};

CpuChoice cpu_for(const llvm::Triple& triple) {
  switch (triple.getArch()) {
    case llvm::Triple::x86_64: return {"x86-64", "", ""};
    case llvm::Triple::riscv64: return {"generic-rv64", "+m,+a,+f,+d,+c", "lp64d"};
    default: return {"generic", "", ""};
  }
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(const std::string& name, int opt_level,
                                                         bool with_encodings,
                                                         std::string* error) {
  initialize_llvm();
  if (opt_level < 0 || opt_level > 3) {
    set_error(error, "optimisation level must be 0..3, not " + std::to_string(opt_level));
    return nullptr;
  }
  std::string triple_text = resolve_target(name, error);
  if (triple_text.empty()) return nullptr;
  llvm::Triple triple(triple_text);
  std::string lookup_error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple_text, lookup_error);
  if (!target) {
    set_error(error, "no LLVM back end for '" + triple_text + "': " + lookup_error);
    return nullptr;
  }
  CpuChoice cpu = cpu_for(triple);
  llvm::TargetOptions options;
  options.MCOptions.AsmVerbose = true;
  options.MCOptions.ShowMCEncoding = with_encodings;
  options.MCOptions.ABIName = cpu.abi;
  // Position-independent code links into the PIE executables Debian's cc makes by default.
  llvm::Optional<llvm::Reloc::Model> reloc;
  if (!triple.isWasm()) reloc = llvm::Reloc::PIC_;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple_text, cpu.cpu, cpu.features, options, reloc, llvm::None, codegen_level(opt_level)));
  if (!machine) set_error(error, "LLVM could not create a target machine for " + triple_text);
  return machine;
}

// ---------------------------------------------------------------------------------------
// [SECTION] copies
// ---------------------------------------------------------------------------------------

// A copy of the caller's module in a context of its own (so the copy can be generated while
// the caller's context is in use on another thread, and its diagnostics go to our sink),
// retargeted to the target machine. Bitcode is the copy's vehicle: llvm::CloneModule can
// only copy within the same context. Members are destroyed module first, then context.
struct ModuleCopy {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  DiagnosticSink diagnostics;  // host.h: LLVM's code generation errors, collected
};

std::unique_ptr<ModuleCopy> copy_for_target(const llvm::Module& original,
                                            llvm::TargetMachine& machine, std::string* error) {
  std::string verifier_text;
  llvm::raw_string_ostream verifier_out(verifier_text);
  if (llvm::verifyModule(original, &verifier_out)) {
    verifier_out.flush();
    while (!verifier_text.empty() && verifier_text.back() == '\n') verifier_text.pop_back();
    set_error(error, "invalid LLVM IR: " + verifier_text);
    return nullptr;
  }
  llvm::SmallString<0> bitcode;
  {
    llvm::raw_svector_ostream out(bitcode);
    llvm::WriteBitcodeToFile(original, out);
  }
  auto copy = std::make_unique<ModuleCopy>();
  copy->context = std::make_unique<llvm::LLVMContext>();
  copy->diagnostics.attach(*copy->context);
  auto parsed = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(bitcode.str(), original.getModuleIdentifier()), *copy->context);
  if (!parsed) {
    set_error(error, "could not copy the module: " + llvm::toString(parsed.takeError()));
    return nullptr;
  }
  copy->module = std::move(*parsed);
  llvm::Module& module = *copy->module;
  module.setTargetTriple(machine.getTargetTriple().str());
  module.setDataLayout(machine.createDataLayout());
  // A module made for the JIT may carry this machine's CPU; the target machine decides.
  for (llvm::Function& function : module) {
    function.removeFnAttr("target-cpu");
    function.removeFnAttr("target-features");
    function.removeFnAttr("tune-cpu");
  }
  return copy;
}

bool check_diagnostics(const ModuleCopy& copy, const std::string& triple, std::string* error) {
  if (copy.diagnostics.errors.empty()) return true;
  set_error(error, "code generation for " + triple + " failed: " + copy.diagnostics.errors);
  return false;
}

// ---------------------------------------------------------------------------------------
// [SECTION] emission
// ---------------------------------------------------------------------------------------

bool emit_file(const llvm::Module& original, const std::string& name, int opt_level,
               bool with_encodings, llvm::CodeGenFileType kind, llvm::SmallString<0>* out,
               std::string* error) {
  auto machine = make_target_machine(name, opt_level, with_encodings, error);
  if (!machine) return false;
  auto copy = copy_for_target(original, *machine, error);
  if (!copy) return false;
  const std::string triple = machine->getTargetTriple().str();
  llvm::raw_svector_ostream stream(*out);
  llvm::legacy::PassManager passes;
  passes.add(new llvm::TargetLibraryInfoWrapperPass(machine->getTargetTriple()));
  // The copy was verified before it was made; the codegen verifier would only repeat that.
  if (machine->addPassesToEmitFile(passes, stream, nullptr, kind, /*DisableVerify=*/true)) {
    set_error(error, "LLVM cannot emit this kind of file for " + triple);
    return false;
  }
  passes.run(*copy->module);
  return check_diagnostics(*copy, triple, error);
}

// ---------------------------------------------------------------------------------------
// [SECTION] MIR
// ---------------------------------------------------------------------------------------
//
// llc's -stop-after and -print-after are process-global command-line options, which would
// also fire inside every other compile in the process (the JIT, PoCL). Instead emit_mir
// builds the codegen pipeline itself, as LLVMTargetMachine::addPassesToEmitFile does
// (TargetPassConfig: addISelPasses + addMachinePasses, no AsmPrinter), after calling
// TargetPassConfig::insertPass(PASS, CaptureMIR) so that the pipeline schedules a
// CaptureMIR pass right after PASS. CaptureMIR prints each MachineFunction with
// llvm::printMIR into the capture of the calling thread (the legacy pass manager runs the
// whole pipeline on that thread). It is inserted by pass ID, not as an instance, so a pass
// that runs twice (x86 runs "greedy" twice) gets a fresh capture pass each time.

struct MirCapture {
  std::string text;  // the functions' MIR, one YAML document each
  int runs = 0;      // functions captured
};
thread_local MirCapture* current_capture = nullptr;

class CaptureMIR : public llvm::MachineFunctionPass {
 public:
  static char ID;
  CaptureMIR() : llvm::MachineFunctionPass(ID) {}
  llvm::StringRef getPassName() const override { return "Descent MIR capture"; }
  void getAnalysisUsage(llvm::AnalysisUsage& usage) const override {
    usage.setPreservesAll();
    llvm::MachineFunctionPass::getAnalysisUsage(usage);
  }
  bool runOnMachineFunction(llvm::MachineFunction& function) override {
    if (!current_capture) return false;
    llvm::raw_string_ostream out(current_capture->text);
    llvm::printMIR(out, function);
    ++current_capture->runs;
    return false;
  }
};
char CaptureMIR::ID = 0;

// Pass::createPass(ID), which insertPass relies on, finds constructors in the PassRegistry.
void register_capture_pass() {
  static std::once_flag once;
  std::call_once(once, [] {
    static llvm::PassInfo info("Descent MIR capture", "descent-capture-mir", &CaptureMIR::ID,
                               llvm::PassInfo::NormalCtor_t(llvm::callDefaultCtor<CaptureMIR>),
                               /*isCFGOnly=*/false, /*is_analysis=*/false);
    llvm::PassRegistry::getPassRegistry()->registerPass(info);
  });
}

// The codegen passes after which to capture, by registered pass argument name.
std::vector<std::string> capture_points(const std::string& stop_after) {
  const std::string name = lower(stop_after);
  if (name == kMirAfterIsel || name == "isel") return {kMirAfterIsel};
  // Only one of these runs in any one pipeline: the greedy allocator's rewriter (-O1..3),
  // the fast allocator (-O0), or, on WebAssembly, which has no registers to allocate, the
  // pass that turns virtual registers into explicit wasm locals.
  if (name == kMirAfterRegalloc || name == "ra")
    return {"virtregrewriter", "regallocfast", "wasm-explicit-locals"};
  return {stop_after};
}

bool has_definitions(const llvm::Module& module) {
  for (const llvm::Function& function : module)
    if (!function.isDeclaration()) return true;
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------

std::vector<std::string> supported_targets() {
  std::vector<std::string> out;
  for (const auto& entry : target_table()) out.push_back(entry.triple);
  return out;
}

std::string resolve_target(const std::string& name, std::string* error) {
  const std::string key = lower(name);
  if (key.empty() || key == "host" || key == "native") {
    std::string host = llvm::Triple::normalize(llvm::sys::getDefaultTargetTriple());
    if (supported_arch(llvm::Triple(host).getArch())) return host;
    set_error(error, "this machine's triple '" + host + "' is not supported; supported targets: " +
                         target_list());
    return "";
  }
  for (const auto& entry : target_table()) {
    if (key == entry.triple) return entry.triple;
    for (const char* alias : entry.aliases)
      if (key == alias) return entry.triple;
  }
  // Another full triple of a supported architecture (x86_64-pc-linux-gnu, arm64-apple-macos).
  if (std::count(key.begin(), key.end(), '-') >= 1) {
    llvm::Triple triple(llvm::Triple::normalize(name));
    if (supported_arch(triple.getArch())) return triple.str();
  }
  set_error(error, "unknown target '" + name + "'; supported targets: " + target_list());
  return "";
}

std::string emit_asm(const llvm::Module& module, const std::string& triple, int opt_level,
                     bool with_encodings, std::string* error) {
  llvm::SmallString<0> text;
  if (!emit_file(module, triple, opt_level, with_encodings, llvm::CGFT_AssemblyFile, &text,
                 error))
    return "";
  return std::string(text.str());
}

bool emit_object_bytes(const llvm::Module& module, const std::string& triple, int opt_level,
                       std::vector<uint8_t>* bytes, std::string* error) {
  llvm::SmallString<0> data;
  if (!emit_file(module, triple, opt_level, false, llvm::CGFT_ObjectFile, &data, error))
    return false;
  if (bytes) bytes->assign(data.begin(), data.end());
  return true;
}

bool emit_object(const llvm::Module& module, const std::string& triple, int opt_level,
                 const std::string& path, std::string* error) {
  std::vector<uint8_t> bytes;
  if (!emit_object_bytes(module, triple, opt_level, &bytes, error)) return false;
  std::error_code code;
  llvm::raw_fd_ostream file(path, code, llvm::sys::fs::OF_None);
  if (code) {
    set_error(error, "cannot write '" + path + "': " + code.message());
    return false;
  }
  file.write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  file.close();
  if (file.has_error()) {
    set_error(error, "cannot write '" + path + "': " + file.error().message());
    file.clear_error();
    return false;
  }
  return true;
}

std::string emit_mir(const llvm::Module& module, const std::string& triple, int opt_level,
                     const std::string& stop_after, std::string* error) {
  auto machine = make_target_machine(triple, opt_level, false, error);
  if (!machine) return "";
  register_capture_pass();
  std::vector<const void*> pass_ids;
  for (const std::string& point : capture_points(stop_after)) {
    const llvm::PassInfo* info = llvm::PassRegistry::getPassRegistry()->getPassInfo(point);
    if (info) pass_ids.push_back(info->getTypeInfo());
  }
  if (pass_ids.empty()) {
    set_error(error, "unknown codegen pass '" + stop_after + "'; use " +
                         std::string(kMirAfterIsel) + ", " + kMirAfterRegalloc +
                         " or a pass name from llc -debug-pass=Arguments");
    return "";
  }
  auto copy = copy_for_target(module, *machine, error);
  if (!copy) return "";
  const std::string triple_text = machine->getTargetTriple().str();

  MirCapture capture;
  {
    auto& target_machine = static_cast<llvm::LLVMTargetMachine&>(*machine);
    llvm::legacy::PassManager passes;
    passes.add(new llvm::TargetLibraryInfoWrapperPass(machine->getTargetTriple()));
    llvm::TargetPassConfig* config = target_machine.createPassConfig(passes);
    config->setDisableVerify(true);
    passes.add(config);  // the pass manager owns both from here
    passes.add(new llvm::MachineModuleInfoWrapperPass(&target_machine));
    for (const void* id : pass_ids) config->insertPass(id, &CaptureMIR::ID);
    if (config->addISelPasses()) {
      set_error(error, "LLVM has no instruction selector for " + triple_text);
      return "";
    }
    config->addMachinePasses();
    config->setInitialized();
    current_capture = &capture;
    passes.run(*copy->module);
    current_capture = nullptr;
  }
  if (!check_diagnostics(*copy, triple_text, error)) return "";
  if (capture.runs == 0 && has_definitions(*copy->module)) {
    set_error(error, "codegen pass '" + stop_after + "' does not run for " + triple_text +
                         " at -O" + std::to_string(opt_level));
    return "";
  }
  return capture.text;
}

std::string compact_mir(const std::string& mir) {
  if (mir.find("\nbody:") == std::string::npos && mir.rfind("body:", 0) != 0) return mir;
  std::string out, name;
  bool in_body = false;
  size_t at = 0;
  while (at < mir.size()) {
    size_t end = mir.find('\n', at);
    if (end == std::string::npos) end = mir.size();
    std::string_view line(mir.data() + at, end - at);
    at = end + 1;
    if (line == "---" || line == "..." || line.rfind("--- ", 0) == 0) {
      in_body = false;
    } else if (line.rfind("name:", 0) == 0) {
      size_t value = line.find_first_not_of(' ', 5);
      name = value == std::string_view::npos ? "" : std::string(line.substr(value));
    } else if (line.rfind("body:", 0) == 0) {
      in_body = true;
      if (!out.empty()) out += "\n";
      out += "; function " + name + "\n";
    } else if (in_body) {
      // Body lines are indented by two spaces inside the YAML block scalar.
      std::string_view text = line.rfind("  ", 0) == 0 ? line.substr(2) : line;
      while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
      out.append(text);
      out += "\n";
    }
  }
  return out;
}

}  // namespace descent::llvmbe
