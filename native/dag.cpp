// Stage 1: the selection DAG, one per basic block of the virtual register code.
//
// Inside a block every value is a node and every use an edge, so `x = a + b; y = x * 2`
// becomes mul(add(a, b), 2) and x needs no register of its own unless a later block reads
// it. What crosses a block boundary travels in the bytecode's virtual registers: `reg vN`
// reads one at the block's start (LLVM's CopyFromReg), `setreg vN` writes one at its end
// (CopyToReg), only when a later block may read it. Side effects (calls, prints, globals,
// checks that may fail) are kept in program order by a chain: each takes the previous one as
// an operand, as LLVM's chain operand does.
#include <algorithm>

#include "native/backend.h"

namespace descent::native {

namespace {

struct NodeInfo {
  const char* text;
  int ops;
  VT vt;
};
const NodeInfo kNodes[] = {
#define DESCENT_NATIVE_NI(name, text, n, vt) {text, n, VT::vt},
    DESCENT_NATIVE_NODES(DESCENT_NATIVE_NI)
#undef DESCENT_NATIVE_NI
};

VT vt_of(Type t) {
  switch (t) {
    case Type::Float: return VT::F64;
    case Type::Void:
    case Type::Unknown: return VT::None;
    default: return VT::I64;
  }
}

// Live-out sets of the virtual registers, per block: the classic backward dataflow.
void liveness(const RegFunction& f, Function& out) {
  size_t n = out.blocks.size(), nv = static_cast<size_t>(f.num_vregs);
  std::vector<Bits> use(n, Bits(nv)), def = use, in;
  std::vector<int> u, d;
  std::vector<std::vector<int>> succs(n);
  for (size_t b = 0; b < n; ++b) {
    succs[b] = out.blocks[b].succs;
    for (int pc = out.blocks[b].first_pc; pc < out.blocks[b].end_pc; ++pc) {
      u.clear();
      d.clear();
      instr_uses(f, pc, u);
      instr_defs(f, pc, d);
      for (int v : u)
        if (v < f.num_vregs && !def[b].test(static_cast<size_t>(v))) use[b].set(static_cast<size_t>(v));
      for (int v : d)
        if (v < f.num_vregs) def[b].set(static_cast<size_t>(v));
    }
  }
  solve_liveness(use, def, succs, nv, &in, &out.live_out);
}

class Builder {
 public:
  Builder(const RegFunction& f, const Module& m, Function& out) : f_(f), m_(m), out_(out) {}

  bool run(std::string* error) {
    split_blocks();
    liveness(f_, out_);
    for (size_t b = 0; b < out_.blocks.size(); ++b)
      if (!build(static_cast<int>(b), error)) return false;
    return true;
  }

 private:
  // Leaders: the first instruction, every jump target, and every instruction after a jump,
  // a return or a conditional branch.
  void split_blocks() {
    size_t n = f_.code.size();
    std::vector<bool> leader(n + 1, false);
    leader[0] = true;
    for (size_t pc = 0; pc < n; ++pc) {
      const Instr& in = f_.code[pc];
      if (is_jump(in.op)) leader[in.c] = true;
      if (is_jump(in.op) || !falls_through(in.op) || returns_value(in.op)) leader[pc + 1] = true;
    }
    block_of_.assign(n + 1, -1);
    // A function gets an empty entry block of its own: the parameters arrive there (isel's
    // `args`), so a loop back to the first instruction does not take them again.
    if (f_.fn_index >= 0) {
      out_.blocks.emplace_back();
      out_.blocks.back().succs.push_back(1);
    }
    for (size_t pc = 0; pc < n; ++pc) {
      if (leader[pc]) {
        if (!out_.blocks.empty()) out_.blocks.back().end_pc = static_cast<int>(pc);
        out_.blocks.emplace_back();
        out_.blocks.back().first_pc = static_cast<int>(pc);
      }
      block_of_[pc] = static_cast<int>(out_.blocks.size()) - 1;
    }
    out_.blocks.back().end_pc = static_cast<int>(n);
    for (auto& b : out_.blocks) {
      if (b.end_pc == b.first_pc) continue;  // the entry block
      const Instr& last = f_.code[static_cast<size_t>(b.end_pc - 1)];
      if (falls_through(last.op) && b.end_pc < static_cast<int>(n))
        b.succs.push_back(block_of_[static_cast<size_t>(b.end_pc)]);
      if (is_jump(last.op)) {
        int t = block_of_[last.c];
        if (std::find(b.succs.begin(), b.succs.end(), t) == b.succs.end()) b.succs.push_back(t);
      }
    }
  }

  int add(Node n) {
    if (n.type == VT::None && kNodes[static_cast<int>(n.kind)].vt != VT::None && n.kind != NK::Call)
      n.type = kNodes[static_cast<int>(n.kind)].vt;
    n.pc = pc_;
    blk_->nodes.push_back(std::move(n));
    return static_cast<int>(blk_->nodes.size()) - 1;
  }
  int chained(Node n) {
    n.chain = chain_;
    chain_ = add(std::move(n));
    return chain_;
  }
  int node(NK k, std::vector<int> ops, int aux = 0) {
    Node n;
    n.kind = k;
    n.ops = std::move(ops);
    n.aux = aux;
    return add(std::move(n));
  }
  int val(int v) {
    int& c = cur_[static_cast<size_t>(v)];
    if (c < 0) {
      touched_.push_back(v);
      Node n;
      n.kind = NK::Reg;
      n.aux = v;
      n.type = out_.vreg_vt[static_cast<size_t>(v)];
      c = add(std::move(n));
    }
    return c;
  }
  int constant(int k) {
    Node n;
    Type t = f_.k_types[static_cast<size_t>(k)];
    n.kind = t == Type::Float ? NK::FConst : NK::Const;
    n.imm = f_.k[static_cast<size_t>(k)].i;
    if (t == Type::Bool) n.imm = f_.k[static_cast<size_t>(k)].b ? 1 : 0;
    return add(std::move(n));
  }
  int int_const(int64_t v) {
    Node n;
    n.kind = NK::Const;
    n.imm = v;
    return add(std::move(n));
  }
  void set(int v, int value) {
    cur_[static_cast<size_t>(v)] = value;
    if (!defined_[static_cast<size_t>(v)]) written_.push_back(v);
    defined_[static_cast<size_t>(v)] = true;
    touched_.push_back(v);
  }
  int site(Fail kind, int global = -1) {
    out_.sites.push_back(Site{f_.locs[static_cast<size_t>(pc_)], kind, global});
    return static_cast<int>(out_.sites.size()) - 1;
  }
  int block_at(int pc) const { return block_of_[static_cast<size_t>(pc)]; }

  bool build(int b, std::string* error) {
    blk_ = &out_.blocks[static_cast<size_t>(b)];
    // Reset only what the last block touched: a function may have thousands of blocks and
    // of virtual registers, and clearing all of them per block would be quadratic.
    if (cur_.empty()) {
      cur_.assign(static_cast<size_t>(f_.num_vregs), -1);
      defined_.assign(static_cast<size_t>(f_.num_vregs), false);
    }
    for (int v : touched_) cur_[static_cast<size_t>(v)] = -1, defined_[static_cast<size_t>(v)] = false;
    touched_.clear();
    written_.clear();
    chain_ = -1;
    bool terminated = false;
    for (pc_ = blk_->first_pc; pc_ < blk_->end_pc; ++pc_) {
      const Instr& in = f_.code[static_cast<size_t>(pc_)];
      if (!instr(in, b, &terminated, error)) return false;
    }
    if (!terminated) {  // falls into the next block
      end_block(b);
      Node br;
      br.kind = NK::Br;
      br.aux = b + 1;
      chained(std::move(br));
    }
    blk_->last_chain = chain_;
    return true;
  }

  // The setreg nodes for the virtual registers this block gives a new value that a later
  // block may read; they come just before the terminator.
  void end_block(int b) {
    std::sort(written_.begin(), written_.end());  // in register order, whatever the code's
    for (int v : written_) {
      auto i = static_cast<size_t>(v);
      if (!out_.live_out[static_cast<size_t>(b)].test(i)) continue;
      if (blk_->nodes[static_cast<size_t>(cur_[i])].kind == NK::Reg &&
          blk_->nodes[static_cast<size_t>(cur_[i])].aux == v)
        continue;  // holds its own entry value
      Node s;
      s.kind = NK::SetReg;
      s.aux = v;
      s.ops = {cur_[i]};
      chained(std::move(s));
    }
  }

  bool instr(const Instr& in, int b, bool* terminated, std::string* error) {
    auto A = in.a, B = in.b, C = in.c;
    auto bin = [&](NK k, bool konst) { set(A, node(k, {val(B), konst ? constant(C) : val(C)})); };
    auto cmp = [&](NK k, CC cc, bool konst) {
      set(A, node(k, {val(B), konst ? constant(C) : val(C)}, static_cast<int>(cc)));
    };
    auto branch = [&](int cond) {
      end_block(b);
      Node n;
      n.kind = NK::BrCond;
      n.ops = {cond};
      n.aux = block_at(in.c);
      chained(std::move(n));
      // The fall-through edge: the next block (blocks are in code order).
      Node fall;
      fall.kind = NK::Br;
      fall.aux = b + 1;
      chained(std::move(fall));
      *terminated = true;
    };
    auto jcmp = [&](NK k, CC cc, bool konst) {
      branch(node(k, {val(A), konst ? constant(B) : val(B)}, static_cast<int>(cc)));
    };
    switch (in.op) {
      case Op::MOVE: set(A, val(B)); break;
      case Op::LOADK: set(A, constant(B)); break;
      case Op::GETGLOBAL:
      case Op::GETGLOBALCHK: {
        Node n;
        n.kind = in.op == Op::GETGLOBAL ? NK::Global : NK::GlobalChk;
        n.aux = B;
        n.type = vt_of(m_.globals[B].type);
        if (in.op == Op::GETGLOBALCHK) n.site = site(Fail::UndefinedVariable, B);
        set(A, chained(std::move(n)));
        break;
      }
      case Op::SETGLOBAL: {
        Node n;
        n.kind = NK::SetGlobal;
        n.aux = B;
        n.ops = {val(A)};
        chained(std::move(n));
        break;
      }
      case Op::ADD_INT: bin(NK::Add, false); break;
      case Op::SUB_INT: bin(NK::Sub, false); break;
      case Op::MUL_INT: bin(NK::Mul, false); break;
      case Op::ADDK_INT: bin(NK::Add, true); break;
      case Op::SUBK_INT: bin(NK::Sub, true); break;
      case Op::MULK_INT: bin(NK::Mul, true); break;
      case Op::DIV_INT:
      case Op::MOD_INT:
      case Op::DIVK_INT:
      case Op::MODK_INT: {
        bool div = in.op == Op::DIV_INT || in.op == Op::DIVK_INT;
        bool k = in.op == Op::DIVK_INT || in.op == Op::MODK_INT;
        int id = node(div ? NK::SDiv : NK::SRem, {val(B), k ? constant(C) : val(C)});
        blk_->nodes[static_cast<size_t>(id)].site = site(Fail::DivisionByZero);
        // Not a side effect yet, but its check will be one: remember where in the chain.
        blk_->nodes[static_cast<size_t>(id)].chain = chain_;
        set(A, id);
        break;
      }
      case Op::DIVP2_INT:
      case Op::MODP2_INT: {
        int id = node(in.op == Op::DIVP2_INT ? NK::SDiv : NK::SRem,
                      {val(B), int_const(int64_t{1} << C)});
        blk_->nodes[static_cast<size_t>(id)].site = site(Fail::DivisionByZero);
        blk_->nodes[static_cast<size_t>(id)].chain = chain_;
        set(A, id);
        break;
      }
      case Op::ADD_FLOAT: bin(NK::FAdd, false); break;
      case Op::SUB_FLOAT: bin(NK::FSub, false); break;
      case Op::MUL_FLOAT: bin(NK::FMul, false); break;
      case Op::DIV_FLOAT: bin(NK::FDiv, false); break;
      case Op::MOD_FLOAT: bin(NK::FRem, false); break;
      case Op::ADDK_FLOAT: bin(NK::FAdd, true); break;
      case Op::SUBK_FLOAT: bin(NK::FSub, true); break;
      case Op::MULK_FLOAT: bin(NK::FMul, true); break;
      case Op::DIVK_FLOAT: bin(NK::FDiv, true); break;
      case Op::MODK_FLOAT: bin(NK::FRem, true); break;
      case Op::NEG_INT: set(A, node(NK::Neg, {val(B)})); break;
      case Op::NEG_FLOAT: set(A, node(NK::FNeg, {val(B)})); break;
      case Op::NOT: set(A, node(NK::Not, {val(B)})); break;
      case Op::ITOF: set(A, node(NK::IToF, {val(B)})); break;
      case Op::FTOI: {
        Node n;
        n.kind = NK::FToI;
        n.ops = {val(B)};
        n.site = site(Fail::InvalidConversion);
        set(A, chained(std::move(n)));
        break;
      }
      case Op::EQ_INT: case Op::EQ_BOOL: cmp(NK::SetCC, CC::eq, false); break;
      case Op::NE_INT: case Op::NE_BOOL: cmp(NK::SetCC, CC::ne, false); break;
      case Op::LT_INT: cmp(NK::SetCC, CC::lt, false); break;
      case Op::LE_INT: cmp(NK::SetCC, CC::le, false); break;
      case Op::EQK_INT: cmp(NK::SetCC, CC::eq, true); break;
      case Op::NEK_INT: cmp(NK::SetCC, CC::ne, true); break;
      case Op::LTK_INT: cmp(NK::SetCC, CC::lt, true); break;
      case Op::LEK_INT: cmp(NK::SetCC, CC::le, true); break;
      case Op::GTK_INT: cmp(NK::SetCC, CC::gt, true); break;
      case Op::GEK_INT: cmp(NK::SetCC, CC::ge, true); break;
      case Op::EQ_FLOAT: cmp(NK::FSetCC, CC::eq, false); break;
      case Op::NE_FLOAT: cmp(NK::FSetCC, CC::ne, false); break;
      case Op::LT_FLOAT: cmp(NK::FSetCC, CC::lt, false); break;
      case Op::LE_FLOAT: cmp(NK::FSetCC, CC::le, false); break;
      case Op::EQK_FLOAT: cmp(NK::FSetCC, CC::eq, true); break;
      case Op::NEK_FLOAT: cmp(NK::FSetCC, CC::ne, true); break;
      case Op::LTK_FLOAT: cmp(NK::FSetCC, CC::lt, true); break;
      case Op::LEK_FLOAT: cmp(NK::FSetCC, CC::le, true); break;
      case Op::GTK_FLOAT: cmp(NK::FSetCC, CC::gt, true); break;
      case Op::GEK_FLOAT: cmp(NK::FSetCC, CC::ge, true); break;
      case Op::ABS_INT: set(A, node(NK::Abs, {val(B)})); break;
      case Op::ABS_FLOAT: set(A, node(NK::FAbs, {val(B)})); break;
      case Op::MIN_INT: bin(NK::SMin, false); break;
      case Op::MAX_INT: bin(NK::SMax, false); break;
      case Op::MIN_FLOAT: bin(NK::FMin, false); break;
      case Op::MAX_FLOAT: bin(NK::FMax, false); break;
      case Op::MATH: {
        auto bi = static_cast<Builtin>(C);
        if (bi == Builtin::Sqrt) set(A, node(NK::FSqrt, {val(B)}));
        else if (bi == Builtin::Abs) set(A, node(NK::FAbs, {val(B)}));
        else set(A, node(NK::FMath, {val(B)}, C));
        break;
      }
      case Op::JMP: {
        end_block(b);
        Node n;
        n.kind = NK::Br;
        n.aux = block_at(C);
        chained(std::move(n));
        *terminated = true;
        break;
      }
      case Op::LOOP: {
        Node t;
        t.kind = NK::Tick;
        t.site = site(Fail::Interrupted);
        chained(std::move(t));
        end_block(b);
        Node n;
        n.kind = NK::Br;
        n.aux = block_at(C);
        chained(std::move(n));
        *terminated = true;
        break;
      }
      case Op::JTRUE: branch(val(A)); break;
      case Op::JFALSE: branch(node(NK::Not, {val(A)})); break;
      case Op::JEQ_INT: jcmp(NK::SetCC, CC::eq, false); break;
      case Op::JNE_INT: jcmp(NK::SetCC, CC::ne, false); break;
      case Op::JLT_INT: jcmp(NK::SetCC, CC::lt, false); break;
      case Op::JLE_INT: jcmp(NK::SetCC, CC::le, false); break;
      case Op::JEQK_INT: jcmp(NK::SetCC, CC::eq, true); break;
      case Op::JNEK_INT: jcmp(NK::SetCC, CC::ne, true); break;
      case Op::JLTK_INT: jcmp(NK::SetCC, CC::lt, true); break;
      case Op::JLEK_INT: jcmp(NK::SetCC, CC::le, true); break;
      case Op::JGTK_INT: jcmp(NK::SetCC, CC::gt, true); break;
      case Op::JGEK_INT: jcmp(NK::SetCC, CC::ge, true); break;
      case Op::JEQ_FLOAT: jcmp(NK::FSetCC, CC::eq, false); break;
      case Op::JNE_FLOAT: jcmp(NK::FSetCC, CC::ne, false); break;
      case Op::JLT_FLOAT: jcmp(NK::FSetCC, CC::lt, false); break;
      case Op::JLE_FLOAT: jcmp(NK::FSetCC, CC::le, false); break;
      case Op::JNLT_FLOAT: jcmp(NK::FSetCC, CC::nlt, false); break;
      case Op::JNLE_FLOAT: jcmp(NK::FSetCC, CC::nle, false); break;
      case Op::JEQK_FLOAT: jcmp(NK::FSetCC, CC::eq, true); break;
      case Op::JNEK_FLOAT: jcmp(NK::FSetCC, CC::ne, true); break;
      case Op::JLTK_FLOAT: jcmp(NK::FSetCC, CC::lt, true); break;
      case Op::JLEK_FLOAT: jcmp(NK::FSetCC, CC::le, true); break;
      case Op::JGTK_FLOAT: jcmp(NK::FSetCC, CC::gt, true); break;
      case Op::JGEK_FLOAT: jcmp(NK::FSetCC, CC::ge, true); break;
      case Op::JNLTK_FLOAT: jcmp(NK::FSetCC, CC::nlt, true); break;
      case Op::JNLEK_FLOAT: jcmp(NK::FSetCC, CC::nle, true); break;
      case Op::JNGTK_FLOAT: jcmp(NK::FSetCC, CC::ngt, true); break;
      case Op::JNGEK_FLOAT: jcmp(NK::FSetCC, CC::nge, true); break;
      case Op::FORLOOP:
      case Op::FORLOOPK: {
        // if A + 1 < B { A += 1; jump }: the counter only moves when the loop goes round, so
        // where the code after the loop reads it, the new value is a select.
        Node t;
        t.kind = NK::Tick;
        t.site = site(Fail::Interrupted);
        chained(std::move(t));
        int next = node(NK::Add, {val(A), int_const(1)});
        int hi = in.op == Op::FORLOOPK ? constant(B) : val(B);
        int c = node(NK::SetCC, {next, hi}, static_cast<int>(CC::lt));
        int fall = b + 1;
        bool read_after = fall < static_cast<int>(out_.blocks.size()) &&
                          live_in(fall, A);
        set(A, read_after ? node(NK::Select, {c, next, val(A)}) : next);
        branch(c);
        break;
      }
      case Op::PRECALL: {
        Node n;
        n.kind = NK::CallCheck;
        n.site = site(Fail::StackOverflow);
        chained(std::move(n));
        break;
      }
      case Op::CALL:
      case Op::CALL0:
      case Op::CALL1: {
        Node chk;
        chk.kind = NK::CallCheck;
        chk.site = site(Fail::StackOverflow);
        chained(std::move(chk));
        Node n;
        n.kind = NK::Call;
        n.aux = B;
        const FunctionInfo& callee = m_.functions[B];
        n.type = vt_of(callee.ret);
        if (in.op == Op::CALL1) {
          n.ops = {val(C)};
        } else if (in.op == Op::CALL) {
          const uint16_t* l = f_.lists.data() + C;
          for (int i = 0; i < l[0]; ++i) n.ops.push_back(val(l[1 + i]));
        }
        int id = chained(std::move(n));
        if (blk_->nodes[static_cast<size_t>(id)].type != VT::None) set(A, id);
        break;
      }
      case Op::RETURN:
      case Op::RETURN0:
      case Op::HALT: {
        end_block(b);
        Node n;
        n.kind = in.op == Op::HALT ? NK::Halt : NK::Ret;
        if (in.op == Op::RETURN) n.ops = {val(A)};
        chained(std::move(n));
        *terminated = true;
        break;
      }
      case Op::PRINT: {
        Node n;
        n.kind = NK::Print;
        n.aux = A;
        const uint16_t* l = f_.lists.data() + A;
        for (int i = 0; i < l[0]; ++i)
          if (l[1 + 2 * i] != kPrintStr) n.ops.push_back(val(l[2 + 2 * i]));
        chained(std::move(n));
        break;
      }
      case Op::ECHO: {
        Node n;
        n.kind = NK::Echo;
        n.aux = B;
        n.ops = {val(A)};
        chained(std::move(n));
        break;
      }
      case Op::TENSOR:
      case Op::TCHECK:
      case Op::SAFEPOINT:
        *error = "the native engine runs no tensor code";
        return false;
      default:
        *error = std::string("the native backend cannot compile '") + op_info(in.op).name + "'";
        return false;
    }
    return true;
  }

  bool live_in(int b, int v) const {
    // v is read in block b before it is written, or live through it.
    const Block& blk = out_.blocks[static_cast<size_t>(b)];
    std::vector<int> u, d;
    for (int pc = blk.first_pc; pc < blk.end_pc; ++pc) {
      u.clear();
      d.clear();
      instr_uses(f_, pc, u);
      if (std::find(u.begin(), u.end(), v) != u.end()) return true;
      instr_defs(f_, pc, d);
      if (std::find(d.begin(), d.end(), v) != d.end()) return false;
    }
    return out_.live_out[static_cast<size_t>(b)].test(static_cast<size_t>(v));
  }

  const RegFunction& f_;
  const Module& m_;
  Function& out_;
  Block* blk_ = nullptr;
  std::vector<int> block_of_;
  std::vector<int> cur_;
  std::vector<bool> defined_;
  std::vector<int> touched_, written_;  // this block's: every vreg given a node; those written
  int chain_ = -1;
  int pc_ = 0;
};

}  // namespace

const char* vt_name(VT t) {
  switch (t) {
    case VT::None: return "none";
    case VT::I64: return "i64";
    case VT::F64: return "f64";
    case VT::Chain: return "ch";
  }
  return "?";
}

const char* cc_name(CC c) {
  static const char* const names[] = {"eq", "ne", "lt", "le", "gt", "ge", "nlt", "nle", "ngt", "nge"};
  return names[static_cast<int>(c)];
}

const char* nk_name(NK k) { return kNodes[static_cast<int>(k)].text; }

bool is_chained(NK k) {
  switch (k) {
    case NK::SetReg: case NK::Global: case NK::GlobalChk: case NK::SetGlobal: case NK::FToI:
    case NK::Call: case NK::Print: case NK::Echo: case NK::CallCheck: case NK::Tick:
    case NK::Br: case NK::BrCond: case NK::Ret: case NK::Halt: case NK::DivCheck:
      return true;
    default: return false;
  }
}

bool build_dags(const RegFunction& f, const Module& m, Function& out, std::string* error) {
  out = Function{};
  out.src = &f;
  out.vreg_vt.resize(static_cast<size_t>(f.num_vregs));
  for (int v = 0; v < f.num_vregs; ++v)
    out.vreg_vt[static_cast<size_t>(v)] = vt_of(f.vreg_types[static_cast<size_t>(v)]);
  if (f.code.empty()) {
    *error = "empty function";
    return false;
  }
  return Builder(f, m, out).run(error);
}

}  // namespace descent::native
