// The rules' reading of a loop nest (rules_internal.h): which block of each nest does the
// work, which loops are spatial and which reduce, which axis the loads walk contiguously.
// Also the epilogue that follows a register tile into it.
#include <algorithm>
#include <map>

#include "tensor/schedule.h"
#include "tune/rules_internal.h"

namespace descent::tune::rules_detail {
namespace {

using tir::Expr;
using tir::ExprKind;
using tir::Stmt;
using tir::StmtKind;

// The last index of every load of a buffer other than `written` (a reduction reads its own
// accumulator, which says nothing about how the inputs are walked).
void last_indices(const Expr& e, int written, std::vector<const Expr*>* out) {
  if (e.kind == ExprKind::Load && !e.args.empty() && e.buffer != written) out->push_back(&e);
  for (const auto& a : e.args) last_indices(*a, written, out);
}
// How many loads of buffer `b` there are in `s` (its values, indices, predicates and inits).
int loads_of(const Expr& e, int b) {
  int n = e.kind == ExprKind::Load && e.buffer == b ? 1 : 0;
  for (const auto& a : e.args) n += loads_of(*a, b);
  return n;
}
int loads_of(const Stmt& s, int b) {
  int n = 0;
  for (const auto& i : s.indices) n += loads_of(*i, b);
  if (s.value) n += loads_of(*s.value, b);
  if (s.predicate) n += loads_of(*s.predicate, b);
  for (const auto& it : s.iters)
    if (it.binding) n += loads_of(*it.binding, b);
  if (s.init) n += loads_of(*s.init, b);
  if (s.body) n += loads_of(*s.body, b);
  for (const auto& c : s.stmts) n += loads_of(*c, b);
  return n;
}
void stores(const Stmt& s, std::vector<const Stmt*>* out) {
  if (s.kind == StmtKind::Store && s.value) out->push_back(&s);
  if (s.body) stores(*s.body, out);
  for (const auto& c : s.stmts) stores(*c, out);
}

}  // namespace

std::vector<Nest> analyse(const tir::PrimFunc& original) {
  tir::PrimFunc f = original;  // blocks() wants a mutable function; the copy is read only
  std::vector<tir::BlockSite> sites = tir::blocks(f);
  // Sites grouped by their root loop, in program order.
  std::vector<std::vector<const tir::BlockSite*>> groups;
  std::map<const Stmt*, size_t> group_of;
  for (const auto& s : sites) {
    if (s.loops.empty()) continue;  // a block with no loop: nothing to schedule
    auto it = group_of.find(s.loops[0]);
    if (it == group_of.end()) {
      group_of[s.loops[0]] = groups.size();
      groups.push_back({&s});
    } else {
      groups[it->second].push_back(&s);
    }
  }
  std::vector<Nest> nests;
  for (const auto& g : groups) {
    const tir::BlockSite* main = g.back();
    for (const auto* s : g)  // the first reduction block, if any
      if (std::any_of(s->block->iters.begin(), s->block->iters.end(),
                      [](const tir::IterVar& v) { return v.kind == tir::IterKind::Reduce; })) {
        main = s;
        break;
      }
    Nest n;
    n.block = main->block->name;
    for (const Stmt* loop : main->loops) {
      n.iterations *= double(loop->extent);
      for (const auto& it : main->block->iters) {
        if (!it.binding || !tir::uses_var(*it.binding, loop->var)) continue;
        if (it.kind == tir::IterKind::Reduce) {
          n.reduce.push_back(loop->var);
          n.reduce_extent.push_back(loop->extent);
          n.reduction = true;
        } else {
          n.spatial.push_back(loop->var);
          n.spatial_extent.push_back(loop->extent);
        }
        break;
      }
    }
    if (n.spatial.empty()) continue;
    for (const auto* s : g)
      if (s != main && std::find(s->loops.begin(), s->loops.end(),
                                 main->loops[0]) != s->loops.end()) {
        for (const Stmt* l : s->loops)
          if (l->var == n.spatial.back()) n.epilogue = true;
      }
    std::vector<const Stmt*> written;
    stores(*main->block->body, &written);
    for (const Stmt* st : written) {
      tir::ExprPtr inlined = tir::inline_bindings(*st->value, *main->block);
      std::vector<const Expr*> here;
      last_indices(*inlined, st->buffer, &here);
      for (const Expr* load : here) {
        const Expr* idx = load->args.back().get();
        // In a reduction, a load the reduction loop does not move (layer norm's var reads
        // its row's mean mu[i] once per step) is no operand read along j: it stays in a
        // register, and must not make a row's reduction look like a matmul.
        bool moves = !n.reduction;
        for (const auto& a : load->args)
          for (const std::string& red : n.reduce) moves |= tir::uses_var(*a, red);
        if (moves && tir::uses_var(*idx, n.spatial.back())) {
          n.spatial_contiguous = true;
          // Read along j and never along the other spatial loops: one panel of it serves
          // every row of the output (what packing copies).
          bool other = false;
          for (size_t k = 0; k + 1 < n.spatial.size(); ++k)
            for (const auto& a : load->args) other |= tir::uses_var(*a, n.spatial[k]);
          if (!other && load->buffer >= 0 && size_t(load->buffer) < f.buffers.size()) {
            n.row_operand = f.buffers[size_t(load->buffer)].name;
            int rdim = -1;
            for (size_t d = 0; n.reduction && d < load->args.size(); ++d)
              if (tir::uses_var(*load->args[d], n.reduce.back())) rdim = rdim < 0 ? int(d) : -2;
            n.row_perm.clear();
            if (rdim >= 0 && size_t(rdim) + 1 < load->args.size()) {
              for (size_t d = 0; d < load->args.size(); ++d)
                if (int(d) != rdim) n.row_perm += " " + std::to_string(d);
              n.row_perm += " " + std::to_string(rdim);
            }
          }
        }
        if (n.reduction && tir::uses_var(*idx, n.reduce.back())) {
          n.reduce_contiguous = true;
          // Which dimension walks j? None but the last may be the one that walks r.
          int jdim = -1;
          bool other = false;
          // Spatial loops before the last two are a batch (attention's heads: q[g, i, c] .
          // k[g, j, c]): every operand has one matrix per batch index, so reading along
          // them still leaves W one matrix per product. Only the row loop rules it out.
          const size_t first_row = n.spatial.size() >= 2 ? n.spatial.size() - 2 : 0;
          for (size_t d = 0; d < load->args.size(); ++d) {
            if (tir::uses_var(*load->args[d], n.spatial.back())) jdim = jdim < 0 ? int(d) : -2;
            for (size_t k = first_row; k + 1 < n.spatial.size(); ++k)
              other |= tir::uses_var(*load->args[d], n.spatial[k]);
          }
          if (jdim >= 0 && size_t(jdim) + 1 < load->args.size() && !other && load->buffer >= 0 &&
              size_t(load->buffer) < f.buffers.size()) {
            n.weight = f.buffers[size_t(load->buffer)].name;
            n.weight_perm.clear();
            for (size_t d = 0; d < load->args.size(); ++d)
              if (int(d) != jdim) n.weight_perm += " " + std::to_string(d);
            n.weight_perm += " " + std::to_string(jdim);
          }
        }
      }
    }
    nests.push_back(std::move(n));
  }
  return nests;
}

std::vector<Step> epilogue_in_tile(const tir::PrimFunc& f, const Nest& m, const std::vector<Nest>& epilogue,
                                   const std::string& tile_loop) {
  if (epilogue.empty() || tile_loop.empty()) return {};
  // M's result must be an intermediate of the kernel (the epilogue's input), and every
  // epilogue nest elementwise over a tensor of M's shape.
  bool intermediate = false;
  for (const tir::Buffer& b : f.buffers)
    intermediate |= b.name == m.block && b.role == tir::BufferRole::Temp && b.scope == tir::Scope::Global;
  if (!intermediate) return {};
  for (const Nest& e : epilogue)
    if (e.reduction || e.spatial_extent != m.spatial_extent) return {};
  // Each nest inlined must be read once: inlining a value read in several places repeats
  // its work in the expression (a gelu's tanh chain: exp 4 times, twice the build time).
  for (size_t k = 0; k + 1 < epilogue.size(); ++k) {
    const int buffer = f.find_buffer(epilogue[k].block);
    if (buffer < 0 || !f.body || loads_of(*f.body, buffer) != 1) return {};
  }
  tir::PrimFunc g = f;
  std::vector<Step> out;
  auto step = [&](const std::string& text) {
    std::string canonical, why;
    if (!tensor::apply_step(g, text, &canonical, &why)) return false;
    out.push_back({canonical, kDefaultOnly});
    return true;
  };
  const std::string& last = epilogue.back().block;
  for (size_t k = 0; k + 1 < epilogue.size(); ++k)
    if (!step("compute_inline " + epilogue[k].block)) return {};
  if (!step("reverse_compute_at " + last + " " + tile_loop) || !step("set_scope " + m.block + " local"))
    return {};
  // The epilogue's loops under the tile loop: the innermost one vector, the others unrolled
  // where they are as short as a tile's rows (an epilogue that reads the tile transposed
  // walks its 32-wide side outside: that loop stays a loop). Where a step is refused the
  // loop stays as it is: the epilogue is in the tile either way.
  std::vector<std::string> loops;
  std::string error;
  if (!tensor::sched::block_loops(g, last, &loops, &error)) return out;
  auto var = [](const std::string& loop) { return loop.substr(loop.rfind('.') + 1); };
  size_t at = loops.size();
  for (size_t k = 0; k < loops.size(); ++k)
    if (var(loops[k]) == var(tile_loop)) at = k;
  for (size_t k = at + 1; k < loops.size(); ++k) {
    const std::string q = last + "." + var(loops[k]);
    if (k + 1 == loops.size()) {
      step("vectorize " + q);
      continue;
    }
    tensor::sched::LoopRef l = tensor::sched::find_loop(g, q, &error);
    if (l.loop && l.loop->extent <= 8) step("unroll " + q);
  }
  return out;
}

}  // namespace descent::tune::rules_detail
