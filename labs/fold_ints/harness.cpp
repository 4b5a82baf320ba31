// The checker's side of lab fold_ints, compiled with the student's fold.cpp against the
// project's lang/ library and run in a child process (a crash here is a failed check, not
// a crash of `descent lab`). `harness CASE PROGRAMS_DIR` prints one line: "PASS" or
// "FAIL: why".
//   keeps_results  every program prints the same, folded or not (the lab's programs and
//                  300 seeded random integer expressions, overflow included)
//   folds          2 * 3 + 4 - 1 becomes the single literal 9
//   leaves_division_alone  1 / 0 is still a runtime error, at its line
#include <cstdio>
#include <random>
#include <string>

#include "fold_lab.h"
// The lab's programs, compiled and run on the AST walker: shared with the other C++ labs.
#include "labs/cpp_common/differential.h"

using namespace descent;

namespace {

struct Result {
  std::unique_ptr<lab::Compiled> compiled;  // its program is the folded one
  std::string output;  // what it printed, then "error at line N: ..." if it failed at run time
  int folds = 0;
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

// Parses and checks the program, folds it if asked (the student's code), and runs it on the
// AST walker.
Result run(const std::string& text, bool fold) {
  Result r;
  r.compiled = lab::compile({"program.ds", text});
  if (!r.compiled->ok) {
    r.output = "compile error: " + r.compiled->error;
    return r;
  }
  if (fold) fold_block(r.compiled->program->body, &r.folds);
  r.output = lab::walker_output(*r.compiled);
  return r;
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
  if (argc < 3) return lab::fail("usage: harness CASE PROGRAMS_DIR");
  std::string which = argv[1];
  std::filesystem::path dir = argv[2];
  if (which == "keeps_results") {
    std::vector<lab::Source> programs = lab::lab_programs(dir);
    std::mt19937_64 rng(42);
    for (int i = 0; i < 300; ++i)
      programs.push_back({"random expression " + std::to_string(i + 1), "print(" + random_expr(rng, 4) + ")\n", true});
    for (const auto& src : programs) {
      Result want = run(src.text, false), got = run(src.text, true);
      if (want.output != got.output)
        return lab::fail(src.name + ": unfolded it prints \"" + lab::shown(want.output) + "\", folded \"" +
                         lab::shown(got.output) + "\"" + (src.random ? " (the program: " + lab::shown(src.text) + ")" : ""));
    }
    return lab::pass();
  }
  if (which == "folds") {
    Result r = run("print(2 * 3 + 4 - 1)\n", true);
    const Block& body = r.compiled->program->body;
    const Expr* arg = r.compiled->ok && !body.empty() && body[0]->expr && !body[0]->expr->kids.empty()
                          ? body[0]->expr->kids[0].get()
                          : nullptr;
    if (!arg || arg->kind != ExprKind::IntLit)
      return lab::fail("print(2 * 3 + 4 - 1): the argument is still an expression after folding (" +
                  std::to_string(r.folds) + " folds); it should be the literal 9");
    if (arg->int_value != 9) return lab::fail("print(2 * 3 + 4 - 1) folded to " + std::to_string(arg->int_value) + ", not 9");
    if (arg->type != Type::Int) return lab::fail("the folded literal's type is not Type::Int");
    return lab::pass();
  }
  if (which == "leaves_division_alone") {
    std::string text = "print(\"before\")\nprint(1 / 0)\nprint(7 % 0)\n";
    Result got = run(text, true);
    if (got.output != "before\nerror at line 2: division by zero")
      return lab::fail("print(1 / 0) must stay a runtime error at line 2; folded, the program printed \"" +
                       lab::shown(got.output) + "\"");
    return lab::pass();
  }
  return lab::fail("unknown case " + which);
}
