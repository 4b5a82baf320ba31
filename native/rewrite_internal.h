// Private to the DAG rewrites (legalize.cpp, combine.cpp): nothing else includes this.
//
// Both passes rewrite a block's DAG in place the same way: add nodes at the end, point every
// user of a node at its replacement, mark the old one dead (ids stay stable for the views),
// and log each step with ref(). What they share is here; what each rewrites is in its file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "native/backend.h"

namespace descent::native::rewrite_internal {

// An x86-64 immediate operand holds 32 bits, sign-extended; a wider constant is an imm64.
inline bool fits_imm32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

inline std::string ref(const Block& b, int id) {
  const Node& n = b.nodes[static_cast<size_t>(id)];
  std::string s = "n" + std::to_string(id) + " " + nk_name(n.kind);
  if (n.kind == NK::Const || n.kind == NK::Imm64) s += " " + std::to_string(n.imm);
  return s;
}

// Who uses each node, so a rewrite touches only the users of what it replaces: a block may
// hold tens of thousands of nodes (a 45,000-term sum), and scanning them all per fold would
// be quadratic. Built per block by index_block; add_node and the rewrites keep it current.
struct UseIndex {
  std::vector<std::vector<int>> users;  // per node: the nodes with it among their operands
  std::vector<int> chain_user;          // per node + 1 (0: the block's start): who chains to it
};
inline thread_local UseIndex uses;

inline void index_block(const Block& b) {
  uses.users.assign(b.nodes.size(), {});
  uses.chain_user.assign(b.nodes.size() + 1, -1);
  for (size_t i = 0; i < b.nodes.size(); ++i) {
    const Node& n = b.nodes[i];
    if (n.dead) continue;
    for (int o : n.ops) uses.users[static_cast<size_t>(o)].push_back(static_cast<int>(i));
    if (is_chained(n.kind)) uses.chain_user[static_cast<size_t>(n.chain + 1)] = static_cast<int>(i);
  }
}

// Replaces every use of `from` (as a value operand or a chain) by `to`.
inline void replace_uses(Block& b, int from, int to) {
  for (int u : uses.users[static_cast<size_t>(from)]) {
    Node& n = b.nodes[static_cast<size_t>(u)];
    if (n.dead) continue;
    for (int& o : n.ops)
      if (o == from) o = to;
    if (to >= 0) uses.users[static_cast<size_t>(to)].push_back(u);
  }
  uses.users[static_cast<size_t>(from)].clear();
  int next = uses.chain_user[static_cast<size_t>(from + 1)];
  if (next >= 0 && is_chained(b.nodes[static_cast<size_t>(from)].kind)) {
    b.nodes[static_cast<size_t>(next)].chain = to;
    uses.chain_user[static_cast<size_t>(to + 1)] = next;
    uses.chain_user[static_cast<size_t>(from + 1)] = -1;
  }
  if (b.last_chain == from) b.last_chain = to;
  b.nodes[static_cast<size_t>(from)].dead = true;
}

inline int add_node(Block& b, NK k, std::vector<int> ops, int64_t imm = 0) {
  Node n;
  n.kind = k;
  n.ops = std::move(ops);
  n.imm = imm;
  n.type = k == NK::FLoadConst ? VT::F64 : VT::I64;
  int id = static_cast<int>(b.nodes.size());
  for (int o : n.ops) uses.users[static_cast<size_t>(o)].push_back(id);
  b.nodes.push_back(std::move(n));
  uses.users.emplace_back();
  uses.chain_user.push_back(-1);
  return id;
}

// Puts chained node `id` into the chain right after `after` (-1: at the block's start).
inline void insert_after(Block& b, int id, int after) {
  int next = uses.chain_user[static_cast<size_t>(after + 1)];
  if (next >= 0 && next != id) {
    b.nodes[static_cast<size_t>(next)].chain = id;
    uses.chain_user[static_cast<size_t>(id + 1)] = next;
  }
  b.nodes[static_cast<size_t>(id)].chain = after;
  uses.chain_user[static_cast<size_t>(after + 1)] = id;
}

// k when v is 2^k (k >= 0), else -1: multiplications and divisions by it become shifts.
inline int log2_exact(int64_t v) {
  if (v <= 0 || (v & (v - 1)) != 0) return -1;
  int k = 0;
  while ((int64_t{1} << k) != v) ++k;
  return k;
}

}  // namespace descent::native::rewrite_internal
