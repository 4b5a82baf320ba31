// The schedule as text, and its history. A schedule is a list of steps, one per line
// ("split i 32"), so it can be typed at the REPL, kept in a file, printed back as a trace and
// replayed. apply_step reads a step through one table (name, usage line, call) of the
// primitives; Schedule keeps every state, so undo and redo only move an index, and trace()
// is the canonical text that rebuilds the current state from the original.
#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "lang/text.h"
#include "tensor/schedule.h"
#include "tensor/schedule/internal.h"

namespace descent::tensor {

namespace {

// One primitive of the text syntax: its name, its usage line (what a wrong argument count
// prints) and how to run it on parsed tokens.
struct Primitive {
  const char* name;
  const char* usage;
  // args: the tokens after the name. Returns false with *error on a bad argument.
  bool (*run)(tir::PrimFunc& f, const std::vector<std::string>& args, std::string* error);
  // Accepted argument counts: exactly min_args..max_args, or at least min_args if variadic.
  size_t min_args, max_args;
  bool variadic;
};

bool parse_int(const std::string& prim, const std::string& what, const std::string& tok,
               int64_t* out, std::string* error) {
  const char* begin = tok.data();
  const char* end = begin + tok.size();
  auto [ptr, ec] = std::from_chars(begin, end, *out);
  if (ec != std::errc() || ptr != end) {
    *error = prim + ": " + what + " '" + tok + "' is not an integer";
    return false;
  }
  return true;
}

bool parse_scope(const std::string& prim, const std::string& tok, tir::Scope* out,
                 std::string* error) {
  if (tok == "local") *out = tir::Scope::Local;
  else if (tok == "shared") *out = tir::Scope::Shared;
  else {
    *error = prim + ": scope '" + tok + "' must be local or shared";
    return false;
  }
  return true;
}

bool run_split(tir::PrimFunc& f, const std::vector<std::string>& a, std::string* error) {
  int64_t factor = 0;
  if (!parse_int("split", "factor", a[1], &factor, error)) return false;
  std::vector<std::string> names;
  if (a.size() == 5) {
    if (a[2] != "as") {
      *error = "usage: split LOOP FACTOR [as OUTER INNER]";
      return false;
    }
    names = {a[3], a[4]};
  } else if (a.size() != 2) {
    *error = "usage: split LOOP FACTOR [as OUTER INNER]";
    return false;
  }
  return sched::split(f, a[0], factor, names, error);
}

bool run_tile(tir::PrimFunc& f, const std::vector<std::string>& a, std::string* error) {
  int64_t f1 = 0, f2 = 0;
  if (!parse_int("tile", "factor", a[2], &f1, error)) return false;
  if (!parse_int("tile", "factor", a[3], &f2, error)) return false;
  return sched::tile(f, a[0], a[1], f1, f2, error);
}

bool run_fuse(tir::PrimFunc& f, const std::vector<std::string>& a, std::string* error) {
  if (a.size() == 3 || (a.size() == 4 && a[2] != "as")) {
    *error = "usage: fuse LOOP1 LOOP2 [as NAME]";
    return false;
  }
  return sched::fuse(f, a[0], a[1], a.size() == 4 ? a[3] : std::string(), error);
}

bool run_transform_layout(tir::PrimFunc& f, const std::vector<std::string>& a, std::string* error) {
  std::vector<int> perm;
  for (size_t k = 1; k < a.size(); ++k) {
    int64_t axis = 0;
    if (!parse_int("transform_layout", "axis", a[k], &axis, error)) return false;
    if (axis < 0 || axis > 64) {
      *error = "transform_layout: axis " + a[k] + " is not a dimension number";
      return false;
    }
    perm.push_back(int(axis));
  }
  return sched::transform_layout(f, a[0], perm, error);
}

const Primitive kPrimitives[] = {
    {"split", "split LOOP FACTOR [as OUTER INNER]", run_split, 2, 5, false},
    {"tile", "tile LOOP1 LOOP2 FACTOR1 FACTOR2", run_tile, 4, 4, false},
    {"reorder", "reorder LOOP LOOP ...",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::reorder(f, a, e);
     },
     2, 0, true},
    {"fuse", "fuse LOOP1 LOOP2 [as NAME]", run_fuse, 2, 4, false},
    {"fission", "fission LOOP",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::fission(f, a[0], e);
     },
     1, 1, false},
    {"unroll", "unroll LOOP",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::unroll(f, a[0], e);
     },
     1, 1, false},
    {"vectorize", "vectorize LOOP",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::vectorize(f, a[0], e);
     },
     1, 1, false},
    {"parallel", "parallel LOOP",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::parallel(f, a[0], e);
     },
     1, 1, false},
    {"bind", "bind LOOP group.x|group.y|group.z|local.x|local.y|local.z",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::bind(f, a[0], a[1], e);
     },
     2, 2, false},
    {"compute_at", "compute_at BLOCK LOOP",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::compute_at(f, a[0], a[1], e);
     },
     2, 2, false},
    {"reverse_compute_at", "reverse_compute_at BLOCK LOOP",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::reverse_compute_at(f, a[0], a[1], e);
     },
     2, 2, false},
    {"compute_inline", "compute_inline BLOCK",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::compute_inline(f, a[0], e);
     },
     1, 1, false},
    {"cache_read", "cache_read BLOCK BUFFER local|shared",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       tir::Scope scope;
       return parse_scope("cache_read", a[2], &scope, e) &&
              sched::cache_read(f, a[0], a[1], scope, e);
     },
     3, 3, false},
    {"cache_write", "cache_write BLOCK local|shared",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       tir::Scope scope;
       return parse_scope("cache_write", a[1], &scope, e) &&
              sched::cache_write(f, a[0], scope, e);
     },
     2, 2, false},
    {"set_scope", "set_scope BUFFER local|shared",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       tir::Scope scope;
       return parse_scope("set_scope", a[1], &scope, e) && sched::set_scope(f, a[0], scope, e);
     },
     2, 2, false},
    {"decompose_reduction", "decompose_reduction BLOCK LOOP",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::decompose_reduction(f, a[0], a[1], e);
     },
     2, 2, false},
    {"transform_layout", "transform_layout BUFFER AXIS AXIS ...", run_transform_layout, 2, 0, true},
    {"rfactor", "rfactor BLOCK LOOP",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::rfactor(f, a[0], a[1], e);
     },
     2, 2, false},
    {"online_softmax", "online_softmax BLOCK",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::online_softmax(f, a[0], e);
     },
     1, 1, false},
    {"merge", "merge LOOP1 LOOP2",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::merge(f, a[0], a[1], e);
     },
     2, 2, false},
    {"blockize", "blockize LOOP",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::blockize(f, a[0], e);
     },
     1, 1, false},
    {"tensorize", "tensorize LOOP|BLOCK INTRINSIC",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::tensorize(f, a[0], a[1], e);
     },
     2, 2, false},
};

// Splits on spaces, tabs and commas ("reorder i, k, j" reads like the TVM call); a '#'
// starts a comment.
std::vector<std::string> tokenize(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == '#') break;
    if (c == ' ' || c == '\t' || c == ',' || c == '\r') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

}  // namespace

bool apply_step(tir::PrimFunc& f, std::string_view step, std::string* canonical,
                std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  std::vector<std::string> tokens = tokenize(step);
  if (tokens.empty()) {
    *error = "empty schedule step";
    return false;
  }
  const Primitive* prim = nullptr;
  for (const Primitive& p : kPrimitives)
    if (tokens[0] == p.name) prim = &p;
  if (!prim) {
    std::vector<std::string> names;
    for (const Primitive& p : kPrimitives) names.push_back(p.name);
    *error = "unknown schedule primitive '" + tokens[0] + "' (primitives: " + join(names) + ")";
    return false;
  }
  std::vector<std::string> args(tokens.begin() + 1, tokens.end());
  bool count_ok = prim->variadic ? args.size() >= prim->min_args
                                 : args.size() >= prim->min_args && args.size() <= prim->max_args;
  if (!count_ok) {
    *error = std::string("usage: ") + prim->usage;
    return false;
  }
  // A block over a tile (blockize) is a second level of blocks, which only the steps that
  // change loop kinds and tensorize (which folds it back) understand. The others reason
  // about the loops around one block and would misread the tile's bindings.
  static const std::set<std::string> kAfterBlockize = {"blockize", "tensorize", "unroll",
                                                       "vectorize", "parallel", "bind"};
  if (!kAfterBlockize.count(prim->name) && sched::has_nested_block(f.body.get())) {
    std::string outer;
    for (const auto& site : tir::blocks(f))
      if (outer.empty() && sched::has_nested_block(site.block)) outer = site.block->name;
    *error = std::string("cannot ") + prim->name + " while block '" + outer +
             "' is a block over a tile (blockize): only tensorize, unroll, vectorize, parallel "
             "and bind apply until it is tensorized; do this step before the blockize";
    return false;
  }
  if (!prim->run(f, args, error)) return false;
  if (canonical) *canonical = join(tokens, " ");
  return true;
}

namespace {
// The names in `after` that `before` does not account for, in order. Loops are matched by
// variable: a split of Y.i can turn another nest's "C.i" into a bare "i", the same loop
// under a shorter name, not a new one.
std::vector<std::string> made_names(std::vector<std::string> before,
                                    const std::vector<std::string>& after, bool by_variable) {
  auto key = [by_variable](const std::string& name) {
    size_t dot = by_variable ? name.rfind('.') : std::string::npos;
    return dot == std::string::npos ? name : name.substr(dot + 1);
  };
  for (auto& b : before) b = key(b);
  std::vector<std::string> out;
  for (const auto& a : after) {
    auto it = std::find(before.begin(), before.end(), key(a));
    if (it != before.end()) before.erase(it);
    else out.push_back(a);
  }
  return out;
}
}  // namespace

bool apply_step_result(tir::PrimFunc& f, std::string_view step, StepResult* made,
                       std::string* error) {
  if (!made) return apply_step(f, step, nullptr, error);
  std::vector<std::string> loops = sched::loop_names(f), blocks = sched::block_names(f);
  if (!apply_step(f, step, &made->canonical, error)) return false;
  made->loops = made_names(std::move(loops), sched::loop_names(f), true);
  made->blocks = made_names(std::move(blocks), sched::block_names(f), false);
  return true;
}

std::vector<StepLine> schedule_lines(std::string_view text) {
  std::vector<StepLine> out;
  size_t line_no = 0;
  for (const std::string& line : split_lines(text)) {
    ++line_no;
    if (tokenize(line).empty()) continue;
    std::string step = line.substr(0, line.find('#'));
    step.erase(0, step.find_first_not_of(" \t\r"));
    step.erase(step.find_last_not_of(" \t\r") + 1);
    out.push_back({line_no, std::move(step)});
  }
  return out;
}

// ============================================================================
// [SECTION] Schedule
// ============================================================================

Schedule::Schedule(tir::PrimFunc original) { states_.push_back(std::move(original)); }

bool Schedule::apply(std::string_view step, std::string* error, StepResult* made) {
  tir::PrimFunc next = states_[current_];
  StepResult scratch;
  if (!made) made = &scratch;
  if (!apply_step_result(next, step, made, error)) return false;
  // A new step after undo forgets the undone ones (the redo tail), as editors do.
  states_.resize(current_ + 1);
  steps_.resize(current_);
  states_.push_back(std::move(next));
  steps_.push_back(made->canonical);
  ++current_;
  return true;
}

bool Schedule::apply_text(std::string_view text, std::string* error, StepFailure* failure) {
  for (const StepLine& l : schedule_lines(text)) {
    std::string why;
    if (!apply(l.step, &why)) {
      if (error) *error = "line " + std::to_string(l.line) + ": " + why;
      if (failure) *failure = StepFailure{l.line, l.step, std::move(why)};
      return false;
    }
  }
  return true;
}

bool Schedule::undo() {
  if (current_ == 0) return false;
  --current_;
  return true;
}

bool Schedule::redo() {
  if (current_ + 1 >= states_.size()) return false;
  ++current_;
  return true;
}

std::string Schedule::trace() const {
  std::string out;
  for (size_t i = 0; i < current_; ++i) out += steps_[i] + "\n";
  return out;
}

std::vector<std::string> schedule_primitives() {
  std::vector<std::string> names;
  for (const auto& p : kPrimitives) names.push_back(p.name);
  return names;
}

}  // namespace descent::tensor
