// test_tensor_schedule_blocks: the block primitives (compute_at, reverse_compute_at,
// compute_inline, cache_read, cache_write, compact_buffers, decompose_reduction, rfactor).
//
// Every transform is checked three ways: the shape of the new loop nest (an outline of loops
// and blocks with their bindings, and the golden TVMScript text), tir::verify, and the
// numbers: the reference interpreter must give the same result before and after on random
// inputs. Every refusal is checked with its exact message and an unchanged function.
#include <doctest/doctest.h>

#include "tests/golden.h"
#include "tests/tensor/kernel_util.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

#include "tensor/lower.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"

using namespace descent::tensor;
namespace tir = descent::tir;
using tir::IterKind;
using tir::Op;
using tir::PrimFunc;
using tir::StmtPtr;

namespace {

// ---- building the lowered kernels by hand (the form tensor::lower gives) -------------------

struct Axis {
  const char* iter;
  int64_t extent;
  IterKind kind;
  const char* loop;
};

StmtPtr block(const std::string& name, const std::vector<Axis>& axes, StmtPtr init, StmtPtr body) {
  auto b = std::make_unique<tir::Stmt>(tir::StmtKind::Block);
  b->name = name;
  for (const Axis& a : axes) b->iters.push_back({a.iter, a.extent, a.kind, tir::var(a.loop)});
  b->init = std::move(init);
  b->body = std::move(body);
  return b;
}

// for l0, l1, ...: body (loops named after the axes, in order)
StmtPtr nest(const std::vector<Axis>& axes, StmtPtr body) {
  for (size_t k = axes.size(); k-- > 0;)
    body = tir::make_for(axes[k].loop, axes[k].extent, std::move(body));
  return body;
}

std::vector<tir::ExprPtr> vars(std::initializer_list<const char*> names) {
  std::vector<tir::ExprPtr> out;
  for (const char* n : names) out.push_back(tir::var(n));
  return out;
}

tir::ExprPtr ld(int buffer, std::initializer_list<const char*> idx) {
  return tir::load(buffer, vars(idx));
}
StmtPtr st(int buffer, std::initializer_list<const char*> idx, tir::ExprPtr v) {
  return tir::make_store(buffer, vars(idx), std::move(v));
}

StmtPtr seq2(StmtPtr a, StmtPtr b) {
  std::vector<StmtPtr> v;
  v.push_back(std::move(a));
  v.push_back(std::move(b));
  return tir::make_seq(std::move(v));
}

PrimFunc func(const std::string& name, std::vector<tir::Buffer> buffers, std::vector<int> params,
              int output, StmtPtr body) {
  PrimFunc f;
  f.name = name;
  f.buffers = std::move(buffers);
  f.params = std::move(params);
  f.output = output;
  f.body = std::move(body);
  return f;
}

tir::Buffer buf(const char* name, std::vector<int64_t> shape, tir::BufferRole role) {
  return {name, std::move(shape), tir::Scope::Global, role};
}
constexpr auto In = tir::BufferRole::Input;
constexpr auto Out = tir::BufferRole::Output;
constexpr auto Tmp = tir::BufferRole::Temp;

// Y[vi, vj] = sum over vk of A[vi, vk] * B[vk, vj]   (A=0, B=1, Y=2)
StmtPtr matmul_nest(int y, int64_t n) {
  std::vector<Axis> ax = {{"vi", n, IterKind::Spatial, "i"},
                          {"vj", n, IterKind::Spatial, "j"},
                          {"vk", n, IterKind::Reduce, "k"}};
  return nest(
      ax, block("Y", ax, st(y, {"vi", "vj"}, tir::float_imm(0)),
                st(y, {"vi", "vj"},
                   tir::binary(Op::Add, ld(y, {"vi", "vj"}),
                               tir::binary(Op::Mul, ld(0, {"vi", "vk"}), ld(1, {"vk", "vj"}))))));
}

PrimFunc matmul(int64_t n) {
  return func("matmul", {buf("A", {n, n}, In), buf("B", {n, n}, In), buf("Y", {n, n}, Out)}, {0, 1},
              2, matmul_nest(2, n));
}

PrimFunc mm_relu(int64_t n) {
  std::vector<Axis> ax = {{"vi", n, IterKind::Spatial, "i"}, {"vj", n, IterKind::Spatial, "j"}};
  StmtPtr relu = nest(
      ax, block("C", ax, nullptr,
                st(3, {"vi", "vj"}, tir::binary(Op::Max, ld(2, {"vi", "vj"}), tir::float_imm(0)))));
  return func(
      "mm_relu",
      {buf("A", {n, n}, In), buf("B", {n, n}, In), buf("Y", {n, n}, Tmp), buf("C", {n, n}, Out)},
      {0, 1}, 3, seq2(matmul_nest(2, n), std::move(relu)));
}

// T = A + B; C = max(T, 0): two elementwise stages.
PrimFunc add_relu(int64_t n) {
  std::vector<Axis> ax = {{"vi", n, IterKind::Spatial, "i"}, {"vj", n, IterKind::Spatial, "j"}};
  StmtPtr add = nest(ax, block("T", ax, nullptr,
                               st(2, {"vi", "vj"},
                                  tir::binary(Op::Add, ld(0, {"vi", "vj"}), ld(1, {"vi", "vj"})))));
  // Reads T transposed, so inlining must substitute both indices at once.
  StmtPtr relu = nest(
      ax, block("C", ax, nullptr,
                st(3, {"vi", "vj"}, tir::binary(Op::Max, ld(2, {"vj", "vi"}), tir::float_imm(0)))));
  return func(
      "add_relu",
      {buf("A", {n, n}, In), buf("B", {n, n}, In), buf("T", {n, n}, Tmp), buf("C", {n, n}, Out)},
      {0, 1}, 3, seq2(std::move(add), std::move(relu)));
}

// softmax over rows: mx (max-reduce), e (exp), s (sum-reduce), out (divide).
PrimFunc softmax(int64_t n, int64_t m) {
  enum { X, MX, E, S, OUTB };
  std::vector<Axis> sr = {{"vi", n, IterKind::Spatial, "i"}, {"vj", m, IterKind::Reduce, "j"}};
  std::vector<Axis> ss = {{"vi", n, IterKind::Spatial, "i"}, {"vj", m, IterKind::Spatial, "j"}};
  std::vector<StmtPtr> stages;
  stages.push_back(
      nest(sr, block("mx", sr, st(MX, {"vi"}, tir::float_imm(-INFINITY)),
                     st(MX, {"vi"}, tir::binary(Op::Max, ld(MX, {"vi"}), ld(X, {"vi", "vj"}))))));
  stages.push_back(nest(
      ss,
      block("e", ss, nullptr,
            st(E, {"vi", "vj"},
               tir::unary(Op::Exp, tir::binary(Op::Sub, ld(X, {"vi", "vj"}), ld(MX, {"vi"})))))));
  stages.push_back(
      nest(sr, block("s", sr, st(S, {"vi"}, tir::float_imm(0)),
                     st(S, {"vi"}, tir::binary(Op::Add, ld(S, {"vi"}), ld(E, {"vi", "vj"}))))));
  stages.push_back(nest(
      ss, block("out", ss, nullptr,
                st(OUTB, {"vi", "vj"}, tir::binary(Op::Div, ld(E, {"vi", "vj"}), ld(S, {"vi"}))))));
  return func("softmax",
              {buf("x", {n, m}, In), buf("mx", {n}, Tmp), buf("e", {n, m}, Tmp), buf("s", {n}, Tmp),
               buf("out", {n, m}, Out)},
              {0}, OUTB, tir::make_seq(std::move(stages)));
}

// The seed notes' hand-fused linear_relu: for i, j: { for r: out_acc; out }.
PrimFunc linear_relu(int64_t n, int64_t m, int64_t k) {
  enum { X, W, ACC, OUTB };
  std::vector<Axis> red = {{"vi", n, IterKind::Spatial, "i"},
                           {"vj", m, IterKind::Spatial, "j"},
                           {"vr", k, IterKind::Reduce, "r"}};
  std::vector<Axis> sp = {{"vi", n, IterKind::Spatial, "i"}, {"vj", m, IterKind::Spatial, "j"}};
  StmtPtr acc = tir::make_for(
      "r", k,
      block("out_acc", red, st(ACC, {"vi", "vj"}, tir::float_imm(0)),
            st(ACC, {"vi", "vj"},
               tir::binary(Op::Add, ld(ACC, {"vi", "vj"}),
                           tir::binary(Op::Mul, ld(X, {"vi", "vr"}), ld(W, {"vj", "vr"}))))));
  StmtPtr relu =
      block("out", sp, nullptr,
            st(OUTB, {"vi", "vj"}, tir::binary(Op::Max, ld(ACC, {"vi", "vj"}), tir::float_imm(0))));
  return func("linear_relu",
              {buf("x", {n, k}, In), buf("w", {m, k}, In), buf("out_acc", {n, m}, Tmp),
               buf("out", {n, m}, Out)},
              {0, 1}, OUTB, nest(sp, seq2(std::move(acc), std::move(relu))));
}

// ---- looking at results -------------------------------------------------------------------

std::string expr_text(const PrimFunc& f, const tir::Expr& e) {
  switch (e.kind) {
    case tir::ExprKind::IntImm:
      return std::to_string(e.ival);
    case tir::ExprKind::FloatImm: {
      std::ostringstream o;
      o << e.fval;
      return o.str();
    }
    case tir::ExprKind::Var:
      return e.name;
    case tir::ExprKind::Load: {
      std::string s = f.buffers[e.buffer].name + "[";
      for (size_t k = 0; k < e.args.size(); ++k) s += (k ? ", " : "") + expr_text(f, *e.args[k]);
      return s + "]";
    }
    case tir::ExprKind::Binary: {
      const char* sym = nullptr;
      switch (e.op) {
        case Op::Add:
          sym = " + ";
          break;
        case Op::Sub:
          sym = " - ";
          break;
        case Op::Mul:
          sym = " * ";
          break;
        case Op::Div:
          sym = " / ";
          break;
        case Op::Lt:
          sym = " < ";
          break;
        case Op::Ge:
          sym = " >= ";
          break;
        case Op::And:
          sym = " && ";
          break;
        default:
          break;
      }
      if (sym) return "(" + expr_text(f, *e.args[0]) + sym + expr_text(f, *e.args[1]) + ")";
      return std::string(tir::op_name(e.op)) + "(" + expr_text(f, *e.args[0]) + ", " +
             expr_text(f, *e.args[1]) + ")";
    }
    case tir::ExprKind::Unary:
      return std::string(tir::op_name(e.op)) + "(" + expr_text(f, *e.args[0]) + ")";
    case tir::ExprKind::Select:
      return "select(...)";
    case tir::ExprKind::Fma:
      return "fma(" + expr_text(f, *e.args[0]) + ", " + expr_text(f, *e.args[1]) + ", " +
             expr_text(f, *e.args[2]) + ")";
  }
  return "?";
}

// A one-line outline: "for i(128) { for j(128) { Y(vi=i, vj=j, vk:k) } }". Blocks list
// their bindings; "init" marks a block that still has one; allocations show their shape.
std::string outline(const PrimFunc& f, const tir::Stmt* s) {
  if (!s) return "";
  switch (s->kind) {
    case tir::StmtKind::For:
      return "for " + s->var + "(" + std::to_string(s->extent) + ") { " +
             outline(f, s->body.get()) + " }";
    case tir::StmtKind::Seq: {
      std::string out;
      for (size_t k = 0; k < s->stmts.size(); ++k)
        out += (k ? " " : "") + outline(f, s->stmts[k].get());
      return out;
    }
    case tir::StmtKind::Block: {
      std::string out = s->name + "(";
      for (size_t k = 0; k < s->iters.size(); ++k)
        out += (k ? ", " : "") + s->iters[k].name +
               (s->iters[k].kind == IterKind::Reduce ? ":" : "=") +
               expr_text(f, *s->iters[k].binding);
      out += ")";
      if (s->predicate) out += " if " + expr_text(f, *s->predicate);
      if (s->init) out += " init";
      return out;
    }
    case tir::StmtKind::Allocate: {
      const tir::Buffer& b = f.buffers[s->buffer];
      std::string shape;
      for (size_t k = 0; k < b.shape.size(); ++k)
        shape += (k ? ", " : "") + std::to_string(b.shape[k]);
      return "alloc " + b.name + "[" + shape + "] { " + outline(f, s->body.get()) + " }";
    }
    case tir::StmtKind::If:
      return "if " + expr_text(f, *s->predicate) + " { " + outline(f, s->body.get()) + " }";
    default:
      return "?";
  }
}
std::string outline(const PrimFunc& f) { return outline(f, f.body.get()); }

// The text of every store in block `name`: "C[vi, vj] = max(Y[vi, vj], 0)".
std::string block_body(PrimFunc& f, const std::string& name) {
  tir::Stmt* b = tir::find_block(f, name);
  REQUIRE(b);
  std::vector<const tir::Stmt*> stores;
  std::function<void(const tir::Stmt*)> go = [&](const tir::Stmt* s) {
    if (!s) return;
    if (s->kind == tir::StmtKind::Store) stores.push_back(s);
    go(s->init.get());
    go(s->body.get());
    for (const auto& c : s->stmts) go(c.get());
  };
  go(b->init.get());
  go(b->body.get());
  std::string out;
  for (const tir::Stmt* s : stores) {
    if (!out.empty()) out += "; ";
    out += f.buffers[s->buffer].name + "[";
    for (size_t k = 0; k < s->indices.size(); ++k)
      out += (k ? ", " : "") + expr_text(f, *s->indices[k]);
    out += "] = " + expr_text(f, *s->value);
  }
  return out;
}

// Runs both functions in the reference interpreter on the same random inputs.
void check_same_result(const PrimFunc& before, const PrimFunc& after) {
  std::string error;
  INFO("after:\n" << outline(after));
  REQUIRE_MESSAGE(tir::verify(after, &error), error);
  std::vector<Tensor> inputs(before.params.size());
  std::vector<const Tensor*> args;
  for (size_t k = 0; k < before.params.size(); ++k) {
    REQUIRE(descent::tensor::rand(before.buffers[before.params[k]].shape, int64_t(k) + 7,
                                  &inputs[k], &error));
    args.push_back(&inputs[k]);
  }
  Tensor want, got;
  REQUIRE_MESSAGE(tir::interpret(before, args, &want, &error), error);
  REQUIRE_MESSAGE(tir::interpret(after, args, &got, &error), error);
  std::string why;
  CHECK_MESSAGE(allclose(want, got, 1e-4, &why), why);
}

// A refused step: the exact message, and the function untouched.
void check_refused(PrimFunc& f, const std::function<bool(PrimFunc&, std::string*)>& step,
                   const std::string& message) {
  std::string before = outline(f);
  std::string error;
  CHECK_FALSE(step(f, &error));
  CHECK(error == message);
  CHECK(outline(f) == before);
}

// Golden TVMScript, once the printer exists: tests/tensor/golden/blocks_NAME.tir.
// DESCENT_UPDATE_GOLDEN=1 rewrites the files.
void check_golden(const PrimFunc& f, const std::string& name) {
  descent::testing::check_golden_file("tensor/golden/blocks_" + name + ".tir",
                                      tir::print_script(f));
}

bool ok(bool r, const std::string& error) {
  INFO(error);
  CHECK(r);
  return r;
}

}  // namespace

// ---- compute_at / reverse_compute_at -------------------------------------------------------

TEST_CASE("compute_at: mm_relu's matmul moves under the relu's j loop") {
  PrimFunc f = mm_relu(64);
  PrimFunc g = f;
  std::string error;
  REQUIRE(ok(sched::compute_at(g, "Y", "C.j", &error), error));
  // One element of Y per (i, j): its spatial axes become the loop variables, only the
  // reduce loop remains, and it keeps its name.
  CHECK(outline(g) ==
        "for i(64) { for j(64) { for k(64) { Y(vi=i, vj=j, vk:k) init } C(vi=i, vj=j) } }");
  check_same_result(f, g);
  check_golden(g, "compute_at_mm_relu");
}

TEST_CASE("compute_at: under an outer loop the producer computes a row") {
  PrimFunc f = mm_relu(32);
  PrimFunc g = f;
  std::string error;
  REQUIRE(ok(sched::compute_at(g, "Y", "C.i", &error), error));
  // The loop names i and k are free under C.i except i itself: vj gets its old name j,
  // which is also free (the relu's j is a sibling, not an enclosing loop).
  CHECK(outline(g) ==
        "for i(32) { for j(32) { for k(32) { Y(vi=i, vj=j, vk:k) init } } for j(32) { C(vi=i, "
        "vj=j) } }");
  check_same_result(f, g);
}

TEST_CASE("compute_at: a split consumer gets a tile-sized producer with a guard") {
  PrimFunc f = add_relu(20);
  PrimFunc g = f;
  std::string error;
  // C reads T[vj, vi]: a (j-tile x i-tile) box of T per (i_0, j_0).
  REQUIRE(ok(sched::split(g, "C.i", 8, {}, &error), error));
  REQUIRE(ok(sched::split(g, "C.j", 8, {}, &error), error));
  REQUIRE(ok(sched::reorder(g, {"i_0", "j_0", "i_1", "j_1"}, &error), error));
  REQUIRE(ok(sched::compute_at(g, "T", "j_0", &error), error));
  tir::Stmt* t = tir::find_block(g, "T");
  REQUIRE(t);
  CHECK(outline(g, t) ==
        "T(vi=((j_0 * 8) + i), vj=((i_0 * 8) + j)) if ((((j_0 * 8) + i) < 20) && (((i_0 * 8) + j) "
        "< 20))");
  check_same_result(f, g);
}

// softmax's three producers computed inside the output's row loop, one by one.
PrimFunc rows_fused(const PrimFunc& f) {
  PrimFunc g = f;
  std::string error;
  REQUIRE(ok(sched::compute_at(g, "s", "out.i", &error), error));
  REQUIRE(ok(sched::compute_at(g, "e", "s.i", &error), error));
  REQUIRE(ok(sched::compute_at(g, "mx", "e.i", &error), error));
  return g;
}

TEST_CASE("compute_at: a reduction producer under a softmax row") {
  PrimFunc f = softmax(8, 16);
  PrimFunc g = rows_fused(f);
  CHECK(outline(g) ==
        "for i(8) { for j(16) { mx(vi=i, vj:j) init } for j(16) { e(vi=i, vj=j) } "
        "for j(16) { s(vi=i, vj:j) init } for j(16) { out(vi=i, vj=j) } }");
  check_same_result(f, g);
  check_golden(g, "compute_at_softmax");
}

TEST_CASE("compute_at: refusals") {
  PrimFunc f = mm_relu(16);
  check_refused(
      f, [](PrimFunc& g, std::string* e) { return sched::compute_at(g, "Z", "C.j", e); },
      "no block 'Z' (blocks: Y, C)");
  check_refused(
      f, [](PrimFunc& g, std::string* e) { return sched::compute_at(g, "Y", "q", e); },
      "no loop 'q' (loops: Y.i, Y.j, k, C.i, C.j)");
  check_refused(
      f, [](PrimFunc& g, std::string* e) { return sched::compute_at(g, "C", "Y.j", e); },
      "cannot compute_at 'C' at 'Y.j': it writes the output 'C'; only an intermediate "
      "stage can move into its consumers");
  check_refused(
      f, [](PrimFunc& g, std::string* e) { return sched::compute_at(g, "Y", "k", e); },
      "cannot compute_at 'Y' at 'k': it is already inside 'k'");

  PrimFunc s = softmax(4, 4);
  check_refused(
      s, [](PrimFunc& g, std::string* e) { return sched::compute_at(g, "e", "mx.j", e); },
      "cannot compute_at 'e' at 'mx.j': block 's' reads 'e' outside 'mx.j'");
  check_refused(
      s, [](PrimFunc& g, std::string* e) { return sched::compute_at(g, "mx", "s.j", e); },
      "cannot compute_at 'mx' at 's.j': block 'e' reads 'mx' outside 's.j'");
  // e has two readers in different nests: a loop of one of them cannot hold it.
  check_refused(
      s, [](PrimFunc& g, std::string* e) { return sched::compute_at(g, "e", "out.j", e); },
      "cannot compute_at 'e' at 'out.j': block 's' reads 'e' outside 'out.j'");

  // The consumer nest before the producer nest (a malformed order compute_at must not hide).
  PrimFunc r = mm_relu(8);
  std::swap(r.body->stmts[0], r.body->stmts[1]);
  check_refused(
      r, [](PrimFunc& g, std::string* e) { return sched::compute_at(g, "Y", "C.j", e); },
      "cannot compute_at 'Y' at 'C.j': block 'C' under 'C.j' runs before it");

  // A loop that encloses no reader: C reads A directly, Y is dead.
  PrimFunc d = mm_relu(8);
  tir::find_block(d, "C")->body->value->args[0]->buffer = 0;
  check_refused(
      d, [](PrimFunc& g, std::string* e) { return sched::compute_at(g, "Y", "C.j", e); },
      "cannot compute_at 'Y' at 'C.j': no block under 'C.j' reads 'Y'");
  // A producer sharing its loops with its consumer has no nest of its own to move.
  PrimFunc l = linear_relu(2, 3, 4);
  check_refused(
      l, [](PrimFunc& g, std::string* e) { return sched::compute_at(g, "out_acc", "j", e); },
      "cannot compute_at 'out_acc' at 'j': it is already inside 'j'");
}

TEST_CASE("reverse_compute_at: mm_relu's relu moves under the matmul's j loop") {
  PrimFunc f = mm_relu(64);
  PrimFunc g = f;
  std::string error;
  REQUIRE(ok(sched::reverse_compute_at(g, "C", "Y.j", &error), error));
  CHECK(outline(g) ==
        "for i(64) { for j(64) { for k(64) { Y(vi=i, vj=j, vk:k) init } C(vi=i, vj=j) } }");
  check_same_result(f, g);
  check_golden(g, "reverse_compute_at_mm_relu");
}

TEST_CASE("reverse_compute_at: a softmax row, stage by stage after its max") {
  PrimFunc f = softmax(5, 12);
  PrimFunc g = f;
  std::string error;
  // e reads only mx[vi]: its j axis keeps its whole extent under each i.
  REQUIRE(ok(sched::reverse_compute_at(g, "e", "mx.i", &error), error));
  REQUIRE(ok(sched::reverse_compute_at(g, "s", "mx.i", &error), error));
  REQUIRE(ok(sched::reverse_compute_at(g, "out", "mx.i", &error), error));
  CHECK(outline(g) ==
        "for i(5) { for j(12) { mx(vi=i, vj:j) init } for j(12) { e(vi=i, vj=j) } "
        "for j(12) { s(vi=i, vj:j) init } for j(12) { out(vi=i, vj=j) } }");
  check_same_result(f, g);
}

TEST_CASE("reverse_compute_at: refusals") {
  PrimFunc f = mm_relu(16);
  check_refused(
      f, [](PrimFunc& g, std::string* e) { return sched::reverse_compute_at(g, "C", "k", e); },
      "cannot reverse_compute_at 'C' at 'k': the reduction of 'Y' is not finished inside 'k'");
  check_refused(
      f, [](PrimFunc& g, std::string* e) { return sched::reverse_compute_at(g, "Y", "C.j", e); },
      "cannot reverse_compute_at 'Y' at 'C.j': it reads nothing written under 'C.j'");
  PrimFunc s = softmax(4, 4);
  // Under one iteration of s.j, s[vi] holds a partial sum: out must not read it there.
  check_refused(
      s, [](PrimFunc& g, std::string* e) { return sched::reverse_compute_at(g, "out", "s.j", e); },
      "cannot reverse_compute_at 'out' at 's.j': the reduction of 's' is not finished inside "
      "'s.j'");
}

// ---- compute_inline ------------------------------------------------------------------------

TEST_CASE("compute_inline: an elementwise producer disappears into its reader") {
  PrimFunc f = add_relu(16);
  PrimFunc g = f;
  std::string error;
  REQUIRE(ok(sched::compute_inline(g, "T", &error), error));
  CHECK(outline(g) == "for i(16) { for j(16) { C(vi=i, vj=j) } }");
  // C read T[vj, vi]: both indices substituted at once.
  CHECK(block_body(g, "C") == "C[vi, vj] = max((A[vj, vi] + B[vj, vi]), 0)");
  CHECK(g.find_buffer("T") == -1);
  CHECK(g.output == 2);
  check_same_result(f, g);
  check_golden(g, "compute_inline_add_relu");
}

TEST_CASE("compute_inline: softmax's exp goes into both of its readers") {
  PrimFunc f = softmax(6, 10);
  PrimFunc g = f;
  std::string error;
  REQUIRE(ok(sched::compute_inline(g, "e", &error), error));
  CHECK(block_body(g, "s") == "s[vi] = 0; s[vi] = (s[vi] + exp((x[vi, vj] - mx[vi])))");
  CHECK(block_body(g, "out") == "out[vi, vj] = (exp((x[vi, vj] - mx[vi])) / s[vi])");
  check_same_result(f, g);
}

TEST_CASE("compute_inline: refusals") {
  PrimFunc f = mm_relu(8);
  check_refused(
      f, [](PrimFunc& g, std::string* e) { return sched::compute_inline(g, "Y", e); },
      "cannot compute_inline 'Y': it is a reduction");
  check_refused(
      f, [](PrimFunc& g, std::string* e) { return sched::compute_inline(g, "C", e); },
      "cannot compute_inline 'C': it writes the output 'C'");
  check_refused(
      f, [](PrimFunc& g, std::string* e) { return sched::compute_inline(g, "nope", e); },
      "no block 'nope' (blocks: Y, C)");
  PrimFunc s = add_relu(8);
  std::string error;
  REQUIRE(ok(sched::split(s, "T.i", 3, {}, &error), error));
  check_refused(
      s, [](PrimFunc& g, std::string* e) { return sched::compute_inline(g, "T", e); },
      "cannot compute_inline 'T': it has a predicate (inline it before splitting its loops)");
}

// ---- cache_read / cache_write / compact_buffers ----------------------------------------------

TEST_CASE("cache_read: a staging copy read by one block only") {
  PrimFunc f = mm_relu(16);
  PrimFunc g = f;
  std::string error;
  REQUIRE(ok(sched::cache_read(g, "C", "Y", tir::Scope::Local, &error), error));
  CHECK(outline(g) ==
        "for i(16) { for j(16) { for k(16) { Y(vi=i, vj=j, vk:k) init } } } "
        "for ax0(16) { for ax1(16) { Y_local(v0=ax0, v1=ax1) } } "
        "for i(16) { for j(16) { C(vi=i, vj=j) } }");
  CHECK(block_body(g, "Y_local") == "Y_local[v0, v1] = Y[v0, v1]");
  CHECK(block_body(g, "C") == "C[vi, vj] = max(Y_local[vi, vj], 0)");
  CHECK(g.buffers[g.find_buffer("Y_local")].scope == tir::Scope::Local);
  check_same_result(f, g);
}

TEST_CASE("cache_write: the block accumulates in a copy written back after its nest") {
  PrimFunc f = matmul(16);
  PrimFunc g = f;
  std::string error;
  REQUIRE(ok(sched::cache_write(g, "Y", tir::Scope::Shared, &error), error));
  CHECK(outline(g) ==
        "for i(16) { for j(16) { for k(16) { Y(vi=i, vj=j, vk:k) init } } } "
        "for ax0(16) { for ax1(16) { Y_writeback(v0=ax0, v1=ax1) } }");
  CHECK(block_body(g, "Y") ==
        "Y_shared[vi, vj] = 0; Y_shared[vi, vj] = (Y_shared[vi, vj] + (A[vi, vk] * B[vk, vj]))");
  CHECK(block_body(g, "Y_writeback") == "Y[v0, v1] = Y_shared[v0, v1]");
  check_same_result(f, g);
}

TEST_CASE("cache_read + compute_at on matmul 128: B packed into a [128, 32] panel per j_0") {
  PrimFunc f = matmul(128);
  PrimFunc g = f;
  std::string error;
  REQUIRE(ok(sched::tile(g, "i", "j", 4, 32, &error), error));
  REQUIRE(ok(sched::cache_read(g, "Y", "B", tir::Scope::Local, &error), error));
  REQUIRE(ok(sched::compute_at(g, "B_local", "j_0", &error), error));
  CHECK(outline(g) ==
        "for i_0(32) { for j_0(4) { alloc B_local[128, 32] { "
        "for ax0(128) { for ax1(32) { B_local(v0=ax0, v1=((j_0 * 32) + ax1)) } } "
        "for i_1(4) { for j_1(32) { for k(128) { Y(vi=((i_0 * 4) + i_1), vj=((j_0 * 32) + j_1), "
        "vk:k) init } } } } } }");
  CHECK(block_body(g, "B_local") == "B_local[v0, (v1 - (j_0 * 32))] = B[v0, v1]");
  CHECK(block_body(g, "Y") ==
        "Y[vi, vj] = 0; Y[vi, vj] = (Y[vi, vj] + (A[vi, vk] * B_local[vk, (vj - (j_0 * 32))]))");
  check_same_result(f, g);
  check_golden(g, "pack_b");
}

TEST_CASE("cache_write + reverse_compute_at on matmul 128: a [4, 32] accumulator per tile") {
  PrimFunc f = matmul(128);
  PrimFunc g = f;
  std::string error;
  REQUIRE(ok(sched::tile(g, "i", "j", 4, 32, &error), error));
  REQUIRE(ok(sched::cache_write(g, "Y", tir::Scope::Local, &error), error));
  REQUIRE(ok(sched::reverse_compute_at(g, "Y_writeback", "j_0", &error), error));
  CHECK(outline(g) ==
        "for i_0(32) { for j_0(4) { alloc Y_local[4, 32] { "
        "for i_1(4) { for j_1(32) { for k(128) { Y(vi=((i_0 * 4) + i_1), vj=((j_0 * 32) + j_1), "
        "vk:k) init } } } "
        "for ax0(4) { for ax1(32) { Y_writeback(v0=((i_0 * 4) + ax0), v1=((j_0 * 32) + ax1)) } } } "
        "} }");
  CHECK(block_body(g, "Y_writeback") == "Y[v0, v1] = Y_local[(v0 - (i_0 * 4)), (v1 - (j_0 * 32))]");
  check_same_result(f, g);
  check_golden(g, "accumulate_y");
}

TEST_CASE("packing and a register accumulator together on matmul 128") {
  PrimFunc f = matmul(128);
  PrimFunc g = f;
  std::string error;
  REQUIRE(ok(sched::tile(g, "i", "j", 4, 32, &error), error));
  REQUIRE(ok(sched::cache_read(g, "Y", "B", tir::Scope::Local, &error), error));
  REQUIRE(ok(sched::cache_write(g, "Y", tir::Scope::Local, &error), error));
  REQUIRE(ok(sched::compute_at(g, "B_local", "j_0", &error), error));
  REQUIRE(ok(sched::reverse_compute_at(g, "Y_writeback", "j_0", &error), error));
  REQUIRE(ok(sched::decompose_reduction(g, "Y", "i_1", &error), error));
  CHECK(outline(g) ==
        "for i_0(32) { for j_0(4) { alloc Y_local[4, 32] { alloc B_local[128, 32] { "
        "for ax0(128) { for ax1(32) { B_local(v0=ax0, v1=((j_0 * 32) + ax1)) } } "
        "for i_1(4) { for j_1(32) { Y_init(vi=((i_0 * 4) + i_1), vj=((j_0 * 32) + j_1)) } } "
        "for i_1(4) { for j_1(32) { for k(128) { Y(vi=((i_0 * 4) + i_1), vj=((j_0 * 32) + j_1), "
        "vk:k) } } } } "
        "for ax0(4) { for ax1(32) { Y_writeback(v0=((i_0 * 4) + ax0), v1=((j_0 * 32) + ax1)) } } } "
        "} }");
  check_same_result(f, g);
  check_golden(g, "pack_and_accumulate");
}

TEST_CASE("cache_read / cache_write: refusals") {
  PrimFunc f = mm_relu(8);
  check_refused(
      f,
      [](PrimFunc& g, std::string* e) {
        return sched::cache_read(g, "C", "A", tir::Scope::Local, e);
      },
      "cannot cache_read 'A' for 'C': block 'C' does not read it");
  check_refused(
      f,
      [](PrimFunc& g, std::string* e) {
        return sched::cache_read(g, "Y", "Y", tir::Scope::Local, e);
      },
      "cannot cache_read 'Y' for 'Y': block 'Y' also writes it");
  check_refused(
      f,
      [](PrimFunc& g, std::string* e) {
        return sched::cache_read(g, "Y", "Q", tir::Scope::Local, e);
      },
      "no buffer 'Q' (buffers: A, B, Y, C)");
  PrimFunc l = linear_relu(2, 3, 4);
  check_refused(
      l,
      [](PrimFunc& g, std::string* e) {
        return sched::cache_read(g, "out", "out_acc", tir::Scope::Local, e);
      },
      "cannot cache_read 'out_acc' for 'out': block 'out_acc' writes it inside the same loop nest");
  check_refused(
      l,
      [](PrimFunc& g, std::string* e) {
        return sched::cache_write(g, "out_acc", tir::Scope::Local, e);
      },
      "cannot cache_write 'out_acc': block 'out' reads 'out_acc' inside the same loop nest");
}

TEST_CASE("compact_buffers: leaves global and unenclosed buffers alone") {
  PrimFunc g = mm_relu(8);
  std::string error;
  REQUIRE(ok(sched::cache_read(g, "C", "Y", tir::Scope::Local, &error), error));
  std::string before = outline(g);
  CHECK(sched::compact_buffers(g) == 0);
  CHECK(outline(g) == before);
}

TEST_CASE("set_scope: softmax's intermediates shrink to one row once the rows are fused") {
  PrimFunc f = softmax(8, 16);
  PrimFunc g = rows_fused(f);
  std::string error;
  for (const char* b : {"e", "mx", "s"})
    REQUIRE(ok(sched::set_scope(g, b, tir::Scope::Local, &error), error));
  // Each is now local, allocated inside the row loop with one row's shape.
  for (const char* b : {"e", "mx", "s"}) {
    CAPTURE(std::string(b));
    const tir::Buffer& buf = g.buffers[size_t(g.find_buffer(b))];
    CHECK(buf.scope == tir::Scope::Local);
    CHECK(buf.shape.front() == 1);
  }
  CHECK(g.buffers[size_t(g.find_buffer("e"))].shape == std::vector<int64_t>{1, 16});
  std::string script = tir::print_script(g);
  CHECK(script.find("for i in range(8):\n        s = T.alloc_buffer((1,), \"float32\", scope=\"local\")") !=
        std::string::npos);
  check_same_result(f, g);
  // Refusals: inputs and the result stay where the caller put them; a compacted buffer keeps
  // its scope; no such buffer; the same scope.
  check_refused(
      g, [](PrimFunc& h, std::string* e) { return sched::set_scope(h, "x", tir::Scope::Local, e); },
      "cannot set_scope 'x': it is an input, which lives where the caller put it");
  check_refused(
      g, [](PrimFunc& h, std::string* e) { return sched::set_scope(h, "out", tir::Scope::Local, e); },
      "cannot set_scope 'out': it is the kernel's result, which lives where the caller put it");
  check_refused(
      g, [](PrimFunc& h, std::string* e) { return sched::set_scope(h, "e", tir::Scope::Shared, e); },
      "cannot set_scope 'e': it is already compacted into a loop (its scope is fixed there)");
  check_refused(
      f, [](PrimFunc& h, std::string* e) { return sched::set_scope(h, "q", tir::Scope::Local, e); },
      "no buffer 'q' (buffers: x, mx, e, s, out)");
  // Not under one loop (the nests as lowered): local, but the whole tensor, still right.
  PrimFunc h = f;
  REQUIRE(ok(sched::set_scope(h, "e", tir::Scope::Local, &error), error));
  CHECK(h.buffers[size_t(h.find_buffer("e"))].shape == std::vector<int64_t>{8, 16});
  check_refused(
      h, [](PrimFunc& k, std::string* e) { return sched::set_scope(k, "e", tir::Scope::Local, e); },
      "cannot set_scope 'e': it is in that scope already");
  check_same_result(f, h);
}

// ---- decompose_reduction / rfactor -----------------------------------------------------------

TEST_CASE("decompose_reduction: the init gets its own block before the reduce loop") {
  PrimFunc f = matmul(32);
  PrimFunc g = f;
  std::string error;
  REQUIRE(ok(sched::decompose_reduction(g, "Y", "k", &error), error));
  CHECK(outline(g) ==
        "for i(32) { for j(32) { Y_init(vi=i, vj=j) for k(32) { Y(vi=i, vj=j, vk:k) } } }");
  CHECK(block_body(g, "Y_init") == "Y[vi, vj] = 0");
  check_same_result(f, g);
  check_golden(g, "decompose_matmul");

  PrimFunc h = f;
  REQUIRE(ok(sched::decompose_reduction(h, "Y", "i", &error), error));
  CHECK(outline(h) ==
        "for i(32) { for j(32) { Y_init(vi=i, vj=j) } } for i(32) { for j(32) { for k(32) { "
        "Y(vi=i, vj=j, vk:k) } } }");
  check_same_result(f, h);
}

TEST_CASE("decompose_reduction: refusals") {
  PrimFunc f = mm_relu(8);
  check_refused(
      f, [](PrimFunc& g, std::string* e) { return sched::decompose_reduction(g, "C", "C.j", e); },
      "cannot decompose_reduction 'C' at 'C.j': it has no init");
  check_refused(
      f, [](PrimFunc& g, std::string* e) { return sched::decompose_reduction(g, "Y", "C.j", e); },
      "cannot decompose_reduction 'Y' at 'C.j': 'C.j' does not enclose it");
  PrimFunc m = matmul(8);
  std::string error;
  REQUIRE(ok(sched::reorder(m, {"k", "i"}, &error), error));
  check_refused(
      m, [](PrimFunc& g, std::string* e) { return sched::decompose_reduction(g, "Y", "j", e); },
      "cannot decompose_reduction 'Y' at 'j': the reduce loop 'k' lies above it");
}

TEST_CASE("rfactor: linear_relu's reduction split, factored and vectorized") {
  PrimFunc f = linear_relu(2, 24, 72);
  PrimFunc g = f;
  std::string error;
  REQUIRE(ok(sched::split(g, "r", 16, {}, &error), error));
  REQUIRE(ok(sched::rfactor(g, "out_acc", "r_1", &error), error));
  CHECK(outline(g) ==
        "for i(2) { for j(24) { for r_0(5) { for r_1(16) { "
        "out_acc_rf(vi=i, vj=j, vr_1=r_1, vr_0:r_0) if (((r_0 * 16) + r_1) < 72) init } } "
        "for rf(16) { out_acc(vi=i, vj=j, vr_1:rf) init } out(vi=i, vj=j) } }");
  CHECK(block_body(g, "out_acc_rf") ==
        "out_acc_rf[vi, vj, vr_1] = 0; out_acc_rf[vi, vj, vr_1] = (out_acc_rf[vi, vj, vr_1] + "
        "(x[vi, ((vr_0 * 16) + vr_1)] * w[vj, ((vr_0 * 16) + vr_1)]))");
  CHECK(block_body(g, "out_acc") ==
        "out_acc[vi, vj] = 0; out_acc[vi, vj] = (out_acc[vi, vj] + out_acc_rf[vi, vj, vr_1])");
  check_same_result(f, g);
  REQUIRE(ok(sched::vectorize(g, "r_1", &error), error));
  check_same_result(f, g);
  check_golden(g, "rfactor_linear_relu");
}

TEST_CASE("rfactor: a whole reduce loop, and a max reduction") {
  PrimFunc f = matmul(16);
  PrimFunc g = f;
  std::string error;
  REQUIRE(ok(sched::rfactor(g, "Y", "k", &error), error));
  CHECK(outline(g) ==
        "for i(16) { for j(16) { for k(16) { Y_rf(vi=i, vj=j, vk_rf=k, vk:0) init } } } "
        "for i(16) { for j(16) { for rf(16) { Y(vi=i, vj=j, vk_rf:rf) init } } }");
  check_same_result(f, g);

  PrimFunc s = softmax(4, 32);
  PrimFunc t = s;
  REQUIRE(ok(sched::split(t, "mx.j", 8, {}, &error), error));
  REQUIRE(ok(sched::rfactor(t, "mx", "j_0", &error), error));
  check_same_result(s, t);
  CHECK(block_body(t, "mx") == "mx[vi] = -inf; mx[vi] = max(mx[vi], mx_rf[vi, vj_0])");
}

TEST_CASE("rfactor: refusals") {
  PrimFunc f = mm_relu(8);
  check_refused(
      f, [](PrimFunc& g, std::string* e) { return sched::rfactor(g, "Y", "Y.j", e); },
      "cannot rfactor 'Y' at 'Y.j': 'Y.j' binds the spatial axis 'vj'; rfactor needs a reduce "
      "loop");
  check_refused(
      f, [](PrimFunc& g, std::string* e) { return sched::rfactor(g, "C", "C.j", e); },
      "cannot rfactor 'C' at 'C.j': it is not a reduction of the form X = X op value");
  check_refused(
      f, [](PrimFunc& g, std::string* e) { return sched::rfactor(g, "Y", "C.j", e); },
      "cannot rfactor 'Y' at 'C.j': 'C.j' does not enclose it");
}

// ---- end to end: parsed kernels, lowered, scheduled as text --------------------------------

namespace {

using descent::testing::lower_kernel_text;

const char* kMmRelu = R"(kernel mm_relu(A: f32[128, 128], B: f32[128, 128]) -> f32[128, 128] {
  Y[i, j] = sum(k) A[i, k] * B[k, j]
  C[i, j] = max(Y[i, j], 0.0)
  return C
}
)";

const char* kLinearRelu = R"(kernel linear_relu(x: f32[n, k], w: f32[m, k]) -> f32[n, m] {
  out[i, j] = max(sum(r) x[i, r] * w[j, r], 0.0)
  return out
}
)";

const char* kSoftmax = R"(kernel softmax(x: f32[n, m]) -> f32[n, m] {
  mx[i] = max(j) x[i, j]
  e[i, j] = exp(x[i, j] - mx[i])
  s[i] = sum(j) e[i, j]
  out[i, j] = e[i, j] / s[i]
  return out
}
)";

// Applies a schedule text and checks the result against the original, numerically.
PrimFunc scheduled(const PrimFunc& f, const std::string& text) {
  Schedule sch(f);
  std::string error;
  REQUIRE_MESSAGE(sch.apply_text(text, &error), error);
  check_same_result(f, sch.func());
  return sch.func();
}

}  // namespace

TEST_CASE("text: the graph's linear+relu fusion, reverse_compute_at C Y.j on lowered mm_relu") {
  PrimFunc f = lower_kernel_text(kMmRelu, {{128, 128}, {128, 128}});
  PrimFunc g = scheduled(f, "reverse_compute_at C Y.j");
  CHECK(outline(g) ==
        "for i(128) { for j(128) { for k(128) { Y(vi=i, vj=j, vk:k) init } C(vi=i, vj=j) } }");
}

TEST_CASE("text: vectorizing linear's reduction through rfactor") {
  PrimFunc f = lower_kernel_text(kLinearRelu, {{1, 3072}, {200, 3072}});
  PrimFunc g = scheduled(f, "split r 16\nrfactor out_acc r_1\nvectorize r_1\nparallel j");
  CHECK(outline(g) ==
        "for i(1) { for j(200) { for r_0(192) { for r_1(16) { "
        "out_acc_rf(vi=i, vj=j, vr_1=r_1, vr_0:r_0) init } } "
        "for rf(16) { out_acc(vi=i, vj=j, vr_1:rf) init } out(vi=i, vj=j) } }");
  // Without the rfactor the same vectorize is refused with the way out.
  Schedule plain(f);
  std::string error;
  CHECK_FALSE(plain.apply_text("split r 16\nvectorize r_1", &error));
  CHECK(error.find("rfactor out_acc r_1") != std::string::npos);
}

TEST_CASE("text: a whole softmax row fused, its exp inlined, with undo") {
  PrimFunc f = lower_kernel_text(kSoftmax, {{6, 40}});
  Schedule sch(f);
  std::string error;
  REQUIRE_MESSAGE(sch.apply_text("compute_inline e\n"
                                 "compute_at s out.i\n"
                                 "compute_at mx s.i\n"
                                 "decompose_reduction s s.j\n",
                                 &error),
                  error);
  check_same_result(f, sch.func());
  CHECK(outline(sch.func()) ==
        "for i(6) { for j(40) { mx(vi=i, vj:j) init } s_init(vi=i) for j(40) { s(vi=i, vj:j) } "
        "for j(40) { out(vi=i, vj=j) } }");
  REQUIRE(sch.undo());
  REQUIRE(sch.undo());
  CHECK(outline(sch.func()) ==
        "for i(6) { for j(40) { mx(vi=i, vj:j) init } } "
        "for i(6) { for j(40) { s(vi=i, vj:j) init } for j(40) { out(vi=i, vj=j) } }");
  // The trace replays to the same function.
  Schedule again(f);
  REQUIRE_MESSAGE(again.apply_text(sch.trace(), &error), error);
  CHECK(tir::print_script(again.func()) == tir::print_script(sch.func()));
}

TEST_CASE("text: refusals come back with the line") {
  PrimFunc f = lower_kernel_text(kMmRelu, {{128, 128}, {128, 128}});
  Schedule sch(f);
  std::string error;
  CHECK_FALSE(sch.apply_text("split k 32\nreverse_compute_at C k_1", &error));
  CHECK(error ==
        "line 2: cannot reverse_compute_at 'C' at 'k_1': the reduction of 'Y' is not finished "
        "inside 'k_1'");
  CHECK(sch.num_applied() == 1);
}

// ---- every request on every block and loop --------------------------------------------------

TEST_CASE("every block x every loop: refused and unchanged, or the same numbers") {
  // Whatever a student types, a primitive either explains why not (leaving the function as
  // it was) or produces a function that verifies and computes the same thing.
  std::vector<PrimFunc> funcs = {mm_relu(6), softmax(3, 5), linear_relu(2, 3, 7), add_relu(5)};
  {
    PrimFunc t = matmul(8);
    std::string error;
    REQUIRE(ok(sched::tile(t, "i", "j", 4, 3, &error), error));
    REQUIRE(ok(sched::cache_read(t, "Y", "A", tir::Scope::Shared, &error), error));
    REQUIRE(ok(sched::cache_write(t, "Y", tir::Scope::Local, &error), error));
    funcs.push_back(std::move(t));
  }
  int applied = 0, refused = 0;
  for (const PrimFunc& f : funcs) {
    std::vector<std::string> blocks = sched::block_names(f), loops = sched::loop_names(f);
    for (const std::string& b : blocks) {
      std::vector<std::function<bool(PrimFunc&, std::string*)>> steps = {
          [&](PrimFunc& g, std::string* e) { return sched::compute_inline(g, b, e); },
          [&](PrimFunc& g, std::string* e) {
            return sched::cache_write(g, b, tir::Scope::Local, e);
          },
      };
      for (const std::string& l : loops) {
        steps.push_back(
            [&, l](PrimFunc& g, std::string* e) { return sched::compute_at(g, b, l, e); });
        steps.push_back(
            [&, l](PrimFunc& g, std::string* e) { return sched::reverse_compute_at(g, b, l, e); });
        steps.push_back(
            [&, l](PrimFunc& g, std::string* e) { return sched::decompose_reduction(g, b, l, e); });
        steps.push_back([&, l](PrimFunc& g, std::string* e) { return sched::rfactor(g, b, l, e); });
      }
      for (const tir::Buffer& buffer : f.buffers)
        steps.push_back([&, name = buffer.name](PrimFunc& g, std::string* e) {
          return sched::cache_read(g, b, name, tir::Scope::Local, e);
        });
      for (auto& step : steps) {
        PrimFunc g = f;
        std::string error;
        if (step(g, &error)) {
          ++applied;
          check_same_result(f, g);
        } else {
          ++refused;
          INFO(error);
          CHECK(error.rfind("internal error", 0) != 0);
          CHECK(outline(g) == outline(f));
        }
      }
    }
  }
  CHECK(applied > 20);
  CHECK(refused > 100);
}
