// Search spaces (tune/space.h): parsing, sampling, replaying a sample from its decisions, and
// every sample computing what the unscheduled kernel computes (the reference interpreter).
#include <doctest/doctest.h>

#include <random>
#include <set>
#include <string>

#include "pipeline/pipeline.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"
#include "tune/space.h"
#include "tune_util.h"

using namespace descent;
using namespace descent::tune;
using descent::testing::matmul;
using descent::testing::parsed;

namespace {

std::string parse_error(const std::string& text) {
  Space space;
  std::string error;
  CHECK_FALSE(parse_space(text, &space, &error));
  return error;
}

// f on seeded inputs, by the reference interpreter.
tensor::Tensor run(const tir::PrimFunc& f) {
  std::vector<tensor::Tensor> inputs(f.params.size());
  std::vector<const tensor::Tensor*> args;
  std::string error;
  for (size_t i = 0; i < f.params.size(); ++i) {
    REQUIRE(tensor::rand(f.buffers[size_t(f.params[i])].shape, int64_t(i) + 1, &inputs[i], &error));
    args.push_back(&inputs[i]);
  }
  tensor::Tensor out;
  REQUIRE_MESSAGE(tir::interpret(f, args, &out, &error), error);
  return out;
}

const char* kMatmulSpace =
    "# multi-level tiling of a matmul, as a space\n"
    "split i ?\n"
    "split j ?{4,8,16}\n"
    "reorder i_0 j_0 r i_1 j_1\n"
    "maybe 0.5 unroll i_1\n"
    "one_of vectorize j_1 | parallel i_0\n";

}  // namespace

TEST_CASE("divisors: the options of `?`") {
  CHECK(divisors(12) == std::vector<int64_t>{1, 2, 3, 4, 6, 12});
  CHECK(divisors(1) == std::vector<int64_t>{1});
  CHECK(divisors(49) == std::vector<int64_t>{1, 7, 49});
  CHECK(divisors(128).size() == 8);
}

TEST_CASE("parse_space: the lines, and what is wrong with a malformed one") {
  Space space = parsed(kMatmulSpace);
  REQUIRE(space.lines.size() == 5);
  CHECK(space.lines[0].line == 2);
  CHECK(space.lines[3].kind == SpaceLine::Kind::Maybe);
  CHECK(space.lines[3].probability == 0.5);
  CHECK(space.lines[3].alternatives == std::vector<std::string>{"unroll i_1"});
  CHECK(space.lines[4].kind == SpaceLine::Kind::OneOf);
  CHECK(space.lines[4].alternatives == std::vector<std::string>{"vectorize j_1", "parallel i_0"});
  CHECK(space.max_decisions() == 4);

  CHECK(parse_error("split i 4\nmaybe unroll i_1\n") ==
        "line 2: write `maybe P STEP`, P a probability from 0 to 1 (maybe 0.5 unroll k_1)");
  CHECK(parse_error("maybe 1.5 unroll i\n").rfind("line 1: write `maybe P STEP`", 0) == 0);
  CHECK(parse_error("one_of vectorize j\n").rfind("line 1: write `one_of STEP | STEP ...`", 0) == 0);
  CHECK(parse_error("one_of vectorize j |\n").rfind("line 1: write `one_of", 0) == 0);
  CHECK(parse_error("unroll ?\n") ==
        "line 1: '?' in `unroll ?`: a choice stands for a factor, so only split (split LOOP ?) and "
        "tile (tile L1 L2 ? ?) take one");
  CHECK(parse_error("split i ?{4,x}\n") == "line 1: '?{4,x}' is not a list of factors (write ?{4,8,16})");
  CHECK(parse_error("split i ?{}\n").find("is not a list of factors") != std::string::npos);
  CHECK(parse_error("split i ?{4,8\n").find("is not a list of factors") != std::string::npos);
}

TEST_CASE("a sample is an ordinary schedule: its trace and its decisions replay to the same nest") {
  tir::PrimFunc f = matmul(32);
  Space space = parsed(kMatmulSpace);
  std::mt19937_64 rng(7);
  std::set<std::string> traces;
  for (int k = 0; k < 40; ++k) {
    Sample s = sample(space, f, rng);
    REQUIRE_MESSAGE(s.ok, s.error);
    CHECK(s.trace.find('?') == std::string::npos);
    CHECK(s.decisions.size() == s.points.size());
    traces.insert(s.trace);
    // The decisions alone give the same sample.
    Sample again = replay(space, f, s.decisions);
    REQUIRE(again.ok);
    CHECK(again.trace == s.trace);
    CHECK(again.decisions == s.decisions);
    CHECK(tir::print_script(again.func) == tir::print_script(s.func));
    // The trace is a schedule like any other.
    tensor::Schedule sched(f);
    std::string error;
    REQUIRE_MESSAGE(sched.apply_text(s.trace, &error), error);
    CHECK(tir::print_script(sched.func()) == tir::print_script(s.func));
  }
  CHECK(traces.size() > 10);  // the decisions vary
}

TEST_CASE("every sample computes what the unscheduled kernel computes") {
  tir::PrimFunc f = matmul(24);
  tensor::Tensor want = run(f);
  Space space = parsed("tile i j ? ?\nmaybe 0.7 split r ?\none_of unroll i_1 | unroll j_1 | parallel i_0\n");
  std::mt19937_64 rng(3);
  for (int k = 0; k < 20; ++k) {
    Sample s = sample(space, f, rng);
    REQUIRE_MESSAGE(s.ok, s.error);
    CAPTURE(s.trace);
    std::string why;
    CHECK_MESSAGE(tensor::allclose(run(s.func), want, 1e-4, &why), why);
  }
}

TEST_CASE("decisions: taken modulo the options, missing ones are 0, and `?` sees the loop as it is") {
  tir::PrimFunc f = matmul(32);
  Space space = parsed("split i ?\nsplit i_1 ?\n");
  // 32 has 6 divisors: 1 2 4 8 16 32. Decision 4 -> 16; then i_1 has extent 16: 5 divisors.
  Sample s = replay(space, f, {4, 3});
  REQUIRE(s.ok);
  CHECK(s.trace == "split i 16\nsplit i_1 8\n");
  REQUIRE(s.points.size() == 2);
  CHECK(s.points[0].what == "a factor of i (extent 32)");
  CHECK(s.points[1].what == "a factor of i_1 (extent 16)");
  CHECK(s.points[1].options == std::vector<std::string>{"1", "2", "4", "8", "16"});
  // Out of range, negative, and missing decisions still make a sample.
  Sample wrapped = replay(space, f, {6 + 4, -1});
  REQUIRE(wrapped.ok);
  CHECK(wrapped.decisions == std::vector<int>{4, 4});
  CHECK(wrapped.trace == "split i 16\nsplit i_1 16\n");
  CHECK(replay(space, f, {}).trace == "split i 1\nsplit i_1 1\n");
}

TEST_CASE("maybe: probability 0 never applies the step, 1 always does") {
  tir::PrimFunc f = matmul(16);
  std::mt19937_64 rng(11);
  for (int k = 0; k < 20; ++k) {
    CHECK(sample(parsed("maybe 0 unroll j\n"), f, rng).trace.empty());
    CHECK(sample(parsed("maybe 1 unroll j\n"), f, rng).trace == "unroll j\n");
  }
}

TEST_CASE("a step the primitive refuses makes a failed sample that says which line") {
  tir::PrimFunc f = matmul(16);
  Sample s = replay(parsed("split i 4\nvectorize r\n"), f, {});
  CHECK_FALSE(s.ok);
  CHECK(s.error.rfind("line 2 (vectorize r): cannot vectorize 'r'", 0) == 0);
  Sample missing = replay(parsed("split x ?\n"), f, {});
  CHECK_FALSE(missing.ok);
  CHECK(missing.error.rfind("line 1 (split x ?): ", 0) == 0);
}

TEST_CASE("a group of steps: `;` joins steps that are taken together, in maybe and one_of") {
  tir::PrimFunc f = matmul(32);
  tensor::Tensor want = run(f);
  Space space = parsed(
      "split i 8\n"
      "split j 8\n"
      "one_of reorder i_0 j_0 r i_1 j_1 ; unroll i_1 | reorder j_0 i_0 r i_1 j_1 ; split r ?{4,8}\n"
      "maybe 0.5 vectorize j_1 ; parallel i_0\n");
  // The ? inside the second alternative is a decision only when that alternative is taken.
  CHECK(space.max_decisions() == 3);
  std::set<std::string> traces;
  for (const std::vector<int>& d : std::vector<std::vector<int>>{{0, 0}, {0, 1}, {1, 0, 0}, {1, 1, 1}}) {
    Sample s = replay(space, f, d);
    REQUIRE_MESSAGE(s.ok, s.error);
    traces.insert(s.trace);
    std::string why;
    CHECK_MESSAGE(tensor::allclose(run(s.func), want, 1e-4, &why), why);
  }
  CHECK(traces.size() == 4);
  Sample both = replay(space, f, {0, 1});
  CHECK(both.trace.find("unroll i_1\n") != std::string::npos);
  CHECK(both.trace.find("vectorize j_1\nparallel i_0\n") != std::string::npos);
  Sample other = replay(space, f, {1, 1, 0});
  CHECK(other.trace.find("reorder j_0 i_0 r i_1 j_1\nsplit r 8\n") != std::string::npos);
  CHECK(other.trace.find("vectorize") == std::string::npos);
  // A bad step inside a group is found when the space is parsed, with its line.
  CHECK(parse_error("split i 8\none_of unroll i_1 ; vectorize ?{4} | unroll i_0\n").rfind("line 2: ", 0) == 0);
}
