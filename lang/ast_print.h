// The AST as a TreeNode (for the printers in tree.h and the visualizer), and a deep copy
// of a Program (passes that rewrite the tree work on a copy so both views stay available).
#pragma once
#include <vector>

#include "lang/ast.h"
#include "lang/token.h"
#include "lang/tree.h"

namespace descent {

TreeNode ast_to_tree(const Program& program);
// The same with every node's source range: loc moves to where the node's source starts (a
// binary node's own loc is its operator) and end is one past its last character, found
// from the tokens of the program's source (a call ends at its ')', a block at its '}').
TreeNode ast_to_tree(const Program& program, const std::vector<Token>& tokens);
Program clone_program(const Program& program);

}  // namespace descent
