// Cost models for the evolutionary strategy (issue 17): a learner that predicts how fast a
// loop nest runs from its features (features.h), fitted to the candidates measured so far.
//
//   xgboost   gradient-boosted trees from Debian's libxgboost (XGBoost's C API), the model
//             TVM's AutoTVM and MetaSchedule use. It learns each candidate's throughput on
//             a log scale, log2(GFLOP/s): like MetaSchedule's normalised throughput (best
//             time / its time) it does not depend on the kernel's size, but unlike it, it
//             does not move when the search finds a faster best, so the scores of one
//             round's model and the next are on the same scale (issue 34: the normalised
//             label put early rounds' candidates above later, faster ones; on recorded matmul
//             data the rank correlation the search reports went from 0.34 to 0.50).
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
