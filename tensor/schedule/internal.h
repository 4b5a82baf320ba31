// What the schedule primitives share, and nothing outside tensor/ should need: walking and
// editing the statement tree, the copy-verify-commit discipline, what a block reads and
// writes, and the region analysis behind compute_at and compact_buffers.
//
// PRIVATE to tensor/ (and to tests/tensor/schedule_loops_test.cpp, which tests the tree
// helpers directly). Front ends use tensor/schedule.h. One helper stays public there because
// the OpenCL backend uses it: substitute_loop_var.
//
// Where things live (tensor/schedule/):
//   helpers.cpp         tree walkers, statement surgery, expression helpers, commit
//   names.cpp           find_loop, loop_names, block_names
//   regions.cpp         block facts (reads/writes) and regions (Bound, region_under, ...)
//   loops.cpp           split, tile, reorder, fuse, fission
//   for_kinds.cpp       unroll, vectorize, parallel, bind
//   compute_at.cpp      compute_at, reverse_compute_at
//   compute_inline.cpp  compute_inline
//   cache.cpp           cache_read, cache_write, set_scope, compact_buffers
//   reduction.cpp       decompose_reduction, rfactor
//   online.cpp          online_softmax and merge (flash attention's steps)
//   layout.cpp          transform_layout, hoist_layout_prologues
//   blockize.cpp        blockize, and the helpers for blocks over tiles (nested blocks)
//   tensorize.cpp       tensorize and the tensor intrinsics
//   text.cpp            the text syntax (apply_step) and the Schedule history
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "lang/text.h"
#include "tensor/schedule.h"
#include "tensor/tir.h"

namespace descent::tensor::sched {
// The loop-nest IR's names, used unqualified by every primitive.
using tir::Expr;
using tir::ExprKind;
using tir::ExprPtr;
using tir::ForKind;
using tir::IterKind;
using tir::IterVar;
using tir::Op;
using tir::PrimFunc;
using tir::Stmt;
using tir::StmtKind;
using tir::StmtPtr;

// ---- Errors and the copy-verify-commit discipline (helpers.cpp) ---------------------------
// Sets *error (when given) and returns false, so a refusal is one line: return fail(...).
bool fail(std::string* error, std::string msg);
// Every primitive transforms a deep copy and commits it only when tir::verify accepts it: a
// refused step leaves f exactly as it was, and our own mistakes become an "internal error"
// message instead of a wrong answer later. `fn` fills *error and returns false to refuse.
bool commit(tir::PrimFunc& f, std::string* error, const std::function<bool(tir::PrimFunc&)>& fn);
// "it is already parallel" / "it is already bound to group.x"
std::string already(const tir::Stmt* loop);

// ---- The statement tree (helpers.cpp) ------------------------------------------------------
// The owning pointers directly inside s, in program order (init runs before body).
std::vector<tir::StmtPtr*> child_slots(tir::Stmt* s);
// Pre-order walk; `fn` returns false to stop descending below a node.
void walk(tir::Stmt* s, const std::function<bool(tir::Stmt*)>& fn);
// The loops enclosing `block` (outermost first; any statement works, a loop's own loop is
// not included); empty when it has none or is absent.
std::vector<tir::Stmt*> loops_above(tir::PrimFunc& f, const tir::Stmt* block);
// The statement whose body/init/stmts holds `s`; null when s is f.body or absent.
tir::Stmt* parent_of(tir::PrimFunc& f, const tir::Stmt* s);
// The owning pointer of `s` (f.body, a parent's body or init, or a Seq element); null if
// absent. Assigning through it replaces the statement in place.
tir::StmtPtr* slot_of(tir::PrimFunc& f, const tir::Stmt* s);
// Puts `with` where `s` was and returns `s` (null when s is absent; then `with` is dropped).
tir::StmtPtr replace_stmt(tir::PrimFunc& f, const tir::Stmt* s, tir::StmtPtr with);
// The single statement a For/Block/If/Allocate holds, looking through one-element Seqs;
// null when the body is a Seq of several statements (or s has no body).
tir::Stmt* only_child(tir::Stmt* s);
// True when each loop's only_child is the next loop (outermost first); an empty or single
// chain is perfect.
bool is_perfect_chain(const std::vector<tir::Stmt*>& loops);
// Every Block / every For inside `s` (s included), in program order.
std::vector<tir::Stmt*> blocks_under(tir::Stmt* s);
std::vector<tir::Stmt*> loops_under(tir::Stmt* s);
// True when `inner` is `outer` or lies inside it.
bool contains(const tir::Stmt* outer, const tir::Stmt* inner);
// `base` if no loop on the path through `at` (the loops above it, it, and those inside it)
// is named so, else base_1, base_2, ... `at` may be null: then all loops of f count.
std::string fresh_loop_name(tir::PrimFunc& f, const tir::Stmt* at, const std::string& base);

// ---- Blocks over tiles (blockize.cpp) -----------------------------------------------------
// True when some block under `s` (s included) holds another block: what blockize makes.
bool has_nested_block(const tir::Stmt* s);
// Removes an outer block (no init, no predicate), its variables replaced by their bindings
// in everything it held. False (and g unchanged) when `outer` is not such a block.
bool flatten_block(tir::PrimFunc& g, tir::Stmt* outer);

// ---- Statement surgery (helpers.cpp) -------------------------------------------------------
// Inserts `s` before (or after) `at`, in the Seq holding it or in a new two-statement Seq.
void insert_next_to(tir::PrimFunc& g, tir::Stmt* at, tir::StmtPtr s, bool after);
// Removes `s` from the Seq holding it (false when it is not in a Seq).
bool erase_stmt(tir::PrimFunc& g, tir::Stmt* s);
// The largest statement around `block` that holds no other block and sits in a Seq.
tir::Stmt* own_nest(tir::PrimFunc& g, tir::Stmt* block);
int block_index(const std::vector<tir::BlockSite>& sites, const tir::Stmt* b);
// `base`, or base_1, base_2, ... if a buffer / block of that name exists.
std::string unique_buffer_name(const tir::PrimFunc& g, const std::string& base);
std::string unique_block_name(tir::PrimFunc& g, const std::string& base);
// Every buffer name of g, for "no buffer 'X' (buffers: ...)" messages (cache.cpp).
std::vector<std::string> buffer_names(const tir::PrimFunc& g);
// A copy nest `for ax0, ax1, ...: block NAME: dst[v0, v1, ...] = src[...]` over `shape` (the
// destination's): what cache_read and cache_write start from, and with `perm` (new dimension
// d is old dimension perm[d]; empty: the same order) transform_layout's copy (cache.cpp).
tir::StmtPtr copy_nest(const std::string& name, int dst, int src, const std::vector<int64_t>& shape,
                       const std::vector<int>& perm = {});
// Finds block `name`; else false with "no block 'X' (blocks: ...)".
bool find_block_or_fail(tir::PrimFunc& g, const std::string& name, tir::Stmt** out,
                        std::string* error);

// ---- Expressions (helpers.cpp) -------------------------------------------------------------
// Calls fn on every owning pointer in e's tree, children first (fn may replace the node).
void rewrite_expr(tir::ExprPtr& e, const std::function<void(tir::ExprPtr&)>& fn);
void visit_expr(const tir::Expr& e, const std::function<void(const tir::Expr&)>& fn);
// Every root expression of a statement tree: Store indices and values, block predicates,
// If conditions (not bindings: they speak of loops, never of buffers).
void statement_exprs(tir::Stmt* s, const std::function<void(tir::ExprPtr&)>& fn);
// Substitutes several variables at once (simultaneously, unlike repeated tir::substitute).
tir::ExprPtr substitute_all(const tir::Expr& e,
                            const std::map<std::string, const tir::Expr*>& with);
tir::ExprPtr conjunction(std::vector<tir::ExprPtr> terms);  // a && b && ...; null when empty
// Splits a predicate into its &&-ed conditions (the form split leaves behind).
void conjuncts(const tir::Expr& e, std::vector<const tir::Expr*>* out);
bool uses_any(const tir::Expr& e, const std::set<std::string>& names);
// The conditions of `pred` that mention none of `dropped` (null when none is left).
tir::ExprPtr predicate_without(const tir::Expr* pred, const std::set<std::string>& dropped);

// ---- What a block reads and writes (regions.cpp) -------------------------------------------
void stores_in(tir::Stmt* s, std::vector<tir::Stmt*>* out);
std::vector<tir::Stmt*> stores_of(tir::Stmt* block);  // its init's and body's stores
bool block_reads(tir::Stmt* block, int buffer);
bool block_writes(tir::Stmt* block, int buffer);
std::set<int> buffers_read(tir::Stmt* block);
int written_buffer(tir::Stmt* block);  // the one buffer it writes, or -1 (none, or several)
std::string buffer_name(const tir::PrimFunc& f, int b);
const tir::IterVar* find_iter(const tir::Stmt* block, const std::string& name);
// Maps each index (distinct iteration variables of `block`) to the variable's position;
// false when an index is anything else.
bool indices_are_iters(const tir::Stmt* block, const std::vector<const tir::Expr*>& indices,
                       std::vector<int>* iter_of_dim);
std::vector<const tir::Expr*> raw(const std::vector<tir::ExprPtr>& xs);
// Recognises the update a reduction block performs: X[idx] = X[idx] op value (or value op
// X[idx]) with op one of + * max min. Returns the store and fills *op and *value; null when
// the body is anything else (reduction.cpp).
tir::Stmt* reduction_update(tir::Stmt* b, tir::Op* op, const tir::Expr** value);
// The innermost loop enclosing every block that reads or writes buffer x; null when there
// is none (a block outside every loop touches it, or none does) (cache.cpp).
tir::Stmt* innermost_loop_around(tir::PrimFunc& f, int x);
// "" when every block is inside the Allocate of each compacted buffer it uses (and within
// its box), else why not: the primitives that move blocks refuse such a move.
std::string allocation_escape(tir::PrimFunc& g);

// ---- Which iteration touches what (loops.cpp: fission and merge) --------------------------
// An access of a buffer, its indices in loop variables (block bindings inlined).
struct Touch {
  int buffer;
  bool write;
  std::vector<tir::ExprPtr> index;
  std::map<std::string, int64_t> inner;  // touches_under: the loops around it below the root
};
void touches_in_expr(const tir::Expr& e, const tir::Stmt* block, std::vector<Touch>* out);
// Every access under s, reads and writes.
void touches_under(tir::Stmt* s, std::vector<Touch>* out);
// Whether the accesses `all` (one buffer's) keep the iterations of `loop` apart: some
// dimension is indexed alike by all of them, by a function that differs for each value of
// the loop's variable, mentioning besides it only `fixed` variables (loops outside it); or,
// in blocks, some dimension where each iteration's accesses, over the loops inside it
// (Touch::inner), stay within a span no other iteration's reach (softmax's exponentials
// written as e[j_0 * 64 + j_1] and summed as e[j_0 * 64 + c_1]: iteration j_0 touches
// [64 j_0, 64 j_0 + 63] in both). Then what one iteration touches no other iteration
// touches: the loop may be split into nests (fission) or joined with a neighbour (merge)
// without reordering a write and a use.
bool separated_by(const std::vector<const Touch*>& all, const tir::Stmt& loop,
                  const std::set<std::string>& fixed);

// ---- Regions (regions.cpp) -----------------------------------------------------------------
// One index of an access as seen from one iteration of a loop L:
//   sum(coeff[v] * v for v in the loops at or above L) + [lo, hi]
// where [lo, hi] is what the loops inside L sweep.
struct Bound {
  std::map<std::string, int64_t> coeff;
  int64_t lo = 0, hi = 0;
  // The loops inside L reach every integer of [lo, hi] (j_1 does; 2 * j_1 does not). A
  // producer's box is what it writes only when this holds in every dimension.
  bool dense = true;
};

// How to read variables at one access: iteration variables through their bindings, loops
// at or above L as symbols, loops inside L as ranges.
struct AccessEnv {
  const tir::Stmt* block = nullptr;
  std::vector<const tir::Stmt*> outer;   // loops at or above L, outermost first
  std::map<std::string, int64_t> inner;  // loops inside L -> extent
};

bool bound_of(const tir::Expr& e, const AccessEnv& env, Bound* out, std::string* why,
              int depth = 0);

// A buffer's region under one iteration of a loop: one Bound per dimension.
struct Region {
  std::vector<Bound> dims;
  std::vector<const tir::Stmt*> outer;  // the loops at or above L (the symbols), outermost first
};

enum class Access { Read, Write, Both };

// The region of buffer `x` accessed (as `mode` says) by the blocks under `loop`.
bool region_under(tir::PrimFunc& g, tir::Stmt* loop, int x, Access mode, Region* out,
                  std::string* why);
// The symbolic start of a dimension, sum(coeff * v) + lo, in loop-nesting order.
tir::ExprPtr base_expr(const Bound& b, const std::vector<const tir::Stmt*>& outer);
// Rebuilds a detached block as a nest covering, per iteration variable, a region dimension
// (base + ax) or its whole extent (null).
tir::StmtPtr build_nest(tir::StmtPtr block, const std::vector<const Bound*>& dims,
                        const std::vector<const tir::Stmt*>& outer, std::set<std::string> taken);
// Names of the loops at or above `loop`: a new nest inside it must avoid them.
std::set<std::string> names_down_to(tir::PrimFunc& g, tir::Stmt* loop);

}  // namespace descent::tensor::sched
