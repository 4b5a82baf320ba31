// The structured views of the pipeline (pipeline.h) that the visualizer draws: bytecode
// listings as rows, recorded VM runs, live intervals, AST source ranges, the tensor graph
// as data and the loop nest as a tree. Each is checked against the text view it mirrors.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <set>
#include <sstream>

#include "pipeline/pipeline.h"

using descent::CodeLine;
using descent::Outcome;
using descent::RunOptions;
using descent::Session;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string joined(const std::vector<CodeLine>& rows) {
  std::string out;
  for (const auto& r : rows) out += r.text + "\n";
  return out;
}

const char* const kBytecodeStages[] = {"stack", "stack-fused", "reg", "reg-alloc", "reg-fused"};

}  // namespace

TEST_CASE("listing rows are the bytecode stage's text, row by row") {
  const fs::path dir = fs::path(DESCENT_TESTS_DIR) / "programs";
  int programs = 0;
  for (const char* name : {"fib_recursive.ds", "collatz.ds", "compound_assign.ds",
                           "binary_search_function.ds", "bool_ops.ds", "builtins_math.ds"}) {
    std::string src = read_file(dir / name);
    REQUIRE_MESSAGE(!src.empty(), name);
    Session s;
    REQUIRE(s.compile(src, name).status == Outcome::Ok);
    ++programs;
    for (const char* stage : kBytecodeStages) {
      CAPTURE(name);
      CAPTURE(stage);
      auto rows = s.listing(stage);
      REQUIRE(!rows.empty());
      CHECK(joined(rows) == s.stage(stage).text);
      for (const auto& r : rows) {
        if (r.pc < 0) {
          CHECK(!r.loc.valid());
          continue;
        }
        CHECK(!r.function.empty());
        CHECK(r.loc.valid());
        CHECK(r.loc.offset < src.size());
      }
    }
  }
  CHECK(programs == 6);
}

TEST_CASE("listing: instruction rows carry function, pc and source") {
  Session s;
  REQUIRE(s.compile("fn sq(n: int) -> int {\n  return n * n\n}\nprint(sq(7))\n", "t").status ==
          Outcome::Ok);
  auto rows = s.listing("stack");
  std::set<std::string> functions;
  bool saw_mul = false;
  for (const auto& r : rows) {
    if (r.pc >= 0) functions.insert(r.function);
    if (r.text.find("MUL_INT") != std::string::npos) {
      saw_mul = true;
      CHECK(r.function == "sq");
      CHECK(r.loc.line == 2);
    }
  }
  CHECK(saw_mul);
  CHECK(functions == std::set<std::string>{"<script>", "sq"});
  // Register code: instruction indices count from 0 in each function.
  auto reg = s.listing("reg-fused");
  int first_pc = -2;
  for (const auto& r : reg)
    if (r.function == "sq" && r.pc >= 0) {
      first_pc = r.pc;
      break;
    }
  CHECK(first_pc == 0);
  CHECK(s.listing("llvm").empty());
  CHECK(s.listing("nonsense").empty());
}

TEST_CASE("listing and sources are empty without a compiled input") {
  Session s;
  CHECK(s.last_source() == nullptr);
  CHECK(s.last_tokens().empty());
  CHECK(s.listing("stack").empty());
  s.compile("x = 1 +\n", "bad");
  REQUIRE(s.last_source() != nullptr);
  CHECK(s.last_source()->text() == "x = 1 +\n");
  CHECK(!s.last_tokens().empty());
  CHECK(s.listing("stack").empty());
}

namespace {

// Every step names a row of the listing of the code the VM runs.
void check_steps_are_rows(const Session& s, const descent::Recording& rec, const char* stage) {
  std::set<std::pair<std::string, int>> rows;
  for (const auto& r : s.listing(stage))
    if (r.pc >= 0) rows.insert({r.function, r.pc});
  REQUIRE(!rows.empty());
  for (const auto& st : rec.steps) {
    CAPTURE(st.function);
    CAPTURE(st.pc);
    CHECK(rows.count({st.function, st.pc}) == 1);
  }
}

const char* kLoopProgram =
    "fn sq(n: int) -> int {\n"
    "  return n * n\n"
    "}\n"
    "total = 0\n"
    "for i in 0..4 {\n"
    "  total += sq(i)\n"
    "  print(\"i\", i)\n"
    "}\n"
    "print(total)\n";

}  // namespace

TEST_CASE("record: every instruction of a run on the stack and register VMs") {
  for (const char* engine : {"stack", "reg"}) {
    CAPTURE(engine);
    Session s;
    REQUIRE(s.set_engine(engine));
    std::string out;
    RunOptions opts;
    opts.out = [&out](std::string_view t) { out += t; };
    Outcome o = s.submit(kLoopProgram, "t", opts);
    REQUIRE(o.status == Outcome::Ok);
    auto rec = s.record(engine);
    CHECK(rec.error.empty());
    CHECK(rec.engine == engine);
    CHECK(!rec.truncated);
    CHECK(rec.outcome.status == Outcome::Ok);
    CHECK(rec.output == out);
    CHECK(rec.steps.size() == o.steps);
    REQUIRE(!rec.steps.empty());
    CHECK(rec.steps.back().output_size == out.size());
    CHECK(rec.steps.front().output_size == 0);
    bool in_call = false;
    for (const auto& st : rec.steps) {
      CHECK(st.loc.valid());
      CHECK(!st.instruction.empty());
      CHECK(st.error.empty());
      if (st.function == "sq" && st.depth == 1) in_call = true;
    }
    CHECK(in_call);
    check_steps_are_rows(s, rec, std::string(engine) == "stack" ? "stack-fused" : "reg-fused");
    // The same run on the other VM's listing would not match: the pcs are the VM's own.
    CHECK(s.engine() == engine);
  }
}

TEST_CASE("record: the operand stack and the register file after each instruction") {
  Session s;
  REQUIRE(s.compile("x = 1\ny = 2\nprint(x - y, x < y)\n", "t").status == Outcome::Ok);
  auto rec = s.record("stack");
  REQUIRE(rec.error.empty());
  REQUIRE(rec.steps.size() == 12);
  CHECK(rec.steps[0].instruction.find("CONST") == 0);
  CHECK(rec.steps[0].stack == std::vector<std::string>{"1"});
  CHECK(rec.steps[1].stack.empty());  // STORE_GLOBAL x
  CHECK(rec.steps[5].stack == std::vector<std::string>{"1", "2"});  // LOAD_GLOBAL x, y
  CHECK(rec.steps[6].stack == std::vector<std::string>{"-1"});      // SUB_INT
  CHECK(rec.steps[9].stack == std::vector<std::string>{"-1", "true"});  // LT_INT
  CHECK(rec.steps[10].stack.empty());                                   // PRINT
  CHECK(rec.steps[10].output_size == 8);
  CHECK(rec.output == "-1 true\n");

  auto reg = s.record("reg");
  REQUIRE(reg.error.empty());
  bool saw_difference = false;
  for (const auto& st : reg.steps)
    for (const auto& [loc, value] : st.registers) {
      CHECK((loc[0] == 'r' || loc[0] == 's'));
      if (value == "-1") saw_difference = true;
    }
  CHECK(saw_difference);
  CHECK(reg.output == "-1 true\n");
}

TEST_CASE("record: a runtime error is the last step's") {
  for (const char* engine : {"stack", "reg"}) {
    CAPTURE(engine);
    Session s;
    REQUIRE(s.compile("a = 0\nprint(\"before\")\nb = 10 / a\n", "t").status == Outcome::Ok);
    auto rec = s.record(engine);
    REQUIRE(rec.error.empty());
    CHECK(rec.outcome.status == Outcome::RuntimeError);
    REQUIRE(!rec.steps.empty());
    CHECK(rec.steps.back().error == "division by zero");
    CHECK(rec.steps.back().loc.line == 3);
    CHECK(rec.steps.size() == rec.outcome.steps);
    for (size_t i = 0; i + 1 < rec.steps.size(); ++i) CHECK(rec.steps[i].error.empty());
    CHECK(rec.output == "before\n");
  }
}

TEST_CASE("record: max_steps truncates an endless loop") {
  for (const char* engine : {"stack", "reg"}) {
    CAPTURE(engine);
    Session s;
    REQUIRE(s.compile("n = 0\nwhile true {\n  n += 1\n}\n", "t").status == Outcome::Ok);
    auto rec = s.record(engine, 50);
    CHECK(rec.error.empty());
    CHECK(rec.truncated);
    CHECK(rec.steps.size() == 50);
    CHECK(rec.outcome.status == Outcome::RuntimeError);
    CHECK(rec.outcome.message.find("interrupted") != std::string::npos);
  }
}

TEST_CASE("record: globals are as they were, and what cannot be recorded says why") {
  Session s;
  RunOptions quiet;
  REQUIRE(s.submit("g = 5\n", "a", quiet).status == Outcome::Ok);
  std::string out;
  RunOptions opts;
  opts.out = [&out](std::string_view t) { out += t; };
  REQUIRE(s.submit("g = g * 2\nprint(g)\n", "b", opts).status == Outcome::Ok);
  CHECK(out == "10\n");
  // Recorded from the globals the input started from (g = 5), so it prints 10 again...
  auto rec = s.record("reg");
  CHECK(rec.output == "10\n");
  rec = s.record("stack");
  CHECK(rec.output == "10\n");
  // ...and the session's g is still 10, not 20.
  out.clear();
  REQUIRE(s.submit("print(g)\n", "c", opts).status == Outcome::Ok);
  CHECK(out == "10\n");

  CHECK(s.record("jit").error.find("only the stack and reg") != std::string::npos);
  CHECK(Session().record("stack").error == "no input yet");
  Session bad;
  bad.compile("x = \n", "bad");
  CHECK(bad.record("stack").error.find("errors") != std::string::npos);
  Session t;
  REQUIRE(t.compile("y = sum_all(ones([2, 2]))\nprint(y)\n", "t").status == Outcome::Ok);
  // The VMs run tensor code, so it can be stepped there (issue 15).
  for (const char* vm : {"stack", "reg"}) {
    CAPTURE(vm);
    auto tr = t.record(vm);
    CHECK(tr.error.empty());
    CHECK(tr.output == "4.0\n");
    CHECK(!tr.steps.empty());
  }
}

TEST_CASE("live_ranges: the allocator's intervals, one register holds one value at a time") {
  const fs::path dir = fs::path(DESCENT_TESTS_DIR) / "programs";
  for (int regs : {16, 3}) {
    CAPTURE(regs);
    Session s;
    REQUIRE(s.set_num_registers(regs));
    std::string pressure =
        "fn mix(a: int, b: int, c: int, d: int) -> int {\n"
        "  return a * b + c * d + a * c + b * d\n"
        "}\n"
        "print(mix(1, 2, 3, 4))\n";
    REQUIRE(s.compile(read_file(dir / "fib_recursive.ds") + kLoopProgram + pressure, "t")
                .status == Outcome::Ok);
    auto fns = s.live_ranges();
    REQUIRE(fns.size() >= 4);  // the script, fib, sq, mix
    CHECK(fns[0].function == "<top>");
    std::string live = s.stage("live").text;
    int spilled = 0;
    for (const auto& f : fns) {
      CAPTURE(f.function);
      CHECK(f.num_instructions > 0);
      CHECK(live.find("live intervals (" + std::to_string(f.ranges.size()) + ",") !=
            std::string::npos);
      for (size_t i = 0; i < f.ranges.size(); ++i) {
        const auto& a = f.ranges[i];
        CHECK(a.start <= a.end);
        CHECK(a.end < f.num_instructions);
        CHECK(!a.type.empty());
        CHECK(a.location[0] == (a.spilled ? 's' : 'r'));
        spilled += a.spilled;
        if (i) CHECK(f.ranges[i - 1].start <= a.start);
        for (size_t j = i + 1; j < f.ranges.size(); ++j) {
          const auto& b = f.ranges[j];
          // A value last read by pc and one first written by pc may share a register.
          if (a.location == b.location) CHECK((a.end <= b.start || b.end <= a.start));
        }
      }
    }
    if (regs == 3) CHECK(spilled > 0);
  }
  CHECK(Session().live_ranges().empty());
}

namespace {

// The source text of every node with a range, preorder: "head atom=text".
void collect_ranges(const descent::TreeNode& n, const std::string& src,
                    std::vector<std::string>& out) {
  if (n.loc.valid() && n.end.valid()) {
    REQUIRE(n.end.offset > n.loc.offset);
    REQUIRE(n.end.offset <= src.size());
    out.push_back(n.head + (n.atom.empty() ? "" : " " + n.atom) + "=" +
                  src.substr(n.loc.offset, n.end.offset - n.loc.offset));
  }
  for (const auto& k : n.kids) collect_ranges(k, src, out);
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("AST nodes carry their source range [loc, end)") {
  const std::string src =
      "y = 4\n"
      "x = (1 + 2) * y\n"
      "fn f(a: int, b: int) -> int {\n"
      "  if a < b {\n"
      "    return a\n"
      "  } else {\n"
      "    return f(b, a) + g()\n"
      "  }\n"
      "}\n"
      "fn g() -> int { return 1 }\n"
      "print(f(1, 2))\n";
  Session s;
  REQUIRE(s.compile(src, "t").status == Outcome::Ok);
  auto ast = s.stage("ast");
  REQUIRE(ast.tree);
  std::vector<std::string> r;
  collect_ranges(*ast.tree, src, r);
  CHECK(has(r, "assign x=x = (1 + 2) * y"));
  CHECK(has(r, "mul=(1 + 2) * y"));
  CHECK(has(r, "add=1 + 2"));
  CHECK(has(r, "int 2=2"));
  CHECK(has(r, "var y=y"));
  CHECK(has(r, "lt=a < b"));
  CHECK(has(r, "call f=f(b, a)"));
  CHECK(has(r, "call g=g()"));
  CHECK(has(r, "add=f(b, a) + g()"));
  CHECK(has(r, "block={\n    return a\n  }"));
  CHECK(has(r, "block={ return 1 }"));
  CHECK(has(r, "fn g=fn g() -> int { return 1 }"));
  CHECK(has(r, "call print=print(f(1, 2))"));
  // The if statement runs from its keyword to the else block's brace.
  CHECK(has(r, "if=if a < b {\n    return a\n  } else {\n    return f(b, a) + g()\n  }"));
  // Every node but the root has a range; ranges nest.
  size_t nodes = 0;
  std::function<void(const descent::TreeNode&, uint32_t, uint32_t)> nest =
      [&](const descent::TreeNode& n, uint32_t lo, uint32_t hi) {
        ++nodes;
        CHECK(n.end.valid());
        CHECK(n.loc.offset >= lo);
        CHECK(n.end.offset <= hi);
        for (const auto& k : n.kids) nest(k, n.loc.offset, n.end.offset);
      };
  for (const auto& k : ast.tree->kids) nest(k, 0, static_cast<uint32_t>(src.size()));
  CHECK(nodes > 30);
  // The folded tree has ranges too.
  auto folded = s.stage("ast-folded");
  REQUIRE(folded.tree);
  r.clear();
  collect_ranges(*folded.tree, src, r);
  CHECK(has(r, "mul=(1 + 2) * y"));
}

TEST_CASE("graph_view: the dataflow graph as nodes and edges, before and after fusion") {
  Session s;
  RunOptions quiet;
  REQUIRE(s.submit("x = rand([1, 64], 1)\n"
                   "w = rand([20, 64], 2)\n"
                   "y = relu(linear(x, w))\n"
                   "print(sum_all(y))\n",
                   "t", quiet)
              .status == Outcome::Ok);
  auto kernels = [](const descent::GraphData& g) {
    int n = 0;
    for (const auto& node : g.nodes) n += node.kind == "kernel";
    return n;
  };
  auto before = s.graph_view("before");
  REQUIRE(before.ok);
  REQUIRE(before.graph);
  CHECK(kernels(*before.graph) == 2);
  bool has_linear = false, has_relu = false;
  for (const auto& n : before.graph->nodes) {
    has_linear |= n.label == "linear";
    has_relu |= n.label == "relu";
    if (n.label == "relu") {
      CHECK(n.shape == "[1, 20]");
      CHECK(n.output);
    }
  }
  CHECK(has_linear);
  CHECK(has_relu);
  // Every edge joins two nodes of the graph, an input to its user, labelled with a shape.
  std::set<int64_t> ids;
  for (const auto& n : before.graph->nodes) ids.insert(n.id);
  REQUIRE(!before.graph->edges.empty());
  for (const auto& e : before.graph->edges) {
    CHECK(ids.count(e.from) == 1);
    CHECK(ids.count(e.to) == 1);
    CHECK(e.label.front() == '[');
  }
  auto fused = s.graph_view("fuse_elementwise");
  REQUIRE(fused.ok);
  REQUIRE(fused.graph);
  CHECK(kernels(*fused.graph) == 1);
  bool has_fused = false;
  for (const auto& n : fused.graph->nodes) has_fused |= n.label == "linear_relu";
  CHECK(has_fused);
  CHECK(s.graph_view("executed").graph);
  CHECK(!s.graph_view("nonsense").graph);
}

namespace {

const descent::TreeNode* find_node(const descent::TreeNode& n, const std::string& head,
                                   const std::string& atom) {
  if (n.head == head && n.atom == atom) return &n;
  for (const auto& k : n.kids)
    if (const auto* f = find_node(k, head, atom)) return f;
  return nullptr;
}

}  // namespace

TEST_CASE("kernel_view: the loop nest as a tree, as the schedule changes it") {
  Session s;
  std::string error;
  REQUIRE(s.select_kernel("matmul", {{"n", 64}, {"k", 32}, {"m", 48}}, &error));
  auto tir = s.kernel_view("tir");
  REQUIRE(tir.ok);
  REQUIRE(tir.tree);
  CHECK(tir.tree->head == "func");
  CHECK(tir.tree->atom == "matmul");
  const auto* i = find_node(*tir.tree, "for", "i");
  REQUIRE(i);
  CHECK(i->type == "serial");
  CHECK(i->detail == "0..64");
  const auto* block = find_node(*tir.tree, "block", "C");
  REQUIRE(block);
  CHECK(block->detail.find("R(") != std::string::npos);  // the reduction axis
  REQUIRE(!block->kids.empty());
  CHECK(block->kids.front().head == "init");
  const auto& body = block->kids.back();
  CHECK(body.head == "stmt");
  CHECK(body.leaf);
  CHECK(body.atom.find(" = ") != std::string::npos);
  CHECK(body.atom.find('\n') == std::string::npos);

  REQUIRE(s.schedule_step("split i 16", &error));
  tir = s.kernel_view("tir");
  REQUIRE(tir.tree);
  CHECK(find_node(*tir.tree, "for", "i") == nullptr);
  const auto* outer = find_node(*tir.tree, "for", "i_0");
  const auto* inner = find_node(*tir.tree, "for", "i_1");
  REQUIRE(outer);
  REQUIRE(inner);
  CHECK(outer->detail == "0..4");
  CHECK(inner->detail == "0..16");
  // The original is still the unscheduled nest.
  auto original = s.kernel_view("tir-original");
  REQUIRE(original.tree);
  CHECK(find_node(*original.tree, "for", "i"));

  REQUIRE(s.schedule_step("parallel i_0", &error));
  REQUIRE(s.schedule_step("reorder r j", &error));
  INFO(error);
  REQUIRE(s.schedule_step("vectorize j", &error));
  tir = s.kernel_view("tir");
  REQUIRE(tir.tree);
  REQUIRE(find_node(*tir.tree, "for", "i_0"));
  CHECK(find_node(*tir.tree, "for", "i_0")->type == "parallel");
  REQUIRE(find_node(*tir.tree, "for", "j"));
  CHECK(find_node(*tir.tree, "for", "j")->type == "vectorized");
  CHECK(!s.kernel_view("c").tree);
}
