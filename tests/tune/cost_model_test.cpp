// How well the cost model ranks candidates it has not seen (issue 34: a rank correlation of
// at least 0.8). The data are recorded: candidates of the rule-built space drawn at random
// and measured once on the project's 2-core AVX-512 machine (tests/tune/data, written by
// `descent tune ... --strategy random --db`). The test replays each trace on the kernel,
// fits the model on half of them and ranks the other half; no clock runs here, so the figure
// is the same on every machine and every run (XGBoost is seeded and single-threaded).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "pipeline/pipeline.h"
#include "tensor/schedule.h"
#include "tune/cost_model.h"
#include "tune/database.h"
#include "tune/search.h"
#include "tune/space.h"

using namespace descent;

namespace {

// The recorded sets: each file's candidates, the space they were drawn from, the kernel.
struct Set {
  const char* name;  // tests/tune/data/NAME.jsonl and NAME.space
  const char* kernel;
  std::map<std::string, int64_t> dims;
};
const std::vector<Set>& sets() {
  static const std::vector<Set> all = {
      {"matmul_256", "matmul", {{"n", 256}, {"k", 256}, {"m", 256}}},
      {"linear_64x784x128", "linear", {{"n", 64}, {"k", 784}, {"m", 128}}}};
  return all;
}

std::string data_path(const std::string& file) {
  return std::string(DESCENT_TESTS_DIR) + "/tune/data/" + file;
}

struct Measured {
  tir::PrimFunc kernel;  // as lowered
  std::vector<tir::PrimFunc> funcs;
  std::vector<double> seconds;
  std::vector<std::string> traces;
};

// The ok records of a recorded file, each trace once, replayed on the kernel lowered at `dims`.
Measured replayed(const Set& set) {
  Measured m;
  Session s;
  tir::PrimFunc f;
  std::string error;
  REQUIRE_MESSAGE(s.lower_kernel(set.kernel, set.dims, "", &f, &error), error);
  tune::Database db = tune::load_database(data_path(std::string(set.name) + ".jsonl"));
  REQUIRE(db.problems.empty());
  m.kernel = f;
  std::set<std::string> seen;
  for (const tune::Record& r : db.records) {
    if (!r.ok || !seen.insert(r.trace).second) continue;
    tensor::Schedule sch(f);
    REQUIRE_MESSAGE(sch.apply_text(r.trace, &error), error);
    m.funcs.push_back(sch.func());
    m.seconds.push_back(r.seconds);
    m.traces.push_back(r.trace);
  }
  return m;
}

// Spearman's rank correlation between the model's scores and the measured speeds on the
// half it did not learn from, averaged over `splits` random halvings (a seeded Fisher-Yates
// shuffle of our own: std::shuffle's order differs between standard libraries).
double held_out_correlation(const Measured& m, int splits) {
  double total = 0;
  for (int split = 0; split < splits; ++split) {
    std::vector<size_t> order(m.funcs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::mt19937_64 rng(uint64_t(split) + 1);
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
    std::vector<const tir::PrimFunc*> train, test;
    std::vector<double> train_s, test_speed;
    for (size_t k = 0; k < order.size(); ++k) {
      size_t i = order[k];
      if (k < order.size() / 2) {
        train.push_back(&m.funcs[i]);
        train_s.push_back(m.seconds[i]);
      } else {
        test.push_back(&m.funcs[i]);
        test_speed.push_back(1 / m.seconds[i]);
      }
    }
    std::unique_ptr<tune::CostModel> model = tune::make_cost_model("xgboost");
    std::string error;
    REQUIRE_MESSAGE(model->fit(train, train_s, &error), error);
    total += tune::spearman(model->predict(test), test_speed);
  }
  return total / splits;
}

// A measurer that answers from the recorded times (a trace it has no time for is an error):
// a search over a space whose every point was recorded runs as it would have on the machine
// that recorded them, in milliseconds and identically every time.
class Recorded : public tune::Measurer {
 public:
  explicit Recorded(const Measured& m) {
    for (size_t i = 0; i < m.traces.size(); ++i) seconds_[m.traces[i]] = m.seconds[i];
  }
  bool measure(const tir::PrimFunc&, const std::string& trace, double* seconds,
               std::string* error) override {
    auto it = seconds_.find(trace);
    if (it == seconds_.end()) {
      ++missing;
      *error = "not recorded";
      return false;
    }
    *seconds = it->second;
    return true;
  }
  int missing = 0;

 private:
  std::map<std::string, double> seconds_;
};

}  // namespace

TEST_CASE("the cost model ranks unseen candidates of matmul and linear by their measured speed") {
  for (const Set& set : sets()) {
    CAPTURE(std::string(set.name));
    Measured m = replayed(set);
    REQUIRE(m.funcs.size() >= 100);
    double rho = held_out_correlation(m, 5);
    MESSAGE(std::string(set.kernel) << ": Spearman " << rho << " on unseen candidates (" << m.funcs.size()
                       << " measured, trained on half, 5 splits)");
    CHECK(rho >= 0.8);
  }
}

// The figure `descent tune` reports is harder: the correlation on the candidates the search
// chose to measure, mostly near the best so far, where the recorded times differ by little
// more than their noise (two recordings of this matmul's space agree to 0.96 over all of it,
// 0.5-0.67 within its fastest quarter; a model that predicted each time from a second
// recording would score about 0.6 here). The evolutionary search runs over the recorded times
// with five seeds, and so does random search: the goal is that evolutionary reaches
// random's best of 64 trials in at most half as many (median of the five).
TEST_CASE("evolutionary search over recorded times: the model's rank correlation as it searches") {
  for (const Set& set : sets()) {
    CAPTURE(std::string(set.name));
    Measured m = replayed(set);
    // The rule-built space the times were recorded in (the rules may have moved on since).
    std::ifstream in(data_path(std::string(set.name) + ".space"));
    std::stringstream text;
    text << in.rdbuf();
    tune::Space space;
    std::string error;
    REQUIRE_MESSAGE(tune::parse_space(text.str(), &space, &error), error);
    std::vector<double> rhos, evo_trials_to_random_best;
    int missing = 0;
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      Recorded rec(m);
      std::unique_ptr<tune::CostModel> model = tune::make_cost_model("xgboost");
      tune::SearchOptions o;
      o.strategy = "evolutionary";
      o.trials = 64;
      o.seed = seed;
      o.model = model.get();
      tune::SearchResult r = tune::search(space, m.kernel, rec, o);
      rhos.push_back(r.rank_correlation);
      missing += rec.missing;
      tune::SearchOptions ro = o;
      ro.strategy = "random";
      Recorded rrec(m);
      tune::SearchResult rr = tune::search(space, m.kernel, rrec, ro);
      double target = rr.best < 0 ? 0 : rr.candidates[size_t(rr.best)].seconds;
      size_t reach = r.best_so_far.size() + 1;
      for (size_t k = 0; k < r.best_so_far.size(); ++k)
        if (r.best_so_far[k] > 0 && r.best_so_far[k] <= target) {
          reach = k + 1;
          break;
        }
      evo_trials_to_random_best.push_back(double(reach));
    }
    std::sort(rhos.begin(), rhos.end());
    std::sort(evo_trials_to_random_best.begin(), evo_trials_to_random_best.end());
    MESSAGE(std::string(set.kernel) << ": in-search rank correlation, median of 5 seeds " << rhos[2]
                                    << " (min " << rhos[0] << ", max " << rhos[4] << "); evolutionary reaches random's best of 64 in a median "
                                    << evo_trials_to_random_best[2] << " trials; " << missing
                                    << " candidates not recorded");
    CHECK(rhos[2] > 0.3);
    CHECK(evo_trials_to_random_best[2] <= 32);
  }
}

