// For-kinds: unroll, vectorize, parallel, bind. They change no loop's range, only how its
// iterations run: one after another (serial, the default), copied out (unrolled), as vector
// lanes, on CPU threads, or as GPU work-groups and work-items (bind). What is checked here
// is races: iterations that run at once must not accumulate into one element, so a loop
// that carries a reduction is refused (rfactor first turns it into one that does not), and
// threads nest one level deep (a local.* loop inside a group.* loop).
#include <algorithm>
#include <iterator>

#include "tensor/schedule/internal.h"

namespace descent::tensor::sched {

namespace {

// The first block under `loop` one of whose Reduce iters is bound through the loop: running
// the loop's iterations at once would race on (or reorder) that block's accumulation.
bool carries_reduction(Stmt* loop, std::string* block, std::string* axis) {
  for (Stmt* b : blocks_under(loop))
    for (const tir::IterVar& iv : b->iters)
      if (iv.kind == tir::IterKind::Reduce && iv.binding && tir::uses_var(*iv.binding, loop->var)) {
        *block = b->name;
        *axis = iv.name;
        return true;
      }
  return false;
}

std::string reduction_error(const std::string& verb, const std::string& name, Stmt* loop) {
  std::string block, axis;
  if (!carries_reduction(loop, &block, &axis)) return "";
  return "cannot " + verb + " '" + name + "': it carries the reduction of block '" + block +
         "' (reduce axis " + axis + "); use rfactor " + block + " " + name + " first";
}

// The common checks of the loop-kind annotations.
Stmt* annotate_target(PrimFunc& g, const std::string& name, const std::string& verb,
                      std::string* error) {
  LoopRef ref = find_loop(g, name, error);
  if (!ref.loop) return nullptr;
  if (ref.loop->for_kind != ForKind::Serial) {
    fail(error, "cannot " + verb + " '" + name + "': " + already(ref.loop));
    return nullptr;
  }
  return ref.loop;
}

constexpr int64_t kMaxUnroll = 64;

std::string too_long(const std::string& verb, const std::string& name, const Stmt* loop) {
  return "cannot " + verb + " '" + name + "': extent " + std::to_string(loop->extent) + " > " +
         std::to_string(kMaxUnroll) + "; split it first";
}

}  // namespace

bool unroll(PrimFunc& f, const std::string& loop, std::string* error) {
  return commit(f, error, [&](PrimFunc& g) {
    Stmt* l = annotate_target(g, loop, "unroll", error);
    if (!l) return false;
    if (l->extent > kMaxUnroll) return fail(error, too_long("unroll", loop, l));
    l->for_kind = ForKind::Unrolled;
    return true;
  });
}

bool vectorize(PrimFunc& f, const std::string& loop, std::string* error) {
  return commit(f, error, [&](PrimFunc& g) {
    Stmt* l = annotate_target(g, loop, "vectorize", error);
    if (!l) return false;
    std::vector<Stmt*> inside = loops_under(l);
    if (inside.size() > 1)
      return fail(error, "cannot vectorize '" + loop + "': it is not innermost (loop '" +
                             inside[1]->var + "' is inside it)");
    if (l->extent > kMaxUnroll) return fail(error, too_long("vectorize", loop, l));
    // A reduce axis bound through the loop would make lanes add into one element.
    std::string why = reduction_error("vectorize", loop, l);
    if (!why.empty()) return fail(error, why);
    l->for_kind = ForKind::Vectorized;
    return true;
  });
}

bool parallel(PrimFunc& f, const std::string& loop, std::string* error) {
  return commit(f, error, [&](PrimFunc& g) {
    Stmt* l = annotate_target(g, loop, "parallelize", error);
    if (!l) return false;
    std::string why = reduction_error("parallelize", loop, l);
    if (!why.empty()) return fail(error, why);
    // One level of threads: a parallel loop inside another would oversubscribe the pool
    // (and the CPU backend runs one parallel region at a time).
    for (Stmt* b : blocks_under(l))
      for (Stmt* a : loops_above(g, b)) {
        if (a == l) break;
        if (a->for_kind == ForKind::Parallel)
          return fail(error, "cannot parallelize '" + loop + "': it is inside parallel loop '" +
                                 a->var + "'");
      }
    for (Stmt* in : loops_under(l))
      if (in != l && in->for_kind == ForKind::Parallel)
        return fail(error, "cannot parallelize '" + loop + "': it contains parallel loop '" +
                               in->var + "'");
    l->for_kind = ForKind::Parallel;
    return true;
  });
}

bool bind(PrimFunc& f, const std::string& loop, const std::string& tag, std::string* error) {
  return commit(f, error, [&](PrimFunc& g) {
    static const char* kTags[] = {"group.x", "group.y", "group.z",
                                  "local.x", "local.y", "local.z"};
    if (std::find(std::begin(kTags), std::end(kTags), tag) == std::end(kTags))
      return fail(error, "cannot bind '" + loop + "' to '" + tag +
                             "': the thread tags are group.x, group.y, group.z, local.x, local.y, "
                             "local.z");
    const std::string verb = "bind";
    Stmt* l = annotate_target(g, loop, verb, error);
    if (!l) return false;
    const std::string what = "cannot bind '" + loop + "' to " + tag + ": ";
    std::string block, axis;
    if (carries_reduction(l, &block, &axis))
      return fail(error, what + "it carries the reduction of block '" + block + "' (reduce axis " +
                             axis + "); use rfactor " + block + " " + loop + " first");
    // The loops on this path: those above l (through its first block) and those below.
    std::vector<Stmt*> path;
    std::vector<Stmt*> bs = blocks_under(l);
    if (!bs.empty())
      for (Stmt* a : loops_above(g, bs[0])) {
        if (a == l) break;
        path.push_back(a);
      }
    bool inside_group = false;
    for (Stmt* a : path) {
      if (a->for_kind == ForKind::Bound && a->thread_tag == tag)
        return fail(error, what + "loop '" + a->var + "' around it is already bound to " + tag);
      if (a->for_kind == ForKind::Bound && a->thread_tag.rfind("group.", 0) == 0)
        inside_group = true;
    }
    for (Stmt* in : loops_under(l))
      if (in != l && in->for_kind == ForKind::Bound && in->thread_tag == tag)
        return fail(error, what + "loop '" + in->var + "' inside it is already bound to " + tag);
    if (tag.rfind("local.", 0) == 0 && !inside_group)
      return fail(error, what + "a local.* loop must be inside a loop bound to group.*");
    l->for_kind = ForKind::Bound;
    l->thread_tag = tag;
    return true;
  });
}

}  // namespace descent::tensor::sched
