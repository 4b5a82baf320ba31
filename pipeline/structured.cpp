// The structured views of pipeline.h for front ends that draw (the visualizer): bytecode
// listings as rows, live intervals, and recorded runs for the step debugger.
#include "pipeline/pipeline.h"

namespace descent {

// STUB: being implemented.
std::vector<CodeLine> Session::listing(std::string_view) const { return {}; }
std::vector<LiveFunction> Session::live_ranges() const { return {}; }
Recording Session::record(std::string_view engine, size_t) {
  Recording r;
  r.engine = std::string(engine);
  r.error = "not implemented yet";
  return r;
}

}  // namespace descent
