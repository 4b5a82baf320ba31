#!/usr/bin/env bash
# Installs every Debian 12 package Descent and its roadmap need, when missing, then
# configures and builds with CMake + Ninja. Safe to run again: it only does what is missing.
#   scripts/setup.sh          set up and build (build/)
#   scripts/setup.sh fuzz     also configure build-fuzz/ with clang-15 and build only the
#                             libFuzzer targets (fuzz/) and the libraries they need
set -euo pipefail
cd "$(dirname "$0")/.."

# One list for the whole roadmap, so later tiers only add lines here.
PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  llvm-15-dev clang-15                  # LLVM backend (one libLLVM-15 in the process)
  libclang-common-15-dev                # libFuzzer and the sanitizer runtimes (fuzz/)
  libfmt-dev libcli11-dev nlohmann-json3-dev doctest-dev libedit-dev
  ocl-icd-opencl-dev opencl-headers opencl-clhpp-headers pocl-opencl-icd clinfo
  libimgui-dev libglfw3-dev libstb-dev libx11-dev fonts-dejavu-core   # the visualizer
  xvfb xauth libgl1-mesa-dri             # headless GUI tests
  libopenblas-dev lua5.4 python3         # benchmark references only
  graphviz                               # `dot` draws the DOT views (AST, graphs)
  libonnx-dev libprotobuf-dev            # `descent import`: reading ONNX models (importer/)
  libxgboost-dev                         # the tuner's cost model (tune/cost_model.cpp)
  pybind11-dev python3-dev python3-numpy # the Python module (python/): import descent
  python3-pytest python3-nbclient python3-nbformat python3-ipykernel  # its tests and notebooks
  bubblewrap                             # the labs' grading sandbox (proc/process.cpp)
  gcc-aarch64-linux-gnu gcc-riscv64-linux-gnu libc6-dev-arm64-cross libc6-dev-riscv64-cross
  qemu-user                              # cross-built programs run under qemu (proc/cross.cpp)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -f build/build.ninja ]; then
  # -O2 with line tables only (-g1): backtraces and sanitizer reports still name file and
  # line, and the build takes a quarter less time (objects a quarter the size) than with
  # full debug info. For a debugger's variables: cmake -B build -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g -DNDEBUG".
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
fi
# Two jobs: the project's machines have two cores, and LLVM-heavy files need the memory.
cmake --build build -j2

if [ "${1:-}" = fuzz ]; then
  # -O1 and line tables only: fast enough to fuzz, quicker to build, symbolized reports.
  if [ ! -f build-fuzz/build.ninja ]; then
    CC=clang-15 CXX=clang++-15 cmake -S . -B build-fuzz -G Ninja -DDESCENT_FUZZ=ON \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only"
  fi
  cmake --build build-fuzz -j2 --target fuzz_frontend fuzz_npy fuzz_schedule fuzz_repl
fi
