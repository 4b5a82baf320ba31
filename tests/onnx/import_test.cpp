// ONNX import (issue 15): every model in tests/onnx/models (written by make_models.py, with
// NumPy's output committed beside it) imports to a program that gives NumPy's output on every
// engine and device; every file in tests/onnx/bad, and the graphs built below with the
// protobuf API, is a clear error naming what is wrong.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "importer/onnx_import.h"
#include "lang/text.h"
#include "pipeline/pipeline.h"
#include "tensor/tensor.h"

using namespace descent;
namespace fs = std::filesystem;

namespace {

const std::string kModels = std::string(DESCENT_TESTS_DIR) + "/onnx/models/";
const std::string kBad = std::string(DESCENT_TESTS_DIR) + "/onnx/bad/";

fs::path scratch(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("descent-onnx-test-" + std::to_string(::getpid())) / name;
  fs::create_directories(p);
  return p;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}
// Shows the whole text when the part is missing.
#define CHECK_CONTAINS(text, part)                \
  do {                                            \
    std::string text_ = (text);                   \
    CHECK_MESSAGE(contains(text_, part), text_);  \
  } while (0)

// Runs an imported program with a save of y appended, on one engine and device; the saved
// tensor, or a failed check with the error.
tensor::Tensor run_program(const std::string& program, const std::string& engine,
                           const std::string& device, const fs::path& dir) {
  Session s;
  std::string error;
  REQUIRE(s.set_engine(engine));
  REQUIRE_MESSAGE(s.set_device(device, &error), error);
  std::string out = (dir / ("y-" + engine + "-" + device + ".npy")).string();
  RunOptions opts;
  std::string printed;
  opts.out = [&printed](std::string_view t) { printed += t; };
  Outcome o = s.submit(program + "\nsave(y, \"" + out + "\")\n", "model.ds", opts);
  REQUIRE_MESSAGE(o.status == Outcome::Ok, o.message);
  CHECK_CONTAINS(printed, "output [");
  tensor::Tensor y;
  REQUIRE_MESSAGE(tensor::load_npy(out, &y, &error), error);
  return y;
}

importer::ImportResult import_model(const std::string& name, const fs::path& dir) {
  importer::ImportOptions o;
  o.out_dir = dir.string();
  o.input_npy = kModels + name + "/input.npy";
  importer::ImportResult r;
  std::string error;
  REQUIRE_MESSAGE(importer::import_onnx_file(kModels + name + "/model.onnx", o, &r, &error), error);
  return r;
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(kModels))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Is the OpenCL device there? (Absent on a machine without an OpenCL platform: then the
// opencl column is skipped with a message, as the other tensor tests do.)
bool have_device(const std::string& device) {
  Session s;
  std::string error;
  bool ok = s.set_device(device, &error);
  if (!ok) MESSAGE("device " << device << " not available here: " << error);
  return ok;
}

}  // namespace

TEST_CASE("every test model imports and gives NumPy's output on every device (engine ast)") {
  auto names = model_names();
  REQUIRE(names.size() >= 15);
  for (const std::string& device : Session::devices()) {
    if (!have_device(device)) continue;
    for (const auto& name : names) {
      CAPTURE(name);
      CAPTURE(device);
      fs::path dir = scratch(name);
      importer::ImportResult r = import_model(name, dir);
      tensor::Tensor expected, y = run_program(r.program, "ast", device, dir);
      std::string why;
      REQUIRE(tensor::load_npy(kModels + name + "/expected.npy", &expected, &why));
      // rtol * max(1, |a|, |b|): 1e-4 absolute for values up to 1, relative above (the conv
      // model's outputs reach about 25).
      CHECK_MESSAGE(tensor::allclose(y, expected, 1e-4, &why), why);
    }
  }
}

TEST_CASE("every test model gives the same output on every engine (device ref)") {
  for (const auto& name : model_names()) {
    CAPTURE(name);
    fs::path dir = scratch(name);
    importer::ImportResult r = import_model(name, dir);
    tensor::Tensor expected;
    std::string why;
    REQUIRE(tensor::load_npy(kModels + name + "/expected.npy", &expected, &why));
    for (const std::string& engine : Session::engines()) {
      CAPTURE(engine);
      tensor::Tensor y = run_program(r.program, engine, "ref", dir);
      CHECK_MESSAGE(tensor::allclose(y, expected, 1e-4, &why), why);
    }
  }
}

TEST_CASE("the summary says which Descent code each node became") {
  fs::path dir = scratch("summary");
  importer::ImportResult r = import_model("conv", dir);
  REQUIRE(r.nodes.size() == 4);
  CHECK(r.nodes[0].op == "Conv");
  CHECK_CONTAINS(r.nodes[0].descent, "conv2d_1(");
  CHECK(r.nodes[1].descent == "relu_4d(conv)");
  CHECK_CONTAINS(r.nodes[3].descent, "bias_add(linear(");
  CHECK(r.input_shape == "[2, 3, 8, 8]");
  CHECK(r.output_shape == "[2, 10]");
  std::string s = importer::format_import_summary(r);
  CHECK_CONTAINS(s, "imported: input 'x' [2, 3, 8, 8] -> output 'y' [2, 10] (opset 13");
  CHECK_CONTAINS(s, "4 weights (6.1 KiB), 6 files written:");
  for (const auto& f : r.files) CHECK_MESSAGE(fs::exists(f), f);
}

TEST_CASE("a symbolic batch stays a named dim: one import runs at any batch size") {
  fs::path dir = scratch("dynamic");
  importer::ImportResult r = import_model("mlp_dynamic", dir);
  CHECK(r.input_shape == "[n, 20]");
  CHECK_CONTAINS(r.program, "fn model(x: f32[n, 20]) -> f32[n, 3]");
  Session s;
  std::string printed;
  RunOptions opts;
  opts.out = [&printed](std::string_view t) { printed += t; };
  Outcome o = s.submit(r.program + "\nprint(model(rand([7, 20], 3)).shape, model(rand([1, 20], 4)).shape)\n",
                       "model.ds", opts);
  REQUIRE_MESSAGE(o.status == Outcome::Ok, o.message);
  CHECK_CONTAINS(printed, "[7, 3] [1, 3]");
}

TEST_CASE("gpt_block (torch.onnx.export): shapes folded at import, ids gathered, any batch size") {
  fs::path dir = scratch("gpt");
  importer::ImportResult r = import_model("gpt_block", dir);
  // The ids are int64 in the file; the batch stays symbolic through the exporter's shape
  // arithmetic (Shape -> Gather -> Unsqueeze -> Concat), which is folded, not computed.
  CHECK(r.input_shape == "[n, 32]");
  CHECK(r.output_shape == "[n, 32, 64]");
  CHECK_CONTAINS(r.program, "fn model(ids: f32[n, 32]) -> f32[n, 32, 64]");
  CHECK_CONTAINS(r.program, "out[j0, j1, i1] = sum(r) (ind[j0, j1] == r) * x[r, i1]");
  bool folded_head_shape = false, erf = false, tanh = false;
  for (const auto& n : r.nodes) {
    folded_head_shape = folded_head_shape || (n.op == "Concat" && n.descent == "(folded at import: [n, 32, 4, 16])");
    erf = erf || n.op == "Erf";
    tanh = tanh || n.op == "Tanh";
    bool shape_folded = n.op != "Shape" || contains(n.descent, "folded");
    CHECK_MESSAGE(shape_folded, n.node);
  }
  CHECK(folded_head_shape);
  CHECK(erf);   // block 1's exact GELU
  CHECK(tanh);  // block 0's tanh form
  // The mask's -inf becomes f32's lowest inside the Where kernel.
  CHECK_CONTAINS(r.program, "-inf written as -3.4028235e+38");
  // One sequence of the two in input.npy, run alone (batch 1), gives its row of expected.npy.
  tensor::Tensor expected, ids;
  std::string error;
  REQUIRE(tensor::load_npy(kModels + "gpt_block/expected.npy", &expected, &error));
  REQUIRE(tensor::load_npy(kModels + "gpt_block/input.npy", &ids, &error));
  REQUIRE(ids.shape == std::vector<int64_t>{2, 32});
  std::string program = r.program + "\ny = model(rows(x, 1, 1))\n";
  tensor::Tensor y = run_program(program, "reg", "cpu", dir);
  REQUIRE(y.shape == std::vector<int64_t>{1, 32, 64});
  tensor::Tensor second = expected;
  second.shape = {1, 32, 64};
  second.data = tensor::AlignedFloats(32 * 64);
  for (size_t i = 0; i < 32 * 64; ++i) second.data[i] = expected.data[32 * 64 + i];
  CHECK_MESSAGE(tensor::allclose(y, second, 1e-4, &error), error);
}

TEST_CASE("the digits MLP exported as ONNX imports back to the committed NumPy logits") {
  std::string root = std::string(DESCENT_SOURCE_DIR) + "/examples/mlp_digits/";
  importer::ImportOptions o;
  fs::path dir = scratch("digits");
  o.out_dir = dir.string();
  o.input_npy = root + "images.npy";
  importer::ImportResult r;
  std::string error;
  REQUIRE_MESSAGE(importer::import_onnx_file(root + "mlp_digits.onnx", o, &r, &error), error);
  CHECK(r.input_shape == "[n, 64]");
  CHECK(r.output_name == "logits");
  tensor::Tensor expected;
  REQUIRE(tensor::load_npy(root + "logits.npy", &expected, &error));
  for (const std::string& device : {"ref", "cpu"}) {
    tensor::Tensor y = run_program(r.program, "jit", device, dir);
    CHECK_MESSAGE(tensor::allclose(y, expected, 1e-4, &error), error);
  }
}

TEST_CASE("mlp_onnx_bytes writes an MLP that imports to the same function as plain loops") {
  // A 12-7-5 MLP with random weights; the oracle is a direct C++ evaluation of the layers.
  std::string error;
  tensor::Tensor w1, b1, w2, b2, x;
  REQUIRE(tensor::rand({7, 12}, 11, &w1, &error));
  REQUIRE(tensor::rand({7}, 12, &b1, &error));
  REQUIRE(tensor::rand({5, 7}, 13, &w2, &error));
  REQUIRE(tensor::rand({5}, 14, &b2, &error));
  REQUIRE(tensor::rand({3, 12}, 15, &x, &error));
  std::string bytes = importer::mlp_onnx_bytes({w1, w2}, {b1, b2}, &error);
  REQUIRE_MESSAGE(!bytes.empty(), error);
  fs::path dir = scratch("mlp_bytes");
  REQUIRE(tensor::save_npy(x, (dir / "x.npy").string(), &error));
  importer::ImportOptions o;
  o.out_dir = dir.string();
  importer::ImportResult r;
  REQUIRE_MESSAGE(importer::translate_onnx(bytes, "mlp.onnx", o, &r, &error), error);
  CHECK(r.nodes.size() == 3);
  CHECK(r.nodes[0].node == "/0/Gemm");
  for (const auto& w : r.weights) REQUIRE(tensor::save_npy(w.data, (dir / w.file).string(), &error));
  std::string program = r.program + "\ny = model(load(\"" + (dir / "x.npy").string() + "\"))\n";
  tensor::Tensor y = run_program(program, "ast", "cpu", dir);
  REQUIRE(y.shape == std::vector<int64_t>{3, 5});
  for (int i = 0; i < 3; ++i) {
    float h[7];
    for (int j = 0; j < 7; ++j) {
      double acc = b1.data[j];
      for (int k = 0; k < 12; ++k) acc += double(x.data[i * 12 + k]) * w1.data[j * 12 + k];
      h[j] = acc > 0 ? float(acc) : 0.0f;
    }
    for (int j = 0; j < 5; ++j) {
      double acc = b2.data[j];
      for (int k = 0; k < 7; ++k) acc += double(h[k]) * w2.data[j * 7 + k];
      CHECK(std::fabs(y.data[i * 5 + j] - acc) < 1e-5);
    }
  }
  // Shapes that do not chain are refused.
  CHECK(importer::mlp_onnx_bytes({w1, w1}, {b1, b1}, &error).empty());
  CHECK_CONTAINS(error, "layer 2: weight [7, 12] and bias [7] do not chain");
}

TEST_CASE("malformed and unsupported files are clear errors naming the node and op") {
  struct Case {
    const char* file;
    const char* message;
  };
  const Case cases[] = {
      {"unsupported_op.onnx", "unsupported_op.onnx: node 'pool1' (LpPool): the op is not supported; "
                              "Descent imports Gemm, MatMul"},
      {"conv_3d.onnx", "node 'conv_volume' (Conv): only 2-D convolutions are supported (X [N, C, H, W], W [M, C, kH, kW]); here X is [1, 2, 4, 4, 4]"},
      {"pool_ceil.onnx", "node 'pool_ceil' (MaxPool): ceil_mode = 1 (a last window that runs past the image) is not supported"},
      {"pow_exponent.onnx", "node 'pow' (Pow): exponent 1.5 is not supported (2, 3, 0.5 and 1 are"},
      {"reshape_batch_product.onnx", "node 'twice' (Mul): it computes with the batch n, and Descent keeps the batch a dim of its own"},
      {"matmul_broadcast.onnx", "node 'bmm' (MatMul): [2, 3, 4] times [1, 4, 5]: batch dims that differ (broadcasting) are not supported"},
      {"layernorm_eps.onnx", "node 'ln' (LayerNormalization): epsilon 1e-06 is not the prelude layer_norm's 1e-05"},
      {"truncated.onnx", "truncated.onnx: not an ONNX model (the protobuf data does not parse"},
      {"not_onnx.onnx", "not_onnx.onnx: not an ONNX model"},
      {"empty.onnx", "empty.onnx: the file is empty; not an ONNX model"},
      {"two_inputs.onnx", "the graph has 2 inputs ('a', 'b'); Descent imports models with exactly one"},
      {"int_input.onnx", "input 'x' is int32; Descent imports float32 inputs"},
      // Invalid ONNX (onnx.checker refuses each): refused, never imported into nonsense.
      {"dim_negative.onnx", "input 'x': dim 0 is -3; a dim is a size of at least 1, or a name for the batch"},
      {"dim_zero.onnx", "input 'x': dim 0 is 0; a dim is a size of at least 1"},
      {"dim_huge.onnx", "input 'x': dim 0 is 1099511627776; a tensor holds at most 4294967296 elements"},
      {"raw_and_float.onnx", "not a valid ONNX model (ONNX's checker: TensorProto (tensor name: W) should contain one and only one value field.)"},
      {"not_ssa.onnx", "Graph must be in single static assignment (SSA) form, however 'y' has been used as output names multiple times"},
      {"extra_empty_input.onnx", "node 'relu' (Relu): Node (relu) has input size 2 not in range [min=1, max=1]"},
      {"attr_wrong_type.onnx", "node 'fc' (Gemm): Mismatched attribute type in 'fc : transB'"},
      {"opset_missing.onnx", "must specify opset_import for ONNX"},
      {"opset_minus1.onnx", "node 'relu' (Relu): No Op registered for Relu with domain_version of -1"},
      {"opset_zero.onnx", "node 'relu' (Relu): No Op registered for Relu with domain_version of 0"},
      {"ir_999.onnx", "ir_999.onnx: the model's IR version is 999; this importer reads IR versions up to 8"},
      {"relu_alpha.onnx", "node 'relu' (Relu): Unrecognized attribute: alpha for operator Relu"},
      {"gemm_pads.onnx", "node 'fc' (Gemm): Unrecognized attribute: pads for operator Gemm"},
  };
  fs::path dir = scratch("bad");
  for (const Case& c : cases) {
    CAPTURE(c.file);
    importer::ImportOptions o;
    o.out_dir = (dir / c.file).string();
    importer::ImportResult r;
    std::string error;
    CHECK_FALSE(importer::import_onnx_file(kBad + c.file, o, &r, &error));
    CHECK_MESSAGE(contains(error, c.message), error);
    CHECK_FALSE(fs::exists(dir / c.file / "model.ds"));  // nothing half-written
  }
  importer::ImportOptions o;
  o.out_dir = dir.string();
  importer::ImportResult r;
  std::string error;
  CHECK_FALSE(importer::import_onnx_file(kBad + "missing.onnx", o, &r, &error));
  CHECK_CONTAINS(error, "missing.onnx");
}

TEST_CASE("mutated models (tests/onnx/mutants): each refused naming the file, or imported into a program that runs") {
  // Byte flips, truncations, huge varints and one-field structural changes of the valid
  // models (make_mutants.py): no crash, no hang, and never an import that "succeeds" into a
  // program that does not run.
  const std::string dir = std::string(DESCENT_TESTS_DIR) + "/onnx/mutants/";
  int refused = 0, imported = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string file = e.path().filename().string();
    CAPTURE(file);
    fs::path out = scratch("mutant-" + file);
    importer::ImportOptions o;
    o.out_dir = out.string();
    importer::ImportResult r;
    std::string error;
    if (!importer::import_onnx_file(e.path().string(), o, &r, &error)) {
      CHECK_CONTAINS(error, file);
      CHECK(error.find('\n') == std::string::npos);  // one line
      ++refused;
      continue;
    }
    ++imported;
    // It imported: the program it wrote must run where it was written.
    Session s;
    RunOptions opts;
    std::string printed;
    opts.out = [&printed](std::string_view t) { printed += t; };
    std::string program;
    REQUIRE(read_file((out / "model.ds").string(), &program, &error));
    // The program loads its weights by paths relative to where `descent import` ran: here
    // they are absolute (out_dir is), so it runs from anywhere.
    Outcome result = s.submit(program, "model.ds", opts);
    CHECK_MESSAGE(result.status == Outcome::Ok, result.message);
  }
  MESSAGE(refused << " mutants refused, " << imported << " imported and ran");
  CHECK(refused > 50);
}

// ---- graphs built with the protobuf API, for the cases a file from NumPy cannot show ----

namespace {

struct Builder {
  onnx::ModelProto m;
  onnx::GraphProto* g;
  explicit Builder(std::vector<int64_t> input_dims, bool symbolic_batch = false) {
    m.set_ir_version(8);
    auto* op = m.add_opset_import();
    op->set_version(13);
    g = m.mutable_graph();
    g->set_name("built");
    auto* in = g->add_input();
    in->set_name("in");
    auto* t = in->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (size_t i = 0; i < input_dims.size(); ++i) {
      if (i == 0 && symbolic_batch) t->mutable_shape()->add_dim()->set_dim_param("N");
      else t->mutable_shape()->add_dim()->set_dim_value(input_dims[i]);
    }
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> ins, const std::string& out,
                        const std::string& name = "") {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : ins) n->add_input(i);
    n->add_output(out);
    return n;
  }
  void weight(const std::string& name, std::vector<int64_t> dims, float value = 0.5f) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (auto d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) t->add_float_data(value + 0.01f * float(i % 7));
  }
  void ints(const std::string& name, std::vector<int64_t> values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (auto v : values) t->add_int64_data(v);
  }
  // A graph output: a name and an element type (ONNX's checker wants the type; the shape
  // may be left out).
  void output(const std::string& name) {
    auto* o = g->add_output();
    o->set_name(name);
    o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    o->mutable_type()->mutable_tensor_type()->mutable_shape();  // present, its dims unsaid
  }
  // Translates; the error ("" when it imported). A graph that imports must also give a
  // program that runs (its own random input, its weights saved): an import that "succeeds"
  // into a program that does not compile is the worst kind of failure.
  std::string error(importer::ImportResult* r = nullptr) {
    importer::ImportResult scratch;
    if (!r) r = &scratch;
    importer::ImportOptions o;
    o.out_dir = "out";
    std::string e;
    bool ok = importer::translate_onnx(m.SerializeAsString(), "built.onnx", o, r, &e);
    if (ok) runs();
    return ok ? "" : e;
  }
  void runs() {
    fs::path dir = scratch("built-runs");
    importer::ImportOptions o;
    o.out_dir = dir.string();
    importer::ImportResult r;
    std::string e;
    REQUIRE(importer::translate_onnx(m.SerializeAsString(), "built.onnx", o, &r, &e));
    for (const auto& w : r.weights) REQUIRE(tensor::save_npy(w.data, (dir / w.file).string(), &e));
    Session s;
    RunOptions opts;
    std::string printed;
    opts.out = [&printed](std::string_view t) { printed += t; };
    Outcome out = s.submit(r.program, "model.ds", opts);
    CHECK_MESSAGE(out.status == Outcome::Ok, out.message, "\n", r.program);
    CHECK_CONTAINS(printed, "output [");
  }
};

void set_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

}  // namespace

TEST_CASE("built graphs: each unsupported construction names its node") {
  SUBCASE("an op of another domain") {
    Builder b({2, 3});
    b.node("Relu", {"in"}, "y", "custom")->set_domain("com.example");
    auto* op = b.m.add_opset_import();  // declared, so ONNX's checker lets it through
    op->set_domain("com.example");
    op->set_version(1);
    b.output("y");
    CHECK_CONTAINS(b.error(), "built.onnx: node 'custom' (Relu): ops of domain 'com.example' are not supported");
  }
  SUBCASE("nodes out of topological order") {
    Builder b({2, 3});
    b.node("Relu", {"h"}, "y", "second");
    b.node("Relu", {"in"}, "h", "first");
    b.output("y");
    // ONNX's checker refuses it first, and names the node.
    std::string e = b.error();
    CHECK_CONTAINS(e, "built.onnx: not a valid ONNX model (ONNX's checker: Nodes in a graph must be topologically sorted");
    CHECK_CONTAINS(e, "name: second OpType: Relu");
  }
  SUBCASE("an unnamed node is called by its position") {
    Builder b({2, 3});
    b.node("Relu", {"in"}, "h");
    b.node("LeakyRelu", {"h"}, "y");
    b.output("y");
    CHECK_CONTAINS(b.error(), "node '#2' (LeakyRelu): the op is not supported");
  }
  SUBCASE("external weight data") {
    Builder b({2, 3});
    b.weight("w", {4, 3});
    auto* w = b.g->mutable_initializer(0);
    w->clear_float_data();  // the data is in the file named below
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* where = w->add_external_data();
    where->set_key("location");
    where->set_value("weights.bin");
    b.node("Gemm", {"in", "w"}, "y", "fc");
    b.output("y");
    // ONNX's checker looks for the file first (Descent would refuse it anyway).
    CHECK_CONTAINS(b.error(), "tensor name: w) should be stored in weights.bin, but it doesn't exist");
  }
  SUBCASE("weights whose data does not fill their shape") {
    Builder b({2, 3});
    b.weight("w", {4, 3});
    b.g->mutable_initializer(0)->add_dims(2);  // now [4, 3, 2]: 24 values needed, 12 given
    b.node("MatMul", {"in", "w"}, "y", "mm");
    b.output("y");
    CHECK_CONTAINS(b.error(), "initializer 'w' has 12 values but its shape [4, 3, 2] needs 24");
  }
  SUBCASE("a Reshape whose shape is computed") {
    Builder b({2, 6});
    b.node("Relu", {"in"}, "s");
    b.node("Reshape", {"in", "s"}, "y", "rs");
    b.output("y");
    CHECK_CONTAINS(b.error(), "node 'rs' (Reshape): the shape 's' must be a constant 1-D int64 tensor");
  }
  SUBCASE("a Reshape that does not keep the element count") {
    Builder b({2, 6});
    b.ints("shape", {5, -1});
    b.node("Reshape", {"in", "shape"}, "y", "rs");
    b.output("y");
    CHECK_CONTAINS(b.error(), "node 'rs' (Reshape): cannot reshape [2, 6] into [5, -1]");
  }
  SUBCASE("a Reshape that would merge the symbolic batch") {
    Builder b({4, 6}, true);
    b.ints("shape", {-1});
    b.node("Reshape", {"in", "shape"}, "y", "rs");
    b.output("y");
    CHECK_CONTAINS(b.error(), "the -1 would be n * 6: Descent keeps the batch as a dim of its own");
  }
  SUBCASE("a softmax over several dims (before opset 13, the input coerced to 2-D)") {
    Builder b({2, 3, 4});
    b.m.mutable_opset_import(0)->set_version(11);
    set_int(b.node("Softmax", {"in"}, "y", "sm"), "axis", 1);
    b.output("y");
    CHECK_CONTAINS(b.error(), "node 'sm' (Softmax): before opset 13 a softmax over several dims (axis 1 of [2, 3, 4]) is not supported; only over the last");
  }
  SUBCASE("slicing the batch, a mean to a scalar, a Cast of data to int64") {
    Builder b({4, 6}, true);
    b.ints("starts", {0});
    b.ints("ends", {1});
    b.node("Slice", {"in", "starts", "ends"}, "y", "first_row");
    b.output("y");
    CHECK_CONTAINS(b.error(), "node 'first_row' (Slice): slicing the batch dim n is not supported (only all of it)");

    Builder c({4, 6});
    set_int(c.node("ReduceMean", {"in"}, "y", "mean_all"), "keepdims", 0);
    c.output("y");
    CHECK_CONTAINS(c.error(), "node 'mean_all' (ReduceMean): a mean of every element to a scalar (keepdims = 0) is not supported");

    Builder d({4, 6});
    set_int(d.node("Cast", {"in"}, "y", "to_int"), "to", onnx::TensorProto::INT64);
    d.output("y");
    CHECK_CONTAINS(d.error(), "node 'to_int' (Cast): it computes on data ('in'); Descent computes Cast only on constants, at import time");
  }
  SUBCASE("Gemm: alpha with a computed B, inner dims that differ, a C that does not broadcast") {
    Builder b({2, 6});
    b.node("Relu", {"in"}, "r");
    auto* n = b.node("Gemm", {"in", "r"}, "y", "g");
    set_int(n, "transB", 1);
    auto* a = n->add_attribute();
    a->set_name("alpha");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(2.0f);
    b.output("y");
    CHECK_CONTAINS(b.error(), "node 'g' (Gemm): alpha = 2 needs B to be a weight");

    Builder c({2, 6});
    c.weight("w", {5, 3});
    c.node("Gemm", {"in", "w"}, "y", "g2");
    c.output("y");
    CHECK_CONTAINS(c.error(), "node 'g2' (Gemm): A' is [2, 6] and B' is [5, 3]: the inner dims differ");

    Builder d({2, 6});
    d.weight("w", {6, 3});
    d.weight("c", {2, 1});
    d.node("Gemm", {"in", "w", "c"}, "y", "g3");
    d.output("y");
    CHECK_CONTAINS(d.error(), "node 'g3' (Gemm): C of shape [2, 1] does not broadcast");
  }
  SUBCASE("Add of shapes that do not broadcast") {
    Builder b({2, 6});
    b.weight("col", {3, 1});
    b.node("Add", {"in", "col"}, "y", "plus");
    b.output("y");
    CHECK_CONTAINS(b.error(), "node 'plus' (Add): the shapes [2, 6] and [3, 1] do not broadcast (each dim must be equal, or 1 in one of them)");
  }
  SUBCASE("a graph with no nodes, or two symbolic dims") {
    Builder b({2, 6});
    CHECK_CONTAINS(b.error(), "not an ONNX model (no graph with nodes in it)");
    Builder c({2, 6}, true);
    c.g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("M");
    c.node("Relu", {"in"}, "y");
    c.output("y");
    CHECK_CONTAINS(c.error(), "input 'in' has 2 dims of unknown size; Descent allows one (the batch)");
  }
}

TEST_CASE("built graphs: names that clash with Descent's are renamed, folding keeps the result") {
  // A weight called "x" (the run section's input), one called "relu" (a prelude kernel), an
  // output called "sigmoid" (another), an input called "fn" (a keyword), a Gemm with beta and a [1, N] C, and an Add of a computed
  // [1, N] row.
  Builder b({2, 3});
  b.g->mutable_input(0)->set_name("fn");
  for (auto& n : *b.g->mutable_node()) n.set_input(0, "fn");
  b.weight("x", {4, 3}, 0.25f);
  b.weight("relu", {1, 4}, -0.5f);
  auto* g = b.node("Gemm", {"fn", "x", "relu"}, "h", "/fc.1/Gemm");
  set_int(g, "transB", 1);
  auto* beta = g->add_attribute();
  beta->set_name("beta");
  beta->set_type(onnx::AttributeProto::FLOAT);
  beta->set_f(3.0f);
  b.weight("row", {1, 4}, 1.0f);
  b.node("Relu", {"row"}, "row_r", "rowrelu");
  b.node("Add", {"h", "row_r"}, "sigmoid", "plus");  // a prelude kernel added later
  b.output("sigmoid");
  importer::ImportResult r;
  REQUIRE(b.error(&r) == "");
  CHECK_CONTAINS(r.program, "fn model(fn_2: f32[2, 3]) -> f32[2, 4]");
  CHECK_CONTAINS(r.program, "sigmoid_2 = ");
  CHECK_CONTAINS(r.program, "x_2 = load(\"out/x_2.npy\")");
  CHECK_CONTAINS(r.program, "relu_scaled_row = load(");
  CHECK_CONTAINS(r.program, "times beta = 3.0, as [N]");
  CHECK_CONTAINS(r.program, "reshape(");
  // The program computes y = (in x^T + 3 * c) + relu(row): run it on a known input.
  fs::path dir = scratch("built");
  importer::ImportOptions o;
  o.out_dir = dir.string();
  std::string error;
  REQUIRE(importer::translate_onnx(b.m.SerializeAsString(), "built.onnx", o, &r, &error));
  for (const auto& w : r.weights) REQUIRE(tensor::save_npy(w.data, (dir / w.file).string(), &error));
  std::string program = r.program + "\ny = model(ones([2, 3]))\n";
  tensor::Tensor y = run_program(program, "reg", "cpu", dir);
  REQUIRE(y.shape == std::vector<int64_t>{2, 4});
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      double dot = 0;
      for (int k = 0; k < 3; ++k) dot += 0.25 + 0.01 * ((j * 3 + k) % 7);
      double expect = dot + 3 * (-0.5 + 0.01 * j) + (1.0 + 0.01 * j);
      CHECK(std::fabs(y.data[i * 4 + j] - expect) < 1e-5);
    }
}

TEST_CASE("built graphs: a generated kernel never takes a variable's name") {
  // A node named like the kernel a later node generates (add_3d): the variable keeps the
  // name, the kernel gets another, and the program runs (Builder::error runs it).
  Builder b({2, 3, 4});
  b.node("Relu", {"in"}, "h", "add_3d");
  b.weight("bias", {4});
  b.node("Add", {"h", "bias"}, "y", "plus");
  b.output("y");
  importer::ImportResult r;
  REQUIRE(b.error(&r) == "");
  CHECK_CONTAINS(r.program, "add_3d = relu_3d(in_2)");  // "in" is a keyword
  CHECK_CONTAINS(r.program, "y = add_3d_2(add_3d, bias)");
}

TEST_CASE("descent import: the summary on stdout, exit 1 and the error on stderr") {
  fs::path dir = scratch("cli");
  std::string cmd = std::string(DESCENT_BIN) + " import " + kModels + "mlp_dynamic/model.onnx -o " +
                    (dir / "m").string() + " --batch 4 > " + (dir / "out.txt").string() + " 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::string out, error;
  REQUIRE(read_file((dir / "out.txt").string(), &out, &error));
  CHECK_CONTAINS(out, "imported: input 'x' [n, 20] -> output 'y' [n, 3]");
  CHECK_CONTAINS(out, "fc1      Gemm     [n, 16]       bias_add(linear(x, w1), b1)");
  CHECK_CONTAINS(out, "run it: descent run " + (dir / "m" / "model.ds").string());
  std::string program;
  REQUIRE(read_file((dir / "m" / "model.ds").string(), &program, &error));
  CHECK_CONTAINS(program, "x = rand([4, 20], 1)");
  // The program it wrote runs as it is, from the folder the import ran in.
  std::string run = std::string(DESCENT_BIN) + " run " + (dir / "m" / "model.ds").string() +
                    " --engine stack > " + (dir / "run.txt").string() + " 2>&1";
  CHECK(std::system(run.c_str()) == 0);
  REQUIRE(read_file((dir / "run.txt").string(), &out, &error));
  CHECK_CONTAINS(out, "output [4, 3]");

  cmd = std::string(DESCENT_BIN) + " import " + kBad + "unsupported_op.onnx -o " + (dir / "bad").string() +
        " > " + (dir / "bad.txt").string() + " 2>&1";
  int rc = std::system(cmd.c_str());
  CHECK(WEXITSTATUS(rc) == 1);
  REQUIRE(read_file((dir / "bad.txt").string(), &out, &error));
  CHECK_CONTAINS(out, "error: ");
  CHECK_CONTAINS(out, "node 'pool1' (LpPool)");
}

TEST_CASE("docs/models.md's op table lists exactly the importer's ops, in its order") {
  // The importer's op table drives dispatch and the refusal's list; the page's table is
  // written by hand, so this keeps the two the same.
  std::ifstream in(std::string(DESCENT_SOURCE_DIR) + "/docs/models.md");
  std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = page.find("| ONNX op | Descent | limits |");
  REQUIRE(at != std::string::npos);
  std::vector<std::string> listed;
  for (const std::string& line : split_lines(page.substr(at))) {
    if (line.empty() || line[0] != '|') break;
    std::string first = line.substr(1, line.find('|', 1) - 1);
    for (size_t i = first.find('`'); i != std::string::npos; i = first.find('`', i)) {
      size_t end = first.find('`', i + 1);
      if (end == std::string::npos) break;
      listed.push_back(first.substr(i + 1, end - i - 1));
      i = end + 1;
    }
  }
  CHECK(join(listed) == join(importer::supported_onnx_ops()));
  // The refusal of an op it does not read lists them all.
  importer::ImportOptions o;
  o.out_dir = scratch("ops").string();
  importer::ImportResult r;
  std::string error;
  CHECK_FALSE(importer::import_onnx_file(kBad + "unsupported_op.onnx", o, &r, &error));
  CHECK_MESSAGE(contains(error, "Descent imports " + join(importer::supported_onnx_ops())), error);
}
