// The engine "native" as a program image (issue 38): every body through a target's description,
// the code written into one C file with a small runtime (image.cpp), linked statically by the
// target's gcc and run in a process of its own: under qemu-aarch64 for AArch64 here (on an
// AArch64 machine, directly), and directly for x86-64 (the instruction-count bench runs that one
// under qemu-x86_64). Debian's gcc-aarch64-linux-gnu and qemu-user (scripts/setup.sh installs
// both); without them, a run says which package is missing. This is how `--engine native
// --target aarch64` runs; x86-64's everyday engine maps its code into this process instead
// (engine.cpp).
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
#include "native/image.h"
#include "native/compile.h"
#include "native/native.h"
#include "proc/cross.h"
#include "vm/reg_compiler.h"

namespace descent::native {

namespace {

// A run's image, the code it points into, and what the runtime's reports refer to.
struct Prepared {
  NativeImage image;
  std::vector<CachedBody> functions;  // by the Module's function index
  std::unique_ptr<Compiled> top;
  std::vector<SourceLoc> locs;   // per site
  std::vector<std::string> msgs;
};

class ImageEngine final : public Engine {
 public:
  explicit ImageEngine(const Target& target, ConstantBuilder constants = {})
      : target_(target), constants_(std::move(constants)) {}
  const char* name() const override { return "native"; }

  RunResult run(const Program& program, const Module& module, GlobalStore& globals,
                const RunOptions& options) override {
    proc::CrossTools tools;
    std::string why;
    if (!find_tools(&tools, &why)) return failure(why);
    Prepared p;
    Diagnostic d;
    if (!prepare(program, module, globals, options.echo, &p, &d)) return fail(d);
    TempDir dir;
    if (dir.path.empty()) return failure("cannot make a temporary directory");
    std::string exe = dir.path + "/prog";
    bool interrupted = false;
    if (!link(tools, p.image, exe, options.interrupt, &interrupted, &why))
      return failure(interrupted ? runtime_error_message(RuntimeError::Interrupted) : why);
    return execute(tools, exe, p, globals, options);
  }

  bool find_tools(proc::CrossTools* tools, std::string* why) const {
    const bool a64 = target_.arch == Arch::AArch64;
    if (proc::find_cross_tools(a64 ? "aarch64" : "x86_64", tools, why)) return true;
    *why = std::string("the native engine for ") + target_.name + " runs its code " +
           (a64 ? "under qemu-user" : "as a program of its own") + ": " + *why;
    return false;
  }

  // Every body compiled and emitted with this run's site and string numbers; the globals'
  // values as the image's start.
  bool prepare(const Program& program, const Module& module, GlobalStore& globals, bool echo, Prepared* p,
               Diagnostic* d) {
    globals.resize(module.globals.size());
    p->image.arch = target_.arch;
    // Every function compiled afresh each run (next to the cross compiler's time, nothing): a
    // cache keyed by the declaration's address, as the in-process engine keeps, would be
    // fooled by a caller that frees one program's declarations and compiles another's at
    // the same addresses (a lab's harness does).
    p->functions.resize(module.functions.size());
    p->image.functions.assign(module.functions.size(), nullptr);
    std::string error;
    for (size_t i = 0; i < module.functions.size(); ++i) {
      const FunctionInfo& info = module.functions[i];
      CachedBody& c = p->functions[i];
      if (!info.decl) continue;
      if (refresh(c, info, module, target_, d) < 0) return false;
      if (!add_body(*c.code, module, p, &error)) {
        *d = failure(error, info.decl->loc).error;
        return false;
      }
      p->image.functions[i] = &bytes(*c.code);
    }
    auto top_virt = compile_reg_toplevel(program, module, echo, d);
    if (!top_virt) return false;
    p->top = compile(std::move(top_virt), module, true, &error, false, target_);
    if (!p->top || !add_body(*p->top, module, p, &error)) {
      *d = failure(error).error;
      return false;
    }
    p->image.top = &bytes(*p->top);
    for (size_t g = 0; g < globals.values.size(); ++g) {
      p->image.globals.push_back(globals.values[g].i);
      p->image.defined.push_back(globals.defined[g]);
    }
    return true;
  }

  // The image's C file beside exe (exe + ".c"), compiled and linked statically into exe.
  static bool link(const proc::CrossTools& tools, const NativeImage& image, const std::string& exe,
                   const std::atomic<bool>* interrupt, bool* interrupted, std::string* why) {
    std::string src = exe + ".c";
    {
      std::ofstream f(src);
      f << image_c_source(image);
      if (!f) {
        *why = "cannot write " + src;
        return false;
      }
    }
    proc::Options cc;
    cc.argv = {tools.cc, "-O0", "-static", "-w", "-o", exe, src, "-lm"};
    cc.limits.wall_s = 120;
    cc.sandbox.drop_root = false;
    cc.interrupt = interrupt;
    proc::Result built = proc::run(cc);
    *interrupted = built.interrupted;
    if (built.ok) return true;
    *why = tools.cc + " failed on the generated program: " + built.problem + "\n" + built.err;
    return false;
  }

 private:
  struct TempDir {
    std::string path;
    TempDir() {
      char dir[] = "/tmp/descent-image-XXXXXX";
      if (mkdtemp(dir)) path = dir;
    }
    // DESCENT_KEEP_IMAGE=1 keeps the directory (prog.c, prog) to read, or to run by hand.
    ~TempDir() {
      std::error_code ec;
      if (!path.empty() && !getenv("DESCENT_KEEP_IMAGE")) std::filesystem::remove_all(path, ec);
    }
  };

  const std::vector<uint8_t>& bytes(const Compiled& c) const {
    return target_.arch == Arch::AArch64 ? c.a64_code.bytes : c.code.bytes;
  }

  // Numbers the body's sites and strings in the run's tables, then emits it.
  bool add_body(Compiled& c, const Module& module, Prepared* p, std::string* error) {
    std::vector<int> ids;
    for (const Site& s : c.fn.sites) {
      ids.push_back(static_cast<int>(p->locs.size()));
      std::string msg = fail_message(s.kind);
      if (s.kind == Fail::UndefinedVariable) msg += " '" + module.globals[static_cast<size_t>(s.global)].name + "'";
      p->locs.push_back(s.loc);
      p->msgs.push_back(msg);
      p->image.site_text.push_back(std::to_string(s.loc.line) + ":" + std::to_string(s.loc.col) +
                                   ": runtime error: " + msg);
      p->image.site_is_call.push_back(s.kind == Fail::StackOverflow);
    }
    int base = static_cast<int>(p->image.strings.size());
    for (const std::string& str : c.src->strings) p->image.strings.push_back(str);
    finish(c, ids, false, base, constants_ ? &constants_ : nullptr);
    if (!c.a64_code.error.empty()) {
      *error = std::string("the ") + target_.name + " emitter: " + c.a64_code.error;
      return false;
    }
    return true;
  }

  // Runs exe (under the emulator when there is one); its output, then what the channel
  // reports: an error's site, and every global's value for the next input.
  RunResult execute(const proc::CrossTools& tools, const std::string& exe, const Prepared& p, GlobalStore& globals,
                    const RunOptions& options) {
    proc::Options o;
    if (!tools.emulator.empty()) o.argv = {tools.emulator, exe};
    else o.argv = {exe};
    o.argv.push_back("--descent");  // report on fd 3
    o.argv.push_back(std::to_string(options.step_limit));
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
    if (r.interrupted) return failure(runtime_error_message(RuntimeError::Interrupted));
    std::istringstream ch(r.channel);
    std::string word;
    int64_t site = -1;
    uint64_t steps = 0;
    bool interrupted = false, reported = false;
    while (ch >> word) {
      if (word == "steps") {
        ch >> steps;
      } else if (word == "global") {
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
    if (site >= 0 && site < static_cast<int64_t>(p.locs.size())) {
      RunResult error = failure(interrupted ? runtime_error_message(RuntimeError::Interrupted)
                                            : p.msgs[static_cast<size_t>(site)],
                                p.locs[static_cast<size_t>(site)]);
      error.steps = steps;
      return error;
    }
    if (!r.ok || (!reported && !globals.values.empty())) {
      std::string what = r.problem.empty() ? "it ended without reporting" : r.problem;
      return failure(std::string("the ") + target_.name + " program under " +
                     (tools.emulator.empty() ? std::string("this machine") : tools.emulator) + ": " + what +
                     (r.err.empty() ? "" : ": " + r.err) +
                     " (a bug in the native backend: the other engines run this program)");
    }
    RunResult done;
    done.steps = steps;
    return done;
  }

  const Target& target_;
  ConstantBuilder constants_;  // empty: a64::materialize
};

}  // namespace

std::unique_ptr<Engine> make_native_engine(const Target& target) {
  if (target.arch == Arch::AArch64) return std::make_unique<ImageEngine>(target);
  return make_native_engine();
}

std::unique_ptr<Engine> make_image_engine(const Target& target, ConstantBuilder constants) {
  return std::make_unique<ImageEngine>(target, std::move(constants));
}

bool write_executable(const Program& program, const Module& module, const GlobalStore& globals, const Target& target,
                      const std::string& exe, std::string* why) {
  ImageEngine engine(target);
  proc::CrossTools tools;
  if (!engine.find_tools(&tools, why)) return false;
  Prepared p;
  Diagnostic d;
  GlobalStore start = globals;
  if (!engine.prepare(program, module, start, false, &p, &d)) {
    *why = d.message;
    return false;
  }
  bool interrupted = false;
  return ImageEngine::link(tools, p.image, exe, nullptr, &interrupted, why);
}

}  // namespace descent::native
