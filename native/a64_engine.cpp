// The engine "native" for AArch64 (issue 38): every body through the AArch64 description
// (a64_isel.cpp's patterns, AAPCS64's registers, a64_emit.cpp), the words written into one C
// file with a small runtime (a64_runtime.cpp), linked by the cross gcc and run under
// qemu-aarch64 (on an AArch64 machine, directly). Debian's gcc-aarch64-linux-gnu and qemu-user
// (scripts/setup.sh installs both); without them, a run says which package is missing.
//
// What a student sees is what the x86-64 engine gives: the output, and a runtime error with the
// walker's words at the walker's location (the runtime names the site; this side knows where
// it is). Globals go in as the program image's initial values and come back over the channel,
// so a REPL session keeps them from one input to the next. A step limit is the runtime's
// (every back-edge and call counts); Ctrl-C kills the process.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "lang/runtime_errors.h"
#include "native/a64_runtime.h"
#include "native/compile.h"
#include "native/native.h"
#include "proc/cross.h"
#include "vm/reg_compiler.h"

namespace descent::native {

namespace {


class A64Engine final : public Engine {
 public:
  const char* name() const override { return "native"; }

  RunResult run(const Program& program, const Module& module, GlobalStore& globals,
                const RunOptions& options) override {
    proc::CrossTools tools;
    std::string why;
    if (!proc::find_cross_tools("aarch64", &tools, &why))
      return failure("the native engine for aarch64 runs its code under qemu-user: " + why);
    globals.resize(module.globals.size());
    A64Image image;
    std::vector<SourceLoc> site_locs;
    std::vector<std::string> site_msgs;
    cache_.resize(module.functions.size());
    image.functions.assign(module.functions.size(), nullptr);
    std::string error;
    // Every body is emitted again each run: site and string numbers are the run's.
    for (size_t i = 0; i < module.functions.size(); ++i) {
      const FunctionInfo& info = module.functions[i];
      CachedBody& c = cache_[i];
      if (!info.decl) continue;
      Diagnostic d;
      if (refresh(c, info, module, aarch64_target(), &d) < 0) return fail(d);
      if (!add_body(*c.code, module, image, site_locs, site_msgs, &error)) return failure(error, info.decl->loc);
      image.functions[i] = &c.code->a64_code;
    }
    Diagnostic d;
    auto top_virt = compile_reg_toplevel(program, module, options.echo, &d);
    if (!top_virt) return fail(d);
    auto top = compile(std::move(top_virt), module, true, &error, false, aarch64_target());
    if (!top) return failure(error);
    if (!add_body(*top, module, image, site_locs, site_msgs, &error)) return failure(error);
    image.top = &top->a64_code;
    for (size_t g = 0; g < globals.values.size(); ++g) {
      image.globals.push_back(globals.values[g].i);
      image.defined.push_back(globals.defined[g]);
    }
    return build_and_run(tools, image, site_locs, site_msgs, globals, options);
  }

 private:

  // Numbers the body's sites and strings in the run's tables, then emits it.
  bool add_body(Compiled& c, const Module& module, A64Image& image, std::vector<SourceLoc>& locs,
                std::vector<std::string>& msgs, std::string* error) {
    std::vector<int> ids;
    for (const Site& s : c.fn.sites) {
      ids.push_back(static_cast<int>(locs.size()));
      std::string msg = fail_message(s.kind);
      if (s.kind == Fail::UndefinedVariable) msg += " '" + module.globals[static_cast<size_t>(s.global)].name + "'";
      locs.push_back(s.loc);
      msgs.push_back(msg);
      image.site_text.push_back(std::to_string(s.loc.line) + ":" + std::to_string(s.loc.col) +
                                ": runtime error: " + msg);
      image.site_is_call.push_back(s.kind == Fail::StackOverflow);
    }
    int base = static_cast<int>(image.strings.size());
    for (const std::string& str : c.src->strings) image.strings.push_back(str);
    finish(c, ids, false, base);
    if (!c.a64_code.error.empty()) {
      *error = "the aarch64 emitter: " + c.a64_code.error;
      return false;
    }
    return true;
  }

  RunResult build_and_run(const proc::CrossTools& tools, const A64Image& image, const std::vector<SourceLoc>& locs,
                          const std::vector<std::string>& msgs, GlobalStore& globals, const RunOptions& options) {
    char dir[] = "/tmp/descent-a64-XXXXXX";
    if (!mkdtemp(dir)) return failure("cannot make a temporary directory");
    // DESCENT_A64_KEEP=1 keeps the directory (prog.c, prog) to read, or to run by hand.
    struct Cleanup {
      std::string path;
      ~Cleanup() {
        std::error_code ec;
        if (!getenv("DESCENT_A64_KEEP")) std::filesystem::remove_all(path, ec);
      }
    } cleanup{dir};
    std::string src = cleanup.path + "/prog.c", exe = cleanup.path + "/prog";
    {
      std::ofstream f(src);
      f << a64_c_source(image);
      if (!f) return failure("cannot write " + src);
    }
    proc::Options cc;
    cc.argv = {tools.cc, "-O0", "-static", "-w", "-o", exe, src, "-lm"};
    cc.limits.wall_s = 120;
    cc.sandbox.drop_root = false;
    cc.interrupt = options.interrupt;
    proc::Result built = proc::run(cc);
    if (built.interrupted) return failure(runtime_error_message(RuntimeError::Interrupted));
    if (!built.ok) return failure("the cross compiler failed on the generated program: " + built.problem + "\n" + built.err);

    proc::Options o;
    if (!tools.emulator.empty()) o.argv = {tools.emulator, exe};
    else o.argv = {exe};
    o.env = {"DESCENT_CHANNEL=1"};
    if (options.step_limit) o.env.push_back("DESCENT_STEP_LIMIT=" + std::to_string(options.step_limit));
    o.channel = true;
    o.interrupt = options.interrupt;
    o.sandbox.drop_root = false;
    o.limits.output_cap = 256u << 20;
    proc::Result r = proc::run(o);
    // Output: whole lines, as the other engines hand them over.
    if (options.out) {
      std::istringstream lines(r.out);
      for (std::string l; std::getline(lines, l);) options.out(l + "\n");
    }
    RunResult res;
    if (r.interrupted) return failure(runtime_error_message(RuntimeError::Interrupted));
    std::istringstream ch(r.channel);
    std::string word;
    int64_t site = -1;
    bool interrupted = false, reported = false;
    while (ch >> word) {
      if (word == "global") {
        size_t g = 0;
        long long bits = 0;
        int defined = 0;
        ch >> g >> bits >> defined;
        if (g < globals.values.size()) {
          globals.values[g].i = bits;
          globals.defined[g] = static_cast<uint8_t>(defined);
        }
        reported = true;
      } else {
        ch >> site;
        interrupted = word == "interrupted";
      }
    }
    if (site >= 0 && site < static_cast<int64_t>(locs.size())) {
      res.ok = false;
      res.error = Diagnostic{Severity::Error, ErrorKind::Runtime, locs[static_cast<size_t>(site)],
                             interrupted ? runtime_error_message(RuntimeError::Interrupted)
                                         : msgs[static_cast<size_t>(site)]};
      return res;
    }
    if (!r.ok || (!reported && !globals.values.empty())) {
      std::string what = r.problem.empty() ? "it ended without reporting" : r.problem;
      return failure("the aarch64 program under " + (tools.emulator.empty() ? std::string("this machine") : tools.emulator) +
                     ": " + what + (r.err.empty() ? "" : ": " + r.err) +
                     " (a bug in the native backend: the other engines run this program)");
    }
    return res;
  }

  std::vector<CachedBody> cache_;
};

}  // namespace

std::unique_ptr<Engine> make_native_engine(const Target& target) {
  if (target.arch == Arch::AArch64) return std::make_unique<A64Engine>();
  return make_native_engine();
}

}  // namespace descent::native
