#include "vm/stack_disasm.h"

#include <cstdio>
#include <set>

#include "vm/stack_compiler.h"
#include "vm/stack_fuse.h"

namespace descent::stack {

namespace {

constexpr int kNameWidth = 27;     // the longest opcode name and a space
constexpr int kOperandWidth = 17;  // resolved operands, then the raw encoding

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string quoted(const std::string& text) {
  std::string q = "\"";
  for (char ch : text) {
    if (ch == '\n')
      q += "\\n";
    else if (ch == '\t')
      q += "\\t";
    else if (ch == '"' || ch == '\\')
      q += '\\', q += ch;
    else
      q += ch;
  }
  return q + "\"";
}

template <class V>
std::string name_at(const V& names, uint32_t i, const char* fallback) {
  if (i < names.size()) return names[i].name;
  return fallback + std::to_string(i);
}

std::string offset_text(size_t offset) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04zu", offset);
  return buf;
}

}  // namespace

std::string constant_text(const Chunk& chunk, uint32_t k) {
  if (k >= chunk.constants.size()) return "k" + std::to_string(k) + "?";
  return format_value(chunk.constants[k], chunk.constant_types[k]);
}

std::string disassemble_instruction(const Chunk& chunk, size_t offset, const Module& module,
                                    size_t* next) {
  Op op = chunk.op_at(offset);
  size_t len = instruction_length(op);
  if (next) *next = offset + len;

  std::string line = offset_text(offset) + " ";
  char buf[16];
  uint32_t src_line = offset < chunk.locs.size() ? chunk.locs[offset].line : 0;
  if (offset > 0 && offset - 1 < chunk.locs.size() && chunk.locs[offset - 1].line == src_line)
    line += "   | ";
  else
    std::snprintf(buf, sizeof buf, "%4u ", src_line), line += buf;
  line += op_name(op);

  Format f = op_format(op);
  int n = operand_count(f);
  if (n == 0) return line;
  std::string resolved, raw;
  for (int i = 0; i < n; ++i) {
    uint32_t v = chunk.operand(offset, i);
    std::string r, w;
    switch (operand_kind(f, i)) {
      case Operand::Const: r = constant_text(chunk, v), w = "k" + std::to_string(v); break;
      case Operand::Local:
        r = v < chunk.local_names.size() ? chunk.local_names[v] : "l" + std::to_string(v);
        w = "l" + std::to_string(v);
        break;
      case Operand::Global: r = name_at(module.globals, v, "g"), w = "g" + std::to_string(v); break;
      case Operand::Function:
        r = name_at(module.functions, v, "f"), w = "f" + std::to_string(v);
        break;
      case Operand::Jump: {
        int32_t j = static_cast<int32_t>(v);
        r = "-> " + offset_text(chunk.jump_target(offset, i));
        w = (j >= 0 ? "+" : "") + std::to_string(j);
        break;
      }
      case Operand::Count: r = std::to_string(v); break;
      case Operand::Builtin: r = builtin_name(static_cast<Builtin>(v)); break;
      case Operand::Type: r = type_name(static_cast<Type>(v)); break;
      case Operand::Site:
        r = v < chunk.tensor_sites.size() ? tensor_site_text(chunk.tensor_sites[v], &module)
                                          : "s" + std::to_string(v) + "?";
        w = "s" + std::to_string(v);
        break;
      case Operand::Print: {
        w = "p" + std::to_string(v);
        if (v >= chunk.prints.size()) break;
        for (const auto& item : chunk.prints[v]) {
          if (!r.empty()) r += ' ';
          r += item.type == Type::Str ? quoted(item.text) : type_name(item.type);
        }
        if (r.empty()) r = "(empty line)";
        break;
      }
    }
    if (i) resolved += ", ";
    resolved += r;
    if (!w.empty()) raw += (raw.empty() ? "" : " ") + w;
  }
  line = pad(line, 10 + kNameWidth) + resolved;
  if (!raw.empty()) line = pad(line + " ", 10 + kNameWidth + kOperandWidth) + "; " + raw;
  return line;
}

// The offsets some jump of the chunk lands on.
static std::set<size_t> jump_targets(const Chunk& chunk) {
  std::set<size_t> targets;
  for (size_t off = 0; off < chunk.code.size(); off += instruction_length(chunk.op_at(off))) {
    Format f = op_format(chunk.op_at(off));
    for (int i = 0; i < operand_count(f); ++i)
      if (operand_kind(f, i) == Operand::Jump) targets.insert(chunk.jump_target(off, i));
  }
  return targets;
}

void disassemble_rows(const Chunk& chunk, const Module& module, std::vector<DisasmLine>& rows) {
  std::set<size_t> targets = jump_targets(chunk);
  std::string head = "== " + chunk.name + " ==";
  if (!chunk.local_names.empty()) {
    head += "  locals";
    for (const auto& n : chunk.local_names) head += " " + n;
  }
  head += "  stack " + std::to_string(chunk.max_stack);
  rows.push_back(DisasmLine{chunk.name, -1, std::move(head), SourceLoc{}});
  for (size_t off = 0; off < chunk.code.size();) {
    DisasmLine row{chunk.name, static_cast<int>(off), "",
                   off < chunk.locs.size() ? chunk.locs[off] : SourceLoc{}};
    const char* mark = targets.count(off) ? kTargetMark : kNoMark;
    row.text = mark + disassemble_instruction(chunk, off, module, &off);
    rows.push_back(std::move(row));
  }
}

std::string join_rows(const std::vector<DisasmLine>& rows) {
  std::string out;
  for (const auto& r : rows) out += r.text + "\n";
  return out;
}

std::string disassemble(const Chunk& chunk, const Module& module) {
  std::vector<DisasmLine> rows;
  disassemble_rows(chunk, module, rows);
  return join_rows(rows);
}

std::vector<DisasmLine> disassemble_rows(const StackProgram& program, const Module& module) {
  std::vector<DisasmLine> rows;
  disassemble_rows(program.script, module, rows);
  for (const auto& fn : program.functions) {
    rows.push_back(DisasmLine{});  // the blank line between chunks
    disassemble_rows(fn, module, rows);
  }
  return rows;
}

std::string disassemble(const StackProgram& program, const Module& module) {
  return join_rows(disassemble_rows(program, module));
}

std::vector<DisasmLine> dump_stack_rows(const CodeScope& scope, const Module& module,
                                        bool fused) {
  std::vector<DisasmLine> rows;
  auto add = [&](Chunk chunk) {
    if (fused) fuse_superinstructions(chunk);
    if (!rows.empty()) rows.push_back(DisasmLine{});  // the blank line between chunks
    disassemble_rows(chunk, module, rows);
  };
  if (scope.script) add(compile_script(*scope.script, module, scope.echo));
  for (const FnDecl* fn : scope.functions) add(compile_function(*fn, module));
  return rows;
}

std::string dump_stack(const CodeScope& scope, const Module& module, bool fused) {
  return join_rows(dump_stack_rows(scope, module, fused));
}

std::vector<DisasmLine> dump_stack_rows(const Program& program, const Module& module, bool echo,
                                        bool fused) {
  return dump_stack_rows(CodeScope::of(program, echo), module, fused);
}

std::string dump_stack(const Program& program, const Module& module, bool echo, bool fused) {
  return join_rows(dump_stack_rows(program, module, echo, fused));
}

}  // namespace descent::stack
