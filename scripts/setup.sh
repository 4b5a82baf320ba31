#!/usr/bin/env bash
# Installs every Debian 12 package Descent and its roadmap need, when missing, then
# configures and builds with CMake + Ninja. Safe to run again: it only does what is missing.
#   scripts/setup.sh          set up and build (build/)
set -euo pipefail
cd "$(dirname "$0")/.."

# One list for the whole roadmap, so later tiers only add lines here.
PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  llvm-15-dev clang-15                  # LLVM backend (one libLLVM-15 in the process)
  libfmt-dev libcli11-dev nlohmann-json3-dev doctest-dev libedit-dev
  ocl-icd-opencl-dev opencl-headers opencl-clhpp-headers pocl-opencl-icd clinfo
  libimgui-dev libglfw3-dev libstb-dev libx11-dev fonts-dejavu-core   # the visualizer
  xvfb xauth libgl1-mesa-dri             # headless GUI tests
  libopenblas-dev lua5.4 python3         # benchmark references only
  graphviz                               # `dot` draws the DOT views (AST, graphs)
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
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
# Two jobs: the project's machines have two cores, and LLVM-heavy files need the memory.
cmake --build build -j2
