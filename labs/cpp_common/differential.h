// Shared by the harnesses of the C++ labs (fold_ints, stack_ops, stack_if_while, peephole,
// linear_scan): the lab's programs and seeded random ones, compiled once and run on any
// engine, each run's output with its runtime error as one string to compare with the AST
// walker's. Not a lab (no lab.json): `descent lab` skips this folder. observe.h beside it is
// the trust boundary every harness goes through.
#pragma once
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "lang/engine.h"
#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "lang/walker.h"
// The generator of the differential tests, compiled into the harness (it needs only the
// standard library): random programs that are valid by construction.
#include "tests/diff/program_gen.cpp"

namespace lab {

struct Source {
  std::string name;  // "poly.ds", or "random program 7"
  std::string text;
  bool random = false;    // not one of the lab's files: a message shows its text
  std::string generator;  // a generated one: how to make it again, "ProgramGenerator(7) with ..."
};

// A program parsed and checked; ok is false (and error set) for a compile error.
struct Compiled {
  bool ok = false;
  std::string error;
  std::shared_ptr<descent::Program> program;
  descent::Module module;
};

inline std::unique_ptr<Compiled> compile(const Source& s) {
  auto c = std::make_unique<Compiled>();
  auto file = std::make_shared<descent::SourceFile>(s.name, s.text);
  std::vector<descent::Diagnostic> diags;
  c->program = std::make_shared<descent::Program>(descent::parse(file, diags));
  if (!diags.empty() || !descent::check(*c->program, c->module, {}, diags)) {
    c->error = diags.empty() ? std::string("?") : diags[0].message;
    return c;
  }
  c->module.programs.push_back(c->program);
  c->ok = true;
  return c;
}

// What the program prints on `engine`, then "error at line L: message" if it fails. A run
// over `step_limit` steps ends with the error "interrupted" (a loop the rewrite made endless).
inline std::string run(descent::Engine& engine, const Compiled& c, uint64_t* steps = nullptr,
                       uint64_t step_limit = 50'000'000) {
  std::string out;
  descent::GlobalStore globals;
  globals.resize(c.module.globals.size());
  descent::RunOptions opts;
  opts.out = [&out](std::string_view t) { out += t; };
  opts.step_limit = step_limit;
  descent::RunResult r;
  descent::run_on_big_stack([&] { r = engine.run(*c.program, c.module, globals, opts); });
  if (!r.ok) out += "error at line " + std::to_string(r.error.loc.line) + ": " + r.error.message;
  if (steps) *steps = r.steps;
  return out;
}

inline std::string walker_output(const Compiled& c) {
  auto walker = descent::make_ast_walker();
  return run(*walker, c);
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The lab's programs: the *.ds files in dir whose names start with `prefix`, by name.
inline std::vector<Source> lab_programs(const std::filesystem::path& dir, const std::string& prefix = "") {
  std::vector<Source> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (e.path().extension() == ".ds" && name.rfind(prefix, 0) == 0) out.push_back({name, read_file(e.path())});
  }
  std::sort(out.begin(), out.end(), [](const Source& a, const Source& b) { return a.name < b.name; });
  return out;
}

// The random programs' options here: no 10,000-frame recursion (to keep a check quick); with
// planted_errors false, no program built to end in a runtime error either (plain programs).
inline descent::testing::GenOptions random_options(bool planted_errors = true) {
  descent::testing::GenOptions opts;
  opts.boundary_recursion_percent = 0;
  if (!planted_errors) opts.error_percent = 0;
  return opts;
}

// "ProgramGenerator(7)", then the options that differ from the generator's defaults.
inline std::string generator_call(uint64_t seed, const descent::testing::GenOptions& o) {
  const descent::testing::GenOptions d;
  std::string with;
  auto note = [&with](const char* field, int64_t value, int64_t usual) {
    if (value != usual) with += std::string(with.empty() ? " with " : ", ") + field + " = " + std::to_string(value);
  };
  note("max_functions", o.max_functions, d.max_functions);
  note("max_top_statements", o.max_top_statements, d.max_top_statements);
  note("max_block_statements", o.max_block_statements, d.max_block_statements);
  note("max_nesting", o.max_nesting, d.max_nesting);
  note("min_budget", o.min_budget, d.min_budget);
  note("max_budget", o.max_budget, d.max_budget);
  note("error_percent", o.error_percent, d.error_percent);
  note("boundary_recursion_percent", o.boundary_recursion_percent, d.boundary_recursion_percent);
  return "ProgramGenerator(" + std::to_string(seed) + ")" + with;
}

// `count` programs of tests/diff's generator (generator seeds first+1 .. first+count), valid
// by construction. `first` comes from the check's seed, which the runner draws at check time:
// a submission cannot know the programs it will be run on.
inline std::vector<Source> random_programs(int count, const descent::testing::GenOptions& opts = random_options(),
                                           uint64_t first = 0) {
  std::vector<Source> out;
  for (int k = 1; k <= count; ++k) {
    uint64_t seed = first + static_cast<uint64_t>(k);
    descent::testing::ProgramGenerator gen(seed, opts);
    out.push_back({"random program " + std::to_string(k), gen.source(), true, generator_call(seed, opts)});
  }
  return out;
}

// The check's seed as the first generator seed: spread out, so two runs' programs differ.
inline uint64_t first_seed(uint64_t check_seed) { return check_seed * 1000; }

// The lab's programs, then `random` generated ones from the check's seed.
inline std::vector<Source> corpus(const std::filesystem::path& dir, int random,
                                  const descent::testing::GenOptions& opts, uint64_t check_seed) {
  std::vector<Source> out = lab_programs(dir);
  for (auto& s : random_programs(random, opts, first_seed(check_seed))) out.push_back(std::move(s));
  return out;
}

// A one-line excerpt of program output for a message, at most `max` characters.
inline std::string shown(std::string s, size_t max = 160) {
  for (auto& c : s)
    if (c == '\n') c = '|';
  return s.size() > max ? s.substr(0, max - 3) + "..." : s;
}

// A program's name for a message; a generated one says how to get its text back.
inline std::string described(const Source& s) {
  if (s.generator.empty()) return s.name;
  return s.name + " (tests/diff/program_gen.h: " + s.generator + ")";
}

}  // namespace lab
