// Listings with source lines: see listing.h.
#include "llvm_backend/listing.h"

#include <cctype>
#include <map>
#include <set>
#include <string_view>

#include <llvm/IR/AssemblyAnnotationWriter.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/Instruction.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/FormattedStream.h>
#include <llvm/Support/raw_ostream.h>

namespace descent::llvmbe {

namespace {

// ---- assembly ------------------------------------------------------------------------

enum class Kind { Blank, Label, Directive, Instruction, Comment };

struct AsmLine {
  std::string_view text;
  Kind kind = Kind::Blank;
  std::string_view word;  // a label's name, a directive's name
  bool indented = false;
  int source = 0;
  bool keep = true;
};

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$';
}

bool is_comment(std::string_view s) {
  return s[0] == '#' || s[0] == ';' || s.substr(0, 2) == "//";
}

AsmLine classify(std::string_view text) {
  AsmLine l;
  l.text = text;
  size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return l;
  l.indented = first > 0;
  std::string_view rest = text.substr(first);
  if (is_comment(rest)) {
    l.kind = Kind::Comment;
    return l;
  }
  size_t end = 0;
  while (end < rest.size() && rest[end] != ' ' && rest[end] != '\t' && rest[end] != '#') ++end;
  std::string_view word = rest.substr(0, end);
  if (!word.empty() && word.back() == ':') {
    l.kind = Kind::Label;
    l.word = word.substr(0, word.size() - 1);
  } else if (word[0] == '.') {
    l.kind = Kind::Directive;
    l.word = word;
  } else {
    l.kind = Kind::Instruction;
  }
  return l;
}

// The names an instruction or a data directive mentions (operands: labels, symbols).
void add_names(std::string_view text, std::set<std::string, std::less<>>& names) {
  // A trailing comment (the encoding, a fixup note) names nothing the code uses.
  size_t comment = text.find(" #");
  if (comment == std::string_view::npos) comment = text.find("//");
  if (comment != std::string_view::npos) text = text.substr(0, comment);
  for (size_t i = 0; i < text.size();) {
    if (!name_char(text[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && name_char(text[j])) ++j;
    names.emplace(text.substr(i, j - i));
    i = j;
  }
}

bool is_data(std::string_view d) {
  static const std::set<std::string_view> data = {
      ".ascii", ".asciz", ".string", ".byte",  ".short", ".hword", ".2byte", ".word",
      ".long",  ".int",   ".4byte",  ".quad",  ".8byte", ".xword", ".dword", ".zero",
      ".space", ".float", ".single", ".double", ".int8", ".int16", ".int32", ".int64"};
  return data.count(d) > 0;
}

bool changes_section(std::string_view d) {
  return d == ".text" || d == ".data" || d == ".bss" || d == ".section" || d == ".rodata";
}

// The section a .text/.section directive enters is code when its name starts with .text.
bool enters_code(const AsmLine& l) {
  if (l.word != ".section") return l.word == ".text";
  size_t at = l.text.find(".section") + 8;
  size_t name = l.text.find_first_not_of(" \t", at);
  return name != std::string_view::npos && l.text.substr(name, 5) == ".text";
}

// Source lines from .loc: an instruction takes the last .loc's line; a function's label
// starts afresh; an indented comment (a fixup) continues the line above.
void assign_source_lines(std::vector<AsmLine>& lines) {
  int current = 0, previous = 0;
  for (AsmLine& l : lines) {
    switch (l.kind) {
      case Kind::Directive:
        if (l.word == ".loc") {
          // .loc FILE LINE COL [flags]
          std::string_view s = l.text.substr(l.text.find(".loc") + 4);
          int field = 0, value = 0;
          bool in_number = false;
          for (char c : s) {
            if (std::isdigit(static_cast<unsigned char>(c))) {
              if (!in_number) value = 0, in_number = true;
              value = value * 10 + (c - '0');
            } else if (in_number) {
              in_number = false;
              if (++field == 2) break;
            }
          }
          if (in_number) ++field;
          if (field >= 2) current = value;
        }
        break;
      case Kind::Label:
        if (l.word.substr(0, 2) != ".L") current = 0;
        break;
      case Kind::Instruction: l.source = current; break;
      case Kind::Comment: l.source = l.indented ? previous : 0; break;
      case Kind::Blank: break;
    }
    previous = l.source;
  }
}

// Compiler Explorer's "Directives" and "Unused labels" filters (see listing.h).
void drop_directives(std::vector<AsmLine>& lines) {
  std::set<std::string, std::less<>> used;
  for (const AsmLine& l : lines)
    if (l.kind == Kind::Instruction) add_names(l.text, used);
  // Data under a used label may name more labels (a jump table names blocks): repeat
  // until nothing new is used.
  for (size_t before = 0; before != used.size();) {
    before = used.size();
    bool owner = false;
    for (const AsmLine& l : lines) {
      if (l.kind == Kind::Label) owner = l.word.substr(0, 2) != ".L" || used.count(l.word);
      else if (l.kind == Kind::Directive && changes_section(l.word)) owner = false;
      else if (owner && l.kind == Kind::Directive && is_data(l.word)) add_names(l.text.substr(l.text.find(l.word) + l.word.size()), used);
    }
  }
  bool code = true, owner = false;
  for (AsmLine& l : lines) {
    switch (l.kind) {
      case Kind::Label:
        owner = l.word.substr(0, 2) != ".L" || used.count(l.word);
        l.keep = owner;
        break;
      case Kind::Directive:
        if (changes_section(l.word)) {
          code = enters_code(l);
          owner = false;
        }
        l.keep = owner && (is_data(l.word) || (code && (l.word == ".functype" || l.word == ".local")));
        break;
      case Kind::Instruction: l.keep = true; break;
      case Kind::Comment:
      case Kind::Blank: l.keep = code; break;
    }
  }
}

// ---- IR ------------------------------------------------------------------------------

// Writes "\x01LINE\x02" before each instruction that had a line; ir_listing cuts it out.
class LineMarks : public llvm::AssemblyAnnotationWriter {
 public:
  std::map<const llvm::Instruction*, unsigned> lines;
  void emitInstructionAnnot(const llvm::Instruction* i, llvm::formatted_raw_ostream& os) override {
    auto it = lines.find(i);
    if (it != lines.end()) os << '\x01' << it->second << '\x02';
  }
};

}  // namespace

Listing asm_listing(const std::string& text, bool directives) {
  std::vector<AsmLine> lines;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    lines.push_back(classify(std::string_view(text).substr(at, end - at)));
    at = end + 1;
  }
  assign_source_lines(lines);
  if (!directives) drop_directives(lines);
  Listing out;
  for (const AsmLine& l : lines) {
    if (!l.keep) continue;
    out.text.append(l.text);
    out.text += '\n';
    out.lines.push_back(l.source);
  }
  return out;
}

Listing ir_listing(llvm::Module& module) {
  LineMarks marks;
  for (const llvm::Function& f : module)
    for (const llvm::BasicBlock& bb : f)
      for (const llvm::Instruction& i : bb)
        if (const llvm::DebugLoc& loc = i.getDebugLoc(); loc && loc.getLine())
          marks.lines[&i] = loc.getLine();
  llvm::StripDebugInfo(module);
  // The one module flag codegen adds for debug info (codegen_functions.cpp).
  if (llvm::NamedMDNode* flags = module.getModuleFlagsMetadata()) {
    bool only_debug = true;
    for (llvm::MDNode* flag : flags->operands()) {
      auto* key = flag->getNumOperands() > 1 ? llvm::dyn_cast<llvm::MDString>(flag->getOperand(1)) : nullptr;
      only_debug &= key && key->getString() == "Debug Info Version";
    }
    if (only_debug) module.eraseNamedMetadata(flags);
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, &marks);
  os.flush();
  Listing out;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + at, end - at);
    int source = 0;
    if (!line.empty() && line[0] == '\x01') {
      size_t close = line.find('\x02');
      source = std::stoi(std::string(line.substr(1, close - 1)));
      line.remove_prefix(close + 1);
    }
    out.text.append(line);
    out.text += '\n';
    out.lines.push_back(source);
    at = end + 1;
  }
  return out;
}

}  // namespace descent::llvmbe
