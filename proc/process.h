// descent_proc: running another program under limits (the labs' checks of student code, the
// benchmark's baselines). Below labs/ and bench/, above nothing of the project's.
//
//   proc::Options o;
//   o.argv = {"/path/harness", "observe", "compares", "12345"};
//   o.limits.wall_s = 10;                       // then its process group is killed
//   o.channel = true;                           // a pipe on the child's fd 3
//   o.sandbox.mode = proc::SandboxMode::Auto;   // bubblewrap when it works here
//   o.sandbox.read_only = {"/path/harness"};
//   proc::Result r = proc::run(o);
//   if (r.timed_out) ...; r.channel holds what it wrote on fd 3
//
// What a child can do to the caller, and what stops it (docs/labs.md "The sandbox"):
//   run forever                the deadline: SIGKILL to its process group, and the pipes are no
//                              longer read (children that setsid() and keep them open do not
//                              stall the caller); under bubblewrap every descendant dies with it
//                              (a PID namespace whose first process is killed)
//   fork without end           RLIMIT_NPROC; as root the child first becomes `nobody`, since
//                              Linux does not count root's processes
//   allocate, write, open      RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_NOFILE; no core files
//   flood its output           the first `output_cap` bytes of each stream are kept, the rest
//                              counted (Result::out_total)
//   read or write the caller's bubblewrap: only the paths named here are visible (read-only
//   files, use the network     unless named writable), a private /tmp, no network
//
// The library never prints; it returns what happened in words (Result::problem).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace descent::proc {

struct Limits {
  double wall_s = 0;              // deadline from the start; 0: none
  double cpu_s = 0;               // RLIMIT_CPU (whole seconds, rounded up); 0: none
  uint64_t address_space = 0;     // RLIMIT_AS in bytes; 0: none
  uint64_t file_size = 0;         // RLIMIT_FSIZE in bytes; 0: none
  uint64_t processes = 0;         // RLIMIT_NPROC: processes beyond those the user has; 0: none
  uint64_t open_files = 0;        // RLIMIT_NOFILE; 0: none
  size_t output_cap = 64 * 1024;  // bytes kept of stdout and of stderr each
  size_t channel_cap = 16 << 20;  // bytes kept of the channel (fd 3)
};

enum class SandboxMode { None, Auto, Bwrap };

struct Sandbox {
  SandboxMode mode = SandboxMode::None;
  // Paths visible inside at the same place: read-only, and writable. /usr (the compiler, the
  // libraries) is always there read-only, with /tmp private and empty.
  std::vector<std::string> read_only, writable;
  // As root, run the child as nobody (65534), with or without bubblewrap: the process limit
  // then counts, and the caller's files are not writable unless made so.
  bool drop_root = true;
};

struct Options {
  std::vector<std::string> argv;  // argv[0]: a path
  std::string cwd;                // "" : the caller's
  std::vector<std::string> env;   // "NAME=value" added to (or, under bubblewrap, instead of) the caller's
  Limits limits;
  Sandbox sandbox;
  std::string stdin_file;         // its stdin ("" : /dev/null)
  bool channel = false;           // a pipe on the child's fd 3, read into Result::channel
  const std::atomic<bool>* interrupt = nullptr;  // set: the child is killed ("interrupted")
};

struct Result {
  bool started = false;
  bool ok = false;             // exited with status 0, in time
  int exit_code = -1;          // when it exited
  int signal = 0;              // when a signal ended it
  bool timed_out = false;      // killed at the deadline
  bool interrupted = false;    // killed because *interrupt was set
  bool sandboxed = false;      // it ran under bubblewrap
  std::string out, err, channel;
  uint64_t out_total = 0, err_total = 0, channel_total = 0;  // bytes written, kept or not
  double seconds = 0, cpu_seconds = 0;
  long peak_kib = 0;           // its peak resident memory
  std::string problem;         // why !ok, in words ("" when ok)
};

Result run(const Options& options);

// Whether bubblewrap runs here with the namespaces the sandbox needs (asked once per process;
// *why says what failed). SandboxMode::Auto falls back to None when it does not.
bool bwrap_works(std::string* why = nullptr);

// The path of `tool` on $PATH (or `tool` itself when it holds a '/' and is executable); ""
// when absent.
std::string find_on_path(const std::string& tool);

// "killed by SIGSEGV (a bad pointer)"-style words for a signal number.
std::string signal_text(int sig);

}  // namespace descent::proc
