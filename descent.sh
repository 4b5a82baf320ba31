#!/usr/bin/env bash
# The two commands README promises, for a fresh Debian 12 machine:
#   ./descent.sh repl    set up, build and start the REPL
#   ./descent.sh test    set up, build and run every test, then fuzz each libFuzzer target
#                        for 30 s (build-fuzz/, clang-15; scripts/fuzz.sh runs them longer)
set -euo pipefail
cd "$(dirname "$0")"
case "${1:-repl}" in
  repl)
    scripts/setup.sh
    exec ./build/descent "${@:2}"
    ;;
  test)
    scripts/setup.sh fuzz
    (cd build && ctest --output-on-failure -j2)
    cd build-fuzz && ctest --output-on-failure -j2 -L libfuzzer
    ;;
  *)
    echo "usage: ./descent.sh [repl|test]" >&2
    exit 64
    ;;
esac
