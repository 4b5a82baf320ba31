// The native backend's public face: the engine "native" and the views of its stages.
//
// docs/native.md walks through every stage; native/backend.h lists them and says why the
// backend starts from the virtual register bytecode.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "native/a64.h"
#include "native/target.h"
#include <vector>

#include "lang/engine.h"
#include "lang/module.h"

namespace descent::native {

// Whether generated code can run here (an x86-64 host). Elsewhere the views still work;
// the engine reports an error.
bool host_supported();

// The fifth engine: the program's code compiled to x86-64 and run from executable memory.
std::unique_ptr<Engine> make_native_engine();
// The same for a target (target.h): x86-64 is the engine above; AArch64 writes the code into
// a program image with a small runtime, cross-links it and runs it under qemu-aarch64
// (image_engine.cpp).
std::unique_ptr<Engine> make_native_engine(const Target& target);
// The program-image engine for either target: x86-64's image runs as a process of its own here
// (the isa bench counts its instructions; tests check it agrees with the in-process engine).
// constants: AArch64's constant builder (backend.h; empty: the project's, a64::materialize);
// labs/a64_constants gives the student's.
std::unique_ptr<Engine> make_image_engine(const Target& target, a64::ConstantBuilder constants = {});
// The program (its functions and its top level, the globals' values as its start) as a
// statically linked executable for target at `exe`, its C file beside it (exe + ".c"): what
// the image engine runs, to keep or count. False with *why (a tool missing, a compile error).
bool write_executable(const Program& program, const Module& module, const GlobalStore& globals, const Target& target,
                      const std::string& exe, std::string* why);

// The stages, in order, each with a one-line description: dag, legal, combine, isel,
// sched, regalloc, asm.
struct StageInfo {
  const char* name;
  const char* what;
};
const std::vector<StageInfo>& stages();

// One stage of every body in the scope as text, or as Graphviz DOT (the DAG stages; other
// stages ignore `dot`). False with *out set to the message when the stage is unknown.
// target: the machine (target.h; x86-64 unless named). On AArch64 every stage up to regalloc.
bool view(const CodeScope& scope, const Module& module, std::string_view stage, bool dot,
          std::string* out, const Target& target = x86_64_target());

// A DAG stage (dag, legal, combine, isel) of every body in the scope as data, for drawing
// (the visualizer's native pane): nodes with their text and, after isel, the pattern that
// covered each one; value edges (operand -> user) and chain edges (side-effect order).
struct GraphNode {
  int block = 0;          // the basic block (index into BodyGraph::blocks)
  int id = 0;             // the node's number in its block's DAG (n4)
  std::string label;      // "n4: i64 = add n2, n3"
  int pattern = -1;       // isel: the covering pattern's index in patterns(); -1: none
  std::string pattern_name;
};
struct GraphEdge {
  int from = 0, to = 0;   // indices into BodyGraph::nodes
  bool chain = false;
};
struct BodyGraph {
  std::string name;                 // "fn fib" or "<top>"
  std::vector<std::string> blocks;  // each block's heading ("b1:  [pc 2..7]  -> b2")
  std::vector<GraphNode> nodes;
  std::vector<GraphEdge> edges;
  std::string text;                 // the stage's text view of this body alone (any stage)
  std::string error;                // set (and the rest empty) when the body did not compile
};
// Graph stages (dag, legal, combine, isel) fill nodes and edges; every stage fills `text`.
std::vector<BodyGraph> dag_graphs(const CodeScope& scope, const Module& module, std::string_view stage,
                                  const Target& target = x86_64_target());

// The patterns of the instruction selector, one line each (name, result, tree, cost).
std::string pattern_table(const Target& target = x86_64_target());

}  // namespace descent::native
