// Stages 2 and 3: legalisation and the DAG combine.
//
// Legalisation rewrites what x86-64 cannot do as the DAG says it: there are no float
// immediates (a float constant is loaded through a GPR), an immediate operand has 32 bits
// (a wider constant becomes an `imm64`: movabs), and idiv traps where the language defines a
// result (x / 0 is the runtime error "division by zero"; INT_MIN / -1 is INT_MIN, but idiv
// raises #DE). Division by a constant needs none of the checks, and by a power of two no idiv
// at all: two shifts and an add round toward zero as the language requires; by any other
// constant, a multiplication by its magic number.
//
// The combine then folds what legalisation and the bytecode left foldable: constant operands
// (with the language's wrap-around), x + 0, x * 1, x * 2^k -> x << k, double negations,
// branches on constants. There are no float identities, on purpose: x + 0.0 is not x when x
// is -0.0, and x * 0.0 is not 0.0 when x is inf or nan.
#include <cstdint>
#include <string>

#include "lang/value.h"
#include "native/backend.h"

namespace descent::native {

namespace {

bool fits_imm32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

std::string ref(const Block& b, int id) {
  const Node& n = b.nodes[static_cast<size_t>(id)];
  std::string s = "n" + std::to_string(id) + " " + nk_name(n.kind);
  if (n.kind == NK::Const || n.kind == NK::Imm64) s += " " + std::to_string(n.imm);
  return s;
}

// Who uses each node, so a rewrite touches only the users of what it replaces: a block may
// hold tens of thousands of nodes (a 45,000-term sum), and scanning them all per fold would
// be quadratic. Built per block by index_block; add_node and the rewrites keep it current.
struct UseIndex {
  std::vector<std::vector<int>> users;  // per node: the nodes with it among their operands
  std::vector<int> chain_user;          // per node + 1 (0: the block's start): who chains to it
};
thread_local UseIndex uses;

void index_block(const Block& b) {
  uses.users.assign(b.nodes.size(), {});
  uses.chain_user.assign(b.nodes.size() + 1, -1);
  for (size_t i = 0; i < b.nodes.size(); ++i) {
    const Node& n = b.nodes[i];
    if (n.dead) continue;
    for (int o : n.ops) uses.users[static_cast<size_t>(o)].push_back(static_cast<int>(i));
    if (is_chained(n.kind)) uses.chain_user[static_cast<size_t>(n.chain + 1)] = static_cast<int>(i);
  }
}

// Replaces every use of `from` (as a value operand or a chain) by `to`.
void replace_uses(Block& b, int from, int to) {
  for (int u : uses.users[static_cast<size_t>(from)]) {
    Node& n = b.nodes[static_cast<size_t>(u)];
    if (n.dead) continue;
    for (int& o : n.ops)
      if (o == from) o = to;
    if (to >= 0) uses.users[static_cast<size_t>(to)].push_back(u);
  }
  uses.users[static_cast<size_t>(from)].clear();
  int next = uses.chain_user[static_cast<size_t>(from + 1)];
  if (next >= 0 && is_chained(b.nodes[static_cast<size_t>(from)].kind)) {
    b.nodes[static_cast<size_t>(next)].chain = to;
    uses.chain_user[static_cast<size_t>(to + 1)] = next;
    uses.chain_user[static_cast<size_t>(from + 1)] = -1;
  }
  if (b.last_chain == from) b.last_chain = to;
  b.nodes[static_cast<size_t>(from)].dead = true;
}

int add_node(Block& b, NK k, std::vector<int> ops, int64_t imm = 0) {
  Node n;
  n.kind = k;
  n.ops = std::move(ops);
  n.imm = imm;
  n.type = k == NK::FLoadConst ? VT::F64 : VT::I64;
  int id = static_cast<int>(b.nodes.size());
  for (int o : n.ops) uses.users[static_cast<size_t>(o)].push_back(id);
  b.nodes.push_back(std::move(n));
  uses.users.emplace_back();
  uses.chain_user.push_back(-1);
  return id;
}

// Puts chained node `id` into the chain right after `after` (-1: at the block's start).
void insert_after(Block& b, int id, int after) {
  int next = uses.chain_user[static_cast<size_t>(after + 1)];
  if (next >= 0 && next != id) {
    b.nodes[static_cast<size_t>(next)].chain = id;
    uses.chain_user[static_cast<size_t>(id + 1)] = next;
  }
  b.nodes[static_cast<size_t>(id)].chain = after;
  uses.chain_user[static_cast<size_t>(after + 1)] = id;
}

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

int log2_exact(int64_t v) {
  if (v <= 0 || (v & (v - 1)) != 0) return -1;
  int k = 0;
  while ((int64_t{1} << k) != v) ++k;
  return k;
}

}  // namespace

void legalize(Function& f) {
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
          if (!fits_imm32(n.imm)) {
            b.nodes[i].kind = NK::Imm64;
            f.log.push_back(where + ref(b, id) + ": wider than an imm32 -> imm64 (movabs)");
          }
          break;
        case NK::FConst:
          b.nodes[i].kind = NK::FLoadConst;
          f.log.push_back(where + "n" + std::to_string(id) + " fconst " +
                          format_float(Value::of_int(n.imm).f) +
                          ": x86 has no float immediates -> fconst.bits (via a GPR)");
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
            f.log.push_back(what + (div ? "x / -1 -> neg x (idiv would trap on INT_MIN)" : "x % -1 -> 0"));
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
            f.log.push_back(what + "a power of two -> shifts (rounding toward zero), no idiv");
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
                            ", shift by " + std::to_string(sh) + " (no idiv)");
          } else if (konst && c != 0) {
            int r = add_node(b, div ? NK::X86Div : NK::X86Rem, {n.ops[0], n.ops[1]});
            replace_uses(b, id, r);
            f.log.push_back(what + "INT_MIN: idiv, no checks");
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
            f.log.push_back(what + "divcheck (division by zero) + " +
                            (div ? "sdiv.safe (idiv, or neg for -1)" : "srem.safe (idiv, or 0 for -1)"));
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
          f.log.push_back(where + ref(b, id) + ": no x86 instruction -> libcall " +
                          (n.kind == NK::FRem ? std::string("fmod")
                                              : std::string(builtin_name(static_cast<Builtin>(n.aux)))));
          break;
        }
        default: break;
      }
    }
  }
}

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

void combine(Function& f) {
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
          int r = add_node(b, fits_imm32(v) ? NK::Const : NK::Imm64, {}, v);
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
            if (cy && y != 0 && y != -1) {
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
