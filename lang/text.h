// Small text helpers every tier uses, written once: joining words into a list.
#pragma once
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

}  // namespace descent
