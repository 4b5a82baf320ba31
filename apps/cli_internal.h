// What the `descent` command line's files share (not an API: apps/ only). main.cpp holds main()
// and the REPL on a terminal; each subcommand is one add_NAME() that declares its options and
// returns what runs when the command line names it:
//   cli_run.cpp     run, dump, build, analyze: one program down the scalar tiers
//   cli_tensor.cpp  kernel, devices, tune, import: kernels, devices, the tuner, ONNX models
//   cli_bench.cpp   bench: the workloads on every engine and the baselines
//   cli_lab.cpp     lab: the guided labs' list, start, check, hint, watch, grade, merge
// Like main.cpp, they only parse arguments, read and write files, print and pick exit codes:
// the Session and the libraries do the work.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "pipeline/pipeline.h"

namespace descent::cli {

constexpr int kUsageError = 64;    // EX_USAGE: the command line itself was wrong
constexpr int kInterrupted = 130;  // 128 + SIGINT: what a shell reports for Ctrl-C

// A subcommand: `app` is parsed when the command line named it; then `run` gives the exit code.
// Its options live in whatever `run` holds, so they outlive the parse.
struct Subcommand {
  CLI::App* app;
  std::function<int(Session&)> run;
};

Subcommand add_run(CLI::App& app);      // cli_run.cpp
Subcommand add_dump(CLI::App& app);     // cli_run.cpp
Subcommand add_build(CLI::App& app);    // cli_run.cpp
Subcommand add_analyze(CLI::App& app);  // cli_run.cpp
Subcommand add_kernel(CLI::App& app);   // cli_tensor.cpp
Subcommand add_devices(CLI::App& app);  // cli_tensor.cpp
Subcommand add_tune(CLI::App& app);     // cli_tensor.cpp
Subcommand add_bench(CLI::App& app);    // cli_bench.cpp
Subcommand add_import(CLI::App& app);   // cli_tensor.cpp
Subcommand add_lab(CLI::App& app);      // cli_lab.cpp

// descent::read_file, saying why on stderr when it cannot (main.cpp).
bool read_or_say(const std::string& path, std::string* text);

// `run` and `kernel` alike: kernels nobody scheduled take a tuning database's best records,
// or run as lowered (cli_tensor.cpp).
struct TunedOptions {
  std::string database;
  bool no_default_schedule = false;
};
void add_tuned_options(CLI::App* command, TunedOptions* options);
// Gives them to the session; a database's problems are warnings on stderr.
// False (after printing the error) when --tuned names no database.
bool apply_tuned_options(Session& session, const TunedOptions& options);

}  // namespace descent::cli
