// Red team: the reference solution by its absolute path (the test writes the real one).
#include "@SOURCE_ROOT@/labs/solutions/stack_ops/ops.cpp"
