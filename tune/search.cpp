// The strategies over a space: random sampling, a genetic algorithm over decision lists, and
// a beam search that fixes one decision at a time. They share one evaluator: it replays a
// candidate, measures each trace once, and records everything in the result.
#include "tune/search.h"

#include <algorithm>
#include <limits>
#include <map>
#include <random>

namespace descent::tune {

std::vector<std::string> strategies() { return {"random", "ga", "beam"}; }

namespace {

constexpr double kFailed = std::numeric_limits<double>::infinity();

struct Run {
  const Space& space;
  const tir::PrimFunc& f;
  Measurer& measurer;
  const SearchOptions& options;
  const std::function<void(const Candidate&)>& observe;
  SearchResult result;
  std::mt19937_64 rng;
  std::map<std::string, double> times;  // each trace (or refusal) once: its time, kFailed
  int stale = 0;                        // draws in a row that gave nothing new

  // A small space runs out of new traces: stop after this many draws in a row gave none.
  static constexpr int kPatience = 200;

  bool done() {
    if (options.interrupt && options.interrupt->load()) result.interrupted = true;
    return result.interrupted || static_cast<int>(result.candidates.size()) >= options.trials ||
           stale >= kPatience;
  }

  // The time of a sample, measuring it only if its trace is new (kFailed when it failed).
  double evaluate(const Sample& s) {
    std::string key = s.ok ? s.trace : "refused\n" + s.trace + s.error;
    if (auto it = times.find(key); it != times.end()) {
      ++stale;
      return it->second;
    }
    if (done()) return kFailed;
    stale = 0;
    Candidate c;
    c.decisions = s.decisions;
    c.trace = s.trace;
    if (!s.ok)
      c.error = s.error;
    else
      c.ok = measurer.measure(s.func, s.trace, &c.seconds, &c.error);
    double t = c.ok ? c.seconds : kFailed;
    times[key] = t;
    c.trial = static_cast<int>(result.candidates.size());
    result.candidates.push_back(std::move(c));
    const Candidate& added = result.candidates.back();
    if (added.ok && (result.best < 0 || added.seconds < result.candidates[size_t(result.best)].seconds))
      result.best = added.trial;
    result.best_so_far.push_back(result.best < 0 ? 0 : result.candidates[size_t(result.best)].seconds);
    if (observe) observe(added);
    return t;
  }
};

// Random: draw, measure what is new, keep the best.
void random_search(Run& run) {
  while (!run.done()) run.evaluate(sample(run.space, run.f, run.rng));
}

// One individual of the genetic algorithm: its decisions (as replay normalised them) and time.
struct Individual {
  std::vector<int> genes;
  double time = kFailed;
};

// The genetic algorithm of the seed notes' GA tuner, over decision lists: keep the two best,
// then fill the population with children of parents picked by tournament (the faster of two
// at random), crossed at one point and mutated one gene in `len` on average. Every list of
// integers is a valid sample (space.h), so crossover and mutation need no knowledge of the
// options.
void genetic_search(Run& run) {
  const size_t size = static_cast<size_t>(std::max(4, run.options.population));
  std::vector<Individual> population;
  for (size_t i = 0; i < size && !run.done(); ++i) {
    Sample s = sample(run.space, run.f, run.rng);
    population.push_back({s.decisions, run.evaluate(s)});
  }
  auto faster = [](const Individual& a, const Individual& b) { return a.time < b.time; };
  auto pick = [&]() -> const Individual& {
    const Individual& a = population[run.rng() % population.size()];
    const Individual& b = population[run.rng() % population.size()];
    return a.time <= b.time ? a : b;
  };
  while (!run.done() && !population.empty()) {
    std::sort(population.begin(), population.end(), faster);
    std::vector<Individual> next(population.begin(), population.begin() + std::min<size_t>(2, population.size()));
    while (next.size() < size && !run.done()) {
      const Individual& mum = pick();
      const Individual& dad = pick();
      size_t len = std::max(mum.genes.size(), dad.genes.size());
      std::vector<int> child(len, 0);
      size_t cut = len == 0 ? 0 : run.rng() % (len + 1);
      for (size_t g = 0; g < len; ++g) {
        const auto& from = g < cut ? mum.genes : dad.genes;
        child[g] = g < from.size() ? from[g] : 0;
      }
      for (size_t g = 0; g < len; ++g)
        if (run.rng() % len == 0) child[g] = static_cast<int>(run.rng() % 1024);
      Sample s = replay(run.space, run.f, child);
      next.push_back({s.decisions, run.evaluate(s)});
    }
    population = std::move(next);
  }
}

// Beam search, as tinygrad's BEAM applies kernel actions: fix the decisions one at a time,
// in the order the space meets them (the points not yet fixed take their first option),
// trying every option of the next point on each of the `width` best lists so far.
void beam_search(Run& run) {
  const size_t width = static_cast<size_t>(std::max(1, run.options.beam_width));
  std::vector<Individual> beam = {{{}, kFailed}};
  for (size_t depth = 0; !run.done(); ++depth) {
    std::vector<Individual> children;
    for (const auto& parent : beam) {
      Sample base = replay(run.space, run.f, parent.genes);
      if (depth >= base.points.size()) continue;  // every decision of this list is fixed
      size_t options = base.points[depth].options.size();
      for (size_t o = 0; o < options && !run.done(); ++o) {
        std::vector<int> genes(base.decisions.begin(), base.decisions.begin() + long(depth));
        genes.push_back(static_cast<int>(o));
        Sample s = replay(run.space, run.f, genes);
        children.push_back({genes, run.evaluate(s)});
      }
    }
    if (children.empty()) break;
    std::stable_sort(children.begin(), children.end(),
                     [](const Individual& a, const Individual& b) { return a.time < b.time; });
    if (children.size() > width) children.resize(width);
    beam = std::move(children);
  }
}

}  // namespace

SearchResult search(const Space& space, const tir::PrimFunc& f, Measurer& measurer,
                    const SearchOptions& options,
                    const std::function<void(const Candidate&)>& observe) {
  Run run{space, f, measurer, options, observe, {}, std::mt19937_64(options.seed), {}, 0};
  if (options.strategy == "random") random_search(run);
  else if (options.strategy == "ga") genetic_search(run);
  else if (options.strategy == "beam") beam_search(run);
  else run.result.error = "unknown strategy '" + options.strategy + "' (strategies: random, ga, beam)";
  return run.result;
}

}  // namespace descent::tune
