// The isa suite of `descent bench` (issue 38): the same program's dynamic instruction count on
// each target. Under qemu-user, time says nothing about the target (it is the emulator's), but
// the number of instructions the program executes is the target's own: a CISC x86-64 with
// memory operands against the three-address, load/store AArch64 and RISC-V, and LLVM's -O0
// against -O2 on each.
//
// Each vm workload at quick scale is built by the LLVM tier for x86_64, aarch64 and riscv64 at
// -O0 and -O2, and by Descent's native backend for x86_64 and aarch64 (its program image,
// native/image.h, with the runtime's own start-up measured the same way), linked statically with the target's gcc (the host's for x86_64, Debian's cross
// gcc for the others) and run under qemu-<arch> one instruction per block with the execution
// log counted (proc::count_instructions). A program that prints nothing, built and counted the
// same way, is the start-up (the C library's entry and exit) and is subtracted: the count is
// the program's. The check: it printed the workload's quick-scale checksum. The ratio is the
// count against x86-64 -O2's for the same workload.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "bench/bench.h"
#include "bench/internal.h"
#include "lang/text.h"
#include "pipeline/pipeline.h"
#include "proc/cross.h"

namespace descent::bench {

namespace {

struct TempDir {
  std::string path;
  explicit TempDir(std::string* error) {
    char dir[] = "/tmp/descent-isa-XXXXXX";
    if (mkdtemp(dir)) path = dir;
    else *error = "cannot make a temporary directory";
  }
  ~TempDir() {
    if (!path.empty()) std::filesystem::remove_all(path);
  }
};

const char* const kArchs[] = {"x86_64", "aarch64", "riscv64"};
const int kLevels[] = {0, 2, -1};  // -O0, -O2, then the native backend (x86-64 and aarch64 only)

// Builds `source` for arch at -O`opt` (kNative: with Descent's native backend and its small
// runtime instead of LLVM), links it statically and counts its instructions. False with *why;
// *out is its stdout.
constexpr int kNative = -1;
bool count(const std::string& source, const std::string& name, const proc::CrossTools& tools, int opt,
           const std::string& dir, uint64_t* instructions, std::string* out, std::string* why) {
  Session s;
  if (!s.set_target(tools.arch, why) || (opt != kNative && !s.set_opt_level(opt))) return false;
  Outcome o = s.compile(source, name + ".ds");
  if (o.status != Outcome::Ok) {
    *why = "does not compile: " + o.message;
    return false;
  }
  std::string object = dir + "/" + name + ".o", exe = dir + "/" + name;
  if (opt == kNative) {
    if (!s.write_native_executable(exe, why)) return false;
  } else if (!s.build_object(object, why) || !proc::link_executable(tools, object, exe, why, /*static_link=*/true)) {
    return false;
  }
  proc::Limits limits;
  limits.wall_s = 600;
  proc::Result r = proc::count_instructions(tools, exe, limits, instructions);
  *out = r.out;
  while (!out->empty() && (out->back() == '\n' || out->back() == ' ')) out->pop_back();
  if (!r.ok) {
    *why = "qemu-" + tools.arch + ": " + r.problem;
    return false;
  }
  return true;
}

}  // namespace

std::vector<BenchRecord> run_isa_benchmarks(const BenchOptions& o, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  error->clear();
  std::vector<const Workload*> chosen;
  for (const auto& w : workloads())
    if (w.suite == "vm" && (o.workloads.empty() || std::find(o.workloads.begin(), o.workloads.end(), w.name) != o.workloads.end()))
      chosen.push_back(&w);
  for (const auto& w : o.workloads)
    if (std::none_of(chosen.begin(), chosen.end(), [&](const Workload* c) { return c->name == w; })) {
      *error = "unknown workload '" + w + "' in the isa suite";
      return {};
    }
  TempDir dir(error);
  if (dir.path.empty()) return {};
  std::string programs_dir = o.programs_dir.empty() ? default_programs_dir() : o.programs_dir;
  std::vector<BenchRecord> records;
  for (const char* arch : kArchs) {
    proc::CrossTools tools;
    std::string why;
    if (!proc::find_cross_tools(arch, &tools, &why)) {
      *error = why;
      return {};
    }
    for (int opt : kLevels) {
      if (opt == kNative && std::string(arch) == "riscv64") continue;  // no native description
      // The start-up: a program that prints nothing, built the same way.
      uint64_t startup = 0;
      std::string out;
      if (!count("x = 0\n", "empty", tools, opt, dir.path, &startup, &out, &why)) {
        *error = "the start-up program: " + why;
        return {};
      }
      for (const Workload* w : chosen) {
        if (o.interrupt && o.interrupt->load()) {
          *error = "interrupted";
          return records;
        }
        std::string level = opt == kNative ? "native" : fmt::format("llvm -O{}", opt);
        if (o.progress) o.progress(fmt::format("isa {} {} {}", w->name, arch, level));
        BenchRecord rec;
        rec.suite = "isa";
        rec.workload = w->name;
        rec.engine = level + " " + arch;
        rec.kind = "descent";
        rec.scale = "quick";
        rec.baseline = "llvm -O2 x86_64";
        rec.expected = w->expected_quick;
        std::string source;
        uint64_t n = 0;
        auto t = std::chrono::steady_clock::now();
        bool ok = read_file(programs_dir + "/" + w->name + ".ds", &source, &why) &&
                  apply_params(&source, *w, /*quick=*/true, &why) &&
                  count(source, w->name, tools, opt, dir.path, &n, &rec.output, &why);
        rec.median_s = rec.min_s = rec.max_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
        rec.runs = ok ? 1 : 0;
        rec.steps = ok && n > startup ? n - startup : 0;
        rec.startup_s = double(startup);  // here: the start-up's instructions, not seconds
        rec.checksum_ok = ok && rec.output == w->expected_quick;
        if (!ok) rec.note = why;
        else if (!rec.checksum_ok) rec.note = "printed '" + rec.output + "', expected '" + w->expected_quick + "'";
        records.push_back(rec);
      }
    }
  }
  for (auto& r : records)  // each count against x86-64 -O2's for the same workload
    for (const auto& b : records)
      if (b.workload == r.workload && b.engine == r.baseline && b.steps > 0 && r.steps > 0)
        r.ratio_vs_baseline = double(r.steps) / double(b.steps);
  write_outputs(o, records, error);
  return records;
}

std::string format_isa_table(const std::vector<BenchRecord>& records) {
  std::vector<std::vector<std::string>> rows = {
      {"workload", "target", "code", "instructions", "/x86-64 -O2", "start-up", "check"}};
  for (const auto& r : records) {
    if (r.suite != "isa") continue;
    std::string arch = r.engine.substr(r.engine.rfind(' ') + 1);
    std::string level = r.engine.rfind("native", 0) == 0 ? "native" : r.engine.substr(6, r.engine.find(' ', 6) - 6);
    rows.push_back({r.workload, arch, level, r.steps ? std::to_string(r.steps) : "-",
                    std::isnan(r.ratio_vs_baseline) ? "-" : fmt::format("{:.2f}", r.ratio_vs_baseline),
                    fmt::format("{:.0f}", r.startup_s), r.checksum_ok ? "ok" : "FAILED"});
  }
  std::string s = render(rows, 3);
  s += "instructions: executed by the program under qemu-user (one instruction per block, the\n"
       "  execution log counted), its start-up (a program printing nothing, linked the same way,\n"
       "  statically) subtracted; quick scale; the LLVM tier's object linked with the target's gcc;\n"
       "  native: Descent's own backend for the target, its program image and small runtime\n";
  for (const auto& r : records)
    if (r.suite == "isa" && !r.note.empty()) s += r.workload + " (" + r.engine + "): " + r.note + "\n";
  return s;
}

}  // namespace descent::bench
