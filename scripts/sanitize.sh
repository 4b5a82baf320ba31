#!/usr/bin/env bash
# Builds the whole project with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/
# and runs every test under it (docs/reliability.md). About 11 minutes to build and 12 to
# test on a 2-core machine; run it before a release and after touching memory-heavy code.
#   scripts/sanitize.sh              configure (once), build, run all of CTest
#   scripts/sanitize.sh -R frontends extra arguments go to ctest
# Any report fails the test it happens in: -fno-sanitize-recover=all makes UBSan fatal, and
# ASan's leak checker runs at each test program's exit.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null   # packages (and the normal build, which the docs tests share)
if [ ! -f build-asan/build.ninja ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DDESCENT_SANITIZE=address,undefined
fi
cmake --build build-asan -j2
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
cd build-asan && ctest --output-on-failure -j2 --timeout 1500 "$@"
