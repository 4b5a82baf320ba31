#!/usr/bin/env python3
"""Writes the malformed-input corpus (tests/malformed/*.ds) run by tests/fuzz/malformed_test.cpp.

Every input here must give errors (or, where annotated with `# exit: 0`, run cleanly), and
never crash, hang or raise a signal. The files are generated so that the big and binary ones
can be reproduced exactly; each stays under 100 KB. Inputs larger than that (a 100,000-term
`1+1+...` chain, 200 KB lines) are built in the C++ test instead.

Annotations read by the test (the same tags as tests/errors/):
  # exit: N          the exit code `descent run` must give (default: anything but 0)
  # error: L:C: MSG  a diagnostic that must be among those reported
Files whose whole point is binary junk carry no comment line.

Run from anywhere:  python3 tests/malformed/make_corpus.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
files = {}


def put(name, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    assert len(data) < 100_000, name
    assert name not in files, name
    files[name] = data


# ---- truncated and unbalanced structure ----
put("truncated_fn_header.ds", "# probes: a function header cut off inside its parameter list\n"
    "# exit: 2\nfn f(a: int, b")
put("truncated_fn_arrow.ds", "# probes: a function header cut off after '->'\n# exit: 2\nfn f(n: int) ->")
put("fn_without_body.ds", "# probes: 'fn' with a signature but no body, at end of file\n"
    "# exit: 2\nfn f(n: int) -> int\n")
put("fn_without_body_then_code.ds", "# probes: 'fn' without a body followed by more statements\n"
    "# exit: 2\nfn f()\nx = 1\nprint(x)\n")
put("fn_keyword_alone.ds", "# probes: the keyword 'fn' alone\n# exit: 2\nfn")
put("fn_missing_name.ds", "# probes: a function without a name\n# exit: 2\nfn (x) { return x }\n")
put("fn_missing_return_type.ds", "# probes: '->' with no type after it\n# exit: 2\nfn f() -> { return 1 }\n")
put("fn_unknown_return_type.ds", "# probes: an unknown type name\n# exit: 2\n"
    "fn f() -> string { return 1 }\n")
put("fn_params_no_comma.ds", "# probes: two parameters without a comma between them\n# exit: 2\n"
    "fn f(a: int b: int) { }\n")
put("fn_trailing_comma_param.ds", "# probes: a trailing comma in a parameter list\n# exit: 2\n"
    "fn f(a, ) { }\n")
put("fn_inside_block.ds", "# probes: a function declared inside an if block\n# exit: 2\n"
    "if true {\n  fn g() { }\n}\n")
put("unbalanced_open_brace.ds", "# probes: a block that is never closed\n# exit: 2\n"
    "x = 0\nif x == 0 {\n  print(1)\n  while x < 3 {\n    x += 1\n")
put("unbalanced_close_braces.ds", "# probes: more '}' than '{'\n# exit: 2\nx = 1\n}\n}\nprint(x)\n}}}\n")
put("close_brace_top_level.ds", "# probes: a file that is one '}' at top level\n# exit: 2\n}")
put("open_brace_top_level.ds", "# probes: a bare '{' at top level (blocks are not statements)\n"
    "# exit: 2\n{ x = 1 }\n")
put("stray_else.ds", "# probes: 'else' with no 'if'\n# exit: 2\nelse { print(1) }\n")
put("else_after_other_statement.ds", "# probes: 'else' separated from its 'if' by another statement\n"
    "# exit: 2\nif true { print(1) }\nx = 1\nelse { print(2) }\n")
put("else_without_block.ds", "# probes: 'else' followed by a statement instead of a block\n"
    "# exit: 2\nif true { print(1) } else print(2)\n")
put("if_without_braces.ds", "# probes: an if whose body has no braces\n# exit: 2\nif true print(1)\n")
put("if_without_condition.ds", "# probes: an if with no condition\n# exit: 2\nif { print(1) }\n")
put("while_truncated.ds", "# probes: a while loop cut off after its condition\n# exit: 2\nwhile 1 <")
put("for_open_range.ds", "# probes: a range with no upper bound\n# exit: 2\nfor i in 0.. {\n}\n")
put("for_missing_in.ds", "# probes: a for loop without 'in'\n# exit: 2\nfor i 0..10 { print(i) }\n")
put("for_missing_dotdot.ds", "# probes: a for loop whose range has no '..'\n# exit: 2\n"
    "for i in 10 { print(i) }\n")
put("for_three_dots.ds", "# probes: '...' in a range\n# exit: 2\nfor i in 0...10 { print(i) }\n")
put("for_float_bounds.ds", "# probes: float range bounds (a type error)\n# exit: 2\n"
    "for i in 0.5..2.5 { print(i) }\n")
put("for_literal_variable.ds", "# probes: a number where the loop variable belongs\n# exit: 2\n"
    "for 1 in 0..3 { }\n")

# ---- operators and assignments ----
put("operator_at_eof.ds", "# probes: a binary operator as the last byte of the file\n# exit: 2\nx = 1 +")
put("operators_only.ds", "# probes: a line of operators and nothing else\n# exit: 2\n"
    "+ - * / % && || == != < <= > >= = += -= *= /= %=\n")
put("double_assign.ds", "# probes: 'x = = 1'\n# exit: 2\nx = = 1\n")
put("chained_assign.ds", "# probes: 'x = y = 1' (assignment is not an expression)\n# exit: 2\nx = y = 1\n")
put("literal_assign_target.ds", "# probes: assigning to a literal and to a call\n# exit: 2\n"
    "1 = x\nabs(1) = 2\n(x) = 3\n")
put("compound_assign_undeclared.ds", "# probes: '+=' on a variable that was never assigned\n# exit: 2\nz += 1\n")
put("missing_operand_middle.ds", "# probes: two binary operators in a row\n# exit: 2\nx = 1 * / 2\n")
put("single_ampersand.ds", "# probes: '&' and '|' alone (only && and || exist)\n# exit: 2\n"
    "x = true & false\ny = true | false\n")
put("arrow_misuse.ds", "# probes: '->' used as an operator\n# exit: 2\nx = 1 -> 2\n")
put("dot_junk.ds", "# probes: stray dots\n# exit: 2\nx = 1 . 2\ny = x.z\n. .. ...\n")
put("call_junk_args.ds", "# probes: empty and trailing arguments\n# exit: 2\n"
    "print(,)\nprint(1,)\nprint(1 2)\n")
put("call_on_literal.ds", "# probes: calling a literal and a parenthesised expression\n# exit: 2\n"
    "3(4)\n(abs)(1)\n")
put("condition_not_bool.ds", "# probes: an int condition (a type error)\n# exit: 2\nif 1 { print(1) }\n")
put("keyword_as_name.ds", "# probes: keywords used as variable names\n# exit: 2\n"
    "fn = 1\nif = 2\nwhile = 3\ntrue = false\n")
put("kernel_truncated.ds", "# probes: a tensor-layer 'kernel' cut off in its first statement\n# exit: 2\n"
    "kernel k(A: f32[4]) -> f32[4] {\n  B[i] = A[\n")
put("return_top_level.ds", "# probes: 'return' outside a function\n# exit: 2\nreturn 1\n")
put("break_outside_loop.ds", "# probes: 'break' and 'continue' outside a loop\n# exit: 2\nbreak\ncontinue\n")
put("brackets_unbalanced.ds", "# probes: unbalanced and empty brackets\n# exit: 2\n"
    "x = [1, 2, 3]]\ny = [\nz = ]\n")

# ---- literals ----
put("int_literal_300_digits.ds", "# probes: a 300-digit integer literal\n# exit: 2\n"
    "# error: 4:5: integer literal out of range\n"
    "x = " + "7" * 300 + "\n")
put("int_literal_just_over.ds", "# probes: INT_MAX + 1 as a literal, and negated\n# exit: 2\n"
    "# error: 4:6: integer literal out of range\n"
    "x = -9223372036854775808\n")
put("int_literal_leading_zeros.ds", "# probes: 5000 leading zeros then an out-of-range value\n"
    "# exit: 2\nx = " + "0" * 5000 + "99999999999999999999\n")
put("float_exponent_overflow.ds", "# probes: 1e999999, which overflows a double\n# exit: 2\n"
    "# error: 4:5: float literal out of range\n"
    "x = 1e999999\n")
put("float_mantissa_overflow.ds", "# probes: a 400-digit float literal (overflows to inf)\n# exit: 2\n"
    "x = " + "9" * 400 + ".5\n")
put("float_exponent_digits.ds", "# probes: an exponent with 20,000 digits\n# exit: 2\n"
    "x = 1e" + "9" * 20000 + "\n")
put("float_underflow_valid.ds", "# probes: 1e-999999 underflows to 0.0, which is a valid value\n"
    "# exit: 0\nx = 1e-999999\nprint(x)\n")
put("invalid_number_suffix.ds", "# probes: digits followed by letters\n# exit: 2\n"
    "x = 12abc\ny = 1.5e\nz = 0x1F\n")
put("float_trailing_dot.ds", "# probes: '1.' (an int followed by a dot) and '.5'\n# exit: 2\n"
    "x = 1.\ny = .5\n")

# ---- strings ----
put("unterminated_string.ds", "# probes: a string that never ends\n# exit: 2\nprint(\"abc")
put("unterminated_string_backslash_eof.ds", "# probes: a string ending in a backslash at end of file\n"
    "# exit: 2\nprint(\"abc\\")
put("string_with_raw_newline.ds", "# probes: a string broken by a real newline\n# exit: 2\n"
    "print(\"ab\ncd\")\n")
put("string_outside_print.ds", "# probes: strings used as values\n# exit: 2\n"
    "x = \"s\"\ny = \"a\" + \"b\"\n")
put("emoji_in_string_valid.ds", "# probes: emoji and other non-ASCII text inside a string (valid)\n"
    "# exit: 0\nprint(\"🦀 héllo wörld — ✓ 日本語 👩‍💻\")\n# a comment with emoji is fine too: 🎉\n")

# ---- non-ASCII and encodings ----
put("non_ascii_identifier.ds", "# probes: a non-ASCII identifier\n# exit: 2\n"
    "# error: 4:1: unexpected character 'é'\né = 1\n")
put("non_ascii_in_name.ds", "# probes: a non-ASCII letter inside an ASCII name\n# exit: 2\nnaïve = 1\n")
put("non_ascii_operator.ds", "# probes: look-alike operators (× and −) and fullwidth digits\n# exit: 2\n"
    "x = 2 × 3\ny = 2 − 1\nz = １\n")
put("emoji_identifier.ds", "# probes: an emoji as a variable name\n# exit: 2\n🦀 = 1\nprint(🦀)\n")
put("line_separator_char.ds", "# probes: U+2028 LINE SEPARATOR and U+00A0 NO-BREAK SPACE as layout\n"
    "# exit: 2\nx = 1\u2028y = 2\nz\u00a0= 3\n")
put("nul_bytes.ds", b"# probes: NUL bytes in code\n# exit: 2\nx = 1\x00\x00\nprint(\x00x)\n")
put("nul_byte_in_comment.ds", b"# probes: a NUL byte inside a comment \x00 then an error\n"
    b"# exit: 2\nx = \n")
put("invalid_utf8_code.ds", b"# probes: invalid UTF-8 bytes in code\n# exit: 2\n"
    b"# error: 4:5: invalid UTF-8\nx = \xff\xfe\n")
put("invalid_utf8_comment.ds", b"# probes: invalid UTF-8 inside a comment \xc3( here\n# exit: 2\nx = 1\n")
put("invalid_utf8_string.ds", b"# probes: a truncated 3-byte sequence inside a string\n# exit: 2\n"
    b"print(\"\xe2\x82\")\n")
put("invalid_utf8_lone_continuation.ds", b"# probes: lone continuation bytes\n# exit: 2\n"
    b"print(\"\x80\x80\x80\")\nx = \x80\n")
put("invalid_utf8_truncated_at_eof.ds", b"# probes: a 4-byte sequence cut off at end of file\n"
    b"# exit: 2\nprint(1) # \xf0\x9f\xa6")
# RFC 3629: overlong forms, UTF-16 surrogates and code points above U+10FFFF are not UTF-8.
put("invalid_utf8_overlong.ds", b"# probes: an overlong encoding of '/' (C0 AF) inside a string\n"
    b"# exit: 2\nprint(\"\xc0\xaf\")\n")
put("invalid_utf8_surrogate.ds", b"# probes: an encoded UTF-16 surrogate (ED A0 80) inside a string\n"
    b"# exit: 2\nprint(\"\xed\xa0\x80\")\n")
put("invalid_utf8_above_max.ds", b"# probes: a code point above U+10FFFF (F4 90 80 80) in a comment\n"
    b"# exit: 2\nprint(1) # \xf4\x90\x80\x80\n")
put("bom_only.ds", b"\xef\xbb\xbf")
put("bom_then_program.ds", b"\xef\xbb\xbf# probes: a UTF-8 byte order mark before the program "
    b"(non-ASCII outside comments and strings)\n# exit: 2\nprint(1)\n")
put("crlf_line_endings_valid.ds", b"# probes: CRLF line endings in a valid program\r\n# exit: 0\r\n"
    b"x = 1\r\nif x == 1 {\r\n  print(\"one\")\r\n}\r\nelse {\r\n  print(\"other\")\r\n}\r\n"
    b"fn f(n) {\r\n  return n * 2\r\n}\r\nprint(f(x))\r\n")
put("crlf_with_error.ds", b"# probes: CRLF line endings with syntax errors at a line end and mid-line\r\n"
    b"# exit: 2\r\n# error: 5:10: expected expression\r\nx = 1 +\r\ny = (1 + ) * 2\r\nprint(x)\r\n")
put("cr_only_line_endings.ds", b"# probes: old Mac CR-only line endings (CR is just a space)\n# exit: 2\n"
    b"x = 1\rprint(x)\r")
put("control_characters.ds", b"# probes: vertical tab, form feed, escape and DEL in code\n# exit: 2\n"
    b"x = 1\x0b\ny = 2\x0c\nz\x1b = 3\nw = 4\x7f\n")
put("binary_junk.ds", bytes((i * 73 + 41) % 256 for i in range(4096)))
put("binary_elf_header.ds", b"\x7fELF\x02\x01\x01\x00" + bytes(56) + b"\x00\x00\x00\x00\xff\xff")

# ---- deep nesting (limit 256 for blocks/parens/unary, 100,000 for expression height: a flat
# chain over it does not fit in a corpus file, so the C++ tests build those) ----
put("deep_parens_10000.ds", "# probes: 10,000 nested parentheses\n# exit: 2\nx = " +
    "(" * 10000 + "1" + ")" * 10000 + "\n")
put("deep_parens_unclosed.ds", "# probes: 10,000 '(' that are never closed\n# exit: 2\nprint" +
    "(" * 10000 + "\n")
put("deep_close_parens.ds", "# probes: 10,000 ')' with no '('\n# exit: 2\nx = 1" + ")" * 10000 + "\n")
put("deep_if_5000.ds", "# probes: 5000 nested 'if true {'\n# exit: 2\n" +
    "if true {\n" * 5000 + "print(1)\n" + "}\n" * 5000)
put("deep_if_unclosed.ds", "# probes: 5000 nested 'if true {' never closed\n# exit: 2\n" + "if true {\n" * 5000)
put("deep_while_3000.ds", "# probes: 3000 nested while loops\n# exit: 2\n" +
    "while false {\n" * 3000 + "}\n" * 3000)
put("deep_for_2000.ds", "# probes: 2000 nested for loops\n# exit: 2\n" +
    "".join("for i%d in 0..1 {\n" % k for k in range(2000)) + "}\n" * 2000)
put("deep_else_if_2500.ds", "# probes: an else-if chain 2500 long\n# exit: 2\nx = 1\n" +
    "if x == 0 { print(0) }" + "".join("\nelse if x == %d { print(%d) }" % (k, k) for k in range(1, 2500)) + "\n")
put("deep_minus_5000.ds", "# probes: 5000 unary minus signs\n# exit: 2\nx = " + "-" * 5000 + "1\n")
put("deep_minus_spaced_5000.ds", "# probes: 5000 unary minus signs separated by spaces\n# exit: 2\nx = " +
    "- " * 5000 + "1\n")
put("deep_bang_5000.ds", "# probes: 5000 '!' operators\n# exit: 2\nx = " + "!" * 5000 + "true\n")
put("deep_calls_3000.ds", "# probes: 3000 nested builtin calls\n# exit: 2\nx = " +
    "abs(" * 3000 + "1" + ")" * 3000 + "\n")
put("deep_user_calls_3000.ds", "# probes: 3000 nested calls of a user function\n# exit: 2\n"
    "fn f(n) { return n }\nx = " + "f(" * 3000 + "1" + ")" * 3000 + "\n")
put("deep_brackets_10000.ds", "# probes: 10,000 nested '['\n# exit: 2\nx = " + "[" * 10000 + "1" + "]" * 10000 + "\n")
put("deep_braces_only.ds", "# probes: 5000 '{' then 5000 '}', 100 to a line\n# exit: 2\n" +
    ("{" * 100 + "\n") * 50 + ("}" * 100 + "\n") * 50)
put("plus_chain_20000.ds", "# probes: a 20,001-term '1+1+...' chain in parentheses, 50 terms a line (valid: height limit 100,000)\n"
    "# exit: 0\nx = (1" + ("+1" * 50 + "\n") * 400 + ")\nprint(x)\n")
put("plus_chain_5000_one_line.ds", "# probes: a 5000-term '1+1+...' chain on one line (valid)\n# exit: 0\nx = " +
    "+".join(["1"] * 5000) + "\n")
put("right_nested_plus_3000.ds", "# probes: 1+(1+(1+...)) 3000 deep\n# exit: 2\nx = " +
    "1+(" * 3000 + "1" + ")" * 3000 + "\n")
put("and_chain_10000.ds", "# probes: a 10,000-term '&&' chain of comparisons, one a line inside parentheses (valid)\n"
    "# exit: 0\nx = 1\nb = (" + "\n&& ".join(["x < 2"] * 10000) + ")\n")
put("mixed_prec_chain.ds", "# probes: 6000 operators cycling through every precedence level\n# exit: 2\n"
    "x = 1\ny = (" + "\n".join("x %s" % op for op in ["+", "*", "-", "/", "%", "<", "==", "&&", "||"] * 666)
    + " x)\n")
put("chain_under_limit_valid.ds", "# probes: a 45,000-term '1+1+...' chain, under the height limit (valid)\n"
    "# exit: 0\nx = " + "+".join(["1"] * 45000) + "\nprint(x)\n")
put("many_args.ds", "# probes: a builtin called with 5000 arguments\n# exit: 2\nx = max(" +
    ", ".join(["1"] * 5000) + ")\n")
put("many_params.ds", "# probes: a function with 3000 parameters called with 2999 arguments\n# exit: 2\n"
    "fn f(" + ", ".join("p%d" % k for k in range(3000)) + ") { return p0 }\n"
    "x = f(" + ", ".join(["1"] * 2999) + ")\n")
put("many_syntax_errors.ds", "# probes: 3000 lines that are each a syntax error (recovery must keep up)\n"
    "# exit: 2\n" + "".join(["x = = %d\n" % k, ") (\n", "fn {\n", "}\n", "else\n", "1 +\n"][k % 6]
                              for k in range(3000)))
put("many_type_errors.ds", "# probes: 3000 lines that are each a type or name error\n# exit: 2\n"
    "x = 1\n" + "".join(["x = true\n", "if x { }\n", "y%d = undefined_%d\n" % (k, k), "print(-true)\n",
                         "q = abs(true)\n"][k % 5] for k in range(3000)))
put("long_identifier.ds", "# probes: a 60,000-character identifier that is never defined\n# exit: 2\n"
    "print(" + "a" * 60000 + ")\n")

# ---- programs that would run forever or blow the stack ----
put("recursion_no_base_case.ds", "# probes: unbounded recursion (runtime 'stack overflow')\n# exit: 1\n"
    "fn f(n: int) -> int { return f(n + 1) }\nprint(f(0))\n")
put("mutual_recursion_no_base_case.ds", "# probes: unbounded mutual recursion\n# exit: 1\n"
    "fn a(n: int) -> int { return b(n) + 1 }\nfn b(n: int) -> int { return a(n) + 1 }\nprint(a(0))\n")
put("recursion_in_loop.ds", "# probes: unbounded recursion from inside a loop with a deep expression\n"
    "# exit: 1\nfn f(n: int) -> int {\n  while true { return " + "(" * 200 + "f(n)" + ")" * 200 + " }\n"
    "  return 0\n}\nprint(f(1))\n")
put("infinite_while.ds", "# probes: an infinite loop (must be stopped by the step limit)\n# exit: 1\n"
    "while true { }\n")
put("infinite_while_continue.ds", "# probes: an infinite loop made of 'continue'\n# exit: 1\n"
    "x = 0\nwhile true { x += 1; continue }\n")
put("infinite_for_huge_range.ds", "# probes: a range of 2^63 iterations\n# exit: 1\n"
    "for i in -9223372036854775807 - 1..9223372036854775807 { }\n")
put("infinite_loop_in_function.ds", "# probes: an infinite loop inside a function\n# exit: 1\n"
    "fn spin() { while true { } }\nspin()\n")
put("division_by_zero_runtime.ds", "# probes: a runtime error after output\n# exit: 1\n"
    "print(1)\nx = 0\nprint(1 / x)\n")
put("invalid_conversion_runtime.ds", "# probes: int() of nan and of 1e300\n# exit: 1\n"
    "z = 0.0\nx = int(z / z)\n")

for name, data in sorted(files.items()):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
print("wrote %d files" % len(files))
