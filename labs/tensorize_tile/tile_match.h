// Lab tensorize_tile: what the checker does with your intrinsic (harness.cpp uses it; you may
// read it, and you need not include it). Three steps, as TVM's tensorize takes them:
//   1. the description read: the tile's size and the statement's index pattern;
//   2. the schedule applied line by line (every step but the last is tensor/schedule's own)
//      and its last step, `tensorize BLOCK NAME`, matched: the tile in block BLOCK must be the
//      description's loops running the description's statement, loop names and the tile's
//      position aside;
//   3. the plan: the loops around the tensorized block walked once, giving the list of calls
//      (where each tile starts in A, B and C) and the init's stores, in the schedule's order.
//      Running the plan is the tensorized matmul; running it with the untensorized tile (the
//      description's loops as plain C++) is the same matmul without your implementation.
#pragma once
#include <cctype>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tensor/index_eval.h"
#include "tensor/schedule.h"
#include "tensor/tir.h"

namespace tilelab {

namespace tir = descent::tir;
namespace tensor = descent::tensor;

// One matrix of the statement: its name and its two indices, each a loop letter (i, j, k).
struct Access {
  std::string buffer;
  char index[2] = {0, 0};
  std::string text() const { return buffer + "[" + index[0] + ", " + index[1] + "]"; }
};

// The description as the student's run recorded it, and its statement parsed.
struct Desc {
  std::string name, statement;
  int64_t m = 0, n = 0, k = 0;
  bool has_impl = false;
  Access c, a, b;  // C[..] += A[..] * B[..]
  int64_t extent(char letter) const { return letter == 'i' ? m : letter == 'j' ? n : k; }
  // The loop C is not indexed by: the reduction, which the tile sums over.
  char reduction() const {
    for (char x : {'i', 'j', 'k'})
      if (c.index[0] != x && c.index[1] != x) return x;
    return 'k';
  }
  std::string text() const { return c.text() + " += " + a.text() + " * " + b.text(); }
  // The access to matrix `buffer` ("C", "A" or "B"): the implementation's pointers go by name.
  const Access& of(const std::string& buffer) const { return c.buffer == buffer ? c : a.buffer == buffer ? a : b; }
};

// The statement's words: names, "[", "]", ",", "*", "+=".
inline std::vector<std::string> words_of(const std::string& s, std::string* bad) {
  std::vector<std::string> out;
  for (size_t p = 0; p < s.size();) {
    unsigned char ch = static_cast<unsigned char>(s[p]);
    if (std::isspace(ch)) {
      ++p;
    } else if (std::isalnum(ch) || ch == '_') {
      size_t q = p;
      while (q < s.size() && (std::isalnum(static_cast<unsigned char>(s[q])) || s[q] == '_')) ++q;
      out.push_back(s.substr(p, q - p));
      p = q;
    } else if (s.compare(p, 2, "+=") == 0) {
      out.push_back("+=");
      p += 2;
    } else if (ch == '[' || ch == ']' || ch == ',' || ch == '*') {
      out.push_back(std::string(1, s[p++]));
    } else {
      *bad = std::string(1, s[p]);
      return {};
    }
  }
  return out;
}

// Reads d->statement into d->c, d->a, d->b and checks the description; "" or what is wrong,
// naming the field of tile_intrinsic() it is in.
inline std::string parse_description(Desc* d) {
  auto valid_name = [](const std::string& s) {
    if (s.empty()) return false;
    for (char ch : s)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') return false;
    return true;
  };
  if (!valid_name(d->name))
    return "tile_intrinsic().name is '" + d->name + "': give it a name of letters, digits and '_' (mk_4x8), "
           "the one your schedule's tensorize step uses";
  if (d->m < 1 || d->m > 32 || d->n < 1 || d->n > 32 || d->k < 1 || d->k > 256)
    return "the description's tile is " + std::to_string(d->m) + " x " + std::to_string(d->n) + " x " +
           std::to_string(d->k) + ": the lab takes m and n from 1 to 32 and k from 1 to 256 (a tile whose "
           "accumulators fit in registers, and enough steps of k to keep them there)";
  const std::string field = "tile_intrinsic().statement \"" + d->statement + "\"";
  if (d->statement.find_first_not_of(" \t\n") == std::string::npos)
    return "tile_intrinsic().statement is empty: write the one statement the description's loops run, in "
           "the loop nests' notation (X[.., ..] += Y[.., ..] * Z[.., ..], each index one of the loops i, j, k)";
  std::string bad;
  std::vector<std::string> w = words_of(d->statement, &bad);
  if (bad == "=") return field + ": write the update with += (C[i, j] += ...): the description accumulates";
  if (!bad.empty()) return field + ": '" + bad + "' has no place in it (names, [ ], commas, += and *)";
  size_t at = 0;
  auto expect = [&](const std::string& what, const std::string& after) -> std::string {
    if (at < w.size() && w[at] == what) {
      ++at;
      return "";
    }
    return field + ": expected '" + what + "'" + after + (at < w.size() ? ", not '" + w[at] + "'" : ", at its end");
  };
  auto access = [&](Access* x, const std::string& role) -> std::string {
    if (at >= w.size() || !std::isalpha(static_cast<unsigned char>(w[at][0])))
      return field + ": expected " + role + " (a matrix and its two indices, like A[i, k])";
    x->buffer = w[at++];
    for (int dim = 0; dim < 2; ++dim) {
      std::string why = expect(dim == 0 ? "[" : ",", " in " + x->buffer + "[..]");
      if (!why.empty()) return why;
      if (at >= w.size() || w[at].size() != 1 || (w[at] != "i" && w[at] != "j" && w[at] != "k"))
        return field + ": " + x->buffer + "'s index " + (at < w.size() ? "'" + w[at] + "'" : "(missing)") +
               " is not one of the description's loops i, j, k (each index is one loop; the tile's position "
               "is the pointers' business)";
      x->index[dim] = w[at++][0];
    }
    return expect("]", " after " + x->buffer + "'s two indices (the matrices are 2-D)");
  };
  std::string why = access(&d->c, "the matrix it writes");
  if (why.empty()) why = expect("+=", " after " + d->c.text() + " (the description accumulates)");
  if (why.empty()) why = access(&d->a, "the first factor");
  if (why.empty()) why = expect("*", " after " + d->a.text());
  if (why.empty()) why = access(&d->b, "the second factor");
  if (why.empty() && at < w.size()) why = field + ": '" + w[at] + "' after the statement's end";
  if (!why.empty()) return why;
  if (d->c.buffer != "C" || !((d->a.buffer == "A" && d->b.buffer == "B") || (d->a.buffer == "B" && d->b.buffer == "A")))
    return field + ": the matmul writes C and reads A and B; the statement writes " + d->c.buffer + " and reads " +
           d->a.buffer + " and " + d->b.buffer;
  if (d->c.index[0] == d->c.index[1])
    return field + ": C is indexed by one loop twice; each element of C's tile is a different (row, column)";
  for (char x : {'i', 'j', 'k'}) {
    bool used = false;
    for (const Access* acc : {&d->c, &d->a, &d->b}) used |= acc->index[0] == x || acc->index[1] == x;
    if (!used) return field + ": the loop " + std::string(1, x) + " < " + std::to_string(d->extent(x)) + " indexes nothing";
  }
  return "";
}

// ---- Matching the tile ------------------------------------------------------------------------

// What tensorize found: the block, and for C, A and B (in that order) the buffer and the
// tile's first element as expressions of the block's iteration variables.
struct Match {
  std::string block;
  int buffer[3] = {-1, -1, -1};
  tir::ExprPtr origin[3][2];
};

inline tir::Stmt* only_stmt(tir::Stmt* s) {
  while (s && s->kind == tir::StmtKind::Seq && s->stmts.size() == 1) s = s->stmts[0].get();
  return s;
}

// An index's value with the names in `vals` set and every other name 0; false when it is not
// index arithmetic.
inline bool value_of(const tir::Expr& e, const std::map<std::string, int64_t>& vals, int64_t* out) {
  tir::IndexFault fault = tir::IndexFault::None;
  *out = tir::eval_index(e, [&](const std::string& n, int64_t* v) {
    auto it = vals.find(n);
    *v = it == vals.end() ? 0 : it->second;
    return true;
  }, &fault, nullptr);
  return fault == tir::IndexFault::None;
}

// The tile in block `name` against the description; "" with *m filled, or what differs.
// `made`: for each loop variable, the schedule line that made it.
inline std::string match_tile(const Desc& d, tir::PrimFunc& f, const std::string& name,
                              const std::map<std::string, std::string>& made, Match* m) {
  using namespace descent::tir;
  Stmt* x = find_block(f, name);
  if (!x) {
    std::vector<std::string> loops = tensor::sched::loop_names(f), blocks = tensor::sched::block_names(f);
    for (const auto& l : loops)
      if (l == name || (l.size() > name.size() && l.compare(l.size() - name.size() - 1, std::string::npos, "." + name) == 0))
        return "'" + name + "' is a loop; here tensorize names a block over a tile, the one blockize makes "
               "(blockize the tile's outermost loop, then tensorize the block C_o it made)";
    std::string list;
    for (const auto& b : blocks) list += (list.empty() ? "" : ", ") + b;
    return "there is no block '" + name + "' (blocks: " + list + ")";
  }
  std::vector<Stmt*> loops;
  Stmt* s = only_stmt(x->body.get());
  while (s && s->kind == StmtKind::For) {
    loops.push_back(s);
    s = only_stmt(s->body.get());
  }
  if (loops.empty() || !s || s->kind != StmtKind::Block)
    return "block '" + name + "' is not a block over a tile: blockize the tile's outermost loop first (it wraps "
           "the tile in a block, C_o), then tensorize that block";
  Stmt* inner = s;
  std::string names;
  for (Stmt* l : loops) names += (names.empty() ? "" : ", ") + l->var;
  if (loops.size() != 3)
    return "the description is three loops (i < " + std::to_string(d.m) + ", j < " + std::to_string(d.n) + ", k < " +
           std::to_string(d.k) + ") around one statement; the tile in block '" + name + "' has " +
           std::to_string(loops.size()) + " (" + names + ")" +
           (loops.size() == 2 ? ": the tile holds the reduction's steps too (split k, and reorder so that its inner "
                                "part is inside the tile)"
                              : "");
  for (Stmt* l : loops)
    if (l->for_kind == ForKind::Parallel || l->for_kind == ForKind::Bound)
      return "loop '" + l->var + "' in the tile is " + for_kind_name(l->for_kind) +
             ": a tile is the work of one call, on one thread";
  if (inner->init)
    return "block '" + inner->name + "' in the tile still has its init (" + inner->name + " = 0 where the "
           "reduction starts): the description only accumulates, so decompose_reduction " + inner->name +
           " at the loop right above the tile's, before blockize";
  if (inner->predicate)
    return "a predicate guards block '" + inner->name + "' (a split that does not divide): the description is a "
           "whole tile";
  Stmt* st = only_stmt(inner->body.get());
  if (!st || st->kind != StmtKind::Store || !st->value) return "block '" + inner->name + "' is not one store";
  ExprPtr value = inline_bindings(*st->value, *inner);
  std::vector<ExprPtr> target;
  for (const auto& i : st->indices) target.push_back(inline_bindings(*i, *inner));
  // C = C + A * B, the sum and the product in either order.
  const Expr* prod = nullptr;
  if (value->kind == ExprKind::Binary && value->op == Op::Add)
    for (int side = 0; side < 2 && !prod; ++side) {
      const Expr& acc = *value->args[size_t(side)];
      bool same = acc.kind == ExprKind::Load && acc.buffer == st->buffer && acc.args.size() == target.size();
      for (size_t q = 0; same && q < target.size(); ++q) same = equal(*acc.args[q], *target[q]);
      if (same) prod = value->args[size_t(1 - side)].get();
    }
  if (!prod || prod->kind != ExprKind::Binary || prod->op != Op::Mul || prod->args[0]->kind != ExprKind::Load ||
      prod->args[1]->kind != ExprKind::Load)
    return "the tile's statement is " + f.buffers[size_t(st->buffer)].name + "[..] = " + print_expr(f, *value) +
           ", not an accumulation of a product";
  // The accesses in the description's order: C, then its first factor, then its second.
  const Expr* loads[2] = {prod->args[0].get(), prod->args[1].get()};
  if (f.buffers[size_t(loads[0]->buffer)].name != d.a.buffer) std::swap(loads[0], loads[1]);
  const std::vector<ExprPtr>* idx[3] = {&target, &loads[0]->args, &loads[1]->args};
  const int bufs[3] = {st->buffer, loads[0]->buffer, loads[1]->buffer};
  const Access* want[3] = {&d.c, &d.a, &d.b};
  // Which loop of the tile each index follows: the index must be (origin) + that loop.
  Stmt* follows[3][2] = {};
  std::string tile_text;
  for (int a = 0; a < 3; ++a) {
    if (idx[a]->size() != 2) return "the tile's " + f.buffers[size_t(bufs[a])].name + " is not 2-D";
    std::string dims;
    for (int dim = 0; dim < 2; ++dim) {
      const Expr& e = *(*idx[a])[size_t(dim)];
      int64_t base = 0, one = 0, two = 0;
      bool ok = value_of(e, {}, &base);
      for (Stmt* l : loops) {
        ok = ok && value_of(e, {{l->var, 1}}, &one) && value_of(e, {{l->var, 2}}, &two);
        if (!ok || (one == base && two == base)) continue;
        if (one - base != 1 || two - base != 2 || follows[a][dim]) ok = false;
        follows[a][dim] = l;
      }
      if (!ok || !follows[a][dim])
        return "index " + std::to_string(dim + 1) + " of " + f.buffers[size_t(bufs[a])].name + " in the tile, " +
               print_expr(f, e) + ", is not the tile's origin plus one of its loops";
      dims += (dim ? ", " : "") + follows[a][dim]->var;
    }
    tile_text += (a == 0 ? "" : a == 1 ? " += " : " * ") + f.buffers[size_t(bufs[a])].name + "[" + dims + "]";
  }
  // Each letter of the description is one loop of the tile: the one at the same places.
  std::map<char, Stmt*> loop_of;
  bool same = true;
  for (int a = 0; a < 3 && same; ++a)
    for (int dim = 0; dim < 2 && same; ++dim) {
      char letter = want[a]->index[dim];
      auto it = loop_of.find(letter);
      if (it == loop_of.end()) loop_of[letter] = follows[a][dim];
      else same = it->second == follows[a][dim];
    }
  std::set<Stmt*> distinct;
  for (auto& [letter, l] : loop_of) distinct.insert(l);
  if (!same || distinct.size() != loop_of.size())
    return "the description's statement, " + d.text() + ", is not the tile's: block '" + name + "' computes " +
           tile_text + " (its loops as the schedule names them): write the description's statement with the "
           "tile's index pattern, one letter for each loop of the tile";
  for (char letter : {'i', 'j', 'k'}) {
    Stmt* l = loop_of[letter];
    if (l->extent == d.extent(letter)) continue;
    auto it = made.find(l->var);
    return "the description has " + std::string(1, letter) + " < " + std::to_string(d.extent(letter)) +
           ", but the tile's loop for " + std::string(1, letter) + ", " + l->var + ", runs " +
           std::to_string(l->extent) + " times" +
           (it != made.end() ? " (" + it->second + " made it)"
                             : " (it is the matmul's own loop, never split: split it by " +
                                   std::to_string(d.extent(letter)) + ")");
  }
  m->block = name;
  for (int a = 0; a < 3; ++a) {
    m->buffer[a] = bufs[a];
    for (int dim = 0; dim < 2; ++dim) {
      ExprPtr o = clone(*(*idx[a])[size_t(dim)]);
      for (Stmt* l : loops) o = substitute(*o, l->var, *int_imm(0));
      m->origin[a][dim] = simplify(*o);
    }
  }
  return "";
}

// The schedule applied to f line by line, its last step the tensorize matched; "" or what
// went wrong, with the line.
inline std::string apply_and_match(const Desc& d, const std::string& schedule, tir::PrimFunc* f, Match* m) {
  std::vector<tensor::StepLine> lines = tensor::schedule_lines(schedule);
  if (lines.empty())
    return "tile_schedule() has no steps: split the matmul's loops into tiles, blockize the tile and tensorize "
           "its block with " + d.name;
  std::map<std::string, std::string> made;  // loop variable -> "line 2, `split i 4`,"
  for (size_t n = 0; n < lines.size(); ++n) {
    const tensor::StepLine& line = lines[n];
    const std::string where = "tile_schedule() line " + std::to_string(line.line) + ", `" + line.step + "`";
    std::vector<std::string> parts;  // the step's words
    for (size_t p = 0, q; p < line.step.size(); p = q) {
      p = line.step.find_first_not_of(" \t", p);
      if (p == std::string::npos) break;
      q = line.step.find_first_of(" \t", p);
      if (q == std::string::npos) q = line.step.size();
      parts.push_back(line.step.substr(p, q - p));
    }
    if (!parts.empty() && parts[0] == "tensorize") {
      if (parts.size() != 3) return where + ": tensorize takes a block and an intrinsic (`tensorize C_o " + d.name + "`)";
      if (parts[2] != d.name)
        return where + ": this lab tensorizes with your intrinsic, '" + d.name + "' (tile_intrinsic().name)" +
               (tensor::sched::find_intrinsic(parts[2]) ? ", not the project's own " + parts[2] : "");
      if (n + 1 < lines.size())
        return "tile_schedule() line " + std::to_string(lines[n + 1].line) + ", `" + lines[n + 1].step +
               "`, comes after the tensorize step: tensorize is the last step here (the lab runs the loops "
               "around your tile itself)";
      std::string why = match_tile(d, *f, parts[1], made, m);
      return why.empty() ? "" : where + ": cannot tensorize with " + d.name + ": " + why;
    }
    tensor::StepResult res;
    std::string error;
    if (!tensor::apply_step_result(*f, line.step, &res, &error)) return where + ": " + error;
    // The first step that made a loop name is the one to fix (decompose_reduction makes
    // copies of the same names for the init's nest).
    for (const auto& l : res.loops)
      made.emplace(l.substr(l.rfind('.') + 1), "line " + std::to_string(line.line) + ", `" + line.step + "`,");
  }
  return "the schedule never tensorizes: end it with `tensorize C_o " + d.name + "`, C_o being the block blockize "
         "made around the tile";
}

// ---- The plan: the tensorized matmul as a list of calls ---------------------------------------

struct Event {
  bool tile = false;
  int64_t c = 0, a = 0, b = 0;  // tile: where its first element is in C, A, B; else the store's place in C
  float value = 0;              // a store of the init
};

struct Plan {
  std::vector<Event> events;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t rows = 0, cols = 0, depth = 0;  // the tile: C's rows and columns, the reduction's steps
};

// The loops of f walked once, the tensorized block a call and the init's stores recorded; ""
// or why this schedule cannot be run that way.
inline std::string make_plan(const tir::PrimFunc& f, const Desc& d, const Match& m, Plan* plan) {
  using namespace descent::tir;
  const Buffer& A = f.buffers[size_t(f.params[0])];
  const Buffer& B = f.buffers[size_t(f.params[1])];
  const Buffer& C = f.buffers[size_t(f.output)];
  plan->lda = A.shape[1];
  plan->ldb = B.shape[1];
  plan->ldc = C.shape[1];
  plan->rows = d.extent(d.c.index[0]);
  plan->cols = d.extent(d.c.index[1]);
  plan->depth = d.extent(d.reduction());
  const Access* acc[3] = {&d.c, &d.a, &d.b};
  std::map<std::string, int64_t> env;
  std::string why;
  auto iters_of = [&](const Stmt& b, std::map<std::string, int64_t>* vals) {
    *vals = env;
    for (const auto& it : b.iters) {
      int64_t v = 0;
      if (!value_of(*it.binding, env, &v) || v < 0 || v >= it.extent) {
        why = "block '" + b.name + "': iteration variable " + it.name + " is out of its domain";
        return false;
      }
      (*vals)[it.name] = v;
    }
    return true;
  };
  std::function<bool(const Stmt&)> walk = [&](const Stmt& s) -> bool {
    switch (s.kind) {
      case StmtKind::For:
        for (int64_t v = 0; v < s.extent; ++v) {
          env[s.var] = v;
          if (!walk(*s.body)) return false;
        }
        env.erase(s.var);
        return true;
      case StmtKind::Seq:
        for (const auto& k : s.stmts)
          if (!walk(*k)) return false;
        return true;
      case StmtKind::Block: {
        std::map<std::string, int64_t> vals;
        if (!iters_of(s, &vals)) return false;
        Event e;
        if (s.name == m.block) {
          e.tile = true;
          for (int a = 0; a < 3; ++a) {
            const Buffer& buf = f.buffers[size_t(m.buffer[a])];
            int64_t* off = buf.name == "C" ? &e.c : buf.name == "A" ? &e.a : &e.b;
            int64_t r = 0, c = 0;
            value_of(*m.origin[a][0], vals, &r);
            value_of(*m.origin[a][1], vals, &c);
            if (r < 0 || c < 0 || r + d.extent(acc[a]->index[0]) > buf.shape[0] ||
                c + d.extent(acc[a]->index[1]) > buf.shape[1]) {
              why = "a tile of " + buf.name + " at [" + std::to_string(r) + ", " + std::to_string(c) +
                    "] would reach outside it";
              return false;
            }
            *off = r * buf.shape[1] + c;
          }
          plan->events.push_back(e);
          return true;
        }
        // Any other block must be the reduction's init, hoisted by decompose_reduction.
        const Stmt* st = only_stmt(s.body.get());
        if (s.init || !st || st->kind != StmtKind::Store || st->buffer != f.output || !st->value ||
            st->value->kind != ExprKind::FloatImm) {
          why = "block '" + s.name + "' is neither the tensorized tile nor an init (C = a constant): the lab runs "
                "loops around your tile and C's init, nothing else (no cache_read or cache_write here: the "
                "implementation keeps the tile's accumulators itself)";
          return false;
        }
        if (s.predicate) {
          int64_t on = 1;
          value_of(*s.predicate, vals, &on);
          if (!on) return true;
        }
        int64_t r = 0, c = 0;
        value_of(*st->indices[0], vals, &r);
        value_of(*st->indices[1], vals, &c);
        e.c = r * C.shape[1] + c;
        e.value = float(st->value->fval);
        plan->events.push_back(e);
        return true;
      }
      default:
        why = std::string("the schedule made a statement the lab does not run (") +
              (s.kind == StmtKind::Store ? "a store outside a block" : s.kind == StmtKind::If ? "an if" : "an allocation") +
              "): the lab runs loops, C's init and your tile";
        return false;
    }
  };
  if (!walk(*f.body)) return why;
  return "";
}

// The plan run: each tile one call of `tile`, each init store done, in order.
template <class Tile>
void run_plan(const Plan& plan, const float* A, const float* B, float* C, Tile tile) {
  for (const Event& e : plan.events) {
    if (e.tile) tile(A + e.a, B + e.b, C + e.c, plan.lda, plan.ldb, plan.ldc);
    else C[e.c] = e.value;
  }
}

// The untensorized tile: the description's loops as plain C++, i, then j, then k, one
// multiply-add at a time, as the matmul's own loop nest runs them.
struct UntensorizedTile {
  int64_t rows, cols, depth;
  void operator()(const float* A, const float* B, float* C, int64_t lda, int64_t ldb, int64_t ldc) const {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        for (int64_t q = 0; q < depth; ++q) C[r * ldc + c] += A[r * lda + q] * B[q * ldb + c];
  }
};
inline UntensorizedTile untensorized_tile(const Plan& p) { return {p.rows, p.cols, p.depth}; }

}  // namespace tilelab
