#include "viz/pane.h"

namespace descent::viz {

std::vector<std::unique_ptr<Pane>> make_panes() {
  std::vector<std::unique_ptr<Pane>> p;
  p.push_back(make_source_pane());
  p.push_back(make_tokens_pane());
  p.push_back(make_ast_pane());
  p.push_back(make_analysis_pane());
  p.push_back(make_stack_pane());
  p.push_back(make_reg_pane());
  p.push_back(make_llvm_pane());
  p.push_back(make_machine_pane());
  p.push_back(make_native_pane());
  p.push_back(make_graph_pane());
  p.push_back(make_loops_pane());
  p.push_back(make_tune_pane());
  p.push_back(make_bench_pane());
  p.push_back(make_labs_pane());
  return p;
}

}  // namespace descent::viz
