#include "lang/ast.h"

#include <iterator>
#include <string_view>

namespace descent {

Expr::~Expr() {
  std::vector<ExprPtr> work;
  for (auto& k : kids)
    if (k) work.push_back(std::move(k));
  while (!work.empty()) {
    ExprPtr e = std::move(work.back());
    work.pop_back();
    for (auto& k : e->kids)
      if (k) work.push_back(std::move(k));
  }  // each node is deleted with no kids left to recurse into
}

const char* type_name(Type t) {
  switch (t) {
    case Type::Unknown: return "unknown";
    case Type::Void: return "void";
    case Type::Int: return "int";
    case Type::Float: return "float";
    case Type::Bool: return "bool";
    case Type::Str: return "string";
    case Type::Tensor: return "tensor";
    case Type::Shape: return "shape";
  }
  return "?";
}

const char* op_symbol(UnaryOp op) { return op == UnaryOp::Neg ? "-" : "!"; }
const char* op_name(UnaryOp op) { return op == UnaryOp::Neg ? "neg" : "not"; }

const char* op_symbol(BinaryOp op) {
  static const char* s[] = {"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||"};
  return s[static_cast<int>(op)];
}
const char* op_name(BinaryOp op) {
  static const char* s[] = {"add", "sub", "mul", "div", "mod", "eq", "ne",
                            "lt",  "le",  "gt",  "ge",  "and", "or"};
  return s[static_cast<int>(op)];
}

static const char* const kBuiltinNames[] = {
    "",      "print", "sqrt",  "exp",  "log",    "sin",  "cos",  "abs",  "min",     "max",
    "floor", "float", "int",   "zeros", "ones",  "rand", "arange", "load", "save", "argmax",
    "reshape", "flatten", "rows", "eq", "mean", "grad", "param", "full", "sum_all"};

static_assert(std::size(kBuiltinNames) == static_cast<size_t>(Builtin::SumAll) + 1,
              "one name per Builtin, in the enum's order");

const char* builtin_name(Builtin b) { return kBuiltinNames[static_cast<int>(b)]; }

const std::vector<std::string>& builtin_names() {
  static const std::vector<std::string> names(std::begin(kBuiltinNames) + 1, std::end(kBuiltinNames));
  return names;
}

Builtin builtin_by_name(std::string_view name) {
  for (int i = 1; i <= static_cast<int>(Builtin::SumAll); ++i)
    if (name == kBuiltinNames[i]) return static_cast<Builtin>(i);
  return Builtin::None;
}

}  // namespace descent
