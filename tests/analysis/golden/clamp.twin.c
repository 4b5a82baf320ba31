/* C twin of clamp.ds, for Frama-C's Eva (descent analyze --compare-eva).
 *
 * int is int64_t, float is double, bool is int (0 or 1). Descent's int arithmetic
 * wraps around (modulo 2^64); C leaves signed overflow undefined, so where Descent
 * wraps Eva reports a signed-overflow alarm and goes on with the values that did not.
 * print is dropped: descent_use_*() receives its arguments, which are still evaluated.
 * Frama_C_show_each_X(x) after each assignment, at each iteration's start (the loop
 * variable) and on entry to each function (its parameters) asks Eva for the value. */
#include <stdint.h>

static void descent_use_int(int64_t v) { (void)v; }

void Frama_C_show_each_i(int64_t);
void Frama_C_show_each_total(int64_t);
void Frama_C_show_each_x(int64_t);

int64_t clamp(int64_t x);

int64_t clamp(int64_t x) {
  Frama_C_show_each_x(x);
  if (x < 0) {
    return 0;
  }
  if (x > 100) {
    return 100;
  }
  return x;
}

int main(void) {
  int64_t total;
  int64_t i;
  total = 0;
  Frama_C_show_each_total(total);
  for (int64_t i_next = 0, i_end = 10; i_next < i_end; i_next++) {
    i = i_next;
    Frama_C_show_each_i(i);
    total += clamp(i * 20);
    Frama_C_show_each_total(total);
  }
  descent_use_int(total);
  return 0;
}
