#include "lang/tree.h"

#include <algorithm>

namespace descent {

TreeNode::~TreeNode() {
  std::vector<TreeNode> work;
  for (auto& k : kids) work.push_back(std::move(k));
  kids.clear();
  while (!work.empty()) {
    TreeNode n = std::move(work.back());
    work.pop_back();
    for (auto& k : n.kids) work.push_back(std::move(k));
    n.kids.clear();
  }
}

namespace {

// Indentation stops growing here: a 100,000-term sum is a tree that deep, and indenting
// every line by its depth would make the outline quadratic (gigabytes). Deeper lines say
// their depth instead.
constexpr int kMaxIndent = 100;

void text(const TreeNode& n, int depth, std::string& out) {
  out.append(static_cast<size_t>(std::min(depth, kMaxIndent)) * 2, ' ');
  if (depth > kMaxIndent) out += "[depth " + std::to_string(depth) + "] ";
  out += n.head;
  if (!n.atom.empty()) out += " " + n.atom;
  if (!n.type.empty()) out += " : " + n.type;
  out += '\n';
  for (const auto& k : n.kids) text(k, depth + 1, out);
}

void sexpr(const TreeNode& n, std::string& out) {
  if (n.leaf) {
    out += n.atom;
    return;
  }
  out += "(" + n.head;
  if (!n.atom.empty()) out += " " + n.atom;
  for (const auto& k : n.kids) {
    out += ' ';
    sexpr(k, out);
  }
  out += ')';
}

std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

int dot(const TreeNode& n, int& next_id, std::string& out) {
  int id = next_id++;
  std::string label = n.head;
  if (!n.atom.empty()) label += " " + n.atom;
  if (!n.type.empty()) label += "\n: " + n.type;
  out += "  n" + std::to_string(id) + " [label=\"" + dot_escape(label) + "\"];\n";
  for (const auto& k : n.kids) {
    int kid = dot(k, next_id, out);
    out += "  n" + std::to_string(id) + " -> n" + std::to_string(kid) + ";\n";
  }
  return id;
}

}  // namespace

std::string print_tree_text(const TreeNode& root) {
  std::string out;
  text(root, 0, out);
  return out;
}

std::string print_tree_sexpr(const TreeNode& root) {
  std::string out;
  sexpr(root, out);
  return out + "\n";
}

std::string print_tree_dot(const TreeNode& root, const std::string& graph_name) {
  std::string out = "digraph \"" + dot_escape(graph_name) + "\" {\n  node [shape=box, fontname=\"monospace\"];\n";
  int next_id = 0;
  dot(root, next_id, out);
  return out + "}\n";
}

}  // namespace descent
