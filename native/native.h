// The native backend's public face: the engine "native" and the views of its stages.
//
// docs/native.md walks through every stage; native/backend.h lists them and says why the
// backend starts from the virtual register bytecode.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lang/engine.h"
#include "lang/module.h"

namespace descent::native {

// Whether generated code can run here (an x86-64 host). Elsewhere the views still work;
// the engine reports an error.
bool host_supported();

// The fifth engine: the program's code compiled to x86-64 and run from executable memory.
std::unique_ptr<Engine> make_native_engine();

// The stages, in order, each with a one-line description: dag, legal, combine, isel,
// sched, regalloc, asm.
struct StageInfo {
  const char* name;
  const char* what;
};
const std::vector<StageInfo>& stages();

// One stage of every body in the scope as text, or as Graphviz DOT (the DAG stages; other
// stages ignore `dot`). False with *out set to the message when the stage is unknown.
bool view(const CodeScope& scope, const Module& module, std::string_view stage, bool dot,
          std::string* out);

// The patterns of the instruction selector, one line each (name, result, tree, cost).
std::string pattern_table();

}  // namespace descent::native
