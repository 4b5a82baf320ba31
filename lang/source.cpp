#include "lang/source.h"

#include <algorithm>
#include <atomic>

namespace descent {

static uint32_t next_serial() {
  static std::atomic<uint32_t> counter{0};
  return ++counter;
}

SourceFile::SourceFile(std::string name, std::string text)
    : serial_(next_serial()), name_(std::move(name)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (uint32_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

// UTF-8 continuation bytes (10xxxxxx) do not start a character.
static bool starts_char(char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }

SourceLoc SourceFile::loc_at(uint32_t offset) const {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text_.size()));
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - line_starts_.begin());
  uint32_t col = 1;
  for (uint32_t i = line_starts_[line - 1]; i < offset; ++i)
    if (starts_char(text_[i])) ++col;
  return SourceLoc{offset, line, col, this};
}

std::string_view SourceFile::line_text(uint32_t line) const {
  if (line == 0 || line > line_starts_.size()) return {};
  uint32_t begin = line_starts_[line - 1];
  uint32_t end = line < line_starts_.size() ? line_starts_[line] - 1
                                            : static_cast<uint32_t>(text_.size());
  if (end > begin && text_[end - 1] == '\r') --end;
  return std::string_view(text_).substr(begin, end - begin);
}

std::string format_diagnostic(const SourceFile& file, const Diagnostic& d) {
  std::string out = file.name();
  if (d.loc.valid())
    out += ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col);
  out += d.severity == Severity::Error ? ": error: " : ": note: ";
  out += d.message;
  out += '\n';
  if (!d.loc.valid()) return out;
  std::string_view line = file.line_text(d.loc.line);
  out += "  ";
  std::string caret = "  ";
  uint32_t col = 1;
  // Tabs are kept in the caret line so the caret stays aligned in any terminal.
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    out += c;
    if (!starts_char(c)) continue;
    if (col < d.loc.col) caret += (c == '\t' ? '\t' : ' ');
    ++col;
  }
  out += '\n' + caret + "^\n";
  return out;
}

std::string format_diagnostics(const SourceFile& file, const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) out += format_diagnostic(file, d);
  return out;
}

}  // namespace descent
