// The AST walker: the reference engine. It evaluates the checked tree directly, one
// recursive call per node, and is written for clarity rather than speed: every other
// engine is tested against what this one prints.
#pragma once
#include <memory>

#include "lang/engine.h"

namespace descent {

std::unique_ptr<Engine> make_ast_walker();

}  // namespace descent
