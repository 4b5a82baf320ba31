// Reverse-mode differentiation of kernels: adjoint kernels derived from index notation.
//
// For a kernel `K(p1, ..., pn) -> out`, the adjoint of parameter p is a new kernel that takes
// what it needs of K's parameters and `dout` (the gradient of some scalar loss with respect
// to every element of out) and returns dp, the gradient of the same loss with respect to
// every element of p. It is derived symbolically and written in Descent's own index
// notation, so it can be printed, read, lowered, scheduled and tuned like any kernel:
//
//   kernel linear(x: f32[n, k], w: f32[m, k]) -> f32[n, m] {
//     out[i, j] = sum(r) x[i, r] * w[j, r]          // forward
//
//   kernel linear_dx(w: f32[m, k], dout: f32[n, m]) -> f32[n, k] {
//     dx[i, r] = sum(j) dout[i, j] * w[j, r]        // derived
//
// The rules, applied stage by stage from the returned stage backwards (reverse mode):
//   - a nested reduction is hoisted into a stage of its own first (`out_acc`), so every stage
//     is either elementwise or one top-level reduction;
//   - each occurrence of a buffer X[a, b] in a stage T[I] = red(R) e contributes
//       dX[a, b] += sum over the stage's other axes of  dT[I] * de/dX[a, b]
//     so the axes X is not indexed by are summed (a broadcast becomes a reduction) and a
//     reduction's axes are dropped from the sum (a reduction becomes a broadcast);
//   - de/dX by the chain rule: + - * /, exp, log, sqrt, abs; max/min and a max/min reduction
//     pass the gradient to the selected element through a 0/1 mask (`x[i, j] >= 0.0` for
//     relu: ties go to the element the forward pass selected, or to every tied element of a
//     max reduction); comparisons (masks) have derivative 0;
//   - a buffer used several times sums its contributions, each renamed onto one set of axes;
//   - forward stages an adjoint needs (e.g. softmax's row sums) are recomputed in it.
// A construct the rules do not cover (a compound index such as x[i + r], an axis used twice
// in one access, an index that is a number) is refused with its location.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "lang/ast.h"
#include "lang/source.h"

namespace descent::tensor {

struct Adjoint {
  size_t param = 0;          // which parameter of the forward kernel this is the gradient of
  std::string name;          // the adjoint kernel's name: "linear_dx"
  std::string source;        // its Descent source, a complete `kernel ... { ... }`
  // What the adjoint kernel takes, in order: indices into the forward kernel's parameters
  // (the tensors the backward pass must keep, or recompute), then the output's gradient.
  std::vector<size_t> inputs;
  bool zero = false;         // the result does not depend on this parameter: dp is all zeros
  // The parsed and checked kernel (its declaration lives in `program`).
  std::shared_ptr<Program> program;
  const KernelDecl* kernel() const;
};

// The adjoint of every parameter of `kernel` (a kernel sema has checked), in parameter
// order. False with *error (the construct's location and why) when some body cannot be
// differentiated; no partial result then.
bool derive_adjoints(const KernelDecl& kernel, std::vector<Adjoint>* out, Diagnostic* error);

// The same for one parameter.
bool derive_adjoint(const KernelDecl& kernel, size_t param, Adjoint* out, Diagnostic* error);

// `:grad KERNEL` / `descent dump --stage grad`: the forward kernel's stages as a comment,
// then each adjoint's source.
std::string adjoints_to_text(const KernelDecl& kernel, const std::vector<Adjoint>& adjoints);

}  // namespace descent::tensor
