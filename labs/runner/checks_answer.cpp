// The checks of answer files (internal.h): "key: value" lines, each compared with the true
// answer the Session computes from the lab's program, never a stored one.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "labs/runner/internal.h"

#include "lang/text.h"
#include "lang/token.h"
#include "lang/tree.h"

namespace descent::labs {
namespace {

// ---- questions about a stage ---------------------------------------------------------------

// The answer file: "key: value" lines, '#' comments.
std::map<std::string, std::string> parse_answers(const std::string& text) {
  std::map<std::string, std::string> out;
  for (const auto& raw : split_lines(text)) {
    std::string line = raw.substr(0, raw.find('#'));
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto trim = [](std::string t) {
      t.erase(0, t.find_first_not_of(" \t\r"));
      t.erase(t.find_last_not_of(" \t\r") + 1);
      return t;
    };
    out[trim(line.substr(0, colon))] = trim(line.substr(colon + 1));
  }
  return out;
}

// ---- the syntax questions: tokens, errors and grouping ------------------------------------

// The tokens of `text` as `descent dump --stage tokens` names them (IDENT, INT, <=, for, ...),
// without the layout tokens (NEWLINE, EOF).
std::vector<std::string> token_names(const std::string& text) {
  SourceFile file("question.ds", text);
  std::vector<std::string> out;
  for (const auto& t : tokenize(file))
    if (t.kind != Tok::Newline && t.kind != Tok::Eof) out.push_back(tok_name(t.kind));
  return out;
}

// The tree of `expr` as the parser groups it, checked after the lab's program (which declares
// its variables); false with *why when it does not compile.
bool expression_tree(const std::string& program, const std::string& expr, TreeNode* out,
                     std::string* why) {
  Session s;
  Outcome o = s.compile(program + "\nprint(" + expr + ")\n", "answer.ds");
  if (o.status != Outcome::Ok) {
    *why = o.diagnostics.empty() ? o.message : o.diagnostics[0].message;
    return false;
  }
  StageResult ast = s.stage("ast", Format::Text);
  if (!ast.ok || !ast.tree || ast.tree->kids.empty() || ast.tree->kids.back().kids.empty()) {
    *why = "no expression";
    return false;
  }
  *out = ast.tree->kids.back().kids.back();  // print(expr)'s argument
  return true;
}

// How many binary operations an s-expression holds: a list with two operands.
int binary_operations(const TreeNode& n) {
  int count = n.kids.size() == 2 && n.head != "call" && n.head != "index" ? 1 : 0;
  for (const auto& k : n.kids) count += binary_operations(k);
  return count;
}

// "parenthesize": the student's answer must group exactly as the parser does and put every
// binary operation in its own parentheses (writing the expression back unchanged would
// otherwise pass).
bool check_parenthesized(Context& c, const Check& check, const std::string& answer, std::string* why) {
  std::string program;
  if (!read_file((fs::path(c.lab.dir) / c.lab.spec.value("program", "program.ds")).string(), &program, why))
    return false;
  std::string expr = check.spec.value("text", "");
  TreeNode truth, mine;
  if (!expression_tree(program, expr, &truth, why)) {
    *why = "the lab could not compute its answer: " + *why;
    return false;
  }
  if (!expression_tree(program, answer, &mine, why)) {
    *why = fmt::format("'{}' does not compile: {}", answer, *why);
    return false;
  }
  if (print_tree_sexpr(mine) != print_tree_sexpr(truth)) {
    std::string grouped = print_tree_sexpr(mine);
    while (!grouped.empty() && grouped.back() == '\n') grouped.pop_back();
    *why = fmt::format("'{}' groups as {}; the parser groups `{}` differently (look: {})", answer,
                       grouped, expr, check.spec.value("look", ""));
    return false;
  }
  int ops = binary_operations(truth);
  int parens = static_cast<int>(std::count(answer.begin(), answer.end(), '('));
  if (parens < ops) {
    *why = fmt::format("right grouping, but {} pairs of parentheses for {} binary operations: "
                       "put each operation in its own", parens, ops);
    return false;
  }
  return true;
}

// The true answer to a question, from the Session's view of the lab's program: it is computed,
// never stored, so it stays right when the compiler changes. "" and *why when it cannot be.
std::string true_answer(const Lab& lab, const nlohmann::json& q, std::string* why) {
  std::string ask = q.value("ask", "");
  // The lexer's questions are about a line of text given in the question.
  if (ask == "count_tokens") return std::to_string(token_names(q.value("text", "")).size());
  if (ask == "token_kinds") return join(token_names(q.value("text", "")), " ");
  if (ask == "jit_functions") {
    // A REPL session on the jit engine: each line of the lab's session file is one input.
    // The answer: how many Descent functions the JIT compiled for input `input` (1-based).
    std::string text;
    if (!read_file((fs::path(lab.dir) / q.value("session", "session.ds")).string(), &text, why)) return "";
    std::vector<std::string> inputs;
    for (const auto& line : split_lines(text))
      if (line.find_first_not_of(" \t") != std::string::npos && line[line.find_first_not_of(" \t")] != '#')
        inputs.push_back(line);
    size_t upto = q.value("input", inputs.size());
    if (upto < 1 || upto > inputs.size()) {
      *why = fmt::format("the session has {} inputs, not {}", inputs.size(), upto);
      return "";
    }
    Session s;
    s.set_engine("jit");
    RunOptions quiet;
    quiet.out = [](std::string_view) {};
    for (size_t i = 0; i < upto; ++i) {
      Outcome o = s.submit(inputs[i] + "\n", "session", quiet);
      if (o.status != Outcome::Ok) {
        *why = fmt::format("input {} fails: {}", i + 1, o.message);
        return "";
      }
    }
    Session::JitStats st;
    if (!s.jit_stats(&st)) {
      *why = "the JIT did not run";
      return "";
    }
    return std::to_string(st.functions_compiled);
  }
  if (ask == "error_at") {
    // Where the first error of the text is reported: "line:column".
    Session s;
    Outcome o = s.compile(q.value("text", ""), "question.ds");
    if (o.diagnostics.empty()) {
      *why = "the text compiles without an error";
      return "";
    }
    return fmt::format("{}:{}", o.diagnostics[0].loc.line, o.diagnostics[0].loc.col);
  }
  std::string program_file = (fs::path(lab.dir) / lab.spec.value("program", "program.ds")).string();
  std::string source;
  if (!read_file(program_file, &source, why)) return "";
  Session s;
  // The graph questions are about what ran: the program is run, not only compiled.
  bool run = ask.rfind("graph_", 0) == 0;
  RunOptions quiet;
  quiet.out = [](std::string_view) {};
  Outcome o = run ? s.submit(source, program_file, quiet) : s.compile(source, program_file);
  if (o.status != Outcome::Ok) {
    *why = o.message;
    return "";
  }
  if (run) {
    // The dataflow graph of the program's last evaluation: "before" (as the program built
    // it) or "executed" (after the graph passes).
    StageResult g = s.graph_view(q.value("view", "executed"));
    if (!g.ok || !g.graph) {
      *why = g.text;
      return "";
    }
    std::vector<std::string> kernels;
    for (const auto& n : g.graph->nodes)
      if (n.kind == "kernel") kernels.push_back(n.label);
    if (ask == "graph_kernels") return std::to_string(kernels.size());
    if (ask == "graph_kernel_names") return join(kernels);
  }
  std::string stage = q.value("stage", "stack"), function = q.value("function", "");
  if (ask == "count_instructions") {
    int n = 0;
    for (const auto& line : s.listing(stage, function)) n += line.pc >= 0;
    return std::to_string(n);
  }
  if (ask == "jump_target") {
    std::string opcode = q.value("opcode", "JUMP_IF_FALSE");
    for (const auto& line : s.listing(stage, function)) {
      if (line.pc < 0 || line.text.find(opcode) == std::string::npos) continue;
      size_t arrow = line.text.find("-> ");
      if (arrow == std::string::npos) continue;
      return std::to_string(std::stol(line.text.substr(arrow + 3)));
    }
    *why = "no " + opcode + " in the listing";
    return "";
  }
  if (ask == "first_pass_without") {
    // The first LLVM pass after which the module's IR no longer holds `text`.
    std::string text = q.value("text", "");
    for (const auto& p : s.passes()) {
      if (p.stage != "llvm") continue;
      StageResult after = s.pass_snapshot(p.name, true);
      if (after.ok && after.text.find(text) == std::string::npos) return p.name.substr(0, p.name.find('#'));
    }
    *why = "no pass removes '" + text + "'";
    return "";
  }
  if (ask == "asm_instructions" || ask == "encoding_of" || ask == "encoding_length") {
    // The machine code of one function for a target (x86-64 unless the question says), as
    // `descent dump FILE --stage asm --target T --function F` prints it.
    if (!s.set_target(q.value("target", "x86-64"), why)) return "";
    StageResult asm_text = s.stage("asm", Format::Text, function);
    if (!asm_text.ok) {
      *why = asm_text.text;
      return "";
    }
    std::string mnemonic = q.value("mnemonic", "");
    int count = 0;
    for (const auto& line : split_lines(asm_text.text)) {
      size_t enc = line.find("# encoding: [");
      if (enc == std::string::npos) continue;
      ++count;
      std::string head = line.substr(0, enc);
      head.erase(0, head.find_first_not_of(" \t"));
      std::string op = head.substr(0, head.find_first_of(" \t"));
      if (ask == "asm_instructions" || op != mnemonic) continue;
      std::string bytes = line.substr(enc + 13, line.find(']', enc) - enc - 13);  // "0x48,0x83"
      if (ask == "encoding_length") return std::to_string(std::count(bytes.begin(), bytes.end(), ',') + 1);
      const std::string& hex = bytes;
      std::string out;
      for (size_t i = 0; i < hex.size(); ++i)
        if (hex.compare(i, 2, "0x") == 0) {
          out += (out.empty() ? "" : " ") + hex.substr(i + 2, 2);
          i += 1;
        }
      return out;
    }
    if (ask == "asm_instructions") return std::to_string(count);
    *why = "no " + mnemonic + " in " + function + "'s code";
    return "";
  }
  if (ask == "mir_vregs" || ask == "mir_phis" || ask == "spill_slots") {
    // The machine IR of one function (x86-64), before register allocation ("mir") or after
    // ("mir-regalloc"), at the question's -O level.
    s.set_opt_level(q.value("opt", 2));
    if (!s.set_target("x86-64", why)) return "";
    StageResult mir = s.stage(ask == "spill_slots" ? "mir-regalloc" : "mir", Format::Text, function);
    if (!mir.ok) {
      *why = mir.text;
      return "";
    }
    if (ask == "mir_phis") {
      int phis = 0;
      for (const auto& line : split_lines(mir.text)) phis += line.find(" = PHI ") != std::string::npos;
      return std::to_string(phis);
    }
    // Distinct virtual registers (%12) or stack slots (%stack.3) named anywhere.
    std::regex name(ask == "mir_vregs" ? "%[0-9]+\\b" : "%stack\\.[0-9]+");
    std::set<std::string> seen;
    for (auto it = std::sregex_iterator(mir.text.begin(), mir.text.end(), name); it != std::sregex_iterator(); ++it)
      seen.insert(it->str());
    return std::to_string(seen.size());
  }
  if (ask == "saved_registers") {
    // The callee-saved registers (System V: rbx, rbp, r12-r15) the function's prologue pushes.
    // Other pushes are not saves: `pushq %rax` only moves the stack to a 16-byte boundary.
    if (!s.set_target("x86-64", why)) return "";
    StageResult asm_text = s.stage("asm", Format::Text, function);
    if (!asm_text.ok) {
      *why = asm_text.text;
      return "";
    }
    static const std::set<std::string> kCalleeSaved = {"rbx", "rbp", "r12", "r13", "r14", "r15"};
    std::vector<std::string> saved;
    std::regex push("^\\s*pushq\\s+%(\\w+)");
    for (const auto& line : split_lines(asm_text.text)) {
      std::smatch m;
      if (std::regex_search(line, m, push) && kCalleeSaved.count(m[1].str())) saved.push_back(m[1].str());
    }
    return join(saved, " ");
  }
  *why = "unknown question kind '" + ask + "'";
  return "";
}

}  // namespace

bool check_answer(Context& c, const Check& check, std::string* why) {
  std::string name, text;
  if (!student_file(c, check, &name, &text, why)) return false;
  std::string key = check.spec.value("key", "");
  auto answers = parse_answers(text);
  auto it = answers.find(key);
  if (it == answers.end()) {
    *why = fmt::format("{} has no answer for '{}' (a line '{}: ...')", name, key, key);
    return false;
  }
  if (it->second.empty()) {
    *why = fmt::format("the answer for '{}' in {} is empty: write it after the colon", key, name);
    return false;
  }
  if (check.spec.value("ask", "") == "parenthesize") return check_parenthesized(c, check, it->second, why);
  std::string truth = true_answer(c.lab, check.spec, why);
  if (truth.empty()) {
    *why = "the lab could not compute its answer: " + *why;
    return false;
  }
  // Case, "0x" prefixes, brackets and commas do not matter: "C3", "0xc3" and "[0xc3]" are
  // one answer, as "48 83 ff 02" and "0x48,0x83,0xff,0x02" are.
  auto norm = [](std::string v) {
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return std::tolower(ch); });
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v.compare(i, 2, "0x") == 0) {
        ++i;
        continue;
      }
      char ch = v[i];
      if (ch == '[' || ch == ']') continue;
      if (ch == ',' || ch == ' ' || ch == '\t') {
        if (!out.empty() && out.back() != ' ') out += ' ';
        continue;
      }
      out += ch;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  };
  // Sets ("unordered": true): the words in any order, registers with or without % or $.
  auto as_set = [&norm](const std::string& v) {
    std::vector<std::string> words;
    std::istringstream in(norm(v));
    for (std::string w; in >> w;) {
      w.erase(std::remove_if(w.begin(), w.end(), [](char ch) { return ch == '%' || ch == '$'; }), w.end());
      words.push_back(w);
    }
    std::sort(words.begin(), words.end());
    return join(words, " ");
  };
  // Numbers compare as numbers: "0022", as a listing prints an offset, is 22.
  auto integer = [](const std::string& v, long long* out) {
    std::string t = v;
    t.erase(0, t.find_first_not_of(" \t"));
    t.erase(t.find_last_not_of(" \t") + 1);
    if (t.empty() || t.size() > 18) return false;
    size_t i = t[0] == '-' || t[0] == '+' ? 1 : 0;
    if (i == t.size() || !std::all_of(t.begin() + long(i), t.end(), [](unsigned char ch) { return std::isdigit(ch); }))
      return false;
    *out = std::stoll(t);
    return true;
  };
  long long a = 0, b = 0;
  if (integer(it->second, &a) && integer(truth, &b)) {
    if (a == b) return true;
  } else if (check.spec.value("unordered", false) ? as_set(it->second) == as_set(truth)
                                                  : norm(it->second) == norm(truth)) {
    return true;
  }
  // Not the answer itself: where to look for it.
  *why = fmt::format("'{}' is not it; look again: {}", it->second, check.spec.value("look", ""));
  return false;
}

}  // namespace descent::labs
