// descent: the command-line front end. With no subcommand it starts the REPL; each subcommand
// (`run`, `dump`, `kernel`, `lab`, ...) is one add_NAME() in a file by concern (cli_internal.h
// lists them). Everything shown comes from descent::Session and the libraries; these files
// only parse arguments, read files, talk to the terminal and pick exit codes.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "apps/cli_internal.h"
#include "apps/repl.h"
#include "lang/text.h"

// libedit's readline-compatible interface; it is a C header.
#include <editline/readline.h>

using namespace descent;

namespace descent::cli {

// descent::read_file, saying why on stderr when it cannot.
bool read_or_say(const std::string& path, std::string* text) {
  std::string error;
  if (read_file(path, text, &error)) return true;
  fmt::print(stderr, "error: {}\n", error);
  return false;
}

}  // namespace descent::cli

namespace {

std::atomic<bool>* g_interrupt = nullptr;
volatile sig_atomic_t g_sigint = 0;

void on_sigint(int) {
  g_sigint = 1;
  if (g_interrupt) g_interrupt->store(true);
}

// ---- the REPL on a terminal ----
Repl* g_repl = nullptr;

std::string g_before;  // the line before the word being completed

char* completion_generator(const char* text, int state) {
  static std::vector<std::string> matches;
  static size_t next;
  if (state == 0) {
    matches = g_repl->complete(g_before, text);
    next = 0;
  }
  if (next >= matches.size()) return nullptr;
  return strdup(matches[next++].c_str());
}

char** completer(const char* text, int start, int) {
  rl_attempted_completion_over = 1;
  g_before.assign(rl_line_buffer, size_t(start));
  char** m = rl_completion_matches(text, completion_generator);
  // "fib(" is a call being typed: no space after it.
  size_t n = m && m[0] ? std::strlen(m[0]) : 0;
  rl_completion_append_character = n && m[0][n - 1] == '(' ? '\0' : ' ';
  return m;
}

std::string history_path() {
  const char* home = std::getenv("HOME");
  return home ? std::string(home) + "/.descent_history" : std::string();
}

int repl(Session& session) {
  Repl r(session, std::cout, std::cerr);
  g_repl = &r;
  bool tty = isatty(STDIN_FILENO);
  if (!tty) {
    // Scripted use: no prompts, no history; each line goes straight in.
    std::string line;
    while (std::getline(std::cin, line))
      if (!r.feed(line)) break;
    return 0;
  }
  fmt::print("Descent {} - type :help for commands, Ctrl-D to leave\n", "0.1");
  std::string hist = history_path();
  using_history();
  if (!hist.empty()) read_history(hist.c_str());
  rl_attempted_completion_function = completer;
  rl_basic_word_break_characters = const_cast<char*>(" \t\n()[]{},;+-*/%=<>!&|");
  while (true) {
    g_sigint = 0;
    char* raw = readline(r.prompt());
    if (!raw) {
      // Ctrl-C at the prompt abandons the line being typed; Ctrl-D leaves.
      if (g_sigint) {
        r.cancel_input();
        std::cout << '\n';
        continue;
      }
      break;
    }
    std::string line(raw);
    std::free(raw);
    if (g_sigint) {  // Ctrl-C while typing: drop what was typed
      r.cancel_input();
      continue;
    }
    if (!line.empty()) {
      add_history(line.c_str());
      if (!hist.empty()) write_history(hist.c_str());
    }
    if (!r.feed(line)) break;
  }
  std::cout << '\n';
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace descent::cli;
  CLI::App app{"Descent: one small program taken down every tier of a compiler.\n"
               "With no subcommand, starts the REPL."};
  app.require_subcommand(0, 1);
  // In the order `descent --help` lists them.
  const std::vector<Subcommand> commands = {
      add_run(app),      // compile and run a program          cli_run.cpp
      add_dump(app),     // show one stage of it               cli_run.cpp
      add_build(app),    // an object file                     cli_run.cpp
      add_analyze(app),  // abstract interpretation, beside Eva cli_run.cpp
      add_kernel(app),   // one kernel: schedule, show, run    cli_tensor.cpp
      add_devices(app),  // the tensor devices                 cli_tensor.cpp
      add_tune(app),     // search schedules                   cli_tensor.cpp
      add_bench(app),    // time the workloads                 cli_bench.cpp
      add_import(app),   // an ONNX model as a program         cli_tensor.cpp
      add_lab(app),      // the guided labs                    cli_lab.cpp
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" that exit 0; every real mistake is a usage error
    // (2 for `descent lab`, as its checks' exit codes say).
    int code = app.exit(e);
    if (code != 0 && argc > 1 && std::string(argv[1]) == "lab") return 2;
    return code == 0 ? 0 : kUsageError;
  }

  Session session;
  g_interrupt = &session.interrupt_flag();
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  // At a terminal, Ctrl-C must wake libedit's read so the prompt can drop the line; when
  // reading a pipe, the read should simply resume (a stray Ctrl-C must not end the input).
  sa.sa_flags = isatty(STDIN_FILENO) ? 0 : SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);

  for (const Subcommand& c : commands)
    if (*c.app) return c.run(session);
  return repl(session);
}
