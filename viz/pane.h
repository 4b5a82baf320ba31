// A pane: one view of one stage, a small state struct with a Draw().
//
// Panes read the pipeline only through Document::session() (pipeline/pipeline.h), never a
// stage's internals; what they add is layout, colour and interaction. Each keeps what it
// computed for one Document::generation() and recomputes when that changes, so a frame
// costs drawing, not compiling.
//
// Act() is the scripted form of the pane's controls: the same function a button calls,
// reachable from `descent-viz --do "PANE VERB ARGS..."` and from the tests.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "viz/document.h"

namespace descent::viz {

class Pane {
 public:
  virtual ~Pane() = default;
  virtual const char* name() const = 0;   // "ast": --pane and --do use it
  virtual const char* title() const = 0;  // "AST": the tab's label
  // The tab's label when the full titles do not fit (a large font): "Loops" for "Loop nest".
  virtual const char* short_title() const { return title(); }
  // Draws into the current ImGui window (the app has begun it and sized it).
  virtual void Draw(Document& doc) = 0;
  // A scripted action; false with *error saying why (unknown verb, bad argument, illegal).
  virtual bool Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
                   std::string* error) {
    (void)doc, (void)args;
    *error = std::string(name()) + " has no action '" + std::string(verb) + "'";
    return false;
  }
  // Verbs Act() understands, with their arguments, for --help: "step [N]".
  virtual std::vector<std::string> verbs() const { return {}; }
  // The one-line summary the pane last drew above its content ("x86_64 at -O2: 31
  // instructions (fib)"), or "" where it has none: what the tests read instead of pixels.
  virtual std::string caption() const { return ""; }
};

// Every pane, in tab order: source, tokens, ast, analysis, stack, reg, llvm, machine, native, graph,
// loops, tune, bench, labs. The source pane is the editor the app keeps on the left.
std::vector<std::unique_ptr<Pane>> make_panes();

std::unique_ptr<Pane> make_source_pane();
std::unique_ptr<Pane> make_tokens_pane();
std::unique_ptr<Pane> make_ast_pane();
std::unique_ptr<Pane> make_analysis_pane();
std::unique_ptr<Pane> make_stack_pane();
std::unique_ptr<Pane> make_reg_pane();
std::unique_ptr<Pane> make_llvm_pane();
std::unique_ptr<Pane> make_machine_pane();
std::unique_ptr<Pane> make_native_pane();
std::unique_ptr<Pane> make_graph_pane();
std::unique_ptr<Pane> make_loops_pane();
std::unique_ptr<Pane> make_tune_pane();
std::unique_ptr<Pane> make_bench_pane();
std::unique_ptr<Pane> make_labs_pane();

}  // namespace descent::viz
