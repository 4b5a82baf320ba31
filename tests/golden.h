// Golden-file checks shared by the test suites: compare a printed IR with the file under
// tests/ that holds what it must be, or (DESCENT_UPDATE_GOLDEN=1) rewrite the file, to be
// read and committed by hand.
#pragma once
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace descent::testing {

// relative: a path under tests/, e.g. "tensor/golden/lower_add.tir".
inline void check_golden_file(const std::string& relative, const std::string& actual) {
  std::string path = std::string(DESCENT_TESTS_DIR) + "/" + relative;
  if (const char* u = std::getenv("DESCENT_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing golden file " << path << " (DESCENT_UPDATE_GOLDEN=1 writes it)");
  std::stringstream want;
  want << in.rdbuf();
  INFO("golden file: " << path << " (DESCENT_UPDATE_GOLDEN=1 rewrites it)");
  CHECK(want.str() == actual);
}

}  // namespace descent::testing
