#include "vm/reg_disasm.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "vm/reg_compiler.h"
#include "vm/reg_fuse.h"
#include "vm/stack_disasm.h"  // the jump-target column, shared by both listings

namespace descent {
namespace {

std::string pad(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '\n')
      out += "\\n";
    else if (ch == '\t')
      out += "\\t";
    else if (ch == '"')
      out += "\\\"";
    else if (ch == '\\')
      out += "\\\\";
    else
      out += ch;
  }
  return out + "\"";
}

std::string function_name(const Module* m, int index) {
  if (m && index >= 0 && static_cast<size_t>(index) < m->functions.size())
    return m->functions[static_cast<size_t>(index)].name;
  return "f" + std::to_string(index);
}

std::string global_name(const Module* m, int index) {
  if (m && index >= 0 && static_cast<size_t>(index) < m->globals.size())
    return m->globals[static_cast<size_t>(index)].name;
  return "?";
}

// The instructions some jump or branch of f lands on.
std::set<int> jump_targets(const RegFunction& f) {
  std::set<int> targets;
  for (const Instr& in : f.code) {
    const OpInfo& info = op_info(in.op);
    if (info.a == Arg::Target) targets.insert(in.a);
    if (info.b == Arg::Target) targets.insert(in.b);
    if (info.c == Arg::Target) targets.insert(in.c);
  }
  return targets;
}

}  // namespace

std::string location_name(const RegFunction& f, int loc) {
  if (!f.allocated) return "v" + std::to_string(loc);
  if (loc < f.num_regs) return "r" + std::to_string(loc);
  return "s" + std::to_string(loc - f.num_regs);
}

std::string disassemble_instr(const RegFunction& f, int pc, const Module* m) {
  const Instr& in = f.code[static_cast<size_t>(pc)];
  const OpInfo& info = op_info(in.op);
  std::vector<std::string> ops, notes;
  auto operand = [&](Arg role, uint16_t v) {
    switch (role) {
      case Arg::None: break;
      case Arg::Def:
      case Arg::Use:
      case Arg::UseDef: ops.push_back(location_name(f, v)); break;
      case Arg::Slot: ops.push_back(location_name(f, v)); break;
      case Arg::UseImm:
        ops.push_back(location_name(f, imm_reg(v)) + ", " + std::to_string(imm_value(v)));
        break;
      case Arg::Const:
        ops.push_back("k" + std::to_string(v));
        if (v < f.k.size()) notes.push_back(format_value(f.k[v], f.k_types[v]));
        break;
      case Arg::Global:
        ops.push_back("g" + std::to_string(v));
        notes.push_back(global_name(m, v));
        break;
      case Arg::Func: ops.push_back(function_name(m, v)); break;
      case Arg::Target: ops.push_back("->" + std::to_string(v)); break;
      case Arg::Imm:
        ops.push_back(std::to_string(v));
        notes.push_back("2^" + std::to_string(v) + " = " + std::to_string(int64_t{1} << (v & 63)));
        break;
      case Arg::Type: ops.push_back(type_name(static_cast<Type>(v))); break;
      case Arg::Builtin: ops.push_back(builtin_name(static_cast<Builtin>(v))); break;
      case Arg::List: break;  // the instructions with lists print them themselves
      case Arg::Site:
        ops.push_back(v < f.tensor_sites.size() ? tensor_site_text(f.tensor_sites[v], m)
                                                : "t" + std::to_string(v));
        break;
    }
  };
  if (in.op == Op::CALL) {
    operand(info.a, in.a);
    std::string call = function_name(m, in.b) + "(";
    const uint16_t* l = &f.lists[in.c];
    for (int i = 0; i < l[0]; ++i) call += (i ? ", " : "") + location_name(f, l[1 + i]);
    ops.push_back(call + ")");
  } else if (in.op == Op::CALL0 || in.op == Op::CALL1) {
    operand(info.a, in.a);
    ops.push_back(function_name(m, in.b) + "(" +
                  (in.op == Op::CALL1 ? location_name(f, in.c) : "") + ")");
  } else if (in.op == Op::CALL1_ADDI || in.op == Op::CALL1_SUBI) {
    operand(info.a, in.a);
    ops.push_back(function_name(m, in.b) + "(" + location_name(f, imm_reg(in.c)) +
                  (in.op == Op::CALL1_ADDI ? " + " : " - ") + std::to_string(imm_value(in.c)) +
                  ")");
  } else if (in.op == Op::TENSOR || in.op == Op::TCHECK || in.op == Op::SAFEPOINT) {
    // tensor v3, kernel linear 2 (v1, v2)
    operand(info.a, in.a);
    operand(info.b, in.b);
    const uint16_t* l = location_list(f, in);
    std::string args;
    for (int i = 0; i < l[0]; ++i) args += (i ? ", " : "(") + location_name(f, l[1 + i]);
    if (!args.empty()) args += ")";
    if (in.op == Op::SAFEPOINT) {
      if (!args.empty()) ops.push_back(args);
    } else if (!args.empty()) {
      ops.back() += " " + args;
    }
  } else if (in.op == Op::HALT) {
    // halt  sum <- r2, i <- r0: the top-level variables that lived in registers go home
    if (const uint16_t* l = location_list(f, in))
      for (int i = 0; i < l[0]; ++i)
        ops.push_back(global_name(m, f.promoted[size_t(i)]) + " <- " + location_name(f, l[1 + i]));
  } else if (in.op == Op::PRINT) {
    const uint16_t* l = &f.lists[in.a];
    for (int i = 0; i < l[0]; ++i) {
      uint16_t type = l[1 + 2 * i], v = l[2 + 2 * i];
      ops.push_back(type == kPrintStr ? quoted(f.strings[v]) : location_name(f, v));
    }
  } else {
    operand(info.a, in.a);
    operand(info.b, in.b);
    operand(info.c, in.c);
  }
  std::string text = pad(info.name + std::string(" "), 12);
  for (size_t i = 0; i < ops.size(); ++i) text += (i ? ", " : "") + ops[i];
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (!notes.empty()) {
    text = pad(text, 34) + " ;";
    for (size_t i = 0; i < notes.size(); ++i) text += (i ? ", " : " ") + notes[i];
  }
  return text;
}

std::string join_rows(const std::vector<RegDisasmLine>& rows) {
  std::string out;
  for (const auto& r : rows) out += r.text + "\n";
  return out;
}

void disassemble_rows(const RegFunction& f, const Module* m, std::vector<RegDisasmLine>& rows) {
  std::string head = f.fn_index < 0 ? "<top>" : "fn " + f.name + "(";
  if (f.fn_index >= 0) {
    for (size_t i = 0; i < f.param_types.size(); ++i) {
      std::string name = i < f.vreg_names.size() ? f.vreg_names[i] : "p" + std::to_string(i);
      head += (i ? ", " : "") + name + ": " + type_name(f.param_types[i]);
    }
    head += ")";
    if (f.ret != Type::Void) head += std::string(" -> ") + type_name(f.ret);
  }
  char buf[200];
  if (f.allocated) {
    std::snprintf(buf, sizeof buf, "  [%d-register file: %d used, %d spill slot%s]", f.file_size,
                  f.num_regs, f.num_slots, f.num_slots == 1 ? "" : "s");
    head += buf;
    if (!f.param_locs.empty()) {
      head += "  ; params in";
      for (size_t i = 0; i < f.param_locs.size(); ++i)
        head += (i ? ", " : " ") + location_name(f, f.param_locs[i]);
    }
  } else {
    std::snprintf(buf, sizeof buf, "  [virtual: %d registers]", f.num_vregs);
    head += buf;
  }
  rows.push_back(RegDisasmLine{f.name, -1, std::move(head), SourceLoc{}});
  std::set<int> targets = jump_targets(f);
  uint32_t prev_line = 0;
  for (int pc = 0; pc < static_cast<int>(f.code.size()); ++pc) {
    SourceLoc loc = static_cast<size_t>(pc) < f.locs.size() ? f.locs[static_cast<size_t>(pc)]
                                                             : SourceLoc{};
    const char* mark = targets.count(pc) ? stack::kTargetMark : stack::kNoMark;
    if (pc > 0 && loc.line == prev_line)
      std::snprintf(buf, sizeof buf, "%s%04d     |  ", mark, pc);
    else
      std::snprintf(buf, sizeof buf, "%s%04d %5u  ", mark, pc, loc.line);
    prev_line = loc.line;
    rows.push_back(RegDisasmLine{f.name, pc, buf + disassemble_instr(f, pc, m), loc});
  }
}

std::string disassemble(const RegFunction& f, const Module* m) {
  std::vector<RegDisasmLine> rows;
  disassemble_rows(f, m, rows);
  return join_rows(rows);
}

std::vector<RegUnit> compile_reg_units(const Program& program, const Module& module,
                                       int num_registers, bool echo) {
  return compile_reg_units(CodeScope::of(program, echo), module, num_registers);
}

std::vector<RegUnit> compile_reg_units(const CodeScope& scope, const Module& module,
                                       int num_registers) {
  std::vector<RegUnit> units;
  auto add = [&](std::unique_ptr<RegFunction> f, const Diagnostic& err) {
    RegUnit u;
    if (!f) {
      u.error = err.message;
    } else {
      u.virt = *f;
      u.alloc = std::move(*f);
      u.intervals = allocate_registers(u.alloc, num_registers);
      u.fused = u.alloc;
      u.fusions = fuse_reg_superinstructions(u.fused);
    }
    units.push_back(std::move(u));
  };
  Diagnostic err;
  if (scope.script) add(compile_reg_toplevel(*scope.script, module, scope.echo, &err), err);
  for (const FnDecl* fn : scope.functions) add(compile_reg_function(*fn, module, &err), err);
  return units;
}

std::string summarize_allocation(const std::vector<RegUnit>& units) {
  size_t intervals = 0, spilled = 0, bodies = 0;
  int file = kDefaultRegisters;
  for (const auto& u : units) {
    if (!u.error.empty()) continue;
    ++bodies;
    file = u.alloc.file_size;
    intervals += u.intervals.size();
    for (const auto& x : u.intervals) spilled += x.spilled() ? 1 : 0;
  }
  return std::to_string(intervals) + " interval" + (intervals == 1 ? "" : "s") + " in " +
         std::to_string(bodies) + " bod" + (bodies == 1 ? "y" : "ies") + ", " +
         std::to_string(spilled) + " spilled (" + std::to_string(file) + " registers)";
}

std::string summarize_fusion(const std::vector<RegUnit>& units) {
  size_t fused = 0, bodies = 0;
  for (const auto& u : units) {
    if (!u.error.empty()) continue;
    fused += static_cast<size_t>(u.fusions);
    bodies += u.fusions > 0 ? 1 : 0;
  }
  return "fused " + std::to_string(fused) + " instruction pair" + (fused == 1 ? "" : "s") +
         " in " + std::to_string(bodies) + " bod" + (bodies == 1 ? "y" : "ies");
}

std::vector<RegDisasmLine> dump_reg_rows(const Program& program, const Module& module,
                                         RegForm form, int num_registers, bool echo) {
  return dump_reg_rows(CodeScope::of(program, echo), module, form, num_registers);
}

std::string dump_reg(const CodeScope& scope, const Module& module, RegForm form,
                     int num_registers) {
  return join_rows(dump_reg_rows(scope, module, form, num_registers));
}

std::vector<RegDisasmLine> dump_reg_rows(const CodeScope& scope, const Module& module,
                                         RegForm form, int num_registers) {
  std::vector<RegDisasmLine> rows;
  for (const auto& u : compile_reg_units(scope, module, num_registers)) {
    if (!rows.empty()) rows.push_back(RegDisasmLine{});  // the blank line between bodies
    const RegFunction& f = form == RegForm::Virtual     ? u.virt
                           : form == RegForm::Allocated ? u.alloc
                                                        : u.fused;
    if (u.error.empty()) {
      disassemble_rows(f, &module, rows);
      continue;
    }
    for (size_t at = 0; at <= u.error.size();) {  // one row per line of the message
      size_t nl = std::min(u.error.find('\n', at), u.error.size());
      rows.push_back(RegDisasmLine{"", -1, u.error.substr(at, nl - at), SourceLoc{}});
      at = nl + 1;
    }
  }
  return rows;
}

std::string dump_reg(const Program& program, const Module& module, RegForm form,
                     int num_registers, bool echo) {
  return join_rows(dump_reg_rows(program, module, form, num_registers, echo));
}

std::string dump_reg(const Program& program, const Module& module, bool allocated,
                     int num_registers, bool echo) {
  return dump_reg(program, module, allocated ? RegForm::Allocated : RegForm::Virtual,
                  num_registers, echo);
}

std::string dump_live(const Program& program, const Module& module, int num_registers,
                      bool echo) {
  return dump_live(CodeScope::of(program, echo), module, num_registers);
}

std::string dump_live(const CodeScope& scope, const Module& module, int num_registers) {
  std::string out;
  for (const auto& u : compile_reg_units(scope, module, num_registers)) {
    if (!out.empty()) out += "\n";
    if (!u.error.empty()) {
      out += u.error + "\n";
      continue;
    }
    out += disassemble(u.virt, &module);
    int spilled = 0;
    for (const auto& x : u.intervals) spilled += x.spilled() ? 1 : 0;
    out += "live intervals (" + std::to_string(u.intervals.size()) + ", " +
           std::to_string(spilled) + " spilled) for a " + std::to_string(u.alloc.file_size) +
           "-register file:\n";
    out += print_live_intervals(u.virt, u.intervals);
  }
  return out;
}

}  // namespace descent
