// The views of the native backend's stages (`descent dump --stage native-*`, `:native`).
#include <algorithm>
#include <cstdio>

#include "lang/value.h"
#include "native/a64.h"
#include "native/backend.h"
#include "native/compile.h"
#include "native/native.h"
#include "vm/reg_disasm.h"

namespace descent::native {

namespace {


std::string pad(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

// One node: "n4: i64 = add n2, n3".
std::string node_text(const Function& f, const Block& b, int id) {
  const Node& n = b.nodes[static_cast<size_t>(id)];
  std::string s = "n" + std::to_string(id) + ": ";
  if (n.type == VT::I64 || n.type == VT::F64) s += std::string(vt_name(n.type)) + " = ";
  s += nk_name(n.kind);
  std::string args;
  auto arg = [&](const std::string& a) { args += (args.empty() ? " " : ", ") + a; };
  switch (n.kind) {
    case NK::Const: case NK::Imm64: arg(std::to_string(n.imm)); break;
    case NK::FConst: case NK::FLoadConst: arg(format_float(Value::of_int(n.imm).f)); break;
    case NK::Reg: case NK::SetReg: {
      std::string v = "v" + std::to_string(n.aux);
      const auto& names = f.src->vreg_names;
      if (static_cast<size_t>(n.aux) < names.size() && !names[static_cast<size_t>(n.aux)].empty())
        v += "(" + names[static_cast<size_t>(n.aux)] + ")";
      arg(v);
      break;
    }
    case NK::Global: case NK::GlobalChk: case NK::SetGlobal: arg("g" + std::to_string(n.aux)); break;
    case NK::SetCC: case NK::FSetCC: arg(cc_name(static_cast<CC>(n.aux))); break;
    case NK::Call: arg("f" + std::to_string(n.aux)); break;
    case NK::Br: case NK::BrCond: arg("b" + std::to_string(n.aux)); break;
    case NK::FMath: case NK::LibCall:
      arg(n.aux < 0 ? "fmod" : builtin_name(static_cast<Builtin>(n.aux)));
      break;
    default: break;
  }
  for (int o : n.ops) arg("n" + std::to_string(o));
  if (is_chained(n.kind)) arg(n.chain >= 0 ? "ch n" + std::to_string(n.chain) : "ch entry");
  s += args;
  return s;
}

std::string block_head(const Function& f, size_t bi) {
  const Block& b = f.blocks[bi];
  std::string s = "b" + std::to_string(bi) + ":  " +
                  (b.end_pc == b.first_pc ? std::string("[entry: the parameters arrive]")
                                          : "[pc " + std::to_string(b.first_pc) + ".." +
                                                std::to_string(b.end_pc - 1) + "]");
  if (!b.succs.empty()) {
    s += "  ->";
    for (int x : b.succs) s += " b" + std::to_string(x);
  }
  return s;
}

std::string dag_text(const Function& f) {
  std::string out;
  for (size_t bi = 0; bi < f.blocks.size(); ++bi) {
    const Block& b = f.blocks[bi];
    out += block_head(f, bi) + "\n";
    for (size_t i = 0; i < b.nodes.size(); ++i) {
      const Node& n = b.nodes[i];
      if (n.dead) continue;
      std::string line = "  " + node_text(f, b, static_cast<int>(i));
      if (n.pc >= 0) line = pad(line, 44) + "; pc " + std::to_string(n.pc);
      out += line + "\n";
    }
  }
  return out;
}

// The DAG as Graphviz: value edges solid (operand to user), chain edges dashed; with a
// cover, each node filled with its pattern's colour and labelled with the pattern.
std::string dag_dot(const Function& f, const MFunction* cover, const Target& t = x86_64_target()) {
  static const char* const palette[] = {"#fde2e4", "#e2ece9", "#dfe7fd", "#fff1e6", "#e8e8e4",
                                        "#d8e2dc", "#f0efeb", "#eae4e9", "#cddafd", "#fad2e1",
                                        "#bee1e6", "#f1e3d3"};
  std::string out = "digraph dag {\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n";
  for (size_t bi = 0; bi < f.blocks.size(); ++bi) {
    const Block& b = f.blocks[bi];
    out += "  subgraph cluster_b" + std::to_string(bi) + " {\n    label=\"" + block_head(f, bi) + "\";\n";
    for (size_t i = 0; i < b.nodes.size(); ++i) {
      const Node& n = b.nodes[i];
      if (n.dead) continue;
      std::string id = "b" + std::to_string(bi) + "n" + std::to_string(i);
      std::string label = node_text(f, b, static_cast<int>(i));
      std::string style;
      if (cover) {
        int r = cover->node_rule[bi][i];
        if (r >= 0) {
          label += "\\n[" + std::string(patterns(t)[static_cast<size_t>(r)].name) + "]";
          style = ", style=filled, fillcolor=\"" + std::string(palette[r % 12]) + "\"";
        }
      }
      std::string esc;
      for (char c : label) {
        if (c == '"') esc += "\\\"";
        else esc += c;
      }
      out += "    " + id + " [label=\"" + esc + "\"" + style + "];\n";
    }
    for (size_t i = 0; i < b.nodes.size(); ++i) {
      const Node& n = b.nodes[i];
      if (n.dead) continue;
      std::string id = "b" + std::to_string(bi) + "n" + std::to_string(i);
      for (int o : n.ops) out += "    b" + std::to_string(bi) + "n" + std::to_string(o) + " -> " + id + ";\n";
      if (is_chained(n.kind) && n.chain >= 0)
        out += "    b" + std::to_string(bi) + "n" + std::to_string(n.chain) + " -> " + id +
               " [style=dashed, color=blue];\n";
    }
    out += "  }\n";
  }
  out += "}\n";
  return out;
}

std::string vreg_text(const MFunction& m, int v, const Allocation* a, const Target& t) {
  std::string s = "v" + std::to_string(v);
  if (v < static_cast<int>(m.names.size()) && !m.names[static_cast<size_t>(v)].empty())
    s += "(" + m.names[static_cast<size_t>(v)] + ")";
  if (a && static_cast<size_t>(v) < a->loc.size()) {
    const Loc& l = a->loc[static_cast<size_t>(v)];
    bool f = m.vt[static_cast<size_t>(v)] == VT::F64;
    if (l.reg >= 0) return f ? t.fpr(l.reg) : t.gpr(l.reg);
    if (l.slot >= 0) return "[slot " + std::to_string(l.slot) + "]";
  }
  return s;
}

std::string minst_text(const MFunction& m, const MInst& mi, const Allocation* a, const Target& t) {
  std::string s;
  const bool x86 = t.arch == Arch::X86_64;
  auto cond = [&](int cc) { return std::string(".") + (x86 ? cond_name(static_cast<Cond>(cc)) : a64::cond_name(static_cast<a64::Cond>(cc))); };
  if (mi.def >= 0) s += vreg_text(m, mi.def, a, t) + " = ";
  s += x86 ? mop_name(mi.op) : a64_mop_name(mi.op);
  std::string args;
  auto arg = [&](const std::string& x) { args += (args.empty() ? " " : ", ") + x; };
  if (mi.op == MOp::ARGS)
    for (int p : mi.params) arg(vreg_text(m, p, a, t));
  for (int u : mi.uses) arg(vreg_text(m, u, a, t));
  switch (mi.op) {
    case MOp::MOVI: case MOp::ADDI: case MOp::SUBI: case MOp::IMULI: case MOp::ANDI: case MOp::SHLI:
    case MOp::SARI: case MOp::SHRI: case MOp::XORI: case MOp::CMPI:
      arg(std::to_string(mi.imm));
      break;
    case MOp::FMOVI: arg(format_float(Value::of_int(mi.imm).f)); break;
    case MOp::SETCC: case MOp::CMOV: s += cond(mi.cc); break;
    case MOp::FSETCC: s += std::string(".") + cc_name(static_cast<CC>(mi.cc)); break;
    case MOp::JCC: s += cond(mi.cc); arg("b" + std::to_string(mi.target)); break;
    case MOp::JMP: case MOp::CBNZ: case MOp::CBZ: arg("b" + std::to_string(mi.target)); break;
    case MOp::LDG: case MOp::LDGCHK: case MOp::STG: arg("g" + std::to_string(mi.aux)); break;
    case MOp::CALL: arg("f" + std::to_string(mi.aux)); break;
    case MOp::CALLH: arg(helper_name(static_cast<Helper>(mi.aux))); break;
    default: break;
  }
  return s + args;
}

std::string mir_text(const MFunction& m, const Allocation* a, bool with_pattern, const Target& t) {
  std::string out;
  for (size_t b = 0; b < m.blocks.size(); ++b) {
    out += "b" + std::to_string(b) + ":\n";
    for (const MInst& mi : m.blocks[b].code) {
      std::string line = "  " + minst_text(m, mi, a, t);
      if (with_pattern && mi.pattern >= 0)
        line = pad(line, 40) + "; " + patterns(t)[static_cast<size_t>(mi.pattern)].name + " n" +
               std::to_string(mi.node);
      out += line + "\n";
    }
  }
  return out;
}

std::string title(const Compiled& c) {
  const RegFunction& f = *c.src;
  std::string s = f.fn_index >= 0 ? "fn " + f.name : f.name;
  return s;
}

// Per instruction index (and one past the end): the labels placed before it.
std::vector<std::vector<int>> labels_before(const std::vector<int>& labels_at, size_t n) {
  std::vector<std::vector<int>> labels(n + 1);
  for (size_t l = 0; l < labels_at.size(); ++l)
    if (labels_at[l] >= 0) labels[static_cast<size_t>(labels_at[l])].push_back(static_cast<int>(l));
  return labels;
}

// The AArch64 listing: offset, the word, the instruction (branches to their labels).
std::string a64_asm_text(const A64Emitted& e) {
  if (!e.error.empty()) return "; the aarch64 emitter: " + e.error + "\n";
  std::string out;
  std::vector<std::vector<int>> labels = labels_before(e.labels_at, e.insts.size());
  for (size_t i = 0; i <= e.insts.size(); ++i) {
    for (int l : labels[i]) out += ".L" + std::to_string(l) + ":\n";
    if (i == e.insts.size()) break;
    std::string text = a64::format(e.insts[i]);
    if (e.label_of[i] >= 0) text = text.substr(0, text.rfind('.')) + ".L" + std::to_string(e.label_of[i]);
    char head[32];
    std::snprintf(head, sizeof head, "  %04zx  %08x  ", 4 * i, a64::encode(e.insts[i]));
    std::string line = head + pad(text, 34);
    if (!e.comments[i].empty()) line += "; " + e.comments[i];
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out + "; " + std::to_string(e.bytes.size()) + " bytes\n";
}

std::string stage_text(const Compiled& c, std::string_view stage, bool dot) {
  std::string out;
  const Target& t = *c.target;
  if (stage == "dag") return dot ? dag_dot(c.built, nullptr) : dag_text(c.built);
  if (stage == "legal" || stage == "combine") {
    const Function& f = stage == "legal" ? c.legal : c.fn;
    if (dot) return dag_dot(f, nullptr);
    out = dag_text(f);
    size_t from = stage == "legal" ? 0 : c.legal.log.size();
    size_t to = stage == "legal" ? c.legal.log.size() : c.fn.log.size();
    out += from == to ? std::string("; nothing to ") + (stage == "legal" ? "legalize" : "combine") + "\n" : "";
    for (size_t i = from; i < to; ++i) out += "; " + c.fn.log[i] + "\n";
    return out;
  }
  if (stage == "isel") {
    if (dot) return dag_dot(c.fn, &c.selected, t);
    for (size_t b = 0; b < c.selected.cover.size(); ++b)
      for (const std::string& line : c.selected.cover[b]) out += "; b" + std::to_string(b) + " tree " + line + "\n";
    return out + mir_text(c.selected, nullptr, true, t);
  }
  if (stage == "sched") {
    out = mir_text(c.mf, nullptr, false, t);
    if (c.sched_log.empty()) out += "; no instruction moved\n";
    for (const std::string& l : c.sched_log) out += "; " + l + "\n";
    return out;
  }
  if (stage == "regalloc") {
    out = "; interval     [start, end]  where\n";
    for (const Interval& iv : c.alloc.intervals) {
      std::string line = "; " + pad(vreg_text(c.mf, iv.vreg, nullptr, t), 12) + " [" + std::to_string(iv.start) +
                         ", " + std::to_string(iv.end) + "]";
      line = pad(line, 30) + vreg_text(c.mf, iv.vreg, &c.alloc, t);
      if (iv.crosses_call) line += "   (live across a call)";
      out += line + "\n";
    }
    out += "; callee-saved used:";
    if (c.alloc.callee_saved.empty() && c.alloc.fpr_callee_saved.empty()) out += " none";
    for (int r : c.alloc.callee_saved) out += std::string(" ") + t.gpr(r);
    for (int r : c.alloc.fpr_callee_saved) out += " " + t.fpr(r);
    out += "; spill slots: " + std::to_string(c.alloc.num_slots) + "\n";
    return out + mir_text(c.mf, &c.alloc, false, t);
  }
  if (stage == "asm" && t.arch == Arch::AArch64) return a64_asm_text(c.a64_code);
  if (stage == "asm") {
    const Emitted& e = c.code;
    std::vector<std::vector<int>> labels = labels_before(e.labels_at, e.insts.size());
    for (size_t i = 0; i <= e.insts.size(); ++i) {
      for (int l : labels[i]) out += ".L" + std::to_string(l) + ":\n";
      if (i == e.insts.size()) break;
      std::string bytes;
      for (int k = 0; k < e.sizes[i]; ++k) {
        char buf[4];
        std::snprintf(buf, sizeof buf, "%02x ", e.bytes[static_cast<size_t>(e.offsets[i] + k)]);
        bytes += buf;
      }
      char off[16];
      std::snprintf(off, sizeof off, "%04x  ", e.offsets[i]);
      std::string line = std::string("  ") + off + pad(bytes, 33) + pad(format_intel(e.insts[i]), 34);
      if (!e.comments[i].empty()) line += "; " + e.comments[i];
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    out += "; " + std::to_string(e.bytes.size()) + " bytes\n";
    return out;
  }
  return out;
}

// Every body of the scope through all the stages, with the snapshots the views read, in the
// order the views list them; a body that does not compile comes back as its message.
struct ViewedBody {
  std::unique_ptr<Compiled> code;  // null: `error` says why
  std::string error;
};
std::vector<ViewedBody> compile_for_views(const CodeScope& scope, const Module& module,
                                          const Target& target = x86_64_target()) {
  std::vector<ViewedBody> out;
  for (auto& u : compile_reg_units(scope, module)) {
    ViewedBody v;
    if (!u.error.empty()) {
      v.error = u.error;
    } else {
      bool top = u.virt.fn_index < 0;
      v.code = compile(std::make_unique<RegFunction>(std::move(u.virt)), module, top, &v.error, true, target);
      if (v.code) {
        // Views number the error sites per body (the engine numbers them per session).
        std::vector<int> ids(v.code->fn.sites.size());
        for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
        finish(*v.code, ids, false);
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace

const char* helper_name(Helper h) {
  switch (h) {
    case Helper::PrintInt: return "print_int";
    case Helper::PrintFloat: return "print_float";
    case Helper::PrintBool: return "print_bool";
    case Helper::PrintStr: return "print_str";
    case Helper::PrintSpace: return "print_space";
    case Helper::PrintEnd: return "print_end";
    case Helper::Math: return "math";
    case Helper::Fmod: return "fmod";
  }
  return "?";
}

// The machine operations under AArch64's mnemonics (the isel, sched and regalloc views).
const char* a64_mop_name(MOp op) {
  switch (op) {
    case MOp::MOV: case MOp::MOVI: return "mov";
    case MOp::ADD: case MOp::ADDI: return "add";
    case MOp::SUB: case MOp::SUBI: return "sub";
    case MOp::IMUL: case MOp::IMULI: return "mul";
    case MOp::AND: case MOp::ANDI: return "and";
    case MOp::SHLI: return "lsl";
    case MOp::SARI: return "asr";
    case MOp::SHRI: return "lsr";
    case MOp::XORI: return "eor";
    case MOp::CMP: case MOp::CMPI: return "cmp";
    case MOp::TEST: return "tst";
    case MOp::SETCC: return "cset";
    case MOp::CMOV: return "csel";
    case MOp::SDIVSAFE: return "sdiv";
    case MOp::SREMSAFE: return "srem";
    case MOp::DIVCHECK: return "cbz.divcheck";
    case MOp::FMOV: case MOp::FMOVI: return "fmov";
    case MOp::FADD: return "fadd";
    case MOp::FSUB: return "fsub";
    case MOp::FMUL: return "fmul";
    case MOp::FDIV: return "fdiv";
    case MOp::FMIN: return "fcsel.min";
    case MOp::FMAX: return "fcsel.max";
    case MOp::FSQRT: return "fsqrt";
    case MOp::UCOMI: return "fcmp";
    case MOp::CVTSI2SD: return "scvtf";
    case MOp::CVTTSD2SI: return "fcvtzs.chk";
    case MOp::CALL: return "bl";
    case MOp::CALLH: return "bl.helper";
    case MOp::JMP: return "b";
    case MOp::JCC: return "b";
    case MOp::MULHS: return "smulh";
    default: return mop_name(op);
  }
}

const char* mop_name(MOp op) {
  static const char* const names[] = {
#define DESCENT_NATIVE_MOPN(name, text) text,
      DESCENT_NATIVE_MOPS(DESCENT_NATIVE_MOPN)
#undef DESCENT_NATIVE_MOPN
  };
  return names[static_cast<int>(op)];
}

const std::vector<StageInfo>& stages() {
  static const std::vector<StageInfo> s = {
      {"dag", "the selection DAG of each basic block, as built from the virtual register code"},
      {"legal", "the DAG after legalisation (what x86-64 cannot do as it stands), with what changed"},
      {"combine", "the DAG after the combine (constant folding, algebraic identities)"},
      {"isel", "instruction selection by tree covering: each tree's patterns, then the instructions"},
      {"sched", "the instructions after list scheduling inside each block"},
      {"regalloc", "live intervals, their x86-64 registers or stack slots (linear scan), the code"},
      {"asm", "the x86-64 code with each instruction's bytes, from the backend's own encoder"},
  };
  return s;
}

bool view(const CodeScope& scope, const Module& module, std::string_view stage, bool dot,
          std::string* out, const Target& target) {
  bool known = false;
  for (const StageInfo& s : stages()) known = known || stage == s.name;
  if (!known) {
    *out = "unknown native stage '" + std::string(stage) + "' (one of: dag legal combine isel sched regalloc asm)";
    return false;
  }
  out->clear();
  for (const ViewedBody& v : compile_for_views(scope, module, target)) {
    if (!out->empty()) *out += "\n";
    if (!v.code) {
      *out += v.error + "\n";
      continue;
    }
    if (!dot) *out += "; " + title(*v.code) + "\n";
    *out += stage_text(*v.code, stage, dot);
  }
  return true;
}

std::vector<BodyGraph> dag_graphs(const CodeScope& scope, const Module& module, std::string_view stage,
                                  const Target& target) {
  std::vector<BodyGraph> out;
  for (const ViewedBody& v : compile_for_views(scope, module, target)) {
    BodyGraph g;
    if (!v.code) {
      g.error = v.error;
      out.push_back(std::move(g));
      continue;
    }
    const Compiled* c = v.code.get();
    g.name = title(*c);
    g.text = stage_text(*c, stage, false);
    if (stage != "dag" && stage != "legal" && stage != "combine" && stage != "isel") {
      out.push_back(std::move(g));
      continue;
    }
    const Function& f = stage == "dag" ? c->built : stage == "legal" ? c->legal : c->fn;
    const MFunction* cover = stage == "isel" ? &c->selected : nullptr;
    for (size_t bi = 0; bi < f.blocks.size(); ++bi) {
      g.blocks.push_back(block_head(f, bi));
      const Block& b = f.blocks[bi];
      std::vector<int> index(b.nodes.size(), -1);
      for (size_t i = 0; i < b.nodes.size(); ++i) {
        if (b.nodes[i].dead) continue;
        GraphNode n;
        n.block = static_cast<int>(bi);
        n.id = static_cast<int>(i);
        n.label = node_text(f, b, static_cast<int>(i));
        if (cover) {
          n.pattern = cover->node_rule[bi][i];
          if (n.pattern >= 0) n.pattern_name = patterns(target)[static_cast<size_t>(n.pattern)].name;
        }
        index[i] = static_cast<int>(g.nodes.size());
        g.nodes.push_back(std::move(n));
      }
      for (size_t i = 0; i < b.nodes.size(); ++i) {
        const Node& n = b.nodes[i];
        if (n.dead) continue;
        for (int o : n.ops) g.edges.push_back({index[static_cast<size_t>(o)], index[i], false});
        if (is_chained(n.kind) && n.chain >= 0)
          g.edges.push_back({index[static_cast<size_t>(n.chain)], index[i], true});
      }
    }
    out.push_back(std::move(g));
  }
  return out;
}

std::string pattern_table(const Target& target) {
  const bool x86 = target.arch == Arch::X86_64;
  std::string out = pad("pattern", 16) + pad("gives", 7) + pad("covers", 28) + "cost  " + (x86 ? "x86" : target.name) + "\n";
  for (const Pattern& p : patterns(target))
    out += pad(p.name, 16) + pad(p.result, 7) + pad(p.shape, 28) + pad(std::to_string(p.cost), 6) + p.emits + "\n";
  return out;
}

}  // namespace descent::native
