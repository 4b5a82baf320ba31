// Shared by the tensor tests: parse and check a source text with lang/, find a kernel in it
// and lower it with tensor::lower. Only lang/ and tensor/ are used (no Session), so a test of
// the tensor layer depends on nothing above it; a parse, check or lowering error fails the
// test (REQUIRE) with its message.
#pragma once
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "tensor/lower.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"

namespace descent::testing {

// The seed notes' two kernels at 128 x 128, which the schedule suites transform.
inline constexpr const char* kMatmul = R"(
kernel matmul(A: f32[128, 128], B: f32[128, 128]) -> f32[128, 128] {
  C[i, j] = sum(k) A[i, k] * B[k, j]
  return C
}
)";

inline constexpr const char* kMmRelu = R"(
kernel mm_relu(A: f32[128, 128], B: f32[128, 128]) -> f32[128, 128] {
  Y[i, j] = sum(k) A[i, k] * B[k, j]
  C[i, j] = max(Y[i, j], 0.0)
  return C
}
)";

// A parsed and checked program. Its kernels point into `program`, so keep it alive while
// they are used; a lowered PrimFunc owns everything it needs and may outlive it.
struct CheckedProgram {
  std::shared_ptr<Program> program = std::make_shared<Program>();
  Module module;
  std::vector<Diagnostic> diags;

  // The kernel called `name`; with no name, the program's only kernel (a source with more
  // than one must name it). Fails the test when there is none. Not const: a test may alter a
  // declaration by hand to reach the lowering's own checks.
  KernelDecl* kernel(const std::string& name = "") const {
    KernelDecl* found = nullptr;
    int count = 0;
    for (auto& s : program->body) {
      if (s->kind != StmtKind::KernelDecl) continue;
      ++count;
      if (name.empty() ? !found : s->kernel->name == name) found = s->kernel.get();
    }
    if (name.empty()) REQUIRE_MESSAGE(count == 1, "expected exactly one kernel, found " << count);
    REQUIRE_MESSAGE(found != nullptr, "no kernel '" << name << "'");
    return found;
  }
};

// Parses and checks `text` (as the file `file`); any diagnostic fails the test.
inline std::unique_ptr<CheckedProgram> parse_and_check(const std::string& text,
                                                       const std::string& file = "t.ds") {
  auto p = std::make_unique<CheckedProgram>();
  *p->program = parse(std::make_shared<SourceFile>(file, text), p->diags);
  REQUIRE_MESSAGE(p->diags.empty(), (p->diags.empty() ? std::string() : p->diags[0].message));
  bool ok = check(*p->program, p->module, {}, p->diags);
  REQUIRE_MESSAGE(ok, (p->diags.empty() ? std::string() : p->diags[0].message));
  return p;
}

// Lowers a kernel of `text` (see CheckedProgram::kernel for `name`) for the given argument
// shapes; with no shapes, those of tensor::shapes_for (dims as declared, named dims 64).
inline tir::PrimFunc lower_kernel_text(const std::string& text,
                                       std::vector<std::vector<int64_t>> shapes = {},
                                       const std::string& name = "",
                                       const std::string& file = "t.ds") {
  auto p = parse_and_check(text, file);
  const KernelDecl& k = *p->kernel(name);
  if (shapes.empty()) shapes = tensor::shapes_for(k, {});
  tir::PrimFunc f;
  Diagnostic error;
  REQUIRE_MESSAGE(tensor::lower(k, shapes, &f, &error), error.message);
  return f;
}

// One seeded random tensor per parameter of f (seeds first_seed, first_seed + 1, ...), in
// the shapes it was lowered for; and the pointers a kernel's run takes.
inline std::vector<tensor::Tensor> inputs_for(const tir::PrimFunc& f, int64_t first_seed = 1) {
  std::vector<tensor::Tensor> in(f.params.size());
  for (size_t i = 0; i < f.params.size(); ++i) {
    std::string error;
    REQUIRE_MESSAGE(tensor::rand(f.buffers[size_t(f.params[i])].shape, first_seed + int64_t(i),
                                 &in[i], &error),
                    error);
  }
  return in;
}

inline std::vector<const tensor::Tensor*> pointers(const std::vector<tensor::Tensor>& v) {
  std::vector<const tensor::Tensor*> p;
  for (const auto& t : v) p.push_back(&t);
  return p;
}

}  // namespace descent::testing
