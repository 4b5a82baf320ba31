#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ for a while (CTest's libfuzzer_* tests call it too).
#   scripts/fuzz.sh [TARGET|all] [SECONDS]   TARGET: frontend npy schedule repl (default all,
#                                            one after the other); SECONDS default 60 each
# Needs the fuzz build (DESCENT_FUZZ_BUILD, default build-fuzz/):
#   CC=clang-15 CXX=clang++-15 cmake -S . -B build-fuzz -G Ninja -DDESCENT_FUZZ=ON
#   cmake --build build-fuzz -j2 --target fuzz_frontend fuzz_npy fuzz_schedule fuzz_repl
# The committed corpus fuzz/corpus/TARGET/ is only read; new finds go to the scratch corpus
# BUILD/fuzz-corpus/TARGET/ (kept between runs, so longer campaigns build on each other) and
# crashes to BUILD/fuzz-artifacts/TARGET/. Exits non-zero when a target finds a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD="${DESCENT_FUZZ_BUILD:-build-fuzz}"
SECONDS_EACH="${2:-60}"
TARGETS=(frontend npy schedule repl)
if [ -n "${1:-}" ] && [ "$1" != all ]; then TARGETS=("$1"); fi

status=0
for t in "${TARGETS[@]}"; do
  bin="$BUILD/fuzz_$t"
  if [ ! -x "$bin" ]; then
    echo "fuzz.sh: no $bin (build it: cmake --build $BUILD -j2 --target fuzz_$t)" >&2
    exit 2
  fi
  scratch="$BUILD/fuzz-corpus/$t"
  artifacts="$BUILD/fuzz-artifacts/$t"
  mkdir -p "$scratch" "$artifacts"
  dict=()  # fuzz/TARGET.dict where the input is text with words worth knowing
  if [ -f "fuzz/$t.dict" ]; then dict=(-dict="fuzz/$t.dict"); fi
  echo "== fuzz_$t for ${SECONDS_EACH}s (scratch corpus $scratch)"
  # allocator_may_return_null: a failed allocation takes the product's out-of-memory path
  # (an error value) instead of ASan's report, as it would outside the sanitizer.
  ASAN_OPTIONS="allocator_may_return_null=1:${ASAN_OPTIONS:-}" \
  "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
    "${dict[@]}" -artifact_prefix="$artifacts/" -print_final_stats=1 \
    "$scratch" "fuzz/corpus/$t"
  rc=$?
  if [ $rc -ne 0 ]; then
    status=$rc
    cat >&2 <<HELP
fuzz.sh: fuzz_$t failed (exit $rc); the input is in $artifacts/. To make it a regression input:
  $bin -minimize_crash=1 -runs=20000 -exact_artifact_path=/tmp/min-$t $artifacts/crash-...
  cp /tmp/min-$t fuzz/corpus/$t/regress-SHORT_NAME    # then fix the bug; the normal build's
  ./build/fuzz_${t}_replay fuzz/corpus/$t/regress-SHORT_NAME   # ctest replays it from then on
HELP
  fi
done
if [ $status -eq 0 ]; then
  echo "fuzz.sh: no failures. To keep new finds, merge into the committed corpus (small):"
  echo "  $BUILD/fuzz_TARGET -merge=1 fuzz/corpus/TARGET $BUILD/fuzz-corpus/TARGET"
fi
exit $status
