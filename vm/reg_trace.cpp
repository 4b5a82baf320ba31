// The register VM's trace: after each instruction, the disassembler's line for it and the
// registers of the frame now current, each formatted by the type last written to it (a
// shadow of the value stack); the same steps as data for RunOptions::trace_steps. Only the
// traced instantiation of RegVM::execute calls these, so they live apart from the loop.
#include "vm/reg_vm_internal.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "vm/reg_disasm.h"

namespace descent::reg_vm_internal {

void Tracer::start(const Value* stack, size_t size) {
  stack_ = stack;
  shadow_.assign(size, Type::Unknown);
  held_.clear();
}

void Tracer::reset_frame(const FnRt& f, Value* base) {
  size_t at = static_cast<size_t>(base - stack_);
  for (size_t k = 0; k < f.frame_size && at + k < shadow_.size(); ++k)
    shadow_[at + k] = Type::Unknown;
  for (uint32_t p = 0; p < f.nparams; ++p) shadow_[at + f.param_locs[p]] = f.src->param_types[p];
}

// After `ran` (an instruction of ran_in) executed: update the shadow types of what it wrote,
// then print it with the frame now current (the callee's after a CALL, the caller's after
// a RETURN).
void Tracer::step(const FnRt& ran_in, const Instr* ran, const FnRt& now, Value* base,
                  const Instr* pc, const Module& module, const RunOptions& options, int depth) {
  const Instr& in = *ran;
  const OpInfo& info = op_info(in.op);
  Type* types = shadow_.data() + (base - stack_);
  if (returns_value(in.op) && pc != ran + 1) {  // it returned (a RET*K_INT may fall through)
    types[pc[-1].a] = ran_in.src->ret;
  } else if (info.res != Res::Ret && in.op != Op::RETURN0) {
    switch (info.res) {
      case Res::Int: types[in.a] = Type::Int; break;
      case Res::Float: types[in.a] = Type::Float; break;
      case Res::Bool: types[in.a] = Type::Bool; break;
      case Res::CopyB: types[in.a] = types[in.b]; break;
      case Res::KType: types[in.a] = ran_in.src->k_types[in.b]; break;
      case Res::GType: types[in.a] = module.globals[in.b].type; break;
      case Res::Spill: types[in.b] = types[in.a]; break;
      case Res::Site: {  // handles show as the numbers they are
        Type t = ran_in.src->tensor_sites[in.b].expr->type;
        types[in.a] = t == Type::Float ? t : Type::Int;
        break;
      }
      default: break;
    }
  }
  const RegFunction& f = *ran_in.src;
  int at = static_cast<int>(ran - ran_in.code);
  // The text line, then the instruction's output, then the step as data: a step's
  // output_size (Session::record) counts what the instruction printed.
  if (options.trace) {
    std::string text = head(f, at, module);
    for (uint32_t k = 0; k < now.frame_size; ++k) {
      if (types[k] == Type::Unknown) continue;
      text += " " + location_name(*now.src, static_cast<int>(k)) + "=" +
              format_value(base[k], types[k]);
    }
    options.trace(text + "\n");
  }
  release(options);
  if (options.trace_steps) {
    TraceStep t;
    t.function = f.name;
    t.pc = at;
    t.instruction = disassemble_instr(f, at, &module);
    t.loc = f.locs[static_cast<size_t>(at)];
    t.depth = depth;
    t.registers = registers(now, base);
    options.trace_steps(t);
  }
}

// A text trace line up to its registers: "inc      0000     2  return_addk_int r0, k0 ... |".
std::string Tracer::head(const RegFunction& f, int at, const Module& module) {
  char head[64];
  std::snprintf(head, sizeof head, "%-8s %04d %5u  ", f.name.c_str(), at,
                f.locs[static_cast<size_t>(at)].line);
  std::string text = head + disassemble_instr(f, at, &module);
  if (text.size() < 64) text.append(64 - text.size(), ' ');
  return text + " |";
}

void Tracer::release(const RunOptions& options) {
  if (!held_.empty() && options.out) options.out(held_);
  held_.clear();
}

// The frame's locations that hold a value of known type, as the text trace prints them.
std::vector<std::pair<std::string, std::string>> Tracer::registers(const FnRt& f,
                                                                   Value* base) {
  std::vector<std::pair<std::string, std::string>> out;
  const Type* types = shadow_.data() + (base - stack_);
  for (uint32_t k = 0; k < f.frame_size; ++k) {
    if (types[k] == Type::Unknown) continue;
    out.emplace_back(location_name(*f.src, static_cast<int>(k)), format_value(base[k], types[k]));
  }
  return out;
}

// The instruction `ran` of f stopped the run: a last step with the error and the frame as
// the instruction found it.
void Tracer::fail(const FnRt& f, const Instr* ran, Value* base, const Module& module,
                  const RunOptions& options, int depth, const char* error) {
  int at = static_cast<int>(ran - f.code);
  if (options.trace) options.trace(head(*f.src, at, module) + " error: " +
                                   (error ? error : "") + "\n");
  release(options);
  if (!options.trace_steps) return;
  TraceStep t;
  t.function = f.src->name;
  t.pc = at;
  t.instruction = disassemble_instr(*f.src, at, &module);
  t.loc = f.src->locs[static_cast<size_t>(at)];
  t.depth = depth;
  t.registers = registers(f, base);
  t.error = error ? error : "";
  options.trace_steps(t);
}

}  // namespace descent::reg_vm_internal
