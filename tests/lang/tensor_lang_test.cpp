// The language side of the tensor layer: kernels and tensor code through the parser, sema,
// the printers and the AST walker. The walker runs against a small fake TensorRuntime that
// records every call, so these tests need nothing from tensor/.
#include <doctest/doctest.h>

#include <map>

#include "lang/fold.h"
#include "lang/tensor_api.h"
#include "lang/walker.h"
#include "tests/lang/unit_util.h"

using namespace descent;
using namespace descent::unit;

namespace {
using Lines = std::vector<std::string>;

// Parses and checks one input against a fresh (or given) Module.
struct Checked {
  std::shared_ptr<Program> program = std::make_shared<Program>();
  Module module;
  std::vector<Diagnostic> diags;
  bool ok = false;
  Lines errors() const { return locs(diags); }
  std::string sexpr() const {
    std::string s = print_tree_sexpr(ast_to_tree(*program));
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }
};

Checked check_text(const std::string& text) {
  Checked c;
  *c.program = parse(std::make_shared<SourceFile>("t.ds", text), c.diags);
  if (!c.diags.empty()) return c;
  c.ok = check(*c.program, c.module, {}, c.diags);
  return c;
}

Lines errors_of(const std::string& text) { return check_text(text).errors(); }

// A TensorRuntime that keeps tensors as (dims, values) and logs what it is asked to do.
// Kernel calls produce a tensor of the first argument's shape filled with 1.
class FakeRuntime final : public TensorRuntime {
 public:
  Lines log;
  std::string fail_next;  // when set, the next create/call/load/save fails with this message

  int64_t make_shape(const std::vector<int64_t>& dims) override {
    shapes.push_back(dims);
    return static_cast<int64_t>(shapes.size() - 1);
  }
  const std::vector<int64_t>& shape_dims(int64_t h) const override {
    return shapes.at(static_cast<size_t>(h));
  }
  bool create(Builtin which, const std::vector<int64_t>& dims, const std::vector<int64_t>& args,
              int64_t* t, std::string* error) override {
    log.push_back(std::string("create ") + builtin_name(which) + " " + format_shape(dims) +
                  (args.empty() ? "" : " seed " + std::to_string(args[0])));
    if (failing(error)) return false;
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    std::vector<double> v(n, which == Builtin::Ones ? 1.0 : 0.0);
    if (which == Builtin::Arange)
      for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
    *t = add(dims, v);
    return true;
  }
  bool call_kernel(const KernelDecl& k, const std::vector<int64_t>& args, int64_t* t,
                   std::string* error) override {
    std::string line = "call " + k.name + "(";
    for (size_t i = 0; i < args.size(); ++i) line += (i ? ", " : "") + std::to_string(args[i]);
    log.push_back(line + ")");
    if (failing(error)) return false;
    const auto& dims = tensors.at(static_cast<size_t>(args.at(0))).first;
    size_t n = tensors.at(static_cast<size_t>(args.at(0))).second.size();
    *t = add(dims, std::vector<double>(n, 1.0));
    return true;
  }
  const std::vector<int64_t>& tensor_dims(int64_t t) const override {
    return tensors.at(static_cast<size_t>(t)).first;
  }
  bool element(int64_t t, const std::vector<int64_t>& index, double* out,
               std::string*) override {
    const auto& [dims, v] = tensors.at(static_cast<size_t>(t));
    size_t flat = 0;
    for (size_t d = 0; d < dims.size(); ++d) flat = flat * dims[d] + index[d];
    *out = v.at(flat);
    return true;
  }
  bool sum_all(int64_t t, double* out, std::string*) override {
    *out = 0;
    for (double x : tensors.at(static_cast<size_t>(t)).second) *out += x;
    return true;
  }
  bool format(int64_t t, std::string* out, std::string*) override {
    *out = "tensor(" + format_shape(tensors.at(static_cast<size_t>(t)).first) + ")";
    return true;
  }
  bool load(const std::string& path, int64_t* t, std::string* error) override {
    log.push_back("load " + path);
    if (failing(error)) return false;
    *t = add({2}, {5.0, 6.0});
    return true;
  }
  bool save(int64_t t, const std::string& path, std::string* error) override {
    log.push_back("save " + std::to_string(t) + " " + path);
    return !failing(error);
  }

 private:
  bool failing(std::string* error) {
    if (fail_next.empty()) return false;
    *error = fail_next;
    fail_next.clear();
    return true;
  }
  int64_t add(std::vector<int64_t> dims, std::vector<double> v) {
    tensors.emplace_back(std::move(dims), std::move(v));
    return static_cast<int64_t>(tensors.size() - 1);
  }
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::pair<std::vector<int64_t>, std::vector<double>>> tensors;
};

// Runs checked inputs on the AST walker with the fake runtime, REPL style.
struct TensorMachine {
  Module module;
  GlobalStore globals;
  FakeRuntime runtime;
  std::unique_ptr<Engine> engine = make_ast_walker();
  bool with_runtime = true;

  // Output lines, then "error L:C: message" for a runtime or compile error.
  Lines run(const std::string& text, bool echo = false) {
    auto program = std::make_shared<Program>();
    std::vector<Diagnostic> d;
    *program = parse(std::make_shared<SourceFile>("t.ds", text), d);
    globals.resize(module.globals.size());
    if (!d.empty() || !check(*program, module, globals.defined, d)) {
      Lines e = locs(d);
      for (auto& l : e) l = "compile " + l;
      return e;
    }
    module.programs.push_back(program);
    std::string out;
    RunOptions o;
    o.out = [&](std::string_view t) { out += t; };
    o.echo = echo;
    o.tensors = with_runtime ? &runtime : nullptr;
    RunResult r = engine->run(*program, module, globals, o);
    Lines lines;
    size_t start = 0;
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i] == '\n') {
        lines.push_back(out.substr(start, i - start));
        start = i + 1;
      }
    if (!r.ok) lines.push_back("error " + locs({r.error})[0]);
    return lines;
  }
};

const char* kMmRelu =
    "kernel mm_relu(A: f32[128, 128], B: f32[128, 128]) -> f32[128, 128] {\n"
    "  Y[i, j] = sum(k) A[i, k] * B[k, j]\n"
    "  C[i, j] = max(Y[i, j], 0.0)\n"
    "  return C\n"
    "}\n";

}  // namespace

TEST_CASE("tensor parse: the LANGUAGE.md example parses and checks") {
  Checked c = check_text(std::string(kMmRelu) +
                         "kernel linear(x: f32[n, k], w: f32[m, k]) -> f32[n, m] {\n"
                         "  out[i, j] = sum(r) x[i, r] * w[j, r]\n"
                         "  return out\n"
                         "}\n"
                         "kernel relu(x: f32[n, m]) -> f32[n, m] { out[i, j] = max(x[i, j], 0.0); return out }\n"
                         "\n"
                         "x = rand([1, 3072], 1)\n"
                         "w = rand([200, 3072], 2)\n"
                         "y = relu(linear(x, w))\n"
                         "print(y.shape, sum_all(y))\n");
  REQUIRE(c.errors() == Lines{});
  CHECK(c.ok);
  CHECK(c.module.kernels.size() == 3);
  CHECK(c.module.find_kernel("linear") == 1);
  CHECK(c.program->uses_tensors);
  const KernelDecl& mm = *c.program->body[0]->kernel;
  CHECK(mm.name == "mm_relu");
  CHECK(mm.params.size() == 2);
  CHECK(mm.params[0].tensor.dims[1].value == 128);
  CHECK(mm.has_return_type);
  CHECK(mm.stages.size() == 2);
  CHECK(mm.stages[0].indices == Lines{"i", "j"});
  CHECK(mm.result == "C");
  CHECK(mm.index == 0);
  const Expr& red = *mm.stages[0].value;
  CHECK(red.kind == ExprKind::Reduce);
  CHECK(red.text == "sum");
  CHECK(red.axes == Lines{"k"});
  CHECK(red.kids[0]->kind == ExprKind::Binary);
  const KernelDecl& lin = *c.program->body[1]->kernel;
  CHECK(lin.params[0].tensor.dims[0].name == "n");
  // The call of a kernel is typed and points at it.
  const Stmt& y = *c.program->body[5];
  CHECK(y.var_type == Type::Tensor);
  CHECK(y.expr->kernel == 2);
  CHECK(y.expr->kids[0]->kernel == 1);
}

TEST_CASE("tensor parse: kernels print as trees, s-expressions and DOT") {
  Parsed p = parse_text("kernel relu(x: f32[n, m]) -> f32[n, m] { out[i, j] = max(x[i, j], 0.0); return out }");
  REQUIRE(p.errors() == Lines{});
  CHECK(p.sexpr() == "(program (kernel relu (params x) (stage out (i j) (max (index x i j) 0.0)) (return out)))");
  std::string text = print_tree_text(ast_to_tree(p.program));
  CHECK(text ==
        "program\n"
        "  kernel relu : f32[n, m]\n"
        "    params\n"
        "      param x : f32[n, m]\n"
        "    stage out\n"
        "      i j\n"
        "      max\n"
        "        index x\n"
        "          axis i\n"
        "          axis j\n"
        "        float 0.0\n"
        "    return out\n");
  std::string dot = print_tree_dot(ast_to_tree(p.program), "t");
  CHECK(dot.find("[label=\"kernel relu\\n: f32[n, m]\"]") != std::string::npos);
  CHECK(dot.find("[label=\"stage out\"]") != std::string::npos);

  CHECK(parsed_sexpr("kernel mm(A: f32[4, 4], B: f32[4, 4]) { Y[i, j] = sum(k) A[i, k] * B[k, j] + 1; return Y }") ==
        "(program (kernel mm (params A B) (stage Y (i j) (sum (k) (add (mul (index A i k) (index B k j)) 1))) (return Y)))");
  CHECK(parsed_sexpr("kernel c(x: f32[8, 8], k: f32[3, 3]) -> f32[6, 6] {\n"
                     "  out[i, j] = sum(r, s) x[i + r, j + s] * k[r, s]\n  return out\n}") ==
        "(program (kernel c (params x k) (stage out (i j) (sum (r s) (mul (index x (add i r) (add j s)) (index k r s)))) (return out)))");
  // A call of max whose arguments are not all bare names, or that ends the expression, is
  // the elementwise max; sum(k) followed by an expression is a reduction.
  CHECK(parsed_sexpr("kernel m(a: f32[4]) { o[i] = max(i, i) + max(k) a[k]; return o }") ==
        "(program (kernel m (params a) (stage o (i) (add (max i i) (max (k) (index a k)))) (return o)))");
  // Scalar code: tensor types, lists, element reads, .shape, strings as file names.
  CHECK(parsed_sexpr("fn f(x: f32[1, 784]) -> f32[1, 10] { return x }\n"
                     "t = zeros([2, 3])\nprint(t[1, 2], t.shape)\nsave(t, \"a.npy\")") ==
        "(program (fn f (params x:f32[1, 784]) (block (return x))) (assign t (call zeros (list 2 3))) "
        "(call print (index t 1 2) (field shape t)) (call save t \"a.npy\"))");
}

TEST_CASE("tensor parse: syntax errors in kernels are located and recovered from") {
  CHECK(parse_text("kernel k(A: f32[4]) -> f32[4] {\n  B[i] = A[\n}").errors() ==
        Lines{"3:1: expected expression", "1:1: kernel 'k' must end with 'return' and a buffer name"});
  CHECK(parse_text("kernel k(A: f32[4]) {\n  B[i, i] = A[i]\n  return B\n}").errors() ==
        Lines{"2:8: index 'i' appears twice in 'B[...]'"});
  CHECK(parse_text("kernel k(A: f32[4]) {\n  B[i] = A[i] +\n  C[i] = * 2\n  return C\n}\nx = )").errors() ==
        Lines{"2:16: expected expression", "3:10: expected expression", "6:5: expected expression"});
  CHECK(parse_text("kernel k(A: f32[4]) {\n  return A\n  B[i] = A[i]\n}").errors() ==
        Lines{"3:3: 'return' must be the last statement of a kernel"});
  CHECK(parse_text("kernel k(A: f64[4]) { B[i] = A[i]; return B }").errors() ==
        Lines{"1:13: unknown tensor element type 'f64' (use f32)"});
  CHECK(parse_text("kernel k(A: f32[0]) { B[i] = A[i]; return B }").errors() ==
        Lines{"1:17: tensor dimension must be between 1 and 2147483648"});
  CHECK(parse_text("kernel k(A: f32[]) { B[i] = A[i]; return B }").errors() ==
        Lines{"1:17: expected a dimension (a number or a name)"});
  CHECK(parse_text("kernel k(A: f32[4]) { B = A[0]; return B }").errors() ==
        Lines{"1:25: expected '[' after the stage's buffer name"});
  CHECK(parse_text("if true {\n  kernel k(A: f32[4]) { B[i] = A[i]; return B }\n}").errors() ==
        Lines{"2:3: kernels must be declared at top level"});
  CHECK(parse_text("x = (1 + 2)[0]").errors() == Lines{"1:12: only a variable can be indexed"});
  CHECK(parse_text("x = t.").errors() == Lines{"1:7: expected a field name after '.'"});
  // Nesting limits hold for the new brackets too.
  std::string deep = "x = " + std::string(300, '[') + "1" + std::string(300, ']');
  CHECK(parse_text(deep).errors() == Lines{"1:261: nesting too deep"});
}

TEST_CASE("tensor sema: softmax, linear and a conv2d with a declared result check") {
  Checked c = check_text(
      "kernel softmax(x: f32[n, m]) -> f32[n, m] {\n"
      "  mx[i] = max(j) x[i, j]\n"
      "  e[i, j] = exp(x[i, j] - mx[i])\n"
      "  s[i] = sum(j) e[i, j]\n"
      "  out[i, j] = e[i, j] / s[i]\n"
      "  return out\n"
      "}\n"
      "kernel linear_relu(x: f32[n, k], w: f32[m, k], b: f32[m]) -> f32[n, m] {\n"
      "  out[i, j] = max(sum(r) x[i, r] * w[j, r] + b[j], 0)\n"
      "  return out\n"
      "}\n"
      "kernel conv2d(x: f32[8, 8], k: f32[3, 3]) -> f32[6, 6] {\n"
      "  out[i, j] = sum(r, s) x[i + r, j + s] * k[r, s]\n"
      "  return out\n"
      "}\n"
      "kernel scale(x: f32[n]) { y[i] = -x[2 * i + 1] * 2 + i + x[i]; z[i] = y[i] + x[i]; return z }\n");
  REQUIRE(c.errors() == Lines{});
  // Int literals in a kernel body become f32 literals; index arithmetic stays int.
  const Expr& relu = *c.program->body[1]->kernel->stages[0].value;
  CHECK(relu.builtin == Builtin::Max);
  CHECK(relu.kids[1]->kind == ExprKind::FloatLit);
  CHECK(relu.kids[1]->type == Type::Float);
  // Kernel declarations alone do not make a program tensor code.
  CHECK_FALSE(c.program->uses_tensors);
}

TEST_CASE("tensor sema: kernel errors, exactly located") {
  auto k = [](const std::string& body, const std::string& params = "A: f32[4, 4]") {
    return errors_of("kernel k(" + params + ") {\n" + body + "\n}");
  };
  CHECK(k("  B[i] = A[i, 0]\n  return B", "A: i32[4, 4]") ==
        Lines{"1:13: i32 tensors are not supported yet (use f32)"});
  CHECK(k("  B[i] = 1.0\n  return B", "n: int") ==
        Lines{"1:10: kernel parameter 'n' must be a tensor, e.g. n: f32[n]",
              "2:5: axis 'i' of 'B' is never a whole index of a buffer, so its extent is unknown "
              "(use it alone, as in x[i], or declare the kernel's return type)"});
  CHECK(k("  B[i, j] = Q[i, j] + A[i, j]\n  return B") == Lines{"2:13: unknown buffer 'Q'"});
  CHECK(k("  B[i, j] = A[i]\n  return B") ==
        Lines{"2:5: axis 'i' of 'B' is never a whole index of a buffer, so its extent is unknown "
              "(use it alone, as in x[i], or declare the kernel's return type)",
              "2:8: axis 'j' of 'B' is never a whole index of a buffer, so its extent is unknown "
              "(use it alone, as in x[j], or declare the kernel's return type)",
              "2:13: 'A' has 2 dimensions, but is indexed with 1"});
  CHECK(k("  B[i, j] = A[i, j]\n  C[i] = B[i, j, 0] + A[i, i]\n  return C") ==
        Lines{"3:10: 'B' has 2 dimensions, but is indexed with 3"});
  CHECK(k("  B[i, j] = A[i * j, j] + A[i, j]\n  return B") ==
        Lines{"2:15: an index must be an affine expression of axes and int literals (+, -, and * by a literal)"});
  CHECK(k("  B[i, j] = A[i, 1.5] + A[i, j]\n  return B") ==
        Lines{"2:18: an index must be an affine expression of axes and int literals (+, -, and * by a literal)"});
  CHECK(k("  B[i, j] = A[i, q] + A[i, j]\n  return B") == Lines{"2:18: unknown axis 'q'"});
  CHECK(k("  B[i, j] = A[i, j] + q\n  return B") == Lines{"2:23: unknown axis 'q'"});
  // A named dim of a parameter's type is a value (its size: a mean divides by it), never an
  // index; an axis of the same name wins.
  CHECK(k("  B[i, j] = A[i, j] / m + n\n  return B", "A: f32[n, m]") == Lines{});
  CHECK(k("  B[i, j] = A[i, n] + A[i, j]\n  return B", "A: f32[n, m]") == Lines{"2:18: unknown axis 'n'"});
  CHECK(k("  B[n, j] = A[n, j] * n\n  return B", "A: f32[n, m]") == Lines{});
  CHECK(k("  B[i, j] = A[i, j] + A\n  return B") ==
        Lines{"2:23: buffer 'A' must be indexed, as in A[i]"});
  CHECK(k("  B[i, j] = sum(i) A[i, j]\n  return B") ==
        Lines{"2:13: reduce axis 'i' shadows an axis of the same name"});
  CHECK(k("  B[i] = sum(k) max(k) A[i, k]\n  return B") ==
        Lines{"2:17: reduce axis 'k' shadows an axis of the same name"});
  CHECK(k("  B[i, j] = A[i, j] + sum(k) 1.0\n  return B") ==
        Lines{"2:23: reduce axis 'k' is never a whole index of a buffer, so its extent is unknown "
              "(use it alone, as in x[k])"});
  CHECK(k("  A[i, j] = A[i, j]\n  B[i, j] = A[i, j]\n  return B") ==
        Lines{"2:3: 'A' is a parameter; a stage must define a new buffer"});
  CHECK(k("  B[i, j] = A[i, j]\n  B[i, j] = A[j, i]\n  return B") ==
        Lines{"3:3: buffer 'B' is already defined"});
  CHECK(k("  B[i, j] = A[i, j]\n  return Z") == Lines{"3:10: unknown buffer 'Z'"});
  CHECK(k("  B[i, j] = A[i, j]\n  return A") ==
        Lines{"3:10: 'A' is a parameter; a kernel returns a buffer one of its stages computes"});
  CHECK(k("  B[i, j] = B[i, j] + A[i, j]\n  return B") == Lines{"2:13: unknown buffer 'B'"});
  CHECK(k("  B[i, j] = A[i, j] < 1.0\n  return B") == Lines{});  // a comparison is a 0/1 mask
  CHECK(k("  B[i, j] = A[i, j] % 2.0\n  return B") ==
        Lines{"2:21: operator '%' is not supported in kernels"});
  CHECK(k("  B[i, j] = (A[i, j] < 1.0) && (A[i, j] > 0.0)\n  return B") ==
        Lines{"2:29: operator '&&' is not supported in kernels"});
  CHECK(k("  B[i, j] = sin(A[i, j])\n  return B") ==
        Lines{"2:13: 'sin' cannot be called in a kernel (only max, min, exp, log, sqrt and abs)"});
  CHECK(k("  B[i, j] = exp(A[i, j], 1)\n  return B") == Lines{"2:13: 'exp' expects 1 argument, got 2"});
  // The returned stage may take extents from the declared return type, no other stage can.
  CHECK(errors_of("kernel k(A: f32[4]) -> f32[4, 4] {\n  B[i, j] = A[i]\n  return B\n}") == Lines{});
  CHECK(errors_of("kernel k(A: f32[4]) -> f32[4] {\n  B[i, j] = A[i]\n  return B\n}") ==
        Lines{"3:10: kernel 'k' returns 1 dimension, but 'B' has 2 dimensions"});
  // Names: a kernel is neither a function nor a variable, and one input defines it once.
  CHECK(errors_of("kernel print(A: f32[4]) { B[i] = A[i]; return B }") ==
        Lines{"1:8: 'print' is already a builtin function"});
  CHECK(errors_of("fn f() { return 1 }\nkernel f(A: f32[4]) { B[i] = A[i]; return B }") ==
        Lines{"2:8: 'f' is already a function"});
  CHECK(errors_of("kernel f(A: f32[4]) { B[i] = A[i]; return B }\nkernel f(A: f32[4]) { B[i] = A[i]; return B }") ==
        Lines{"2:8: kernel 'f' is already defined"});
  CHECK(errors_of("kernel f(A: f32[4]) { B[i] = A[i]; return B }\nf = 1") ==
        Lines{"2:1: cannot assign to kernel 'f'"});
  CHECK(errors_of("kernel f(A: f32[4]) { B[i] = A[i]; return B }\nx = f") ==
        Lines{"2:5: 'f' is a kernel, not a variable"});
}

TEST_CASE("tensor sema: tensors and shapes in scalar code") {
  const std::string k = "kernel relu(x: f32[n, m]) -> f32[n, m] { out[i, j] = max(x[i, j], 0.0); return out }\n";
  CHECK(errors_of("t = zeros([2, 3])\nu = t + t") ==
        Lines{"2:7: operator '+' is not defined on tensors (use the prelude's add(a, b))"});
  CHECK(errors_of("t = zeros([2, 3])\nu = t * 2.0") ==
        Lines{"2:7: operator '*' is not defined on tensors (use the prelude's mul(a, b))"});
  CHECK(errors_of("t = zeros([2, 3])\nb = t == t") == Lines{"2:7: operator '==' is not defined on tensors"});
  CHECK(errors_of("s = [2, 3]\nu = -s") == Lines{"2:5: operator '-' is not defined on shapes"});
  CHECK(errors_of("t = zeros(3)") ==
        Lines{"1:11: argument 1 of 'zeros' must be shape, got int (a shape is a list, e.g. [2, 3])"});
  CHECK(errors_of("t = rand([2], 1.5)") == Lines{"1:15: argument 2 of 'rand' must be int, got float"});
  CHECK(errors_of("t = load(3)") == Lines{"1:10: argument 1 of 'load' must be string, got int"});
  CHECK(errors_of("x = sum_all(3)") == Lines{"1:13: argument 1 of 'sum_all' must be tensor, got int"});
  CHECK(errors_of("x = save(zeros([1]), \"a.npy\")") == Lines{"1:5: 'save' does not return a value"});
  CHECK(errors_of("t = ones([2, 2.0])") == Lines{"1:14: shape dimensions must be int, got float"});
  CHECK(errors_of("t = ones([])") == Lines{"1:10: a shape needs at least one dimension"});
  CHECK(errors_of("t = ones([2])\nx = t[0.5]") == Lines{"2:7: index must be int, got float"});
  CHECK(errors_of("s = [2]\nx = s[0, 1]") == Lines{"2:5: a shape takes one index, got 2"});
  CHECK(errors_of("n = 3\nx = n[0]") == Lines{"2:5: 'n' is an int; only tensors and shapes can be indexed"});
  CHECK(errors_of("n = 3\nx = n.shape") == Lines{"2:7: '.shape' needs a tensor, got int"});
  CHECK(errors_of("t = ones([2])\nx = t.size") == Lines{"2:7: unknown field 'size' (tensors have only .shape)"});
  CHECK(errors_of(k + "y = relu(1)") == Lines{"2:10: argument 1 of 'relu' must be tensor, got int"});
  CHECK(errors_of(k + "y = relu()") == Lines{"2:5: 'relu' expects 1 argument, got 0"});
  CHECK(errors_of("t = ones([2])\nt = 1") == Lines{"2:1: cannot assign int to tensor variable 't'"});
  CHECK(errors_of("fn f(x: f32[2]) -> f32[2] { return 1 }") == Lines{"1:36: 'f' must return tensor, got int"});

  // Types flow: an element is a float, a shape's entry an int, a kernel call a tensor.
  Checked c = check_text(k + "fn g(x: f32[1, 4]) -> f32[1, 4] { return relu(x) }\n"
                             "fn h(n) { return n + 1 }\n"
                             "fn top(x: f32[1, 4]) { print(g(x)) }\n"
                             "t = rand([1, 4], 7)\nf = t[0, 1]\nd = t.shape[1]\nr = g(t)\n");
  CHECK(c.errors() == Lines{"7:12: only a variable can be indexed"});
  c = check_text(k + "fn g(x: f32[1, 4]) -> f32[1, 4] { return relu(x) }\n"
                     "fn h(n) { return n + 1 }\n"
                     "fn top(x: f32[1, 4]) { print(g(x)) }\n"
                     "fn mk() { t = zeros([1]); print(t) }\n"
                     "fn via() { n = h(2); if n > 10 { mk() } }\n"
                     "t = rand([1, 4], 7)\nf = t[0, 1]\ns = t.shape\nd = s[1]\nr = g(t)\n");
  REQUIRE(c.errors() == Lines{});
  CHECK(c.module.globals[c.module.find_global("f")].type == Type::Float);
  CHECK(c.module.globals[c.module.find_global("s")].type == Type::Shape);
  CHECK(c.module.globals[c.module.find_global("d")].type == Type::Int);
  CHECK(c.module.globals[c.module.find_global("r")].type == Type::Tensor);
  auto uses = [&](const char* name) {
    return c.module.functions[c.module.find_function(name)].decl->uses_tensors;
  };
  CHECK(uses("g"));
  CHECK_FALSE(uses("h"));
  CHECK(uses("top"));
  CHECK(uses("mk"));
  CHECK(uses("via"));  // only through its call of mk
  CHECK(c.program->uses_tensors);
  // Plain scalar code with a kernel around is not tensor code; a call of a tensor function is.
  CHECK_FALSE(check_text(k + "fn h(n) { return n + 1 }\nprint(h(1))").program->uses_tensors);
  CHECK(check_text("fn z() { t = zeros([1]) }\nz()").program->uses_tensors);
}

TEST_CASE("tensor sema: a failed input leaves the kernels table as it was; redefinition bumps the version") {
  Module m;
  std::vector<Diagnostic> d;
  auto input = [&](const std::string& text) {
    auto p = std::make_shared<Program>();
    *p = parse(std::make_shared<SourceFile>("t.ds", text), d);
    bool ok = d.empty() && check(*p, m, {}, d);
    if (ok) m.programs.push_back(p);
    return ok;
  };
  REQUIRE(input("kernel k(A: f32[4]) { B[i] = A[i]; return B }"));
  CHECK(m.kernels.size() == 1);
  CHECK(m.kernels[0].version == 0);
  const KernelDecl* first = m.kernels[0].decl;
  CHECK_FALSE(input("kernel k(A: f32[4]) { B[i] = A[i] * 2; return B }\nkernel j(A: f32[4]) { return A }"));
  CHECK(m.kernels.size() == 1);
  CHECK(m.kernels[0].decl == first);
  CHECK(m.kernels[0].version == 0);
  CHECK(m.find_kernel("j") == -1);
  d.clear();
  REQUIRE(input("kernel k(A: f32[4]) { B[i] = A[i] * 2; return B }"));
  CHECK(m.kernels[0].version == 1);
  CHECK(m.kernels[0].decl != first);
  // A later function or global may take an earlier kernel's name (the prelude's add must not
  // break a program that defines its own add); a failed input gives nothing up.
  REQUIRE(input("kernel add(a: f32[n], b: f32[n]) { c[i] = a[i] + b[i]; return c }\n"
                "kernel relu(x: f32[n]) { y[i] = max(x[i], 0); return y }"));
  CHECK_FALSE(input("relu = 1\nx = undefined_name"));
  CHECK(m.find_kernel("relu") == 2);
  d.clear();
  REQUIRE(input("fn add(a, b) -> int { return a + b }\nrelu = add(1, 2)"));
  CHECK(m.find_kernel("add") == -1);
  CHECK(m.find_kernel("relu") == -1);
  CHECK(m.kernels.size() == 3);
  CHECK(m.globals[m.find_global("relu")].type == Type::Int);
}

TEST_CASE("tensor walker: handles flow through the runtime, print and echo use its formats") {
  TensorMachine m;
  CHECK(m.run("kernel relu(x: f32[n, m]) -> f32[n, m] { out[i, j] = max(x[i, j], 0.0); return out }\n"
              "fn twice(x: f32[n, m]) -> f32[n, m] { return relu(relu(x)) }\n"
              "x = rand([2, 3], 5)\n"
              "y = twice(x)\n"
              "xs = x.shape\n"
              "print(y, y.shape, xs[1], sum_all(y), y[1, 2])\n"
              "a = arange(4)\n"
              "print(a[3], sum_all(a), sum_all(ones([2, 2])), zeros([1]))\n"
              "save(y, \"out.npy\")\n"
              "l = load(\"in.npy\")\nprint(l[1])\n"
              "s = [4, 5]\nprint(s, s[0])\n") ==
        Lines{"tensor([2, 3]) [2, 3] 3 6.0 1.0", "3.0 6.0 4.0 tensor([1])", "6.0", "[4, 5] 4"});
  CHECK(m.runtime.log == Lines{"create rand [2, 3] seed 5", "call relu(0)", "call relu(1)",
                               "create arange [4]", "create ones [2, 2]", "create zeros [1]",
                               "save 2 out.npy", "load in.npy"});
  // A tensor in a global outlives the input that made it (REPL).
  CHECK(m.run("print(y.shape)\ny", /*echo=*/true) == Lines{"[2, 3]", "tensor([2, 3])"});
}

TEST_CASE("tensor walker: errors are runtime errors located at the expression") {
  TensorMachine m;
  CHECK(m.run("t = zeros([2, 3])\nprint(t[1, 3])") ==
        Lines{"error 2:12: index 3 out of range for dim 1 of size 3"});
  CHECK(m.run("print(t[-1, 0])") == Lines{"error 1:9: index -1 out of range for dim 0 of size 2"});
  CHECK(m.run("s = t.shape\nprint(s[2])") ==
        Lines{"error 2:9: index 2 out of range for a shape of 2 dimensions"});
  CHECK(m.run("n = 0\nu = zeros([2, n])") ==
        Lines{"error 2:15: shape dimensions must be at least 1, got 0"});
  CHECK(m.run("u = arange(0)") == Lines{"error 1:5: arange(n) needs n >= 1, got 0"});
  m.runtime.fail_next = "cannot open 'nope.npy'";
  CHECK(m.run("print(1)\nu = load(\"nope.npy\")\nprint(2)") ==
        Lines{"1", "error 2:5: cannot open 'nope.npy'"});
  m.runtime.fail_next = "shape mismatch: x is [2, 3]";
  CHECK(m.run("kernel k(x: f32[4]) { y[i] = x[i]; return y }\nprint(0)\nv = k(t)") ==
        Lines{"0", "error 3:5: shape mismatch: x is [2, 3]"});
  // A function's declared tensor shapes are checked when it is called.
  CHECK(m.run("fn f(a: f32[2, 4]) -> int { return 1 }\nprint(f(t))") ==
        Lines{"error 2:9: argument 'a' of 'f' must have shape [2, 4], got [2, 3]"});
  CHECK(m.run("fn g(a: f32[n, n]) -> int { return 1 }\nprint(g(t))") ==
        Lines{"error 2:9: argument 'a' of 'g' must have shape [n, n], got [2, 3]"});
  m.with_runtime = false;
  CHECK(m.run("print(1)\nw = zeros([1])") == Lines{"1", "error 2:5: tensor code needs a tensor runtime"});
}

TEST_CASE("tensor fold: kernels and tensor builtins are left alone") {
  Checked c = check_text("kernel k(x: f32[4]) { y[i] = x[i] * (2 + 3); return y }\na = arange(2 + 1)\n");
  REQUIRE(c.errors() == Lines{});
  Program folded = clone_program(*c.program);
  CHECK(fold_constants(folded) == 1);  // 2 + 1 only
  std::string s = print_tree_sexpr(ast_to_tree(folded));
  CHECK(s == "(program (kernel k (params x) (stage y (i) (mul (index x i) (add 2.0 3.0))) (return y)) "
             "(assign a (call arange 3)))\n");
  CHECK(folded.uses_tensors);
  CHECK(folded.body[0]->kernel->stages[0].value->type == Type::Float);
}

TEST_CASE("tensor sema: a function's declared result shape is checked where the shapes are known") {
  const std::string relu =
      "kernel relu(x: f32[n, m]) -> f32[n, m] { out[i, j] = max(x[i, j], 0.0); return out }\n";
  CHECK(check_text(relu + "fn bad(x: f32[1, 4]) -> f32[1, 3] { return relu(x) }\n").errors() ==
        Lines{"2:44: 'bad' must return a tensor of shape [1, 3], got [1, 4]"});
  CHECK(check_text("fn r(x: f32[2]) -> f32[2, 1] { return x }\n").errors() ==
        Lines{"1:39: 'r' must return a tensor of shape [2, 1], got [2]"});
  // Through a function's declared result, with its named dims bound by the argument.
  CHECK(check_text("fn id(x: f32[n, 3]) -> f32[n, 3] { return x }\n"
                   "fn g(y: f32[5, 3]) -> f32[4, 3] { return id(y) }\n")
            .errors() == Lines{"2:42: 'g' must return a tensor of shape [4, 3], got [5, 3]"});
  // Named dims may match at run time, a reassigned parameter's shape is not known here, and
  // the declared shape agreeing is fine: no compile-time error.
  CHECK(check_text(relu + "fn ok(x: f32[1, 4]) -> f32[1, 4] { return relu(x) }\n").errors() ==
        Lines{});
  CHECK(check_text(relu + "fn named(x: f32[n, 4]) -> f32[k, 4] { return relu(x) }\n").errors() ==
        Lines{});
  CHECK(check_text("fn re(x: f32[2]) -> f32[3] { x = zeros([3])\n return x }\n").errors() ==
        Lines{});
}

TEST_CASE("tensor parse: a reduction body starting with '-' is one error that says what to write") {
  CHECK(check_text("kernel k(A: f32[4, 4]) -> f32[4] {\n  s[i] = sum(k) -A[i, k]\n  return s\n}\n")
            .errors() ==
        Lines{"2:17: a reduction body that starts with '-' needs parentheses: write sum(k) (-...)"});
  CHECK(check_text("kernel k(A: f32[4, 4]) -> f32[4] {\n  s[i] = max(k) - A[i, k]\n  return s\n}\n")
            .errors() ==
        Lines{"2:17: a reduction body that starts with '-' needs parentheses: write max(k) (-...)"});
  CHECK(check_text("kernel k(A: f32[4, 4]) -> f32[4] {\n  s[i] = sum(k) (-A[i, k])\n  return s\n}\n")
            .errors() == Lines{});
}
