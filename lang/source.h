// Source text, positions in it, and diagnostics that point back into it.
//
// Every stage reports problems as values (a Diagnostic) instead of printing: the front end
// decides how to show them. format_diagnostic() renders the form compilers use:
//
//   prog.ds:3:9: error: undefined variable 'y'
//     print(y)
//           ^
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace descent {

class SourceFile;

// A position in a source file. line and col are 1-based; col counts characters (UTF-8
// code points), so the caret lands under the right glyph even after non-ASCII text.
// A location knows its file: a REPL function defined by an earlier input keeps pointing into
// that input when a later one calls it (as Lua keeps a source name per function). The file
// is not owned: whoever keeps the locations keeps the file (a Program holds its SourceFile,
// and the Module holds every Program whose code can still run).
struct SourceLoc {
  uint32_t offset = 0;  // byte offset into the file's text
  uint32_t line = 0;    // 0 means "no location" (e.g. an error from a whole-program check)
  uint32_t col = 0;
  const SourceFile* file = nullptr;  // null: the input being compiled or run
  bool valid() const { return line != 0; }
};

// One input: a file, a REPL line, or a string given to the pipeline.
class SourceFile {
 public:
  SourceFile(std::string name, std::string text);
  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  // Line/column of a byte offset (offsets past the end map to the end).
  SourceLoc loc_at(uint32_t offset) const;
  // The text of a 1-based line, without its newline.
  std::string_view line_text(uint32_t line) const;
  uint32_t line_count() const { return static_cast<uint32_t>(line_starts_.size()); }
  // A number no other SourceFile of this process has: compiled code names its input by it
  // (the JIT's runtime errors), which stays true when earlier inputs are freed.
  uint32_t serial() const { return serial_; }

 private:
  uint32_t serial_;
  std::string name_;
  std::string text_;
  std::vector<uint32_t> line_starts_;  // byte offset where each line begins
};

enum class Severity { Error, Note };

// Which phase found the problem: decides the exit code of `descent run` (2 or 1).
enum class ErrorKind { Compile, Runtime };

struct Diagnostic {
  Severity severity = Severity::Error;
  ErrorKind kind = ErrorKind::Compile;
  SourceLoc loc;
  std::string message;  // one line, no trailing period, e.g. "division by zero"
};

// "file:line:col: error: message\n  source line\n  caret\n"
std::string format_diagnostic(const SourceFile& file, const Diagnostic& d);
std::string format_diagnostics(const SourceFile& file, const std::vector<Diagnostic>& ds);

// The file a location points into: its own, else `current` (the input at hand).
inline const SourceFile& file_of(const SourceLoc& loc, const SourceFile& current) {
  return loc.file ? *loc.file : current;
}

}  // namespace descent
