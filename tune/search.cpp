// The random strategy: draw a sample, measure it unless its trace was seen, keep the best.
#include "tune/search.h"

#include <random>
#include <set>

namespace descent::tune {

std::vector<std::string> strategies() { return {"random"}; }

namespace {

// Records a candidate in the result and tells the observer.
void record(SearchResult& r, Candidate c, const std::function<void(const Candidate&)>& observe) {
  c.trial = static_cast<int>(r.candidates.size());
  r.candidates.push_back(std::move(c));
  const Candidate& added = r.candidates.back();
  if (added.ok && (r.best < 0 || added.seconds < r.candidates[size_t(r.best)].seconds))
    r.best = added.trial;
  r.best_so_far.push_back(r.best < 0 ? 0 : r.candidates[size_t(r.best)].seconds);
  if (observe) observe(added);
}

}  // namespace

SearchResult search(const Space& space, const tir::PrimFunc& f, Measurer& measurer,
                    const SearchOptions& options,
                    const std::function<void(const Candidate&)>& observe) {
  SearchResult r;
  if (options.strategy != "random") {
    r.error = "unknown strategy '" + options.strategy + "' (strategies: random)";
    return r;
  }
  std::mt19937_64 rng(options.seed);
  std::set<std::string> seen;
  // A small space runs out of new traces: stop after this many draws in a row gave none.
  const int kPatience = 200;
  int stale = 0;
  while (static_cast<int>(r.candidates.size()) < options.trials && stale < kPatience) {
    if (options.interrupt && options.interrupt->load()) {
      r.interrupted = true;
      break;
    }
    Sample s = sample(space, f, rng);
    // A trace is measured once, and a refusal recorded once (the steps up to it, and why).
    if (!seen.insert(s.ok ? s.trace : "refused\n" + s.trace + s.error).second) {
      ++stale;
      continue;
    }
    Candidate c;
    c.decisions = s.decisions;
    c.trace = s.trace;
    if (!s.ok)
      c.error = s.error;
    else
      c.ok = measurer.measure(s.func, s.trace, &c.seconds, &c.error);
    stale = 0;
    record(r, std::move(c), observe);
  }
  return r;
}

}  // namespace descent::tune
