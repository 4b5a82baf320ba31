// The strategies over a space: random sampling, a genetic algorithm over decision lists, and
// a beam search that fixes one decision at a time. They share one evaluator: it replays a
// candidate, measures each trace once, and records everything in the result.
#include "tune/search.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <limits>
#include <map>
#include <random>

namespace descent::tune {

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
  int trials = 0;                       // candidates tried here (not from the database)
  // The loop nest of every ok candidate, by trace: what a cost model learns from.
  std::map<std::string, std::shared_ptr<const tir::PrimFunc>> funcs;

  // A small space runs out of new traces: stop after this many draws in a row gave none.
  static constexpr int kPatience = 200;

  bool done() {
    if (options.interrupt && options.interrupt->load()) result.interrupted = true;
    return result.interrupted || trials >= options.trials || stale >= kPatience;
  }

  void record(Candidate c) {
    if (!c.from_database) ++trials;
    c.trial = static_cast<int>(result.candidates.size());
    result.candidates.push_back(std::move(c));
    const Candidate& added = result.candidates.back();
    if (added.ok && (result.best < 0 || added.seconds < result.candidates[size_t(result.best)].seconds))
      result.best = added.trial;
    result.best_so_far.push_back(result.best < 0 ? 0 : result.candidates[size_t(result.best)].seconds);
    if (observe) observe(added);
  }

  static std::string key_of(const Sample& s) {
    return s.ok ? s.trace : "refused\n" + s.trace + s.error;
  }

  // The times of a batch of samples, measuring only the traces not seen before (kFailed for
  // a failure, and for what the trial budget or an interrupt left unmeasured). The new ones
  // go to the measurer together, so it can build one while it runs another. `scores` (may
  // be null): the cost model's score of each sample, kept with its candidate.
  std::vector<double> evaluate_all(const std::vector<Sample>& samples,
                                   const std::vector<double>* scores = nullptr) {
    std::vector<double> out(samples.size(), kFailed);
    std::map<std::string, std::vector<size_t>> pending;  // key -> the samples waiting for it
    std::vector<size_t> order;                            // first sample of each new key
    int budget = options.trials - trials;
    for (size_t i = 0; i < samples.size(); ++i) {
      const Sample& s = samples[i];
      std::string key = key_of(s);
      if (auto it = times.find(key); it != times.end()) {
        ++stale;
        out[i] = it->second;
        continue;
      }
      if (auto it = pending.find(key); it != pending.end()) {
        ++stale;
        it->second.push_back(i);
        continue;
      }
      if (s.ok && options.known) {
        if (auto k = options.known->find(s.trace); k != options.known->end()) {
          Candidate c;
          c.decisions = s.decisions;
          c.trace = s.trace;
          c.ok = true;
          c.seconds = k->second;
          c.from_database = true;
          times[key] = out[i] = k->second;
          funcs[s.trace] = std::make_shared<const tir::PrimFunc>(s.func);
          record(std::move(c));
          continue;
        }
      }
      if (budget <= 0) continue;
      --budget;
      stale = 0;
      pending[key].push_back(i);
      order.push_back(i);
    }
    auto finish = [&](size_t i, Candidate c) {
      if (scores) {
        c.predicted = (*scores)[i];
        c.has_prediction = true;
      }
      double t = c.ok ? c.seconds : kFailed;
      std::string key = key_of(samples[i]);
      if (c.ok) funcs[samples[i].trace] = std::make_shared<const tir::PrimFunc>(samples[i].func);
      times[key] = t;
      for (size_t j : pending[key]) out[j] = t;
      record(std::move(c));
    };
    std::vector<MeasureItem> items;
    std::vector<size_t> item_sample;
    for (size_t i : order) {
      const Sample& s = samples[i];
      if (s.ok) {
        MeasureItem item;
        item.func = &s.func;
        item.trace = &s.trace;
        items.push_back(std::move(item));
        item_sample.push_back(i);
        continue;
      }
      if (done()) break;
      Candidate c;
      c.decisions = s.decisions;
      c.trace = s.trace;
      c.error = s.error;
      finish(i, std::move(c));
    }
    if (items.empty() || done()) return out;
    measurer.measure_batch(items, [&](size_t k) {
      const Sample& s = samples[item_sample[k]];
      Candidate c;
      c.decisions = s.decisions;
      c.trace = s.trace;
      c.ok = items[k].ok;
      c.seconds = items[k].seconds;
      c.error = items[k].error;
      finish(item_sample[k], std::move(c));
      return !done();
    });
    return out;
  }
};

// Random: draw, measure what is new, keep the best.
void random_search(Run& run) {
  const size_t batch = static_cast<size_t>(std::max(1, run.options.batch));
  while (!run.done()) {
    std::vector<Sample> samples;
    for (size_t i = 0; i < batch; ++i) samples.push_back(sample(run.space, run.f, run.rng));
    run.evaluate_all(samples);
  }
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
  {
    std::vector<Sample> first;
    for (size_t i = 0; i < size; ++i) first.push_back(sample(run.space, run.f, run.rng));
    std::vector<double> t = run.evaluate_all(first);
    for (size_t i = 0; i < first.size(); ++i) population.push_back({first[i].decisions, t[i]});
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
    std::vector<Sample> children;
    while (next.size() + children.size() < size) {
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
      children.push_back(replay(run.space, run.f, child));
    }
    std::vector<double> t = run.evaluate_all(children);
    for (size_t i = 0; i < children.size(); ++i) next.push_back({children[i].decisions, t[i]});
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
    std::vector<Sample> samples;
    for (const auto& parent : beam) {
      Sample base = replay(run.space, run.f, parent.genes);
      if (depth >= base.points.size()) continue;  // every decision of this list is fixed
      size_t options = base.points[depth].options.size();
      for (size_t o = 0; o < options; ++o) {
        std::vector<int> genes(base.decisions.begin(), base.decisions.begin() + long(depth));
        genes.push_back(static_cast<int>(o));
        samples.push_back(replay(run.space, run.f, genes));
        children.push_back({genes, kFailed});
      }
    }
    std::vector<double> t = run.evaluate_all(samples);
    for (size_t i = 0; i < children.size(); ++i) children[i].time = t[i];
    if (children.empty()) break;
    std::stable_sort(children.begin(), children.end(),
                     [](const Individual& a, const Individual& b) { return a.time < b.time; });
    if (children.size() > width) children.resize(width);
    beam = std::move(children);
  }
}

// MetaSchedule's evolutionary search: measure a first batch of random samples; then, each
// round, fit the cost model to everything measured, breed a large pool of new candidates
// (mutants of the fastest traces, one decision changed, and a fifth fresh samples), let the
// model rank the pool, and measure only the top few plus one drawn from the rest, so the
// search keeps exploring where the model is wrong. Measurements are the expensive part
// (a build and several runs); a prediction costs microseconds.
void evolutionary_search(Run& run) {
  CostModel* model = run.options.model;
  if (!model) {
    run.result.error = "the evolutionary strategy needs a cost model";
    return;
  }
  const size_t per_round = static_cast<size_t>(std::max(1, run.options.measure_per_round));
  const size_t pool_size = std::max(per_round, static_cast<size_t>(run.options.mutants_per_round));
  {
    std::vector<Sample> first;
    for (size_t i = 0; i < per_round; ++i) first.push_back(sample(run.space, run.f, run.rng));
    run.evaluate_all(first);
  }
  int empty_rounds = 0;
  while (!run.done() && empty_rounds < 3) {
    // Learn from everything measured so far.
    std::vector<const tir::PrimFunc*> seen_funcs;
    std::vector<double> seen_times;
    std::vector<std::pair<double, std::vector<int>>> fastest;
    std::set<std::string> once;
    for (const auto& c : run.result.candidates) {
      if (!c.ok || !once.insert(c.trace).second) continue;
      auto it = run.funcs.find(c.trace);
      if (it == run.funcs.end()) continue;
      seen_funcs.push_back(it->second.get());
      seen_times.push_back(c.seconds);
      fastest.push_back({c.seconds, c.decisions});
    }
    std::string why;
    bool fitted = !seen_funcs.empty() && model->fit(seen_funcs, seen_times, &why);
    if (!fitted && !why.empty()) run.result.model_error = why;
    std::sort(fastest.begin(), fastest.end());
    if (fastest.size() > 8) fastest.resize(8);
    // Breed the pool: new traces only.
    std::vector<Sample> pool;
    std::set<std::string> in_pool;
    for (size_t tries = 0; pool.size() < pool_size && tries < 4 * pool_size; ++tries) {
      Sample s;
      if (fastest.empty() || run.rng() % 5 == 0) {
        s = sample(run.space, run.f, run.rng);
      } else {
        std::vector<int> genes = fastest[run.rng() % fastest.size()].second;
        if (genes.empty()) continue;
        genes[run.rng() % genes.size()] = static_cast<int>(run.rng() % 1024);
        s = replay(run.space, run.f, genes);
      }
      if (!s.ok || run.times.count(s.trace) || !in_pool.insert(s.trace).second) continue;
      pool.push_back(std::move(s));
    }
    if (pool.empty()) {
      ++empty_rounds;
      continue;
    }
    empty_rounds = 0;
    std::vector<double> scores(pool.size(), 0.0);
    if (fitted) {
      std::vector<const tir::PrimFunc*> ptrs;
      for (const auto& s : pool) ptrs.push_back(&s.func);
      scores = model->predict(ptrs);
    }
    // The top per_round - 1 by score, and one more drawn from the rest.
    std::vector<size_t> order(pool.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    size_t take = std::min(per_round, pool.size());
    if (take > 1 && pool.size() > take) {
      size_t extra = take - 1 + run.rng() % (pool.size() - (take - 1));
      std::swap(order[take - 1], order[extra]);
    }
    std::vector<Sample> chosen;
    std::vector<double> chosen_scores;
    for (size_t k = 0; k < take; ++k) {
      chosen.push_back(std::move(pool[order[k]]));
      chosen_scores.push_back(scores[order[k]]);
    }
    run.evaluate_all(chosen, fitted ? &chosen_scores : nullptr);
  }
  std::vector<double> predicted, speed;
  for (const auto& c : run.result.candidates)
    if (c.has_prediction && c.ok) {
      predicted.push_back(c.predicted);
      speed.push_back(c.seconds > 0 ? 1.0 / c.seconds : 0.0);
    }
  run.result.ranked = static_cast<int>(predicted.size());
  run.result.rank_correlation = spearman(predicted, speed);
}

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[order[k]] = (double(i) + double(j)) / 2.0;
    i = j + 1;
  }
  return r;
}

// Every strategy, once: its name, what it does in a line, and the function. strategies(),
// strategy_help() (the CLI's --strategy help) and search()'s dispatch all read this table.
struct Strategy {
  const char* name;
  const char* help;
  void (*run)(Run&);
};
const Strategy kStrategies[] = {
    {"random", "samples the space uniformly", &random_search},
    {"ga", "a genetic algorithm over decision lists (crossover, mutation)", &genetic_search},
    {"beam", "decides one step at a time, keeping the best partial schedules", &beam_search},
    {"evolutionary", "mutates the best so far, ranked by the cost model before measuring",
     &evolutionary_search},
};

}  // namespace

std::vector<std::string> strategies() {
  std::vector<std::string> out;
  for (const Strategy& st : kStrategies) out.push_back(st.name);
  return out;
}

std::string strategy_help() {
  std::string out;
  for (const Strategy& st : kStrategies)
    out += std::string(out.empty() ? "" : "; ") + st.name + ": " + st.help;
  return out;
}

void Measurer::measure_batch(std::vector<MeasureItem>& items,
                             const std::function<bool(size_t)>& next) {
  for (size_t k = 0; k < items.size(); ++k) {
    MeasureItem& it = items[k];
    it.ok = measure(*it.func, *it.trace, &it.seconds, &it.error);
    it.measured = true;
    if (!next(k)) return;
  }
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return 0;
  std::vector<double> ra = ranks(a), rb = ranks(b);
  double n = double(a.size()), ma = 0, mb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    ma += ra[i] / n;
    mb += rb[i] / n;
  }
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : 0;
}

SearchResult search(const Space& space, const tir::PrimFunc& f, Measurer& measurer,
                    const SearchOptions& options,
                    const std::function<void(const Candidate&)>& observe) {
  Run run{space, f, measurer, options, observe, {}, std::mt19937_64(options.seed), {}, 0, 0, {}};
  for (const Strategy& st : kStrategies)
    if (options.strategy == st.name) {
      st.run(run);
      return run.result;
    }
  std::string names;
  for (const Strategy& st : kStrategies) names += std::string(names.empty() ? "" : ", ") + st.name;
  run.result.error = "unknown strategy '" + options.strategy + "' (strategies: " + names + ")";
  return run.result;
}

}  // namespace descent::tune
