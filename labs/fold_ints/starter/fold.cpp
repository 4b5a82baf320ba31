// Lab fold_ints: constant folding of integer +, - and * (see fold_lab.h and README.md).
#include "fold_lab.h"

using namespace descent;

ExprPtr fold_int_binary(const Expr& e) {
  (void)e;
  return nullptr;  // folds nothing yet
}
