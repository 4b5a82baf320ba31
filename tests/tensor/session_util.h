// Feeding Descent source to a Session in the tensor tests, as the REPL does, and reading
// what it printed.
#pragma once
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "pipeline/pipeline.h"

namespace descent::testing {

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline Outcome submit(Session& s, const std::string& source, std::string* printed = nullptr) {
  RunOptions opts;
  opts.out = [printed](std::string_view t) {
    if (printed) *printed += t;
  };
  return s.submit(source, "<test>", opts);
}

// What an input that must succeed printed (or its error, which then fails the test).
inline std::string printed_by(Session& s, const std::string& source) {
  std::string printed;
  Outcome o = submit(s, source, &printed);
  CHECK_MESSAGE(o.status == Outcome::Ok, o.message);
  return printed;
}

}  // namespace descent::testing
