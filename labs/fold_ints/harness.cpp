// The checker's side of lab fold_ints, built twice with the project's lang/ library
// (labs/cpp_common/observe.h): with the student's fold.cpp, run as
// `harness observe CASE SEED PROGRAMS_DIR`, it makes the calls to fold_int_binary and writes
// what each returned on fd 3; with the lab's starter fold.cpp, run as
// `harness check CASE SEED PROGRAMS_DIR` on those records, it calls nothing of the student's
// and prints one line: "PASS" or "FAIL: why". SEED is the runner's, drawn per run.
//   keeps_results  every program prints the same, folded or not (the lab's programs and
//                  300 random integer expressions from the run's seed, overflow included)
//   folds          2 * 3 + 4 - 1 becomes the single literal 9
//   leaves_division_alone  1 / 0 is still a runtime error, at its line
//
// A call's record is the tree fold_int_binary returned (every field of every node) and, when
// it returned nullptr, whether it changed the expression it was given (a const Expr&) and
// into what. Both runs go on with the tree rebuilt from the record, after making sure the AST
// walker can run it (unrunnable() below): a tree that would crash the walker is a failed
// check with a message, not a crash of the checker.
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <unordered_map>

#include "fold_lab.h"
// The lab's programs, compiled and run on the AST walker: shared with the other C++ labs.
#include "labs/cpp_common/differential.h"
#include "labs/cpp_common/observe.h"

using namespace descent;

namespace {

// ---- an Expr tree as a record ----

// One node's fields, in the record's order (its kids follow it, each after a 1, or a 0 for a
// null kid). loc.file is a pointer: the record says whether it is null (0), the file of the
// expression the call was given (1: every node of the program has that one) or another (2,
// rebuilt as null: only a message with a file name reads it, and the walker's output has
// none). Without `with_loc` (a node's identity for unrunnable()): no loc, no height.
void write_node(lab::Record& r, const Expr& e, const SourceFile* file, bool with_loc) {
  r.u64(static_cast<uint64_t>(e.kind));
  if (with_loc)
    r.u64(e.loc.offset).u64(e.loc.line).u64(e.loc.col).u64(!e.loc.file ? 0 : e.loc.file == file ? 1 : 2).u64(e.height);
  r.u64(static_cast<uint64_t>(e.type)).i64(e.int_value).f64(e.float_value).u64(e.bool_value ? 1 : 0).str(e.text);
  r.u64(static_cast<uint64_t>(e.unary_op)).u64(static_cast<uint64_t>(e.binary_op));
  r.u64(static_cast<uint64_t>(e.operand_type)).u64(static_cast<uint64_t>(e.storage)).i64(e.slot);
  r.u64(e.check_defined ? 1 : 0).u64(static_cast<uint64_t>(e.builtin)).i64(e.kernel).u64(e.axes.size());
  for (const auto& a : e.axes) r.str(a);
  r.u64(e.kids.size());
}

// The tree under root (null: a 0), in preorder, without recursion (a returned tree may be
// as deep as the student made it).
void write_tree(lab::Record& r, const Expr* root, const SourceFile* file) {
  std::vector<const Expr*> todo = {root};
  while (!todo.empty()) {
    const Expr* e = todo.back();
    todo.pop_back();
    r.u64(e ? 1 : 0);
    if (!e) continue;
    write_node(r, *e, file, true);
    for (auto k = e->kids.rbegin(); k != e->kids.rend(); ++k) todo.push_back(k->get());
  }
}

std::string tree_text(const Expr* root, const SourceFile* file) {
  lab::Record r;
  write_tree(r, root, file);
  return r.text();
}

// A tree the AST walker cannot run; thrown while the record is read back, so both runs stop
// at the same call with the same message.
struct Unrunnable {
  std::string why;
};

// One node back from the record; *kids is how many kids follow it.
ExprPtr read_node(lab::Reader& in, const SourceFile* file, size_t* kids) {
  *kids = 0;
  if (in.count(1) == 0) return nullptr;
  auto e = std::make_unique<Expr>(static_cast<ExprKind>(in.count(255)), SourceLoc{});
  e->loc.offset = static_cast<uint32_t>(in.count(UINT32_MAX));
  e->loc.line = static_cast<uint32_t>(in.count(UINT32_MAX));
  e->loc.col = static_cast<uint32_t>(in.count(UINT32_MAX));
  e->loc.file = in.count(2) == 1 ? file : nullptr;
  e->height = static_cast<uint32_t>(in.count(UINT32_MAX));
  e->type = static_cast<Type>(in.count(255));
  e->int_value = in.i64();
  e->float_value = in.f64();
  e->bool_value = in.count(1) != 0;
  e->text = in.str();
  e->unary_op = static_cast<UnaryOp>(in.count(255));
  e->binary_op = static_cast<BinaryOp>(in.count(255));
  e->operand_type = static_cast<Type>(in.count(255));
  e->storage = static_cast<Storage>(in.count(255));
  e->slot = static_cast<int32_t>(in.i64());
  e->check_defined = in.count(1) != 0;
  e->builtin = static_cast<Builtin>(in.count(255));
  e->kernel = static_cast<int32_t>(in.i64());
  e->axes.resize(in.count());
  for (auto& a : e->axes) a = in.str();
  *kids = in.count();
  return e;
}

// The tree write_tree wrote, without recursion; a returned one deeper than the parser allows
// (`limit`) is unrunnable.
ExprPtr read_tree(lab::Reader& in, const SourceFile* file, size_t limit = kMaxExprHeight) {
  size_t kids = 0;
  ExprPtr root = read_node(in, file, &kids);
  struct Open {
    Expr* node;
    size_t left;  // kids still to read
  };
  std::vector<Open> open;
  if (root && kids) open.push_back({root.get(), kids});
  while (!open.empty()) {
    if (open.back().left == 0) {
      open.pop_back();
      continue;
    }
    --open.back().left;
    Expr* parent = open.back().node;
    ExprPtr kid = read_node(in, file, &kids);
    Expr* raw = kid.get();
    parent->kids.push_back(std::move(kid));
    if (raw && kids) {
      if (open.size() >= limit)
        throw Unrunnable{"a tree more than " + std::to_string(kMaxExprHeight) + " levels deep (the parser's limit)"};
      open.push_back({raw, kids});
    }
  }
  return root;
}

// ---- can the AST walker run it? ----

const char* kind_name(ExprKind k) {
  static const char* kNames[] = {"IntLit", "FloatLit", "BoolLit", "StrLit", "Var",    "Unary", "Binary",
                                 "Call",   "Promote",  "List",    "Index",  "Field",  "Reduce", "Axis"};
  size_t i = static_cast<size_t>(k);
  return i < std::size(kNames) ? kNames[i] : "(not an ExprKind)";
}

// The subtrees of the expression a call was given, each by its fields without loc and
// height, and its kids' ids: a node the student did not make from scratch must be one of them.
class Originals {
 public:
  // Adds every subtree of root; with add false, says whether root's subtree is one of them.
  bool intern(const Expr& root, bool add) {
    std::unordered_map<const Expr*, int> id;
    std::vector<std::pair<const Expr*, bool>> todo = {{&root, false}};
    while (!todo.empty()) {
      auto [e, kids_done] = todo.back();
      todo.pop_back();
      if (!kids_done) {
        todo.push_back({e, true});
        for (const auto& k : e->kids)
          if (k) todo.push_back({k.get(), false});
        continue;
      }
      lab::Record r;
      write_node(r, *e, nullptr, false);
      std::string key = r.text();
      for (const auto& k : e->kids) key += " " + std::to_string(k ? id[k.get()] : -1);
      auto found = ids_.find(key);
      if (found != ids_.end()) {
        id[e] = found->second;
      } else {
        if (!add) return false;
        int next = static_cast<int>(ids_.size());
        ids_.emplace(key, next);
        id[e] = next;
      }
    }
    return true;
  }

 private:
  std::map<std::string, int> ids_;
};

// "" if the AST walker can evaluate root, else what is wrong with it. Literals and the
// operators a fold makes (Unary, Binary, Promote) may be new; every other kind needs what
// sema worked out (a variable's slot, a call's callee), so it must be a copy of a node of the
// expression the call was given (`given`: its record, read back only when needed).
std::string unrunnable(const Expr& root, const std::string& given, const SourceFile* file) {
  std::unique_ptr<Originals> originals;
  std::vector<const Expr*> todo = {&root};
  while (!todo.empty()) {
    const Expr& e = *todo.back();
    todo.pop_back();
    size_t needs = 0;  // the kids the walker evaluates
    switch (e.kind) {
      case ExprKind::IntLit: case ExprKind::FloatLit: case ExprKind::BoolLit: case ExprKind::StrLit:
        break;
      case ExprKind::Unary: case ExprKind::Promote: needs = 1; break;
      case ExprKind::Binary: needs = 2; break;
      default: {
        if (!originals) {
          lab::Reader in("fold_int_binary", 0, given);
          ExprPtr tree = read_tree(in, file, SIZE_MAX);  // the harness's own tree
          originals = std::make_unique<Originals>();
          if (tree) originals->intern(*tree, true);
        }
        if (!originals->intern(e, false))
          return std::string("a ") + kind_name(e.kind) +
                 " node that is not a copy of one in the expression it was given (a fold may make new "
                 "literals, Unary, Binary and Promote nodes; any other node needs what sema worked out)";
        continue;  // its kids are the copy's
      }
    }
    for (size_t k = 0; k < needs; ++k) {
      if (k >= e.kids.size())
        return std::string("a ") + kind_name(e.kind) + " node with " + std::to_string(e.kids.size()) +
               (e.kids.size() == 1 ? " kid" : " kids") + " (the AST walker evaluates " +
               (needs == 1 ? "kids[0]" : "kids[0] and kids[1]") + ")";
      if (!e.kids[k])
        return std::string("a ") + kind_name(e.kind) + " node whose kids[" + std::to_string(k) + "] is null";
      todo.push_back(e.kids[k].get());
    }
  }
  return "";
}

// ---- fold_int_binary, through the trust boundary ----

// Calls the student's fold_int_binary on *e. Returns the fold (null for none); when it
// returned nullptr and changed *e in place, *e is what it made of it.
ExprPtr student_fold(ExprPtr& e) {
  const SourceFile* file = e->loc.file;
  std::string given = tree_text(e.get(), file);  // *e as given, in both runs
  std::string where = std::string(kind_name(e->kind)) +
                      (e->kind == ExprKind::Binary ? std::string(" ") + op_symbol(e->binary_op)
                       : e->kind == ExprKind::Unary ? std::string(" ") + op_symbol(e->unary_op)
                                                    : "") +
                      " at line " + std::to_string(e->loc.line);
  struct Answer {
    ExprPtr fold, changed;  // changed: *e after the call, when it returned nullptr and changed it
  };
  bool reading_changed = false;  // which tree a too deep record is
  Answer a;
  try {
    a = lab::observed(
        "fold_int_binary",
        [&](lab::Record& r) {
          ExprPtr got = fold_int_binary(*e);
          write_tree(r, got.get(), file);
          if (got) return;
          std::string after = tree_text(e.get(), file);
          r.u64(after != given ? 1 : 0);
          if (after != given) write_tree(r, e.get(), file);
        },
        [&](lab::Reader& in) {
          Answer out;
          out.fold = read_tree(in, file);
          reading_changed = true;
          if (!out.fold && in.count(1) == 1) out.changed = read_tree(in, file);
          return out;
        });
  } catch (const Unrunnable& u) {
    throw Unrunnable{"fold_int_binary, given the " + where +
                     (reading_changed ? ", returned nullptr but changed that expression (a const Expr&) into "
                                      : ", returned ") +
                     u.why};
  }
  if (a.fold) {
    std::string why = unrunnable(*a.fold, given, file);
    if (!why.empty())
      throw Unrunnable{"fold_int_binary, given the " + where + ", returned a tree the AST walker cannot run: " + why};
    return std::move(a.fold);
  }
  if (a.changed) {
    std::string why = unrunnable(*a.changed, given, file);
    if (!why.empty())
      throw Unrunnable{"fold_int_binary, given the " + where +
                       ", returned nullptr but changed that expression (a const Expr&) into one the AST walker "
                       "cannot run: " + why};
    e = std::move(a.changed);
  }
  return nullptr;
}

// ---- the checks ----

struct Result {
  std::unique_ptr<lab::Compiled> compiled;  // its program is the folded one
  std::string output;  // what it printed, then "error at line N: ..." if it failed at run time
  int folds = 0;
  std::string unrunnable;  // a fold the AST walker cannot run: the program was not run
};

void fold_expr(ExprPtr& e, int* folds) {
  for (auto& k : e->kids) fold_expr(k, folds);
  if (ExprPtr f = student_fold(e)) {
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
  if (fold) {
    try {
      fold_block(r.compiled->program->body, &r.folds);
    } catch (const Unrunnable& u) {
      r.unrunnable = u.why;
      return r;
    }
  }
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

std::string check(const std::string& which, uint64_t seed, const std::filesystem::path& dir) {
  if (which == "keeps_results") {
    std::vector<lab::Source> programs = lab::lab_programs(dir);
    std::mt19937_64 rng(seed);  // the random expressions: from the run's seed
    for (int i = 0; i < 300; ++i)
      programs.push_back({"random expression " + std::to_string(i + 1), "print(" + random_expr(rng, 4) + ")\n", true});
    for (const auto& src : programs) {
      Result want = run(src.text, false), got = run(src.text, true);
      std::string program = src.random ? " (the program: " + lab::shown(src.text) + ")" : "";
      if (!got.unrunnable.empty()) return src.name + ": " + got.unrunnable + program;
      if (want.output != got.output)
        return src.name + ": unfolded it prints \"" + lab::shown(want.output) + "\", folded \"" +
               lab::shown(got.output) + "\"" + program;
    }
    return "";
  }
  if (which == "folds") {
    Result r = run("print(2 * 3 + 4 - 1)\n", true);
    if (!r.unrunnable.empty()) return "print(2 * 3 + 4 - 1): " + r.unrunnable;
    const Block& body = r.compiled->program->body;
    const Expr* arg = r.compiled->ok && !body.empty() && body[0]->expr && !body[0]->expr->kids.empty()
                          ? body[0]->expr->kids[0].get()
                          : nullptr;
    if (!arg || arg->kind != ExprKind::IntLit)
      return "print(2 * 3 + 4 - 1): the argument is still an expression after folding (" + std::to_string(r.folds) +
             " folds); it should be the literal 9";
    if (arg->int_value != 9) return "print(2 * 3 + 4 - 1) folded to " + std::to_string(arg->int_value) + ", not 9";
    if (arg->type != Type::Int) return "the folded literal's type is not Type::Int";
    return "";
  }
  if (which == "leaves_division_alone") {
    std::string text = "print(\"before\")\nprint(1 / 0)\nprint(7 % 0)\n";
    Result got = run(text, true);
    if (!got.unrunnable.empty()) return "print(1 / 0): " + got.unrunnable;
    if (got.output != "before\nerror at line 2: division by zero")
      return "print(1 / 0) must stay a runtime error at line 2; folded, the program printed \"" +
             lab::shown(got.output) + "\"";
    return "";
  }
  return "unknown case " + which;
}

}  // namespace

int main(int argc, char** argv) {
  return lab::harness_main(argc, argv, 1, [](const lab::Args& a) { return check(a.which, a.seed, a.data[0]); });
}
