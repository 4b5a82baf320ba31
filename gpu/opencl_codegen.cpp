// The OpenCL generator's statements (the hooks of OpenCLPrinter that print loops, stores,
// sequences and barriers) and the program around the kernels. The header
// (opencl_codegen.h) explains the mapping from loop nests to OpenCL; opencl_printer.h lists
// where each part lives.
//
// [SECTION] index: storage | kernels (bound loops, guards, barriers, vectors, unrolling) |
// the program.
//
// The generator works on the IR as written: block iteration variables are replaced by
// their bindings (as tir::print_c does), so the kernel reads as plain C with OpenCL's
// address spaces and work-item functions.
#include "gpu/opencl_codegen.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "gpu/opencl_printer.h"
#include "lang/text.h"
#include "tensor/schedule.h"

namespace descent::gpu {

using tir::Buffer;
using tir::Expr;
using tir::ExprKind;
using tir::ExprPtr;
using tir::ForKind;
using tir::IterKind;
using tir::Op;
using tir::PrimFunc;
using tir::ScalarType;
using tir::Scope;
using tir::Stmt;
using tir::StmtKind;
using tir::StmtPtr;

namespace {

bool fail(std::string* error, const std::string& text) {
  if (error) *error = text;
  return false;
}

// ---------------------------------------------------------------------------------------
// [SECTION] storage
// ---------------------------------------------------------------------------------------

// Where each Local/Shared buffer's Allocate sits: under a local.* loop or not.
void find_allocations(const Stmt* s, int local_depth, std::map<int, bool>* under_local) {
  if (!s) return;
  if (s->kind == StmtKind::Allocate) (*under_local)[s->buffer] = local_depth > 0;
  int d = local_depth;
  if (s->kind == StmtKind::For && s->for_kind == ForKind::Bound &&
      s->thread_tag.compare(0, 6, "local.") == 0)
    ++d;
  find_allocations(s->init.get(), d, under_local);
  find_allocations(s->body.get(), d, under_local);
  for (const auto& k : s->stmts) find_allocations(k.get(), d, under_local);
}

void find_written(const Stmt* s, std::set<int>* out) {
  if (!s) return;
  if (s->kind == StmtKind::Store) out->insert(s->buffer);
  find_written(s->init.get(), out);
  find_written(s->body.get(), out);
  for (const auto& k : s->stmts) find_written(k.get(), out);
}

bool has_bound(const Stmt* s) {
  if (!s) return false;
  if (s->kind == StmtKind::For && s->for_kind == ForKind::Bound) return true;
  if (has_bound(s->init.get()) || has_bound(s->body.get())) return true;
  for (const auto& k : s->stmts)
    if (has_bound(k.get())) return true;
  return false;
}

void buffers_used(const Expr* e, std::set<int>* out) {
  if (!e) return;
  if (e->kind == ExprKind::Load) out->insert(e->buffer);
  for (const auto& a : e->args) buffers_used(a.get(), out);
}

void buffers_used(const Stmt* s, std::set<int>* out) {
  if (!s) return;
  if (s->kind == StmtKind::Store || s->kind == StmtKind::Allocate) out->insert(s->buffer);
  for (const auto& i : s->indices) buffers_used(i.get(), out);
  buffers_used(s->value.get(), out);
  buffers_used(s->predicate.get(), out);
  for (const auto& it : s->iters) buffers_used(it.binding.get(), out);
  buffers_used(s->init.get(), out);
  buffers_used(s->body.get(), out);
  for (const auto& k : s->stmts) buffers_used(k.get(), out);
}

// Sequences and allocations form one list: an allocation only declares (a private array;
// __local ones are at kernel scope, __global scratch is a parameter), so the statements
// inside it and those around it are checked for barriers together.
void flatten(const Stmt* s, std::vector<const Stmt*>* out) {
  if (!s) return;
  if (s->kind == StmtKind::Seq) {
    for (const auto& k : s->stmts) flatten(k.get(), out);
  } else if (s->kind == StmtKind::Allocate) {
    out->push_back(s);
    flatten(s->body.get(), out);
  } else {
    out->push_back(s);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------
// [SECTION] kernels
// ---------------------------------------------------------------------------------------

std::string OpenCLPrinter::param(int buffer, bool input) const {
  return (input ? "__global const float* restrict " : "__global float* restrict ") +
         cname(f.buffers[size_t(buffer)].name);
}

std::string OpenCLPrinter::for_header(const Stmt* s) const {
  std::string v = cname(s->var);
  return "for (" + idx + " " + v + " = 0; " + v + " < " + std::to_string(s->extent) + "; ++" + v + ") {";
}

// A private array where the IR allocates it; nothing for __local arrays (declared at kernel
// scope) and __global scratch (a parameter).
std::string OpenCLPrinter::local_decl(int buffer) const {
  const Buffer& b = f.buffers[size_t(buffer)];
  std::string where = b.scope == Scope::Shared ? "shared in the IR, private here: allocated "
                                                 "inside a local.* loop, one per work-item"
                                               : "local: private to the work-item";
  if (int lanes = vec_use.lanes(buffer))
    return "float" + std::to_string(lanes) + " " + cname(b.name) + "[" +
           std::to_string(numel(b) / lanes) + "] = {0};  // " + where + "; only ever used " +
           std::to_string(lanes) + " lanes at a time";
  if (storage[size_t(buffer)] == Storage::Private)
    return "float " + cname(b.name) + "[" + std::to_string(numel(b)) + "] = {0};  // " + where;
  return "";
}

void OpenCLPrinter::line(int depth, const std::string& s) {
  if (quiet && s.compare(0, 2, "//") == 0) return;
  out << std::string(size_t(depth) * 2, ' ') << s << "\n";
}

bool OpenCLPrinter::err(const std::string& text) {
  if (error.empty()) error = text;
  return false;
}

Accesses OpenCLPrinter::accesses(const Stmt* s) const {
  return collect_accesses(s, f, storage, written, launch_locals, in_scope);
}

// Work-items of a group share this point of the program when some local dimension of the
// launch is not bound here: that is where barriers can (and must) go.
bool OpenCLPrinter::shared_point() const {
  for (const auto& t : launch_locals)
    if (!in_scope.count(t)) return true;
  return false;
}

bool OpenCLPrinter::barrier(int depth, bool global, const std::string& why) {
  if (!guarded.empty())
    return err("kernel '" + k->name + "' needs a barrier (" + why + ") inside loop '" +
               guarded.back() + "', which is bound to fewer work-items than the launch has: "
               "not every work-item would reach it");
  line(depth, std::string("barrier(CLK_LOCAL_MEM_FENCE") + (global ? " | CLK_GLOBAL_MEM_FENCE" : "") +
                  ");  // " + why);
  return true;
}

bool OpenCLPrinter::stmt(const Stmt* s, int depth) {
  if (!s) return true;
  solo = alone;
  alone = false;
  return CPrinter::stmt(s, depth);
}

bool OpenCLPrinter::kernel_body(const Stmt* top, int depth) {
  solo = true;
  return seq(top, depth);
}

// Statements in order, with a barrier wherever work-items share memory and a later
// statement depends on an earlier one's writes (or overwrites what it read).
bool OpenCLPrinter::seq(const Stmt* s, int depth) {
  bool whole = solo;  // alone in its scope: read before the statements below overwrite it
  std::vector<const Stmt*> items;
  flatten(s, &items);
  size_t real = 0;
  for (const Stmt* c : items) real += c->kind != StmtKind::Allocate;
  bool sync = shared_point();
  Accesses pending;
  for (const Stmt* c : items) {
    if (c->kind == StmtKind::Allocate) {
      std::string decl = local_decl(c->buffer);
      if (!decl.empty()) line(depth, decl);
      continue;
    }
    if (sync) {
      Accesses mine = accesses(c);
      bool global = false;
      if (conflict(pending, mine, storage, launch_locals, &global)) {
        if (!barrier(depth, global, "wait for the statements above")) return false;
        pending.clear();
      }
      for (auto& a : mine) pending.push_back(std::move(a));
    }
    alone = whole && real == 1;
    if (!stmt(c, depth)) return false;
  }
  return true;
}

bool OpenCLPrinter::loop(const Stmt* s, int depth) {
  bool whole = solo;
  std::string v = cname(s->var);
  std::string n = std::to_string(s->extent);
  if (s->for_kind == ForKind::Bound) {
    TagInfo t;
    if (!parse_tag(s->thread_tag, &t))
      return err("loop '" + s->var + "' is bound to unknown thread tag '" + s->thread_tag +
                 "' (expected group.x|y|z or local.x|y|z)");
    int64_t full = k->extent.at(s->thread_tag);
    bool added = !in_scope.count(s->thread_tag);
    in_scope.insert(s->thread_tag);
    // Alone in its scope, the loop's variable can be declared right there; otherwise
    // (a sibling nest may bind a loop of the same name) it gets a scope of its own.
    int in = whole ? depth : depth + 1;
    if (!whole) line(depth, "{");
    line(in, "const " + idx + " " + v + " = (" + idx + ")" + id_call(t) + ";  // " + s->var +
                 " in 0.." + n + ": " + s->thread_tag);
    bool ok;
    if (s->extent < full) {
      line(in, "if (" + v + " < " + n + ") {  // " + std::to_string(full) +
                   " work-items in this dimension for " + n + " iterations");
      guarded.push_back(s->var);
      ok = body(s->body.get(), in + 1);
      guarded.pop_back();
      line(in, "}");
    } else {
      ok = body(s->body.get(), in);
    }
    if (!whole) line(depth, "}");
    if (added) in_scope.erase(s->thread_tag);
    return ok;
  }
  if (s->for_kind == ForKind::Vectorized) {
    std::string why;
    if (vector_loop(s, depth, &why)) return error.empty();
    if (!error.empty()) return false;
    line(depth, "// vectorize " + s->var + ": " + why + "; a scalar loop");
  }
  if (s->for_kind == ForKind::Unrolled) {
    std::string why;
    if (unrolled(s, depth, &why)) return error.empty();
    if (!error.empty()) return false;
    line(depth, "// unroll " + s->var + ": " + why + "; left to the OpenCL compiler");
    line(depth, "#pragma unroll");
  }
  if (s->for_kind == ForKind::Parallel)
    line(depth, "// parallel " + s->var + ": serial inside one work-item (bind it to use the device)");
  line(depth, for_header(s));
  if (!body(s->body.get(), depth + 1)) return false;
  if (shared_point()) {
    // Loop-carried: the next iteration must not overwrite (or read) what this one's
    // other work-items are still using.
    Accesses carried = accesses(s->body.get());
    bool global = false;
    if (conflict(carried, carried, storage, launch_locals, &global) &&
        !barrier(depth + 1, global, "before the next iteration reuses the memory"))
      return false;
  }
  line(depth, "}");
  return true;
}

// An unrolled loop as straight-line code: the body once per iteration with the loop
// variable replaced by its value, so every index into a private array is a constant and
// the array can live in registers whatever the OpenCL compiler's unroller decides. False
// with *why when the loop is left to `#pragma unroll`: too long, or it needs barriers
// between iterations, or its body declares variables (which the copies would repeat).
bool OpenCLPrinter::unrolled(const Stmt* s, int depth, std::string* why) {
  constexpr int64_t kMaxCopies = 32;
  if (s->extent > kMaxCopies) {
    *why = std::to_string(s->extent) + " iterations are more than " + std::to_string(kMaxCopies) +
           " copies of the body";
    return false;
  }
  bool declares = false;
  std::function<void(const Stmt*)> visit = [&](const Stmt* x) {
    if (!x) return;
    if (x->kind == StmtKind::Allocate || x->kind == StmtKind::Barrier ||
        (x->kind == StmtKind::For && x->for_kind == ForKind::Bound))
      declares = true;
    visit(x->init.get());
    visit(x->body.get());
    for (const auto& k : x->stmts) visit(k.get());
  };
  visit(s->body.get());
  if (declares) {
    *why = "its body allocates, binds or synchronises";
    return false;
  }
  if (shared_point()) {
    Accesses carried = accesses(s->body.get());
    bool global = false;
    if (conflict(carried, carried, storage, launch_locals, &global)) {
      *why = "its iterations need barriers between them";
      return false;
    }
  }
  line(depth, "// unrolled " + s->var + ": the body for " + s->var + " = 0.." +
                  std::to_string(s->extent - 1));
  bool was_quiet = quiet;
  bool ok = true;
  for (int64_t v = 0; v < s->extent && ok; ++v) {
    StmtPtr copy = tir::clone(*s->body);
    tensor::sched::substitute_loop_var(copy.get(), s->var, *tir::int_imm(v));
    ok = stmt(copy.get(), depth);
    quiet = true;
  }
  quiet = was_quiet;
  return ok;
}

// The guard that makes a store to visible memory happen once: work-item 0 of every
// dimension of the launch that is not bound around it.
std::string OpenCLPrinter::store_prefix(int buffer) const {
  if (storage[size_t(buffer)] == Storage::Private) return "";
  std::string cond;
  for (const auto& t : launch_tags) {
    if (in_scope.count(t)) continue;
    TagInfo info;
    parse_tag(t, &info);
    cond += (cond.empty() ? "" : " && ") + id_call(info) + " == 0";
  }
  return cond.empty() ? "" : "if (" + cond + ") ";
}

// A vectorized loop whose body is one store (in a block, possibly with an init) with
// accesses contiguous in the loop variable: one floatN statement. False with *why when it
// does not qualify (the caller emits a scalar loop).
bool OpenCLPrinter::vector_loop(const Stmt* s, int depth, std::string* why) {
  int w = int(s->extent);
  if (w != 2 && w != 4 && w != 8 && w != 16) {
    *why = std::to_string(s->extent) + " lanes is not an OpenCL vector width (2, 4, 8, 16)";
    return false;
  }
  const Stmt* body = s->body.get();
  while (body && body->kind == StmtKind::Seq && body->stmts.size() == 1) body = body->stmts[0].get();
  StmtPtr init, main;
  std::string init_cond;
  ExprPtr pred;
  if (body && body->kind == StmtKind::Block) {
    if (body->init) {
      init = tir::clone(*body->init);
      tir::inline_bindings(init.get(), *body);
      init_cond = init_condition(body);
      for (const auto& it : body->iters)
        if (it.kind == IterKind::Reduce && it.binding && tir::uses_var(*it.binding, s->var)) {
          *why = "the lanes carry a reduction";
          return false;
        }
    }
    if (body->predicate) pred = tir::inline_bindings(*body->predicate, *body);
    main = body->body ? tir::clone(*body->body) : nullptr;
    if (main) tir::inline_bindings(main.get(), *body);
  } else if (body) {
    main = tir::clone(*body);
  }
  auto single = [](StmtPtr& p) -> const Stmt* {
    const Stmt* x = p.get();
    while (x && x->kind == StmtKind::Seq && x->stmts.size() == 1) x = x->stmts[0].get();
    return x && x->kind == StmtKind::Store ? x : nullptr;
  };
  const Stmt* st = single(main);
  const Stmt* ist = init ? single(init) : nullptr;
  if (!st || (init && !ist)) {
    *why = "its body is not a single store";
    return false;
  }
  if (pred && tir::uses_var(*pred, s->var)) {
    *why = "its predicate depends on the lane";
    return false;
  }
  for (const Stmt* x : {st, ist}) {
    if (!x) continue;
    if (!vector_store_ok(*x, s->var, why)) return false;
  }
  VecCtx vc{s->var, w};
  std::string vt = "float" + std::to_string(w);
  // The lane variable never appears in the text (every use of it is a lane of a vector),
  // so it is not declared.
  line(depth, "// vectorized " + s->var + ": " + std::to_string(w) + " lanes as one " + vt);
  int in = depth;
  if (pred) {
    line(in, "if (" + print(*pred) + ") {");
    ++in;
  }
  auto emit = [&](const Stmt* x, int d, const std::string& prefix) {
    const Buffer& b = f.buffers[size_t(x->buffer)];
    ExprPtr flat = tir::flat_index(b, x->indices);
    ExprPtr base = tir::simplify(*tir::substitute(*flat, s->var, *tir::int_imm(0)));
    vec = &vc;
    std::string value = is_vec(*x->value) ? print(*x->value) : "(" + vt + ")(" + print(*x->value) + ")";
    std::optional<std::string> element = private_vector(x->buffer, *base, w);
    vec = nullptr;
    if (element) {
      line(d, prefix + *element + " = " + value + ";");
      return;
    }
    line(d, prefix + store_prefix(x->buffer) + "vstore" + std::to_string(w) + "(" + value + ", 0, " +
                pointer(x->buffer, *base) + ");");
  };
  if (ist) {
    if (!init_cond.empty()) emit(ist, in, "if (" + init_cond + ") ");
    else emit(ist, in, "");
  }
  emit(st, in, "");
  if (pred) line(in - 1, "}");
  return true;
}

// The store's index moves by 1 per lane; every load moves by 1 or not at all; the lane
// variable appears nowhere else; and the stored buffer is read only at the stored address
// (a shifted read would see lanes the vector store has not written yet).
bool OpenCLPrinter::vector_store_ok(const Stmt& st, const std::string& lane, std::string* why) {
  const Buffer& b = f.buffers[size_t(st.buffer)];
  ExprPtr flat = tir::flat_index(b, st.indices);
  auto c = coefficient(*flat, lane);
  if (!c || *c != 1) {
    *why = "the store to '" + b.name + "' is not contiguous in the lane";
    return false;
  }
  bool ok = true;
  std::function<void(const Expr&)> visit = [&](const Expr& e) {
    if (!ok) return;
    if (e.kind == ExprKind::Load) {
      const Buffer& lb = f.buffers[size_t(e.buffer)];
      ExprPtr lf = tir::flat_index(lb, e.args);
      auto lc = coefficient(*lf, lane);
      if (!lc || (*lc != 0 && *lc != 1)) {
        *why = "the load of '" + lb.name + "' is not contiguous in the lane";
        ok = false;
      } else if (e.buffer == st.buffer && !tir::equal(*lf, *flat)) {
        *why = "'" + lb.name + "' is read at another address than it is written";
        ok = false;
      }
      return;
    }
    if (e.kind == ExprKind::Var && e.name == lane) {
      *why = "the lane index is used as a value";
      ok = false;
      return;
    }
    if (e.type == ScalarType::Int && tir::uses_var(e, lane)) {
      *why = "the lane index is used as a value";
      ok = false;
      return;
    }
    if (e.type == ScalarType::Bool && e.kind == ExprKind::Binary &&
        (e.op == Op::And || e.op == Op::Or) && tir::uses_var(e, lane)) {
      *why = "a lane-dependent condition combines comparisons";
      ok = false;
      return;
    }
    for (const auto& a : e.args) visit(*a);
  };
  visit(*st.value);
  return ok;
}

namespace {

// Every bound loop of a kernel: its largest extent per tag, and no tag twice on one path.
bool collect_tags(const Stmt* s, std::set<std::string>& path, Kernel& k, std::string* error) {
  if (!s) return true;
  bool added = false;
  if (s->kind == StmtKind::For && s->for_kind == ForKind::Bound) {
    TagInfo t;
    if (!parse_tag(s->thread_tag, &t))
      return fail(error, "loop '" + s->var + "' is bound to unknown thread tag '" + s->thread_tag +
                             "' (expected group.x|y|z or local.x|y|z)");
    if (path.count(s->thread_tag))
      return fail(error, "loop '" + s->var + "' is bound to " + s->thread_tag +
                             " inside another loop bound to " + s->thread_tag);
    path.insert(s->thread_tag);
    added = true;
    int64_t& e = k.extent[s->thread_tag];
    e = std::max(e, s->extent);
  }
  bool ok = collect_tags(s->init.get(), path, k, error) && collect_tags(s->body.get(), path, k, error);
  for (const auto& c : s->stmts) ok = ok && collect_tags(c.get(), path, k, error);
  if (added) path.erase(s->thread_tag);
  return ok;
}

}  // namespace

std::string describe_launch(const KernelLaunch& k) {
  int64_t groups = 1, items = 1;
  for (int d = 0; d < k.dims.dims; ++d) {
    groups *= k.groups[d];
    items *= k.locals[d];
  }
  return "kernel " + k.name + ": global " + sizes_text(k.dims.global, k.dims.dims) + " local " +
         sizes_text(k.locals, k.dims.dims) + " = " + std::to_string(groups) + " work-group" +
         (groups == 1 ? "" : "s") + " of " + std::to_string(items) + " work-item" + (items == 1 ? "" : "s");
}

// ---------------------------------------------------------------------------------------
// [SECTION] the program
// ---------------------------------------------------------------------------------------

bool generate_opencl(const PrimFunc& f, OpenCLProgram* out, std::string* error) {
  *out = OpenCLProgram{};
  std::string why;
  if (!tir::verify(f, &why)) return fail(error, "cannot generate OpenCL for '" + f.name + "': " + why);
  if (!f.body) return fail(error, "cannot generate OpenCL for '" + f.name + "': it has no body");
  OpenCLPrinter g(f);

  // Storage: see the header.
  std::map<int, bool> alloc_under_local;
  find_allocations(f.body.get(), 0, &alloc_under_local);
  find_written(f.body.get(), &g.written);
  int64_t largest = 0;
  for (size_t b = 0; b < f.buffers.size(); ++b) {
    const Buffer& buf = f.buffers[b];
    largest = std::max(largest, numel(buf));
    bool param = std::find(f.params.begin(), f.params.end(), int(b)) != f.params.end() ||
                 int(b) == f.output;
    Storage st;
    if (param) st = Storage::Param;
    else if (buf.scope == Scope::Global || !alloc_under_local.count(int(b))) st = Storage::Scratch;
    else if (buf.scope == Scope::Local || alloc_under_local[int(b)]) st = Storage::Private;
    else st = Storage::LocalMem;
    g.storage.push_back(st);
  }
  std::function<void(const Stmt*)> extents = [&](const Stmt* s) {
    if (!s) return;
    if (s->kind == StmtKind::For) largest = std::max(largest, s->extent);
    extents(s->init.get());
    extents(s->body.get());
    for (const auto& k : s->stmts) extents(k.get());
  };
  extents(f.body.get());
  if (largest >= (int64_t(1) << 31)) g.idx = "long";

  // Kernels: one per top-level statement when the function binds loops (each may bind
  // differently, and a kernel boundary is the only barrier across work-groups), else one.
  std::vector<const Stmt*> tops;
  if (f.body->kind == StmtKind::Seq)
    for (const auto& s : f.body->stmts) tops.push_back(s.get());
  else
    tops.push_back(f.body.get());
  std::vector<Kernel> kernels;
  if (!has_bound(f.body.get()) || tops.size() == 1) {
    kernels.push_back(Kernel{cname(f.name), tops, {}, {}});
  } else {
    for (size_t i = 0; i < tops.size(); ++i)
      kernels.push_back(Kernel{cname(f.name) + "_" + std::to_string(i), {tops[i]}, {}, {}});
  }

  // Parameters: inputs, output, scratch.
  for (int p : f.params) out->params.push_back(p);
  out->params.push_back(f.output);
  for (size_t b = 0; b < f.buffers.size(); ++b)
    if (g.storage[b] == Storage::Scratch) {
      out->params.push_back(int(b));
      out->scratch.push_back(int(b));
    }
  std::vector<std::string> params;
  for (int b : out->params) {
    bool input = std::find(f.params.begin(), f.params.end(), b) != f.params.end() && b != f.output;
    params.push_back(g.param(b, input));
  }
  std::string sig = join(params);

  std::ostringstream body;
  for (Kernel& k : kernels) {
    std::set<std::string> path;
    for (const Stmt* s : k.stmts)
      if (!collect_tags(s, path, k, error)) return false;
    KernelLaunch& L = k.launch;
    L.name = k.name;
    int dims = 1;
    for (const auto& [tag, extent] : k.extent) {
      TagInfo t;
      parse_tag(tag, &t);
      (t.group ? L.groups : L.locals)[t.dim] = extent;
      dims = std::max(dims, t.dim + 1);
      if (extent > 1) {
        g.launch_tags.insert(tag);
        if (!t.group) g.launch_locals.insert(tag);
      }
    }
    L.dims.dims = dims;
    for (int d = 0; d < 3; ++d) {
      L.dims.global[d] = L.groups[d] * L.locals[d];
      L.dims.local[d] = L.locals[d];
    }
    g.k = &k;
    g.reset_text("");
    g.in_scope.clear();
    // __local arrays live at kernel scope: the ones this kernel's statements use.
    std::set<int> used;
    for (const Stmt* s : k.stmts) buffers_used(s, &used);
    for (int b : used)
      if (g.storage[size_t(b)] == Storage::LocalMem) {
        const Buffer& buf = f.buffers[size_t(b)];
        g.declare_line(1, "__local float " + cname(buf.name) + "[" + std::to_string(numel(buf)) +
                      "];  // shared by the work-group (not zeroed: every use is written first)");
      }
    // The statements as one sequence, so barriers go between them where needed.
    Stmt top(StmtKind::Seq);
    for (const Stmt* s : k.stmts) top.stmts.push_back(tir::clone(*s));
    std::string decls = g.text();
    bool ok = g.kernel_body(&top, 1);
    // Private arrays only ever accessed as whole aligned vectors: generate again with them
    // declared as arrays of vectors (see VecUse).
    bool again = false;
    for (const auto& [b, lanes] : g.vec_use.seen)
      if (lanes > 0 && !g.vec_use.layout.count(b)) {
        g.vec_use.layout[b] = lanes;
        again = true;
      }
    if (ok && again) {
      g.reset_text(decls);
      g.in_scope.clear();
      ok = g.kernel_body(&top, 1);
    }
    if (!ok) return fail(error, "cannot generate OpenCL for '" + f.name + "': " + g.error);
    body << "\n// " << describe_launch(L) << "\n";
    body << "__kernel __attribute__((reqd_work_group_size(" << L.locals[0] << ", " << L.locals[1]
         << ", " << L.locals[2] << ")))\n";
    body << "void " << k.name << "(" << sig << ") {\n" << g.text() << "}\n";
    out->kernels.push_back(L);
    g.launch_tags.clear();
    g.launch_locals.clear();
  }

  // Helpers go first but are known last: only those the kernels call.
  std::ostringstream head;
  head << "// OpenCL C generated by Descent from the loop nest '" << f.name << "'.\n";
  std::string helpers;
  for (const std::string& h : g.helpers()) {
    if (h == "ds_iabs") {
      helpers += "static inline " + g.idx + " ds_iabs(" + g.idx + " a) { return a < 0 ? -a : a; }\n";
      continue;
    }
    // ds_max / ds_min / ds_max4 ...: the interpreter's rule, lane by lane for vectors.
    bool is_max = h.compare(0, 6, "ds_max") == 0;
    std::string width = h.substr(6);
    std::string t = "float" + width;
    std::string cmp = is_max ? ">" : "<";
    std::string ret = width.empty() ? "b " + cmp + " a ? b : a" : "select(a, b, b " + cmp + " a)";
    helpers += "static inline " + t + " " + h + "(" + t + " a, " + t + " b) { return " + ret + "; }\n";
  }
  if (!helpers.empty()) head << "// max(a, b) is (b > a) ? b : a, as in the interpreter (fmax would drop a nan).\n" << helpers;
  out->source = head.str() + body.str();
  return true;
}

std::string print_opencl(const PrimFunc& f) {
  OpenCLProgram p;
  std::string error;
  if (!generate_opencl(f, &p, &error)) return "error: " + error + "\n";
  return p.source;
}

}  // namespace descent::gpu
