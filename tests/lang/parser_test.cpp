// The parser (lang/parser.h): tree shapes as s-expressions, precedence, associativity,
// layout rules, error recovery and the nesting limits.
#include <doctest/doctest.h>

#include "tests/lang/unit_util.h"

using namespace descent;
using namespace descent::unit;

namespace {
// The s-expression of one expression statement, without the (program ...) wrapper.
std::string expr_sexpr(const std::string& e) {
  Parsed p = parse_text(e);
  if (!p.diags.empty()) return "ERROR " + p.errors()[0];
  std::string s = p.sexpr();
  const std::string head = "(program ";
  if (s.rfind(head, 0) == 0 && s.back() == ')') return s.substr(head.size(), s.size() - head.size() - 1);
  return s;
}
std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}
}  // namespace

TEST_CASE("parser: the seed example, before and after semantic analysis") {
  const std::string seed = "x = 15\nx + 10 - 5\n";
  Parsed p = parse_text(seed);
  CHECK(p.diags.empty());
  CHECK(p.program.body.size() == 2);
  CHECK(p.sexpr() == "(program (assign x 15) (sub (add x 10) 5))");
  // Sema adds no promotions to an all-int program, so the checked tree prints the same.
  CHECK(checked_sexpr(seed) == "(program (assign x 15) (sub (add x 10) 5))");
  // The text view of the unchecked tree carries no types yet.
  CHECK(print_tree_text(ast_to_tree(p.program)) ==
        "program\n  assign x\n    int 15\n  sub\n    add\n      var x\n      int 10\n    int 5\n");
}

TEST_CASE("parser: precedence, lowest to highest") {
  CHECK(expr_sexpr("1 + 2 * 3") == "(add 1 (mul 2 3))");
  CHECK(expr_sexpr("1 * 2 + 3") == "(add (mul 1 2) 3)");
  CHECK(expr_sexpr("a || b && c") == "(or a (and b c))");
  CHECK(expr_sexpr("a && b || c") == "(or (and a b) c)");
  CHECK(expr_sexpr("a == b < c") == "(eq a (lt b c))");
  CHECK(expr_sexpr("a < b == c > d") == "(eq (lt a b) (gt c d))");
  CHECK(expr_sexpr("a <= b + 1 != c >= d") == "(ne (le a (add b 1)) (ge c d))");
  CHECK(expr_sexpr("x % 2 == 0 || y") == "(or (eq (mod x 2) 0) y)");
  CHECK(expr_sexpr("-a * b") == "(mul (neg a) b)");
  CHECK(expr_sexpr("!a && b") == "(and (not a) b)");
  CHECK(expr_sexpr("-f(2)") == "(neg (call f 2))");
  CHECK(expr_sexpr("(1 + 2) * 3") == "(mul (add 1 2) 3)");
  CHECK(expr_sexpr("- -x") == "(neg (neg x))");
  CHECK(expr_sexpr("!!b") == "(not (not b))");
  CHECK(expr_sexpr("a && b == c") == "(and a (eq b c))");
}

TEST_CASE("parser: arithmetic and logic are left-associative") {
  CHECK(expr_sexpr("1 - 2 - 3") == "(sub (sub 1 2) 3)");
  CHECK(expr_sexpr("8 / 4 / 2") == "(div (div 8 4) 2)");
  CHECK(expr_sexpr("7 % 4 % 2") == "(mod (mod 7 4) 2)");
  CHECK(expr_sexpr("1 - 2 + 3 - 4") == "(sub (add (sub 1 2) 3) 4)");
  CHECK(expr_sexpr("a * b / c % d") == "(mod (div (mul a b) c) d)");
  CHECK(expr_sexpr("a || b || c") == "(or (or a b) c)");
  CHECK(expr_sexpr("a && b && c") == "(and (and a b) c)");
  CHECK(expr_sexpr("a == b == c") == "(eq (eq a b) c)");
}

TEST_CASE("parser: literals, calls and strings") {
  CHECK(expr_sexpr("f()") == "(call f)");
  CHECK(expr_sexpr("f(1, 2 + 3, g(x))") == "(call f 1 (add 2 3) (call g x))");
  CHECK(expr_sexpr("x = 2.50") == "(assign x 2.5)");
  CHECK(expr_sexpr("x = 1e20") == "(assign x 1e+20)");
  CHECK(expr_sexpr("x = 0.0001") == "(assign x 0.0001)");
  CHECK(expr_sexpr("x = true") == "(assign x true)");
  CHECK(expr_sexpr("x = false") == "(assign x false)");
  CHECK(expr_sexpr("x = 9223372036854775807") == "(assign x 9223372036854775807)");
  CHECK(expr_sexpr(R"X(print("a\nb", "q\"t", "\\"))X") == R"X((call print "a\nb" "q\"t" "\\"))X");
  // Escapes are decoded in the tree itself.
  Parsed p = parse_text(R"X(print("a\tb\\c\"d\n"))X");
  REQUIRE(p.diags.empty());
  CHECK(p.program.body[0]->expr->kids[0]->text == "a\tb\\c\"d\n");
  // Newlines inside a call's parentheses do not end the statement.
  CHECK(expr_sexpr("f(1,\n  2)") == "(call f 1 2)");
}

TEST_CASE("parser: assignments and compound assignments") {
  CHECK(parsed_sexpr("x = 1; y = x") == "(program (assign x 1) (assign y x))");
  CHECK(parsed_sexpr("x += 1\nx -= 2\nx *= 3\nx /= 4\nx %= 5") ==
        "(program (assign-add x 1) (assign-sub x 2) (assign-mul x 3) (assign-div x 4) (assign-mod x 5))");
  Parsed p = parse_text("abc  -= 2");
  REQUIRE(p.program.body.size() == 1);
  const Stmt& s = *p.program.body[0];
  CHECK(s.kind == StmtKind::Assign);
  CHECK(s.has_op);
  CHECK(s.assign_op == BinaryOp::Sub);
  CHECK(s.loc.col == 1);
  CHECK(s.op_loc.col == 6);  // the '-=' token
}

TEST_CASE("parser: control flow statements and functions") {
  CHECK(parsed_sexpr("if a { b = 1 } else { c = 2 }") == "(program (if a (block (assign b 1)) (block (assign c 2))))");
  CHECK(parsed_sexpr("if a { }") == "(program (if a (block)))");
  CHECK(parsed_sexpr("if a {} else if b {} else {}") == "(program (if a (block) (block (if b (block) (block)))))");
  CHECK(parsed_sexpr("while x < 3 { x += 1 }") == "(program (while (lt x 3) (block (assign-add x 1))))");
  CHECK(parsed_sexpr("for i in 0..10 { print(i) }") == "(program (for i 0 10 (block (call print i))))");
  CHECK(parsed_sexpr("for i in a+1..b*2 {}") == "(program (for i (add a 1) (mul b 2) (block)))");
  CHECK(parsed_sexpr("while true { break; continue }") == "(program (while true (block (break) (continue))))");
  CHECK(parsed_sexpr("fn f(a, b: float) -> int { return a }") ==
        "(program (fn f (params a:int b:float) (block (return a))))");
  CHECK(parsed_sexpr("fn g() {\n  return\n}") == "(program (fn g (params) (block (return))))");
  CHECK(parsed_sexpr("fn h(x: bool) { if x { return } }") ==
        "(program (fn h (params x:bool) (block (if x (block (return))))))");
  Parsed p = parse_text("fn f(a, b: float) -> bool { return true }");
  REQUIRE(p.program.body.size() == 1);
  const FnDecl& f = *p.program.body[0]->fn;
  CHECK(f.name == "f");
  CHECK(f.loc.col == 4);
  REQUIRE(f.params.size() == 2);
  CHECK(f.params[0].type == Type::Int);
  CHECK(f.params[1].type == Type::Float);
  CHECK(f.declared_return == Type::Bool);
  CHECK(parse_text("fn f() {}").program.body[0]->fn->declared_return == Type::Unknown);
}

TEST_CASE("parser: else may start the next line") {
  const std::string same = "if a { x = 1 } else { x = 2 }\ny = 3";
  const std::string next = "if a {\n  x = 1\n}\nelse {\n  x = 2\n}\ny = 3";
  const std::string blank = "if a {\n  x = 1\n}\n\n\nelse if b {\n  x = 2\n}\nelse { x = 3 }";
  CHECK(parsed_sexpr(next) == parsed_sexpr(same));
  CHECK(parsed_sexpr(next) == "(program (if a (block (assign x 1)) (block (assign x 2))) (assign y 3))");
  CHECK(parsed_sexpr(blank) ==
        "(program (if a (block (assign x 1)) (block (if b (block (assign x 2)) (block (assign x 3))))))");
  // Without an else the newline ends the if, and the next statement is separate.
  CHECK(parsed_sexpr("if a { x = 1 }\nx = 2") == "(program (if a (block (assign x 1))) (assign x 2))");
}

TEST_CASE("parser: syntax errors with their positions") {
  CHECK(parse_text("x = (1 + 2").errors() == std::vector<std::string>{"1:11: expected ')'"});
  CHECK(parse_text("f(1 2)").errors() == std::vector<std::string>{"1:5: expected ')'"});
  CHECK(parse_text("x = * 2").errors() == std::vector<std::string>{"1:5: expected expression"});
  CHECK(parse_text("1 = x").errors() == std::vector<std::string>{"1:3: invalid assignment target"});
  CHECK(parse_text("x + 1 = 3").errors() == std::vector<std::string>{"1:7: invalid assignment target"});
  CHECK(parse_text("x = 1 y = 2").errors() ==
        std::vector<std::string>{"1:7: expected newline or ';' after statement"});
  CHECK(parse_text("for i 0..3 {}").errors() == std::vector<std::string>{"1:7: expected 'in'"});
  CHECK(parse_text("for i in 0 3 {}").errors() == std::vector<std::string>{"1:12: expected '..'"});
  CHECK(parse_text("if x print(1)").errors() == std::vector<std::string>{"1:6: expected '{'"});
  CHECK(parse_text("fn (x) {}").errors() == std::vector<std::string>{"1:4: expected function name"});
  CHECK(parse_text("fn f(1) {}").errors() == std::vector<std::string>{"1:6: expected parameter name"});
  CHECK(parse_text("fn f(x: str) {}").errors() == std::vector<std::string>{"1:9: unknown type 'str'"});
  CHECK(parse_text("fn f() -> 3 {}").errors() == std::vector<std::string>{"1:11: expected type name"});
  CHECK(parse_text("fn f() {\n  fn g() {}\n}").errors() ==
        std::vector<std::string>{"2:3: functions must be declared at top level"});
  CHECK(parse_text("if true { fn g() {} }").errors() ==
        std::vector<std::string>{"1:11: functions must be declared at top level"});
  CHECK(parse_text("fn f() {\n  x = 1\n").errors() == std::vector<std::string>{"3:1: expected '}'"});
  CHECK(parse_text("x = 9223372036854775808").errors() ==
        std::vector<std::string>{"1:5: integer literal out of range"});
  CHECK(parse_text("x = -9223372036854775808").errors() ==
        std::vector<std::string>{"1:6: integer literal out of range"});
  CHECK(parse_text("x = 99999999999999999999999").errors() ==
        std::vector<std::string>{"1:5: integer literal out of range"});
  CHECK(parse_text("x = 1e999").errors() == std::vector<std::string>{"1:5: float literal out of range"});
  CHECK(parse_text("x = 1e-999").diags.empty());  // underflow to 0 is fine
  CHECK(parse_text("x = $").errors() == std::vector<std::string>{"1:5: unexpected character '$'"});
  CHECK(parse_text("print(\"abc").errors() == std::vector<std::string>{"1:7: unterminated string"});
  CHECK(parse_text("x = 12abc").errors() == std::vector<std::string>{"1:5: invalid number '12abc'"});
  CHECK(parse_text("1(2)").errors() == std::vector<std::string>{"1:2: expected newline or ';' after statement"});
  std::vector<std::string> k = parse_text("kernel k() {}").errors();
  REQUIRE(k.size() == 1);
  CHECK(k[0].rfind("1:1: ", 0) == 0);
}

TEST_CASE("parser: recovery reports every independent syntax error") {
  Parsed p = parse_text(
      "x = 1 +\n"
      "y = )\n"
      "z = 3\n"
      "w = * 2\n"
      "if z { q = ( }\n"
      "v = 4\n");
  CHECK(p.errors() == std::vector<std::string>{"1:8: expected expression", "2:5: expected expression",
                                               "4:5: expected expression", "5:14: expected expression"});
  // The good statements survive, also the if whose block held a broken statement.
  CHECK(p.sexpr() == "(program (assign z 3) (if z (block)) (assign v 4))");

  // Errors inside a function body do not lose the rest of the body or the next function.
  Parsed q = parse_text(
      "fn f() {\n"
      "  a = = 1\n"
      "  b = 2\n"
      "}\n"
      "fn g() { return 1 2 }\n"
      "h = 3\n");
  CHECK(q.errors() == std::vector<std::string>{"2:7: expected expression",
                                               "5:19: expected newline or ';' after statement"});
  CHECK(q.sexpr() == "(program (fn f (params) (block (assign b 2))) (fn g (params) (block)) (assign h 3))");

  // A stray closing brace at top level is one error, then parsing goes on.
  Parsed r = parse_text("}\nx = 1\n");
  CHECK(r.errors() == std::vector<std::string>{"1:1: expected expression"});
  CHECK(r.sexpr() == "(program (assign x 1))");
}

TEST_CASE("parser: nesting limits give 'nesting too deep' and never crash") {
  // 256 nested parentheses are fine, 257 are not (the limit of docs/language.md).
  CHECK(parse_text("x = " + repeat("(", 256) + "1" + repeat(")", 256)).diags.empty());
  CHECK(parse_text("x = " + repeat("(", 257) + "1" + repeat(")", 257)).errors() ==
        std::vector<std::string>{"1:261: nesting too deep"});
  Parsed deep = parse_text("x = " + repeat("(", 300) + "1" + repeat(")", 300) + "\ny = 2\nz = )");
  CHECK(deep.errors() == std::vector<std::string>{"1:261: nesting too deep", "3:5: expected expression"});
  CHECK(deep.sexpr() == "(program (assign y 2))");

  // A long left-associative chain: 100,000 terms fit (a flat sum is not "nesting" a student
  // would recognise, so the limit is far above any written program), 100,001 are too tall.
  std::string ok_chain = "x = 1" + repeat("+1", 99999) + "\nprint(x)";
  CHECK(parse_text(ok_chain).diags.empty());
  CHECK(run(ok_chain).output == std::vector<std::string>{"100000"});
  CHECK(run("x = 1" + repeat("+1", 999) + "\nprint(x)").output == std::vector<std::string>{"1000"});
  std::vector<std::string> e = parse_text("x = 1" + repeat("+1", 100000)).errors();
  REQUIRE(e.size() == 1);
  CHECK(e[0] == "1:200004: nesting too deep");  // the '+' that makes the 100,001st level

  // Unary operators, blocks and else-if chains count too.
  std::vector<std::string> u = parse_text("x = " + repeat("-", 300) + "1").errors();
  REQUIRE(u.size() == 1);
  CHECK(u[0].find("nesting too deep") != std::string::npos);
  std::vector<std::string> b = parse_text(repeat("if true {\n", 300) + repeat("}\n", 300)).errors();
  REQUIRE(!b.empty());
  CHECK(b[0] == "257:9: nesting too deep");  // the 257th block's '{'
  std::string chain = "x = 1\nif x == 0 { x = 0 }";
  for (int i = 1; i < 300; ++i) chain += " else if x == " + std::to_string(i) + " { x = 0 }";
  std::vector<std::string> c = parse_text(chain).errors();
  REQUIRE(!c.empty());
  CHECK(c[0].find("nesting too deep") != std::string::npos);

  // Through the whole pipeline: a compile error (exit 2), not a crash.
  testing::Actual a = run("x = " + repeat("(", 5000) + "1" + repeat(")", 5000) + "\nprint(x)");
  CHECK(a.exit_code == 2);
  CHECK(a.output.empty());
  REQUIRE(!a.errors.empty());
  CHECK(a.errors[0] == "1:261: nesting too deep");
  testing::Actual big = run("x = 1" + repeat(" + 1", 100000));
  CHECK(big.exit_code == 2);
  CHECK(big.errors == std::vector<std::string>{"1:400003: nesting too deep"});
}

TEST_CASE("parser: clone_program is a deep copy") {
  Parsed p = parse_text("fn f(a) { return a * 2 }\nx = 1 + 2\nif x > 1 { print(x) } else { x = 0 }");
  REQUIRE(p.diags.empty());
  Program c = clone_program(p.program);
  CHECK(print_tree_sexpr(ast_to_tree(c)) == print_tree_sexpr(ast_to_tree(p.program)));
  CHECK(c.source == p.program.source);
  c.body[1]->expr->kids[0]->int_value = 40;
  c.body[0]->fn->name = "g";
  CHECK(p.sexpr() == "(program (fn f (params a:int) (block (return (mul a 2)))) (assign x (add 1 2)) "
                     "(if (gt x 1) (block (call print x)) (block (assign x 0))))");
  CHECK(print_tree_sexpr(ast_to_tree(c)).find("(fn g") != std::string::npos);
  CHECK(print_tree_sexpr(ast_to_tree(c)).find("(add 40 2)") != std::string::npos);
}

TEST_CASE("tree printers: text, s-expression and dot") {
  TreeNode root;
  root.head = "program";
  TreeNode a;
  a.head = "assign";
  a.atom = "x";
  a.type = "int";
  TreeNode lit;
  lit.head = "int";
  lit.atom = "15";
  lit.type = "int";
  lit.leaf = true;
  a.kids.push_back(lit);
  root.kids.push_back(a);
  CHECK(print_tree_text(root) == "program\n  assign x : int\n    int 15 : int\n");
  CHECK(print_tree_sexpr(root) == "(program (assign x 15))\n");
  CHECK(print_tree_dot(root, "g\"1") ==
        "digraph \"g\\\"1\" {\n  node [shape=box, fontname=\"monospace\"];\n"
        "  n0 [label=\"program\"];\n"
        "  n1 [label=\"assign x\\n: int\"];\n"
        "  n2 [label=\"int 15\\n: int\"];\n"
        "  n1 -> n2;\n"
        "  n0 -> n1;\n"
        "}\n");
}
