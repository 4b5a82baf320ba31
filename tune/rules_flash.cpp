// The flash-attention recipe of the rules (rules.h): for a kernel with attention's pattern,
// the steps of examples/flash_attention_opencl.sched written from the kernel's own block and
// loop names. The schedule primitives decide whether the pattern is there: online_softmax and
// merge check it (a max reduction, the exponentials after it, sums over them; scores touched
// one key per iteration), so the recipe is all or nothing on those two, and the other steps
// are taken where they apply. Used on opencl, where it measured twice as fast as the
// per-nest recipes (docs/transformers.md); on the cpu the unfused kernel's recipes are faster.
#include <algorithm>

#include "tensor/schedule.h"
#include "tune/rules.h"

namespace descent::tune {

namespace {

std::string var_of(const std::string& loop) {
  size_t dot = loop.rfind('.');
  return dot == std::string::npos ? loop : loop.substr(dot + 1);
}

}  // namespace

std::string flash_schedule(const tir::PrimFunc& f, std::vector<std::string>* notes) {
  std::vector<std::string> blocks = tensor::sched::block_names(f);
  if (blocks.size() < 5) return "";
  tir::PrimFunc g = f;
  std::string trace;
  auto step = [&](const std::string& s) {
    std::string canonical, why;
    if (!tensor::apply_step(g, s, &canonical, &why)) return false;
    trace += canonical + "\n";
    return true;
  };
  auto loops_of = [&](const std::string& b) {
    std::vector<std::string> l;
    std::string error;
    tensor::sched::block_loops(g, b, &l, &error);
    return l;
  };
  // The scores: the first block, a reduction whose loops end in row, key, reduction.
  const std::string s0 = blocks[0];
  std::vector<std::string> l0 = loops_of(s0);
  if (l0.size() != 4) return "";  // one head loop in front: it and the tiles become groups
  const std::string head = var_of(l0[0]), row = var_of(l0[1]), key = var_of(l0[2]),
                    red = var_of(l0[3]);
  std::string error;
  tensor::sched::LoopRef r = tensor::sched::find_loop(g, s0 + "." + row, &error);
  if (!r.loop) return "";
  int64_t tile = std::min<int64_t>(64, r.loop->extent);
  // 1. Rows of queries in tiles, every later stage under the tile's loop, out of memory.
  if (!step("split " + s0 + "." + row + " " + std::to_string(tile))) return "";
  const std::string tile_loop = s0 + "." + row + "_0", in_tile = s0 + "." + row + "_1";
  for (size_t b = 1; b < blocks.size(); ++b) step("reverse_compute_at " + blocks[b] + " " + tile_loop);
  for (const auto& buf : f.buffers)
    if (buf.role == tir::BufferRole::Temp && buf.name != s0) step("set_scope " + buf.name + " local");
  // 2. The key loop outside each stage's rows; the scores' dot products side by side.
  step("reorder " + s0 + "." + key + " " + in_tile);
  if (step("fission " + in_tile)) step("reorder " + s0 + "." + red + " " + in_tile);
  step("set_scope " + s0 + " local");
  for (size_t b = 1; b < blocks.size(); ++b) {
    std::vector<std::string> l = loops_of(blocks[b]);
    if (l.size() < 3) continue;
    std::vector<std::string> inner(l.begin() + 2, l.end());  // below the head and the tile
    auto k = std::find_if(inner.begin(), inner.end(), [&](const std::string& x) { return var_of(x) == key; });
    if (k == inner.end() || k == inner.begin()) continue;
    std::string order = "reorder " + *k;
    for (const auto& x : inner)
      if (x != *k) order += " " + x;
    step(order);
  }
  // 3. The online softmax and the scores merged into its pass: the pattern, or no recipe.
  std::string mx;
  for (size_t b = 1; b < blocks.size() && mx.empty(); ++b)
    if (step("online_softmax " + blocks[b])) mx = blocks[b];
  if (mx.empty() || !step("merge " + s0 + "." + key + " " + mx + "." + key)) return "";
  // 4. Vectors where they apply, a work-group per tile of each head.
  step("decompose_reduction " + s0 + " " + s0 + "." + red);
  for (const std::string& b : tensor::sched::block_names(g)) {
    std::vector<std::string> l = loops_of(b);
    if (l.size() > 2) step("vectorize " + l.back());
  }
  if (!step("bind " + head + " group.x") && !step("bind " + s0 + "." + head + " group.x")) return "";
  if (!step("bind " + tile_loop + " group.y") && !step("bind " + row + "_0 group.y")) return "";
  if (notes)
    notes->push_back("attention's pattern (" + s0 + " ... " + mx + "): the flash schedule, " +
                     std::to_string(tile) + "-row tiles, online softmax, a work-group per tile " +
                     "(docs/transformers.md)");
  return trace;
}

}  // namespace descent::tune
