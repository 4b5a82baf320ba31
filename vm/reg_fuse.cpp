#include "vm/reg_fuse.h"

#include <optional>

#include "vm/reg_alloc.h"

namespace descent {
namespace {

constexpr int kMaxImm = 0xFF;  // the high byte of a UseImm field

// An int constant as CALL1_ADDI / CALL1_SUBI's immediate: *op and *imm, or false.
bool call_immediate(const RegFunction& f, const Instr& arith, Op* op, int* imm) {
  int64_t k = f.k[arith.c].i;
  if (k < -kMaxImm || k > kMaxImm) return false;
  if (arith.op == Op::SUBK_INT) k = -k;  // x - k == x + (-k), both wrapping
  *op = k >= 0 ? Op::CALL1_ADDI : Op::CALL1_SUBI;
  *imm = static_cast<int>(k >= 0 ? k : -k);
  return true;
}

// A compare-and-branch with a constant that jumps over a RETURN: the conditional return
// that does the RETURN when the jump would not be taken (ints only: exact negations).
Op conditional_return(Op jump) {
  switch (jump) {
    case Op::JNEK_INT: return Op::RETEQK_INT;
    case Op::JEQK_INT: return Op::RETNEK_INT;
    case Op::JGEK_INT: return Op::RETLTK_INT;
    case Op::JGTK_INT: return Op::RETLEK_INT;
    case Op::JLEK_INT: return Op::RETGTK_INT;
    case Op::JLTK_INT: return Op::RETGEK_INT;
    default: return Op::Count_;
  }
}

}  // namespace

int fuse_reg_superinstructions(RegFunction& f) {
  size_t n = f.code.size();
  std::vector<char> target(n + 1, 0);
  for (const Instr& in : f.code)
    if (is_jump(in.op)) target[in.c] = 1;
  std::optional<Liveness> live;  // solved on the first call that could be fused
  auto dead_after = [&](size_t pc, int loc) {
    if (!live) live.emplace(f);
    return !live->live_after(static_cast<int>(pc), loc);
  };

  std::vector<Instr> code;
  std::vector<SourceLoc> locs;
  std::vector<int> new_pc(n + 1, 0);
  int fused = 0;
  // Replaces code[pc] and code[pc + 1] by `in`, which takes the location of code[from].
  auto put_fused = [&](size_t& pc, Instr in, size_t from) {
    new_pc[pc + 1] = static_cast<int>(code.size());
    code.push_back(in);
    locs.push_back(f.locs[from]);
    ++pc;
    ++fused;
  };
  for (size_t pc = 0; pc < n; ++pc) {
    new_pc[pc] = static_cast<int>(code.size());
    const Instr a = f.code[pc];
    if (pc + 1 < n && !target[pc + 1]) {
      const Instr b = f.code[pc + 1];
      Op op;
      int imm;
      // rT := rS +- k; rD := F(rT), rT dead afterwards (or the result): at the call's
      // location, where its `stack overflow` and `interrupted` point.
      if ((a.op == Op::ADDK_INT || a.op == Op::SUBK_INT) && b.op == Op::CALL1 && b.c == a.a &&
          a.b <= kMaxImm && f.k_types[a.c] == Type::Int && call_immediate(f, a, &op, &imm) &&
          (b.a == a.a || dead_after(pc + 1, a.a))) {
        put_fused(pc, Instr{op, b.a, b.b, pack_imm(a.b, imm)}, pc + 1);
        continue;
      }
      // if rA cmp k { return rR }: a jump over a return, at the condition's location.
      op = conditional_return(a.op);
      if (op != Op::Count_ && a.c == pc + 2 && pc + 2 < n && b.op == Op::RETURN) {
        put_fused(pc, Instr{op, a.a, a.b, b.a}, pc);
        continue;
      }
      // rT := rB + rC (or + k); return rT, at the return's location.
      if ((a.op == Op::ADD_INT || a.op == Op::ADDK_INT) && b.op == Op::RETURN && b.a == a.a) {
        op = a.op == Op::ADD_INT ? Op::RETURN_ADD_INT : Op::RETURN_ADDK_INT;
        put_fused(pc, Instr{op, a.b, a.c, 0}, pc + 1);
        continue;
      }
    }
    code.push_back(a);
    locs.push_back(f.locs[pc]);
  }
  if (fused == 0) return 0;
  new_pc[n] = static_cast<int>(code.size());
  for (Instr& in : code)
    if (is_jump(in.op)) in.c = static_cast<uint16_t>(new_pc[in.c]);
  f.code = std::move(code);
  f.locs = std::move(locs);
  return fused;
}

}  // namespace descent
