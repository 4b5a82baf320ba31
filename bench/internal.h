// What the benchmark's own files share (not part of bench.h's API): medians and the
// text tables' rendering.
#pragma once
#include <string>
#include <vector>

namespace descent::bench {

double median_of(std::vector<double> v);  // 0 for no values
// Rows of cells as aligned columns, two spaces apart: the first `left` columns left-aligned,
// the rest right-aligned, trailing blanks trimmed.
std::string render(const std::vector<std::vector<std::string>>& rows, size_t left);
// "12.3 us", "4.56 ms", "1.234 s", "-" for nan; `ms_digits` decimals for milliseconds.
std::string seconds_text(double s, int ms_digits = 2);

}  // namespace descent::bench
