#include "pipeline/pipeline.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "lang/ast_print.h"
#include "lang/fold.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "lang/text.h"
#include "lang/walker.h"
#include "plugins/llvm_lazy.h"  // llvm_backend/'s calls, through the plugin opened on first use
#include "native/native.h"
#include "pipeline/open_schedule.h"  // ~Session destroys the schedule objects
#include "tensor/runtime.h"
#include "tensor/schedule.h"
#include "vm/reg_disasm.h"
#include "vm/reg_vm.h"
#include "vm/stack_compiler.h"
#include "vm/stack_disasm.h"
#include "vm/stack_fuse.h"
#include "vm/stack_vm.h"

namespace descent {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The native backend's description of the Session's target (`:target`, --target): x86-64
// for this machine or an x86_64 triple, AArch64 for an aarch64 one; nullptr (and *why) for a
// target the native backend does not describe.
const native::Target* native_target_of(const std::string& triple, std::string* why) {
  if (triple.empty() || triple.rfind("x86_64", 0) == 0) return &native::x86_64_target();
  if (triple.rfind("aarch64", 0) == 0 || triple.rfind("arm64", 0) == 0) return &native::aarch64_target();
  *why = "the native backend describes " + native::target_names() + "; the target is " + triple +
         " (:target x86-64 or :target aarch64)";
  return nullptr;
}

std::string render_tree(const TreeNode& t, Format f, const std::string& name) {
  switch (f) {
    case Format::Sexpr: return print_tree_sexpr(t);
    case Format::Dot: return print_tree_dot(t, name);
    default: return print_tree_text(t);
  }
}
}  // namespace

namespace {

// Drops the earlier inputs that declared nothing (statements alone). An input that declared
// a function or a kernel stays for the Session's life, even once redefined: code and caches
// know a declaration by its address (the JIT's and native's compiled functions, the tensor
// runtime's plans and result shapes), and a freed declaration's address could come back as
// a new one's.
void drop_inputs_without_declarations(Module& m) {
  auto declares = [](const std::shared_ptr<Program>& p) {
    for (const auto& st : p->body)
      if (st->fn || st->kernel) return true;
    return false;
  };
  m.programs.erase(std::remove_if(m.programs.begin(), m.programs.end(),
                                  [&](const auto& p) { return !declares(p); }),
                   m.programs.end());
}

}  // namespace

// Everything one input produced, kept so that any stage can be viewed afterwards.
struct Session::Unit {
  std::shared_ptr<const SourceFile> source;
  std::vector<Token> tokens;
  std::shared_ptr<Program> program;  // parsed; checked in place when `checked`
  bool parsed = false;               // no syntax errors
  bool checked = false;              // no errors at all
  std::optional<Program> folded;     // after fold_constants
  int folds = 0;
  bool echo = false;  // it ran with REPL echo: the bytecode views show the ECHO it ran

  // The LLVM pipeline's snapshots at one -O level, computed once: every pass's view and
  // every diff reads them.
  const std::vector<llvmbe::PassSnapshot>& snapshots(const Module& module, int opt_level) {
    if (snaps_opt != opt_level) {
      snaps = llvm_plugin::dump_passes(CodeScope::of(*program, echo), module, opt_level);
      snaps_opt = opt_level;
    }
    return snaps;
  }
  std::vector<llvmbe::PassSnapshot> snaps;
  int snaps_opt = -1;
  std::map<analysis::Domain, std::shared_ptr<const analysis::Result>> analyses;
  size_t globals_before = 0;  // the Module's globals before this input (earlier lines')
};

Session::Session() : tensors_(std::make_unique<tensor::GraphRuntime>()) {
  register_tensor_backends();
  tensors_->set_interrupt(&interrupt_);
  install_auto_scheduler();  // default schedules for the kernels nobody scheduled
  // The prelude's kernels (add, matmul, linear, relu, softmax, ...) are there from the
  // start, as if the user had typed them; it is not "the last input".
  Outcome o = compile(std::string(tensor::prelude_source()), "<prelude>");
  if (o.status == Outcome::Ok) run(RunOptions{});
  last_.reset();
}
Session::~Session() = default;

std::vector<std::string> Session::engines() { return {"ast", "stack", "reg", "jit", "native"}; }

bool Session::set_engine(std::string_view name) {
  auto names = engines();
  if (std::find(names.begin(), names.end(), name) == names.end()) return false;
  engine_ = std::string(name);
  return true;
}

Engine& Session::engine_for(const std::string& name) {
  // The native engine runs the Session's native target: x86-64 here, AArch64 under qemu.
  std::string why;
  const native::Target* nt = name == "native" ? native_target(&why) : nullptr;
  std::string key = nt && nt->arch != native::Arch::X86_64 ? name + "@" + nt->name : name;
  auto& slot = engine_cache_[key];
  if (!slot) {
    if (name == "stack") slot = make_stack_vm();
    else if (name == "reg") slot = make_reg_vm(num_registers_);
    else if (name == "jit") {
      auto jit = llvm_plugin::make_jit_engine(opt_level_);
      jit->set_tiers(jit_tiers_);
      slot = std::move(jit);
    }
    else if (name == "native") slot = nt ? native::make_native_engine(*nt) : native::make_native_engine();
    else slot = make_ast_walker();
  }
  return *slot;
}

bool Session::set_opt_level(int level) {
  if (level < 0 || level > 3) return false;
  opt_level_ = level;
  if (auto it = engine_cache_.find("jit"); it != engine_cache_.end())
    static_cast<llvmbe::JitEngine&>(*it->second).set_opt_level(level);
  return true;
}

void Session::set_jit_tiers(bool on) {
  jit_tiers_ = on;
  if (auto it = engine_cache_.find("jit"); it != engine_cache_.end())
    static_cast<llvmbe::JitEngine&>(*it->second).set_tiers(on);
}

bool Session::set_target(const std::string& target, std::string* error) {
  std::string triple = llvm_plugin::resolve_target(target, error);
  if (triple.empty()) return false;
  target_ = triple;
  return true;
}

std::vector<std::string> Session::targets() { return llvm_plugin::supported_targets(); }

const native::Target* Session::native_target(std::string* why) const {
  return native_target_.empty() ? native_target_of(target_, why) : native::find_target(native_target_);
}

bool Session::set_native_target(const std::string& name, std::string* error) {
  if (!name.empty() && !native::find_target(name)) {
    *error = "unknown native target '" + name + "' (targets: " + native::target_names() + ")";
    return false;
  }
  native_target_ = name;
  return true;
}

bool Session::build_object(const std::string& path, std::string* error) const {
  if (!last_ || !last_->checked) {
    *error = "nothing compiled to build";
    return false;
  }
  return llvm_plugin::build_object(*last_->program, module_, target_, opt_level_, path, error);
}

bool Session::write_native_executable(const std::string& exe, std::string* error) const {
  if (!last_ || !last_->checked) {
    *error = "nothing compiled to build";
    return false;
  }
  const native::Target* t = native_target(error);
  return t && native::write_executable(*last_->program, module_, globals_, *t, exe, error);
}

void Session::settle_jit() const {
  auto it = engine_cache_.find("jit");
  if (it != engine_cache_.end()) static_cast<llvmbe::JitEngine&>(*it->second).wait_for_tiers();
}

bool Session::jit_stats(JitStats* out) const {
  auto it = engine_cache_.find("jit");
  if (it == engine_cache_.end()) return false;
  llvmbe::JitEngine::Stats st = static_cast<const llvmbe::JitEngine&>(*it->second).last_stats();
  *out = {st.compile_seconds, st.run_seconds, st.functions_compiled, st.functions_tiered,
          st.tier2_seconds, st.tier2_ready_seconds, st.tier2_pending, st.tier2_failed};
  return true;
}

bool Session::set_num_registers(int n) {
  if (n < 3 || n > 250) return false;
  num_registers_ = n;
  engine_cache_.erase("reg");  // the next run allocates for the new register file
  return true;
}

// One stage: its name and help line, and the view. Views of one family (the trees, the
// bytecodes, the LLVM views) share a function that checks what the family needs of the
// last input; the name tells it which member of the family to show.
// The code stages get the scope to show: null when the last input did not compile (and no
// function was named), so each family says in its own words why there is no code.
struct Session::StageEntry {
  StageInfo info;
  StageResult (*view)(const Session& s, std::string_view name, Format format,
                      const CodeScope* scope);
  bool code = false;  // a view of compiled code, which takes a function name
};

const std::vector<Session::StageEntry>& Session::stage_table() {
  // Lambdas in a member function may read the Session's private parts.
  auto tokens = [](const Session& s, std::string_view, Format, const CodeScope*) {
    return StageResult{true, print_tokens(s.last_->tokens), std::nullopt, std::nullopt};
  };
  auto tree = [](const Session& s, std::string_view name, Format format, const CodeScope*) {
    StageResult r;
    const Unit& u = *s.last_;
    if (!u.parsed) {
      r.text = "the input has syntax errors, so there is no tree";
      return r;
    }
    if (name == "ast-folded" && !u.folded) {
      r.text = "the input has errors, so fold_constants did not run";
      return r;
    }
    const Program& p = name == "ast" ? *u.program : *u.folded;
    r.ok = true;
    r.tree = ast_to_tree(p, u.tokens);
    r.text = render_tree(*r.tree, format, std::string(name));
    return r;
  };
  auto bytecode = [](const Session& s, std::string_view name, Format, const CodeScope* scope) {
    StageResult r;
    if (!scope) {
      r.text = "the input has errors, so it was not compiled to bytecode";
      return r;
    }
    r.ok = true;
    if (name == "stack" || name == "stack-fused")
      r.text = stack::dump_stack(*scope, s.module_, name == "stack-fused");
    else if (name == "live")
      r.text = dump_live(*scope, s.module_, s.num_registers_);
    else
      r.text = dump_reg(*scope, s.module_,
                        name == "reg"         ? RegForm::Virtual
                        : name == "reg-alloc" ? RegForm::Allocated
                                              : RegForm::Fused,
                        s.num_registers_);
    return r;
  };
  auto llvm = [](const Session& s, std::string_view name, Format, const CodeScope* scope) {
    StageResult r;
    if (!scope) {
      r.text = "the input has errors, so it was not lowered to LLVM IR";
      return r;
    }
    const CodeScope& p = *scope;
    std::string error;
    llvmbe::Listing listing;
    if (name == "llvm" || name == "llvm-opt")
      listing = llvm_plugin::ir_code(p, s.module_, s.opt_level_, name == "llvm-opt", &error);
    else if (name == "passes" && s.last_ && p.script && p.script == s.last_->program.get())
      // The whole input (code_scope gives a function without its script): the snapshots
      // :passes and :diff read, computed once per input.
      listing.text = llvm_plugin::format_pass_list(s.last_->snapshots(s.module_, s.opt_level_));
    else if (name == "passes")
      listing.text = llvm_plugin::format_pass_list(llvm_plugin::dump_passes(p, s.module_, s.opt_level_, &error));
    else
      listing = llvm_plugin::machine_code(p, s.module_, s.target_, s.opt_level_,
                                     name == "asm"   ? llvmbe::MachineView::Asm
                                     : name == "mir" ? llvmbe::MachineView::MirAfterIsel
                                                     : llvmbe::MachineView::MirAfterRegalloc,
                                     {s.asm_options_.encodings, s.asm_options_.directives}, &error);
    r.text = std::move(listing.text);
    if (name == "llvm" || name == "llvm-opt" || name == "asm") r.source_lines = std::move(listing.lines);
    r.ok = error.empty();
    if (!r.ok) r.text = error;
    return r;
  };
  auto native_view = [](const Session& s, std::string_view name, Format format, const CodeScope* scope) {
    StageResult r;
    if (!scope) {
      r.text = "the input has errors, so it was not compiled to native code";
      return r;
    }
    const native::Target* t = s.native_target(&r.text);
    if (!t) return r;
    r.ok = native::view(*scope, s.module_, name.substr(7), format == Format::Dot, &r.text, *t);
    return r;
  };
  auto graph = [](const Session& s, std::string_view, Format format, const CodeScope*) {
    return s.graph_view(
        s.tensors_->last_evaluation().executed.nodes.empty() ? "pending" : "executed", format);
  };
  auto analysis_view = [](const Session& s, std::string_view name, Format format, const CodeScope*) {
    StageResult r;
    auto result = s.analyze();
    if (!result) {
      r.text = "the input has errors, so it was not analysed";
      return r;
    }
    if (result->interrupted) {
      r.text = "interrupted: the analysis stopped before its fixpoint, so it has no facts (ask again to run it again)";
      return r;
    }
    r.ok = true;
    if (name == "cfg") r.text = format == Format::Dot ? analysis::cfg_dot(result->cfg) : analysis::cfg_text(result->cfg);
    else if (name == "analysis-mul") r.text = result->multiplication_report();
    else if (name == "analysis-cfg") r.text = analysis::format_block_states(*result);
    else r.text = analysis::format_report(*result, *s.last_->source);
    if (s.analysis_explain() && name != "cfg" && name != "analysis-mul") r.text += analysis::format_explain(*result);
    return r;
  };
  static const std::vector<StageEntry> t = {
      {{"tokens", "the lexer's tokens, one per line with line:col"}, tokens},
      {{"ast", "the syntax tree after semantic analysis (types, promotions)"}, tree},
      {{"ast-folded", "the syntax tree after the fold_constants pass"}, tree},
      {{"stack", "stack bytecode as the compiler emits it (disassembled)"}, bytecode, true},
      {{"stack-fused", "stack bytecode after fuse_superinstructions: what the stack VM runs"},
       bytecode, true},
      {{"reg", "register bytecode on unlimited virtual registers"}, bytecode, true},
      {{"reg-alloc", "register bytecode after allocate_registers (linear scan, spills)"},
       bytecode, true},
      {{"reg-fused",
        "register bytecode after fuse_reg_superinstructions: what the register VM runs"},
       bytecode, true},
      {{"live", "live intervals of the virtual registers and where each one went"}, bytecode, true},
      {{"llvm", "LLVM IR as generated from the checked tree"}, llvm, true},
      {{"llvm-opt", "LLVM IR after the -O pipeline"}, llvm, true},
      {{"passes", "the LLVM passes that ran at the -O level, and which changed the IR"}, llvm, true},
      {{"mir", "machine IR after instruction selection (finalize-isel), for the target"}, llvm, true},
      {{"mir-regalloc", "machine IR after register allocation, for the target"}, llvm, true},
      {{"asm", "assembly for the target, each instruction with its encoded bytes (no directives)"}, llvm, true},
      {{"native-dag", "native backend: the selection DAG of each basic block (text or DOT)"}, native_view, true},
      {{"native-legal", "native backend: the DAG after legalisation for the target, and what it changed"}, native_view, true},
      {{"native-combine", "native backend: the DAG after the combine (folding, identities)"}, native_view, true},
      {{"native-isel", "native backend: instruction selection by tree covering (DOT: nodes by pattern)"},
       native_view, true},
      {{"native-sched", "native backend: the instructions after list scheduling"}, native_view, true},
      {{"native-regalloc", "native backend: live intervals on the target's registers (linear scan)"}, native_view, true},
      {{"native-asm", "native backend: x86-64 code with each instruction's bytes (its own encoder)"},
       native_view, true},
      {{"native-patterns", "native backend: the instruction selector's pattern table (tree, cost, instructions)"},
       [](const Session& s, std::string_view, Format, const CodeScope*) {
         StageResult r;
         const native::Target* t = s.native_target(&r.text);
         if (!t) return r;
         r.ok = true;
         r.text = native::pattern_table(*t);
         return r;
       }},
      {{"cfg", "the control-flow graph the analysis walks: basic blocks per function (text or DOT)"},
       analysis_view},
      {{"analysis", "abstract interpretation: the facts after each line, then the alarms (--domain)"},
       analysis_view},
      {{"analysis-cfg", "the control-flow graph with the state at each block's entry (the fixpoint)"},
       analysis_view},
      {{"analysis-mul", "does each function multiply? a '*' in its tree vs a multiplication that runs"},
       analysis_view},
      {{"graph", "the tensor dataflow graph as the last evaluation ran it (after graph passes)"},
       graph},
      {{"grad", "the adjoint kernels of every kernel the input defines or calls (tensor/autodiff.h)"},
       [](const Session& s, std::string_view, Format, const CodeScope*) { return s.grad_view(); }},
  };
  return t;
}

const std::vector<StageInfo>& Session::stages() {
  static const std::vector<StageInfo> s = [] {
    std::vector<StageInfo> v;
    for (const auto& e : stage_table()) v.push_back(e.info);
    return v;
  }();
  return s;
}

Outcome Session::compile(std::string source, std::string name) {
  return on_big_stack([&] {
    auto t0 = Clock::now();
    auto unit = std::make_unique<Unit>();
    unit->source = std::make_shared<SourceFile>(std::move(name), std::move(source));
    unit->tokens = tokenize(*unit->source);
    Outcome out;
    unit->program = std::make_shared<Program>(parse(unit->source, unit->tokens, out.diagnostics));
    unit->parsed = out.diagnostics.empty();
    // Each stage's time from the end of the one before (`:time`).
    auto mark = t0;
    auto stage_done = [&](const char* stage) {
      auto now = Clock::now();
      out.stages.push_back({stage, std::chrono::duration<double>(now - mark).count(), 0});
      mark = now;
    };
    stage_done("parse");
    // Type errors after a syntax error would mostly be echoes of it: report syntax first.
    std::vector<uint32_t> kernel_versions;
    for (const auto& k : module_.kernels) kernel_versions.push_back(k.version);
    unit->globals_before = module_.globals.size();
    if (unit->parsed) {
      globals_.resize(module_.globals.size());
      unit->checked = check(*unit->program, module_, globals_.defined, out.diagnostics,
                            check_kernel_shapes);
      stage_done("check");
    }
    if (unit->checked) {
      out.notes = forget_stale_schedules(kernel_versions);
      // The Module keeps an earlier input only if it declared a function or a kernel (code
      // points into it, and an error in them quotes its lines). An input of statements
      // alone (a notebook's run() in a loop, most REPL lines) is freed when the next one
      // comes; keeping them all would grow memory without bound. The newest input is always
      // the last of Module::programs.
      drop_inputs_without_declarations(module_);
      module_.programs.push_back(unit->program);
      globals_.resize(module_.globals.size());
      unit->folded = clone_program(*unit->program);
      unit->folds = fold_constants(*unit->folded);
      stage_done("fold_constants");
    } else {
      out.status = Outcome::CompileError;
      out.message = format_diagnostics(*unit->source, out.diagnostics);
    }
    out.compile_seconds = seconds_since(t0);
    last_ = std::move(unit);
    return out;
  });
}

std::vector<int64_t> Session::tensor_handles(const GlobalStore& store) const {
  std::vector<int64_t> out;
  for (size_t g = 0; g < module_.globals.size() && g < store.values.size(); ++g)
    if (module_.globals[g].type == Type::Tensor && store.defined[g]) out.push_back(store.values[g].i);
  return out;
}

std::vector<Comparison> Session::compare(const RunOptions& options) {
  std::vector<Comparison> out;
  if (!last_ || !last_->checked) return out;
  std::string saved = engine_;
  for (const auto& name : engines()) {
    Comparison c;
    c.engine = name;
    if (last_->program->uses_tensors && !engine_for(name).runs_tensors()) {
      // run() would run it on the walker again: that is not this engine's result.
      c.not_run = "tensor code (this engine runs scalar code only)";
      out.push_back(std::move(c));
      continue;
    }
    globals_ = globals_before_last_run_;  // every engine starts from the same state
    RunOptions opts = options;
    opts.out = [&c](std::string_view t) { c.output += t; };
    opts.trace = nullptr;
    engine_ = name;
    c.outcome = run(opts);
    out.push_back(std::move(c));
  }
  engine_ = saved;
  return out;
}

Outcome Session::run(const RunOptions& options) {
  settle_jit();
  return on_big_stack([&] {
    Outcome out;
    if (!last_ || !last_->checked) {
      out.status = Outcome::CompileError;
      out.message = "error: nothing compiled to run\n";
      return out;
    }
    interrupt_.store(false);
    RunOptions opts = options;
    if (!opts.interrupt) opts.interrupt = &interrupt_;
    globals_before_last_run_ = globals_;
    std::vector<int64_t> pinned = tensor_handles(globals_before_last_run_);
    pinned.insert(pinned.end(), set_aside_tensors_.begin(), set_aside_tensors_.end());
    tensors_->set_pinned(std::move(pinned));
    if (last_->echo != options.echo) last_->snaps_opt = -1;  // the IR views show the echo
    last_->echo = options.echo;
    opts.tensors = tensors_.get();
    // An engine that runs scalar code only hands tensor code to the AST walker.
    std::string engine = engine_;
    if (last_->program->uses_tensors && !engine_for(engine).runs_tensors()) {
      engine = "ast";
      out.note = "tensor code runs on the ast engine (the " + engine_ +
                 " engine runs scalar code only); its kernels ran on the " + device() + " device";
    }
    tensors_->clear_launches();
    auto t0 = Clock::now();
    RunResult r = engine_for(engine).run(*last_->program, module_, globals_, opts);
    out.run_seconds = seconds_since(t0);
    out.stages.push_back({"run", out.run_seconds, 0});
    // The JIT compiles inside run(): how long, and how many functions it (re)compiled.
    JitStats jit;
    if (engine == "jit" && jit_stats(&jit)) {
      const int n = jit.functions_compiled;
      out.stages.push_back({"jit: " + std::to_string(n) + (n == 1 ? " function" : " functions") +
                                (jit.functions_tiered ? " at -O0" : ""),
                            jit.compile_seconds, 1});
      // The second tier: compiled beside the run, so not part of it.
      if (jit.functions_tiered)
        out.stages.push_back(
            {jit.tier2_pending  ? "jit: -O" + std::to_string(opt_level_) + " behind it, not ready by the end"
             : jit.tier2_failed ? "jit: -O" + std::to_string(opt_level_) + " behind it failed; -O0 code ran"
                                : fmt::format("jit: -O{} behind it, in use at {:.1f} ms", opt_level_,
                                              jit.tier2_ready_seconds * 1e3),
             jit.tier2_pending || jit.tier2_failed ? -1.0 : jit.tier2_seconds, 1});
    }
    out.launches = tensors_->launches();
    out.launch_totals = tensors_->launch_totals();
    const tensor::EvaluationTimes& tt = tensors_->evaluation_times();
    if (tt.evaluations > 0) {
      out.stages.push_back({"lower", tt.lower_s, 1});
      out.stages.push_back({"graph passes", tt.passes_s, 1});
      out.stages.push_back({"compile", tt.compile_s, 1});
      out.stages.push_back({"kernels", tt.kernels_s, 1});
    }
    out.steps = r.steps;
    for (auto& n : take_tuning_notes()) out.notes.push_back(std::move(n));
    if (!r.ok) {
      out.status = Outcome::RuntimeError;
      out.diagnostics.push_back(r.error);
      // A function defined by an earlier input fails in that input's text, not this one's.
      out.message = format_diagnostic(file_of(r.error.loc, *last_->source), r.error);
    }
    return out;
  });
}

Outcome Session::submit(std::string source, std::string name, const RunOptions& options) {
  Outcome c = compile(std::move(source), std::move(name));
  if (c.status != Outcome::Ok) return c;
  Outcome r = run(options);
  r.compile_seconds = c.compile_seconds;
  r.stages.insert(r.stages.begin(), c.stages.begin(), c.stages.end());
  r.notes.insert(r.notes.begin(), c.notes.begin(), c.notes.end());
  return r;
}

bool Session::stage_takes_function(std::string_view name) {
  for (const auto& e : stage_table())
    if (name == e.info.name) return e.code;
  return false;
}

bool Session::code_scope(std::string_view function, CodeScope* scope, std::string* error) const {
  if (function.empty()) {
    if (!last_ || !last_->checked) return false;
    *scope = CodeScope::of(*last_->program, last_->echo);
    return true;
  }
  int f = module_.find_function(std::string(function));
  if (f >= 0 && module_.functions[static_cast<size_t>(f)].decl) {
    *scope = CodeScope{nullptr, {module_.functions[static_cast<size_t>(f)].decl}, false};
    return true;
  }
  std::vector<std::string> names;
  for (const auto& fi : module_.functions) names.push_back(fi.name);
  *error = "no function '" + std::string(function) + "'";
  std::string guess = closest_name(function, names);
  if (module_.find_kernel(std::string(function)) >= 0)
    *error += " ('" + std::string(function) + "' is a kernel: :kernel " + std::string(function) +
              " shows its loop nest)";
  else if (!guess.empty())
    *error += " (did you mean '" + guess + "'?)";
  else
    *error += names.empty() ? " (no functions are defined yet)" : " (functions: " + join(names) + ")";
  return false;
}

StageResult Session::stage(std::string_view name, Format format, std::string_view function) const {
  settle_jit();
  return on_big_stack([&] {
    StageResult r;
    for (const auto& e : stage_table()) {
      if (name != e.info.name) continue;
      if (!e.code && !function.empty()) {
        r.text = "the " + std::string(name) + " stage shows the last input only; a function "
                 "name is for the code stages (stack, reg, live, llvm, asm, ...)";
        return r;
      }
      if (!last_ && function.empty()) {
        r.text = "no input yet";
        return r;
      }
      if (!e.code) return e.view(*this, name, format, nullptr);
      CodeScope scope;
      if (code_scope(function, &scope, &r.text)) return e.view(*this, name, format, &scope);
      if (!function.empty()) return r;
      return e.view(*this, name, format, nullptr);  // the family says why there is no code
    }
    std::vector<std::string> known;
    for (const auto& s : stages()) known.push_back(s.name);
    std::string guess = closest_name(name, known);
    r.text = "unknown stage '" + std::string(name) + "' (" +
             (guess.empty() ? "" : "did you mean '" + guess + "'? ") + "stages: " + join(known) + ")";
    return r;
  });
}

std::vector<native::BodyGraph> Session::native_graphs(std::string_view stage, std::string_view function) const {
  return on_big_stack([&] {
    CodeScope scope;
    std::string error;
    if ((!last_ && function.empty()) || !code_scope(function, &scope, &error)) return std::vector<native::BodyGraph>{};
    const native::Target* t = native_target(&error);
    if (!t) {
      native::BodyGraph g;
      g.error = error;
      return std::vector<native::BodyGraph>{g};
    }
    return native::dag_graphs(scope, module_, stage, *t);
  });
}

void Session::set_analysis_unroll(int n) {
  if (n == analysis_unroll_) return;
  analysis_unroll_ = n;
  if (last_) last_->analyses.clear();  // computed with the old limit
}

void Session::set_analysis_thresholds(bool on) {
  if (on == analysis_thresholds_) return;
  analysis_thresholds_ = on;
  if (last_) last_->analyses.clear();
}

void Session::set_analysis_contexts(bool on) {
  if (on == analysis_contexts_) return;
  analysis_contexts_ = on;
  if (last_) last_->analyses.clear();
}

std::shared_ptr<const analysis::Result> Session::analyze(std::optional<analysis::Domain> domain) const {
  if (!last_ || !last_->checked || !last_->program) return nullptr;
  analysis::Domain d = domain.value_or(analysis_domain_);
  auto& slot = last_->analyses[d];
  if (slot) return slot;
  if (!analysis_interrupt_) interrupt_.store(false);
  auto result = on_big_stack([&] {
    analysis::Options o;
    o.domain = d;
    o.unroll = analysis_unroll_;
    o.thresholds = analysis_thresholds_;
    o.contexts = analysis_contexts_;
    o.first_new_global = last_->globals_before;
    o.interrupt = analysis_interrupt_ ? analysis_interrupt_ : &interrupt_;
    return std::make_shared<const analysis::Result>(analysis::analyze(*last_->program, module_, o));
  });
  if (!result->interrupted) slot = result;  // an interrupted one is not kept: asked again, it runs again
  return result;
}

std::vector<PassInfo> Session::passes() const {
  return on_big_stack([&] {
    std::vector<PassInfo> out;
    if (!last_ || !last_->folded) return out;
    out.push_back(PassInfo{"fold_constants", "ast", last_->folds > 0,
                           "folded " + std::to_string(last_->folds) + " expression" +
                               (last_->folds == 1 ? "" : "s")});
    const Program& p = *last_->program;
    CodeScope scope = CodeScope::of(p, last_->echo);
    stack::StackProgram sp = stack::compile_stack(p, module_, last_->echo);
    int fused = stack::fuse_superinstructions(sp);
    out.push_back(PassInfo{"fuse_superinstructions", "stack", fused > 0,
                           "fused " + std::to_string(fused) + " instruction sequence" +
                               (fused == 1 ? "" : "s")});
    auto units = compile_reg_units(scope, module_, num_registers_);
    out.push_back(PassInfo{"allocate_registers", "reg", true, summarize_allocation(units)});
    std::string fusion = summarize_fusion(units);
    out.push_back(PassInfo{"fuse_reg_superinstructions", "reg",
                           dump_reg(scope, module_, RegForm::Allocated, num_registers_) !=
                               dump_reg(scope, module_, RegForm::Fused, num_registers_),
                           fusion});
    for (const auto& snap : last_->snapshots(module_, opt_level_))
      out.push_back(PassInfo{snap.label, "llvm", snap.changed, "on " + snap.unit});
    for (const auto& snap : tensors_->last_evaluation().passes)
      out.push_back(PassInfo{"graph." + snap.name, "graph", snap.changed, snap.summary});
    return out;
  });
}

StageResult Session::pass_snapshot(std::string_view pass, bool after, Format format) const {
  settle_jit();
  return on_big_stack([&] {
    // Graph passes: "graph.fuse_elementwise", or the bare name where it is not also an AST pass.
    {
      std::string_view g = pass.substr(0, 6) == "graph." ? pass.substr(6) : pass;
      const auto& passes = tensors_->last_evaluation().passes;
      for (size_t i = 0; i < passes.size(); ++i) {
        if (passes[i].name != g || (g == "fold_constants" && pass == g)) continue;
        if (after) return graph_view(passes[i].name, format);
        return graph_view(i == 0 ? "before" : passes[i - 1].name, format);
      }
    }
    if (pass == "fold_constants") return stage(after ? "ast-folded" : "ast", format);
    if (pass == "fuse_superinstructions") return stage(after ? "stack-fused" : "stack", format);
    if (pass == "allocate_registers") return stage(after ? "reg-alloc" : "reg", format);
    if (pass == "fuse_reg_superinstructions") return stage(after ? "reg-fused" : "reg-alloc", format);
    if (last_ && last_->checked) {
      const auto& snaps = last_->snapshots(module_, opt_level_);
      for (size_t i = 0; i < snaps.size(); ++i) {
        if (snaps[i].label != pass) continue;
        if (after || i > 0)
          return StageResult{true, after ? snaps[i].ir : snaps[i - 1].ir, std::nullopt,
                             std::nullopt};
        return stage("llvm", format);
      }
    }
    StageResult r;
    std::string known;
    int llvm_passes = 0;
    for (const auto& p : passes()) {
      if (p.stage == "llvm") {
        ++llvm_passes;
        continue;
      }
      known += std::string(known.empty() ? "" : ", ") + p.name;
    }
    if (llvm_passes)
      known += ", and " + std::to_string(llvm_passes) + " LLVM passes (list them with :passes)";
    r.text = "unknown pass '" + std::string(pass) + "' (passes: " + (known.empty() ? "none" : known) + ")";
    return r;
  });
}

StageResult Session::diff_passes(std::string_view a, std::string_view b) const {
  settle_jit();
  StageResult ra = pass_snapshot(a, true), rb = pass_snapshot(b, true);
  if (!ra.ok) return ra;
  if (!rb.ok) return rb;
  std::string d = llvm_plugin::diff_snapshots(ra.text, rb.text, std::string(a), std::string(b));
  return StageResult{true, d.empty() ? "no difference\n" : d, std::nullopt, std::nullopt};
}

const SourceFile* Session::last_source() const { return last_ ? last_->source.get() : nullptr; }

const std::vector<Token>& Session::last_tokens() const {
  static const std::vector<Token> none;
  return last_ ? last_->tokens : none;
}

const Program* Session::last_checked_program() const {
  return last_ && last_->checked ? last_->program.get() : nullptr;
}

bool Session::last_echo() const { return last_ && last_->echo; }

std::vector<std::string> Session::known_names() const {
  std::vector<std::string> names;
  for (const auto& g : module_.globals) names.push_back(g.name);
  for (const auto& f : module_.functions) names.push_back(f.name);
  for (const auto& k : module_.kernels) names.push_back(k.name);
  for (int b = 1; b <= static_cast<int>(Builtin::SumAll); ++b)
    names.push_back(builtin_name(static_cast<Builtin>(b)));
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace descent
