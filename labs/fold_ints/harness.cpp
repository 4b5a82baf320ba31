// The checker's side of lab fold_ints, compiled with the student's fold.cpp against the
// project's lang/ library and run in a child process (a crash here is a failed check, not
// a crash of `descent lab`). `harness CASE PROGRAMS_DIR` prints one line: "PASS" or
// "FAIL: why".
//   keeps_results  every program prints the same, folded or not (the lab's programs and
//                  300 seeded random integer expressions, overflow included)
//   folds          2 * 3 + 4 - 1 becomes the single literal 9
//   leaves_division_alone  1 / 0 is still a runtime error, at its line
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "fold_lab.h"
#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "lang/walker.h"

using namespace descent;

namespace {

struct Result {
  bool compiled = false;
  std::string output;  // what it printed, then "error: ..." if it failed at run time
  int folds = 0;
  Program program;
};

void fold_expr(ExprPtr& e, int* folds) {
  for (auto& k : e->kids) fold_expr(k, folds);
  if (ExprPtr f = fold_int_binary(*e)) {
    e = std::move(f);
    ++*folds;
  }
}

void fold_block(Block& b, int* folds) {
  for (auto& s : b) {
    if (s->expr) fold_expr(s->expr, folds);
    if (s->expr2) fold_expr(s->expr2, folds);
    fold_block(s->body, folds);
    fold_block(s->else_body, folds);
    if (s->fn) fold_block(s->fn->body, folds);
  }
}

Result run(const std::string& text, bool fold) {
  Result r;
  auto file = std::make_shared<SourceFile>("program.ds", text);
  std::vector<Diagnostic> diags;
  r.program = parse(file, diags);
  Module module;
  if (!diags.empty() || !check(r.program, module, {}, diags)) {
    r.output = "compile error: " + (diags.empty() ? std::string("?") : diags[0].message);
    return r;
  }
  r.compiled = true;
  if (fold) fold_block(r.program.body, &r.folds);
  GlobalStore globals;
  globals.resize(module.globals.size());
  RunOptions opts;
  opts.out = [&r](std::string_view t) { r.output += t; };
  auto walker = make_ast_walker();
  RunResult rr;
  run_on_big_stack([&] { rr = walker->run(r.program, module, globals, opts); });
  if (!rr.ok) r.output += "error at line " + std::to_string(rr.error.loc.line) + ": " + rr.error.message;
  return r;
}

std::string read(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int fail(const std::string& why) {
  std::printf("FAIL: %s\n", why.c_str());
  return 0;
}

std::string shown(std::string s) {
  for (auto& c : s)
    if (c == '\n') c = '|';
  return s.size() > 160 ? s.substr(0, 157) + "..." : s;
}

// A random integer expression over + - * with literals from small to near the int64 limits.
std::string random_expr(std::mt19937_64& rng, int depth) {
  if (depth == 0 || rng() % 3 == 0) {
    static const int64_t big[] = {0, 1, 2, 7, 1000003, 4611686018427387904LL, 9223372036854775807LL};
    int64_t v = rng() % 2 ? int64_t(rng() % 100) : big[rng() % 7];
    return std::to_string(v);
  }
  const char* ops[] = {" + ", " - ", " * "};
  return "(" + random_expr(rng, depth - 1) + ops[rng() % 3] + random_expr(rng, depth - 1) + ")";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return fail("usage: harness CASE PROGRAMS_DIR");
  std::string which = argv[1];
  std::filesystem::path dir = argv[2];
  if (which == "keeps_results") {
    std::vector<std::pair<std::string, std::string>> programs;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".ds") programs.push_back({e.path().filename().string(), read(e.path())});
    std::mt19937_64 rng(42);
    for (int i = 0; i < 300; ++i)
      programs.push_back({"random expression " + std::to_string(i + 1), "print(" + random_expr(rng, 4) + ")\n"});
    for (const auto& [name, text] : programs) {
      Result want = run(text, false), got = run(text, true);
      if (want.output != got.output)
        return fail(name + ": unfolded it prints \"" + shown(want.output) + "\", folded \"" +
                    shown(got.output) + "\"" + (name.rfind("random", 0) == 0 ? " (the program: " + shown(text) + ")" : ""));
    }
    std::printf("PASS\n");
    return 0;
  }
  if (which == "folds") {
    Result r = run("print(2 * 3 + 4 - 1)\n", true);
    const Expr* arg = r.compiled && !r.program.body.empty() && r.program.body[0]->expr &&
                              !r.program.body[0]->expr->kids.empty()
                          ? r.program.body[0]->expr->kids[0].get()
                          : nullptr;
    if (!arg || arg->kind != ExprKind::IntLit)
      return fail("print(2 * 3 + 4 - 1): the argument is still an expression after folding (" +
                  std::to_string(r.folds) + " folds); it should be the literal 9");
    if (arg->int_value != 9) return fail("print(2 * 3 + 4 - 1) folded to " + std::to_string(arg->int_value) + ", not 9");
    if (arg->type != Type::Int) return fail("the folded literal's type is not Type::Int");
    std::printf("PASS\n");
    return 0;
  }
  if (which == "leaves_division_alone") {
    std::string text = "print(\"before\")\nprint(1 / 0)\nprint(7 % 0)\n";
    Result got = run(text, true);
    if (got.output != "before\nerror at line 2: division by zero")
      return fail("print(1 / 0) must stay a runtime error at line 2; folded, the program printed \"" +
                  shown(got.output) + "\"");
    std::printf("PASS\n");
    return 0;
  }
  return fail("unknown case " + which);
}
