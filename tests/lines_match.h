// Compares printed lines with the lines a page shows, where a line "..." on the page stands
// for any number of printed lines (the parts a listing or transcript skips). Used by the
// README tour test and the docs-examples test; `same` decides when two lines are equal.
#pragma once
#include <string>
#include <vector>

template <class Same>
bool lines_match(const std::vector<std::string>& want, size_t wi,
                 const std::vector<std::string>& got, size_t gi, const Same& same) {
  if (wi == want.size()) return gi == got.size();
  if (want[wi] == "...") {
    for (size_t k = gi; k <= got.size(); ++k)
      if (lines_match(want, wi + 1, got, k, same)) return true;
    return false;
  }
  return gi < got.size() && same(want[wi], got[gi]) && lines_match(want, wi + 1, got, gi + 1, same);
}
