// fuzz_schedule: the bytes choose one of the prelude's kernels (add, matmul, softmax, ...),
// small sizes for its named dims, and up to 12 schedule steps. The steps are decoded into
// schedule text over the nest's actual loop, block and buffer names (so most of them pass
// the parser and reach the primitives' own checks), with now and then a line of raw bytes,
// an undo/redo or a bad name. Each step goes through tensor::Schedule, as `:sched` does:
//   - a refused step must say why and leave the loop nest exactly as it was;
//   - after an accepted step, replaying trace() on the original gives the same nest, and
//     undo then redo comes back to it;
//   - at the end the scheduled nest, run on the reference interpreter with seeded inputs,
//     must equal the unscheduled nest's result (within 1e-4, the tolerance the tensor tests
//     use for reordered float sums: split/rfactor change the order of a sum).
// Schedules promise never to change a result; a crash or any of the above failing is a bug.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_common.h"
#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "tensor/lower.h"
#include "tensor/runtime.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"

using namespace descent;

namespace {

constexpr size_t kMaxSteps = 12;

// The prelude, parsed and checked once; its kernels point into `program`.
struct Prelude {
  std::shared_ptr<Program> program = std::make_shared<Program>();
  Module module;
  std::vector<const KernelDecl*> kernels;
  Prelude() {
    std::vector<Diagnostic> diags;
    *program = parse(std::make_shared<SourceFile>("prelude.ds", std::string(tensor::prelude_source())),
                     diags);
    if (!diags.empty() || !check(*program, module, {}, diags))
      fuzz::fail("the prelude does not compile: " + (diags.empty() ? "" : diags[0].message));
    for (auto& s : program->body)
      if (s->kind == StmtKind::KernelDecl) kernels.push_back(s->kernel.get());
  }
};

std::string pick(fuzz::Bytes& in, const std::vector<std::string>& names) {
  // One time in 16 a name that does not exist, to reach the "no such loop" paths.
  if (names.empty() || in.below(16) == 0) return "nope";
  return names[in.below(names.size())];
}

std::string factor(fuzz::Bytes& in) {
  static const char* const kFactors[] = {"2", "3", "4", "1", "5", "8", "16", "0", "-1", "x"};
  return kFactors[in.below(sizeof kFactors / sizeof *kFactors)];
}

// One schedule line decoded from the bytes, over the names the nest has now.
std::string decode_step(fuzz::Bytes& in, const tir::PrimFunc& f) {
  auto loops = tensor::sched::loop_names(f);
  auto blocks = tensor::sched::block_names(f);
  std::vector<std::string> buffers;
  for (const auto& b : f.buffers) buffers.push_back(b.name);
  static const char* const kScopes[] = {"local", "shared", "global"};
  static const char* const kTags[] = {"group.x", "group.y", "local.x", "local.z", "thread.x"};
  const auto& intrinsics = tensor::sched::tensor_intrinsics();
  switch (in.below(21)) {
    case 0: {
      std::string s = "split " + pick(in, loops) + " " + factor(in);
      if (in.below(4) == 0) s += " as " + pick(in, loops) + "_o " + "in" + std::to_string(in.below(3));
      return s;
    }
    case 1: return "tile " + pick(in, loops) + " " + pick(in, loops) + " " + factor(in) + " " + factor(in);
    case 2: {
      std::string s = "reorder";
      for (size_t i = 0, n = 2 + in.below(3); i < n; ++i) s += " " + pick(in, loops);
      return s;
    }
    case 3: {
      std::string s = "fuse " + pick(in, loops) + " " + pick(in, loops);
      if (in.below(4) == 0) s += " as " + pick(in, loops);
      return s;
    }
    case 4: return "unroll " + pick(in, loops);
    case 5: return "vectorize " + pick(in, loops);
    case 6: return "parallel " + pick(in, loops);
    case 7: return "bind " + pick(in, loops) + " " + kTags[in.below(5)];
    case 8: return "compute_at " + pick(in, blocks) + " " + pick(in, loops);
    case 9: return "reverse_compute_at " + pick(in, blocks) + " " + pick(in, loops);
    case 10: return "compute_inline " + pick(in, blocks);
    case 11: return "cache_read " + pick(in, blocks) + " " + pick(in, buffers) + " " + kScopes[in.below(3)];
    case 12: return "cache_write " + pick(in, blocks) + " " + kScopes[in.below(3)];
    case 13: return "decompose_reduction " + pick(in, blocks) + " " + pick(in, loops);
    case 14: return "rfactor " + pick(in, blocks) + " " + pick(in, loops);
    case 15: return "fission " + pick(in, loops);
    case 16: return "tensorize " + pick(in, in.below(2) ? loops : blocks) + " " +
                    intrinsics[in.below(intrinsics.size())].name;
    case 17: return "blockize " + pick(in, loops);
    case 18: return "online_softmax " + pick(in, blocks);
    case 19: return "merge " + pick(in, loops) + " " + pick(in, loops);
    default: return in.line(80);  // free text for the step parser
  }
}

std::vector<tensor::Tensor> seeded_inputs(const tir::PrimFunc& f) {
  std::vector<tensor::Tensor> in(f.params.size());
  for (size_t i = 0; i < f.params.size(); ++i) {
    std::string error;
    if (!tensor::rand(f.buffers[size_t(f.params[i])].shape, int64_t(i) + 1, &in[i], &error))
      fuzz::fail("rand: " + error);
  }
  return in;
}

tensor::Tensor interpret(const tir::PrimFunc& f, const std::vector<tensor::Tensor>& in,
                         const std::string& what) {
  std::vector<const tensor::Tensor*> args;
  for (const auto& t : in) args.push_back(&t);
  tensor::Tensor out;
  std::string error;
  if (!tir::interpret(f, args, &out, &error))
    fuzz::fail("the interpreter refuses the " + what + " nest: " + error, tir::print_script(f));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Prelude prelude;
  fuzz::Bytes in(data, size);
  const KernelDecl& kernel = *prelude.kernels[in.below(prelude.kernels.size())];
  // Small named dims (1..8, odd ones included so splits leave remainders), small inputs.
  // Every dim the kernel names gets one: a dim left to shapes_for's default (64) made
  // attention's h x s x t x d nest 16M iterations, past the fuzzer's 10 s per input.
  std::map<std::string, int64_t> dims;
  for (const auto& d : tensor::dim_names(kernel)) dims[d] = 1 + int64_t(in.below(8));
  tir::PrimFunc original;
  Diagnostic error;
  if (!tensor::lower(kernel, tensor::shapes_for(kernel, dims), &original, &error))
    fuzz::fail("a prelude kernel does not lower: " + error.message);
  auto inputs = seeded_inputs(original);
  tensor::Tensor want = interpret(original, inputs, "unscheduled");

  tensor::Schedule schedule(original);
  for (size_t n = 0; n < kMaxSteps && !in.empty(); ++n) {
    std::string before = tir::print_script(schedule.func());
    if (in.below(12) == 0) {  // undo, then redo: back where we were
      if (schedule.undo() && (!schedule.redo() || tir::print_script(schedule.func()) != before))
        fuzz::fail("undo then redo does not restore the nest", before,
                   tir::print_script(schedule.func()));
      continue;
    }
    std::string step = decode_step(in, schedule.func());
    std::string why;
    if (!schedule.apply(step, &why)) {
      if (why.empty()) fuzz::fail("step '" + step + "' refused without a reason");
      if (tir::print_script(schedule.func()) != before)
        fuzz::fail("refused step '" + step + "' changed the nest", before,
                   tir::print_script(schedule.func()));
      continue;
    }
    tensor::Schedule replay(original);
    if (!replay.apply_text(schedule.trace(), &why))
      fuzz::fail("the trace does not replay: " + why, schedule.trace());
    if (tir::print_script(replay.func()) != tir::print_script(schedule.func()))
      fuzz::fail("the replayed trace gives another nest:\n" + schedule.trace(),
                 tir::print_script(schedule.func()), tir::print_script(replay.func()));
  }
  tensor::Tensor got = interpret(schedule.func(), inputs, "scheduled");
  std::string why;
  if (!tensor::allclose(want, got, 1e-4, &why))
    fuzz::fail("the schedule changed the result: " + why + "\nschedule:\n" + schedule.trace(),
               tir::print_script(original), tir::print_script(schedule.func()));
  return 0;
}
