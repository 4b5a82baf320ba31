// The XGBoost cost model through XGBoost's C API (cost_model.h). Each fit trains a new
// booster on every measurement so far: the data are tens to hundreds of rows, which takes
// milliseconds, and a fresh model never carries a bias from an earlier, smaller fit.
#include "tune/cost_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <mutex>

#include "tensor/launch.h"
#include "tune/features.h"

namespace descent::tune {
namespace {

// XGBoost logs to stdout by default; a library must not print.
void quiet() {
  static std::once_flag once;
  std::call_once(once, [] { XGBSetGlobalConfig("{\"verbosity\": 0}"); });
}

class XGBoostModel : public CostModel {
 public:
  ~XGBoostModel() override { reset(); }
  std::string name() const override { return "xgboost"; }

  bool fit(const std::vector<const tir::PrimFunc*>& funcs, const std::vector<double>& seconds,
           std::string* error) override {
    quiet();
    reset();
    if (funcs.empty() || funcs.size() != seconds.size()) {
      *error = "nothing to learn from";
      return false;
    }
    std::vector<float> rows, labels;
    for (size_t i = 0; i < funcs.size(); ++i) {
      std::vector<float> v = features(*funcs[i]);
      rows.insert(rows.end(), v.begin(), v.end());
      double flops = std::max(1.0, tensor::kernel_cost(*funcs[i]).flops);
      labels.push_back(float(seconds[i] > 0 ? std::log2(flops / seconds[i] / 1e9) : -30));
    }
    DMatrixHandle train = nullptr;
    const bst_ulong cols = feature_names().size();
    bool ok = XGDMatrixCreateFromMat(rows.data(), funcs.size(), cols, -1e30f, &train) == 0 &&
              XGDMatrixSetFloatInfo(train, "label", labels.data(), labels.size()) == 0 &&
              XGBoosterCreate(&train, 1, &booster_) == 0;
    const char* params[][2] = {{"objective", "reg:squarederror"}, {"max_depth", "6"},
                               {"eta", "0.2"},       {"min_child_weight", "0"},
                               {"nthread", "1"},     {"seed", "1"}};
    for (auto& p : params) ok = ok && XGBoosterSetParam(booster_, p[0], p[1]) == 0;
    for (int round = 0; ok && round < 30; ++round) ok = XGBoosterUpdateOneIter(booster_, round, train) == 0;
    if (!ok) *error = std::string("xgboost: ") + XGBGetLastError();
    if (train) XGDMatrixFree(train);
    if (!ok) reset();
    return ok;
  }

  std::vector<double> predict(const std::vector<const tir::PrimFunc*>& funcs) override {
    std::vector<double> out(funcs.size(), 0.0);
    if (!booster_ || funcs.empty()) return out;
    std::vector<float> rows;
    for (const auto* f : funcs) {
      std::vector<float> v = features(*f);
      rows.insert(rows.end(), v.begin(), v.end());
    }
    DMatrixHandle m = nullptr;
    bst_ulong len = 0;
    const float* result = nullptr;
    if (XGDMatrixCreateFromMat(rows.data(), funcs.size(), feature_names().size(), -1e30f, &m) == 0 &&
        XGBoosterPredict(booster_, m, 0, 0, 0, &len, &result) == 0 && len == funcs.size())
      for (size_t i = 0; i < funcs.size(); ++i) out[i] = result[i];
    if (m) XGDMatrixFree(m);
    return out;
  }

 private:
  void reset() {
    if (booster_) XGBoosterFree(booster_);
    booster_ = nullptr;
  }
  BoosterHandle booster_ = nullptr;
};

}  // namespace

std::unique_ptr<CostModel> make_cost_model(const std::string& name) {
  if (name == "xgboost") return std::make_unique<XGBoostModel>();
  return nullptr;
}

std::vector<std::string> cost_models() { return {"xgboost"}; }

}  // namespace descent::tune
