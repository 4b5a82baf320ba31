// image.h: the C file of a native program image. The fixed part (kRuntime) is the runtime; the
// generated part before it is the program: its words, strings, sites and globals.
#include "native/image.h"

#include <cstdio>

#include "lang/ast.h"
#include "lang/engine.h"

namespace descent::native {

namespace {

// The runtime, after the generated definitions (DS_FUNCTIONS, DS_GLOBALS, ds_strings,
// ds_site_text, ds_site_is_call, ds_globals, ds_defined, ds_table, ds_math).
const char* const kRuntime = R"C(
/* The context generated code finds in x28: the same fields at the same offsets as the x86-64
   engine's (native/backend.h), checked below. */
struct ds_context {
  int64_t *globals;
  uint8_t *defined;
  const uint8_t *poll;
  int64_t depth;
  void *slow;
  void *fail;
  int64_t call_limit;
  void *helpers[8];
  void *slow_helper;
  void *table[DS_FUNCTIONS + 1];
};
_Static_assert(offsetof(struct ds_context, depth) == 24, "kCtxDepth");
_Static_assert(offsetof(struct ds_context, call_limit) == 48, "kCtxCallLimit");
_Static_assert(offsetof(struct ds_context, helpers) == 56, "kCtxHelpers");
_Static_assert(offsetof(struct ds_context, slow_helper) == 120, "kCtxSlowHelper");
_Static_assert(offsetof(struct ds_context, table) == 128, "kCtxTable");

static struct ds_context ctx;
static int channel = -1;        /* fd 3 when the host asked for reports */
static uint64_t step_limit, steps;
static const uint8_t zero_byte = 0, one_byte = 1;
static char line[1 << 16];
static size_t line_len;

static void out(const char *s, size_t n) {
  if (line_len + n > sizeof line) {
    fwrite(line, 1, line_len, stdout);
    line_len = 0;
  }
  if (n > sizeof line) {
    fwrite(s, 1, n, stdout);
    return;
  }
  memcpy(line + line_len, s, n);
  line_len += n;
}
static void outs(const char *s) { out(s, strlen(s)); }

static void report(const char *what, long long n) {
  char buf[96];
  fwrite(line, 1, line_len, stdout);
  line_len = 0;
  fflush(stdout);
  if (channel < 0) return;
  int len = snprintf(buf, sizeof buf, "steps %llu\n", (unsigned long long)steps);
  if (write(channel, buf, (size_t)len) < 0) return;
  if (what) {
    len = snprintf(buf, sizeof buf, "%s %lld\n", what, n);
    if (write(channel, buf, (size_t)len) < 0) return;
  }
  for (int i = 0; i < DS_GLOBALS; ++i) {
    len = snprintf(buf, sizeof buf, "global %d %lld %d\n", i, (long long)ds_globals[i], ds_defined[i]);
    if (write(channel, buf, (size_t)len) < 0) return;
  }
}

static void ds_print_int(int64_t v) {
  char buf[32];
  out(buf, (size_t)snprintf(buf, sizeof buf, "%lld", (long long)v));
}
/* The shortest digits that read back to the same double, then Python's layout: fixed notation
   for exponents -4..15 (always with a '.'), else d.ddde+XX (lang/value.cpp's format_float).
   For each length, printf's correctly rounded digits, then one unit either side: just below a
   power of two the doubles are twice as dense, and a decimal printf rounded (half to even)
   onto the wrong side of the narrower half-gap can miss while its neighbour reads back
   (2^-24 is 5.960464477539063e-08, not ...0625e-08). */
static void ds_print_float(double v) {
  if (isnan(v)) { outs("nan"); return; }
  if (isinf(v)) { outs(v > 0 ? "inf" : "-inf"); return; }
  char sci[40], res[64], digits[24] = "0";
  int n = 1, exp = 0, neg = signbit(v) != 0, at = 0;
  double a = fabs(v);
  for (int p = 0; p < 17 && a != 0; ++p) {
    snprintf(sci, sizeof sci, "%.*e", p, a);
    long long m = 0;
    char *s = sci;
    for (; *s && *s != 'e'; ++s)
      if (*s != '.') m = m * 10 + (*s - '0');
    int e10 = atoi(s + 1) - p; /* a ~ m * 10^e10 */
    long long tries[3] = {m, m - 1, m + 1};
    int found = 0;
    for (int t = 0; t < 3 && !found; ++t) {
      char cand[48];
      if (tries[t] <= 0) continue;
      snprintf(cand, sizeof cand, "%llde%d", tries[t], e10);
      if (strtod(cand, 0) != a) continue;
      n = snprintf(digits, sizeof digits, "%lld", tries[t]);
      exp = e10 + n - 1;
      found = 1;
    }
    if (found) break;
  }
  while (n > 1 && digits[n - 1] == '0') --n;
  if (neg) res[at++] = '-';
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      res[at++] = '0'; res[at++] = '.';
      for (int i = 0; i < -exp - 1; ++i) res[at++] = '0';
      for (int i = 0; i < n; ++i) res[at++] = digits[i];
    } else if (exp + 1 >= n) {
      for (int i = 0; i < n; ++i) res[at++] = digits[i];
      for (int i = n; i < exp + 1; ++i) res[at++] = '0';
      res[at++] = '.'; res[at++] = '0';
    } else {
      for (int i = 0; i < n; ++i) {
        if (i == exp + 1) res[at++] = '.';
        res[at++] = digits[i];
      }
    }
  } else {
    res[at++] = digits[0];
    if (n > 1) {
      res[at++] = '.';
      for (int i = 1; i < n; ++i) res[at++] = digits[i];
    }
    at += snprintf(res + at, sizeof res - (size_t)at, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  }
  out(res, (size_t)at);
}
static void ds_print_bool(int64_t v) { outs(v ? "true" : "false"); }
static void ds_print_str(int64_t id) { outs(ds_strings[id]); }
static void ds_print_space(void) { out(" ", 1); }
static void ds_print_end(void) {
  out("\n", 1);
  fwrite(line, 1, line_len, stdout);
  line_len = 0;
}
static double ds_fmod(double a, double b) { return fmod(a, b); }

static void ds_fail(int64_t site) {
  report("site", site);
  if (channel < 0) fprintf(stderr, "%s\n", ds_site_text[site]);
  exit(1);
}
/* A slow path: every back-edge and call while a step limit watches, and a call that reached
   the depth limit (stack overflow when it is one). */
static void ds_slow(int64_t site) {
  ++steps;
  if (step_limit && steps > step_limit) {
    report("interrupted", site);
    if (channel < 0) fprintf(stderr, "%s: interrupted (step limit)\n", ds_site_text[site]);
    exit(1);
  }
  if (ds_site_is_call[site] && ctx.depth >= 10000) ds_fail(site);
}

/* Entered from a stub by blr with the site in x16: saves every register the allocator hands
   out that a C function may overwrite (x0-x15, d0-d7, d16-d31), stores the depth (x27) where
   ds_slow reads it, calls it, and restores. x19-x28 and d8-d15 the C function keeps itself. */
void ds_slow_trampoline(void);
#ifdef __aarch64__
__asm__(
  "  .text\n  .balign 4\n  .global ds_slow_trampoline\n  .type ds_slow_trampoline, %function\n"
  "ds_slow_trampoline:\n"
  "  stp x29, x30, [sp, #-16]!\n  mov x29, sp\n  sub sp, sp, #320\n"
  "  stp x0, x1, [sp, #0]\n  stp x2, x3, [sp, #16]\n  stp x4, x5, [sp, #32]\n  stp x6, x7, [sp, #48]\n"
  "  stp x8, x9, [sp, #64]\n  stp x10, x11, [sp, #80]\n  stp x12, x13, [sp, #96]\n  stp x14, x15, [sp, #112]\n"
  "  stp d0, d1, [sp, #128]\n  stp d2, d3, [sp, #144]\n  stp d4, d5, [sp, #160]\n  stp d6, d7, [sp, #176]\n"
  "  stp d16, d17, [sp, #192]\n  stp d18, d19, [sp, #208]\n  stp d20, d21, [sp, #224]\n  stp d22, d23, [sp, #240]\n"
  "  stp d24, d25, [sp, #256]\n  stp d26, d27, [sp, #272]\n  stp d28, d29, [sp, #288]\n  stp d30, d31, [sp, #304]\n"
  "  str x27, [x28, #24]\n  mov x0, x16\n  ldr x17, [x28, #120]\n  blr x17\n"
  "  ldp x0, x1, [sp, #0]\n  ldp x2, x3, [sp, #16]\n  ldp x4, x5, [sp, #32]\n  ldp x6, x7, [sp, #48]\n"
  "  ldp x8, x9, [sp, #64]\n  ldp x10, x11, [sp, #80]\n  ldp x12, x13, [sp, #96]\n  ldp x14, x15, [sp, #112]\n"
  "  ldp d0, d1, [sp, #128]\n  ldp d2, d3, [sp, #144]\n  ldp d4, d5, [sp, #160]\n  ldp d6, d7, [sp, #176]\n"
  "  ldp d16, d17, [sp, #192]\n  ldp d18, d19, [sp, #208]\n  ldp d20, d21, [sp, #224]\n  ldp d22, d23, [sp, #240]\n"
  "  ldp d24, d25, [sp, #256]\n  ldp d26, d27, [sp, #272]\n  ldp d28, d29, [sp, #288]\n  ldp d30, d31, [sp, #304]\n"
  "  mov sp, x29\n  ldp x29, x30, [sp], #16\n  ret\n");
#endif

/* The program on a thread with a 256 MiB stack, as the in-process engines give theirs: 10,000
   frames of a function with many spilled values fit, and the depth check, not a fault, ends a
   recursion. */
static void *run_top(void *unused) {
  (void)unused;
  ds_top(&ctx);
  return 0;
}

/* `prog` alone: errors on stderr. `prog --descent STEP_LIMIT` (the engine): reports on fd 3. */
int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--descent") == 0) {
    step_limit = strtoull(argv[2], 0, 10);
    if (fcntl(3, F_GETFD) != -1) channel = 3;
  }
  ctx.globals = ds_globals;
  ctx.defined = ds_defined;
  ctx.poll = step_limit ? &one_byte : &zero_byte;
  ctx.call_limit = step_limit ? 0 : 10000;
  ctx.slow = (void *)ds_slow_trampoline;
  ctx.fail = (void *)ds_fail;
  void *helpers[8] = {(void *)ds_print_int, (void *)ds_print_float, (void *)ds_print_bool,
                      (void *)ds_print_str, (void *)ds_print_space, (void *)ds_print_end,
                      (void *)ds_math, (void *)ds_fmod};
  memcpy(ctx.helpers, helpers, sizeof helpers);
  ctx.slow_helper = (void *)ds_slow;
  memcpy(ctx.table, ds_table, sizeof ds_table);
  pthread_attr_t attr;
  pthread_t thread;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, (size_t)256 << 20);
  if (pthread_create(&thread, &attr, run_top, 0) != 0) run_top(0);
  else pthread_join(thread, 0);
  report(0, 0);
  return 0;
}
)C";

// A C string literal: printable ASCII as it is, the rest (and quotes, backslashes, '?' against
// trigraphs) in octal.
std::string c_string(const std::string& s) {
  std::string out = "\"";
  char buf[8];
  for (unsigned char c : s) {
    if (c >= 32 && c < 127 && c != '"' && c != '\\' && c != '?') {
      out += static_cast<char>(c);
    } else {
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    }
  }
  return out + "\"";
}

// One body as assembler directives: AArch64's four-byte words as `.inst` (so a disassembler
// reads them as instructions), x86-64's bytes as `.byte`.
void code(std::string& out, const std::string& label, const std::vector<uint8_t>& bytes, Arch arch) {
  out += "  \".global " + label + "\\n  .type " + label + ", %function\\n  .balign 16\\n" + label + ":\\n\"\n";
  char buf[16];
  const bool a64 = arch == Arch::AArch64;
  const size_t step = a64 ? 4 : 1, per_line = a64 ? 32 : 16;
  for (size_t i = 0; i + step - 1 < bytes.size(); i += step) {
    if (i % per_line == 0) out += a64 ? "  \"  .inst " : "  \"  .byte ";
    if (a64) {
      uint32_t w = uint32_t(bytes[i]) | uint32_t(bytes[i + 1]) << 8 | uint32_t(bytes[i + 2]) << 16 |
                   uint32_t(bytes[i + 3]) << 24;
      std::snprintf(buf, sizeof buf, "0x%08x", w);
    } else {
      std::snprintf(buf, sizeof buf, "0x%02x", bytes[i]);
    }
    out += buf;
    out += (i % per_line == per_line - step || i + step >= bytes.size()) ? "\\n\"\n" : ", ";
  }
}

}  // namespace

std::string image_c_source(const NativeImage& image) {
  std::string s =
      std::string("/* Written by Descent's native backend for ") +
      (image.arch == Arch::AArch64 ? "AArch64" : "x86-64") +
      " (docs/native.md): the program's machine code and the runtime it\n"
      "   calls. Build: " + (image.arch == Arch::AArch64 ? "aarch64-linux-gnu-gcc" : "gcc") +
      " -static prog.c -lm (descent uses -O0: the runtime only prints) */\n"
      "#include <fcntl.h>\n#include <math.h>\n#include <pthread.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n"
      "#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n\n";
  s += "#define DS_FUNCTIONS " + std::to_string(image.functions.size()) + "\n";
  s += "#define DS_GLOBALS " + std::to_string(image.globals.size()) + "\n\n";
  s += "static const char *const ds_strings[] = {";
  for (const std::string& str : image.strings) s += c_string(str) + ", ";
  s += "0};\nstatic const char *const ds_site_text[] = {";
  for (const std::string& t : image.site_text) s += c_string(t) + ",\n  ";
  s += "0};\nstatic const unsigned char ds_site_is_call[] = {";
  for (uint8_t c : image.site_is_call) s += std::to_string(c) + ", ";
  s += "0};\nstatic int64_t ds_globals[DS_GLOBALS + 1] = {";
  for (int64_t g : image.globals) s += std::to_string(g) + "LL, ";
  s += "0};\nstatic uint8_t ds_defined[DS_GLOBALS + 1] = {";
  for (uint8_t d : image.defined) s += std::to_string(d) + ", ";
  s += "0};\n\n";
  // libm, by the Builtin numbers the code passes (lang/ast.h).
  s += "static double ds_math(int64_t builtin, double x) {\n  switch (builtin) {\n";
  const std::pair<Builtin, const char*> math[] = {{Builtin::Sqrt, "sqrt"}, {Builtin::Exp, "exp"},
                                                  {Builtin::Log, "log"},   {Builtin::Sin, "sin"},
                                                  {Builtin::Cos, "cos"},   {Builtin::Floor, "floor"},
                                                  {Builtin::Abs, "fabs"}};
  for (const auto& [b, fn] : math)
    s += "    case " + std::to_string(static_cast<int>(b)) + ": return " + fn + "(x);\n";
  s += "    default: return x;\n  }\n}\n\n";
  // The code: one label per body.
  s += "void ds_top(void *);\n";
  for (size_t i = 0; i < image.functions.size(); ++i)
    if (image.functions[i]) s += "void ds_fn_" + std::to_string(i) + "(void);\n";
  s += "__asm__(\n  \"  .text\\n\"\n";
  for (size_t i = 0; i < image.functions.size(); ++i)
    if (image.functions[i]) code(s, "ds_fn_" + std::to_string(i), *image.functions[i], image.arch);
  if (image.top) code(s, "ds_top", *image.top, image.arch);
  if (image.arch == Arch::X86_64) {
    // The slow-path trampoline the in-process engine maps (frame.cpp), as bytes here.
    Emitted t;
    t.insts = slow_trampoline();
    assemble(t);
    code(s, "ds_slow_trampoline", t.bytes, image.arch);
  }
  s += ");\n\nstatic void *const ds_table[DS_FUNCTIONS + 1] = {";
  for (size_t i = 0; i < image.functions.size(); ++i)
    s += image.functions[i] ? "(void *)ds_fn_" + std::to_string(i) + ", " : "0, ";
  s += "0};\n";
  return s + kRuntime;
}

}  // namespace descent::native
