// The AST as a TreeNode (for the printers in tree.h and the visualizer), and a deep copy
// of a Program (passes that rewrite the tree work on a copy so both views stay available).
#pragma once
#include "lang/ast.h"
#include "lang/tree.h"

namespace descent {

TreeNode ast_to_tree(const Program& program);
Program clone_program(const Program& program);

}  // namespace descent
