// Instruction selection by tree covering, the shared part (private to native/): the
// nonterminals, the pattern definition, and the selector's dynamic programme, which a target
// drives with its table and its reduction (isel.cpp for x86-64, a64_isel.cpp for AArch64).
//
// The DAG is cut into trees: a node used once hangs under its user; a node used more than
// once, or one with a side effect, is the root of its own tree and leaves its value in a
// virtual register. Each tree is then covered by patterns from the target's table, bottom-up
// by dynamic programming as lcc's BURG-generated selectors do: for every node and every
// nonterminal (reg, freg, imm, flags, stmt), the cheapest pattern that produces that
// nonterminal there, counting the cost of its operands. Then a walk from the root emits the
// chosen patterns' instructions, operands first.
#pragma once
#include <algorithm>
#include <array>
#include <climits>
#include <string>
#include <vector>

#include "lang/value.h"
#include "native/backend.h"

namespace descent::native::isel {

// Nonterminals (names for messages in kNTNames). prod: a product whose operands are in registers and which an instruction
// takes whole (AArch64's madd/msub: add(prod, reg) is one instruction; BURG's way of matching
// a pattern two nodes deep); zero: not(reg), a register asked whether it is 0 (AArch64's
// cbz branches on it in one instruction). x86-64's table makes neither.
enum NT : uint8_t { kReg, kFreg, kImm, kFlags, kStmt, kProd, kZero, kNumNT };
inline const char* const kNTNames[] = {"reg", "freg", "imm", "flags", "stmt", "prod", "zero"};

// Operand spec of a pattern: each operand must be covered as this nonterminal ("*": each
// operand by its class, for calls and prints).
struct PatternDef {
  Pattern p;
  NT result;
  std::vector<NT> kids;  // empty with `any`: operands by their class
  bool any = false;
  bool (*ok)(const Block&, const Node&) = nullptr;  // an extra condition, or null
};

// Conditions both tables use.
inline bool has_value(const Block&, const Node& n) { return n.type == VT::I64 || n.type == VT::F64; }
inline bool float_global(const Block&, const Node& n) { return n.type == VT::F64; }
inline bool int_global(const Block&, const Node& n) { return n.type != VT::F64; }
inline bool int_value(const Block&, const Node& n) { return n.type == VT::I64; }
inline bool float_value(const Block&, const Node& n) { return n.type == VT::F64; }
inline bool void_value(const Block&, const Node& n) { return n.type == VT::None; }
inline bool no_operand(const Block&, const Node& n) { return n.ops.empty(); }

// A table's patterns as the views list them.
inline std::vector<Pattern> pattern_list(const std::vector<PatternDef>& defs) {
  std::vector<Pattern> v;
  for (const PatternDef& d : defs) v.push_back(d.p);
  return v;
}

// A target's table: the patterns, then its chain rules (from first_chain_rule on, never
// matched against a node: the labeller applies them between nonterminals).
struct Table {
  const std::vector<PatternDef>* defs;
  int first_chain_rule;
  int setcc_rule;    // flags -> reg (a 0/1 from a comparison)
  int test_rule;     // reg -> flags (a 0/1 tested)
  int mov_imm_rule;  // imm -> reg, or -1 (AArch64 prices each constant by its own patterns)
};

class Selector {
 public:
  Selector(const Function& f, MFunction& out, const Table& t) : f_(f), out_(out), t_(t) {}
  virtual ~Selector() = default;

  void run() {
    out_.num_src_vregs = static_cast<int>(f_.vreg_vt.size());
    for (size_t v = 0; v < f_.vreg_vt.size(); ++v) {
      out_.vt.push_back(f_.vreg_vt[v] == VT::F64 ? VT::F64 : VT::I64);
      out_.names.push_back(f_.src->vreg_names.size() > v ? f_.src->vreg_names[v] : "");
    }
    out_.blocks.resize(f_.blocks.size());
    out_.cover.resize(f_.blocks.size());
    out_.node_rule.resize(f_.blocks.size());
    for (size_t b = 0; b < f_.blocks.size(); ++b) out_.node_rule[b].assign(f_.blocks[b].nodes.size(), -1);
    for (size_t b = 0; b < f_.blocks.size(); ++b) block(static_cast<int>(b));
  }

 protected:
  static constexpr int kInf = INT_MAX / 4;

  bool is_leaf_const(const Node& n) const {
    return n.kind == NK::Const || n.kind == NK::Imm64 || n.kind == NK::FLoadConst;
  }
  // A node is a tree root when it has a side effect or is used other than exactly once
  // (constants excepted: they are cheaper to repeat than to keep in a register).
  bool is_root(int id) const {
    const Node& n = blk_->nodes[static_cast<size_t>(id)];
    if (is_leaf_const(n) || n.kind == NK::Reg) return false;
    return is_chained(n.kind) || uses_[static_cast<size_t>(id)] != 1;
  }
  // A value another tree has already put into a virtual register (roots, Reg leaves).
  bool available(int id) const {
    const Node& n = blk_->nodes[static_cast<size_t>(id)];
    return n.kind == NK::Reg || vreg_[static_cast<size_t>(id)] >= 0 ||
           (is_root(id) && id != labeling_root_);
  }

  // ---- labelling: the dynamic programme ----
  void label(int id) {
    auto& c = cost_[static_cast<size_t>(id)];
    if (c[0] != -1) return;
    c.fill(kInf);
    rule_[static_cast<size_t>(id)].fill(-1);
    const Node& n = blk_->nodes[static_cast<size_t>(id)];
    if (available(id)) {
      c[n.type == VT::F64 ? kFreg : kReg] = 0;
    } else {
      const auto& t = *t_.defs;
      for (size_t r = 0; r < t.size(); ++r) {
        const PatternDef& p = t[r];
        if (p.p.node != n.kind || static_cast<int>(r) >= t_.first_chain_rule) continue;
        if (p.ok && !p.ok(*blk_, n)) continue;
        if (!p.any && p.kids.size() != n.ops.size()) continue;
        int sum = p.p.cost;
        for (size_t k = 0; k < n.ops.size() && sum < kInf; ++k) {
          int kid = n.ops[k];
          label_kid(kid);
          NT want = p.any ? (blk_->nodes[static_cast<size_t>(kid)].type == VT::F64 ? kFreg : kReg)
                          : p.kids[k];
          sum += cost_[static_cast<size_t>(kid)][want];
        }
        sum = std::min(sum, kInf);
        if (sum < c[p.result]) {
          c[p.result] = sum;
          rule_[static_cast<size_t>(id)][p.result] = static_cast<int>(r);
        }
      }
    }
    // Chain rules: a constant into a register, flags into a 0/1, a 0/1 into flags (a
    // target without one of them has -1 there).
    auto chain_cost = [&](int rule) { return (*t_.defs)[static_cast<size_t>(rule)].p.cost; };
    if (t_.mov_imm_rule >= 0 && c[kImm] + chain_cost(t_.mov_imm_rule) < c[kReg])
      c[kReg] = c[kImm] + chain_cost(t_.mov_imm_rule), rule_[static_cast<size_t>(id)][kReg] = t_.mov_imm_rule;
    if (c[kFlags] + chain_cost(t_.setcc_rule) < c[kReg])
      c[kReg] = c[kFlags] + chain_cost(t_.setcc_rule), rule_[static_cast<size_t>(id)][kReg] = t_.setcc_rule;
    if (n.type == VT::I64 && c[kReg] + chain_cost(t_.test_rule) < c[kFlags])
      c[kFlags] = c[kReg] + chain_cost(t_.test_rule), rule_[static_cast<size_t>(id)][kFlags] = t_.test_rule;
  }
  void label_kid(int kid) { label(kid); }

  // ---- reducing: emit the chosen cover ----
  MInst& emit(MOp op, int def, std::vector<int> uses, int rule, int node) {
    MInst m;
    m.op = op;
    m.def = def;
    m.uses = std::move(uses);
    m.pattern = rule;
    m.node = node;
    code_->push_back(std::move(m));
    return code_->back();
  }
  int fresh(VT t) { return out_.new_vreg(t == VT::F64 ? VT::F64 : VT::I64); }

  // Where a flags-producing cover left its condition (the target's condition code).
  int flags_cc_ = 0;

  // Emits node `id` as nonterminal `nt`; returns the virtual register holding it (reg, freg),
  // the constant (imm; via *imm), or -1. `dest`: where a reg/freg result should go (-1: fresh).
  int reduce(int id, NT nt, int dest = -1, int64_t* imm = nullptr) {
    const Node& n = blk_->nodes[static_cast<size_t>(id)];
    auto sid = static_cast<size_t>(id);
    if (n.kind == NK::Reg && (nt == kReg || nt == kFreg)) {
      int v = vreg_[sid] >= 0 ? vreg_[sid] : n.aux;
      return copy_to(v, dest, n.type, id);
    }
    if (vreg_[sid] >= 0 && (nt == kReg || nt == kFreg)) return copy_to(vreg_[sid], dest, n.type, id);
    if (is_root(id) && id != current_root_ && (nt == kReg || nt == kFreg))
      return emit_root(id, dest);  // a shared value: computed once, where first needed
    int r = rule_[sid][nt];
    if (r < 0) {  // not labelled (an emitted root asked as flags): test it
      label(id);
      r = rule_[sid][nt];
    }
    if (r < 0) {  // a hole in the target's table: said, never an index out of range
      if (out_.error.empty())
        out_.error = std::string("no pattern covers ") + nk_name(n.kind) + " (node n" + std::to_string(id) +
                     " of block b" + std::to_string(cur_block_) + ") as " + kNTNames[nt];
      return -1;
    }
    used_rules_.push_back(r);
    out_.node_rule[static_cast<size_t>(cur_block_)][sid] = r;
    return reduce_rule(r, id, n, dest, imm);
  }

  // The target's part: emits rule r's instructions for node id (operands through kid()).
  virtual int reduce_rule(int r, int id, const Node& n, int dest, int64_t* imm) = 0;

  // A value already in virtual register v, wanted in dest (or anywhere: v itself).
  int copy_to(int v, int dest, VT t, int id) {
    if (dest < 0 || dest == v) return v;
    emit(t == VT::F64 ? MOp::FMOV : MOp::MOV, dest, {v}, -1, id);
    return dest;
  }

  void print_calls(const Node& n, const std::vector<int>& args, int r, int id) {
    const RegFunction& src = *f_.src;
    const uint16_t* l = src.lists.data() + n.aux;
    size_t next = 0;
    for (int i = 0; i < l[0]; ++i) {
      if (i) emit(MOp::CALLH, -1, {}, r, id).aux = static_cast<int>(Helper::PrintSpace);
      uint16_t type = l[1 + 2 * i];
      if (type == kPrintStr) {
        MInst& m = emit(MOp::CALLH, -1, {}, r, id);
        m.aux = static_cast<int>(Helper::PrintStr);
        m.imm = l[2 + 2 * i];  // the string's index in src.strings
        continue;
      }
      auto t = static_cast<Type>(type);
      Helper h = t == Type::Float ? Helper::PrintFloat : t == Type::Bool ? Helper::PrintBool : Helper::PrintInt;
      emit(MOp::CALLH, -1, {args[next++]}, r, id).aux = static_cast<int>(h);
    }
    emit(MOp::CALLH, -1, {}, r, id).aux = static_cast<int>(Helper::PrintEnd);
  }

  // Labels and emits the tree rooted at `id` (as reg/freg when it has a value).
  int emit_root(int id, int dest) {
    auto sid = static_cast<size_t>(id);
    if (vreg_[sid] >= 0) return copy_to(vreg_[sid], dest, blk_->nodes[sid].type, id);
    const Node& n = blk_->nodes[sid];
    int saved = current_root_, saved_label = labeling_root_;
    labeling_root_ = id;
    clear_labels(id);
    label(id);
    current_root_ = id;
    labeling_root_ = saved_label;
    NT nt = n.type == VT::F64 ? kFreg : n.type == VT::I64 ? kReg : kStmt;
    if (n.kind == NK::SetReg || !has_value(*blk_, n)) nt = kStmt;
    if (n.kind == NK::Call && n.type == VT::None) nt = kStmt;
    size_t before = used_rules_.size();
    int v = reduce(id, nt, dest);
    current_root_ = saved;
    if (v >= 0) vreg_[sid] = v;
    // The cover, for the view: the root, then its tree's patterns, operands first and the
    // root's own last (a shared value's tree has a line of its own, where it was first needed).
    std::string line = "n" + std::to_string(id) + " " + nk_name(n.kind) + ":";
    for (size_t i = used_rules_.size(); i-- > before;)
      line += std::string(" ") + (*t_.defs)[static_cast<size_t>(used_rules_[i])].p.name;
    out_.cover[static_cast<size_t>(cur_block_)].push_back(line);
    used_rules_.resize(before);  // the tree that needed this one lists only its own
    return v;
  }
  // Labels are per tree: a node's best cover depends on which of its operands are roots.
  void clear_labels(int id) {
    cost_[static_cast<size_t>(id)][0] = -1;
    for (int k : blk_->nodes[static_cast<size_t>(id)].ops)
      if (!available(k)) clear_labels(k);
      else cost_[static_cast<size_t>(k)][0] = -1;
  }

  // Virtual registers that the Reg leaves below `id` read, through nodes not yet emitted.
  // A DAG shares nodes: each is visited once per question (the stamp), or a chain of shared
  // values would be walked an exponential number of times.
  void reads(int id, std::vector<int>& out) {
    ++stamp_;
    reads_from(id, out);
  }
  void reads_from(int id, std::vector<int>& out) {
    auto sid = static_cast<size_t>(id);
    if (seen_[sid] == stamp_) return;
    seen_[sid] = stamp_;
    const Node& n = blk_->nodes[sid];
    if (vreg_[sid] >= 0) return;
    if (n.kind == NK::Reg) {
      out.push_back(n.aux);
      return;
    }
    for (int k : n.ops) reads_from(k, out);
  }
  // Reads the entry value of virtual register v into a fresh one, for the readers that
  // remain after v's setreg.
  void materialize(int v) {
    for (size_t i = 0; i < blk_->nodes.size(); ++i) {
      const Node& n = blk_->nodes[i];
      if (n.dead || n.kind != NK::Reg || n.aux != v || vreg_[i] >= 0) continue;
      int t = fresh(n.type);
      emit(n.type == VT::F64 ? MOp::FMOV : MOp::MOV, t, {v}, -1, static_cast<int>(i));
      vreg_[i] = t;
    }
  }

  void block(int b) {
    cur_block_ = b;
    blk_ = &f_.blocks[static_cast<size_t>(b)];
    code_ = &out_.blocks[static_cast<size_t>(b)].code;
    size_t n = blk_->nodes.size();
    uses_.assign(n, 0);
    vreg_.assign(n, -1);
    seen_.assign(n, 0);
    stamp_ = 0;
    cost_.assign(n, {});
    for (auto& c : cost_) c.fill(-1);
    rule_.assign(n, {});
    for (auto& r : rule_) r.fill(-1);
    for (const Node& nd : blk_->nodes)
      if (!nd.dead)
        for (int o : nd.ops) ++uses_[static_cast<size_t>(o)];
    if (b == 0 && f_.src->fn_index >= 0) {
      MInst args;
      args.op = MOp::ARGS;
      for (size_t p = 0; p < f_.src->param_types.size(); ++p) args.params.push_back(static_cast<int>(p));
      code_->push_back(args);
    }
    // The chain, first to last.
    std::vector<int> order;
    for (int c = blk_->last_chain; c >= 0; c = blk_->nodes[static_cast<size_t>(c)].chain) order.push_back(c);
    std::reverse(order.begin(), order.end());
    // Cut at the first unconditional end (a combined-away branch leaves dead code after it).
    std::vector<int> sets, term;
    for (int c : order) {
      NK k = blk_->nodes[static_cast<size_t>(c)].kind;
      if (k == NK::SetReg) {
        sets.push_back(c);
      } else if (k == NK::BrCond || k == NK::Br || k == NK::Ret || k == NK::Halt) {
        term.push_back(c);
        if (k != NK::BrCond) break;
      } else {
        emit_root(c, -1);
      }
    }
    // The block's end: setregs in an order where no one overwrites a register another one
    // (or the terminator) still reads; where they form a cycle, copy first.
    std::vector<int> written;
    for (int s : sets) written.push_back(blk_->nodes[static_cast<size_t>(s)].aux);
    std::vector<int> r;
    for (int t : term) reads(t, r);
    for (int v : r)
      if (std::find(written.begin(), written.end(), v) != written.end()) materialize(v);
    std::vector<bool> done(sets.size(), false);
    for (size_t left = sets.size(); left > 0; --left) {
      int pick = -1;
      for (size_t i = 0; i < sets.size() && pick < 0; ++i) {
        if (done[i]) continue;
        int v = blk_->nodes[static_cast<size_t>(sets[i])].aux;
        bool needed = false;
        for (size_t j = 0; j < sets.size() && !needed; ++j) {
          if (done[j] || j == i) continue;
          r.clear();
          reads(blk_->nodes[static_cast<size_t>(sets[j])].ops[0], r);
          needed = std::find(r.begin(), r.end(), v) != r.end();
        }
        if (!needed) pick = static_cast<int>(i);
      }
      if (pick < 0) {  // a cycle: free the first one by copying what it overwrites
        for (size_t i = 0; i < sets.size(); ++i)
          if (!done[i]) {
            pick = static_cast<int>(i);
            break;
          }
        materialize(blk_->nodes[static_cast<size_t>(sets[static_cast<size_t>(pick)])].aux);
      }
      done[static_cast<size_t>(pick)] = true;
      emit_root(sets[static_cast<size_t>(pick)], -1);
    }
    for (int t : term) emit_root(t, -1);
  }

  // Operand k of node id as nonterminal want (its register, or its constant in *imm).
  int kid(int id, size_t k, NT want, int64_t* imm = nullptr) {
    return reduce(blk_->nodes[static_cast<size_t>(id)].ops[k], want, -1, imm);
  }
  // Where a rule's result goes: dest when the caller named one, else a fresh register.
  int out(int dest, VT t) { return dest >= 0 ? dest : fresh(t); }

  const Function& f_;
  MFunction& out_;
  const Table& t_;
  const Block* blk_ = nullptr;
  std::vector<MInst>* code_ = nullptr;
  int cur_block_ = 0;
  int current_root_ = -1, labeling_root_ = -1;
  std::vector<int> uses_, vreg_;
  std::vector<uint32_t> seen_;
  uint32_t stamp_ = 0;
  std::vector<std::array<int, kNumNT>> cost_, rule_;
  std::vector<int> used_rules_;
};

}  // namespace descent::native::isel
