// Stage 3: the DAG combine.
//
// The combine folds what legalisation (legalize.cpp) and the bytecode left foldable: constant
// operands (with the language's wrap-around), x + 0, x * 1, x * 2^k -> x << k, double
// negations, branches on constants. There are no float identities, on purpose: x + 0.0 is not
// x when x is -0.0, and x * 0.0 is not 0.0 when x is inf or nan. It is its own pass (and view,
// native-combine) so a student sees what legalisation made before it is folded away.
#include <cstdint>
#include <string>

#include "lang/value.h"
#include "native/backend.h"
#include "native/rewrite_internal.h"

namespace descent::native {

using namespace rewrite_internal;

namespace {

bool is_const(const Block& b, int id, int64_t* v) {
  const Node& n = b.nodes[static_cast<size_t>(id)];
  if (n.kind != NK::Const && n.kind != NK::Imm64) return false;
  *v = n.imm;
  return true;
}

bool holds(CC c, int64_t a, int64_t b) {
  switch (c) {
    case CC::eq: return a == b;
    case CC::ne: return a != b;
    case CC::lt: return a < b;
    case CC::le: return a <= b;
    case CC::gt: return a > b;
    case CC::ge: return a >= b;
    default: return false;
  }
}

}  // namespace

void combine(Function& f, const Target& target) {
  const bool x86 = target.arch == Arch::X86_64;
  for (size_t bi = 0; bi < f.blocks.size(); ++bi) {
    Block& b = f.blocks[bi];
    index_block(b);
    std::string where = "b" + std::to_string(bi) + ": ";
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < b.nodes.size(); ++i) {
        Node n = b.nodes[i];
        if (n.dead) continue;
        int id = static_cast<int>(i);
        int64_t x = 0, y = 0;
        bool cx = !n.ops.empty() && is_const(b, n.ops[0], &x);
        bool cy = n.ops.size() > 1 && is_const(b, n.ops[1], &y);
        auto fold = [&](int64_t v, const char* why) {
          int r = add_node(b, !x86 || fits_imm32(v) ? NK::Const : NK::Imm64, {}, v);
          f.log.push_back(where + ref(b, id) + " -> " + std::to_string(v) + " (" + why + ")");
          replace_uses(b, id, r);
          changed = true;
        };
        auto same = [&](int to, const char* why) {
          f.log.push_back(where + ref(b, id) + " -> n" + std::to_string(to) + " (" + why + ")");
          replace_uses(b, id, to);
          changed = true;
        };
        switch (n.kind) {
          case NK::Add:
            if (cx && cy) fold(wrap_add(x, y), "constant");
            else if (cy && y == 0) same(n.ops[0], "x + 0");
            else if (cx && x == 0) same(n.ops[1], "0 + x");
            break;
          case NK::Sub:
            if (cx && cy) fold(wrap_sub(x, y), "constant");
            else if (cy && y == 0) same(n.ops[0], "x - 0");
            else if (n.ops[0] == n.ops[1]) fold(0, "x - x");
            break;
          case NK::Mul:
            if (cx && cy) {
              fold(wrap_mul(x, y), "constant");
            } else if ((cy && y == 1) || (cx && x == 1)) {
              same(cy ? n.ops[0] : n.ops[1], "x * 1");
            } else if ((cy && y == 0) || (cx && x == 0)) {
              fold(0, "x * 0");
            } else if (cy || cx) {
              int64_t c = cy ? y : x;
              int k = log2_exact(c);
              if (k > 0) {
                int r = add_node(b, NK::Shl, {cy ? n.ops[0] : n.ops[1], add_node(b, NK::Const, {}, k)});
                same(r, "x * 2^k -> x << k");
              }
            }
            break;
          case NK::Neg:
            if (cx) fold(wrap_neg(x), "constant");
            else if (b.nodes[static_cast<size_t>(n.ops[0])].kind == NK::Neg)
              same(b.nodes[static_cast<size_t>(n.ops[0])].ops[0], "-(-x)");
            break;
          case NK::Not:
            if (cx) fold(x ? 0 : 1, "constant");
            else if (b.nodes[static_cast<size_t>(n.ops[0])].kind == NK::Not)
              same(b.nodes[static_cast<size_t>(n.ops[0])].ops[0], "!!x");
            break;
          case NK::SetCC:
            if (cx && cy) fold(holds(static_cast<CC>(n.aux), x, y) ? 1 : 0, "constant");
            break;
          case NK::Shl:
            if (cx && cy) fold(static_cast<int64_t>(static_cast<uint64_t>(x) << (y & 63)), "constant");
            break;
          case NK::Sra:
            if (cx && cy) fold(x >> (y & 63), "constant");
            break;
          case NK::Srl:
            if (cx && cy) fold(static_cast<int64_t>(static_cast<uint64_t>(x) >> (y & 63)), "constant");
            break;
          case NK::SMin:
            if (cx && cy) fold(y < x ? y : x, "constant");
            break;
          case NK::SMax:
            if (cx && cy) fold(y > x ? y : x, "constant");
            break;
          case NK::Abs:
            if (cx) fold(x < 0 ? wrap_neg(x) : x, "constant");
            break;
          case NK::Select:
            if (cx) same(x ? n.ops[1] : n.ops[2], "select on a constant");
            break;
          case NK::DivCheck:
            if (cx && x != 0) {
              f.log.push_back(where + "n" + std::to_string(id) + " divcheck of " + std::to_string(x) +
                              " -> removed (never zero)");
              replace_uses(b, id, n.chain);
              changed = true;
            }
            break;
          case NK::SDivSafe:
          case NK::SRemSafe:
            if (cy && y != 0 && y != -1 && x86) {
              int r = add_node(b, n.kind == NK::SDivSafe ? NK::X86Div : NK::X86Rem, {n.ops[0], n.ops[1]});
              same(r, "divisor now a constant neither 0 nor -1: idiv");
            } else if (cy && y == -1) {
              same(n.kind == NK::SDivSafe ? add_node(b, NK::Neg, {n.ops[0]}) : add_node(b, NK::Const, {}, 0),
                   "divisor now -1");
            }
            break;
          case NK::BrCond:
            if (cx) {
              if (x) {
                // Always taken: an unconditional branch; the fall-through branch after it
                // becomes unreachable code, which emission drops.
                b.nodes[i].kind = NK::Br;
                b.nodes[i].ops.clear();
                f.log.push_back(where + "n" + std::to_string(id) + " brcond on true -> br");
              } else {
                // Never taken: leave the chain.
                f.log.push_back(where + "n" + std::to_string(id) + " brcond on false -> removed");
                replace_uses(b, id, n.chain);
              }
              changed = true;
            }
            break;
          default: break;
        }
      }
    }
  }
}

}  // namespace descent::native
