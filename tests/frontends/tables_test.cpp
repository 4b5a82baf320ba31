// The front ends' tables: the Session's stages, the REPL's commands and what completion
// offers all come from one list each, so every listed stage dispatches, every listed
// command has help and runs, and every keyword the lexer knows completes. Also the loop
// names the loop-nest tree carries (TreeNode::ref), which the visualizer selects loops by.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <sstream>

#include "apps/repl.h"
#include "frontend_util.h"
#include "lang/token.h"
#include "pipeline/pipeline.h"

using descent::Repl;
using descent::Session;
using descent::StageResult;
using descent::TreeNode;
using fe::contains;

namespace {

using R = fe::ReplHarness;

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Every "for" node of a loop-nest tree, in preorder.
std::vector<const TreeNode*> loops_of(const TreeNode& root) {
  std::vector<const TreeNode*> out;
  std::function<void(const TreeNode&)> walk = [&](const TreeNode& n) {
    if (n.head == "for") out.push_back(&n);
    for (const auto& k : n.kids) walk(k);
  };
  walk(root);
  return out;
}

std::vector<std::string> refs(const TreeNode& root) {
  std::vector<std::string> out;
  for (const TreeNode* n : loops_of(root)) out.push_back(n->ref);
  return out;
}

}  // namespace

TEST_SUITE("tables") {

TEST_CASE("every stage in Session::stages() dispatches, and the list names each once") {
  Session s;
  s.submit("x = 15\nprint(x + 10 - 5)\n", "<t>", descent::RunOptions{});
  std::set<std::string> seen;
  for (const auto& st : Session::stages()) {
    INFO("stage " << st.name);
    CHECK(seen.insert(st.name).second);
    CHECK(std::string(st.description).size() > 10);
    StageResult r = s.stage(st.name);
    CHECK_FALSE(contains(r.text, "unknown stage"));
    if (std::string(st.name) != "graph") CHECK(r.ok);  // no tensor code: graph is pending
  }
  StageResult bad = s.stage("nosuch");
  CHECK_FALSE(bad.ok);
  CHECK(contains(bad.text, "unknown stage 'nosuch' (stages: tokens, ast, ast-folded,"));
  CHECK(contains(bad.text, ", graph, grad)"));
}

TEST_CASE("every REPL command in the table has help and is reachable") {
  std::set<std::string> seen;
  for (const auto& c : Repl::command_table()) {
    std::string name = c.name;
    INFO("command " << name);
    CHECK(name.size() > 1);
    CHECK(name[0] == ':');
    CHECK(seen.insert(name).second);
    CHECK(c.args != nullptr);
    CHECK(std::string(c.help).size() > 3);
    CHECK(bool(c.run));
    for (const char* a : c.aliases) CHECK(seen.insert(a).second);
  }
  CHECK(Repl::commands().size() == Repl::command_table().size());
  R r;
  std::string help = (r.repl.feed(":help"), r.out.str());
  for (const auto& c : Repl::command_table()) {
    INFO("command " << c.name);
    CHECK(contains(help, c.help));
    // Dispatch reaches it: whatever it says (usage, nothing selected, ...), it is known.
    bool keep_going = r.repl.feed(c.name);
    CHECK(keep_going == (std::string(c.name) != ":quit"));
    CHECK_FALSE(contains(r.err.str(), "unknown command"));
  }
  for (const char* alias : {":q", ":exit"}) {
    R q;
    CHECK_FALSE(q.repl.feed(alias));
    CHECK(q.err.str().empty());
  }
}

TEST_CASE("completion: every lexer keyword, `kernel` included, and the command table") {
  R r;
  CHECK(has(r.repl.complete("ker"), "kernel"));
  for (std::string_view kw : descent::keywords()) {
    INFO("keyword " << kw);
    CHECK(has(r.repl.complete(std::string(kw.substr(0, 2))), std::string(kw)));
  }
}

TEST_CASE("completion: a command's argument completes from the Session's lists") {
  R r;
  auto stages = r.repl.complete(":stage ", "as");
  CHECK(std::set<std::string>(stages.begin(), stages.end()) ==
        std::set<std::string>{"asm", "ast", "ast-folded"});
  CHECK(r.repl.complete(":engine ", "") == Session::engines());
  CHECK(r.repl.complete(":device ", "") == Session::devices());
  CHECK(has(r.repl.complete(":kernel ", "mat"), "matmul"));
  // A command without arguments to complete offers nothing, not names.
  CHECK(r.repl.complete(":tokens ", "").empty());
  // Not after a command: names and keywords as before.
  CHECK(has(r.repl.complete("x = ", "wh"), "while"));
}

TEST_CASE("the loop-nest tree carries each loop's schedule name") {
  Session s;
  std::map<std::string, int64_t> dims;
  std::string error;
  REQUIRE_MESSAGE(s.select_kernel("matmul", dims, &error), error);
  StageResult t = s.kernel_view("tir");
  REQUIRE(t.tree);
  CHECK(refs(*t.tree) == std::vector<std::string>{"i", "j", "r"});
  REQUIRE_MESSAGE(s.schedule_step("split i 16", &error), error);
  t = s.kernel_view("tir");
  REQUIRE(t.tree);
  auto loops = loops_of(*t.tree);
  REQUIRE(loops.size() == 4);
  CHECK(loops[0]->atom == "i_0");
  CHECK(loops[0]->ref == "i_0");
  CHECK(loops[1]->ref == "i_1");
  // As lowered, before the schedule.
  StageResult o = s.kernel_view("tir-original");
  REQUIRE(o.tree);
  CHECK(refs(*o.tree) == std::vector<std::string>{"i", "j", "r"});
}

TEST_CASE("the loop-nest tree qualifies a loop name that two nests share") {
  Session s;
  REQUIRE(s.submit("kernel mm_relu(A: f32[8, 8], B: f32[8, 8]) -> f32[8, 8] {\n"
                   "  Y[i, j] = sum(k) A[i, k] * B[k, j]\n"
                   "  C[i, j] = max(Y[i, j], 0.0)\n"
                   "  return C\n"
                   "}\n",
                   "<t>", descent::RunOptions{})
              .status == descent::Outcome::Ok);
  std::string error;
  REQUIRE_MESSAGE(s.select_kernel("mm_relu", {}, &error), error);
  StageResult t = s.kernel_view("tir");
  REQUIRE(t.tree);
  CHECK(refs(*t.tree) == std::vector<std::string>{"Y.i", "Y.j", "k", "C.i", "C.j"});
  // Each name is one the schedule accepts.
  REQUIRE_MESSAGE(s.schedule_step("split C.i 4", &error), error);
  t = s.kernel_view("tir");
  // C's i is now i_0 and i_1, so Y's i is unique again; both j are still ambiguous.
  CHECK(refs(*t.tree) ==
        std::vector<std::string>{"i", "Y.j", "k", "i_0", "i_1", "C.j"});
}

}  // TEST_SUITE
