// The solver's alarms and facts (analysis/solver_internal.h). While the fixpoint is sought
// nothing is reported: states are still growing, and an alarm raised on the way could be
// false of the final ones. The last pass (report) runs every block once more over the final
// states with reporting on: the transfer functions' effects become alarms, assigned values
// become facts, and whole-graph checks (unreachable code, endless recursion) run. The
// Result's own questions about those facts (facts_at_line, admits, the multiplication
// report) are here too.
#include <algorithm>
#include <functional>
#include <set>
#include <tuple>

#include "analysis/solver_internal.h"
#include "lang/runtime_errors.h"

namespace descent::analysis {

using namespace solver_internal;

const char* alarm_kind_name(Alarm::Kind k) {
  switch (k) {
    case Alarm::Kind::DivisionByZero: return runtime_error_message(RuntimeError::DivisionByZero);
    case Alarm::Kind::InvalidConversion: return runtime_error_message(RuntimeError::InvalidConversion);
    case Alarm::Kind::EndlessRecursion: return "endless recursion";
    case Alarm::Kind::ConditionAlways: return "constant condition";
    case Alarm::Kind::Unreachable: return "unreachable code";
    case Alarm::Kind::ConstantValue: return "constant value";
    case Alarm::Kind::MayWrap: return "wrap-around";
  }
  return "?";
}

// ---- while reporting: the transfer functions' effects become alarms and facts ----

void Solver::alarm(Alarm::Kind kind, bool definite, SourceLoc loc, std::string message) {
  if (!reporting_) return;
  uint32_t col = kind == Alarm::Kind::MayWrap ? 0 : loc.col;
  if (!alarmed_.insert({int(kind), loc.line, col}).second) return;
  if (uncalled_[size_t(fn_)] && kind != Alarm::Kind::MayWrap)
    message += " (if " + F().name + " is called with any argument: nothing calls it)";
  r_.alarms.push_back({kind, definite, loc, std::move(message)});
}

void Solver::settle_alarms() {
  for (auto& a : r_.alarms) {
    if (!a.definite || (a.kind != Alarm::Kind::DivisionByZero && a.kind != Alarm::Kind::InvalidConversion)) continue;
    if (!not_must_.count({a.loc.line, a.loc.col})) continue;
    a.definite = false;
    a.message = error_message(a.kind, false, alarm_what_[{int(a.kind), a.loc.line, a.loc.col}]);
  }
  for (const auto& [cond, seen] : conditions_) {
    uint8_t truth = seen.first;
    fn_ = seen.second;  // the alarm's wording depends on its function (never called?)
    if (truth == kTrue || truth == kFalse)
      alarm(Alarm::Kind::ConditionAlways, true, cond->loc,
            "the condition " + quote(*cond) + " is always " + (truth == kTrue ? "true" : "false"));
  }
  for (const auto& [st, f] : constant_candidates_) {
    auto it = r_.stmt_values_.find(st);
    if (it == r_.stmt_values_.end() || !it->second.hull.is_point()) continue;
    fn_ = f;
    alarm(Alarm::Kind::ConstantValue, true, st->loc,
          st->name + " is always " + lat_.show(it->second).substr(2) +
              " here: a constant the AST's fold_constants pass (literals only) cannot see");
  }
}

// Quoted source of an expression for a message: short, and only built when reported.
std::string Solver::quote(const Expr& e) { return "'" + expr_text(e, 60) + "'"; }

void Solver::effects(const Effects& fx, SourceLoc loc, const Expr& e) {
  if (!reporting_) return;
  if (!(fx.div_zero_may || fx.conversion_may || fx.may_wrap)) {
    not_must_.insert({loc.line, loc.col});
    return;
  }
  effects(fx, loc, quote(e));
}

std::string Solver::error_message(Alarm::Kind kind, bool definite, const std::string& what) {
  if (kind == Alarm::Kind::DivisionByZero)
    return definite ? "division by zero: the divisor of " + what + " is always 0"
                    : "possible division by zero: the divisor of " + what + " may be 0";
  return definite ? "invalid conversion: " + what + " is always nan or out of int's range"
                  : "possible invalid conversion: " + what + " may be nan or out of int's range";
}

void Solver::effects(const Effects& fx, SourceLoc loc, const std::string& what) {
  if (!reporting_) return;
  if (!fx.div_zero_must && !fx.conversion_must) not_must_.insert({loc.line, loc.col});
  for (auto [may, must, kind] : {std::tuple{fx.div_zero_may, fx.div_zero_must, Alarm::Kind::DivisionByZero},
                                 std::tuple{fx.conversion_may, fx.conversion_must, Alarm::Kind::InvalidConversion}}) {
    if (!may) continue;
    alarm_what_[{int(kind), loc.line, loc.col}] = what;
    alarm(kind, must, loc, error_message(kind, must, what));
  }
  // Only the interval domains keep bounds a wrap can lose; in the others every partial
  // sum of unknowns "may wrap", which says nothing.
  // In an unrolled loop the note names the first iteration that may wrap (the report runs
  // them in order, and the note is made once per line).
  if (fx.may_wrap && (lat_.domain() == Domain::Intervals || lat_.domain() == Domain::Product)) {
    std::string when;
    if (reported_ && reported_->iteration > 0)
      when = " (first in iteration " + std::to_string(reported_->iteration) + " of the loop on line " +
             std::to_string(reported_->loop_line) + ")";
    alarm(Alarm::Kind::MayWrap, false, loc,
          what + " may wrap around" + when +
              " (int arithmetic is modulo 2^64): an interval that would leave int's range becomes the whole type");
  }
}

void Solver::record(const Stmt* s, const AbsVal& v) {
  if (!reporting_ || !s) return;
  auto it = r_.stmt_values_.find(s);
  if (it == r_.stmt_values_.end()) r_.stmt_values_[s] = v;
  else it->second = lat_.join(it->second, v);
}

void Solver::note_mul(const Expr& e, const AbsVal& a, const AbsVal& b) {
  auto it = mul_index_.find(&e);
  if (it == mul_index_.end()) return;
  auto& m = r_.muls_[it->second];
  m.reached = m.reached || (!a.is_bottom() && !b.is_bottom());
  m.left = lat_.join(m.left, a);
  m.right = lat_.join(m.right, b);
}

// ---- the last pass: facts and alarms from the final states ----

void Solver::report() {
  prepare_context_report();
  reporting_ = true;
  in_report_ = true;
  const auto& fns = r_.cfg.functions;
  // Multiplication sites, for the syntactic / semantic comparison.
  for (const auto& g : fns) {
    std::function<void(const Expr&)> find = [&](const Expr& e) {
      if (e.kind == ExprKind::Binary && e.binary_op == BinaryOp::Mul) {
        mul_index_[&e] = r_.muls_.size();
        r_.muls_.push_back({&e, g.fn, false, AbsVal{}, AbsVal{}});
      }
      for (const auto& k : e.kids)
        if (k) find(*k);
    };
    std::function<void(const Block&)> walk = [&](const Block& body) {
      for (const auto& s : body) {
        if (s->kind == StmtKind::FnDecl) continue;
        if (s->expr) find(*s->expr);
        if (s->expr2) find(*s->expr2);
        walk(s->body);
        walk(s->else_body);
      }
    };
    walk(g.fn ? g.fn->body : program_.body);
  }
  r_.block_states.assign(fns.size(), {});
  for (size_t f = 0; f < fns.size(); ++f) {
    fn_ = int(f);
    const auto& blocks = F().blocks;
    auto& in = in_[f];
    if (in.size() != blocks.size()) in.assign(blocks.size(), unreachable());
    for (size_t b = 0; b < blocks.size(); ++b) {
      r_.block_states[f].push_back(describe(in[b]));
      auto it = iter_states_[f].find(int(b));
      if (it == iter_states_[f].end()) {
        transfer(blocks[b], in[b]);
      } else {  // an unrolled loop's block: each iteration apart, in order
        for (const State& st : it->second) {
          reported_ = &st;
          transfer(blocks[b], st);
        }
        reported_ = nullptr;
      }
    }
    report_unreachable(int(f));
    if (F().fn) {
      report_recursion(int(f));
    }
  }
  settle_alarms();
  collect_facts();
  std::stable_sort(r_.alarms.begin(), r_.alarms.end(), [](const Alarm& a, const Alarm& b) {
    return a.loc.line != b.loc.line ? a.loc.line < b.loc.line : a.loc.col < b.loc.col;
  });
}

bool Solver::has_code(const BasicBlock& b) {
  return !b.instrs.empty() || b.term == TermKind::Return || b.term == TermKind::Branch ||
         b.term == TermKind::LoopTest;
}

void Solver::report_unreachable(int f) {
  const auto& blocks = F().blocks;
  const auto& in = in_[size_t(f)];
  if (!in[0].reachable) return;  // a function nobody calls: not "dead code" inside it
  for (const auto& b : blocks) {
    if (in[size_t(b.id)].reachable || !has_code(b)) continue;
    // Report where a dead region starts: no predecessor is dead code itself.
    bool starts = true;
    for (int p : b.preds)
      if (!in[size_t(p)].reachable && has_code(blocks[size_t(p)])) starts = false;
    if (!starts) continue;
    SourceLoc loc = !b.instrs.empty() ? b.instrs[0].loc : b.term_stmt ? b.term_stmt->loc : b.loc;
    if (!loc.valid()) continue;
    alarm(Alarm::Kind::Unreachable, true, loc, "unreachable code: no execution gets here");
  }
}

// The user functions called anywhere in function f's graph.
std::set<int> Solver::callees(int f) const {
  std::set<int> out;
  std::function<void(const Expr&)> find = [&](const Expr& e) {
    if (e.kind == ExprKind::Call && e.builtin == Builtin::None && e.kernel < 0 && e.slot >= 0 &&
        size_t(e.slot) < module_.functions.size()) {
      int g = r_.cfg.function_index(module_.functions[size_t(e.slot)].decl);
      if (g >= 0) out.insert(g);
    }
    for (const auto& k : e.kids)
      if (k) find(*k);
  };
  for (const auto& b : r_.cfg.functions[size_t(f)].blocks) {
    for (const auto& in : b.instrs) {
      if (in.expr) find(*in.expr);
      if (in.expr2) find(*in.expr2);
    }
    if (b.cond) find(*b.cond);
  }
  return out;
}

bool Solver::calls_reach(int from, int to) const {
  std::set<int> seen;
  std::vector<int> todo{from};
  while (!todo.empty()) {
    int g = todo.back();
    todo.pop_back();
    if (!seen.insert(g).second) continue;
    for (int h : callees(g)) {
      if (h == to) return true;
      todo.push_back(h);
    }
  }
  return false;
}

// A function that is called but can never return, and at a point it reaches calls itself
// (directly or through others that never return either): every call nests another one
// until the stack overflows.
void Solver::report_recursion(int f) {
  const FunctionCfg& g = F();
  if (!called_[size_t(f)] || !in_[size_t(f)][0].reachable || may_return_[size_t(f)]) return;
  for (const auto& b : g.blocks) {
    if (!in_[size_t(f)][size_t(b.id)].reachable) continue;
    const Expr* site = nullptr;
    std::string via;
    std::function<void(const Expr&)> find = [&](const Expr& e) {
      if (site) return;
      for (const auto& k : e.kids)
        if (k) find(*k);
      if (site || e.kind != ExprKind::Call || e.builtin != Builtin::None || e.kernel >= 0 || e.slot < 0 ||
          size_t(e.slot) >= module_.functions.size())
        return;
      int h = r_.cfg.function_index(module_.functions[size_t(e.slot)].decl);
      if (h >= 0 && !may_return_[size_t(h)] && (h == f || calls_reach(h, f))) {
        site = &e;
        via = h == f ? "itself" : r_.cfg.functions[size_t(h)].name + ", which calls " + g.name + " again";
      }
    };
    for (const auto& in : b.instrs) {
      if (in.expr) find(*in.expr);
      if (in.expr2) find(*in.expr2);
    }
    if (b.cond) find(*b.cond);
    if (site) {
      alarm(Alarm::Kind::EndlessRecursion, true, site->loc,
            "endless recursion: " + g.name + " never returns, and every call of it reaches this "
            "call of " + via + " (stack overflow)");
      return;
    }
  }
}

// Whether an instruction of a reachable block comes after one that stops every execution
// (its predecessor in the block left the state unreachable).
bool Solver::dead_before(const FunctionCfg& g, size_t b, const Instr& target) {
  State s = in_[size_t(fn_)][b];
  for (const auto& in : g.blocks[b].instrs) {
    if (&in == &target) return !s.reachable;
    exec(in, s);
  }
  return false;
}

void Solver::collect_facts() {
  std::set<uint32_t> unreachable_lines;
  auto add = [&](uint32_t line, std::string fact) {
    auto& v = r_.facts_[line];
    if (std::find(v.begin(), v.end(), fact) == v.end()) v.push_back(std::move(fact));
  };
  const SourceFile* here = program_.source.get();
  auto in_file = [&](SourceLoc loc) { return loc.valid() && (loc.file == nullptr || loc.file == here); };
  for (size_t f = 0; f < r_.cfg.functions.size(); ++f) {
    fn_ = int(f);
    const FunctionCfg& g = F();
    if (g.fn && in_file(g.fn->loc)) {
      if (!called_[f] || !in_[f][0].reachable) {
        add(g.fn->loc.line, g.name + " is never called");
      } else {
        if (uncalled_[f]) add(g.fn->loc.line, "never called: facts for any argument");
        for (int p = 0; p < g.num_params; ++p)
          if (is_tracked(g.vars[size_t(p)].type)) {
            add(g.fn->loc.line, lat_.describe(g.vars[size_t(p)].name, shown_params_[f][size_t(p)]));
            r_.stmt_facts_.push_back({g.fn->loc.line, g.fn->loc.col, g.name, g.vars[size_t(p)].name,
                                      shown_params_[f][size_t(p)], true});
          }
        if (is_tracked(g.fn->return_type))
          add(g.fn->loc.line, shown_ret_[f].is_bottom() ? "never returns" : lat_.describe("result", shown_ret_[f]));
      }
    }
    for (size_t b = 0; b < g.blocks.size(); ++b) {
      for (const auto& in : g.blocks[b].instrs) {
        if ((in.kind != InstrKind::Assign && in.kind != InstrKind::LoopBind) || !in.stmt || in.var < 0) continue;
        if (!in_file(in.loc)) continue;
        auto it = r_.stmt_values_.find(in.stmt);
        const std::string& name = g.vars[size_t(in.var)].name;
        if (!in_[f][b].reachable || it == r_.stmt_values_.end()) {
          // Reached, yet no value: its right side fails (or never returns) every time.
          if (in_[f][b].reachable && !dead_before(g, b, in)) add(in.loc.line, name + ": never assigned (fails or never returns here)");
          else unreachable_lines.insert(in.loc.line);
          continue;
        }
        if (it->second.type == Type::Unknown) continue;
        add(in.loc.line, lat_.describe(name, it->second));
        r_.stmt_facts_.push_back({in.loc.line, in.loc.col, g.name, name, it->second, false});
      }
    }
  }
  for (uint32_t line : unreachable_lines)
    if (!r_.facts_.count(line)) add(line, "unreachable");
  std::stable_sort(r_.stmt_facts_.begin(), r_.stmt_facts_.end(),
                   [](const StmtFact& a, const StmtFact& b) { return std::tie(a.line, a.col) < std::tie(b.line, b.col); });
}

// ---- Result ------------------------------------------------------------------------------------

std::vector<std::string> Result::facts_at_line(uint32_t line) const {
  auto it = facts_.find(line);
  return it == facts_.end() ? std::vector<std::string>{} : it->second;
}

bool Result::admits(const Stmt* s, Value v) const {
  auto it = stmt_values_.find(s);
  if (it == stmt_values_.end()) return false;
  return lattice_->contains(it->second, v);
}

std::string Result::fact_for(const Stmt* s) const {
  auto it = stmt_values_.find(s);
  if (it == stmt_values_.end()) return "";
  return lattice_->show(it->second);
}

std::string Result::multiplication_report() const {
  std::string out;
  for (const auto& g : cfg.functions) {
    std::vector<const MulSite*> sites;
    for (const auto& m : muls_)
      if (m.fn == g.fn) sites.push_back(&m);
    std::string who = g.fn ? "fn " + g.name : "the top level";
    if (sites.empty()) {
      out += who + ": no multiplication (syntactic and semantic agree)\n";
      continue;
    }
    out += who + ": syntactically multiplies: its tree has " + std::to_string(sites.size()) + " '*'\n";
    bool any = false;
    for (const auto* m : sites) {
      std::string where = "  line " + std::to_string(m->expr->loc.line) + ", " + expr_text(*m->expr, 60) + ": ";
      if (!m->reached) {
        out += where + "never runs (the analysis finds it unreachable)\n";
        continue;
      }
      auto is_one = [&](const AbsVal& v) {
        return v.hull.is_point() && ((v.type == Type::Int && v.hull.lo == 1) || (v.type == Type::Float && v.hull.flo == 1.0));
      };
      if (is_one(m->left) || is_one(m->right)) {
        out += where + "runs, but one side is always 1: it changes nothing\n";
        continue;
      }
      any = true;
      auto operand = [&](const Expr& k, const AbsVal& v) {
        return is_literal(k) ? expr_text(k) : lattice_->describe(expr_text(k, 40), v);
      };
      out += where + "runs, with " + operand(*m->expr->kids[0], m->left) + " and " +
             operand(*m->expr->kids[1], m->right) + "\n";
    }
    out += std::string("  semantically: ") + (any ? "it multiplies" : "it never really multiplies") + "\n";
  }
  return out;
}

}  // namespace descent::analysis
