// Writing ONNX: an MLP as the bytes torch.onnx.export would write for nn.Sequential(Linear,
// ReLU, ..., Linear). The benchmark hands them to ONNX Runtime and the tests import them
// back (onnx_import.h says what it writes); reading ONNX is onnx_import.cpp.
#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "importer/onnx_import.h"

namespace descent::importer {

std::string mlp_onnx_bytes(const std::vector<tensor::Tensor>& weights,
                           const std::vector<tensor::Tensor>& biases, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  if (weights.empty() || weights.size() != biases.size()) {
    *error = "an MLP needs one bias per weight matrix, and at least one layer";
    return "";
  }
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("descent");
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("mlp");
  auto add_value = [](onnx::ValueInfoProto* v, const std::string& name, int64_t cols) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_param("batch_size");
    t->mutable_shape()->add_dim()->set_dim_value(cols);
  };
  auto add_init = [&](const std::string& name, const tensor::Tensor& t) {
    auto* p = g->add_initializer();
    p->set_name(name);
    p->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : t.shape) p->add_dims(d);
    p->set_raw_data(std::string(reinterpret_cast<const char*>(t.data.data()), t.data.size() * 4));
  };
  std::string prev = "input";
  for (size_t i = 0; i < weights.size(); ++i) {
    const auto& w = weights[i];
    const auto& b = biases[i];
    if (w.shape.size() != 2 || b.shape.size() != 1 || b.shape[0] != w.shape[0] ||
        (i > 0 && w.shape[1] != weights[i - 1].shape[0])) {
      *error = fmt::format("layer {}: weight {} and bias {} do not chain", i + 1,
                           tensor::shape_text(w.shape), tensor::shape_text(b.shape));
      return "";
    }
    if (i == 0) add_value(g->add_input(), "input", w.shape[1]);
    // torch.onnx.export names Sequential's layers by index: 0, 1 (the ReLU), 2, ...
    std::string layer = std::to_string(2 * i);
    add_init(layer + ".weight", w);
    add_init(layer + ".bias", b);
    bool last = i + 1 == weights.size();
    std::string out = last ? "logits" : "/" + layer + "/Gemm_output_0";
    auto* n = g->add_node();
    n->set_name("/" + layer + "/Gemm");
    n->set_op_type("Gemm");
    n->add_input(prev);
    n->add_input(layer + ".weight");
    n->add_input(layer + ".bias");
    n->add_output(out);
    auto* a = n->add_attribute();
    a->set_name("transB");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(1);
    prev = out;
    if (!last) {
      std::string act = std::to_string(2 * i + 1);
      auto* r = g->add_node();
      r->set_name("/" + act + "/Relu");
      r->set_op_type("Relu");
      r->add_input(prev);
      prev = "/" + act + "/Relu_output_0";
      r->add_output(prev);
    }
  }
  add_value(g->add_output(), "logits", weights.back().shape[0]);
  std::string bytes;
  if (!m.SerializeToString(&bytes)) {
    *error = "could not serialise the ONNX model";
    return "";
  }
  return bytes;
}

}  // namespace descent::importer
