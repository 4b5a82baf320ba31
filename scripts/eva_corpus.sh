#!/usr/bin/env bash
# The Eva side by side over the analysis corpus (issue 37): for every program of
# tests/analysis/corpus, Descent's facts (default domain unless --domain) against Frama-C Eva's
# on the program's C twin, and the table of counts: facts where each is the more precise, error
# alarms (the corpus programs all run clean, so every error alarm outside a function the script
# never calls is a false alarm), wrap-around notes against Eva's signed-overflow alarms.
#   scripts/eva_corpus.sh               frama-c when installed, else the recorded logs (FILE.eva)
#   scripts/eva_corpus.sh --recorded    the recorded logs, as CI compares (test_analysis)
#   scripts/eva_corpus.sh --record      run frama-c and record its logs beside the programs
#   scripts/eva_corpus.sh --domain product [--detail]   other options go to `descent analyze`
# DESCENT=path/to/descent picks the binary (default: build/descent). Frama-C: Debian's
# frama-c-base (apt-get install frama-c-base); the Eva plug-in comes with it.
set -euo pipefail
cd "$(dirname "$0")/.."
descent=${DESCENT:-./build/descent}
mode=auto
detail=0
args=()
for a in "$@"; do
  case "$a" in
    --record) mode=record ;;
    --recorded) mode=recorded ;;
    --detail) detail=1 ;;
    *) args+=("$a") ;;
  esac
done
if [ "$mode" = auto ]; then
  if command -v frama-c >/dev/null; then mode=live; else mode=recorded; fi
fi
case "$mode" in
  record) args+=(--record-eva) ;;
  recorded) args+=(--eva-recorded) ;;
esac
[ "$detail" = 1 ] || args+=(--totals)
echo "Eva: $mode ($(command -v frama-c >/dev/null && frama-c -version || echo 'frama-c not installed'))"
exec "$descent" analyze tests/analysis/corpus/*.ds --compare-eva "${args[@]}"
