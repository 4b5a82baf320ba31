// Cost models for the evolutionary strategy (issue 17): a learner that predicts how fast a
// loop nest runs from its features (features.h), fitted to the candidates measured so far.
//
//   xgboost   gradient-boosted trees from Debian's libxgboost (XGBoost's C API), the model
//             TVM's AutoTVM and MetaSchedule use. It learns the *normalised throughput* of
//             each candidate, best time / its time (1 for the fastest, towards 0 for slow
//             ones), as MetaSchedule does: a scale that does not depend on the kernel's size.
//
// A model is only as good as its data: with a handful of measurements it ranks no better than
// chance, which is why the evolutionary strategy always measures one unranked candidate per
// round, and why search results report the model's rank correlation on candidates it had not
// seen (SearchResult::rank_correlation).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tune/search.h"

namespace descent::tune {

// "xgboost"; null for a name it does not know.
std::unique_ptr<CostModel> make_cost_model(const std::string& name);
std::vector<std::string> cost_models();

}  // namespace descent::tune
