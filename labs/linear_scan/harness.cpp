// The checker's side of lab linear_scan, compiled with the student's linear_scan.cpp against
// the project's lang/ and vm/ libraries and run in a child process. `harness CASE
// PROGRAMS_DIR` prints one line: "PASS" or "FAIL: why".
//   no_overlap      every register given out is in range, and no two overlapping
//                   intervals share one (each function of each program, 4 and 2 registers)
//   spills_no_worse per program, at 4 registers, no more spilled values than the project's
//                   own linear scan (allocate_registers)
//   same_output     on the real register VM with 4 registers and the student's assignment,
//                   every program prints what the AST walker prints
// The programs: the lab's, then 40 seeded random programs.
#include <cstdio>
#include <string>
#include <vector>

#include "labs/cpp_common/differential.h"
#include "linear_scan_lab.h"
#include "vm/reg_compiler.h"
#include "vm/reg_vm.h"

using namespace descent;

namespace {

constexpr int kRegisters = 4;
constexpr int kRandomPrograms = 40;

// Every function of the program in virtual register code (the top level first).
std::vector<std::unique_ptr<RegFunction>> virtual_code(const lab::Compiled& c) {
  std::vector<std::unique_ptr<RegFunction>> out;
  Diagnostic err;
  if (auto top = compile_reg_toplevel(*c.program, c.module, false, &err)) out.push_back(std::move(top));
  for (const auto& info : c.module.functions)
    if (info.decl)
      if (auto f = compile_reg_function(*info.decl, c.module, &err)) out.push_back(std::move(f));
  return out;
}

std::string value_name(const RegFunction& f, const LiveInterval& x) {
  std::string name = "v" + std::to_string(x.vreg);
  if (static_cast<size_t>(x.vreg) < f.vreg_names.size() && !f.vreg_names[static_cast<size_t>(x.vreg)].empty())
    name += " (" + f.vreg_names[static_cast<size_t>(x.vreg)] + ")";
  else
    name += " (a temporary)";
  return name + " live [" + std::to_string(x.start) + ".." + std::to_string(x.end) + "]";
}

// "" when the assignment is sound, else what is wrong with it.
std::string problem(const RegFunction& f, const std::vector<LiveInterval>& iv, int k) {
  std::string where = "in " + (f.fn_index < 0 ? std::string("the top-level code") : "function " + f.name) +
                      " with " + std::to_string(k) + " registers: ";
  for (const auto& x : iv)
    if (x.reg < -1 || x.reg >= k)
      return where + value_name(f, x) + " got r" + std::to_string(x.reg) + ", but the registers are r0..r" +
             std::to_string(k - 1) + " (or -1: spilled)";
  for (size_t a = 0; a < iv.size(); ++a)
    for (size_t b = a + 1; b < iv.size(); ++b)
      if (iv[a].reg >= 0 && iv[a].reg == iv[b].reg && overlaps(iv[a], iv[b]))
        return where + value_name(f, iv[a]) + " and " + value_name(f, iv[b]) +
               " overlap, and both got r" + std::to_string(iv[a].reg);
  return "";
}

int spills(const std::vector<LiveInterval>& iv) {
  int n = 0;
  for (const auto& x : iv) n += x.spilled() ? 1 : 0;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return lab::fail("usage: harness CASE PROGRAMS_DIR");
  std::string which = argv[1];
  std::vector<lab::Source> programs = lab::corpus(argv[2], kRandomPrograms);
  for (const auto& src : programs) {
    auto c = lab::compile(src);
    if (!c->ok) return lab::fail(lab::described(src) + " does not compile: " + c->error);
    if (which == "no_overlap") {
      for (auto& f : virtual_code(*c))
        for (int k : {kRegisters, kRegisters - 2}) {
          std::vector<LiveInterval> iv = compute_live_intervals(*f);
          linear_scan(iv, k);
          std::string why = problem(*f, iv, k);
          if (!why.empty()) return lab::fail(lab::described(src) + ", " + why);
        }
    } else if (which == "spills_no_worse") {
      int mine = 0, theirs = 0;
      std::string worst;
      for (auto& f : virtual_code(*c)) {
        RegFunction a = *f, b = *f;
        int m = spills(allocate_registers(a, kRegisters, linear_scan));
        int t = spills(allocate_registers(b, kRegisters));
        if (m > t && worst.empty())
          worst = " (" + (f->fn_index < 0 ? std::string("the top-level code") : "function " + f->name) +
                  ": " + std::to_string(m) + " against " + std::to_string(t) + ")";
        mine += m;
        theirs += t;
      }
      if (mine > theirs)
        return lab::fail(lab::described(src) + ": your scan spills " + std::to_string(mine) +
                         " values at " + std::to_string(kRegisters) + " registers, the project's " +
                         std::to_string(theirs) + worst);
    } else if (which == "same_output") {
      std::string want = lab::walker_output(*c);
      auto vm = make_reg_vm(kRegisters, linear_scan);
      std::string got = lab::run(*vm, *c);
      if (got != want)
        return lab::fail(lab::described(src) + ": the AST walker prints \"" + lab::shown(want) +
                         "\", the register VM with your allocation at " + std::to_string(kRegisters) +
                         " registers \"" + lab::shown(got) + "\"");
    } else {
      return lab::fail("unknown case " + which);
    }
  }
  return lab::pass();
}
