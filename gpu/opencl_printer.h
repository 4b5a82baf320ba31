// The OpenCL C printer: the C-style printer (tensor/c_printer.h) with OpenCL's hooks. Private
// to gpu/ (opencl_codegen.h is the interface); the mapping it implements is described there.
//
//   - expressions (opencl_printer.cpp): names that collide with OpenCL C get a trailing
//     underscore, indices print as linear sums, floatN vectors inside vectorized loops
//     (vloadN, select, lane-wise ds_maxN), explicit (float) conversions of index values;
//   - memory accesses for the barrier rule (opencl_memory.cpp);
//   - statements (opencl_codegen.cpp): bound loops as work-item ids, guards, barriers,
//     vector and unrolled loops; and the program around the kernels.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpu/opencl_codegen.h"
#include "tensor/c_printer.h"

namespace descent::gpu {

// Descent identifiers may collide with OpenCL C's keywords, types and built-ins (a buffer
// called `local` or a loop called `exp`); those get a trailing underscore.
std::string cname(const std::string& n);

enum class Storage : uint8_t {
  Param,     // a kernel parameter: an input, the output
  Scratch,   // a __global buffer run_opencl allocates: intermediates, function-lifetime staging
  Private,   // a private array declared where the IR allocates it
  LocalMem,  // a __local array declared at kernel scope
};

int64_t numel(const tir::Buffer& b);

struct TagInfo {
  bool group = false;
  int dim = 0;
};
bool parse_tag(const std::string& tag, TagInfo* out);  // "group.x" ... "local.z"
std::string id_call(const TagInfo& t);                // "get_group_id(0)"

// The coefficient of `v` in an index expression when the expression is linear in v (other
// variables act as constants); nullopt when v appears non-linearly (in a division, a min,
// multiplied by another variable...).
std::optional<int64_t> coefficient(const tir::Expr& e, const std::string& v);

// "(128, 16)": the first `dims` sizes of a launch.
std::string sizes_text(const int64_t* v, int dims);

// ---- memory accesses, for the barrier rule (opencl_memory.cpp) -------------------------------

// One read or write of memory that several work-items can see, with its indices written in
// terms of thread tags ("local.x") instead of the loop variables bound to them.
struct Access {
  int buffer;
  bool write;
  std::vector<tir::ExprPtr> index;
  bool all_locals;  // inside loops bound to every local dimension the launch uses
};
using Accesses = std::vector<Access>;

// The accesses of s to memory work-items share (not private, written somewhere in the
// function: `written`). launch_locals: the local tags with extent > 1; in_scope: the tags
// already bound around s.
Accesses collect_accesses(const tir::Stmt* s, const tir::PrimFunc& f,
                          const std::vector<Storage>& storage, const std::set<int>& written,
                          const std::set<std::string>& launch_locals,
                          const std::set<std::string>& in_scope);

// Does something in `later` touch memory `earlier` wrote (or write what it read) so that a
// work-item might see another's data? Then a barrier must separate them. *global is set when
// __global memory is involved (the fence must cover it too).
bool conflict(const Accesses& earlier, const Accesses& later, const std::vector<Storage>& storage,
              const std::set<std::string>& locals, bool* global);

// ---- the printer ---------------------------------------------------------------------------

// Vector context: inside a vectorized loop over `lane` of `width` lanes, loads whose index
// moves with the lane become vloadN and everything built from them is floatN.
struct VecCtx {
  std::string lane;
  int width = 0;
};

// An index expression as a sum of terms (coefficient x variable, or x an opaque sub-expression
// such as a division) plus a constant, so that `(r_0 * 16 + ax0 - r_0 * 16) * 16` prints as
// `ax0 * 16`. Terms keep the order in which they first appear.
struct Linear {
  std::vector<std::pair<std::string, int64_t>> terms;  // printed atom -> coefficient
  int64_t constant = 0;

  void add(const std::string& atom, int64_t c) {
    for (auto& t : terms)
      if (t.first == atom) {
        t.second += c;
        return;
      }
    terms.emplace_back(atom, c);
  }
};

// Private arrays that every access reads or writes N lanes at a time, at offsets that are
// multiples of N, are declared as arrays of floatN: `float16 C_local[4]` accessed as
// C_local[i_1], not `float C_local[64]` accessed through vload16/vstore16. The difference is
// what the OpenCL compiler can keep in registers: LLVM promotes an array of vectors indexed
// by constants (after unrolling) to vector registers, but a float array read and written
// through vloadN is left in memory, and each step of a matmul's reduction then goes
// through the stack (half the speed on PoCL). Which arrays qualify is learned by generating
// the kernel once and looking at every access (see VecUse); the second generation uses it.
struct VecUse {
  std::map<int, int> seen;    // private buffer -> lanes of every access so far, or -1
  std::map<int, int> layout;  // the buffers declared as arrays of floatN, and N

  void note(int buffer, int lanes) {
    auto it = seen.find(buffer);
    if (it == seen.end()) seen[buffer] = lanes;
    else if (it->second != lanes) it->second = -1;
  }
  int lanes(int buffer) const {
    auto it = layout.find(buffer);
    return it == layout.end() ? 0 : it->second;
  }
};

// One kernel of the program: its top-level statements and launch.
struct Kernel {
  std::string name;
  std::vector<const tir::Stmt*> stmts;
  std::map<std::string, int64_t> extent;  // tag -> largest bound extent
  KernelLaunch launch;
};

class OpenCLPrinter : public tir::CPrinter {
 public:
  explicit OpenCLPrinter(const tir::PrimFunc& fn) : CPrinter(fn) {}

  // ---- per function (set by generate_opencl) ----
  std::vector<Storage> storage;
  std::set<int> written;
  std::string idx = "int";  // the index type: long only when a buffer needs it
  std::string error;        // the first reason generation failed
  mutable VecUse vec_use;  // printing records how each private array is accessed

  // ---- per kernel ----
  const Kernel* k = nullptr;
  std::set<std::string> launch_locals;  // local tags with extent > 1
  std::set<std::string> launch_tags;    // every tag with extent > 1
  std::set<std::string> in_scope;       // tags bound around the current statement

  // The kernel's statements as one sequence, so barriers go between them where needed;
  // appends to the text (out), which the caller resets between generations.
  bool kernel_body(const tir::Stmt* top, int depth);
  void declare_line(int depth, const std::string& s) { line(depth, s); }
  std::string text() const { return out.str(); }
  void reset_text(const std::string& s) {
    out.str("");
    out << s;
  }

  bool stmt(const tir::Stmt* s, int depth) override;
  std::string param(int buffer, bool input) const override;

  // ---- expressions (opencl_printer.cpp) ----
  std::string access(int buffer, const std::vector<tir::ExprPtr>& idx) const override;

 protected:
  std::string name(const std::string& n) const override { return cname(n); }
  std::string min_max(const tir::Expr& e) const override;
  std::string math(const tir::Expr& e) const override;
  std::string fused_multiply_add(const tir::Expr& e) const override;
  std::string float_mod(const tir::Expr& e) const override;
  std::string select(const tir::Expr& e) const override;
  std::string int_as_float(const tir::Expr& e, int) const override { return "(float)(" + print(e) + ")"; }

  // ---- statements (opencl_codegen.cpp) ----
  void line(int depth, const std::string& s) override;
  std::string comment(const std::string& text) const override { return "// " + text; }
  bool loop(const tir::Stmt* s, int depth) override;
  std::string for_header(const tir::Stmt* s) const override;
  std::string store_prefix(int buffer) const override;
  bool seq(const tir::Stmt* s, int depth) override;
  // An allocation only declares: seq() prints its body with the statements around it.
  bool allocate(const tir::Stmt* s, int depth) override { return seq(s, depth); }
  std::string local_decl(int buffer) const override;
  bool barrier(int depth) override { return barrier(depth, true, "from the loop nest"); }
  bool body(const tir::Stmt* s, int depth) override {
    alone = true;
    return stmt(s, depth);
  }

 private:
  // Expressions.
  bool is_private(int buffer) const;
  std::string vtype() const { return "float" + std::to_string(vec->width); }
  bool is_vec(const tir::Expr& e) const;  // depends on the lane in the current vector context
  std::string widen(const tir::Expr& e) const;  // a scalar operand where a vector is required
  std::string helper(const std::string& base, bool vector) const;
  std::string as_float(const tir::Expr& a) const;
  std::string widen_float(const tir::Expr& a, const tir::Expr& whole) const;
  std::string index(const tir::Expr& flat, int min_prec) const;
  void linearize(const tir::Expr& e, int64_t scale, Linear* out) const;
  static std::string print_linear(const Linear& lin, int min_prec);
  std::string pointer(int buffer, const tir::Expr& flat) const;
  std::optional<std::string> vector_element(const tir::Expr& base, int lanes) const;
  std::optional<std::string> private_vector(int buffer, const tir::Expr& base, int lanes) const;
  // Index expressions print as scalars even inside a vector statement.
  template <class F>
  auto scalar(F fn) const {
    const VecCtx* saved = vec;
    vec = nullptr;
    auto r = fn();
    vec = saved;
    return r;
  }

  // Statements.
  bool err(const std::string& text);
  Accesses accesses(const tir::Stmt* s) const;
  bool shared_point() const;
  bool barrier(int depth, bool global, const std::string& why);
  bool unrolled(const tir::Stmt* s, int depth, std::string* why);
  bool vector_loop(const tir::Stmt* s, int depth, std::string* why);
  bool vector_store_ok(const tir::Stmt& st, const std::string& lane, std::string* why);

  // The vector context of the expression being printed (set only while vector_loop prints
  // a floatN value; mutable because printing is const and the context is a mode of it).
  mutable const VecCtx* vec = nullptr;
  std::vector<std::string> guarded;  // enclosing bound loops shorter than the launch
  // The next statement is alone in its C scope (a loop's whole body), so a bound loop can
  // declare its variable there without braces of its own. solo: what stmt() found in `alone`
  // for the statement being dispatched (loop and seq read it first thing).
  bool alone = false;
  bool solo = false;
  // Copies of an unrolled body after the first repeat no comment lines: said once is enough.
  bool quiet = false;
};

}  // namespace descent::gpu
