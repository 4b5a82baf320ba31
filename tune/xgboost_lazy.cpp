// XGBoost's C API, opened with dlopen the first time the cost model calls it (issue 34:
// start-up). libxgboost brings libgomp and libdmlc with it and costs every start of
// `descent` milliseconds, yet only a tuning job trains or asks the model. So descent_tune
// does not link it: the C API's functions that cost_model.cpp calls are defined here, each
// forwarding to the library opened on the first call (RTLD_LOCAL: the library's own calls
// stay inside it). cost_model.cpp is written against xgboost/c_api.h as before. Without the
// library, every call fails (-1) and XGBGetLastError says why, which the model reports.
#include <dlfcn.h>
#include <xgboost/c_api.h>

#include <string>
#include <type_traits>

namespace {

struct Xgb {
  decltype(&XGBGetLastError) get_last_error = nullptr;
  decltype(&XGBSetGlobalConfig) set_global_config = nullptr;
  decltype(&XGBoosterCreate) booster_create = nullptr;
  decltype(&XGBoosterFree) booster_free = nullptr;
  decltype(&XGBoosterPredict) booster_predict = nullptr;
  decltype(&XGBoosterSetParam) booster_set_param = nullptr;
  decltype(&XGBoosterUpdateOneIter) booster_update_one_iter = nullptr;
  decltype(&XGDMatrixCreateFromMat) dmatrix_create_from_mat = nullptr;
  decltype(&XGDMatrixFree) dmatrix_free = nullptr;
  decltype(&XGDMatrixSetFloatInfo) dmatrix_set_float_info = nullptr;
  std::string error;  // why it is not there
};

const Xgb& xgb() {
  static const Xgb x = [] {
    Xgb l;
    void* h = dlopen(DESCENT_XGBOOST_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libxgboost.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* why = dlerror();
      l.error = std::string("XGBoost (the cost model's learner) could not be loaded: ") +
                (why ? why : "unknown reason") + " (scripts/setup.sh installs libxgboost-dev)";
      return l;
    }
    auto get = [h](auto& slot, const char* name) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(dlsym(h, name));
    };
    get(l.get_last_error, "XGBGetLastError");
    get(l.set_global_config, "XGBSetGlobalConfig");
    get(l.booster_create, "XGBoosterCreate");
    get(l.booster_free, "XGBoosterFree");
    get(l.booster_predict, "XGBoosterPredict");
    get(l.booster_set_param, "XGBoosterSetParam");
    get(l.booster_update_one_iter, "XGBoosterUpdateOneIter");
    get(l.dmatrix_create_from_mat, "XGDMatrixCreateFromMat");
    get(l.dmatrix_free, "XGDMatrixFree");
    get(l.dmatrix_set_float_info, "XGDMatrixSetFloatInfo");
    if (!l.get_last_error || !l.booster_create || !l.booster_predict || !l.dmatrix_create_from_mat)
      l.error = "the XGBoost library opened lacks the C API functions the cost model needs";
    return l;
  }();
  return x;
}

}  // namespace

extern "C" {

const char* XGBGetLastError() {
  const Xgb& x = xgb();
  return x.error.empty() && x.get_last_error ? x.get_last_error() : x.error.c_str();
}
int XGBSetGlobalConfig(const char* config) {
  auto f = xgb().set_global_config;
  return f ? f(config) : -1;
}
int XGBoosterCreate(const DMatrixHandle dmats[], bst_ulong len, BoosterHandle* out) {
  auto f = xgb().booster_create;
  return f ? f(dmats, len, out) : -1;
}
int XGBoosterFree(BoosterHandle handle) {
  auto f = xgb().booster_free;
  return f ? f(handle) : -1;
}
int XGBoosterPredict(BoosterHandle handle, DMatrixHandle dmat, int option_mask, unsigned ntree_limit,
                     int training, bst_ulong* out_len, const float** out_result) {
  auto f = xgb().booster_predict;
  return f ? f(handle, dmat, option_mask, ntree_limit, training, out_len, out_result) : -1;
}
int XGBoosterSetParam(BoosterHandle handle, const char* name, const char* value) {
  auto f = xgb().booster_set_param;
  return f ? f(handle, name, value) : -1;
}
int XGBoosterUpdateOneIter(BoosterHandle handle, int iter, DMatrixHandle dtrain) {
  auto f = xgb().booster_update_one_iter;
  return f ? f(handle, iter, dtrain) : -1;
}
int XGDMatrixCreateFromMat(const float* data, bst_ulong nrow, bst_ulong ncol, float missing,
                           DMatrixHandle* out) {
  auto f = xgb().dmatrix_create_from_mat;
  return f ? f(data, nrow, ncol, missing, out) : -1;
}
int XGDMatrixFree(DMatrixHandle handle) {
  auto f = xgb().dmatrix_free;
  return f ? f(handle) : -1;
}
int XGDMatrixSetFloatInfo(DMatrixHandle handle, const char* field, const float* array, bst_ulong len) {
  auto f = xgb().dmatrix_set_float_info;
  return f ? f(handle, field, array, len) : -1;
}

}  // extern "C"
