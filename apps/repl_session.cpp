// The REPL's settings and runs: the engine, the device and the tensor memory limit, the
// register file, -O, tracing, timing and the launch log; :load runs a file, :compare the last
// input on every engine. Each is a handler of the one command table (repl.cpp); the Session
// holds the settings, these parse the words after the command and print.
#include <fmt/format.h>

#include "apps/repl.h"
#include "lang/text.h"

namespace descent {

void Repl::registers_command(const Call& c) {
  if (c.words.size() < 2) {
    out_ << "registers: " << session_.num_registers() << '\n';
    return;
  }
  int n = 0;
  try {
    n = std::stoi(c.words[1]);
  } catch (...) {
  }
  if (!session_.set_num_registers(n))
    err_ << "error: the register file holds 3 to 250 registers\n";
}

void Repl::trace_command(const Call&) {
  trace_ = !trace_;
  out_ << "trace " << (trace_ ? "on" : "off") << '\n';
  if (trace_) note_untraced();
}

void Repl::opt_command(const Call& c) {
  if (c.words.size() < 2) {
    out_ << "-O" << session_.opt_level() << '\n';
    return;
  }
  int n = -1;
  try {
    n = std::stoi(c.words[1]);
  } catch (...) {
  }
  if (!session_.set_opt_level(n)) err_ << "error: the -O level is 0, 1, 2 or 3\n";
}

void Repl::engine_command(const Call& c) {
  if (c.words.size() < 2) {
    out_ << "engine: " << session_.engine() << " (engines:";
    for (auto& e : Session::engines()) out_ << ' ' << e;
    out_ << ")\n";
  } else if (!session_.set_engine(c.words[1])) {
    std::string guess = closest_name(c.words[1], Session::engines());
    err_ << "error: unknown engine '" << c.words[1] << "' ("
         << (guess.empty() ? "" : "did you mean '" + guess + "'? ") << "engines:";
    for (auto& e : Session::engines()) err_ << ' ' << e;
    err_ << ")\n";
  } else if (trace_) {
    note_untraced();
  }
}

void Repl::debug_command(const Call& c) {
  std::string error;
  if (c.words.size() < 2)
    out_ << "debug " << debug_ << '\n';
  else if (!parse_debug_level(c.words[1], &debug_, &error))
    err_ << "error: " << error << '\n';
}

void Repl::load_command(const Call& c) {
  if (c.words.size() < 2) {
    err_ << "error: usage: :load FILE\n";
    return;
  }
  std::string text, error;
  if (!read_file(c.words[1], &text, &error)) {
    err_ << "error: " << error << '\n';
    return;
  }
  submit(text, c.words[1]);
}

void Repl::device_command(const Call& c) {
  std::string error;
  if (c.words.size() < 2)
    out_ << "device: " << session_.device()
         << " (devices: " << join(Session::devices(), " ") << ")\n";
  else if (!session_.set_device(c.words[1], &error))
    err_ << "error: " << error << '\n';
}

void Repl::note_untraced() {
  if (!Session::engine_traces(session_.engine()))
    err_ << "note: the " << session_.engine()
         << " engine does not trace; the stack and reg VMs do (:engine stack)\n";
}

void Repl::compare() {
  RunOptions opts;
  opts.echo = true;
  opts.step_limit = step_limit_;
  auto runs = session_.compare(opts);
  if (runs.empty()) {
    err_ << "error: nothing to compare (the last input did not compile)\n";
    return;
  }
  const std::string& ref = runs.front().output;
  out_ << fmt::format("{:<7} {:>12} {:>11}  {}\n", "engine", "steps", "time", "result");
  for (const auto& c : runs) {
    if (!c.not_run.empty()) {
      out_ << fmt::format("{:<7} {:>12} {:>11}  not run: {}\n", c.engine, "-", "-", c.not_run);
      continue;
    }
    std::string result = c.outcome.status == Outcome::Ok ? "ok" : c.outcome.diagnostics.empty() ? "error" : c.outcome.diagnostics[0].message;
    result += c.output == ref ? "" : "  (OUTPUT DIFFERS from " + runs.front().engine + ")";
    // The jit counts no steps: "-", not a 0 that reads as "did nothing".
    std::string steps = c.outcome.steps ? std::to_string(c.outcome.steps) : "-";
    out_ << fmt::format("{:<7} {:>12} {:>8.3f} ms  {}\n", c.engine, steps,
                        c.outcome.run_seconds * 1e3, result);
  }
  out_ << "output (" << runs.front().engine << "):\n" << ref;
}

}  // namespace descent
