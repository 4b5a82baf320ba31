// Small text helpers every tier uses, written once: joining words into a list, and the line
// diff (longest common subsequence) behind :diff and the visualizer's changed-line colours.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace descent {

// "a, b, c" (or with another separator), from items[from] on.
inline std::string join(const std::vector<std::string>& items, std::string_view sep = ", ",
                        size_t from = 0) {
  std::string out;
  for (size_t i = from; i < items.size(); ++i) {
    if (i > from) out += sep;
    out += items[i];
  }
  return out;
}

// "a\nb\n" -> {"a", "b"}; "" -> {}; a line's '\n' is not part of it.
std::vector<std::string> split_lines(std::string_view text);
// " split  i 4" -> {"split", "i", "4"}: the words between runs of white space.
std::vector<std::string> split_words(std::string_view text);

// For each line of b: is it new or changed relative to a? The line diff unified_diff prints
// (longest common subsequence, deletions before insertions, as `diff` does), as data: the
// visualizer colours those lines.
std::vector<bool> changed_lines(const std::vector<std::string>& a,
                                const std::vector<std::string>& b);

// A unified diff (3 lines of context, "@@ -a,b +c,d @@" hunks, under "--- a_label" and
// "+++ b_label") from text a to text b; "" when they are equal.
std::string unified_diff(const std::string& a, const std::string& b,
                         const std::string& a_label = "a", const std::string& b_label = "b");

// The candidate a misspelt word most likely meant ("fbi" -> "fib", ":stakc" -> ":stack"):
// the nearest by edit distance (a swap of two neighbours counts one edit), if it is at most
// a third of the word's length (at least 1) away; "" when nothing is that close.
std::string closest_name(std::string_view word, const std::vector<std::string>& candidates);

// One CSV field (RFC 4180): as is, or in double quotes (inner quotes doubled) when it holds a
// comma, a quote or a line break.
std::string csv_field(const std::string& field);

// A byte count for people: "512 B", "4.0 MiB", "37.3 GiB" (binary units, one decimal).
std::string bytes_text(uint64_t bytes);

// The inverse, for options: "1000", "512K", "512M", "2G", "1.5GiB", "4 MiB" (K/M/G/T are
// binary, with or without "iB"/"B"). False for anything else or an overflow.
bool parse_bytes(std::string_view text, uint64_t* bytes);

// Reads a whole file for a front end (a program, a schedule, a lab file). A directory, a
// missing or unreadable file is an error naming the path and the reason ("'d' is a
// directory, not a file"), never an empty text: an empty program runs happily and says nothing.
bool read_file(const std::string& path, std::string* text, std::string* error);

}  // namespace descent
