// The AArch64 encoder (native/a64.h) against LLVM 15's AArch64 disassembler: every form with
// registers from each end of the file (x0, x1, x15, x28, the frame and link registers, and
// number 31 as xzr or sp as the kind says), every condition and the edges of every immediate
// and offset is encoded, and LLVM must read back exactly the form's opcode with our operands
// in its operand order. Logical immediates: every one of the 5,334 encodable values decodes
// to itself, and values that are not one are refused. A few words checked by hand keep a wrong
// table and a wrong test from agreeing by accident.
#include "native/a64.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "native/compile.h"
#include "pipeline/pipeline.h"
#include "tests/native/llvm_mc.h"
#include "vm/reg_disasm.h"

using namespace descent::native::a64;

namespace {

struct LlvmA64 : descent::testing::LlvmMc {
  LlvmA64() : LlvmMc("aarch64-unknown-linux-gnu", "+fp-armv8", 0) {}

  // "LDRXui X0 SP #2": the opcode and its operands as LLVM decoded them; "" when the word is
  // not one instruction.
  std::string decode_word(uint32_t word) const {
    std::vector<uint8_t> bytes = {uint8_t(word), uint8_t(word >> 8), uint8_t(word >> 16), uint8_t(word >> 24)};
    llvm::MCInst inst;
    if (!LlvmMc::decode(bytes, inst)) return "";
    std::string out = instrs->getName(inst.getOpcode()).str();
    for (const auto& op : inst) {
      if (op.isReg()) out += std::string(" ") + regs->getName(op.getReg());
      else if (op.isImm()) out += " #" + std::to_string(op.getImm());
    }
    return out;
  }
};

const LlvmA64& llvm_a64() {
  static LlvmA64 a64;
  return a64;
}

// LLVM's names: x29 and x30 are FP and LR in its register file.
std::string xreg(int r, bool sp) {
  if (r == 31) return sp ? "SP" : "XZR";
  if (r == 29) return "FP";
  if (r == 30) return "LR";
  return "X" + std::to_string(r);
}
std::string dreg(int r) { return "D" + std::to_string(r); }
std::string wreg(int r) { return r == 31 ? "WZR" : "W" + std::to_string(r); }
std::string imm(int64_t v) { return " #" + std::to_string(v); }

// What LLVM's decoder must give for inst: its opcode, then its MCInst operands in order.
std::string expected(const A64Inst& i) {
  const FormInfo& f = form_info(i.form);
  std::string s = f.llvm;
  auto X = [&](int k) { return " " + xreg(i.r[k], false); };
  auto XS = [&](int k) { return " " + xreg(i.r[k], true); };
  auto D = [&](int k) { return " " + dreg(i.r[k]); };
  const int cond = int(i.cc);
  switch (i.form) {
    case Form::ADD_RRR: case Form::SUB_RRR: case Form::AND_RRR: case Form::ORR_RRR: case Form::EOR_RRR:
      return s + X(0) + X(1) + X(2) + imm(0);
    case Form::ADD_RRI: case Form::SUB_RRI: return s + XS(0) + XS(1) + imm(i.imm) + imm(0);
    case Form::CMP_RR: return s + " XZR" + X(0) + X(1) + imm(0);
    case Form::CMP_RI: case Form::CMN_RI: return s + " XZR" + XS(0) + imm(i.imm) + imm(0);
    case Form::AND_RRI: case Form::ORR_RRI: case Form::EOR_RRI: {
      uint32_t field = 0;
      REQUIRE(encode_logical_imm(uint64_t(i.imm), &field));
      return s + XS(0) + X(1) + imm(field);
    }
    case Form::MADD: case Form::MSUB: return s + X(0) + X(1) + X(2) + X(3);
    case Form::SDIV: case Form::LSLV: case Form::LSRV: case Form::ASRV: case Form::SMULH:
      return s + X(0) + X(1) + X(2);
    case Form::MOVZ: case Form::MOVN: return s + X(0) + imm(i.imm) + imm(i.shift);
    case Form::MOVK: return s + X(0) + X(0) + imm(i.imm) + imm(i.shift);
    case Form::CSEL: case Form::CSINC: case Form::CSNEG: return s + X(0) + X(1) + X(2) + imm(cond);
    case Form::FCSEL: return s + D(0) + D(1) + D(2) + imm(cond);
    case Form::UBFM: case Form::SBFM: return s + X(0) + X(1) + imm(i.imm) + imm(i.shift);
    case Form::CBZ: case Form::CBNZ: return s + X(0) + imm(i.offset / 4);
    case Form::LDR_UI: case Form::STR_UI: return s + X(0) + XS(1) + imm(i.offset / 8);
    case Form::LDR_D: case Form::STR_D: return s + D(0) + XS(1) + imm(i.offset / 8);
    case Form::LDUR: case Form::STUR: return s + X(0) + XS(1) + imm(i.offset);
    case Form::LDRB: case Form::STRB: return s + " " + wreg(i.r[0]) + XS(1) + imm(i.offset);
    case Form::STP_PRE: case Form::LDP_POST: return s + XS(2) + X(0) + X(1) + XS(2) + imm(i.offset / 8);
    case Form::B: case Form::BL: return s + imm(i.offset / 4);
    case Form::BCC: return s + imm(cond) + imm(i.offset / 4);
    case Form::BLR: case Form::RET: return s + X(0);
    case Form::FADD: case Form::FSUB: case Form::FMUL: case Form::FDIV: case Form::FMIN: case Form::FMAX:
      return s + D(0) + D(1) + D(2);
    case Form::FSQRT: case Form::FNEG: case Form::FMOV_DD: case Form::FCMP: case Form::FABS: return s + D(0) + D(1);
    case Form::FMOV_DX: case Form::SCVTF: return s + D(0) + X(1);
    case Form::FMOV_XD: case Form::FCVTZS: return s + X(0) + D(1);
    case Form::Count_: break;
  }
  return s;
}

const int kRegs[] = {0, 1, 15, 28, 29, 30, 31};

// Every register combination for the form's register operands (the pair forms' two data
// registers and base from the same list), with one value for the immediates.
void each_registers(A64Inst base, int n, int at, const std::function<void(const A64Inst&)>& f) {
  if (at == n) {
    f(base);
    return;
  }
  for (int r : kRegs) {
    base.r[at] = uint8_t(r);
    each_registers(base, n, at + 1, f);
  }
}

int register_operands(Form form) {
  int n = 0;
  for (Kind k : form_info(form).ops)
    n += k == Kind::X || k == Kind::XSP || k == Kind::D || k == Kind::W || k == Kind::U12 || k == Kind::B12 ||
         k == Kind::S9 || k == Kind::P7;
  return n;
}

}  // namespace

TEST_CASE("a64 encoder: every form, register, condition and immediate edge, read back by LLVM") {
  const LlvmA64& llvm = llvm_a64();
  int checked = 0;
  std::set<Form> seen;
  for (int fi = 0; fi < kNumForms; ++fi) {
    const Form form = Form(fi);
    const FormInfo& info = form_info(form);
    std::vector<A64Inst> values;  // the immediate / offset / condition variants, registers later
    A64Inst v;
    v.form = form;
    bool has_value = false;
    for (Kind k : info.ops) {
      auto vary = [&](auto setter, std::initializer_list<int64_t> list) {
        has_value = true;
        for (int64_t x : list) {
          A64Inst c = v;
          setter(c, x);
          values.push_back(c);
        }
      };
      switch (k) {
        case Kind::I12: vary([](A64Inst& c, int64_t x) { c.imm = x; }, {0, 1, 2047, 4095}); break;
        case Kind::I16:
          for (int sh : {0, 16, 32, 48})
            vary([sh](A64Inst& c, int64_t x) { c.imm = x; c.shift = sh; }, {0, 1, 0x8000, 0xffff});
          break;
        case Kind::LOG:
          vary([](A64Inst& c, int64_t x) { c.imm = x; },
               {1, 0xff, int64_t(0x5555555555555555ull), int64_t(0xfffffffffffffffeull), int64_t(0x00ff00ff00ff00ffull),
                int64_t(0x8000000000000000ull), 0x7ffffffffffffff, int64_t(0xf0f0f0f0f0f0f0f0ull)});
          break;
        case Kind::U12: vary([](A64Inst& c, int64_t x) { c.offset = x; }, {0, 8, 4096, 32760}); break;
        case Kind::B12: vary([](A64Inst& c, int64_t x) { c.offset = x; }, {0, 1, 7, 4095}); break;
        case Kind::S9: vary([](A64Inst& c, int64_t x) { c.offset = x; }, {-256, -8, 0, 1, 255}); break;
        case Kind::P7: vary([](A64Inst& c, int64_t x) { c.offset = x; }, {-512, -16, 0, 16, 504}); break;
        case Kind::L26: vary([](A64Inst& c, int64_t x) { c.offset = x; }, {-(1 << 27), -4, 0, 4, (1 << 27) - 4}); break;
        case Kind::L19: vary([](A64Inst& c, int64_t x) { c.offset = x; }, {-(1 << 20), -4, 0, 8, (1 << 20) - 4}); break;
        case Kind::R6:  // with S6: both fields at their edges
          for (int s6 : {0, 1, 62, 63})
            vary([s6](A64Inst& c, int64_t x) { c.imm = x; c.shift = s6; }, {0, 1, 31, 63});
          break;
        case Kind::C:
          if (form == Form::BCC) break;  // with L19 below
          for (int c = 0; c < 14; ++c) vary([c](A64Inst& i, int64_t) { i.cc = Cond(c); }, {0});
          break;
        default: break;
      }
    }
    if (form == Form::BCC) {
      std::vector<A64Inst> with_conds;
      for (const auto& x : values)
        for (int c = 0; c < 14; ++c) {
          A64Inst y = x;
          y.cc = Cond(c);
          with_conds.push_back(y);
        }
      values = with_conds;
    }
    if (!has_value) values.push_back(v);
    const int nregs = register_operands(form);
    for (const A64Inst& value : values)
      each_registers(value, nregs, 0, [&](const A64Inst& inst) {
        std::string why;
        INFO(format(inst) << "  word " << std::hex << encode(inst));
        if (!valid(inst, &why)) {
          // Only the unpredictable pairs are refused here, and LLVM refuses them too.
          CHECK((form == Form::STP_PRE || form == Form::LDP_POST));
          CHECK(llvm.decode_word(encode(inst)).empty());
          return;
        }
        std::string want = expected(inst), got = llvm.decode_word(encode(inst));
        CHECK(got == want);
        ++checked;
        seen.insert(form);
      });
  }
  CHECK(int(seen.size()) == kNumForms);
  CHECK(checked > 10000);
}

TEST_CASE("a64 logical immediates: every encodable value round-trips, the others are refused") {
  int encodable = 0;
  for (uint32_t n = 0; n < 2; ++n)
    for (uint32_t immr = 0; immr < 64; ++immr)
      for (uint32_t imms = 0; imms < 64; ++imms) {
        const uint32_t field = n << 12 | immr << 6 | imms;
        const uint64_t value = decode_logical_imm(field);
        if (value == 0) continue;  // a reserved pattern
        // immr only counts below the element size: other immr values give the same value.
        uint32_t back = 0;
        REQUIRE(encode_logical_imm(value, &back));
        CHECK(decode_logical_imm(back) == value);
        ++encodable;
      }
  std::set<uint64_t> distinct;
  for (uint32_t f = 0; f < (1u << 13); ++f)
    if (uint64_t v = decode_logical_imm(f)) distinct.insert(v);
  CHECK(distinct.size() == 5334);  // the Arm ARM's count of 64-bit logical immediates
  CHECK(encodable > 0);
  uint32_t field = 0;
  for (uint64_t bad : {0ull, ~0ull, 5ull, 0x1234ull, 0x8000000000000005ull})
    CHECK_FALSE(encode_logical_imm(bad, &field));
  CHECK(encode_logical_imm(0x8000000000000003ull, &field));  // a run of three, wrapped around
  CHECK(decode_logical_imm(field) == 0x8000000000000003ull);
}

TEST_CASE("a64 encoder: words checked by hand, the syntax, and operands out of range") {
  auto word = [](Form f, std::initializer_list<uint8_t> regs, int64_t imm = 0, int64_t offset = 0) {
    A64Inst i;
    i.form = f;
    int k = 0;
    for (uint8_t r : regs) i.r[k++] = r;
    i.imm = imm;
    i.offset = offset;
    return i;
  };
  CHECK(encode(word(Form::ADD_RRR, {0, 1, 2})) == 0x8B020020u);                // add x0, x1, x2
  CHECK(encode(word(Form::RET, {30})) == 0xD65F03C0u);                         // ret
  CHECK(encode(word(Form::STP_PRE, {29, 30, 31}, 0, -16)) == 0xA9BF7BFDu);     // stp x29, x30, [sp, #-16]!
  CHECK(encode(word(Form::LDP_POST, {29, 30, 31}, 0, 16)) == 0xA8C17BFDu);     // ldp x29, x30, [sp], #16
  CHECK(encode(word(Form::MADD, {0, 1, 2, 3})) == 0x9B020C20u);                // madd x0, x1, x2, x3
  CHECK(encode(word(Form::SDIV, {0, 1, 2})) == 0x9AC20C20u);                   // sdiv x0, x1, x2
  CHECK(encode(word(Form::SMULH, {0, 1, 2})) == 0x9B427C20u);                  // smulh x0, x1, x2
  CHECK(encode(word(Form::CBZ, {3}, 0, 8)) == 0xB4000043u);                    // cbz x3, .+8
  CHECK(format(word(Form::CBNZ, {3}, 0, -4)) == "cbnz x3, .-4");
  A64Inst lsl3 = word(Form::UBFM, {0, 1}, 61);  // lsl x0, x1, #3 = ubfm x0, x1, #61, #60
  lsl3.shift = 60;
  CHECK(encode(lsl3) == 0xD37DF020u);
  CHECK(format(lsl3) == "ubfm x0, x1, #61, #60");
  A64Inst asr = word(Form::SBFM, {2, 3}, 5);  // asr x2, x3, #5 = sbfm x2, x3, #5, #63
  asr.shift = 63;
  CHECK(encode(asr) == 0x9345FC62u);
  A64Inst fcsel = word(Form::FCSEL, {0, 1, 2});  // fcsel d0, d1, d2, mi
  fcsel.cc = Cond::mi;
  CHECK(encode(fcsel) == 0x1E624C20u);
  CHECK(format(word(Form::CMN_RI, {1}, 5)) == "cmn x1, #5");
  CHECK(encode(word(Form::LDRB, {16, 1}, 0, 3)) == 0x39400C30u);               // ldrb w16, [x1, #3]
  CHECK(format(word(Form::STRB, {17, 16}, 0, 0)) == "strb w17, [x16]");
  std::string byte_why;
  CHECK_FALSE(valid(word(Form::LDRB, {0, 1}, 0, 4096), &byte_why));
  CHECK(byte_why == "byte offset outside 0..4095");
  CHECK(format(word(Form::STP_PRE, {29, 30, 31}, 0, -16)) == "stp x29, x30, [sp, #-16]!");
  CHECK(format(word(Form::LDR_UI, {0, 31}, 0, 16)) == "ldr x0, [sp, #16]");
  CHECK(format(word(Form::ORR_RRR, {0, 31, 5})) == "orr x0, xzr, x5");
  A64Inst movz = word(Form::MOVZ, {3}, 1);
  movz.shift = 16;
  CHECK(format(movz) == "movz x3, #1, lsl #16");
  A64Inst bne = word(Form::BCC, {}, 0, 8);
  bne.cc = Cond::ne;
  CHECK(format(bne) == "b.ne .+8");
  CHECK(invert(Cond::ge) == Cond::lt);
  std::string why;
  CHECK_FALSE(valid(word(Form::ADD_RRI, {0, 1}, 4096), &why));
  CHECK(why == "add/sub immediate outside 0..4095");
  CHECK_FALSE(valid(word(Form::LDR_UI, {0, 1}, 0, 12), &why));
  CHECK_FALSE(valid(word(Form::AND_RRI, {0, 1}, 0x1234), &why));
  CHECK(why == "not a logical immediate: 0x1234");
  CHECK_FALSE(valid(word(Form::B, {}, 0, 1 << 27), &why));
}

TEST_CASE("a64 encoder: every word the AArch64 emitter writes for real programs reads back as itself") {
  // Calls with stack arguments, spills, callee-saved registers, floats and conversions, checked
  // divisions, min/max, globals, prints and loops: each emitted word must decode in LLVM to the
  // form and operands we meant.
  const char* src =
      "g = 3\n"
      "fn many(a: int, b: int, c: int, d: int, e: int, f: int, g2: int, h: int, i: int, x: float) -> float {\n"
      "  return float(a / b + c % d + e / 7 + f % 8 + g2 / -3 + h * g + i * 100000 - a * b) * x\n}\n"
      "fn fib(n: int) -> int {\n  if n < 2 { return n }\n  return fib(n - 1) + fib(n - 2)\n}\n"
      "fn fl(x: float, y: float) -> int {\n  z = sqrt(x) + exp(y) - min(x, y) + max(x, y) + abs(-x) + x % y\n"
      "  if z != z || z > 1e18 { return 0 }\n  return int(z) + max(1, 2) + abs(-4) + min(-5, 7)\n}\n"
      "s = 0\nk = 81985529216486895\nfor i in 0..10 { if many(i, 1, i, 2, i, 3, i, 4, 5, 0.5) > 2.0 && fl(2.0, 1.0) > 0 { s += 1 } }\n"
      "print(s, fib(10), \"text\", 1.5, g, k % 256, k / 16, -k % 1000)\n";
  descent::Session session;
  auto o = session.compile(src, "t.ds");
  REQUIRE_MESSAGE(o.status == descent::Outcome::Ok, o.message);
  const LlvmA64& llvm = llvm_a64();
  descent::CodeScope scope;
  scope.script = session.module().programs.back().get();
  for (const auto& fn : session.module().functions) scope.functions.push_back(fn.decl);
  int checked = 0;
  std::set<Form> forms;
  for (auto& u : descent::compile_reg_units(scope, session.module())) {
    REQUIRE(u.error.empty());
    std::string error;
    bool top = u.virt.fn_index < 0;
    auto c = descent::native::compile(std::make_unique<descent::RegFunction>(std::move(u.virt)), session.module(),
                                      top, &error, false, descent::native::aarch64_target());
    REQUIRE_MESSAGE(c, error);
    std::vector<int> ids(c->fn.sites.size(), 0);
    descent::native::finish(*c, ids, false);
    const auto& e = c->a64_code;
    REQUIRE_MESSAGE(e.error.empty(), e.error);
    for (const A64Inst& inst : e.insts) {
      INFO(format(inst));
      CHECK(llvm.decode_word(encode(inst)) == expected(inst));
      forms.insert(inst.form);
      ++checked;
    }
  }
  MESSAGE(checked, " emitted words, ", forms.size(), " forms, read back");
  CHECK(checked > 300);
  for (Form f : {Form::MADD, Form::MSUB, Form::SDIV, Form::UBFM, Form::SBFM, Form::FCSEL, Form::CSINC, Form::STP_PRE,
                 Form::LDP_POST, Form::BLR, Form::STR_D, Form::FCVTZS, Form::SMULH})
    CHECK_MESSAGE(forms.count(f), form_info(f).llvm);
}
