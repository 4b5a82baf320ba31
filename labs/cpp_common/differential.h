// Shared by the harnesses of the C++ labs against the VMs (linear_scan, peephole): the lab's
// programs and seeded random ones, compiled once and run on any engine, each run's output
// with its runtime error as one string to compare with the AST walker's. Not a lab (no
// lab.json): `descent lab` skips this folder.
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
  bool random = false;
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

// The lab's programs (*.ds in dir, by name), then `random` generated ones (seeds 1..random;
// no 10,000-frame recursion, to keep a check quick).
inline std::vector<Source> corpus(const std::filesystem::path& dir, int random) {
  std::vector<Source> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".ds")
      out.push_back({e.path().filename().string(), read_file(e.path()), false});
  std::sort(out.begin(), out.end(), [](const Source& a, const Source& b) { return a.name < b.name; });
  descent::testing::GenOptions opts;
  opts.boundary_recursion_percent = 0;
  for (int seed = 1; seed <= random; ++seed) {
    descent::testing::ProgramGenerator gen(static_cast<uint64_t>(seed), opts);
    out.push_back({"random program " + std::to_string(seed), gen.source(), true});
  }
  return out;
}

// A one-line excerpt of program output for a message.
inline std::string shown(std::string s) {
  for (auto& c : s)
    if (c == '\n') c = '|';
  return s.size() > 160 ? s.substr(0, 157) + "..." : s;
}

// A program's name for a message; a random one says how to get its text back.
inline std::string described(const Source& s) {
  if (!s.random) return s.name;
  return s.name + " (tests/diff/program_gen.h: ProgramGenerator(" +
         s.name.substr(s.name.rfind(' ') + 1) + ") with boundary_recursion_percent = 0)";
}

inline int fail(const std::string& why) {
  std::printf("FAIL: %s\n", why.c_str());
  return 0;
}

inline int pass() {
  std::printf("PASS\n");
  return 0;
}

}  // namespace lab
