// ONNX -> Descent (see onnx_import.h). One pass over the nodes in the file's order (ONNX
// requires topological order), keeping for every ONNX value the Descent variable that holds
// it and its inferred shape; each node appends one line to the model's body. Weights are
// loaded as globals the first time a node uses them, after any folding the node needs
// (Gemm's alpha and beta, a [1, N] bias seen as [N]), so the program only holds what runs.
// The ops themselves are onnx_ops_*.cpp, one family per file; onnx_internal.h lists them.
#include "importer/onnx_import.h"

#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "importer/onnx_internal.h"
#include "lang/ast.h"
#include "lang/text.h"
#include "lang/token.h"
#include "tensor/runtime.h"

namespace descent::importer::onnx_internal {
namespace {

// A name from the model as it may appear in the program's comments and in messages: valid
// UTF-8 without control characters (a damaged file's bytes would stop the program from
// lexing; a newline in a node's name would end its comment and start code).
std::string printable(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_length(s, i);
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7f))) {
      out += '?';
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

const std::vector<std::string>& reserved_names() {
  // Names a generated variable must not take: keywords, builtins, the prelude's kernels,
  // and the names the program's own scaffolding uses.
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {"model", "n", "batch", "out", "in_shape"};
    // Every prelude kernel, read from the prelude itself ("kernel NAME(" lines), so a kernel
    // added there can never be shadowed by a generated variable.
    std::string_view prelude = tensor::prelude_source();
    for (size_t at = prelude.find("\nkernel "); at != std::string_view::npos;
         at = prelude.find("\nkernel ", at + 1)) {
      size_t start = at + 8, end = prelude.find('(', start);
      if (end != std::string_view::npos) n.emplace_back(prelude.substr(start, end - start));
    }
    for (auto k : keywords()) n.emplace_back(k);
    for (const auto& b : builtin_names()) n.push_back(b);
    return n;
  }();
  return names;
}

// A variable name for a node's output: the graph's output keeps its ONNX name ("logits");
// others are named after the node, whose name exporters make from the module path
// ("/fc1/Gemm" -> fc1_gemm; nn.Sequential's "/0/Gemm" -> layer0_gemm).
std::string friendly(std::string_view name) {
  std::string s;
  size_t start = 0;
  while (start < name.size() && !std::isalnum(static_cast<unsigned char>(name[start]))) ++start;
  if (start < name.size() && std::isdigit(static_cast<unsigned char>(name[start]))) s = "layer";
  for (size_t i = start; i < name.size(); ++i) s += static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
  return s;
}

const char* type_name(int t) {
  switch (t) {
    case onnx::TensorProto::FLOAT: return "float32";
    case onnx::TensorProto::DOUBLE: return "float64";
    case onnx::TensorProto::FLOAT16: return "float16";
    case onnx::TensorProto::BFLOAT16: return "bfloat16";
    case onnx::TensorProto::INT8: return "int8";
    case onnx::TensorProto::UINT8: return "uint8";
    case onnx::TensorProto::INT32: return "int32";
    case onnx::TensorProto::INT64: return "int64";
    case onnx::TensorProto::BOOL: return "bool";
    case onnx::TensorProto::STRING: return "string";
    default: return "an unknown type";
  }
}

}  // namespace

std::string Names::make(std::string_view hint, std::string_view fallback, bool global) {
  std::string s;
  for (char c : hint) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (ok) s += c;
    else if (!s.empty() && s.back() != '_') s += '_';
  }
  while (!s.empty() && s.back() == '_') s.pop_back();
  if (s.empty()) s = fallback;
  if (s[0] >= '0' && s[0] <= '9') s = std::string(fallback.substr(0, 1)) + s;
  const auto& r = reserved_names();
  std::string name = s;
  auto clash = [&](const std::string& v) {
    return taken_.count(v) || std::find(r.begin(), r.end(), v) != r.end() ||
           (global && (v == "x" || v == "y"));
  };
  for (int k = 2; clash(name); ++k)
    name = s + "_" + std::to_string(k);
  taken_.insert(name);
  return name;
}

bool Names::claim(const std::string& name) {
  const auto& r = reserved_names();
  if (taken_.count(name) || std::find(r.begin(), r.end(), name) != r.end()) return false;
  taken_.insert(name);
  return true;
}

std::string Importer::node_name(const onnx::NodeProto& node) const {
  return node.name().empty() ? "#" + std::to_string(node_index_ + 1) : node.name();
}
std::string Importer::label(const onnx::NodeProto& node) const {
  return fmt::format("node '{}' ({})", printable(node_name(node)), printable(node.op_type()));
}

// ---- constants -----------------------------------------------------------------------------

bool Importer::read_tensor(const onnx::TensorProto& t, const std::string& what, Constant* c) {
  c->onnx_name = t.name();
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    return fail(what + " keeps its data in an external file; save the model as one file "
                       "(onnx.save_model(m, path, save_as_external_data=False))");
  int64_t count = 1;
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && count > tensor::kMaxElements / d))
      return fail(what + " has an invalid shape");
    count *= d;
  }
  if (count == 0) return fail(what + " is empty (a dim is 0); Descent tensors have no empty dims");
  const std::string& raw = t.raw_data();
  if (t.data_type() == onnx::TensorProto::FLOAT) {
    c->is_float = true;
    c->scalar = dims.empty();
    std::vector<int64_t> shape = dims.empty() ? std::vector<int64_t>{1} : dims;
    std::string why;
    if (!tensor::zeros(shape, &c->data, &why)) return fail(what + ": " + why);
    if (!raw.empty()) {
      if (static_cast<int64_t>(raw.size()) != count * 4)
        return fail(fmt::format("{} has {} bytes of data but its shape {} needs {}", what,
                                raw.size(), tensor::shape_text(shape), count * 4));
      std::memcpy(c->data.data.data(), raw.data(), raw.size());  // little-endian, as x86
    } else {
      if (t.float_data_size() != count)
        return fail(fmt::format("{} has {} values but its shape {} needs {}", what,
                                t.float_data_size(), tensor::shape_text(shape), count));
      std::copy(t.float_data().begin(), t.float_data().end(), c->data.data.data());
    }
    return true;
  }
  if (t.data_type() == onnx::TensorProto::INT64) {
    c->is_float = false;
    c->dims = dims;
    if (!raw.empty()) {
      if (static_cast<int64_t>(raw.size()) != count * 8)
        return fail(fmt::format("{} has {} bytes of data but needs {}", what, raw.size(), count * 8));
      c->ints.resize(count);
      std::memcpy(c->ints.data(), raw.data(), raw.size());
    } else {
      if (t.int64_data_size() != count)
        return fail(fmt::format("{} has {} values but needs {}", what, t.int64_data_size(), count));
      c->ints.assign(t.int64_data().begin(), t.int64_data().end());
    }
    return true;
  }
  // int32 (indices, some exporters' shapes) and bool (masks) are kept in the two forms
  // above: int32 widened to int64, bool as f32 0 and 1. ONNX stores both in int32_data
  // when there is no raw data.
  bool is_bool = t.data_type() == onnx::TensorProto::BOOL;
  if (is_bool || t.data_type() == onnx::TensorProto::INT32) {
    size_t width = is_bool ? 1 : 4;
    std::vector<int64_t> v(count);
    if (!raw.empty()) {
      if (static_cast<int64_t>(raw.size()) != count * int64_t(width))
        return fail(fmt::format("{} has {} bytes of data but needs {}", what, raw.size(), count * int64_t(width)));
      for (int64_t i = 0; i < count; ++i) {
        int32_t x = 0;
        if (is_bool) x = raw[size_t(i)] != 0;
        else std::memcpy(&x, raw.data() + i * 4, 4);
        v[size_t(i)] = x;
      }
    } else {
      if (t.int32_data_size() != count)
        return fail(fmt::format("{} has {} values but needs {}", what, t.int32_data_size(), count));
      std::copy(t.int32_data().begin(), t.int32_data().end(), v.begin());
    }
    if (!is_bool) {
      c->is_float = false;
      c->dims = dims;
      c->ints = std::move(v);
      return true;
    }
    c->is_float = c->is_bool = true;
    c->scalar = dims.empty();
    std::string why;
    if (!tensor::zeros(dims.empty() ? std::vector<int64_t>{1} : dims, &c->data, &why))
      return fail(what + ": " + why);
    for (int64_t i = 0; i < count; ++i) c->data.data[size_t(i)] = v[size_t(i)] != 0 ? 1.0f : 0.0f;
    return true;
  }
  return fail(fmt::format("{} holds {} data; Descent imports float32 weights (and int64, int32 "
                          "and bool constants)",
                          what, type_name(t.data_type())));
}

std::string Importer::weight(const Constant& c, const tensor::Tensor* folded, std::string_view suffix,
                             std::string_view folded_note) {
  std::string key = c.onnx_name + "\n" + std::string(suffix);
  auto it = loaded_.find(key);
  if (it != loaded_.end()) return it->second;
  std::string var = names_.make(friendly(c.onnx_name + std::string(suffix)), "w", true);
  const tensor::Tensor& data = folded ? *folded : c.data;
  Weight w;
  w.file = var + ".npy";
  w.onnx_name = c.onnx_name;
  w.data.shape = data.shape;
  w.data.data = data.data;
  std::string dir = options_.load_dir.empty() ? options_.out_dir : options_.load_dir;
  std::string path = dir.empty() ? w.file : (std::filesystem::path(dir) / w.file).string();
  std::string note = c.onnx_name.empty() ? "" : fmt::format(" \"{}\"", c.onnx_name);
  if (!folded_note.empty()) note += ", " + std::string(folded_note);
  globals_.push_back(fmt::format("{} = load(\"{}\")|# {}{}", var, path,
                                 tensor::shape_text(data.shape), note));
  out_->weights.push_back(std::move(w));
  loaded_[key] = var;
  return var;
}

// ---- the graph ------------------------------------------------------------------------------

bool Importer::input(const onnx::NodeProto& n, int i, Value* v) {
  if (i >= n.input_size() || n.input(i).empty())
    return node_fail(n, fmt::format("input {} is missing", i + 1));
  auto it = values_.find(n.input(i));
  if (it == values_.end())
    return node_fail(n, fmt::format("uses '{}' before any node makes it (the nodes must be in "
                                    "topological order)", n.input(i)));
  *v = it->second;
  return true;
}

void Importer::emit(const onnx::NodeProto& n, const Shape& shape, const std::string& code, int output) {
  const std::string& out = n.output(output);
  bool graph_output = false;
  for (const auto& o : graph_->output()) graph_output = graph_output || o.name() == out;
  std::string hint = graph_output || n.name().empty() ? out : friendly(n.name());
  if (output > 0 && !graph_output && !n.name().empty()) hint += "_" + std::to_string(output);
  std::string var = names_.make(hint, "t");
  body_.push_back(fmt::format("  {} = {}|# {} {}", var, code,
                              label(n).substr(5), shape_str(shape)));  // drop "node "
  values_[out] = Value{var, shape, nullptr};
  out_->nodes.push_back({node_name(n),
                         n.op_type(), code, shape_str(shape)});
}

void Importer::alias(const onnx::NodeProto& n, const Value& v, const std::string& note) {
  values_[n.output(0)] = v;
  out_->nodes.push_back({node_name(n), n.op_type(), note, shape_str(v.shape)});
}

std::string Importer::kernel(const std::string& base, const std::string& text) {
  auto it = kernel_texts_.find(text);
  if (it != kernel_texts_.end()) return it->second;
  std::string name = base;
  for (int k = 2; kernel_names_.count(name) || !names_.claim(name); ++k) name = base + "_" + std::to_string(k);
  kernel_names_.insert(name);
  kernel_texts_[text] = name;
  std::string def = text;
  for (size_t at = def.find("NAME"); at != std::string::npos; at = def.find("NAME", at + name.size()))
    def.replace(at, 4, name);
  kernels_.push_back(def);
  return name;
}

std::vector<std::string> Importer::dims_code(const Shape& s) {
  std::vector<std::string> dims;
  for (const Dim& d : s) dims.push_back(d.symbolic ? "batch" : std::to_string(d.value));
  if (!concrete(s)) body_uses_batch_ = true;
  return dims;
}

std::string Importer::reshape_code(const std::string& x, const Shape& y) {
  return fmt::format("reshape({}, [{}])", x, join(dims_code(y)));
}

std::string Importer::product_code(const Shape& s) {
  int64_t known = 1;
  bool batch = false;
  for (const Dim& d : s) {
    if (d.symbolic) batch = true;
    else known *= d.value;
  }
  if (!batch) return std::to_string(known);
  body_uses_batch_ = true;
  return known == 1 ? "batch" : fmt::format("batch * {}", known);
}

bool Importer::constant(const onnx::NodeProto& n) {
  Constant c;
  if (const auto* a = find_attr(n, "value")) {
    if (!read_tensor(a->t(), label(n) + ": its value", &c)) return false;
  } else if (const auto* ints = find_attr(n, "value_ints")) {
    c.is_float = false;
    c.ints.assign(ints->ints().begin(), ints->ints().end());
    c.dims = {static_cast<int64_t>(c.ints.size())};
  } else if (const auto* f = find_attr(n, "value_float")) {
    std::string why;
    if (!tensor::full({1}, f->f(), &c.data, &why)) return node_fail(n, why);
    c.scalar = true;
  } else {
    return node_fail(n, "only 'value', 'value_ints' and 'value_float' constants are supported");
  }
  c.onnx_name = n.output(0);
  const Constant* k = add_constant(std::move(c));
  Shape s = constant_shape(*k);
  values_[n.output(0)] = Value{"", s, k};
  out_->nodes.push_back({node_name(n),
                         n.op_type(), "(a constant, used by later nodes)", shape_str(s)});
  return true;
}

bool Importer::node(const onnx::NodeProto& n) {
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    return node_fail(n, fmt::format("ops of domain '{}' are not supported (only the default ONNX "
                                    "domain)", n.domain()));
  if (n.output_size() < 1 || n.output(0).empty()) return node_fail(n, "it has no output");
  const std::string& op = n.op_type();
  const OpEntry* entry = nullptr;
  for (const OpEntry& e : op_table())
    if (op == e.op) entry = &e;
  if (!entry)
    return node_fail(n, fmt::format("the op is not supported; Descent imports {}",
                                    join(supported_onnx_ops())));
  if (!entry->extra_outputs)
    for (int i = 1; i < n.output_size(); ++i)
      if (!n.output(i).empty()) return node_fail(n, "nodes with several outputs are not supported");
  bool done = false;
  if (!fold(n, &done)) return false;
  return done || (this->*entry->read)(n);
}

bool Importer::passthrough(const onnx::NodeProto& n) {
  // Inference: Dropout passes its input through (its optional mask output is unused).
  Value x;
  if (!input(n, 0, &x)) return false;
  values_[n.output(0)] = x;
  out_->nodes.push_back({node_name(n), n.op_type(), "(no code: the same tensor)", shape_str(x.shape)});
  return true;
}

const std::vector<Importer::OpEntry>& Importer::op_table() {
  static const std::vector<OpEntry> t = {
      {"Gemm", &Importer::gemm},         {"MatMul", &Importer::matmul},
      {"Add", &Importer::binary},        {"Sub", &Importer::binary},
      {"Mul", &Importer::binary},        {"Div", &Importer::binary},
      {"Pow", &Importer::binary},        {"Equal", &Importer::binary},
      {"Less", &Importer::binary},       {"Greater", &Importer::binary},
      {"Where", &Importer::where},       {"Relu", &Importer::unary},
      {"Sigmoid", &Importer::unary},     {"Tanh", &Importer::unary},
      {"Sqrt", &Importer::unary},        {"Erf", &Importer::unary},
      {"Softmax", &Importer::softmax},   {"LayerNormalization", &Importer::layer_norm},
      {"ReduceMean", &Importer::reduce_mean},
      {"Flatten", &Importer::flatten},   {"Transpose", &Importer::transpose},
      {"Reshape", &Importer::reshape},   {"Unsqueeze", &Importer::unsqueeze},
      {"Squeeze", &Importer::unsqueeze}, {"Slice", &Importer::slice},
      {"Split", &Importer::split, true}, {"Concat", &Importer::concat},
      {"Gather", &Importer::gather},     {"Shape", &Importer::only_folded},
      {"Cast", &Importer::only_folded},  {"Range", &Importer::only_folded},
      {"ConstantOfShape", &Importer::only_folded},
      {"Conv", &Importer::conv},         {"MaxPool", &Importer::pool},
      {"AveragePool", &Importer::pool},
      {"Constant", &Importer::constant}, {"Identity", &Importer::passthrough},
      {"Dropout", &Importer::passthrough, true},
  };
  return t;
}

bool Importer::run(const onnx::ModelProto& model) {
  if (!model.has_graph() || model.graph().node_size() == 0)
    return fail("not an ONNX model (no graph with nodes in it)");
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
  out_->opset = opset_;
  out_->producer = printable(model.producer_name());
  if (!model.producer_version().empty()) out_->producer += " " + printable(model.producer_version());
  const onnx::GraphProto& g = model.graph();
  graph_ = &g;

  // Weights. Older exporters also list every initializer among the graph's inputs.
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) {
    Constant c;
    if (!read_tensor(t, fmt::format("initializer '{}'", t.name()), &c)) return false;
    initializers.insert(t.name());
    const Constant* k = add_constant(std::move(c));
    values_[t.name()] = Value{"", constant_shape(*k), k};
  }

  // The one input: float32, with at most one symbolic dim (the batch).
  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const auto& in : g.input())
    if (!initializers.count(in.name())) inputs.push_back(&in);
  if (inputs.size() != 1) {
    std::vector<std::string> names;
    for (const auto* in : inputs) names.push_back("'" + in->name() + "'");
    return fail(fmt::format("the graph has {} inputs ({}); Descent imports models with exactly one",
                            inputs.size(), names.empty() ? "none" : join(names)));
  }
  const onnx::ValueInfoProto& in = *inputs[0];
  if (!in.type().has_tensor_type())
    return fail(fmt::format("input '{}' is not a tensor", printable(in.name())));
  const auto& tt = in.type().tensor_type();
  if (tt.elem_type() != onnx::TensorProto::FLOAT) {
    // Token ids (int64 from torch, int32 elsewhere) come in as f32 values holding the same
    // integers (load() reads an int .npy that way; every id below 2^24 is exact), and only
    // an embedding's Gather reads them, as indices; Shape may look at their shape.
    bool ids = tt.elem_type() == onnx::TensorProto::INT64 || tt.elem_type() == onnx::TensorProto::INT32;
    for (const auto& node : g.node())
      for (int i = 0; i < node.input_size(); ++i)
        if (node.input(i) == in.name() && !(node.op_type() == "Gather" && i == 1) && node.op_type() != "Shape")
          ids = false;
    if (!ids)
      return fail(fmt::format("input '{}' is {}; Descent imports float32 inputs (and integer "
                              "ids that only a Gather reads, as its indices)",
                              printable(in.name()), type_name(tt.elem_type())));
    int_input_ = in.name();
  }
  if (!tt.has_shape() || tt.shape().dim_size() == 0)
    return fail(fmt::format("input '{}' has no shape; export the model with its input's shape",
                            printable(in.name())));
  Shape in_shape;
  int symbolic = 0;
  int64_t known = 1;
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    if (d.has_dim_value()) {
      // A number is a size; only a name (or nothing) is the symbolic batch.
      if (d.dim_value() <= 0)
        return fail(fmt::format("input '{}': dim {} is {}; a dim is a size of at least 1, or a "
                                "name for the batch", printable(in.name()), i, d.dim_value()));
      known = d.dim_value() > tensor::kMaxElements / known ? tensor::kMaxElements + 1 : known * d.dim_value();
      if (known > tensor::kMaxElements)
        return fail(fmt::format("input '{}': dim {} is {}; a tensor holds at most {} elements",
                                printable(in.name()), i, d.dim_value(), tensor::kMaxElements));
      in_shape.push_back({d.dim_value(), false});
    } else {
      in_shape.push_back({0, true});
      ++symbolic;
    }
  }
  if (symbolic > 1)
    return fail(fmt::format("input '{}' has {} dims of unknown size; Descent allows one (the "
                            "batch)", printable(in.name()), symbolic));
  std::string param = names_.make(in.name(), "x");  // a local of model: may be "x"
  values_[in.name()] = Value{param, in_shape, nullptr};
  out_->input_name = in.name();
  out_->input_shape = shape_str(in_shape);
  for (size_t i = 0; i < in_shape.size(); ++i)
    if (in_shape[i].symbolic) symbol_index_ = i;

  for (node_index_ = 0; node_index_ < g.node_size(); ++node_index_)
    if (!node(g.node(node_index_))) return false;

  if (g.output_size() != 1)
    return fail(fmt::format("the graph has {} outputs; Descent imports models with exactly one",
                            g.output_size()));
  auto it = values_.find(g.output(0).name());
  if (it == values_.end())
    return fail(fmt::format("no node makes the graph's output '{}'", g.output(0).name()));
  Value result = it->second;
  if (result.constant || result.var == param)
    return fail("the model's output does not depend on computation Descent imports");
  out_->output_name = g.output(0).name();
  out_->output_shape = shape_str(result.shape);

  // ---- the program ----
  auto aligned = [](const std::vector<std::string>& lines) {
    // "code|# comment" -> the comments in one column, as a person would align them.
    size_t width = 0;
    for (const auto& l : lines) width = std::max(width, l.find('|'));
    std::string s;
    for (const auto& l : lines) {
      size_t bar = l.find('|');
      s += fmt::format("{:<{}}  {}\n", l.substr(0, bar), width, l.substr(bar + 1));
    }
    return s;
  };
  std::string dir = options_.load_dir.empty() ? options_.out_dir : options_.load_dir;
  auto path_in_dir = [&](const std::string& file) {
    return dir.empty() ? file : (std::filesystem::path(dir) / file).string();
  };
  std::string p;
  p += fmt::format("# {}: the ONNX model {}, imported by `descent import`.\n", options_.program_file, source_);
  p += fmt::format("# ONNX opset {}{}.\n", opset_, out_->producer.empty() ? "" : ", made by " + out_->producer);
  p += "# One line of `model` per ONNX node; its comment names the node, its op and its shape.\n";
  p += "# The load paths are relative to the folder `descent import` ran in: run it from there,\n";
  p += fmt::format("#   descent run {} --device cpu\n", path_in_dir(options_.program_file));
  if (!kernels_.empty()) {
    p += "\n# ---- Kernels for what the prelude does not have ----------------------------------\n";
    for (const auto& k : kernels_) p += "\n" + k;
  }
  p += "\n# ---- Weights (the model's initializers), one .npy file each ----------------------\n";
  p += aligned(globals_);
  p += "\n# ---- The model ---------------------------------------------------------------------\n";
  std::string in_type = shape_str(in_shape);
  p += fmt::format("fn model({}: f32{}) -> f32{} {{\n", param, in_type, shape_str(result.shape));
  // The language indexes only a variable (x.shape[0] is written s = x.shape; s[0]).
  if (body_uses_batch_)
    p += fmt::format("  in_shape = {}.shape\n  batch = in_shape[{}]\n", param, symbol_index_);
  p += aligned(body_);
  p += fmt::format("  return {}\n}}\n", result.var);
  p += "\n# ---- Run it --------------------------------------------------------------------------\n";
  if (!options_.input_npy.empty()) {
    p += fmt::format("x = load(\"{}\")\n", path_in_dir("input.npy"));
  } else {
    std::vector<std::string> dims;
    for (const Dim& d : in_shape) dims.push_back(d.symbolic ? std::to_string(options_.batch) : std::to_string(d.value));
    if (int_input_.empty())
      p += fmt::format("x = rand([{}], 1)   # a random input; `descent import --input FILE.npy` loads one\n",
                       join(dims));
    else
      p += fmt::format("x = zeros([{}])   # token ids, all 0; `descent import --input FILE.npy` loads some\n",
                       join(dims));
  }
  p += "y = model(x)\nprint(\"output\", y.shape)\nprint(y)\n";
  if (result.shape.size() == 2) p += "print(\"argmax\", argmax(y))\n";
  out_->program = std::move(p);
  return true;
}

}  // namespace descent::importer::onnx_internal

namespace descent::importer {
namespace {

// "MSG\n\n==> Context: Bad node spec for node. Name: NAME OpType: OP" -> "node 'NAME' (OP): MSG"
std::string checker_message(const std::string& what) {
  std::string msg = what, node, op;
  size_t ctx = msg.find("==> Context:");
  if (ctx != std::string::npos) {
    std::string context = msg.substr(ctx);
    msg = msg.substr(0, ctx);
    size_t name = context.find("Name: "), type = context.find(" OpType: ");
    if (name != std::string::npos && type != std::string::npos && type > name) {
      node = context.substr(name + 6, type - name - 6);
      op = context.substr(type + 9);
      while (!op.empty() && std::isspace(static_cast<unsigned char>(op.back()))) op.pop_back();
    }
  }
  while (!msg.empty() && std::isspace(static_cast<unsigned char>(msg.back()))) msg.pop_back();
  for (char& c : msg)
    if (c == '\n') c = ' ';
  if (!op.empty()) return fmt::format("node '{}' ({}): {}", node.empty() ? "#?" : node, op, msg);
  return msg;
}

bool onnx_checker_accepts(const onnx::ModelProto& model, const std::string& source_name,
                          std::string* error) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    *error = fmt::format("{}: not a valid ONNX model (ONNX's checker: {})", source_name,
                         checker_message(e.what()));
    return false;
  }
  return true;
}

}  // namespace

using onnx_internal::Importer;

std::vector<std::string> supported_onnx_ops() {
  std::vector<std::string> out;
  for (const auto& e : Importer::op_table()) out.push_back(e.op);
  return out;
}

bool translate_onnx(const std::string& bytes, const std::string& source_name,
                    const ImportOptions& options, ImportResult* out, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  *out = ImportResult{};
  if (bytes.empty()) {
    *error = source_name + ": the file is empty; not an ONNX model";
    return false;
  }
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    *error = source_name + ": not an ONNX model (the protobuf data does not parse: a truncated "
                           "or damaged file, or another format)";
    return false;
  }
  if (model.ir_version() <= 0 && !model.has_graph()) {
    *error = source_name + ": not an ONNX model (no IR version and no graph)";
    return false;
  }
  // ONNX's own checker first: it knows every op's schema (its attributes and their types,
  // how many inputs it takes, which opset versions define it), the IR versions it reads, a
  // graph's single assignment and its order, and one value field per initializer. A model it
  // refuses is refused here too, with its words; what follows then only asks what Descent
  // supports.
  if (model.ir_version() > onnx::IR_VERSION) {
    *error = fmt::format("{}: the model's IR version is {}; this importer reads IR versions up "
                         "to {} (a newer exporter, or a damaged file)", source_name,
                         model.ir_version(), int(onnx::IR_VERSION));
    return false;
  }
  if (!onnx_checker_accepts(model, source_name, error)) return false;
  Importer im(source_name, options, out, error);
  return im.run(model);
}

bool import_onnx_file(const std::string& path, const ImportOptions& options, ImportResult* out,
                      std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  std::string bytes;
  if (!read_file(path, &bytes, error)) return false;
  if (!translate_onnx(bytes, path, options, out, error))
    return false;
  tensor::Tensor input;
  if (!options.input_npy.empty() && !tensor::load_npy(options.input_npy, &input, error)) return false;
  std::error_code ec;
  std::filesystem::path dir = options.out_dir.empty() ? "." : options.out_dir;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    *error = fmt::format("{}: cannot create the folder: {}", dir.string(), ec.message());
    return false;
  }
  for (const Weight& w : out->weights) {
    std::string file = (dir / w.file).string();
    if (!tensor::save_npy(w.data, file, error)) return false;
    out->files.push_back(file);
  }
  if (!options.input_npy.empty()) {
    std::string file = (dir / "input.npy").string();
    if (!tensor::save_npy(input, file, error)) return false;
    out->files.push_back(file);
  }
  std::string program = (dir / options.program_file).string();
  FILE* f = std::fopen(program.c_str(), "wb");
  if (!f || std::fwrite(out->program.data(), 1, out->program.size(), f) != out->program.size()) {
    *error = fmt::format("{}: cannot write: {}", program, std::strerror(errno));
    if (f) std::fclose(f);
    return false;
  }
  if (std::fclose(f) != 0) {
    *error = fmt::format("{}: cannot write: {}", program, std::strerror(errno));
    return false;
  }
  out->files.push_back(program);
  return true;
}

std::string format_import_summary(const ImportResult& r) {
  std::string s = fmt::format("imported: input '{}' {} -> output '{}' {} (opset {}{})\n", r.input_name,
                              r.input_shape, r.output_name, r.output_shape, r.opset,
                              r.producer.empty() ? "" : ", " + r.producer);
  size_t wn = 4, wo = 2;
  for (const auto& n : r.nodes) {
    wn = std::max(wn, n.node.size());
    wo = std::max(wo, n.op.size());
  }
  s += fmt::format("  {:<{}}  {:<{}}  {:<12}  {}\n", "node", wn, "op", wo, "shape", "Descent");
  for (const auto& n : r.nodes)
    s += fmt::format("  {:<{}}  {:<{}}  {:<12}  {}\n", n.node, wn, n.op, wo, n.shape, n.descent);
  size_t bytes = 0;
  for (const auto& w : r.weights) bytes += w.data.data.size() * 4;
  s += fmt::format("{} weights ({}), {} file{} written:\n", r.weights.size(), bytes_text(bytes),
                   r.files.size(), r.files.size() == 1 ? "" : "s");
  for (const auto& f : r.files) s += "  " + f + "\n";
  return s;
}

}  // namespace descent::importer
