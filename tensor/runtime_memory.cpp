// GraphRuntime's memory: the node table's chunks, byte accounting, the tensor limit, and the
// mark-and-sweep collection of tensors nothing can reach any more. Apart from runtime.cpp
// (handles, kernel calls, evaluation) because it is its own algorithm, with its own
// tests (tests/tensor/lifetime_test.cpp), and reads none of the evaluation code.
#include <unistd.h>

#include <algorithm>

#include "lang/text.h"
#include "tensor/runtime.h"

namespace descent::tensor {

const Node NodeTable::empty_{};

Node& NodeTable::push_back(Node n) {
  if ((size_ >> kShift) >= chunks_.size()) {
    chunks_.push_back(std::make_unique<Chunk>());
    chunks_.back()->nodes.reserve(kChunk);
  }
  Chunk& c = *chunks_[size_ >> kShift];
  c.nodes.push_back(std::move(n));
  ++size_;
  return c.nodes.back();
}

void NodeTable::release(size_t i) {
  auto& c = chunks_[i >> kShift];
  if (c && ++c->freed == kChunk) c.reset();
}

size_t NodeTable::chunks_held() const {
  size_t n = 0;
  for (const auto& c : chunks_) n += c != nullptr;
  return n;
}

// ---- Memory -----------------------------------------------------------------------------

namespace {
size_t value_bytes(const Node& n) { return n.value ? n.value->data.size() * sizeof(float) : 0; }
}  // namespace

void GraphRuntime::account(const Node& n) {
  size_t b = value_bytes(n);
  live_bytes_ += b;
  allocated_since_collect_ += b;
  peak_bytes_ = std::max(peak_bytes_, live_bytes_);
}

size_t GraphRuntime::default_tensor_limit() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return size_t(8) << 30;
  return size_t(pages) * size_t(page) / 2;
}

bool GraphRuntime::within_limit(const std::string& what, const std::vector<int64_t>& shape,
                                std::string* error) const {
  // The size in double: a shape too large for int64 still gets its size in the message.
  double bytes = sizeof(float);
  for (int64_t d : shape) bytes *= double(std::max<int64_t>(d, 1));
  bool too_big = bytes > double(limit_bytes_);
  if (!too_big && !check_shape(shape, error)) return false;  // a bad rank or dim, or > 2^32
  if (!too_big) return true;
  for (int64_t d : shape)
    if (d < 1) return check_shape(shape, error);
  *error = what + " of shape " + shape_text(shape) + " would need " +
           (bytes < 1e18 ? bytes_text(uint64_t(bytes)) : "more than an exabyte") +
           ", more than the tensor limit of " + bytes_text(limit_bytes_) +
           " (set it with :memory LIMIT or --tensor-limit)";
  return false;
}

// Collecting costs a pass over the table; doing it once the data allocated since the last
// collection reaches what was live after it (at least 16 MiB) keeps that cost proportional
// to the allocation, and the peak at about twice the live data, as Go's GOGC=100 does.
// Small tensors add table entries faster than bytes, so as many new nodes as were live
// after the last collection (at least 65,536) also call for one.
bool GraphRuntime::wants_collect() const {
  size_t live_nodes = nodes_at_collect_ - std::min(nodes_at_collect_, freed_count_);
  return allocated_since_collect_ >= std::max<size_t>(size_t(16) << 20, live_after_collect_) ||
         nodes_.size() - nodes_at_collect_ >= std::max<size_t>(65536, live_nodes);
}

void GraphRuntime::collect(const std::vector<int64_t>& roots, int64_t from) {
  from = std::clamp<int64_t>(from, 0, int64_t(nodes_.size()));
  // Mark: a node's inputs were created before it, so nothing below `from` can lead back up.
  std::vector<uint8_t> marked(nodes_.size() - size_t(from), 0);
  std::vector<int64_t> work;
  auto push = [&](int64_t id) {
    if (id >= from && valid(id) && !marked[size_t(id - from)]) work.push_back(id);
  };
  for (int64_t r : roots) push(r);
  for (int64_t r : pinned_) push(r);
  backward_roots(roots, push);
  while (!work.empty()) {
    int64_t id = work.back();
    work.pop_back();
    if (marked[size_t(id - from)]) continue;
    marked[size_t(id - from)] = 1;
    const Node& n = nodes_[size_t(id)];
    // Still to compute, what it reads must stay; on the tape, too (grad may need it).
    if (!n.value || n.tape)
      for (int64_t in : n.inputs) push(in);
  }
  // Sweep: the data goes; the slot stays until its whole chunk of the table is freed.
  for (size_t i = size_t(from); i < nodes_.size(); ++i) {
    if (marked[i - size_t(from)] || freed_[i]) continue;
    Node& n = nodes_[i];
    live_bytes_ -= value_bytes(n);
    n.value.reset();
    n.func.reset();
    n.inputs.clear();
    n.inputs.shrink_to_fit();
    n.kernel = nullptr;
    freed_[i] = 1;
    ++freed_count_;
    nodes_.release(i);
  }
  prune_backward();
  ++collections_;
  nodes_at_collect_ = nodes_.size();
  allocated_since_collect_ = 0;
  live_after_collect_ = live_bytes_;
}

GraphRuntime::MemoryStats GraphRuntime::memory() const {
  MemoryStats s;
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (!freed_[i]) ++s.live_tensors;
  s.live_bytes = live_bytes_;
  s.peak_bytes = peak_bytes_;
  s.freed_tensors = freed_count_;
  s.collections = collections_;
  s.limit_bytes = limit_bytes_;
  s.table_chunks = nodes_.chunks_held();
  return s;
}

}  // namespace descent::tensor
