// The rule-based scheduler: see rules.h for the recipes. Each recipe is a list of steps, each
// with two forms: the fixed one the default schedule applies, and the open one (with `?`,
// `maybe`, `one_of`) that the rule-built space writes in its place. Only the steps whose
// fixed form applied go into the space, so a space never carries a step that cannot apply.
#include "tune/rules.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "tensor/schedule.h"
#include "tune/rules_internal.h"

namespace descent::tune {
namespace {

using rules_detail::analyse;
using rules_detail::kDefaultOnly;
using rules_detail::Nest;
using rules_detail::Step;

// The largest of `options` that divides `extent` (0 when none does).
int64_t largest_divisor(int64_t extent, std::initializer_list<int64_t> options) {
  for (int64_t o : options)
    if (o <= extent && extent % o == 0) return o;
  return 0;
}

// "?{4,8,16}": vector widths from 4 up to `lanes`, none wider than the loop (a split of a
// 12-long loop by 16 is refused: a space offering it wastes samples); at least 4.
std::string lanes_list(int lanes, int64_t extent) {
  std::string s = "?{";
  bool first = true;
  for (int v = 4; v <= lanes && (first || v <= extent); v *= 2) {
    s += (first ? "" : ",") + std::to_string(v);
    first = false;
  }
  return s + "}";
}

// "?{2,4,8}": the options no larger than the loop's extent (a tile of 8 rows of a 4-row loop
// is refused, so a space offering it wastes samples; a batch of 2 heads gets {2}). When none
// fits, the smallest: its refusal names the loop.
std::string fitting(int64_t extent, std::initializer_list<int64_t> options) {
  std::string s;
  for (int64_t o : options)
    if (o <= extent) s += (s.empty() ? "" : ",") + std::to_string(o);
  if (s.empty()) s = std::to_string(*options.begin());
  return "?{" + s + "}";
}

// A writeback block's loop over dimension `d` of the buffer it copies out (cache_write names
// them ax0, ax1, ...: a batched matmul's tile is written back over ax1 and ax2).
std::string ax(size_t d) { return "ax" + std::to_string(d); }

using Add = std::function<void(std::string fixed, std::string open)>;

// The dot recipe's start on every device: the innermost reduction split into `lanes` partial
// sums (rfactor). False when the loop is too short to be worth it.
// `open_lanes`: the widest the space tries (several vectors of partial sums per step: more
// independent adds in flight).
bool rfactor_into_lanes(const Nest& n, int64_t lanes, int64_t open_lanes, const Add& add) {
  const std::string& r = n.reduce.back();
  const int64_t extent = n.reduce_extent.back();
  // The widest vector that divides the loop and leaves it at least 4 steps (a 32-long row
  // takes 8 lanes, not 16 for two steps).
  int64_t v = 0;
  for (int64_t w : {lanes, lanes / 2, lanes / 4})
    if (w > 1 && extent % w == 0 && extent >= 4 * w) {
      v = w;
      break;
    }
  if (v <= 1) return false;
  const std::string b = n.block + ".";
  // The default's own width first (so the list is never empty: v may be 2), then every
  // other width that divides the loop and leaves it at least 4 steps.
  std::string open = "?{" + std::to_string(v);
  for (int64_t w = 4; w <= open_lanes; w *= 2)
    if (w != v && extent % w == 0 && extent >= 4 * w) open += "," + std::to_string(w);
  add("split " + b + r + " " + std::to_string(v), "split " + b + r + " " + open + "}");
  add("rfactor " + n.block + " " + b + r + "_1", "");
  return true;
}

// ... and its plain finish: the partial sums' init hoisted out of the reduction, and both
// loops over the lanes vectorized.
void vector_partial_sums(const Nest& n, const Add& add) {
  const std::string& r = n.reduce.back();
  const std::string rf = n.block + "_rf.";
  add("decompose_reduction " + n.block + "_rf " + rf + r + "_0", "");
  add("vectorize " + rf + r + "_1", "");
  add("vectorize " + n.block + "_rf_init." + r + "_1", "");
}

// A long row reduced to one value (softmax's max and sum, layer norm's mean and variance, a
// GEMV's dot): with one vector of partial sums, each step's add waits for the last one's
// (4 cycles for a vaddps), so a 1024-long row takes 64 steps of latency, not throughput.
// Four vectors of partial sums (64 lanes on AVX-512) are four independent chains a quarter
// as long; a second rfactor then folds the four into one vector before the scalar tail
// (else the tail would be 64 scalar steps instead of 16). Softmax 256 x 1024, one thread:
// 111 -> 100 us (docs/benchmarks.md). Taken where the row is at least 16 vectors long and
// divides into 4; the default only (the space's split already tries several vectors).
bool several_partial_sums(const Nest& n, int64_t lanes, const Add& add) {
  const std::string& r = n.reduce.back();
  const int64_t extent = n.reduce_extent.back(), wide = 4 * lanes;
  if (lanes < 4 || extent % wide != 0 || extent < 4 * wide) return false;
  const std::string b = n.block + ".", rf = n.block + "_rf.";
  add("split " + b + r + " " + std::to_string(wide), kDefaultOnly);
  add("rfactor " + n.block + " " + b + r + "_1", kDefaultOnly);
  add("decompose_reduction " + n.block + "_rf " + rf + r + "_0", kDefaultOnly);
  add("vectorize " + rf + r + "_1", kDefaultOnly);
  add("vectorize " + n.block + "_rf_init." + r + "_1", kDefaultOnly);
  // The block left summing the 64 partials loops over `rf`; its own rfactor is `B_rf_1`.
  add("split " + b + "rf " + std::to_string(lanes), kDefaultOnly);
  add("rfactor " + n.block + " " + b + "rf_1", kDefaultOnly);
  add("vectorize " + n.block + "_rf_1.rf_1", kDefaultOnly);
  return true;
}

// An elementwise nest P and the next nest R reducing P's rows to one value each (softmax's
// exponentials and their sum): both split as wide as R's partial sums, R's partials made
// (rfactor), and the two loops over the row made one (merge), so the sum's adds hide behind
// the exponentials' instructions and the row is not read a second time; then R's partials
// folded as in several_partial_sums. All default-only; empty where it does not fit.
std::vector<Step> merged_row_steps(const Nest& p, const Nest& r, int64_t lanes) {
  const bool one_per_row = r.spatial.size() < 2 || r.spatial_extent[r.spatial.size() - 2] < 2;
  if (p.reduction || !r.reduction || !one_per_row || r.reduce.empty() || p.spatial.empty()) return {};
  const int64_t extent = r.reduce_extent.back(), wide = 4 * lanes;
  if (lanes < 4 || extent % wide != 0 || extent < 4 * wide || p.spatial_extent.back() != extent) return {};
  const std::string pj = p.block + "." + p.spatial.back(), rc = r.block + "." + r.reduce.back();
  const std::string rf = r.block + "_rf";
  std::vector<Step> out;
  for (const std::string& s :
       {"split " + pj + " " + std::to_string(wide), "split " + rc + " " + std::to_string(wide),
        "rfactor " + r.block + " " + rc + "_1", "merge " + pj + "_0 " + rf + "." + r.reduce.back() + "_0",
        "decompose_reduction " + rf + " " + pj + "_0", "vectorize " + pj + "_1",
        "vectorize " + rf + "." + r.reduce.back() + "_1", "vectorize " + rf + "_init." + r.reduce.back() + "_1",
        "split " + r.block + ".rf " + std::to_string(lanes), "rfactor " + r.block + " " + r.block + ".rf_1",
        "vectorize " + r.block + "_rf_1.rf_1"})
    out.push_back({s, kDefaultOnly});
  return out;
}

// Rows from which a `linear` (a dot per output) is worth running as a matmul over the weight
// re-laid out: below it, a register tile of rows has too few rows to fill.
constexpr int64_t kGemmBatch = 4;

// A matmul nest (or a `linear` about to become one) whose rows no register tile's width
// divides and are at most two vectors wide (10 classes; 20 outputs), with a batch whose rows
// divide into tiles: the rows of its tile (8 or 4; 0 when it has no such shape). On AVX2 (8
// lanes) 10 outputs are a vector and a quarter; LLVM splits the row's vector.
int64_t narrow_rows(const Nest& n, int64_t lanes) {
  if (!n.reduction || n.spatial.size() < 2) return 0;
  const int64_t width = n.spatial_extent.back();
  if (width < 2 || width > 2 * lanes || largest_divisor(width, {2 * lanes, lanes, lanes / 2}) > 0) return 0;
  return largest_divisor(n.spatial_extent[n.spatial.size() - 2], {8, kGemmBatch});
}

// Loop work below which handing a nest to the thread pool costs more than it saves.
constexpr double kParallelIterations = 1 << 17;

void cpu_recipe(const Nest& n, const RuleTarget& t, std::vector<Step>* out) {
  const std::string b = n.block + ".";
  auto add = [&](std::string fixed, std::string open = "") {
    out->push_back({std::move(fixed), std::move(open)});
  };
  // `loop` qualified ("C.i_0"); only where the nest has the work to pay for the threads.
  auto parallel = [&](const std::string& loop) {
    if (n.iterations >= kParallelIterations) add("parallel " + loop, "maybe 0.8 parallel " + loop);
  };
  // The outermost spatial loop with more than one iteration: the threads' share.
  auto outer = [&]() {
    for (size_t k = 0; k < n.spatial.size(); ++k)
      if (n.spatial_extent[k] > 1) return k;
    return size_t(0);
  };
  const int64_t lanes = t.vector_lanes;
  if (!n.reduction) {
    size_t last = n.spatial.size() - 1;
    const std::string& j = n.spatial[last];
    int64_t v = largest_divisor(n.spatial_extent[last], {lanes, lanes / 2, lanes / 4});
    if (v > 1 && v < n.spatial_extent[last]) {
      add("split " + b + j + " " + std::to_string(v),
          "split " + b + j + " " + lanes_list(int(lanes), n.spatial_extent[last]));
      add("vectorize " + b + j + "_1");
      size_t o = outer();
      parallel(b + (o == last ? j + "_0" : n.spatial[o]));
    } else if (v > 1) {
      add("vectorize " + b + j);
      if (outer() != last) parallel(b + n.spatial[outer()]);
    } else {
      parallel(b + n.spatial[outer()]);
    }
    return;
  }
  const std::string& r = n.reduce.back();
  if (!n.spatial_contiguous && n.reduce_contiguous) {
    // dot: the partial sums of r in vector lanes (the sum's order changes: rounding may too).
    // One output per row (no batch to tile): several vectors of partial sums.
    const bool one_per_row = n.spatial.size() < 2 || n.spatial_extent[n.spatial.size() - 2] < 2;
    if (one_per_row && several_partial_sums(n, lanes, add)) {
      // The space keeps the one-vector recipe with its widths open (a step of the space
      // only has no fixed form).
      Add space = [&](std::string fixed, std::string open) {
        add("", open.empty() ? std::move(fixed) : std::move(open));
      };
      if (rfactor_into_lanes(n, lanes, 4 * lanes, space)) vector_partial_sums(n, space);
      parallel(b + n.spatial[outer()]);
      return;
    }
    if (rfactor_into_lanes(n, lanes, 4 * lanes, add)) {
      const std::string rf = n.block + "_rf.";
      // With a batch (more than one row), a register tile of outputs, each with its own
      // vector of partial sums: 4 x 2 accumulators, each x row loaded once for 2 outputs and
      // each w row once for 4 (8 vector registers, half of AVX2's 16).
      size_t k = n.spatial.size();
      int64_t ti = k >= 2 ? largest_divisor(n.spatial_extent[k - 2], {4, 2}) : 0;
      int64_t tj = k >= 2 ? largest_divisor(n.spatial_extent[k - 1], {2}) : 0;
      if (ti > 1 && tj > 1) {
        const std::string& i = n.spatial[k - 2];
        const std::string& j = n.spatial[k - 1];
        add("tile " + rf + i + " " + rf + j + " " + std::to_string(ti) + " " + std::to_string(tj),
            "tile " + rf + i + " " + rf + j + " " + fitting(n.spatial_extent[k - 2], {2, 4}) + " " +
                fitting(n.spatial_extent[k - 1], {2, 4}));
        add("reorder " + rf + i + "_0 " + rf + j + "_0 " + rf + r + "_0 " + rf + i + "_1 " + rf + j +
            "_1 " + rf + r + "_1");
        add("cache_write " + n.block + "_rf local");
        add("reverse_compute_at " + n.block + "_rf_writeback " + rf + j + "_0");
        add("decompose_reduction " + n.block + "_rf " + rf + r + "_0");
        add("vectorize " + rf + r + "_1");
        add("vectorize " + n.block + "_rf_init." + r + "_1");
        add("vectorize " + n.block + "_rf_writeback." + ax(k));  // rf adds a dimension
        add("unroll " + rf + j + "_1", "maybe 0.8 unroll " + rf + j + "_1");
        add("unroll " + rf + i + "_1", "maybe 0.8 unroll " + rf + i + "_1");
        if (n.spatial_extent[k - 2] / ti > 1) parallel(rf + i + "_0");
      } else {
        vector_partial_sums(n, add);
      }
    }
    parallel(b + n.spatial[outer()]);
    return;
  }
  if (n.spatial.size() >= 2 && !n.epilogue) {
    // matmul: a register tile of the output.
    const std::string& i = n.spatial[n.spatial.size() - 2];
    const std::string& j = n.spatial.back();
    int64_t ti = largest_divisor(n.spatial_extent[n.spatial.size() - 2], {8, 4, 2});
    int64_t tj = largest_divisor(n.spatial_extent.back(), {2 * lanes, lanes, lanes / 2});
    if (ti > 1 && tj > 1) {
      if (tj == 2 * lanes && n.spatial_extent.back() < 4 * lanes) tj = lanes;
      add("tile " + b + i + " " + b + j + " " + std::to_string(ti) + " " + std::to_string(tj),
          "tile " + b + i + " " + b + j + " " + fitting(n.spatial_extent[n.spatial.size() - 2], {2, 4, 8}) +
              " " + lanes_list(int(2 * lanes), n.spatial_extent.back()));
      // The innermost reduction loop split by 4 around the tile, the 4 unrolled: each pass of
      // the loop then does 4 tiles' multiply-adds (64 with an 8 x 32 tile) for one counter
      // update and branch, and the scheduler sees 4 steps' loads at once. 5% on MNIST's
      // first layer and on matmul 1024 at one thread (docs/benchmarks.md).
      const std::string& rl = n.reduce.back();
      const bool split_r = n.reduce_extent.back() % 4 == 0 && n.reduce_extent.back() >= 16;
      if (split_r) add("split " + b + rl + " 4");
      std::string reds;
      for (const auto& red : n.reduce)
        reds += " " + b + red + (split_r && red == rl ? "_0 " + b + red + "_1" : "");
      const std::string first_red = n.reduce.front() + (split_r && n.reduce.size() == 1 ? "_0" : "");
      // The default walks row blocks outermost (i_0 j_0) and writes a tile back once per
      // tile; the space also tries column panels outermost (j_0 i_0, a BLAS's order, where
      // one panel of B serves every row block), each with its writeback under the inner
      // of the two: a loop order is a group of steps, taken together.
      const std::string inner = " " + b + i + "_1 " + b + j + "_1";
      const std::string cache = "cache_write " + n.block + " local";
      const std::string ij = "reorder " + b + i + "_0 " + b + j + "_0" + reds + inner;
      const std::string ji = "reorder " + b + j + "_0 " + b + i + "_0" + reds + inner;
      const std::string wb = "reverse_compute_at " + n.block + "_writeback " + b;
      // Rows of B a multiple of 4 KiB apart (1024 floats and more) fall in the same few L1
      // sets: walking down a column of them evicts what the last step loaded. There the
      // default takes the BLAS's way: column panels outermost, and the panel of B that a
      // column block reads packed contiguous once per panel.
      const int64_t row = n.spatial_extent.back();
      const bool pack = !n.row_operand.empty() && row >= 1024 && (row * 4) % 4096 == 0;
      const std::string open_order = "one_of " + ij + " ; " + cache + " ; " + wb + j + "_0 | " +
                                     ji + " ; " + cache + " ; " + wb + i + "_0";
      add(pack ? ji : ij, open_order);
      add(cache, "-");
      add(wb + (pack ? i : j) + "_0", "-");
      add("decompose_reduction " + n.block + " " + b + first_red);
      // Packing (in the space everywhere): the panel of B a column block reads, copied
      // contiguous once per j_0, so each step of the reduction reads adjacent vectors, not a
      // new page.
      if (!n.row_operand.empty()) {
        const std::string cr = "cache_read " + n.block + " " + n.row_operand + " local";
        const std::string ca = "compute_at " + n.row_operand + "_local " + b + j + "_0";
        const std::string vz = "vectorize " + n.row_operand + "_local.ax1";
        const std::string open = "maybe 0.5 " + cr + " ; " + ca + " ; " + vz;
        if (pack) {
          add(cr, open);
          add(ca, "-");
          add(vz, "-");
        } else {
          add("", open);
        }
      }
      add("vectorize " + b + j + "_1");
      add("vectorize " + n.block + "_init." + j + "_1");
      add("vectorize " + n.block + "_writeback." + ax(n.spatial.size() - 1));
      add("unroll " + b + i + "_1", "maybe 0.7 unroll " + b + i + "_1");
      add("unroll " + n.block + "_init." + i + "_1");
      add("unroll " + n.block + "_writeback." + ax(n.spatial.size() - 2));
      // The tile is now a BLAS micro-kernel's. Where an intrinsic of its size is registered,
      // the default names it (each update an explicit fused multiply-add); a nest whose
      // operands do not fit the description (a convolution's input moves with i and j) keeps
      // the plain tile, and the note says why. The space leaves it out: its tile sizes vary.
      const std::string intrin = "cpu.fma_" + std::to_string(ti) + "x" + std::to_string(tj);
      if (tensor::sched::find_intrinsic(intrin))
        add("tensorize " + b + i + "_1 " + intrin, kDefaultOnly);
      if (split_r) add("unroll " + b + rl + "_1", "maybe 0.8 unroll " + b + rl + "_1");
      const bool rows = n.spatial_extent[n.spatial.size() - 2] / ti > 1;
      const bool cols = n.spatial_extent.back() / tj > 1;
      if (rows && cols && n.iterations >= kParallelIterations)
        add("parallel " + b + (pack ? j : i) + "_0",
            "one_of parallel " + b + i + "_0 | parallel " + b + j + "_0");
      else if (rows) parallel(b + i + "_0");
      else parallel(b + j + "_0");
      return;
    }
    if (narrow_rows(n, lanes) > 1) {
      // Rows no tile width divides (10 classes): a tile of rows, each row's outputs one
      // vector (10 of 16 lanes), r outside the tile. Per step of r, one load of B's row and
      // one multiply-add per row of the tile, as many independent chains as rows; no lanes
      // to add up at the end, as a dot per output would have.
      const int64_t rows = narrow_rows(n, lanes);
      std::string reds;
      for (const auto& red : n.reduce) reds += " " + b + red;
      add("split " + b + i + " " + std::to_string(rows),
          "split " + b + i + " " + (rows == 8 ? "?{4,8}" : "?{4}"));  // divisors only: no predicate
      add("reorder " + b + i + "_0" + reds + " " + b + i + "_1 " + b + j);
      add("cache_write " + n.block + " local");
      add("reverse_compute_at " + n.block + "_writeback " + b + i + "_0");
      add("decompose_reduction " + n.block + " " + b + n.reduce.front());
      add("vectorize " + b + j);
      add("vectorize " + n.block + "_init." + j);
      add("vectorize " + n.block + "_writeback." + ax(n.spatial.size() - 1));
      add("unroll " + b + i + "_1", "maybe 0.7 unroll " + b + i + "_1");
      add("unroll " + n.block + "_init." + i + "_1");
      add("unroll " + n.block + "_writeback." + ax(n.spatial.size() - 2));
      parallel(b + i + "_0");
      return;
    }
  }
  parallel(b + n.spatial[outer()]);
}

void opencl_recipe(const Nest& n, const RuleTarget& t, std::vector<Step>* out) {
  const std::string b = n.block + ".";
  auto add = [&](std::string fixed, std::string open = "") {
    out->push_back({std::move(fixed), std::move(open)});
  };
  size_t last = n.spatial.size() - 1;
  // A second spatial loop with more than one iteration goes to group.y.
  auto bind_y = [&](size_t except) {
    for (size_t k = last; k-- > 0;)
      if (k != except && n.spatial_extent[k] > 1) {
        add("bind " + b + n.spatial[k] + " group.y");
        return;
      }
  };
  const int64_t lanes = t.vector_lanes;
  if (!n.reduction) {
    const std::string& j = n.spatial[last];
    int64_t v = largest_divisor(n.spatial_extent[last], {64, 32, 16, 8, 4, 2});
    if (v > 1 && v < n.spatial_extent[last]) {
      add("split " + b + j + " " + std::to_string(v), "split " + b + j + " ?{16,32,64,128}");
      add("bind " + b + j + "_0 group.x");
      add("bind " + b + j + "_1 local.x");
    } else {
      add("bind " + b + j + " group.x");
    }
    bind_y(last);
    return;
  }
  const std::string& r = n.reduce.back();
  if (!n.spatial_contiguous && n.reduce_contiguous) {
    if (rfactor_into_lanes(n, lanes, 4 * lanes, add)) vector_partial_sums(n, add);
    // The outputs: several work-items per work-group (a device runs a group's items
    // together: PoCL in one loop, a GPU in one warp) rather than one group per output,
    // whose start-up then dominates a short dot. The space tries one item per group too.
    const std::string& j = n.spatial[last];
    const int64_t extent = n.spatial_extent[last];
    int64_t w = extent >= 16 ? largest_divisor(extent, {8, 4}) : 0;
    std::string groups;
    for (int64_t c : {2, 4, 8, 16})
      if (c < extent && extent % c == 0)
        groups += " | split " + b + j + " " + std::to_string(c) + " ; bind " + b + j +
                  "_0 group.x ; bind " + b + j + "_1 local.x";
    const std::string one = "bind " + b + j + " group.x";
    if (w > 1) {
      add("split " + b + j + " " + std::to_string(w), "one_of " + one + groups);
      add("bind " + b + j + "_0 group.x", "-");
      add("bind " + b + j + "_1 local.x", "-");
    } else {
      add(one, groups.empty() ? "" : "one_of " + one + groups);
    }
    bind_y(last);
    return;
  }
  if (n.spatial.size() >= 2 && !n.epilogue) {
    const std::string& i = n.spatial[last - 1];
    const std::string& j = n.spatial[last];
    int64_t ti = largest_divisor(n.spatial_extent[last - 1], {4, 2});
    int64_t tj = largest_divisor(n.spatial_extent[last], {lanes, lanes / 2});
    if (ti > 1 && tj > 1) {
      add("tile " + b + i + " " + b + j + " " + std::to_string(ti) + " " + std::to_string(tj),
          "tile " + b + i + " " + b + j + " ?{2,4,8} ?{4,8,16}");
      int64_t groups = n.spatial_extent[last] / tj;
      int64_t w = largest_divisor(groups, {8, 4, 2});
      std::string jj = j + "_0";
      if (w > 1) {
        add("split " + b + j + "_0 " + std::to_string(w), "split " + b + j + "_0 ?{2,4,8,16}");
        add("reorder " + b + i + "_0 " + b + j + "_0_0 " + b + j + "_0_1 " + b + r + " " + b + i +
            "_1 " + b + j + "_1");
        jj = j + "_0_1";
      } else {
        add("reorder " + b + i + "_0 " + b + j + "_0 " + b + r + " " + b + i + "_1 " + b + j + "_1");
      }
      add("cache_write " + n.block + " local");
      add("reverse_compute_at " + n.block + "_writeback " + b + jj);
      add("decompose_reduction " + n.block + " " + b + r);
      add("bind " + b + i + "_0 group.y");
      if (w > 1) {
        add("bind " + b + j + "_0_0 group.x");
        add("bind " + b + j + "_0_1 local.x");
      } else {
        add("bind " + b + j + "_0 group.x");
      }
      add("vectorize " + b + j + "_1");
      add("vectorize " + n.block + "_init." + j + "_1");
      add("vectorize " + n.block + "_writeback." + ax(n.spatial.size() - 1));
      add("unroll " + b + i + "_1");
      add("unroll " + n.block + "_init." + i + "_1");
      add("unroll " + n.block + "_writeback." + ax(n.spatial.size() - 2));
      return;
    }
  }
  add("bind " + b + n.spatial[last] + " group.x");
  bind_y(last);
}

// Whether every nest walks the same rows as the last, which is elementwise over them, and
// the others are elementwise too or reduce along the row (softmax's max and sum): then each
// producer can be computed inside the last nest's row loop (run_rules).
bool row_fusable(const std::vector<Nest>& nests) {
  if (nests.size() < 2) return false;
  const Nest& last = nests.back();
  if (last.reduction || last.spatial.size() < 2) return false;
  bool reduces = false;
  // A row is the last axis; the axes before it (one for a matrix, [b, n] for softmax3's
  // batch of matrices) name the rows, and every nest must walk the same ones.
  const size_t rows = last.spatial.size() - 1;
  for (size_t k = 0; k + 1 < nests.size(); ++k) {
    const Nest& n = nests[k];
    const bool row_reduction =
        n.reduction && !n.spatial_contiguous && n.reduce_contiguous && n.spatial.size() == rows;
    const bool same_shape = !n.reduction && n.spatial.size() == last.spatial.size();
    if (!(row_reduction || same_shape)) return false;
    for (size_t d = 0; d < rows; ++d)
      if (n.spatial_extent[d] != last.spatial_extent[d]) return false;
    reduces |= row_reduction;
  }
  return reduces;
}

// The space's form of an epilogue moved into a tile (epilogue_in_tile's steps, in `epilogue`):
// where the tile's loop order is a `one_of` group in `space` (the steps so far), each branch
// also moves the epilogue, under the loop that branch writes the tile back under, and the
// moving steps become part of the group ("-"); otherwise they stay as they are. The epilogue's
// own loops are vectorized, and unrolled where the sample's tile lets them.
void epilogue_in_space(std::vector<Step>* space, const std::string& writeback, const std::string& tile_loop,
                       std::vector<Step>* epilogue) {
  const std::string wb = "reverse_compute_at " + writeback + " ";
  Step* group = nullptr;
  for (Step& s : *space)
    if (s.open.rfind("one_of reorder ", 0) == 0 && s.open.find(wb) != std::string::npos) group = &s;
  for (Step& e : *epilogue) {
    const bool moves = e.fixed.rfind("vectorize ", 0) != 0 && e.fixed.rfind("unroll ", 0) != 0;
    e.open = !moves ? (e.fixed.rfind("unroll ", 0) == 0 ? "maybe 0.8 " + e.fixed : "") : group ? "-" : "";
  }
  if (!group) return;
  std::string open = group->open;
  for (size_t at = open.find(wb); at != std::string::npos; at = open.find(wb, at + 1)) {
    size_t loop_at = at + wb.size(), end = open.find(" ", loop_at);
    if (end == std::string::npos) end = open.size();
    const std::string loop = open.substr(loop_at, end - loop_at);
    std::string extra;
    for (const Step& e : *epilogue) {
      if (e.open != "-") continue;
      std::string step = e.fixed;
      if (step.rfind("reverse_compute_at ", 0) == 0 && step.size() > tile_loop.size())
        step = step.substr(0, step.size() - tile_loop.size()) + loop;
      extra += " ; " + step;
    }
    open.insert(end, extra);
    at = end + extra.size() - 1;
  }
  group->open = open;
}

// Applies the recipes' fixed steps one by one; `applied` gets the steps that applied.
RuleSchedule run_rules(const tir::PrimFunc& f, const RuleTarget& t, std::vector<Step>* applied) {
  RuleSchedule out;
  out.func = f;
  if (t.device != "cpu" && t.device != "opencl") return out;
  // Attention on opencl: the flash schedule as a whole, in place of the per-nest recipes
  // (the default schedule only: a space keeps the per-nest steps, whose numbers it opens).
  if (t.device == "opencl" && !applied) {
    std::string flash = flash_schedule(f, &out.notes);
    tensor::Schedule s(f);
    std::string why;
    if (!flash.empty() && s.apply_text(flash, &why)) {
      out.func = s.func();
      out.trace = flash;
      return out;
    }
  }
  // A group (a step whose space line also takes the "-" steps after it) is all or nothing:
  // when its first step is refused, the rest of it is skipped too.
  bool group_refused = false;
  std::set<std::string> default_only_buffers;
  auto apply = [&](Step s) {
    if (s.open == "-" && group_refused) {
      out.notes.push_back("skipped '" + s.fixed + "': its group's first step was refused");
      return false;
    }
    group_refused = false;
    if (s.fixed.empty()) {  // a step of the space only
      if (applied) applied->push_back(std::move(s));
      return true;
    }
    std::string canonical, why;
    std::set<std::string> before;
    if (s.open == kDefaultOnly)
      for (const tir::Buffer& b : out.func.buffers) before.insert(b.name);
    if (!tensor::apply_step(out.func, s.fixed, &canonical, &why)) {
      out.notes.push_back("skipped '" + s.fixed + "': " + why);
      group_refused = true;
      return false;
    }
    out.trace += canonical + "\n";
    // Buffers only the default makes (the fold's partial sums): the space never has them.
    if (s.open == kDefaultOnly)
      for (const tir::Buffer& b : out.func.buffers)
        if (!before.count(b.name)) default_only_buffers.insert(b.name);
    if (applied) applied->push_back(std::move(s));
    return true;
  };
  // A reduction that shares its loops with an epilogue (a fused relu, a bias) cannot have
  // its reduction loop moved outside a register tile: the epilogue is in the way. Fission
  // gives the epilogue a nest of its own first; the rules then see two nests. (A dot with
  // one row keeps its epilogue: its recipe needs no reordering.)
  for (const Nest& n : analyse(f)) {
    bool dot = !n.spatial_contiguous && n.reduce_contiguous;
    bool batch = n.spatial.size() >= 2 && n.spatial_extent[n.spatial.size() - 2] >= 2;
    if (n.epilogue && n.reduction && (!dot || batch))
      apply({"fission " + n.block + "." + n.spatial.front(), ""});
  }
  // The linear family with a batch (x[i, r] . W[j, r]: both operands contiguous in r) is a
  // matmul whose B is stored transposed. One dot product per output would need its partial
  // sums summed across vector lanes, and a buffer of them; re-laid out as W_t[r, j], the nest
  // takes the matmul's register tile instead, reading rows of W_t along j. On the CPU the
  // copy leaves the kernel: the runtime makes it once per weight tensor (MLAS's pre-packing).
  // Outputs narrower than a vector (10 classes) with a batch: a `linear` is re-laid out the
  // same way, and the matmul's narrow recipe takes a tile of rows, each row one vector
  // (cpu_recipe). Without a batch (too few rows to tile), a narrow matmul cannot fill the
  // lanes along j: with B re-laid out as B_t[j, r], each output is a dot product whose
  // partial sums fill them along r instead.
  if (t.device == "cpu")
    for (const Nest& n : analyse(out.func)) {
      if (!n.reduction) continue;
      const bool dot = !n.spatial_contiguous && n.reduce_contiguous;
      const bool batch = n.spatial.size() >= 2 && n.spatial_extent[n.spatial.size() - 2] >= kGemmBatch;
      const int64_t width = n.spatial_extent.back(), lanes = t.vector_lanes;
      const bool wide = width >= lanes && width % std::max<int64_t>(lanes / 2, 1) == 0;
      const bool narrow = narrow_rows(n, lanes) > 1;
      if (dot && batch && (wide || narrow) && !n.weight.empty()) {
        if (apply({"transform_layout " + n.weight + n.weight_perm, ""}))
          out.notes.push_back("nest " + n.block + ": dot with a batch: " + n.weight +
                              " re-laid out, then a matmul");
      } else if (!dot && !narrow && width < lanes && !n.row_operand.empty() && !n.row_perm.empty() &&
                 n.reduce_extent.back() >= 4 * lanes) {
        if (apply({"transform_layout " + n.row_operand + n.row_perm, ""}))
          out.notes.push_back("nest " + n.block + ": matmul narrower than a vector: " +
                              n.row_operand + " re-laid out, then a dot");
      }
    }
  std::vector<Nest> nests = analyse(out.func);
  // Rows fused (softmax, layer norm): every nest walks the same rows, and each row's
  // reductions (its max, its sum) feed the row's elementwise steps. Nest by nest, each pass
  // reads the whole tensor again from memory; with every producer computed inside the last
  // nest's row loop, a row is read once into cache and used by all of them. The recipes then
  // run per nest as before (their loops keep their names), with one parallel row loop.
  std::string shared_rows, outer_rows;  // the loop the nests share, and the outermost above it
  if (t.device == "cpu" && row_fusable(nests)) {
    const Nest& last = nests.back();
    tir::PrimFunc func = out.func;
    const std::string trace = out.trace;
    const size_t notes = out.notes.size(), steps = applied ? applied->size() : 0;
    bool ok = true;
    // Under the innermost row loop (i, inside the batch's b for rank 3): one row at a time.
    const std::string row_loop = last.block + "." + last.spatial[last.spatial.size() - 2];
    for (size_t k = nests.size() - 1; ok && k-- > 0;)
      ok = apply({"compute_at " + nests[k].block + " " + row_loop, ""});
    if (ok) {
      shared_rows = row_loop;
      outer_rows = last.block + "." + last.spatial[0];
      out.notes.push_back("rows fused: every nest under " + shared_rows);
    } else {  // all or nothing: back to the nests as they were
      out.func = std::move(func);
      out.trace = trace;
      out.notes.resize(notes);
      if (applied) applied->resize(steps);
    }
  }
  double work = 0;
  std::vector<Step> merged;  // the default's steps for a nest and the next, made one loop
  bool in_tile = false;      // the nests after a register tile are inside it
  for (size_t k = 0; k < nests.size(); ++k) {
    const Nest& n = nests[k];
    std::vector<Step> steps;
    const char* shape = !n.reduction                                    ? "elementwise"
                        : (!n.spatial_contiguous && n.reduce_contiguous) ? "dot"
                                                                          : "matmul";
    out.notes.push_back("nest " + n.block + ": " + shape + (n.epilogue ? " with an epilogue" : ""));
    if (t.device == "cpu") cpu_recipe(n, t, &steps);
    else opencl_recipe(n, t, &steps);
    work += n.iterations;
    // Under fused rows a producer's spatial loops are the shared row loops (a row's max has
    // [b, i] for softmax3): its recipe must not tile them, or the whole row's body is tiled
    // and unrolled with it. Parallel loops come once, at the end.
    const bool in_rows = !shared_rows.empty() && &n != &nests.back();
    std::vector<Step> keep;
    for (Step& s : steps)
      if (shared_rows.empty() || s.fixed.rfind("parallel ", 0) != 0)
        if (!in_rows || s.fixed.rfind("tile ", 0) != 0) keep.push_back(std::move(s));
    // An elementwise nest whose row the next nest reduces (softmax's exponentials and their
    // sum): the default runs both in one loop, where every step applies (tried on a copy
    // first). The space keeps each nest's own recipe: their steps become the space's alone.
    auto space_only = [&](std::vector<Step>& list) {
      for (Step& s : list)
        if (s.open != kDefaultOnly) apply({"", s.open.empty() ? s.fixed : s.open});
    };
    if (!merged.empty()) {  // n is the reduction of the pair begun at the nest before
      space_only(keep);
      for (Step& s : merged) apply(std::move(s));
      merged.clear();
      continue;
    }
    if (in_rows && t.device == "cpu" && k + 2 < nests.size()) {
      std::vector<Step> pair = merged_row_steps(n, nests[k + 1], t.vector_lanes);
      bool ok = !pair.empty();
      if (ok) {
        tir::PrimFunc trial = out.func;
        for (const Step& s : pair) {
          std::string canonical, why;
          ok = ok && tensor::apply_step(trial, s.fixed, &canonical, &why);
        }
      }
      if (ok) {
        merged = std::move(pair);
        out.notes.push_back("nests " + n.block + " and " + nests[k + 1].block + ": one loop over the row");
        space_only(keep);
        continue;
      }
    }
    if (in_tile) continue;  // an epilogue the tile before already holds, in the space too
    // The loop a register tile's writeback goes under: an epilogue after it can go there too.
    std::string tile_loop;
    const std::string wb = "reverse_compute_at " + n.block + "_writeback ";
    for (const Step& s : keep)
      if (s.fixed.rfind(wb, 0) == 0) tile_loop = s.fixed.substr(wb.size());
    const size_t before = out.trace.size();
    for (Step& s : keep) apply(std::move(s));
    // The nests after a register tile, elementwise over its result (a bias, a relu), each a
    // pass of its own over the whole output: inside the tile instead, each tile's outputs
    // finished while they are in registers, and no buffer for the tile's result (MNIST's
    // first layer, 64 x 784 x 128: 4 us of 72 per batch). In the space, where the tile's loop
    // order is a decision, each order's group of steps takes the epilogue under its own loop.
    if (t.device == "cpu" && shared_rows.empty() && !tile_loop.empty() && k + 1 < nests.size() &&
        out.trace.find(wb + tile_loop + "\n", before) != std::string::npos) {
      std::vector<Nest> rest(nests.begin() + long(k) + 1, nests.end());
      std::vector<Step> epilogue = rules_detail::epilogue_in_tile(out.func, n, rest, tile_loop);
      if (!epilogue.empty()) {
        out.notes.push_back("nest " + n.block + ": the nests after it inside its register tile");
        if (applied) epilogue_in_space(applied, n.block + "_writeback", tile_loop, &epilogue);
        for (Step& s : epilogue) apply(std::move(s));
        in_tile = true;
      }
    }
  }
  if (!shared_rows.empty()) {
    // With every nest under one row loop, each intermediate (the row's max, exponentials and
    // sum, and their rfactor partials) lives for one row: local, compacted to that row, it
    // takes a row's bytes on a thread's stack instead of a whole tensor per launch (softmax
    // 1024 x 1024: 4 KiB instead of 4 MiB). The time did not move measurably: the row was
    // in L1 either way, and exp bounds the loop.
    for (const tir::Buffer& b : std::vector<tir::Buffer>(out.func.buffers))
      if (b.role == tir::BufferRole::Temp && b.scope == tir::Scope::Global)
        apply({"set_scope " + b.name + " local",
               default_only_buffers.count(b.name) ? std::string(kDefaultOnly) : std::string()});
  }
  if (!shared_rows.empty() && work >= kParallelIterations)
    apply({"parallel " + outer_rows, "maybe 0.8 parallel " + outer_rows});
  return out;
}

}  // namespace

RuleSchedule default_schedule(const tir::PrimFunc& f, const RuleTarget& target) {
  return run_rules(f, target, nullptr);
}

std::string rule_space(const tir::PrimFunc& f, const RuleTarget& target) {
  std::vector<Step> applied;
  run_rules(f, target, &applied);
  std::string text;
  for (const Step& s : applied)
    if (s.open != "-" && s.open != kDefaultOnly) text += (s.open.empty() ? s.fixed : s.open) + "\n";
  return text;
}

}  // namespace descent::tune
