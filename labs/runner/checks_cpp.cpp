// The C++ labs' checks (internal.h): the student's file built in isolation, run sandboxed in
// a process that only computes, and judged by a checker process that never held student code
// (labs/cpp_common/observe.h is the harness's side; docs/labs.md "How a C++ lab is graded").
//
// For one check_lab:
//   1. A box: a fresh folder under the temp folder, holding copies of what the student's code
//      may see: include/ (the project's library headers and the lab's own, never labs/ or
//      tests/), src/ (the student's file), data/ (the lab's programs), build/, run/ (its
//      scratch folder, the only place it may write).
//   2. The student's file compiled from src/ against include/ only, in the sandbox; every file
//      the compiler read (-MD) must be in the box or the system's headers.
//   3. Two programs: the student build (the lab's harness + the student's object) and the
//      checker (the same harness + the lab's starter file, built once per lab and kept in the
//      per-user cache with a digest checked before each use).
//   4. Each check: the student build runs `observe CASE SEED DATA` in the sandbox and writes
//      its records on fd 3; the checker runs `check CASE SEED DATA` on those records and
//      prints the verdict, which is the only thing read for a grade.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>

#include "labs/runner/internal.h"
#include "lang/text.h"
#include "proc/process.h"

namespace descent::labs {
namespace {

constexpr uid_t kNobody = 65534;

// The library folders whose headers a lab's file may include: the project below pipeline/.
const char* const kHeaderFolders[] = {"lang", "vm", "native", "llvm_backend", "tensor", "tune", "analysis"};

uint64_t fnv1a(const std::string& text, uint64_t h = 1469598103934665603ull) {
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

std::string file_digest(const fs::path& p) {
  std::string text, why;
  if (!read_file(p.string(), &text, &why)) return "";
  return fmt::format("{:016x}", fnv1a(text));
}

// The linker arguments for the libraries a C++ lab names ("libraries" in lab.json), each
// followed by what it stands on, in the order a static link needs: tune -> tensor -> llvm ->
// lang, vm -> lang, Debian's shared libLLVM under descent_llvm (with its rpath, so the
// harness runs from anywhere), and libxgboost under tune (its cost model).
bool link_arguments(const std::vector<std::string>& names, std::vector<std::string>* out,
                    std::string* error) {
  static const std::vector<std::pair<std::string, std::string>> kLibs = {
      {"tune", DESCENT_LABS_TUNE_LIB},   {"tensor", DESCENT_LABS_TENSOR_LIB},
      {"llvm", DESCENT_LABS_LLVM_LIB},   {"native", DESCENT_LABS_NATIVE_LIB},
      {"vm", DESCENT_LABS_VM_LIB},       {"lang", DESCENT_LABS_LANG_LIB},
      {"proc", DESCENT_LABS_PROC_LIB}};
  static const std::map<std::string, std::vector<std::string>> kNeeds = {
      {"tune", {"tune", "tensor", "llvm", "lang"}}, {"tensor", {"tensor", "llvm", "lang"}},
      {"llvm", {"llvm", "lang"}}, {"native", {"native", "vm", "lang", "proc"}}, {"vm", {"vm", "lang"}},
      {"lang", {"lang"}}};
  std::set<std::string> wanted;
  for (const auto& n : names) {
    auto it = kNeeds.find(n);
    if (it == kNeeds.end()) {
      *error = fmt::format("lab.json names library '{}'; the labs can link lang, vm, native, llvm, tensor, tune", n);
      return false;
    }
    wanted.insert(it->second.begin(), it->second.end());
  }
  for (const auto& [name, file] : kLibs)
    if (wanted.count(name)) out->push_back(file);
  if (wanted.count("tune")) out->push_back(DESCENT_LABS_XGBOOST_LIB);
  if (wanted.count("llvm")) {
    out->push_back("-L" + std::string(DESCENT_LABS_LLVM_LIBDIR));
    out->push_back("-Wl,-rpath," + std::string(DESCENT_LABS_LLVM_LIBDIR));
    out->push_back("-lLLVM-15");
  }
  out->push_back("-lpthread");
  return true;
}

// Where compiled harnesses and checkers are kept between checks, per user: $DESCENT_LABS_CACHE,
// else $XDG_CACHE_HOME/descent-labs, else ~/.cache/descent-labs, else the temp folder. Made
// readable by its owner only; a check never writes there (the sandbox runs it as another
// user, or without the folder), and each file's digest is checked before it is used.
fs::path harness_cache_dir() {
  fs::path dir;
  if (const char* d = std::getenv("DESCENT_LABS_CACHE"); d && *d) dir = d;
  else if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) dir = fs::path(d) / "descent-labs";
  else if (const char* d = std::getenv("HOME"); d && *d) dir = fs::path(d) / ".cache" / "descent-labs";
  else dir = fs::temp_directory_path() / fmt::format("descent-labs-cache-{}", ::getuid());
  std::error_code ec;
  fs::create_directories(dir, ec);
  ::chmod(dir.c_str(), 0700);
  return dir;
}

// A cached file with its digest beside it (NAME.digest): kept only if they agree.
bool cached_file_ok(const fs::path& p) {
  std::error_code ec;
  if (!fs::exists(p, ec)) return false;
  std::string want, why;
  if (!read_file(p.string() + ".digest", &want, &why)) return false;
  while (!want.empty() && want.back() == '\n') want.pop_back();
  return !want.empty() && want == file_digest(p);
}

// Moves a freshly made file into the cache under its final name, with its digest: written
// under temporary names and renamed, so two checkers at once never see half a file.
bool keep_in_cache(const fs::path& temp, const fs::path& final_path, std::string* error) {
  std::error_code ec;
  fs::path digest_temp = temp;
  digest_temp += ".digest";
  if (!write_text(digest_temp, file_digest(temp) + "\n")) {
    *error = "cannot write in the lab cache " + final_path.parent_path().string();
    return false;
  }
  fs::rename(temp, final_path, ec);
  if (!ec) fs::rename(digest_temp, final_path.string() + ".digest", ec);
  if (ec) {
    *error = fmt::format("cannot keep {} in the lab cache: {}", final_path.filename().string(), ec.message());
    return false;
  }
  return true;
}

// One object per lab and kind is kept: those made before the harness or the project changed go.
void drop_older(const fs::path& dir, const std::string& prefix, const fs::path& keep) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && e.path() != keep && e.path().string() != keep.string() + ".digest")
      fs::remove(e.path(), ec);
  }
}

proc::Result run_tool(const std::vector<std::string>& argv, double limit_s) {
  proc::Options o;
  o.argv = argv;
  o.limits.wall_s = limit_s;
  return proc::run(o);
}

// Runs the compiler or linker (trusted input); false with *error (its first lines).
bool compile_step(const std::vector<std::string>& argv, const std::string& what, std::string* error) {
  proc::Result r = run_tool(argv, 300);
  if (r.ok) return true;
  *error = r.timed_out ? "the compiler ran for more than 300 s"
                       : fmt::format("{} does not compile:\n{}", what, first_lines(r.err.empty() ? r.problem : r.err, 20));
  while (!error->empty() && error->back() == '\n') error->pop_back();
  return false;
}

// The flags every C++ file of a lab is compiled with, after its include folders.
std::vector<std::string> common_flags(bool llvm) {
  std::vector<std::string> flags = {DESCENT_LABS_CXX, "-std=c++20", "-O1"};
  std::string sanitize = DESCENT_LABS_SANITIZE;
  if (!sanitize.empty()) flags.push_back("-fsanitize=" + sanitize);
  if (llvm) flags.push_back("-isystem" + std::string(DESCENT_LABS_LLVM_INCLUDE));
  return flags;
}

bool copy_tree_headers(const fs::path& from, const fs::path& to, std::string* key) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(from, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".h") files.push_back(it->path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    fs::path dest = to / fs::relative(f, from.parent_path(), ec);
    fs::create_directories(dest.parent_path(), ec);
    fs::copy_file(f, dest, fs::copy_options::overwrite_existing, ec);
    if (ec) return false;
    std::string text, why;
    if (key && read_file(f.string(), &text, &why)) *key += f.string() + "\n" + text;
  }
  return true;
}

// The box's include/: the project's library headers and the lab's own *.h, copied (a link
// could lead back into the source tree). *key: their text, for the checker's cache key.
bool stage_headers(const Lab& lab, const fs::path& include, std::string* key, std::string* error) {
  std::error_code ec;
  fs::create_directories(include, ec);
  fs::path root = DESCENT_LABS_SOURCE_ROOT;
  for (const char* folder : kHeaderFolders)
    if (fs::is_directory(root / folder, ec) && !copy_tree_headers(root / folder, include, key)) {
      *error = fmt::format("cannot copy the headers of {}/ into the check's folder", folder);
      return false;
    }
  for (const auto& e : fs::directory_iterator(lab.dir, ec)) {
    if (e.path().extension() != ".h") continue;
    fs::copy_file(e.path(), include / e.path().filename(), fs::copy_options::overwrite_existing, ec);
    std::string text, why;
    if (read_file(e.path().string(), &text, &why)) *key += e.path().filename().string() + "\n" + text;
  }
  if (ec) {
    *error = "cannot copy the lab's headers into the check's folder: " + ec.message();
    return false;
  }
  return true;
}

// The lab's harness as an object file, compiled once and kept: it is most of the compile
// time (LLVM's headers, the program generator), and it is the same for every student. It is
// trusted code, compiled with the project's root on the include path. The key covers its
// text, the lab's headers, the flags, and the libraries it will be linked with (their build
// times: a rebuilt project makes a new object).
bool harness_object(const Lab& lab, bool llvm, const std::vector<std::string>& libs, std::string* object,
                    std::string* error) {
  std::vector<std::string> flags = common_flags(llvm);
  flags.insert(flags.begin() + 1, {"-I" + std::string(DESCENT_LABS_SOURCE_ROOT), "-I" + lab.dir});
  fs::path source = fs::path(lab.dir) / lab.spec.value("harness", "harness.cpp");
  std::string key, text;
  if (!read_file(source.string(), &text, error)) return false;
  key += text;
  std::error_code ec;
  std::vector<fs::path> headers;
  for (const auto& e : fs::directory_iterator(lab.dir, ec))
    if (e.path().extension() == ".h") headers.push_back(e.path());
  for (const auto& e : fs::directory_iterator(fs::path(DESCENT_LABS_SOURCE_ROOT) / "labs" / "cpp_common", ec))
    if (e.path().extension() == ".h") headers.push_back(e.path());
  std::sort(headers.begin(), headers.end());
  for (const auto& h : headers)
    if (read_file(h.string(), &text, error)) key += text;
  for (const auto& f : flags) key += "\n" + f;
  for (const auto& l : libs) {
    key += "\n" + l;
    auto t = fs::last_write_time(l, ec);
    if (!ec) key += std::to_string(t.time_since_epoch().count());
  }
  fs::path dir = harness_cache_dir();
  fs::path final_path = dir / fmt::format("{}-harness-{:016x}.o", lab.name, fnv1a(key));
  *object = final_path.string();
  if (cached_file_ok(final_path)) return true;
  fs::path temp = final_path;
  temp += fmt::format(".{}.tmp", ::getpid());
  std::vector<std::string> argv = flags;
  argv.insert(argv.end(), {"-c", source.string(), "-o", temp.string()});
  if (!compile_step(argv, "the lab's " + source.filename().string(), error)) return false;
  if (!keep_in_cache(temp, final_path, error)) return false;
  drop_older(dir, lab.name + "-harness-", final_path);
  return true;
}

// The checker: the harness linked with the lab's starter file (its functions are never
// called in check mode; they only give the linker what the harness names). Built once per
// lab and kept.
bool checker_program(const Lab& lab, const std::string& harness, bool llvm, const std::vector<std::string>& libs,
                     const fs::path& include, const std::string& headers_key, std::string* exe, std::string* error) {
  std::string file = lab.files.empty() ? "" : lab.files[0];
  fs::path starter = fs::path(lab.dir) / "starter" / file;
  std::string text;
  if (!read_file(starter.string(), &text, error)) return false;
  std::vector<std::string> flags = common_flags(llvm);
  // The key: the starter, the headers' text (not the box's path: a new box each check), the
  // harness object, the flags and the libraries.
  std::string key = text + "\n" + headers_key + "\n" + harness;
  for (const auto& f : flags) key += "\n" + f;
  flags.insert(flags.begin() + 1, "-I" + include.string());
  for (const auto& l : libs) key += "\n" + l;
  fs::path dir = harness_cache_dir();
  fs::path final_path = dir / fmt::format("{}-checker-{:016x}", lab.name, fnv1a(key));
  *exe = final_path.string();
  if (cached_file_ok(final_path)) return true;
  std::string tag = fmt::format(".{}.tmp", ::getpid());
  fs::path object = dir / (lab.name + "-starter" + tag + ".o"), temp = final_path;
  temp += tag;
  std::vector<std::string> argv = flags;
  argv.insert(argv.end(), {"-c", starter.string(), "-o", object.string()});
  if (!compile_step(argv, "the lab's starter " + file, error)) return false;
  argv = {DESCENT_LABS_CXX};
  std::string sanitize = DESCENT_LABS_SANITIZE;
  if (!sanitize.empty()) argv.push_back("-fsanitize=" + sanitize);
  argv.insert(argv.end(), {harness, object.string()});
  argv.insert(argv.end(), libs.begin(), libs.end());
  argv.insert(argv.end(), {"-o", temp.string()});
  bool linked = compile_step(argv, "the lab's checker (linking)", error);
  std::error_code ec;
  fs::remove(object, ec);
  if (!linked || !keep_in_cache(temp, final_path, error)) return false;
  drop_older(dir, lab.name + "-checker-", final_path);
  return true;
}

// The sandbox mode a CheckOptions names; false with *error for an unknown one.
bool sandbox_mode(const std::string& name, proc::SandboxMode* mode, std::string* error) {
  if (name == "auto") *mode = proc::SandboxMode::Auto;
  else if (name == "bwrap") *mode = proc::SandboxMode::Bwrap;
  else if (name == "none") *mode = proc::SandboxMode::None;
  else {
    *error = fmt::format("--sandbox {}: the choices are auto, bwrap and none", name);
    return false;
  }
  return true;
}

// What the student's code runs with: the limits, and the sandbox over the box.
proc::Options student_options(const Context& c, double wall_s) {
  proc::Options o;
  std::string error;
  sandbox_mode(c.opts.sandbox, &o.sandbox.mode, &error);
  fs::path box = c.cpp_box_dir;
  o.sandbox.read_only = {(box / "include").string(), (box / "src").string(), (box / "data").string(),
                         (box / "build").string()};
  o.sandbox.writable = {(box / "run").string()};
  o.cwd = (box / "run").string();
  o.limits.wall_s = wall_s;
  o.limits.cpu_s = wall_s + 1;
  // Sanitizers reserve terabytes of address space: no limit on it in such a build.
  if (std::string(DESCENT_LABS_SANITIZE).empty()) o.limits.address_space = uint64_t(8) << 30;
  o.limits.file_size = uint64_t(64) << 20;
  o.limits.processes = 64;
  o.limits.open_files = 256;
  o.limits.output_cap = 64 * 1024;
  return o;
}

// A folder the student's code (as nobody, when the runner is root) may write.
void make_writable(const fs::path& p) {
  std::error_code ec;
  fs::create_directories(p, ec);
  if (::geteuid() == 0) (void)!::chown(p.c_str(), kNobody, kNobody);
  ::chmod(p.c_str(), 0755);
}

// Every file the compiler read (its -MD output) lies in the box or among the system's
// headers; else the name of the first that does not.
std::string foreign_dependency(const std::string& deps, const fs::path& box) {
  // "target.o: a.cpp b.h \\\n c.h": words after the colon, escaped spaces aside.
  size_t colon = deps.find(": ");
  std::string rest = colon == std::string::npos ? deps : deps.substr(colon + 2);
  std::vector<std::string> files;
  std::string cur;
  for (size_t i = 0; i < rest.size(); ++i) {
    char ch = rest[i];
    if (ch == '\\' && i + 1 < rest.size() && rest[i + 1] == ' ') {
      cur += ' ';
      ++i;
    } else if (ch == '\\' && i + 1 < rest.size() && rest[i + 1] == '\n') {
      ++i;
    } else if (ch == ' ' || ch == '\n' || ch == '\t') {
      if (!cur.empty()) files.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!cur.empty()) files.push_back(cur);
  std::vector<std::string> allowed = {box.string() + "/", "/usr/include/", "/usr/lib/gcc/",
                                      std::string(DESCENT_LABS_LLVM_INCLUDE) + "/", "/usr/lib/llvm-15/"};
  for (const auto& f : files) {
    std::error_code ec;
    fs::path p = fs::weakly_canonical(fs::absolute(box / "src" / f), ec);
    std::string s = p.string();
    bool ok = std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) { return s.rfind(a, 0) == 0; });
    if (!ok) return f;
  }
  return "";
}

// The box and both programs, once per check_lab: false with c.cpp_error (and its status).
bool build_cpp(Context& c) {
  if (c.cpp_tried) return c.cpp_error.empty();
  c.cpp_tried = true;
  const Lab& lab = c.lab;
  std::string file = lab.files.empty() ? "" : lab.files[0];
  auto fail = [&c](const std::string& status, const std::string& why) {
    c.cpp_error_status = status;
    c.cpp_error = why;
    return false;
  };
  if (!c.files.count(file)) return fail("error", fmt::format("{} is missing from {}", file, c.work.string()));
  proc::SandboxMode mode;
  std::string error;
  if (!sandbox_mode(c.opts.sandbox, &mode, &error)) return fail("error", error);
  std::string why_not;
  if (mode == proc::SandboxMode::None) c.cpp_box = "none";
  else if (proc::bwrap_works(&why_not)) c.cpp_box = "bwrap";
  else if (mode == proc::SandboxMode::Bwrap) return fail("error", "--sandbox bwrap: " + why_not);
  else c.cpp_box = "none: " + why_not;

  // The box.
  std::string tmpl = (fs::temp_directory_path() / "descent-lab-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) return fail("error", "cannot make a folder for the check under " + tmpl);
  fs::path box = buf.data();
  c.cpp_box_dir = box.string();
  ::chmod(box.c_str(), 0711);
  std::error_code ec;
  for (const char* d : {"src", "data", "include"}) {
    fs::create_directories(box / d, ec);
    ::chmod((box / d).c_str(), 0755);
  }
  make_writable(box / "build");
  make_writable(box / "run");
  std::string headers_key;
  if (!stage_headers(lab, box / "include", &headers_key, &error)) return fail("error", error);
  fs::copy_file(c.work / file, box / "src" / file, ec);
  if (ec) return fail("error", fmt::format("cannot copy {}: {}", file, ec.message()));
  for (const auto& a : lab.spec.value("harness_args", std::vector<std::string>{})) {
    fs::copy(fs::path(lab.dir) / a, box / "data" / a, fs::copy_options::recursive, ec);
    if (ec) return fail("error", fmt::format("cannot copy the lab's {}: {}", a, ec.message()));
  }
  // Everything in it readable by the student's code (as nobody when the runner is root).
  for (auto it = fs::recursive_directory_iterator(box, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    ::chmod(it->path().c_str(), it->is_directory() ? 0755 : 0644);
  make_writable(box / "build");
  make_writable(box / "run");

  std::vector<std::string> libs;
  if (!link_arguments(lab.spec.value("libraries", std::vector<std::string>{"lang"}), &libs, &error))
    return fail("error", error);
  bool llvm = std::find(libs.begin(), libs.end(), "-lLLVM-15") != libs.end();
  std::string harness;
  if (!harness_object(lab, llvm, libs, &harness, &error)) return fail("error", error);
  if (!checker_program(lab, harness, llvm, libs, box / "include", headers_key, &c.cpp_checker_exe, &error))
    return fail("error", error);

  // The student's file, compiled in the sandbox from the box alone.
  std::vector<std::string> argv = common_flags(llvm);
  argv.insert(argv.begin() + 1, {"-I" + (box / "include").string(), "-g"});
  std::string object = (box / "build" / "student.o").string(), deps = (box / "build" / "student.d").string();
  argv.insert(argv.end(), {"-MD", "-MF", deps, "-c", (box / "src" / file).string(), "-o", object});
  proc::Options co = student_options(c, 300);
  co.argv = argv;
  co.sandbox.writable = {(box / "build").string()};
  co.sandbox.read_only = {(box / "include").string(), (box / "src").string()};
  co.cwd = (box / "src").string();
  co.limits.cpu_s = 300;
  co.limits.address_space = 0;  // the compiler's own needs
  co.limits.file_size = uint64_t(512) << 20;
  co.limits.output_cap = 256 * 1024;
  proc::Result r = proc::run(co);
  if (!r.ok) {
    std::string out = r.err.empty() ? r.out : r.err;
    if (r.timed_out) out = "the compiler ran for more than 300 s";
    // Paths in the box mean nothing to the student: name the file as they know it.
    std::string shown = out;
    for (size_t at; (at = shown.find((box / "src").string() + "/")) != std::string::npos;)
      shown.erase(at, (box / "src").string().size() + 1);
    for (size_t at; (at = shown.find((box / "include").string() + "/")) != std::string::npos;)
      shown.erase(at, (box / "include").string().size() + 1);
    std::string text = fmt::format("{} does not compile:\n{}", file, first_lines(shown.empty() ? r.problem : shown, 20));
    while (!text.empty() && text.back() == '\n') text.pop_back();
    if (shown.find("No such file or directory") != std::string::npos && shown.find("#include") != std::string::npos)
      text += "\n    (a lab's file may include the lab's header, the project's library headers "
              "(lang/, vm/, tensor/, ...) and the system's: nothing else is there)";
    return fail("compile error", text);
  }
  std::string dep_text;
  if (read_file(deps, &dep_text, &error)) {
    std::string foreign = foreign_dependency(dep_text, box);
    if (!foreign.empty())
      return fail("sandbox violation",
                  fmt::format("{} includes {}: a lab's file may include the lab's header, the project's "
                              "library headers and the system's, nothing else",
                              file, foreign));
  }
  // The project's own answer to the lab is in the libraries the harness links (its linear
  // scan, its peephole pass, ...): a student's object may not call it. nm lists what the
  // object needs from elsewhere, demangled.
  std::vector<std::string> forbidden = lab.spec.value("forbidden_symbols", std::vector<std::string>{});
  if (!forbidden.empty()) {
    std::string nm = proc::find_on_path("nm");
    proc::Result syms = nm.empty() ? proc::Result{} : run_tool({nm, "-C", "-u", object}, 60);
    if (!syms.ok) return fail("error", "cannot list the symbols of " + file + " (binutils' nm): " + syms.problem);
    for (const auto& line : split_lines(syms.out))
      for (const auto& f : forbidden) {
        size_t at = line.find(f);
        if (at == std::string::npos) continue;
        char next = at + f.size() < line.size() ? line[at + f.size()] : '\0';
        if (next != '\0' && next != '(' && next != '<' && next != ':' && next != ' ') continue;
        return fail("sandbox violation",
                    fmt::format("{} calls {}, the project's own implementation of what this lab asks you to "
                                "write: the lab is to write it yourself",
                                file, f));
      }
  }
  c.cpp_student_exe = (box / "build" / "harness").string();
  argv = {DESCENT_LABS_CXX};
  std::string sanitize = DESCENT_LABS_SANITIZE;
  if (!sanitize.empty()) argv.push_back("-fsanitize=" + sanitize);
  argv.insert(argv.end(), {harness, object});
  argv.insert(argv.end(), libs.begin(), libs.end());
  argv.insert(argv.end(), {"-o", c.cpp_student_exe});
  // A link error is the student's too: a function declared in the lab's header and not
  // defined, or defined twice.
  if (!compile_step(argv, file + " (linking)", &error)) return fail("compile error", error);
  ::chmod(c.cpp_student_exe.c_str(), 0755);
  return true;
}

// A few lines of what the student's code printed, for a message.
std::string printed_text(const proc::Result& r) {
  std::string text = r.err.empty() ? r.out : r.err;
  uint64_t total = r.err.empty() ? r.out_total : r.err_total;
  size_t kept = text.size();
  // Three lines at most, each cut at 200 characters: a flood stays a flood's first words.
  std::string clipped;
  for (const auto& line : split_lines(text.substr(0, 4096)))
    clipped += (line.size() > 200 ? line.substr(0, 200) + "..." : line) + "\n";
  std::string lines = first_lines(clipped, 3);
  while (!lines.empty() && lines.back() == '\n') lines.pop_back();
  if (lines.empty()) return "";
  std::string more = total > kept ? fmt::format(" ({} more bytes not kept)", total - kept) : "";
  return "\n    it printed" + more + ":\n" + lines;
}

// What the student's code left running after its check, when no PID namespace took it down
// (--sandbox none): every process whose program or working folder is in the box. A child
// that setsid() left its process group, so the deadline's kill did not reach it.
void kill_leftovers(const fs::path& box) {
  std::string prefix = box.string() + "/";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    std::string pid = e.path().filename().string();
    if (pid.empty() || !std::isdigit(static_cast<unsigned char>(pid[0])) || pid == std::to_string(::getpid())) continue;
    bool ours = false;
    for (const char* link : {"exe", "cwd"}) {
      std::error_code e2;
      std::string target = fs::read_symlink(e.path() / link, e2).string();
      if (!e2 && target.rfind(prefix, 0) == 0) ours = true;
    }
    if (ours) ::kill(std::stoi(pid), SIGKILL);
  }
}

}  // namespace

void remove_cpp_box(Context& c) {
  if (c.cpp_box_dir.empty()) return;
  kill_leftovers(c.cpp_box_dir);
  std::error_code ec;
  fs::remove_all(c.cpp_box_dir, ec);
  c.cpp_box_dir.clear();
}

bool check_cpp(Context& c, const Check& check, std::string* why) {
  if (!build_cpp(c)) {
    *why = c.cpp_error;
    c.status = c.cpp_error_status;
    return false;
  }
  fs::path box = c.cpp_box_dir;
  std::string kase = check.spec.value("case", ""), seed = std::to_string(c.seed);
  std::vector<std::string> data;
  for (const auto& a : c.lab.spec.value("harness_args", std::vector<std::string>{}))
    data.push_back((box / "data" / a).string());

  // 1. The student's code computes: records on fd 3, nothing else is read from it.
  proc::Options so = student_options(c, c.limit_s());
  so.argv = {c.cpp_student_exe, "observe", kase, seed};
  so.argv.insert(so.argv.end(), data.begin(), data.end());
  so.channel = true;
  proc::Result student = proc::run(so);
  if (!student.sandboxed) kill_leftovers(box);
  if (!student.started) {
    *why = "the check could not start your code: " + student.problem;
    c.status = "error";
    return false;
  }
  fs::path records = box / fmt::format("records-{}.txt", kase);
  if (!write_text(records, student.channel)) {
    *why = "the check could not keep your code's records";
    c.status = "error";
    return false;
  }

  // 2. The checker, which never held the student's code, replays the records and judges.
  proc::Options ko;
  ko.argv = {c.cpp_checker_exe, "check", kase, seed};
  ko.argv.insert(ko.argv.end(), data.begin(), data.end());
  ko.stdin_file = records.string();
  ko.limits.wall_s = 2 * c.limit_s() + 30;
  ko.limits.output_cap = 1 << 20;
  proc::Result checker = proc::run(ko);
  std::string verdict = checker.out;
  while (!verdict.empty() && (verdict.back() == '\n' || verdict.back() == '\r')) verdict.pop_back();
  // How the student's run ended decides what an unfinished record stream means.
  std::string ended;
  if (student.timed_out) {
    ended = fmt::format("it was stopped after {:g} s (an endless loop?)", c.limit_s());
    c.status = "timeout";
  } else if (student.signal == SIGXFSZ) {
    ended = "it wrote a file larger than the check allows (64 MiB)";
    c.status = "sandbox violation";
  } else if (student.signal) {
    ended = "your code crashed: " + proc::signal_text(student.signal);
    c.status = "crash";
  } else if (student.exit_code != 0) {
    ended = fmt::format("your code ended the program with exit status {}", student.exit_code);
    c.status = "crash";
  }
  if (!checker.ok && verdict.empty()) {
    // The checker replays what the student's code produced (a chunk, a graph, IR): a bad
    // enough product can bring down the code the harness runs on it, as it brought down the
    // student's own run. Never a pass; a crash of the student's kind.
    if (!ended.empty()) {
      *why = ended + printed_text(student);
    } else {
      *why = fmt::format("what your code produced made the checker's run of it fail ({})", checker.problem);
      c.status = "crash";
    }
    return false;
  }
  if (verdict == "PASS") {
    if (ended.empty()) return true;
    *why = ended + " (after it had answered every call)" + printed_text(student);
    return false;
  }
  if (verdict.rfind("FAIL: ", 0) == 0) {
    *why = verdict.substr(6);
    if (!ended.empty()) *why += "; then " + ended;
    return false;
  }
  if (verdict.rfind("END ", 0) == 0) {
    // "END index call: problem": the records stop before a call the harness makes.
    std::istringstream in(verdict.substr(4));
    size_t index = 0;
    std::string call;
    in >> index >> call;
    if (!call.empty() && call.back() == ':') call.pop_back();
    std::string where = fmt::format("during its call {} to {}", index + 1, call);
    if (!ended.empty()) {
      *why = ended + " " + where + printed_text(student);
    } else {
      *why = fmt::format("your code ended the program early (an exit, or fd 3 closed) {}; the checker "
                         "needs every call's answer", where);
      c.status = "crash";
    }
    return false;
  }
  *why = "the lab's checker said: " + first_lines(verdict, 3);
  c.status = "error";
  return false;
}

}  // namespace descent::labs
