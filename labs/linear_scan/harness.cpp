// The checker's side of lab linear_scan, compiled with the student's linear_scan.cpp against
// the project's lang/ and vm/ libraries and run in a child process. `harness observe|check
// CASE SEED PROGRAMS_DIR`: observe runs the student's linear_scan and records each call's
// intervals on fd 3; check replays them and prints "PASS" or "FAIL: why"
// (labs/cpp_common/observe.h).
//   no_overlap      every register given out is in range, and no two overlapping
//                   intervals share one (each function of each program, 4 and 2 registers)
//   spills_no_worse per program, at 4 registers, no more spilled values than the project's
//                   own linear scan (allocate_registers)
//   same_output     on the real register VM with 4 registers and the student's assignment,
//                   every program prints what the AST walker prints
// The programs: the lab's, then 40 random programs from the run's seed.
#include <cstdio>
#include <string>
#include <vector>

#include "labs/cpp_common/differential.h"
#include "labs/cpp_common/observe.h"
#include "linear_scan_lab.h"
#include "vm/reg_compiler.h"
#include "vm/reg_vm.h"

using namespace descent;

namespace {

constexpr int kRegisters = 4;
constexpr int kRandomPrograms = 40;

// The student's linear_scan through the trust boundary: the record is every interval after
// the call (the student may reorder or resize the vector; the allocator reads all of it).
void observed_scan(std::vector<LiveInterval>& iv, int k) {
  lab::observed(
      "linear_scan",
      [&](lab::Record& r) {
        linear_scan(iv, k);
        r.u64(iv.size());
        for (const auto& x : iv)
          r.i64(x.vreg).i64(x.start).i64(x.end).i64(static_cast<int64_t>(x.type)).i64(x.reg).i64(x.slot);
      },
      [&](lab::Reader& in) {
        iv.resize(in.count());
        for (auto& x : iv) {
          x.vreg = int(in.i64());
          x.start = int(in.i64());
          x.end = int(in.i64());
          x.type = static_cast<Type>(in.i64());
          x.reg = int(in.i64());
          x.slot = int(in.i64());
        }
        return 0;
      });
}

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



std::string check(const std::string& which, uint64_t seed, const std::string& dir) {
  std::vector<lab::Source> programs = lab::corpus(dir, kRandomPrograms, lab::random_options(), seed);
  for (const auto& src : programs) {
    auto c = lab::compile(src);
    if (!c->ok) return (lab::described(src) + " does not compile: " + c->error);
    if (which == "no_overlap") {
      for (auto& f : virtual_code(*c))
        for (int k : {kRegisters, kRegisters - 2}) {
          std::vector<LiveInterval> iv = compute_live_intervals(*f);
          observed_scan(iv, k);
          std::string why = problem(*f, iv, k);
          if (!why.empty()) return (lab::described(src) + ", " + why);
        }
    } else if (which == "spills_no_worse") {
      int mine = 0, theirs = 0;
      std::string worst;
      for (auto& f : virtual_code(*c)) {
        RegFunction a = *f, b = *f;
        int m = spills(allocate_registers(a, kRegisters, observed_scan));
        int t = spills(allocate_registers(b, kRegisters));
        if (m > t && worst.empty())
          worst = " (" + (f->fn_index < 0 ? std::string("the top-level code") : "function " + f->name) +
                  ": " + std::to_string(m) + " against " + std::to_string(t) + ")";
        mine += m;
        theirs += t;
      }
      if (mine > theirs)
        return (lab::described(src) + ": your scan spills " + std::to_string(mine) +
                         " values at " + std::to_string(kRegisters) + " registers, the project's " +
                         std::to_string(theirs) + worst);
    } else if (which == "same_output") {
      std::string want = lab::walker_output(*c);
      auto vm = make_reg_vm(kRegisters, observed_scan);
      std::string got = lab::run(*vm, *c);
      if (got != want)
        return (lab::described(src) + ": the AST walker prints \"" + lab::shown(want) +
                         "\", the register VM with your allocation at " + std::to_string(kRegisters) +
                         " registers \"" + lab::shown(got) + "\"");
    } else {
      return ("unknown case " + which);
    }
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  return lab::harness_main(argc, argv, 1, [](const lab::Args& a) { return check(a.which, a.seed, a.data[0]); });
}
