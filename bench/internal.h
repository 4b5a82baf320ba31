// What the benchmark's own files share (not part of bench.h's API): medians and the
// text tables' rendering.
#pragma once
#include <atomic>
#include <string>
#include <vector>

#include "bench/bench.h"

namespace descent::bench {

double median_of(std::vector<double> v);  // 0 for no values
// "[=========>          ]  7/40" (the front end redraws lines that start with '[').
std::string progress_bar(size_t done, size_t total);
// Rows of cells as aligned columns, two spaces apart: the first `left` columns left-aligned,
// the rest right-aligned, trailing blanks trimmed.
std::string render(const std::vector<std::vector<std::string>>& rows, size_t left);
// "12.3 us", "4.56 ms", "1.234 s", "-" for nan; `ms_digits` decimals for milliseconds.
std::string seconds_text(double s, int ms_digits = 2);
// Writes o.csv and o.json (those set) unless the run was interrupted; the first write error
// goes to *error when it holds nothing yet. An interrupted run also sets *error to
// "interrupted", whichever cell noticed it.
void write_outputs(const BenchOptions& o, const std::vector<BenchRecord>& records,
                   std::string* error);

// Sets each of the workload's size parameters (`NAME = <int>` at top level) in the program's
// source to its quick or full value; false with *error when one is missing.
bool apply_params(std::string* source, const Workload& w, bool quick, std::string* error);

// The path of `tool` on $PATH (or `tool` itself when it holds a '/' and is executable); ""
// when absent.
std::string find_on_path(const std::string& tool);

struct ProcResult {
  bool ok = false;  // started and exited with status 0
  std::string out, err;
  double seconds = 0;
  double cpu_seconds = 0;  // the child's user + system time
  bool was_interrupted = false;
  std::string problem;  // why !ok, in words
};
// Runs argv (argv[0] a path) with stdin from /dev/null, capturing stdout and stderr; times
// it from spawn to reap. Kills the child (only it) if *interrupt becomes set.
ProcResult run_process(const std::vector<std::string>& argv, const std::atomic<bool>* interrupt);

}  // namespace descent::bench
