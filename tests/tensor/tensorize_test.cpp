// tensorize and the fused multiply-add it writes: a register tile of matmul matched against a
// tensor intrinsic's description and replaced by its implementation, computing the same on
// the reference interpreter, the CPU and OpenCL (where a device exists); every part of the
// description that does not match refused with that part named, the function left as it was.
#include <doctest/doctest.h>

#include "tests/tensor/kernel_util.h"

#include <string>

#include "pipeline/pipeline.h"
#include "tensor/backend.h"
#include "tensor/launch.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"

using namespace descent;
using namespace descent::tensor;
using descent::testing::lower_kernel_text;

namespace {

// matmul's register tile with its reduction outside, the init hoisted: the tile a BLAS
// micro-kernel computes, ready for an intrinsic.
const char* kTile =
    "tile i j 8 16\n"
    "reorder i_0 j_0 r i_1 j_1\n"
    "cache_write C local\n"
    "reverse_compute_at C_writeback j_0\n"
    "decompose_reduction C r\n";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

tir::PrimFunc matmul64() {
  return lower_kernel_text(R"(
kernel matmul(A: f32[64, 64], B: f32[64, 64]) -> f32[64, 64] {
  C[i, j] = sum(r) A[i, r] * B[r, j]
  return C
}
)");
}

std::string refusal(const std::string& schedule, const tir::PrimFunc& f = matmul64()) {
  Schedule s(f);
  std::string error;
  size_t last = schedule.rfind('\n', schedule.size() - 2);
  std::string before = last == std::string::npos ? "" : schedule.substr(0, last + 1);
  REQUIRE_MESSAGE(s.apply_text(before, &error), error);
  std::string nest = tir::print_script(s.func());
  CHECK_FALSE(s.apply_text(schedule.substr(before.size()), &error));
  CHECK(tir::print_script(s.func()) == nest);  // a refused step changes nothing
  return error;
}

}  // namespace

TEST_CASE("tensorize: the tile becomes the intrinsic's implementation, and computes the same") {
  tir::PrimFunc f = matmul64();
  Schedule s(f);
  std::string error;
  REQUIRE_MESSAGE(s.apply_text(std::string(kTile) + "tensorize C.i_1 cpu.fma_8x16\n", &error), error);
  std::string text = tir::print_script(s.func());
  INFO(text);
  CHECK(contains(text, "# tensorized: cpu.fma_8x16\n"));
  CHECK(contains(text, "for i_1 in T.unroll(8):"));
  CHECK(contains(text, "for j_1 in T.vectorized(16):"));
  CHECK(contains(text, "= T.fma(A[vi, vr], B[vr, vj], C_local["));
  CHECK(contains(s.trace(), "tensorize C.i_1 cpu.fma_8x16\n"));
  CHECK(contains(tir::print_c(s.func()), "fmaf("));
  // The same numbers as the nest before (fma rounds once: allclose, not bit-equal).
  std::vector<Tensor> in = descent::testing::inputs_for(f);
  Tensor want, got;
  REQUIRE_MESSAGE(tir::interpret(f, descent::testing::pointers(in), &want, &error), error);
  REQUIRE_MESSAGE(tir::interpret(s.func(), descent::testing::pointers(in), &got, &error), error);
  std::string why;
  CHECK_MESSAGE(allclose(want, got, 1e-4, &why), why);
  // A fused multiply-add counts as two flops, as the multiply and the add it replaced.
  CHECK(kernel_cost(s.func()).flops == doctest::Approx(kernel_cost(f).flops));
}

// matmul 64 with `schedule` run on the cpu and on OpenCL, each checked against the reference
// interpreter. Only a machine without an OpenCL device skips that half: a device that fails
// is a failure. False when OpenCL was skipped.
bool run_everywhere(Session& session, const std::string& schedule) {
  std::string error;
  REQUIRE_MESSAGE(session.select_kernel("matmul", {{"n", 64}, {"k", 64}, {"m", 64}}, &error), error);
  REQUIRE_MESSAGE(session.schedule_text(schedule, &error), error);
  Session::KernelRun cpu = session.run_kernel("cpu", true);
  INFO(cpu.error);
  CHECK(cpu.ok);
  CHECK(cpu.checked);
  std::string no_device;
  if (!tensor::find_backend("opencl")->open(&no_device)) {
    MESSAGE("no OpenCL device: " << no_device);
    return false;
  }
  Session::KernelRun ocl = session.run_kernel("opencl", true);
  INFO(ocl.error);
  CHECK(ocl.ok);
  CHECK(ocl.checked);
  return true;
}

TEST_CASE("tensorize: compiled for the cpu (llvm.fma) and OpenCL (fma on floatN), checked") {
  Session session;
  bool opencl = run_everywhere(session, std::string(kTile) + "tensorize C.i_1 cpu.fma_8x16\n");
  CHECK(contains(session.kernel_view("llvm").text, "@llvm.fma.v16f32"));
  if (opencl) CHECK(contains(session.kernel_view("opencl").text, "fma((float16)("));
}

TEST_CASE("tensorize: each part of the description that differs is named") {
  const std::string tile = kTile;
  // The intrinsic must exist.
  CHECK(contains(refusal(tile + "tensorize C.i_1 cpu.fma_9x9\n"), "no tensor intrinsic 'cpu.fma_9x9' (intrinsics: cpu.fma_1x8,"));
  // Its tile size must be the nest's.
  CHECK(refusal(tile + "tensorize C.i_1 cpu.fma_4x16\n") ==
        "line 1: cannot tensorize 'C.i_1' with cpu.fma_4x16: the description's loops are 4 x 16 (i, then j); "
        "'i_1' x 'j_1' is 8 x 16");
  // The init still inside the tile.
  CHECK(contains(refusal("tile i j 8 16\nreorder i_0 j_0 r i_1 j_1\ntensorize i_1 cpu.fma_8x16\n"),
                 "block 'C' still has its init inside the tile: decompose_reduction C first"));
  // The reduction inside the tile.
  CHECK(contains(refusal("tile i j 8 16\ntensorize i_1 cpu.fma_8x16\n"),
                 "inside 'j_1' there is another loop ('r'): reorder the reduce loop outside the tile"));
  // A loop with nothing like the tile under it.
  CHECK(contains(refusal(tile + "tensorize C.i_0 cpu.fma_8x16\n"), "the description is two nested loops"));
  // An operand that depends on both loops of the tile: no broadcast, no row.
  tir::PrimFunc scaled = lower_kernel_text(R"(
kernel scaled(A: f32[64, 64], B: f32[64, 64]) -> f32[64, 64] {
  C[i, j] = sum(r) A[i, r] * B[i, j]
  return C
}
)");
  CHECK(contains(refusal(tile + "tensorize C.i_1 cpu.fma_8x16\n", scaled),
                 "the description multiplies A[i] (on i only) by B[j] (on j only); here A[vi, vr] "
                 "(on i_1) times B[vi, vj] (on i_1 and j_1)"));
  // The same tile with its loops swapped still matches: the description names no buffer, so
  // B plays A's part (a broadcast along the outer loop) and A plays B's.
  {
    tir::PrimFunc f = matmul64();
    Schedule s(f);
    std::string error;
    CHECK_MESSAGE(s.apply_text("tile i j 16 8\nreorder i_0 j_0 r j_1 i_1\ndecompose_reduction C r\n"
                               "tensorize C.j_1 cpu.fma_8x16\n", &error), error);
  }
  // Not a reduction at all.
  tir::PrimFunc add = lower_kernel_text(R"(
kernel add(a: f32[8, 16], b: f32[8, 16]) -> f32[8, 16] {
  c[i, j] = a[i, j] + b[i, j]
  return c
}
)");
  std::string error;
  CHECK_FALSE(sched::tensorize(add, "i", "cpu.fma_8x16", &error));
  CHECK(error == "cannot tensorize 'i' with cpu.fma_8x16: block 'c' is not a reduction: the "
                 "description accumulates (C[i, j] += A[i] * B[j])");
}

TEST_CASE("tensor intrinsics: each a description paired with an implementation") {
  const auto& all = sched::tensor_intrinsics();
  REQUIRE(all.size() >= 20);
  const sched::TensorIntrin* cpu = sched::find_intrinsic("cpu.fma_8x16");
  REQUIRE(cpu);
  CHECK(cpu->m == 8);
  CHECK(cpu->n == 16);
  CHECK(contains(cpu->description, "C[i, j] += A[i] * B[j]"));
  CHECK(contains(cpu->implementation, "llvm.fma"));
  const sched::TensorIntrin* ocl = sched::find_intrinsic("opencl.fma_4x8");
  REQUIRE(ocl);
  CHECK(contains(ocl->implementation, "float8"));
  CHECK(sched::find_intrinsic("gpu.fma_8x16") == nullptr);
}

// ---- blockize: a tile made one block, the unit tensorize replaces -----------------------------

TEST_CASE("blockize: the tile becomes block C_o over tiles, computing the same everywhere") {
  tir::PrimFunc f = matmul64();
  Schedule s(f);
  std::string error;
  REQUIRE_MESSAGE(s.apply_text(std::string(kTile) + "blockize C.i_1\n", &error), error);
  std::string text = tir::print_script(s.func());
  INFO(text);
  // The outer block chooses the tile (the loops outside it), the inner one the position.
  CHECK(contains(text, "with T.block(\"C_o\"):\n"));
  CHECK(contains(text, "vi_o, vj_o, vr_o = T.axis.remap(\"SSR\", [i_0, j_0, r])\n"));
  CHECK(contains(text, "vi = T.axis.spatial(64, vi_o * 8 + i_1)\n"));
  CHECK(contains(text, "vj = T.axis.spatial(64, vj_o * 16 + j_1)\n"));
  CHECK(contains(text, "vr = T.axis.reduce(64, vr_o)\n"));
  CHECK(text.find("for i_1, j_1 in T.grid(8, 16):", text.find("with T.block(\"C_o\")")) != std::string::npos);
  CHECK(contains(s.trace(), "blockize C.i_1\n"));
  CHECK(contains(tir::print_c(s.func()), "block C_o"));
  // Exactly the numbers of the nest before (nothing is reordered), and the same flop count.
  std::vector<Tensor> in = descent::testing::inputs_for(f);
  Tensor want, got;
  REQUIRE_MESSAGE(tir::interpret(f, descent::testing::pointers(in), &want, &error), error);
  REQUIRE_MESSAGE(tir::interpret(s.func(), descent::testing::pointers(in), &got, &error), error);
  std::string why;
  CHECK_MESSAGE(allclose(want, got, 0.0, &why), why);
  CHECK(kernel_cost(s.func()).flops == doctest::Approx(kernel_cost(f).flops));
}

TEST_CASE("blockize: compiled for the cpu and OpenCL with the block left in, checked") {
  Session session;
  run_everywhere(session, std::string(kTile) + "blockize C.i_1\nvectorize C.j_1\nparallel C.i_0\n");
  CHECK(contains(session.kernel_view("tir").text, "with T.block(\"C_o\")"));
}

TEST_CASE("blockize then tensorize the block: the same nest as tensorizing the loop") {
  tir::PrimFunc f = matmul64();
  Schedule by_loop(f), by_block(f);
  std::string error;
  REQUIRE_MESSAGE(by_loop.apply_text(std::string(kTile) + "tensorize C.i_1 cpu.fma_8x16\n", &error), error);
  REQUIRE_MESSAGE(by_block.apply_text(std::string(kTile) + "blockize C.i_1\ntensorize C_o cpu.fma_8x16\n", &error),
                  error);
  // The block's variables fold back into the tile: one level of blocks again, and every
  // primitive applies afterwards.
  CHECK(tir::print_script(by_block.func()) == tir::print_script(by_loop.func()));
  CHECK_MESSAGE(by_block.apply("parallel C.i_0", &error), error);
  CHECK_MESSAGE(by_block.apply("split C.j_0 2", &error), error);
  // A loop inside the blockized tile may be named too (the block stays).
  Schedule inside(f);
  REQUIRE_MESSAGE(inside.apply_text(std::string(kTile) + "blockize C.i_1\ntensorize C.i_1 cpu.fma_8x16\n", &error),
                  error);
  std::string text = tir::print_script(inside.func());
  CHECK(contains(text, "with T.block(\"C_o\")"));
  CHECK(contains(text, "# tensorized: cpu.fma_8x16\n"));
  std::vector<Tensor> in = descent::testing::inputs_for(f);
  Tensor want, got;
  REQUIRE_MESSAGE(tir::interpret(f, descent::testing::pointers(in), &want, &error), error);
  REQUIRE_MESSAGE(tir::interpret(inside.func(), descent::testing::pointers(in), &got, &error), error);
  std::string why;
  CHECK_MESSAGE(allclose(want, got, 1e-4, &why), why);
}

TEST_CASE("blockize: a binding that does not split, a tile that is not whole, and the rest refused") {
  // The whole nest is no tile: nothing outside chooses one.
  CHECK(refusal("blockize C.i\n") ==
        "line 1: cannot blockize 'C.i': no iteration variable of block 'C' depends on the loops "
        "outside the tile: the whole nest is the tile");
  // A split that does not divide: a predicate guards the tile's edge.
  CHECK(contains(refusal("split i 10\nblockize i_1\n"), "cannot blockize 'i_1': a predicate guards block 'C'"));
  // Not a perfect nest down to one block.
  tir::PrimFunc mm_relu = lower_kernel_text(descent::testing::kMmRelu);
  CHECK(contains(refusal("blockize i\n", mm_relu), "loop 'i' is ambiguous"));
  CHECK(contains(refusal(std::string(kTile) + "blockize C.j_0\n"),
                 "cannot blockize 'C.j_0': the loops under it must lead to exactly one block (a perfect nest)"));
  // A fused loop mixes the tile and the loops outside it.
  CHECK(contains(refusal("fuse i j\nsplit i_j_fused 32\nblockize i_j_fused_1\n"),
                 "iteration variable 'vi' ((i_j_fused_0 * 32 + i_j_fused_1) // 64) does not split into "
                 "tile and position"));

  // Twice: a tile inside a block over tiles.
  CHECK(contains(refusal("tile i j 8 16\nblockize i_1\nblockize j_1\n"),
                 "cannot blockize 'j_1': it is already inside block 'C_o'"));
  // Until it is tensorized, the steps that reason about one level of blocks refuse.
  CHECK(refusal("tile i j 8 16\nblockize i_1\nsplit i_0 2\n") ==
        "line 1: cannot split while block 'C_o' is a block over a tile (blockize): only tensorize, "
        "unroll, vectorize, parallel and bind apply until it is tensorized; do this step before the blockize");
  // The reduction's loop is outside the tile: it may not run in parallel, as before.
  CHECK(contains(refusal("tile i j 8 16\nreorder i_0 j_0 r i_1 j_1\nblockize i_1\nparallel r\n"),
                 "it carries the reduction of block 'C_o' (reduce axis vr_o)"));
  // tensorize of a block that holds no tile.
  CHECK(contains(refusal(std::string(kTile) + "tensorize C cpu.fma_8x16\n"),
                 "block 'C' is not a block over a tile: blockize a tile's outer loop first"));
}
