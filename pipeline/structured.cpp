// The structured views of pipeline.h for front ends that draw (the visualizer): bytecode
// listings as rows, live intervals, and recorded runs for the step debugger.
//
// Each view is built by the same code as its text stage (the disassemblers produce rows and
// the text is the rows joined), so a pane that points at a row points at the line the text
// view shows.
#include "pipeline/pipeline.h"

#include <algorithm>

#include "tensor/schedule.h"
#include "vm/reg_disasm.h"
#include "vm/stack_disasm.h"

namespace descent {

std::vector<CodeLine> Session::listing(std::string_view stage, std::string_view function) const {
  return on_big_stack([&] {
    std::vector<CodeLine> out;
    CodeScope scope;
    std::string error;
    if (!code_scope(function, &scope, &error)) return out;
    if (stage == "stack" || stage == "stack-fused") {
      for (auto& r : stack::dump_stack_rows(scope, module_, stage == "stack-fused"))
        out.push_back(CodeLine{std::move(r.function), r.pc, std::move(r.text), r.loc});
    } else if (stage == "reg" || stage == "reg-alloc" || stage == "reg-fused") {
      RegForm form = stage == "reg"         ? RegForm::Virtual
                     : stage == "reg-alloc" ? RegForm::Allocated
                                            : RegForm::Fused;
      for (auto& r : dump_reg_rows(scope, module_, form, num_registers_))
        out.push_back(CodeLine{std::move(r.function), r.pc, std::move(r.text), r.loc});
    }
    return out;
  });
}

// The intervals the allocator worked from, named as the `live` stage names them, over the
// virtual code that listing("reg") shows.
std::vector<LiveFunction> Session::live_ranges(std::string_view function) const {
  return on_big_stack([&] {
    std::vector<LiveFunction> out;
    CodeScope scope;
    std::string error;
    if (!code_scope(function, &scope, &error)) return out;
    for (const auto& u : compile_reg_units(scope, module_, num_registers_)) {
      if (!u.error.empty()) continue;
      LiveFunction f;
      f.function = u.virt.name;
      f.num_instructions = static_cast<int>(u.virt.code.size());
      for (const auto& x : u.intervals) {
        LiveRange r;
        r.value = "v" + std::to_string(x.vreg);
        if (static_cast<size_t>(x.vreg) < u.virt.vreg_names.size() &&
            !u.virt.vreg_names[static_cast<size_t>(x.vreg)].empty())
          r.value += " " + u.virt.vreg_names[static_cast<size_t>(x.vreg)];
        r.start = x.first_pc();
        r.end = x.last_pc();
        r.spilled = x.spilled();
        r.location = (x.spilled() ? "s" : "r") + std::to_string(x.spilled() ? x.slot : x.reg);
        r.type = type_name(x.type);
        f.ranges.push_back(std::move(r));
      }
      // compute_live_intervals sorts by position, and a position is half an instruction.
      std::stable_sort(f.ranges.begin(), f.ranges.end(),
                       [](const LiveRange& a, const LiveRange& b) { return a.start < b.start; });
      out.push_back(std::move(f));
    }
    return out;
  });
}

// The step debugger's data: the run again, on a VM, with every instruction's state kept.
// Recording is a rerun rather than a mode of the first run so that the session's own run
// (on whatever engine) never pays for tracing, and a pane can record on demand.
Recording Session::record(std::string_view engine, size_t max_steps) {
  return on_big_stack([&] {
    Recording r;
    r.engine = std::string(engine);
    if (engine != "stack" && engine != "reg") {
      r.error = "cannot record on the '" + r.engine + "' engine: only the stack and reg VMs step";
      return r;
    }
    if (!last_source()) {
      r.error = "no input yet";
      return r;
    }
    const Program* program = last_checked_program();
    if (!program) {
      r.error = "the input has errors, so it was not compiled to bytecode";
      return r;
    }
    if (program->uses_tensors && !engine_for(r.engine).runs_tensors()) {
      r.error = "the '" + r.engine + "' engine does not run tensor code, so it cannot step it";
      return r;
    }
    max_steps = std::max<size_t>(max_steps, 1);
    // Start from the globals the last run started from, and put the session's back after:
    // recording must not change what the next input sees.
    GlobalStore saved = globals_;
    set_aside_tensors_ = tensor_handles(saved);
    std::string saved_engine = engine_;
    globals_ = globals_before_last_run_;
    engine_ = r.engine;
    RunOptions opts;
    opts.echo = last_echo();  // the code the listings show
    opts.out = [&r](std::string_view text) { r.output += text; };
    opts.trace_steps = [&r, max_steps](const TraceStep& step) {
      if (r.steps.size() >= max_steps) {
        r.truncated = true;
        return;
      }
      r.steps.push_back(step);
      r.steps.back().output_size = r.output.size();
    };
    // The VMs check the limit on back-edges and calls: the run stops soon after max_steps.
    opts.step_limit = max_steps;
    r.outcome = run(opts);
    engine_ = saved_engine;
    globals_ = std::move(saved);
    set_aside_tensors_.clear();
    if (r.outcome.steps > max_steps) r.truncated = true;
    return r;
  });
}

}  // namespace descent
