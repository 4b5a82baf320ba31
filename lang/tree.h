// A generic labelled tree: the structured form of the AST (and later of other tree-shaped
// IRs) that the text, s-expression and DOT printers - and the visualizer - lay out.
#pragma once
#include <string>
#include <vector>

#include "lang/source.h"

namespace descent {

struct TreeNode {
  std::string head;  // what the node is: "assign", "add", "call", "int", "var", ...
  std::string atom;  // its own text, if any: a name or a literal ("x", "15")
  std::string type;  // the checked type, empty before semantic analysis
  bool leaf = false;  // s-expressions print a leaf as its atom alone: x, 15
  SourceLoc loc;
  // One past the last character of the node's source (offset/line/col), so a front end can
  // highlight the whole range [loc, end); invalid where it is not known.
  SourceLoc end;
  // Extra text for display where the head and atom do not say it all: a loop's range
  // ("0..64"), a block's iteration variables.
  std::string detail;
  // The name the rest of the system addresses the node by, where the atom alone does not
  // say it: a loop's name in schedule steps ("i_0", or "C.i" where "i" is ambiguous).
  // Empty where there is none.
  std::string ref;
  std::vector<TreeNode> kids;

  // As deep as the syntax tree it shows (100,000 levels for a long flat sum): freed with a
  // work list rather than recursion (tree.cpp).
  TreeNode() = default;
  TreeNode(const TreeNode&) = default;
  TreeNode(TreeNode&&) noexcept = default;
  TreeNode& operator=(const TreeNode&) = default;
  TreeNode& operator=(TreeNode&&) noexcept = default;
  ~TreeNode();
};

// Indented outline, one node per line: "assign x : int".
std::string print_tree_text(const TreeNode& root);
// Lisp form: (program (assign x 15) (sub (add x 10) 5)).
std::string print_tree_sexpr(const TreeNode& root);
// Graphviz: `dot -Tpng` draws it.
std::string print_tree_dot(const TreeNode& root, const std::string& graph_name);

}  // namespace descent
