// Stage 2: legalisation, for a target (target.h). On AArch64 only the division checks and
// the float constants change (below); constants of any width stay, and sdiv needs no guard
// for INT_MIN / -1.
//
// Legalisation rewrites what x86-64 cannot do as the DAG says it: there are no float
// immediates (a float constant is loaded through a GPR), an immediate operand has 32 bits
// (a wider constant becomes an `imm64`: movabs), and idiv traps where the language defines a
// result (x / 0 is the runtime error "division by zero"; INT_MIN / -1 is INT_MIN, but idiv
// raises #DE). Division by a constant needs none of the checks, and by a power of two no idiv
// at all: two shifts and an add round toward zero as the language requires; by any other
// constant, a multiplication by its magic number.
//
// The DAG combine (combine.cpp) then folds what this leaves foldable; the rewriting
// machinery both use (the use index, add_node, replace_uses) is rewrite_internal.h.
#include <cstdint>
#include <string>

#include "lang/value.h"
#include "native/backend.h"
#include "native/rewrite_internal.h"

namespace descent::native {

using namespace rewrite_internal;

namespace {

// The magic number of a signed division by the constant d (|d| >= 2): q = hi(n * M) (+/- n),
// shifted right by s, plus one when negative (Granlund & Montgomery 1994; Hacker's Delight
// 10-1). A multiplication costs 3 cycles where idiv costs 40 or more.
void magic(int64_t d, int64_t* m, int* s) {
  const uint64_t two63 = uint64_t{1} << 63;
  uint64_t ad = d < 0 ? 0 - static_cast<uint64_t>(d) : static_cast<uint64_t>(d);
  uint64_t t = two63 + (static_cast<uint64_t>(d) >> 63);
  uint64_t anc = t - 1 - t % ad;  // |nc|: the largest n with n % ad == ad - 1
  int p = 63;
  uint64_t q1 = two63 / anc, r1 = two63 - q1 * anc;
  uint64_t q2 = two63 / ad, r2 = two63 - q2 * ad;
  uint64_t delta = 0;
  do {
    ++p;
    q1 *= 2;
    r1 *= 2;
    if (r1 >= anc) ++q1, r1 -= anc;
    q2 *= 2;
    r2 *= 2;
    if (r2 >= ad) ++q2, r2 -= ad;
    delta = ad - r2;
  } while (q1 < delta || (q1 == delta && r1 == 0));
  uint64_t mm = q2 + 1;
  *m = static_cast<int64_t>(d < 0 ? 0 - mm : mm);
  *s = p - 64;
}

}  // namespace

void legalize(Function& f, const Target& target) {
  const bool x86 = target.arch == Arch::X86_64;
  for (size_t bi = 0; bi < f.blocks.size(); ++bi) {
    Block& b = f.blocks[bi];
    index_block(b);
    // Nodes from here on are legalize's own: the division checks below among them.
    const int first_new = static_cast<int>(b.nodes.size());
    std::string where = "b" + std::to_string(bi) + ": ";
    for (size_t i = 0; i < b.nodes.size(); ++i) {
      int id = static_cast<int>(i);
      Node n = b.nodes[i];  // a copy: add_node may move the vector
      if (n.dead) continue;
      switch (n.kind) {
        case NK::Const:
          // AArch64 builds any constant with movz/movk: the selector's patterns price it.
          if (x86 && !fits_imm32(n.imm)) {
            b.nodes[i].kind = NK::Imm64;
            f.log.push_back(where + ref(b, id) + ": wider than an imm32 -> imm64 (movabs)");
          }
          break;
        case NK::FConst:
          b.nodes[i].kind = NK::FLoadConst;
          f.log.push_back(where + "n" + std::to_string(id) + " fconst " +
                          format_float(Value::of_int(n.imm).f) +
                          (x86 ? ": x86 has no float immediates -> fconst.bits (via a GPR)"
                               : ": fmov's 8-bit float immediates are few -> fconst.bits (movz/movk, fmov)"));
          break;
        case NK::SDiv:
        case NK::SRem: {
          bool div = n.kind == NK::SDiv;
          const Node& d = b.nodes[static_cast<size_t>(n.ops[1])];
          int64_t c = d.imm;
          bool konst = d.kind == NK::Const;
          int k = konst ? log2_exact(c) : -1;
          std::string what = where + ref(b, id) + " by " + ref(b, n.ops[1]) + ": ";
          if (konst && c == -1) {
            int r = div ? add_node(b, NK::Neg, {n.ops[0]}) : add_node(b, NK::Const, {}, 0);
            replace_uses(b, id, r);
            f.log.push_back(what + (div ? (x86 ? "x / -1 -> neg x (idiv would trap on INT_MIN)" : "x / -1 -> neg x")
                                        : "x % -1 -> 0"));
          } else if (konst && c == 1) {
            int r = div ? n.ops[0] : add_node(b, NK::Const, {}, 0);
            replace_uses(b, id, r);
            f.log.push_back(what + (div ? "x / 1 -> x" : "x % 1 -> 0"));
          } else if (konst && k > 0) {
            // q = (x + ((x >> 63) >>> (64 - k))) >> k: adds 2^k - 1 to a negative x first.
            int x = n.ops[0];
            int sign = add_node(b, NK::Sra, {x, add_node(b, NK::Const, {}, 63)});
            int bias = add_node(b, NK::Srl, {sign, add_node(b, NK::Const, {}, 64 - k)});
            int sum = add_node(b, NK::Add, {x, bias});
            int q = add_node(b, NK::Sra, {sum, add_node(b, NK::Const, {}, k)});
            int r = q;
            if (!div) r = add_node(b, NK::Sub, {x, add_node(b, NK::Shl, {q, add_node(b, NK::Const, {}, k)})});
            replace_uses(b, id, r);
            f.log.push_back(what + "a power of two -> shifts (rounding toward zero), no " + (x86 ? "idiv" : "sdiv"));
          } else if (konst && c != 0 && c != INT64_MIN) {
            // q = hi(x * M) (+ x when d > 0 > M, - x when d < 0 < M) >> s, + 1 if negative
            int64_t m = 0;
            int sh = 0;
            magic(c, &m, &sh);
            int x = n.ops[0];
            int q = add_node(b, NK::MulHS, {x, add_node(b, NK::Const, {}, m)});
            if (c > 0 && m < 0) q = add_node(b, NK::Add, {q, x});
            if (c < 0 && m > 0) q = add_node(b, NK::Sub, {q, x});
            if (sh > 0) q = add_node(b, NK::Sra, {q, add_node(b, NK::Const, {}, sh)});
            q = add_node(b, NK::Add, {q, add_node(b, NK::Srl, {q, add_node(b, NK::Const, {}, 63)})});
            int r = q;
            if (!div) r = add_node(b, NK::Sub, {x, add_node(b, NK::Mul, {q, add_node(b, NK::Const, {}, c)})});
            replace_uses(b, id, r);
            f.log.push_back(what + "a constant -> multiply by the magic number " + std::to_string(m) +
                            ", shift by " + std::to_string(sh) + (x86 ? " (no idiv)" : " (no sdiv)"));
          } else if (konst && c != 0) {
            int r = add_node(b, x86 ? (div ? NK::X86Div : NK::X86Rem) : (div ? NK::SDivSafe : NK::SRemSafe),
                             {n.ops[0], n.ops[1]});
            replace_uses(b, id, r);
            f.log.push_back(what + (x86 ? "INT_MIN: idiv, no checks" : "INT_MIN: sdiv, no checks"));
          } else {
            // The check is a side effect in program order; the division runs after it.
            // Divisions between the same two side effects share their chain point, and
            // their checks must fail in the order the divisions were written
            // (1 / (1 / g): the inner one first, whose result the outer check reads), so
            // this check goes after those already placed there (every earlier division was
            // legalized first: nodes are in program order).
            int chk = add_node(b, NK::DivCheck, {n.ops[1]});
            b.nodes[static_cast<size_t>(chk)].type = VT::None;
            b.nodes[static_cast<size_t>(chk)].site = n.site;
            b.nodes[static_cast<size_t>(chk)].pc = n.pc;
            int after = n.chain;
            for (int next = uses.chain_user[static_cast<size_t>(after + 1)];
                 next >= first_new && next != chk && b.nodes[static_cast<size_t>(next)].kind == NK::DivCheck;
                 next = uses.chain_user[static_cast<size_t>(after + 1)])
              after = next;
            insert_after(b, chk, after);
            int r = add_node(b, div ? NK::SDivSafe : NK::SRemSafe, {n.ops[0], n.ops[1]});
            b.nodes[static_cast<size_t>(r)].pc = n.pc;
            replace_uses(b, id, r);
            // AArch64's sdiv does not trap: INT_MIN / -1 gives INT_MIN, as the language says,
            // and a remainder is sdiv then msub; only the check for zero stays.
            f.log.push_back(what + "divcheck (division by zero) + " +
                            (x86 ? (div ? "sdiv.safe (idiv, or neg for -1)" : "srem.safe (idiv, or 0 for -1)")
                                 : (div ? "sdiv.safe (sdiv)" : "srem.safe (sdiv, msub)")));
          }
          break;
        }
        case NK::FRem:
        case NK::FMath: {
          int r = add_node(b, NK::LibCall, n.ops);
          b.nodes[static_cast<size_t>(r)].type = VT::F64;
          b.nodes[static_cast<size_t>(r)].aux = n.kind == NK::FRem ? -1 : n.aux;
          b.nodes[static_cast<size_t>(r)].pc = n.pc;
          replace_uses(b, id, r);
          f.log.push_back(where + ref(b, id) + ": no " + target.name + " instruction -> libcall " +
                          (n.kind == NK::FRem ? std::string("fmod")
                                              : std::string(builtin_name(static_cast<Builtin>(n.aux)))));
          break;
        }
        default: break;
      }
    }
  }
}

}  // namespace descent::native
