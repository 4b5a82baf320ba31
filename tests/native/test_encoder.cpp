// The x86-64 encoder (native/x86.h) against LLVM 15: every form, with every register, every
// base register at every displacement size, every condition and the edges of every immediate,
// is encoded and handed to LLVM's disassembler, which must read back exactly one instruction:
// the opcode named in the form table, with our operands. format_intel must print what LLVM's
// Intel printer prints. A few byte strings checked by hand keep a wrong table and a wrong
// test from agreeing by accident.
#include "native/x86.h"

#include <doctest/doctest.h>

#include <cctype>
#include <climits>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tests/native/llvm_mc.h"

using namespace descent::native;

namespace {

// ---- LLVM's side: a disassembler and an Intel-syntax printer for x86-64 ----------------

using LlvmX86 = descent::testing::LlvmMc;

const LlvmX86& llvm_x86() {
  static LlvmX86 x86("x86_64-unknown-linux-gnu", "", 1);  // syntax variant 1: Intel
  return x86;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "\tmov\tqword ptr [rbp - 8], rbx" -> "mov qword ptr [rbp - 8], rbx"
std::string squash(const std::string& s) {
  std::istringstream words(s);
  std::string word, out;
  while (words >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

std::string first_word(const std::string& s) { return s.substr(0, s.find(' ')); }

std::string hex(const std::vector<uint8_t>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    if (!out.empty()) out += ' ';
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

// ---- the sweep: every form with every operand value worth trying ------------------------

bool has_cond(Form f) { return f == Form::SETCC_R || f == Form::CMOVCC_RR || f == Form::JCC_L; }

// One instruction to try, and for a label form the rel32 we patch in.
struct Case {
  X86Inst inst;
  int32_t rel32 = 0;
};

const std::vector<int32_t> kDisps = {0, 8, -8, 127, 128, -129, 0x12345678};
const std::vector<int64_t> kImm8s = {-128, -1, 0, 127};
const std::vector<int64_t> kImm32s = {INT32_MIN, -1, 0, INT32_MAX};
const std::vector<int64_t> kImm64s = {INT64_MIN, 0x123456789abcdef0, -1};
const std::vector<int32_t> kRel32s = {0, -6, 0x12345678, INT32_MIN};

// The cross product of every operand's values (and every condition, for the cc forms).
std::vector<Case> sweep(Form f) {
  const FormInfo& info = form_info(f);
  std::vector<Case> cases(1);
  cases[0].inst.form = f;
  int reg_slot = 0;
  for (Kind kind : info.ops) {
    std::vector<Case> next;
    for (const Case& c : cases) {
      auto add = [&](auto set) {
        Case n = c;
        set(n);
        next.push_back(n);
      };
      switch (kind) {
        case Kind::None: next.push_back(c); break;
        case Kind::R: case Kind::R8: case Kind::R32: case Kind::X:
          for (int r = 0; r < 16; ++r) add([&](Case& n) { n.inst.r[reg_slot] = uint8_t(r); });
          break;
        case Kind::M:
          for (int base = 0; base < kNumGprs; ++base)
            for (int32_t disp : kDisps)
              add([&](Case& n) { n.inst.mem = Mem{uint8_t(base), disp}; });
          break;
        case Kind::I8: for (int64_t v : kImm8s) add([&](Case& n) { n.inst.imm = v; }); break;
        case Kind::I32: for (int64_t v : kImm32s) add([&](Case& n) { n.inst.imm = v; }); break;
        case Kind::I64: for (int64_t v : kImm64s) add([&](Case& n) { n.inst.imm = v; }); break;
        case Kind::L:
          for (int32_t rel : kRel32s) add([&](Case& n) { n.inst.label = 0; n.rel32 = rel; });
          break;
      }
    }
    cases = std::move(next);
    if (kind == Kind::R || kind == Kind::R8 || kind == Kind::R32 || kind == Kind::X) ++reg_slot;
  }
  if (has_cond(f)) {
    std::vector<Case> next;
    for (const Case& c : cases)
      for (int cc = 0; cc < 16; ++cc) {
        Case n = c;
        n.inst.cc = Cond(cc);
        next.push_back(n);
      }
    cases = std::move(next);
  }
  return cases;
}

// encode(), then the rel32 patched in as the caller would once the label is placed.
std::vector<uint8_t> bytes_of(const Case& c) {
  std::vector<uint8_t> bytes;
  int rel32_at = -2;
  encode(c.inst, bytes, &rel32_at);
  bool has_label = false;
  for (Kind k : form_info(c.inst.form).ops) has_label |= k == Kind::L;
  REQUIRE(rel32_at == (has_label ? int(bytes.size()) - 4 : -1));
  if (has_label)
    for (int i = 0; i < 4; ++i) bytes[rel32_at + i] = uint8_t(uint32_t(c.rel32) >> (8 * i));
  return bytes;
}

// An immediate as its kind's bytes hold it: the same test for LLVM's sign-extended imm8 and
// its zero-extended shift count.
int64_t truncate(Kind k, int64_t v) {
  if (k == Kind::I8) return int8_t(v);
  if (k == Kind::I32 || k == Kind::L) return int32_t(v);
  return v;
}

// Our operands, one word each, in LLVM's operand order (which is Intel order, with the
// condition last): "rax", "imm -1", "[rsp + 8]".
std::vector<std::string> our_operands(const Case& c) {
  const X86Inst& inst = c.inst;
  std::vector<std::string> out;
  int reg_slot = 0;
  for (Kind k : form_info(inst.form).ops) {
    switch (k) {
      case Kind::None: break;
      case Kind::R: out.push_back(gpr_name(inst.r[reg_slot++])); break;
      case Kind::R8: out.push_back(gpr8_name(inst.r[reg_slot++])); break;
      case Kind::R32: out.push_back(gpr32_name(inst.r[reg_slot++])); break;
      case Kind::X: out.push_back("xmm" + std::to_string(inst.r[reg_slot++])); break;
      case Kind::M:
        out.push_back("[" + std::string(gpr_name(inst.mem.base)) + " + " +
                      std::to_string(inst.mem.disp) + "]");
        break;
      case Kind::I8: case Kind::I32: case Kind::I64:
        out.push_back("imm " + std::to_string(truncate(k, inst.imm)));
        break;
      case Kind::L: out.push_back("imm " + std::to_string(c.rel32)); break;
    }
  }
  if (has_cond(inst.form)) out.push_back("imm " + std::to_string(int(inst.cc)));
  return out;
}

// LLVM's operands in the same words. The operand list of an MCInst repeats a register that
// is both read and written (ADD64rr is dst, src1 tied to dst, src2): the tied copies are
// skipped. A memory operand is five MCOperands: base, scale, index, displacement, segment.
std::vector<std::string> llvm_operands(const llvm::MCInst& mc, Form f) {
  const LlvmX86& x86 = llvm_x86();
  const llvm::MCInstrDesc& desc = x86.instrs->get(mc.getOpcode());
  std::vector<Kind> kinds;
  for (Kind k : form_info(f).ops)
    if (k != Kind::None) kinds.push_back(k);
  if (has_cond(f)) kinds.push_back(Kind::I8);  // LLVM's cc operand: 0..15, as in the nibble
  std::vector<std::string> out;
  unsigned i = 0, n = mc.getNumOperands();
  auto skip_tied = [&] {
    while (i < n && i < desc.getNumOperands() &&
           desc.getOperandConstraint(i, llvm::MCOI::TIED_TO) >= 0)
      ++i;
  };
  for (Kind k : kinds) {
    skip_tied();
    if (i >= n) return out;
    const llvm::MCOperand& op = mc.getOperand(i);
    if (k == Kind::M) {
      if (i + 5 > n) return out;
      const llvm::MCOperand& base = op;
      const llvm::MCOperand& scale = mc.getOperand(i + 1);
      const llvm::MCOperand& index = mc.getOperand(i + 2);
      const llvm::MCOperand& disp = mc.getOperand(i + 3);
      const llvm::MCOperand& segment = mc.getOperand(i + 4);
      if (!base.isReg() || !scale.isImm() || scale.getImm() != 1 || !index.isReg() ||
          index.getReg() != 0 || !disp.isImm() || !segment.isReg() || segment.getReg() != 0) {
        out.push_back("(a memory operand with an index, scale or segment)");
      } else {
        out.push_back("[" + lower(x86.regs->getName(base.getReg())) + " + " +
                      std::to_string(disp.getImm()) + "]");
      }
      i += 5;
    } else if (op.isReg()) {
      out.push_back(lower(x86.regs->getName(op.getReg())));
      ++i;
    } else if (op.isImm()) {
      out.push_back("imm " + std::to_string(truncate(k, op.getImm())));
      ++i;
    } else {
      out.push_back("(neither a register nor an immediate)");
      ++i;
    }
  }
  skip_tied();
  for (; i < n; ++i) out.push_back("(an extra operand)");
  return out;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

// "" if LLVM reads c's bytes back as c, else what differs.
std::string round_trip(const Case& c) {
  const LlvmX86& x86 = llvm_x86();
  std::vector<uint8_t> bytes = bytes_of(c);
  std::string what = format_intel(c.inst) + " = " + hex(bytes) + ": ";
  llvm::MCInst mc;
  if (!x86.decode(bytes, mc)) return what + "not exactly one instruction";
  std::string name = x86.instrs->getName(mc.getOpcode()).str();
  const char* want = form_info(c.inst.form).llvm;
  if (name != want) return what + "LLVM reads " + name + ", not " + want;
  std::string ours = join(our_operands(c)), theirs = join(llvm_operands(mc, c.inst.form));
  if (ours != theirs) return what + "LLVM's operands are " + theirs + ", not " + ours;
  return "";
}

// "" if format_intel prints c as LLVM's Intel printer does (label forms: the mnemonic only,
// since LLVM prints the raw displacement where we print the label).
std::string same_text(const Case& c) {
  const LlvmX86& x86 = llvm_x86();
  llvm::MCInst mc;
  if (!x86.decode(bytes_of(c), mc)) return format_intel(c.inst) + ": does not decode";
  std::string ours = format_intel(c.inst), theirs = squash(x86.print(mc));
  bool label = false;
  for (Kind k : form_info(c.inst.form).ops) label |= k == Kind::L;
  if (label ? first_word(ours) == first_word(theirs) : ours == theirs) return "";
  return "we print \"" + ours + "\", LLVM prints \"" + theirs + "\"";
}

Form form(int i) { return static_cast<Form>(i); }

}  // namespace

TEST_CASE("encoder: every form, register, base, displacement, condition and immediate edge "
          "disassembles to the form's LLVM opcode with our operands") {
  int tried = 0, wrong = 0;
  for (int f = 0; f < kNumForms; ++f) {
    for (const Case& c : sweep(form(f))) {
      ++tried;
      std::string error = round_trip(c);
      // Report the first few: one wrong row of the table would otherwise print thousands.
      if (!error.empty() && ++wrong <= 20) FAIL_CHECK(error);
    }
  }
  MESSAGE(tried << " instructions round-tripped");
  CHECK(wrong == 0);
  CHECK(tried > 10000);
}

TEST_CASE("encoder: format_intel prints every form as LLVM's Intel printer does") {
  int tried = 0, wrong = 0;
  for (int f = 0; f < kNumForms; ++f) {
    for (const Case& c : sweep(form(f))) {
      ++tried;
      std::string error = same_text(c);
      if (!error.empty() && ++wrong <= 20) FAIL_CHECK(error);
    }
  }
  CHECK(wrong == 0);
  CHECK(tried > 10000);
}

TEST_CASE("encoder: byte strings checked by hand against the SDM") {
  auto inst = [](Form f, int r0, int r1 = 0) {
    X86Inst i;
    i.form = f;
    i.r[0] = uint8_t(r0);
    i.r[1] = uint8_t(r1);
    return i;
  };
  auto with_mem = [](X86Inst i, Gpr base, int32_t disp) {
    i.mem = Mem{uint8_t(base), disp};
    return i;
  };
  auto with_imm = [](X86Inst i, int64_t imm) {
    i.imm = imm;
    return i;
  };
  auto with_cc = [](X86Inst i, Cond cc) {
    i.cc = cc;
    return i;
  };
  auto with_label = [](X86Inst i, int label) {
    i.label = label;
    return i;
  };
  const int rax = 0, rcx = 1, rbx = 3, rsp = 4, rsi = 6, rdi = 7;
  const int r8 = 8, r9 = 9, r10 = 10, r12 = 12;
  struct Expect {
    X86Inst inst;
    const char* bytes;
    const char* text;
  };
  // Each comment spells out the REX and ModRM bits.
  const Expect expected[] = {
      // REX.W; 01 /r; ModRM 11 001(rcx) 000(rax)
      {inst(Form::ADD_RR, rax, rcx), "48 01 c8", "add rax, rcx"},
      // REX.W+R (r12 in reg); ModRM 01 100 100(SIB); SIB 00 100 100 (no index, base rsp)
      {with_mem(inst(Form::MOV_RM, r12), Gpr::rsp, 8), "4c 8b 64 24 08",
       "mov r12, qword ptr [rsp + 8]"},
      // bare REX so that 110 means sil, not dh; ModRM 11 000 110
      {with_cc(inst(Form::SETCC_R, rsi), Cond::e), "40 0f 94 c6", "sete sil"},
      {with_cc(inst(Form::SETCC_R, r8), Cond::g), "41 0f 9f c0", "setg r8b"},
      {inst(Form::MOVZX_RR8, rax, rdi), "40 0f b6 c7", "movzx eax, dil"},
      // ModRM 01 011(rbx) 101(rbp) and disp8 -8
      {with_mem(inst(Form::MOV_MR, rbx), Gpr::rbp, -8), "48 89 5d f8",
       "mov qword ptr [rbp - 8], rbx"},
      // [r13] still needs a disp8 of 0: mod 00 with rm 101 would mean [rip + disp32]
      {with_mem(inst(Form::LEA_RM, rax), Gpr::r13, 0), "49 8d 45 00", "lea rax, [r13]"},
      // ModRM 10 000 100, SIB 24, disp32
      {with_mem(inst(Form::MOV_RM, rax), Gpr::r12, 0x12345678), "49 8b 84 24 78 56 34 12",
       "mov rax, qword ptr [r12 + 305419896]"},
      {with_mem(inst(Form::INC_M, 0), Gpr::rsp, 0), "48 ff 04 24", "inc qword ptr [rsp]"},
      // FF /2: ModRM 01 010 000
      {with_mem(inst(Form::CALL_M, 0), Gpr::rax, 8), "ff 50 08", "call qword ptr [rax + 8]"},
      {inst(Form::CALL_R, rax), "ff d0", "call rax"},
      {with_mem(inst(Form::MOVSD_XM, 0), Gpr::rsp, 16), "f2 0f 10 44 24 10",
       "movsd xmm0, qword ptr [rsp + 16]"},
      // REX.B; 80 /7 ib: ModRM 01 111 111(r15)
      {with_imm(with_mem(inst(Form::CMP8_MI, 0), Gpr::r15, 4), 0), "41 80 7f 04 00",
       "cmp byte ptr [r15 + 4], 0"},
      {with_imm(inst(Form::MOV_RI64, rax), 0x123456789abcdef0),
       "48 b8 f0 de bc 9a 78 56 34 12", "movabs rax, 1311768467463790320"},
      {with_imm(inst(Form::ADD_RI8, rsp), -8), "48 83 c4 f8", "add rsp, -8"},
      // REX.W+R+B; 6B /r ib: ModRM 11 001 010
      {with_imm(inst(Form::IMUL_RRI8, r9, r10), 100), "4d 6b ca 64", "imul r9, r10, 100"},
      {with_cc(inst(Form::CMOVCC_RR, rax, rbx), Cond::l), "48 0f 4c c3", "cmovl rax, rbx"},
      {inst(Form::PUSH_R, r12), "41 54", "push r12"},
      {inst(Form::POP_R, rbx), "5b", "pop rbx"},
      {inst(Form::CQO, 0), "48 99", "cqo"},
      {inst(Form::RET, 0), "c3", "ret"},
      // 66 before REX; REX.W+R+B (xmm8 in reg, r9 in rm)
      {inst(Form::MOVQ_XR, 8, r9), "66 4d 0f 6e c1", "movq xmm8, r9"},
      // F2, then REX 0100 1101: W, R (r10 in reg), no X, B (xmm15 in rm); ModRM 11 010 111
      {inst(Form::CVTTSD2SI_RX, r10, 15), "f2 4d 0f 2c d7", "cvttsd2si r10, xmm15"},
      {with_label(with_cc(inst(Form::JCC_L, 0), Cond::ne), 3), "0f 85 00 00 00 00", "jne .L3"},
      {with_label(inst(Form::JMP_L, 0), 1), "e9 00 00 00 00", "jmp .L1"},
      {with_label(inst(Form::CALL_L, 0), 2), "e8 00 00 00 00", "call .L2"},
  };
  for (const Expect& e : expected) {
    std::vector<uint8_t> bytes;
    int rel32_at = 0;
    encode(e.inst, bytes, &rel32_at);
    CHECK(hex(bytes) == e.bytes);
    CHECK(format_intel(e.inst) == e.text);
  }
}

TEST_CASE("encoder: rel32_at is the offset in the whole buffer of the four bytes to patch") {
  std::vector<uint8_t> out = {0x90, 0x90, 0x90};  // code already there
  X86Inst jcc;
  jcc.form = Form::JCC_L;
  jcc.cc = Cond::l;
  jcc.label = 0;
  int at = 0;
  encode(jcc, out, &at);
  CHECK(at == 5);  // 3 bytes before, then 0F 8C
  CHECK(out.size() == 9);
  X86Inst add;
  add.form = Form::ADD_RR;
  encode(add, out, &at);
  CHECK(at == -1);
  encode(add, out, nullptr);  // the caller may not care
  CHECK(out.size() == 15);
}

TEST_CASE("encoder: condition names and negation follow the condition nibble") {
  CHECK(std::string(cond_name(Cond::e)) == "e");
  CHECK(std::string(cond_name(Cond::ae)) == "ae");
  CHECK(std::string(cond_name(Cond::g)) == "g");
  CHECK(negate(Cond::e) == Cond::ne);
  CHECK(negate(Cond::ne) == Cond::e);
  CHECK(negate(Cond::l) == Cond::ge);
  CHECK(negate(Cond::le) == Cond::g);
  CHECK(negate(Cond::b) == Cond::ae);
  CHECK(negate(Cond::p) == Cond::np);
  for (int c = 0; c < 16; ++c) CHECK(negate(negate(Cond(c))) == Cond(c));
  CHECK(std::string(gpr_name(12)) == "r12");
  CHECK(std::string(gpr8_name(4)) == "spl");
  CHECK(std::string(gpr32_name(9)) == "r9d");
}

// ---- whole programs: what the backend emits is what LLVM reads --------------------------

#include "native/compile.h"
#include "pipeline/pipeline.h"
#include "vm/reg_disasm.h"

TEST_CASE("encoder: every instruction the backend emits for real programs disassembles to itself") {
  // Programs that exercise every stage's corner: calls with stack arguments, spills, floats,
  // conversions, divisions (checked, magic, by powers of two), globals, prints, loops.
  const char* src =
      "g = 3\n"
      "fn many(a: int, b: int, c: int, d: int, e: int, f: int, g2: int, h: int, x: float) -> float {\n"
      "  return float(a / b + c % d + e / 7 + f % 8 + g2 / -3 + h * g) * x\n}\n"
      "fn fib(n: int) -> int {\n  if n < 2 { return n }\n  return fib(n - 1) + fib(n - 2)\n}\n"
      "fn fl(x: float, y: float) -> int {\n  z = sqrt(x) + exp(y) - min(x, y) + abs(-x) + x % y\n"
      "  if z != z || z > 1e18 { return 0 }\n  return int(z) + max(1, 2) + abs(-4)\n}\n"
      "s = 0\nfor i in 0..10 { if many(i, 1, i, 2, i, 3, i, 4, 0.5) > 2.0 && fl(2.0, 1.0) > 0 { s += 1 } }\n"
      "print(s, fib(10), \"text\", 1.5, g)\n";
  descent::Session session;
  auto o = session.compile(src, "t.ds");
  REQUIRE_MESSAGE(o.status == descent::Outcome::Ok, o.message);
  const LlvmX86& x86 = llvm_x86();
  descent::CodeScope scope;
  scope.script = session.module().programs.back().get();
  for (const auto& fn : session.module().functions) scope.functions.push_back(fn.decl);
  int checked = 0;
  for (auto& u : descent::compile_reg_units(scope, session.module())) {
    REQUIRE(u.error.empty());
    std::string error;
    bool top = u.virt.fn_index < 0;
    auto c = compile(std::make_unique<descent::RegFunction>(std::move(u.virt)), session.module(), top, &error);
    REQUIRE(c);
    std::vector<int> ids(c->fn.sites.size(), 0);
    finish(*c, ids, false);
    const Emitted& e = c->code;
    for (size_t i = 0; i < e.insts.size(); ++i) {
      std::vector<uint8_t> bytes(e.bytes.begin() + e.offsets[i], e.bytes.begin() + e.offsets[i] + e.sizes[i]);
      llvm::MCInst mc;
      INFO(format_intel(e.insts[i]), " = ", hex(bytes));
      REQUIRE(x86.decode(bytes, mc));
      CHECK(std::string(x86.instrs->getName(mc.getOpcode())) == form_info(e.insts[i].form).llvm);
      std::string ours = format_intel(e.insts[i]), theirs = squash(x86.print(mc));
      bool label = e.insts[i].label >= 0;
      CHECK((label ? first_word(ours) == first_word(theirs) : ours == theirs));
      ++checked;
    }
  }
  MESSAGE(checked, " emitted instructions disassembled");
  CHECK(checked > 300);
}
