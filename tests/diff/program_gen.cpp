// The random program generator: see program_gen.h for what it promises.
//
// Shape of a program (the pieces are shuffled in the text, since functions may be declared
// anywhere at top level and called before their declaration):
//
//   prologue      g0 = ..., g1 = ...           globals the functions may read
//   functions     three layers, so that every call chain terminates:
//                   leaf   calls lower-numbered leaves only
//                   rec    has a depth parameter d, returns early when d <= 0, calls rec
//                          functions (itself, others: mutual recursion) only with d - 1 or
//                          d - 2, at most twice per body and never inside a loop, and leaves
//                   upper  calls leaves, rec functions with a small constant depth, and
//                          lower-numbered upper functions
//   main          top-level statements within a step budget; maybe a planted error
//   helpers       clampi (a float-to-int that cannot fail), the planted error's functions
//
// Costs are estimated in AST-walker steps (one per statement, loop iteration and call): a
// function's cost is its body's worst case, a loop's is trips * (body + 1), a call to a rec
// function with constant depth k is at most (2^(k+1) - 1) bodies. Each block is generated
// against what is left of its budget, so no program exceeds what its budget allows.
#include "tests/diff/program_gen.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace descent::testing {
namespace {

enum class Ty { Int, Float, Bool, Void };

const char* type_name(Ty t) {
  switch (t) {
    case Ty::Int: return "int";
    case Ty::Float: return "float";
    case Ty::Bool: return "bool";
    case Ty::Void: return "void";
  }
  return "?";
}

const char* const kIntMin = "(-9223372036854775807 - 1)";

struct Func {
  enum Kind { Leaf, Rec, Upper } kind = Leaf;
  std::string name;
  int order = 0;  // position in the generation order (leaves, then rec, then upper)
  std::vector<std::string> pnames;
  std::vector<Ty> ptypes;
  std::vector<bool> ptyped;  // false: an int parameter written without ": int"
  Ty ret = Ty::Void;
  bool annotate = true;  // writes "-> T" (always for rec functions that return a value)
  bool prints = false;   // starts by printing its name and arguments (always for bool ones)
  int64_t cost = 1;      // worst-case steps of one invocation (rec: without its rec calls)
  std::string text;
};

// What the generator knows at one point of a function body or of the top level.
struct Scope {
  Func* fn = nullptr;                  // null: the top level
  std::map<std::string, Ty> declared;  // every name assigned so far in the text: its type
  std::set<std::string> defined;       // definitely assigned here
  std::set<std::string> prot;          // never assigned again (loop counters, depth param)
  std::set<std::string> globals_read;  // in a function: globals it reads
  std::set<std::string> shadow;        // in a function: global names made locals
  bool reachable = true;
  int loops = 0;        // enclosing loops
  int rec_sites = 0;    // rec calls written in this rec function's body
  bool no_rec = false;  // rec calls not allowed here (the base case)
  int counter = 0;      // for fresh names
  std::string depth_param;
};

}  // namespace

class ProgramGenerator::Impl {
 public:
  Impl(uint64_t seed, GenOptions o) : opt_(o) {
    state_ = seed * 0x9E3779B97F4A7C15ull ^ 0xD1B54A32D192ED03ull;
    for (int i = 0; i < 4; ++i) next();
  }

  std::string generate();

  GenFeatures feat_;
  std::string expected_error_;

 private:
  // ---- randomness ----
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int below(int n) { return n <= 1 ? 0 : static_cast<int>(next() % static_cast<uint64_t>(n)); }
  int range(int lo, int hi) { return hi <= lo ? lo : lo + below(hi - lo + 1); }
  bool chance(int percent) { return below(100) < percent; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(below(static_cast<int>(v.size())))];
  }
  Ty random_type(int pi, int pf) {  // percentages of int and float; the rest bool
    int r = below(100);
    return r < pi ? Ty::Int : r < pi + pf ? Ty::Float : Ty::Bool;
  }
  static std::string ind(int n) { return std::string(static_cast<size_t>(2 * n), ' '); }

  // ---- names ----
  std::vector<std::string> readable(Scope& s, Ty t) {
    std::vector<std::string> out;
    for (const auto& n : s.defined)
      if (s.declared.at(n) == t) out.push_back(n);
    if (s.fn)
      for (const auto& [g, gt] : fn_globals_)
        if (gt == t && !s.declared.count(g)) out.push_back(g);
    return out;
  }
  std::string use_var(Scope& s, const std::string& name) {
    if (s.fn && !s.declared.count(name)) {
      s.globals_read.insert(name);
      feat_.global_in_function = true;
    }
    return name;
  }
  std::string fresh_local(Scope& s) {
    if (s.fn) {
      if (chance(6)) {
        std::vector<std::string> cands;
        for (const auto& [g, gt] : fn_globals_)
          if (!s.globals_read.count(g) && !s.declared.count(g)) cands.push_back(g);
        if (!cands.empty()) {
          std::string g = pick(cands);
          s.shadow.insert(g);
          feat_.shadowed_global = true;
          return g;
        }
      }
      return "x" + std::to_string(s.counter++);
    }
    return "v" + std::to_string(s.counter++);
  }
  std::string fresh_loop_var(Scope& s) { return "i" + std::to_string(s.counter++); }
  std::string fresh_counter(Scope& s) { return "w" + std::to_string(s.counter++); }

  // ---- literals ----
  std::string small_int() {
    int v = range(-12, 20);
    return v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
  }
  std::string big_int() {
    static const std::vector<std::string> big = {"3037000499",          "3037000500",
                                                 "4294967296",          "2147483647",
                                                 "9223372036854775807", kIntMin,
                                                 "1000000007",          "6700417",
                                                 "4611686018427387904", "(-4611686018427387904)",
                                                 "999999999999",        "(-9223372036854775807)",
                                                 "6364136223846793005", "1442695040888963407"};
    feat_.overflow = true;
    return pick(big);
  }
  std::string int_lit() {
    int r = below(100);
    if (r < 70) return small_int();
    if (r < 85) return std::to_string(range(21, 100000));
    return big_int();
  }
  std::string float_lit() {
    static const std::vector<std::string> lits = {"0.0",
                                                  "0.5",
                                                  "1.0",
                                                  "2.0",
                                                  "2.5",
                                                  "0.1",
                                                  "0.2",
                                                  "0.3",
                                                  "3.14159",
                                                  "1e9",
                                                  "2.5e-3",
                                                  "1e300",
                                                  "1e-300",
                                                  "123.456",
                                                  "1e16",
                                                  "1e15",
                                                  "100.0",
                                                  "7.25",
                                                  "1e22",
                                                  "5e-324",
                                                  "1.7976931348623157e308",
                                                  "0.0001",
                                                  "12345.678",
                                                  "1e-5",
                                                  "9007199254740993.0"};
    std::string s =
        chance(35) ? std::to_string(range(0, 99)) + "." + std::to_string(range(0, 99)) : pick(lits);
    return chance(20) ? "(-" + s + ")" : s;
  }
  std::string str_lit() {
    static const std::vector<std::string> strs = {
        "\"a\"",          "\"sum=\"",       "\"x\"",
        "\"tab\\there\"", "\"quote\\\"q\"", "\"back\\\\slash\"",
        "\"#hash\"",      "\"end\"",        "\"loop\"",
        "\"->\"",         "\"ok\"",         "\"nan?\""};
    if (chance(40)) return "\"s" + std::to_string(range(0, 999)) + "\"";
    return pick(strs);
  }

  // ---- calls ----
  int64_t rec_cost(int k) const { return ((int64_t{1} << (k + 1)) - 1) * (rec_budget_ + 6); }

  bool may_call(const Scope& s, const Func& f) const {
    if (!s.fn) return true;
    const Func& c = *s.fn;
    switch (c.kind) {
      case Func::Leaf: return f.kind == Func::Leaf && f.order < c.order;
      case Func::Rec:
        return f.kind == Func::Leaf ||
               (f.kind == Func::Rec && s.loops == 0 && s.rec_sites < 2 && !s.no_rec);
      case Func::Upper: return f.kind != Func::Upper || f.order < c.order;
    }
    return false;
  }

  // A call of some function returning t, or "" when none fits here or in the budget.
  std::string call(Scope& s, Ty t, int d, int64_t& al) {
    std::vector<Func*> cands;
    for (auto& f : funcs_)
      if (f->ret == t && may_call(s, *f)) cands.push_back(f.get());
    if (cands.empty()) return "";
    return call_to(s, *cands[static_cast<size_t>(below(static_cast<int>(cands.size())))], d, al);
  }

  std::string call_to(Scope& s, Func& f, int d, int64_t& al) {
    std::string depth_arg;
    if (f.kind == Func::Rec && s.fn && s.fn->kind == Func::Rec) {
      if (s.rec_sites >= 2 || s.loops > 0 || s.no_rec) return "";
      ++s.rec_sites;
      feat_.recursion = true;
      if (&f != s.fn) feat_.mutual_recursion = true;
      depth_arg = s.depth_param + (chance(75) ? " - 1" : " - 2");
    } else if (f.kind == Func::Rec) {
      int k = range(0, 6);
      while (k >= 0 && rec_cost(k) > al) --k;
      if (k < 0) return "";
      al -= rec_cost(k);
      depth_arg = std::to_string(k);
    } else {
      if (f.cost + 1 > al) return "";
      al -= f.cost + 1;
    }
    std::string out = f.name + "(";
    for (size_t i = 0; i < f.ptypes.size(); ++i) {
      if (i) out += ", ";
      if (i == 0 && f.kind == Func::Rec)
        out += depth_arg;
      else
        out += value_for(s, f.ptypes[i], d - 1, al, true);
    }
    return out + ")";
  }

  std::string clampi(Scope& s, int d, int64_t& al) {
    if (al < 5) return "";
    al -= 5;
    need_clampi_ = true;
    return "clampi(" + float_expr(s, d - 1, al) + ")";
  }

  // ---- expressions (fully parenthesised; al: steps calls may still spend) ----
  std::string expr(Scope& s, Ty t, int d, int64_t& al) {
    switch (t) {
      case Ty::Int: return int_expr(s, d, al);
      case Ty::Float: return float_expr(s, d, al);
      default: return bool_expr(s, d, al);
    }
  }
  // A value where type t is expected: an int where a float is wanted is promoted.
  std::string value_for(Scope& s, Ty t, int d, int64_t& al, bool promote_ok) {
    if (t == Ty::Float && promote_ok && chance(25)) return int_expr(s, d, al);
    return expr(s, t, d, al);
  }
  std::string num_expr(Scope& s, int d, int64_t& al) {
    return chance(50) ? int_expr(s, d, al) : float_expr(s, d, al);
  }

  std::string int_leaf(Scope& s) {
    auto vars = readable(s, Ty::Int);
    if (!vars.empty() && chance(70)) return use_var(s, pick(vars));
    return int_lit();
  }

  // Never zero, whatever e is (with wrap-around too).
  std::string safe_divisor(Scope& s, int d, int64_t& al) {
    switch (below(7)) {
      case 0: return "(abs(" + int_expr(s, d, al) + ") + 1)";
      case 1: return "((" + int_expr(s, d, al) + " % 5) + 6)";
      case 2: return "max(" + int_expr(s, d, al) + ", 1)";
      case 3: return "min(" + int_expr(s, d, al) + ", (-2))";
      case 4: return "((" + int_expr(s, d, al) + " * 2) + 1)";
      default: {
        static const std::vector<std::string> lits = {"1",  "2",    "3",     "7",       "10", "16",
                                                      "-1", "(-3)", "(-10)", "1000003", "-7"};
        std::string l = pick(lits);
        if (l == "-1") feat_.int_min_div = true;
        return l;
      }
    }
  }

  std::string int_expr(Scope& s, int d, int64_t& al) {
    if (d <= 0 || chance(20)) return int_leaf(s);
    switch (below(22)) {
      case 0:
      case 1:
      case 2:
      case 3:
      case 4:
      case 5: {
        static const std::vector<std::string> ops = {" + ", " - ", " * "};
        std::string a = int_expr(s, d - 1, al);
        std::string b = int_expr(s, d - 1, al);
        return "(" + a + pick(ops) + b + ")";
      }
      case 6:
      case 7: {
        feat_.int_div = true;
        std::string a = int_expr(s, d - 1, al);
        return "(" + a + " / " + safe_divisor(s, d - 1, al) + ")";
      }
      case 8:
      case 9: {
        feat_.int_mod = true;
        std::string a = int_expr(s, d - 1, al);
        return "(" + a + " % " + safe_divisor(s, d - 1, al) + ")";
      }
      case 10: return "(-" + int_expr(s, d - 1, al) + ")";
      case 11: return "abs(" + int_expr(s, d - 1, al) + ")";
      case 12: {
        std::string a = int_expr(s, d - 1, al);
        std::string b = int_expr(s, d - 1, al);
        return (chance(50) ? "min(" : "max(") + a + ", " + b + ")";
      }
      case 13:
      case 14:
      case 15: {
        std::string c = call(s, Ty::Int, d, al);
        return c.empty() ? int_leaf(s) : c;
      }
      case 16:
      case 17: return int_of_float(s, d, al);
      case 18:
      case 19: return int_edge(s, d, al);
      default: return int_leaf(s);
    }
  }

  // Overflow, INT_MIN / -1, % with negative operands.
  std::string int_edge(Scope& s, int d, int64_t& al) {
    switch (below(11)) {
      case 0: feat_.int_min_div = true; return std::string("(") + kIntMin + " / -1)";
      case 1: feat_.int_min_div = true; return std::string("(") + kIntMin + " % -1)";
      case 2: feat_.int_min_div = true; return "(" + int_expr(s, d - 1, al) + " / -1)";
      case 3: feat_.int_min_div = true; return "(" + int_expr(s, d - 1, al) + " % -1)";
      case 4: {
        std::string a = big_int();
        return "(" + a + " * " + big_int() + ")";
      }
      case 5: feat_.overflow = true; return "(9223372036854775807 + " + int_leaf(s) + ")";
      case 6: feat_.overflow = true; return std::string("(-") + kIntMin + ")";
      case 7: feat_.overflow = true; return std::string("abs(") + kIntMin + ")";
      case 8:
      case 9: {
        feat_.int_mod = feat_.negative_mod = true;
        int a = range(-40, 40), b = range(1, 9) * (chance(50) ? -1 : 1);
        return "(" + std::to_string(a) + (chance(50) ? " % " : " / ") + std::to_string(b) + ")";
      }
      default: {
        std::string a = int_expr(s, d - 1, al);
        return "(" + a + " * " + big_int() + ")";
      }
    }
  }

  // int() of floats that are never nan and never out of range.
  std::string int_of_float(Scope& s, int d, int64_t& al) {
    feat_.float_to_int = true;
    switch (below(6)) {
      case 0: return "int(float(" + int_expr(s, d - 1, al) + ") / 4.0)";
      case 1: return "int(floor(float(" + int_expr(s, d - 1, al) + ") * 0.5))";
      case 2: {
        static const std::vector<std::string> lits = {"2.75",
                                                      "(-2.75)",
                                                      "0.5",
                                                      "(-0.5)",
                                                      "1e18",
                                                      "(-1e18)",
                                                      "(-9223372036854775808.0)",
                                                      "9223372036854774784.0",
                                                      "123456.789",
                                                      "(-0.0)",
                                                      "4503599627370497.5"};
        return "int(" + pick(lits) + ")";
      }
      case 3:
      case 4: {
        std::string c = clampi(s, d, al);
        if (!c.empty()) return c;
        return "int(" + int_expr(s, d - 1, al) + ")";
      }
      default: return "int(" + int_expr(s, d - 1, al) + ")";
    }
  }

  std::string float_leaf(Scope& s) {
    auto vars = readable(s, Ty::Float);
    int r = below(100);
    if (!vars.empty() && r < 55) return use_var(s, pick(vars));
    if (r < 65) {
      auto ints = readable(s, Ty::Int);
      if (!ints.empty()) {
        feat_.int_to_float = true;
        return "float(" + use_var(s, pick(ints)) + ")";
      }
    }
    return float_lit();
  }

  // A divisor that is zero now and then: x / 0.0 is inf or nan, never an error.
  std::string float_divisor(Scope& s, int d, int64_t& al) {
    if (chance(25)) {
      feat_.float_div_by_zero = true;
      auto vars = readable(s, Ty::Float);
      switch (below(4)) {
        case 0: return "0.0";
        case 1: return "(-0.0)";
        case 2:
          if (!vars.empty()) {
            std::string v = use_var(s, pick(vars));
            return "(" + v + " - " + v + ")";
          }
          return "0.0";
        default: return "0";  // an int zero, promoted: still a float division
      }
    }
    return num_expr(s, d, al);
  }

  std::string float_expr(Scope& s, int d, int64_t& al) {
    if (d <= 0 || chance(20)) return float_leaf(s);
    switch (below(20)) {
      case 0:
      case 1:
      case 2:
      case 3:
      case 4:
      case 5: {
        static const std::vector<std::string> ops = {" + ", " - ", " * "};
        std::string a = float_expr(s, d - 1, al);
        std::string b = num_expr(s, d - 1, al);
        if (chance(50)) std::swap(a, b);
        return "(" + a + pick(ops) + b + ")";
      }
      case 6:
      case 7:
      case 8: {
        feat_.float_div = true;
        if (chance(50)) {
          std::string a = float_expr(s, d - 1, al);
          return "(" + a + " / " + float_divisor(s, d - 1, al) + ")";
        }
        std::string a = num_expr(s, d - 1, al);
        return "(" + a + " / " + float_expr(s, d - 1, al) + ")";
      }
      case 9: {
        feat_.float_mod = true;
        std::string a = float_expr(s, d - 1, al);
        return "(" + a + " % " +
               (chance(30) ? float_divisor(s, d - 1, al) : num_expr(s, d - 1, al)) + ")";
      }
      case 10:
      case 11: {
        static const std::vector<std::string> fns = {"sqrt", "exp", "log", "sin", "cos", "floor"};
        feat_.math_builtin = true;
        return pick(fns) + "(" + num_expr(s, d - 1, al) + ")";
      }
      case 12: return "abs(" + float_expr(s, d - 1, al) + ")";
      case 13: {
        std::string a = float_expr(s, d - 1, al);
        std::string b = num_expr(s, d - 1, al);
        if (chance(50)) std::swap(a, b);
        return (chance(50) ? "min(" : "max(") + a + ", " + b + ")";
      }
      case 14: return "(-" + float_expr(s, d - 1, al) + ")";
      case 15: feat_.int_to_float = true; return "float(" + int_expr(s, d - 1, al) + ")";
      case 16:
      case 17: {
        std::string c = call(s, Ty::Float, d, al);
        return c.empty() ? float_leaf(s) : c;
      }
      default: return float_leaf(s);
    }
  }

  std::string comparison(Scope& s, int d, int64_t& al) {
    static const std::vector<std::string> ops = {" < ", " <= ", " > ", " >= ", " == ", " != "};
    std::string a = num_expr(s, d, al);
    std::string b = chance(40) ? (chance(50) ? int_lit() : float_lit()) : num_expr(s, d, al);
    return "(" + a + pick(ops) + b + ")";
  }

  std::string bool_leaf(Scope& s, int64_t& al) {
    auto vars = readable(s, Ty::Bool);
    int r = below(100);
    if (!vars.empty() && r < 45) return use_var(s, pick(vars));
    if (r < 60) return chance(50) ? "true" : "false";
    return comparison(s, 0, al);
  }

  // The right operand of && / ||: often a call, whose printing shows whether it ran.
  std::string logic_operand(Scope& s, int d, int64_t& al) {
    if (chance(45)) {
      std::string c = call(s, Ty::Bool, d, al);
      if (c.empty() && chance(50)) {
        c = call(s, Ty::Int, d, al);
        if (!c.empty()) c = "(" + c + " > " + small_int() + ")";
      }
      if (!c.empty()) {
        feat_.short_circuit_call = true;
        return c;
      }
    }
    return bool_expr(s, d, al);
  }

  std::string bool_expr(Scope& s, int d, int64_t& al) {
    if (d <= 0 || chance(15)) return bool_leaf(s, al);
    switch (below(20)) {
      case 0:
      case 1:
      case 2:
      case 3:
      case 4:
      case 5: return comparison(s, d - 1, al);
      case 6: {
        std::string a = bool_expr(s, d - 1, al);
        return "(" + a + (chance(50) ? " == " : " != ") + bool_expr(s, d - 1, al) + ")";
      }
      case 7: return "(!" + bool_expr(s, d - 1, al) + ")";
      case 8:
      case 9:
      case 10: {
        feat_.and_op = true;
        std::string a = bool_expr(s, d - 1, al);
        return "(" + a + " && " + logic_operand(s, d - 1, al) + ")";
      }
      case 11:
      case 12:
      case 13: {
        feat_.or_op = true;
        std::string a = bool_expr(s, d - 1, al);
        return "(" + a + " || " + logic_operand(s, d - 1, al) + ")";
      }
      case 14:
      case 15: {
        // Division guarded by short-circuit: v == 0 would be an error if it were evaluated.
        auto ints = readable(s, Ty::Int);
        if (ints.empty()) return comparison(s, d - 1, al);
        std::string v = use_var(s, pick(ints));
        feat_.guarded_division = true;
        std::string e = int_expr(s, d - 1, al);
        if (chance(50)) {
          feat_.and_op = feat_.int_div = true;
          return "(" + v + " != 0 && (" + e + " / " + v + ") > " + small_int() + ")";
        }
        feat_.or_op = feat_.int_mod = true;
        return "(" + v + " == 0 || (" + e + " % " + v + ") == " + small_int() + ")";
      }
      case 16:
      case 17: {
        std::string c = call(s, Ty::Bool, d, al);
        return c.empty() ? bool_leaf(s, al) : c;
      }
      default: return bool_leaf(s, al);
    }
  }

  int edepth() { return range(1, 3); }

  // ---- statements (each returns whole lines; budget: steps left for this block) ----
  std::string block(Scope& s, int nest, int64_t& budget, int max_stmts) {
    std::string out;
    int n = range(1, std::max(1, max_stmts));
    for (int i = 0; i < n && s.reachable && budget >= 2; ++i) out += stmt(s, nest, budget);
    return out;
  }

  // Which kind of statement: weights by context.
  enum Kind {
    NewVar,
    Reassign,
    Compound,
    Print,
    If,
    For,
    While,
    BreakCont,
    Return,
    CallStmt,
    ExprStmt,
    kKinds
  };

  std::string stmt(Scope& s, int nest, int64_t& budget) {
    int base = s.fn ? 1 : 0;  // function bodies start at nesting 1
    bool can_nest = nest - base < opt_.max_nesting && budget >= 10;
    int w[kKinds] = {};
    w[NewVar] = 14;
    w[Reassign] = 8;
    w[Compound] = 10;
    w[Print] = 14;
    w[If] = can_nest ? 12 : 0;
    w[For] = can_nest ? 8 : 0;
    w[While] = can_nest ? 6 : 0;
    w[BreakCont] = s.loops > 0 ? 9 : 0;
    w[Return] = s.fn && nest > base ? 4 : 0;
    w[CallStmt] = 6;
    w[ExprStmt] = 1;
    int total = 0;
    for (int x : w) total += x;
    int r = below(total), k = 0;
    while (r >= w[k]) r -= w[k++];
    std::string I = ind(nest);
    int64_t al = budget - 1;
    std::string out;
    switch (static_cast<Kind>(k)) {
      case NewVar: {
        Ty t = random_type(45, 35);
        std::string rhs = expr(s, t, edepth(), al);
        std::string name = fresh_local(s);
        s.declared[name] = t;
        s.defined.insert(name);
        out = I + name + " = " + rhs + "\n";
        break;
      }
      case Reassign: {
        std::vector<std::string> cands;
        for (const auto& [n, t] : s.declared)
          if (!s.prot.count(n)) cands.push_back(n);
        if (cands.empty()) return print_stmt(s, nest, budget);
        std::string name = pick(cands);
        std::string rhs = value_for(s, s.declared[name], edepth(), al, true);
        s.defined.insert(name);
        out = I + name + " = " + rhs + "\n";
        break;
      }
      case Compound: {
        std::vector<std::string> cands;
        for (const auto& n : s.defined)
          if (!s.prot.count(n) && s.declared[n] != Ty::Bool) cands.push_back(n);
        if (cands.empty()) return print_stmt(s, nest, budget);
        std::string name = pick(cands);
        static const std::vector<std::string> ops = {"+=", "-=", "*=", "/=", "%="};
        std::string op = pick(ops);
        std::string rhs;
        if (s.declared[name] == Ty::Int) {
          if (op == "/=" || op == "%=") {
            (op == "/=" ? feat_.int_div : feat_.int_mod) = true;
            rhs = safe_divisor(s, edepth() - 1, al);
          } else {
            rhs = int_expr(s, edepth(), al);
          }
        } else {
          if (op == "/=") feat_.float_div = true;
          if (op == "%=") feat_.float_mod = true;
          rhs = (op == "/=" || op == "%=") && chance(30) ? float_divisor(s, 1, al)
                                                         : num_expr(s, edepth(), al);
        }
        out = I + name + " " + op + " " + rhs + "\n";
        break;
      }
      case Print: return print_stmt(s, nest, budget);
      case If: {
        out = I + if_stmt(s, nest, budget) + "\n";
        return out;
      }
      case For: return for_stmt(s, nest, budget);
      case While: return while_stmt(s, nest, budget);
      case BreakCont: {
        bool brk = chance(50);
        (brk ? feat_.break_stmt : feat_.continue_stmt) = true;
        const char* kw = brk ? "break" : "continue";
        if (chance(85)) {
          out = I + "if " + bool_expr(s, edepth(), al) + " { " + kw + " }\n";
        } else {
          out = I + kw + "\n";
          s.reachable = false;
        }
        break;
      }
      case Return: {
        feat_.early_return = true;
        std::string val = s.fn->ret == Ty::Void ? "" : " " + return_value(s, al);
        if (chance(80)) {
          std::string c = bool_expr(s, edepth(), al);
          out = I + "if " + c + " { return" + val + " }\n";
        } else {
          out = I + "return" + val + "\n";
          s.reachable = false;
        }
        break;
      }
      case CallStmt: {
        std::vector<Func*> cands;
        for (auto& f : funcs_)
          if (may_call(s, *f)) cands.push_back(f.get());
        std::string c;
        if (!cands.empty())
          c = call_to(s, *cands[static_cast<size_t>(below(static_cast<int>(cands.size())))], 2, al);
        if (c.empty()) return print_stmt(s, nest, budget);
        out = I + c + "\n";
        break;
      }
      case ExprStmt: out = I + expr(s, random_type(40, 40), edepth(), al) + "\n"; break;
      default: break;
    }
    budget = al;
    if (chance(4)) out.insert(out.size() - 1, "  # " + std::to_string(below(1000)));
    return out;
  }

  std::string return_value(Scope& s, int64_t& al) {
    // Without "-> T" the return type is inferred from the returns: keep them exactly T.
    return value_for(s, s.fn->ret, edepth(), al, s.fn->annotate);
  }

  std::string print_stmt(Scope& s, int nest, int64_t& budget) {
    int64_t al = budget - 1;
    int n = chance(3) ? 0 : range(1, 4);
    std::string out = ind(nest) + "print(";
    for (int i = 0; i < n; ++i) {
      if (i) out += ", ";
      out += chance(25) ? str_lit() : expr(s, random_type(40, 40), edepth(), al);
    }
    budget = al;
    return out + ")\n";
  }

  void join(Scope& s, const std::set<std::string>& a, bool ar, const std::set<std::string>& b,
            bool br, const std::set<std::string>& before) {
    if (!ar && !br) {
      s.defined = before;
      s.reachable = false;
    } else if (!ar) {
      s.defined = b;
      s.reachable = true;
    } else if (!br) {
      s.defined = a;
      s.reachable = true;
    } else {
      s.defined.clear();
      for (const auto& n : a)
        if (b.count(n)) s.defined.insert(n);
      s.reachable = true;
    }
  }

  // "if ... { } [else ...]" without indentation before it or a newline after it.
  std::string if_stmt(Scope& s, int nest, int64_t& budget) {
    std::string I = ind(nest);
    int64_t al = budget - 1;
    std::string cond = bool_expr(s, edepth(), al);
    int stmts = std::max(1, opt_.max_block_statements - (nest - (s.fn ? 1 : 0)));
    auto before = s.defined;
    int64_t bt = al;
    std::string then = block(s, nest + 1, bt, stmts);
    auto then_def = s.defined;
    bool then_r = s.reachable;
    s.defined = before;
    s.reachable = true;
    int64_t be = al;
    std::string els;
    if (chance(45)) {
      std::string sep = chance(20) ? "\n" + I : " ";
      if (chance(35)) {
        feat_.else_if = true;
        els = sep + "else " + if_stmt(s, nest, be);
      } else {
        els = sep + "else {\n" + block(s, nest + 1, be, stmts) + I + "}";
      }
    }
    join(s, then_def, then_r, s.defined, s.reachable, before);
    budget = std::min(bt, be);
    return "if " + cond + " {\n" + then + I + "}" + els;
  }

  std::string for_stmt(Scope& s, int nest, int64_t& budget) {
    std::string I = ind(nest);
    int64_t al = budget - 2;
    int max_trips = static_cast<int>(std::min<int64_t>(8, al / 4));
    if (max_trips < 1) return print_stmt(s, nest, budget);
    int trips = range(0, max_trips);
    std::string bounds;
    auto ints = readable(s, Ty::Int);
    int form = below(5);
    if (form == 1 && !ints.empty()) {
      std::string v = use_var(s, pick(ints));
      bounds = "(" + v + " % 4)..(" + v + " % 4 + " + std::to_string(trips) + ")";
    } else if (form == 2 && !ints.empty()) {
      std::string v = use_var(s, pick(ints));
      bounds = "0..min(" + v + ", " + std::to_string(trips) + ")";
    } else if (form == 3) {
      int lo = range(-3, 4);
      bounds = std::to_string(lo) + ".." + std::to_string(lo - range(0, 3));  // empty range
      trips = 0;
    } else {
      int lo = range(-3, 4);
      bounds = std::to_string(lo) + " .. " + std::to_string(lo + trips);
      if (chance(50)) bounds = std::to_string(lo) + ".." + std::to_string(lo + trips);
    }
    // The loop variable: fresh, or an int variable reused (even an enclosing loop's).
    std::string var;
    std::vector<std::string> reuse;
    for (const auto& [n, t] : s.declared)
      if (t == Ty::Int && !s.prot.count(n)) reuse.push_back(n);
    if (!reuse.empty() && chance(20))
      var = pick(reuse);
    else
      var = fresh_loop_var(s);
    s.declared[var] = Ty::Int;
    feat_.for_loop = true;
    if (s.loops > 0) feat_.nested_loop = true;
    int64_t per = trips > 0 ? al / trips - 1 : std::min<int64_t>(al, 50);
    auto before = s.defined;
    s.defined.insert(var);
    ++s.loops;
    int64_t left = per;
    std::string body =
        block(s, nest + 1, left, std::max(1, opt_.max_block_statements - (nest - (s.fn ? 1 : 0))));
    --s.loops;
    s.defined = before;
    s.reachable = true;
    budget = al - static_cast<int64_t>(trips) * (per - left + 1);
    return I + "for " + var + " in " + bounds + " {\n" + body + I + "}\n";
  }

  std::string while_stmt(Scope& s, int nest, int64_t& budget) {
    std::string I = ind(nest), J = ind(nest + 1);
    int64_t al = budget - 3;
    int max_trips = static_cast<int>(std::min<int64_t>(8, al / 6));
    if (max_trips < 1) return print_stmt(s, nest, budget);
    int trips = range(0, max_trips);
    std::string w = fresh_counter(s);
    s.declared[w] = Ty::Int;
    s.defined.insert(w);
    s.prot.insert(w);
    feat_.while_loop = true;
    if (s.loops > 0) feat_.nested_loop = true;
    std::string t = std::to_string(trips);
    std::string head, first;
    int64_t per = al / (trips + 1) - 3;
    int form = below(4);
    ++s.loops;  // the condition runs every iteration too: no recursion there
    if (form == 0) {
      head = I + w + " = 0\n" + I + "while " + w + " < " + t + " {\n";
      first = J + w + " += 1\n";
    } else if (form == 1) {
      int64_t cal = std::min<int64_t>(per / 3, 40);
      int64_t c0 = cal;
      std::string cond = bool_expr(s, 1, cal);
      per -= (c0 - cal);
      feat_.and_op = true;
      head = I + w + " = 0\n" + I + "while " + w + " < " + t + " && " + cond + " {\n";
      first = J + w + " += 1\n";
    } else if (form == 2) {
      feat_.break_stmt = true;
      head = I + w + " = 0\n" + I + "while true {\n";
      first = J + w + " += 1\n" + J + "if " + w + " > " + t + " { break }\n";
    } else {
      head = I + w + " = " + t + "\n" + I + "while " + w + " > 0 {\n";
      first = J + w + " -= 1\n";
    }
    auto before = s.defined;
    int64_t left = per;
    std::string body =
        block(s, nest + 1, left, std::max(1, opt_.max_block_statements - (nest - (s.fn ? 1 : 0))));
    --s.loops;
    s.defined = before;
    s.reachable = true;
    budget = al - static_cast<int64_t>(trips + 1) * (per - left + 3);
    return head + first + body + I + "}\n";
  }

  // ---- functions ----
  void declare_functions() {
    int n = range(0, opt_.max_functions);
    std::vector<Func::Kind> kinds;
    for (int i = 0; i < n; ++i) {
      int r = below(100);
      kinds.push_back(r < 40 ? Func::Leaf : r < 65 ? Func::Rec : Func::Upper);
    }
    std::sort(kinds.begin(), kinds.end());
    for (int i = 0; i < n; ++i) {
      auto f = std::make_unique<Func>();
      f->kind = kinds[static_cast<size_t>(i)];
      f->order = i;
      f->name = "f" + std::to_string(i);
      int np = range(0, 3);
      if (f->kind == Func::Rec) {
        static const std::vector<std::string> dn = {"d", "n", "depth"};
        f->pnames.push_back(pick(dn));
        f->ptypes.push_back(Ty::Int);
        f->ptyped.push_back(chance(70));
        np = range(0, 2);
      }
      for (int p = 0; p < np; ++p) {
        f->pnames.push_back("p" + std::to_string(p));
        Ty t = random_type(50, 30);
        f->ptypes.push_back(t);
        f->ptyped.push_back(t != Ty::Int || chance(70));
      }
      int r = below(100);
      f->ret = r < 35 ? Ty::Int : r < 60 ? Ty::Float : r < 80 ? Ty::Bool : Ty::Void;
      f->annotate = f->ret != Ty::Void && (f->kind == Func::Rec || chance(70));
      f->prints = f->ret == Ty::Bool || f->ret == Ty::Void || chance(40);
      funcs_.push_back(std::move(f));
    }
  }

  void define_function(Func& f) {
    Scope s;
    s.fn = &f;
    for (size_t i = 0; i < f.pnames.size(); ++i) {
      s.declared[f.pnames[i]] = f.ptypes[i];
      s.defined.insert(f.pnames[i]);
    }
    int64_t budget = f.kind == Func::Rec    ? rec_budget_
                     : f.kind == Func::Leaf ? range(4, 80)
                                            : range(15, 400);
    int64_t start = budget;
    std::string body;
    if (f.kind == Func::Rec) {
      s.depth_param = f.pnames[0];
      s.prot.insert(f.pnames[0]);
      s.no_rec = true;
      int64_t al = budget - 2;
      std::string val = f.ret == Ty::Void ? "" : " " + return_value(s, al);
      budget = al;
      body += "  if " + f.pnames[0] + (chance(70) ? " <= 0" : " < 1") + " { return" + val + " }\n";
      s.no_rec = false;
    }
    if (f.prints) {
      body += "  print(\"" + f.name + "\"";
      for (const auto& p : f.pnames) body += ", " + p;
      body += ")\n";
      --budget;
    }
    if (budget > 2) body += block(s, 1, budget, opt_.max_block_statements + 1);
    if (s.reachable) {
      int64_t al = std::max<int64_t>(budget - 1, 0);
      if (f.kind == Func::Rec && s.rec_sites < 2) {
        // Make sure it does recurse: itself or another rec function of the same type.
        std::vector<Func*> targets;
        for (auto& g : funcs_)
          if (g->kind == Func::Rec && g->ret == f.ret) targets.push_back(g.get());
        Func& g = *targets[static_cast<size_t>(below(static_cast<int>(targets.size())))];
        int64_t zero = 0;  // the rec call's own cost is in the rec_cost() bound
        std::string c = call_to(s, g, 1, zero);
        switch (f.ret) {
          case Ty::Void: body += "  " + c + "\n"; break;
          case Ty::Int:
            body +=
                "  return " + (chance(50) ? c : "(" + c + " + " + int_expr(s, 1, al) + ")") + "\n";
            break;
          case Ty::Float:
            body += "  return " +
                    (chance(50) ? c : "(" + c + " * 0.5 + " + float_expr(s, 1, al) + ")") + "\n";
            break;
          case Ty::Bool:
            if (chance(50)) {
              feat_.or_op = feat_.short_circuit_call = true;
              body += "  return (" + bool_expr(s, 1, al) + " || " + c + ")\n";
            } else {
              feat_.and_op = feat_.short_circuit_call = true;
              body += "  return (" + bool_expr(s, 1, al) + " && " + c + ")\n";
            }
            break;
        }
      } else if (f.ret != Ty::Void) {
        body += "  return " + return_value(s, al) + "\n";
      }
      budget = al;
    }
    f.cost = std::max<int64_t>(start - budget, 0) + 3;
    std::string sig = "fn " + f.name + "(";
    for (size_t i = 0; i < f.pnames.size(); ++i) {
      if (i) sig += ", ";
      sig += f.pnames[i];
      if (f.ptyped[i]) sig += std::string(": ") + type_name(f.ptypes[i]);
    }
    sig += ")";
    if (f.annotate) sig += std::string(" -> ") + type_name(f.ret);
    f.text = sig + " {\n" + body + "}\n";
  }

  // ---- planted runtime errors ----
  // Returns the top-level text; the error happens unconditionally when it runs.
  std::string planted_error(Scope& s) {
    int64_t al = 0;  // no calls inside: only the planted failure may fail
    switch (below(4)) {
      case 0: {
        expected_error_ = "division by zero";
        std::string z = fresh_local(s);
        std::string m = std::to_string(range(1, 1000));
        int k = range(1, 5);
        switch (below(7)) {
          case 5: return nested_division_error(s, z, m);
          case 6: return several_division_errors(s);
          case 0: {  // a value that is zero whatever v was
            auto ints = readable(s, Ty::Int);
            std::string v = ints.empty() ? std::to_string(range(-5, 9)) : pick(ints);
            s.declared[z] = Ty::Int;
            s.defined.insert(z);
            return z + " = " + v + " - " + v + "\nprint(" + str_lit() + ", " + int_expr(s, 1, al) +
                   (chance(50) ? " / " : " % ") + z + ")\n";
          }
          case 1: {  // a countdown that reaches zero
            s.declared[z] = Ty::Int;
            s.defined.insert(z);
            std::string i = fresh_loop_var(s);
            s.declared[i] = Ty::Int;
            return z + " = " + std::to_string(k) + "\nfor " + i + " in 0.." +
                   std::to_string(k + 3) + " {\n  " + z + " -= 1\n  print(" + i + ", " + m +
                   (chance(50) ? " / " : " % ") + z + ")\n}\n";
          }
          case 2: {  // /= or %= by a variable that became zero
            s.declared[z] = Ty::Int;
            s.defined.insert(z);
            std::string t = fresh_local(s);
            s.declared[t] = Ty::Int;
            s.defined.insert(t);
            return z + " = " + std::to_string(k) + " * 0\n" + t + " = " + m + "\nprint(" + t +
                   ")\n" + t + (chance(50) ? " /= " : " %= ") + z + "\nprint(" + t + ")\n";
          }
          case 3: {  // inside a function, for one argument
            std::string f = "fz" + std::to_string(extra_fns_.size());
            extra_fns_.push_back("fn " + f + "(a: int) -> int {\n  print(\"" + f +
                                 "\", a)\n  return " + m + (chance(50) ? " % " : " / ") + "(a - " +
                                 std::to_string(k) + ")\n}\n");
            std::string i = fresh_loop_var(s);
            s.declared[i] = Ty::Int;
            return "for " + i + " in 0.." + std::to_string(k + 2) + " {\n  print(" + f + "(" + i +
                   "))\n}\n";
          }
          default: {  // a while countdown through zero
            s.declared[z] = Ty::Int;
            s.defined.insert(z);
            return z + " = " + std::to_string(k) + "\nwhile " + z + " > -5 {\n  print(" + z + ", " +
                   m + (chance(50) ? " / " : " % ") + z + ")\n  " + z + " -= 1\n}\n";
          }
        }
      }
      case 1: {
        expected_error_ = "invalid conversion";
        static const std::vector<std::string> bad = {"0.0 / 0.0",        "1.0 / 0.0",
                                                     "(-1.0) / 0.0",     "log(0.0)",
                                                     "sqrt(-1.0)",       "exp(1000.0)",
                                                     "1e308 * 10.0",     "9.3e18",
                                                     "(-9.3e18)",        "9223372036854775808.0",
                                                     "1e300 * 1e300",    "(-1e19)",
                                                     "0.0 * (1.0 / 0.0)"};
        if (chance(35)) {  // growing until it no longer fits an int
          std::string q = fresh_local(s);
          s.declared[q] = Ty::Float;
          s.defined.insert(q);
          std::string i = fresh_loop_var(s);
          s.declared[i] = Ty::Int;
          static const std::vector<std::string> starts = {"1.5", "(-2.5)", "3.0", "(-0.75)"};
          static const std::vector<std::string> factors = {"1000.0", "(-100.0)", "12345.5", "1e5"};
          return q + " = " + pick(starts) + "\nfor " + i + " in 0..40 {\n  " + q +
                 " *= " + pick(factors) + "\n  print(" + i + ", " + q + ", int(" + q + "))\n}\n";
        }
        std::string e = pick(bad);
        auto fl = readable(s, Ty::Float);
        if (!fl.empty() && chance(30)) {
          std::string v = pick(fl);
          e = "(" + v + " - " + v + ") / 0.0";  // nan whatever v is
        }
        if (chance(50)) {
          std::string t = fresh_local(s);
          s.declared[t] = Ty::Int;
          s.defined.insert(t);
          return t + " = int(" + e + ")\nprint(" + t + ")\n";
        }
        return "print(" + str_lit() + ", int(" + e + "))\n";
      }
      case 2: {
        expected_error_ = "stack overflow";
        std::string after;
        bool is_void;
        std::string f = deep_function(&after, &is_void);
        int n = 10000 + range(0, 30);
        if (chance(40)) {  // 10,000 frames are fine, 10,001 are not
          std::string i = fresh_loop_var(s);
          s.declared[i] = Ty::Int;
          std::string c = f + "9999 + " + i + after;
          return "for " + i + " in 0..3 {\n  " +
                 (is_void ? "print(" + i + ")\n  " + c : "print(" + i + ", " + c + ")") + "\n}\n";
        }
        std::string c = f + std::to_string(n) + after;
        return (is_void ? c : "print(" + c + ")") + "\n";
      }
      default: {
        std::string g = "late" + std::to_string(extra_fns_.size());
        expected_error_ = "undefined variable '" + g + "'";
        std::string f = "fu" + std::to_string(extra_fns_.size());
        bool fl = chance(40);
        extra_fns_.push_back("fn " + f + "(a: int) -> " + (fl ? "float" : "int") +
                             " {\n  print(\"" + f + "\", a)\n  return a * 2 + " + g + "\n}\n");
        late_global_ = g + " = " + (fl ? float_lit() : small_int()) + "\nprint(" + f + "(3))\n";
        if (chance(50)) {
          std::string i = fresh_loop_var(s);
          s.declared[i] = Ty::Int;
          return "for " + i + " in 0..3 {\n  print(" + i + ")\n  print(" + f + "(" + i + "))\n}\n";
        }
        return "print(" + f + "(" + std::to_string(range(0, 9)) + "))\n";
      }
    }
  }

  // A division whose divisor itself divides by zero: the inner division must fail first,
  // and nothing may trap while computing the outer one (native once died with SIGFPE here).
  std::string nested_division_error(Scope& s, const std::string& z, const std::string& m) {
    feat_.nested_failing_division = true;
    s.declared[z] = Ty::Int;
    s.defined.insert(z);
    std::string op = chance(50) ? " / " : " % ";
    std::string k = std::to_string(range(1, 9));
    std::string zero = z + " = " + std::to_string(range(1, 5)) + " * 0\n";
    switch (below(4)) {
      case 0: return zero + "print(" + str_lit() + ", " + m + op + "(" + k + " / " + z + "))\n";
      case 1: {
        std::string w = fresh_local(s);
        s.declared[w] = Ty::Int;
        s.defined.insert(w);
        return zero + w + " = " + m + op + "(" + z + " / " + z + " + " + k + ")\n";
      }
      case 2: {  // inside a function, the failing divisor computed from its argument
        std::string f = "fz" + std::to_string(extra_fns_.size());
        extra_fns_.push_back("fn " + f + "(a: int) -> int {\n  return " + m + op + "(" + k +
                             " / a)\n}\n");
        return zero + "print(\"before\")\nprint(" + f + "(" + z + "))\n";
      }
      default:  // the failing division is the dividend: it fails first anyway
        return zero + "print(" + str_lit() + ", (" + k + op + z + ")" + op + m + ")\n";
    }
  }

  // Several divisions by zero in one function, with more parameters than registers carry
  // (7-10 int and 9-12 float arguments: the rest go on the stack in the native calling
  // convention): the first division written, left to right, is the one reported.
  std::string several_division_errors(Scope& s) {
    feat_.several_failing_divisions = feat_.stack_arguments = true;
    std::string f = "fz" + std::to_string(extra_fns_.size());
    int ni = range(7, 10), nf = range(9, 12);
    // Which int parameters are zero: two distinct ones, or one used twice.
    int i = below(ni), j = below(ni);
    std::string sig = "fn " + f + "(";
    std::string args;
    for (int p = 0; p < ni; ++p) {
      sig += (p ? ", a" : "a") + std::to_string(p) + ": int";
      args += (p ? ", " : "") + (p == i || p == j ? std::string("0") : std::to_string(range(1, 99)));
    }
    for (int p = 0; p < nf; ++p) {
      sig += ", x" + std::to_string(p) + ": float";
      args += ", " + float_lit();
    }
    std::string ai = "a" + std::to_string(i), aj = "a" + std::to_string(j);
    std::string xl = "x" + std::to_string(nf - 1);
    std::string m1 = std::to_string(range(1, 1000)), m2 = std::to_string(range(1, 1000));
    std::string body = "  print(\"" + f + "\", a" + std::to_string(ni - 1) + ", " + xl + ")\n";
    std::string pre, text;
    switch (below(4)) {
      case 0:  // two failing divisions in one return expression
        body += "  return (" + m1 + " / " + ai + ") + (" + m2 + " % " + aj + ")\n";
        break;
      case 1:  // two failing divisions as two print arguments
        body += "  print(" + m1 + " / " + ai + ", " + m2 + " / " + aj + ")\n  return 0\n";
        break;
      case 2: {  // a global read in the function is the first zero divisor
        std::string g = fresh_local(s);
        s.declared[g] = Ty::Int;
        s.defined.insert(g);
        pre = g + " = 0\n";
        body += "  return " + m1 + " / " + g + " + " + m2 + " / " + ai + "\n";
        break;
      }
      default:  // one divisor used twice, with a float argument from the stack in between
        body += "  return " + m1 + " / " + ai + " + int(" + xl + " * 0.0) + " + m2 + " / " + ai + "\n";
        break;
    }
    extra_fns_.push_back(sig + ") -> int {\n" + body + "}\n");
    return pre + "print(\"before\")\nprint(" + f + "(" + args + "))\n";
  }

  // A function that recurses n + 1 frames deep when called as name(n<extra>) from the top
  // level; returns the call's text up to (not including) n, and sets *after to what follows n.
  // *is_void: it returns nothing (call it as a statement, not inside print).
  std::string deep_function(std::string* after, bool* is_void) {
    std::string f = "deep" + std::to_string(extra_fns_.size());
    *after = ")";
    *is_void = false;
    switch (below(4)) {
      case 0:
        extra_fns_.push_back("fn " + f + "(n: int) -> int {\n  if n <= 0 { return 0 }\n  return " +
                             f + "(n - 1) + 1\n}\n");
        break;
      case 1:  // void
        *is_void = true;
        extra_fns_.push_back("fn " + f +
                             "(n: int) {\n  if n <= 0 { print(\"bottom\"); return }\n  " + f +
                             "(n - 1)\n}\n");
        break;
      case 2:  // a tail call: an engine must not optimise the frame away
        extra_fns_.push_back(
            "fn " + f + "(n: int, acc: float) -> float {\n  if n <= 0 { return acc }\n  return " +
            f + "(n - 1, acc + 0.5)\n}\n");
        *after = ", 0.25)";
        break;
      default: {  // mutual recursion
        std::string g = f + "b";
        extra_fns_.push_back("fn " + f + "(n: int) -> int {\n  if n <= 0 { return 1 }\n  return " +
                             g + "(n - 1) + 1\n}\n");
        extra_fns_.push_back("fn " + g + "(n) -> int {\n  if n <= 0 { return 2 }\n  return " + f +
                             "(n - 1) * 1\n}\n");
        break;
      }
    }
    return f + "(";
  }

  GenOptions opt_;
  uint64_t state_;
  std::vector<std::unique_ptr<Func>> funcs_;
  std::vector<std::pair<std::string, Ty>> fn_globals_;
  std::vector<std::string> extra_fns_;
  std::string late_global_;
  int64_t rec_budget_ = 20;
  bool need_clampi_ = false;
};

std::string ProgramGenerator::Impl::generate() {
  rec_budget_ = range(6, 30);
  // Globals the functions may read: assigned first thing at top level, before any call.
  Scope top;
  std::vector<std::string> items;
  int ng = range(0, 4);
  for (int i = 0; i < ng; ++i) {
    Ty t = random_type(45, 35);
    std::string name = "g" + std::to_string(i);
    int64_t al = 0;  // no calls
    std::string rhs = expr(top, t, range(0, 2), al);
    top.declared[name] = t;
    top.defined.insert(name);
    fn_globals_.emplace_back(name, t);
    items.push_back(name + " = " + rhs + "\n");
  }
  size_t prologue_end = items.size();

  declare_functions();
  for (auto& f : funcs_) define_function(*f);

  int64_t budget = range(static_cast<int>(opt_.min_budget), static_cast<int>(opt_.max_budget));
  int n = range(3, opt_.max_top_statements);
  int error_at = chance(opt_.error_percent) ? range(0, n) : -1;
  for (int i = 0; i <= n; ++i) {
    if (i == error_at) {
      items.push_back(planted_error(top));
      if (!late_global_.empty()) {
        items.push_back(late_global_);
        late_global_.clear();
      }
    }
    if (i < n && budget >= 2) items.push_back(stmt(top, 0, budget));
  }
  if (error_at < 0 && chance(opt_.boundary_recursion_percent)) {
    // Exactly 10,000 frames: the deepest call that is still allowed.
    feat_.boundary_recursion = true;
    std::string after;
    bool is_void;
    std::string f = deep_function(&after, &is_void);
    std::string c = f + "9999" + after;
    items.push_back((is_void ? c : "print(\"deep\", " + c + ")") + "\n");
  }
  // Observe the final state.
  {
    std::string fin = "print(\"end\"";
    for (const auto& v : top.defined)
      if (chance(60)) fin += ", " + v;
    items.push_back(fin + ")\n");
  }

  // Helpers and functions go anywhere at top level: before or after their callers.
  if (need_clampi_) {
    extra_fns_.push_back(
        "fn clampi(x: float) -> int {\n"
        "  if x != x { return 0 }\n"
        "  if x >= 1e18 || x <= -1e18 { return 7 }\n"
        "  return int(x)\n"
        "}\n");
  }
  std::vector<std::string> fns;
  for (auto& f : funcs_) fns.push_back(f->text);
  for (auto& t : extra_fns_) fns.push_back(t);
  for (auto& t : fns) {
    size_t pos = static_cast<size_t>(below(static_cast<int>(items.size()) + 1));
    if (pos > prologue_end) feat_.call_before_declaration = true;  // roughly: after some code
    items.insert(items.begin() + static_cast<long>(pos), t);
    if (pos <= prologue_end) ++prologue_end;
  }
  std::string out;
  if (chance(30)) out += "# generated program\n";
  for (const auto& it : items) {
    out += it;
    if (chance(15)) out += "\n";
  }
  return out;
}

ProgramGenerator::ProgramGenerator(uint64_t seed, GenOptions options)
    : impl_(std::make_unique<Impl>(seed, options)) {}
ProgramGenerator::~ProgramGenerator() = default;

const std::string& ProgramGenerator::source() {
  if (!generated_) {
    source_ = impl_->generate();
    generated_ = true;
  }
  return source_;
}
const GenFeatures& ProgramGenerator::features() {
  source();
  return impl_->feat_;
}
const std::string& ProgramGenerator::expected_error() {
  source();
  return impl_->expected_error_;
}

}  // namespace descent::testing
