#!/usr/bin/env bash
# Regenerates the visualizer screenshots in docs/img/ the README and docs/visualizer.md show.
# Each is one `descent-viz --screenshot` call (it starts its own Xvfb when there is no display):
# the same commands a teacher can use to put a pane on a slide.
#   scripts/screenshots.sh            (after ./descent.sh test or scripts/setup.sh has built)
set -euo pipefail
cd "$(dirname "$0")/.."
viz=./build/descent-viz
out=docs/img
mkdir -p "$out"
shot() {  # shot NAME FILE ARGS...
  local name=$1 file=$2
  shift 2
  "$viz" "$file" --screenshot "$out/viz_$name.png" "$@"
  echo "$out/viz_$name.png"
}
shot source  examples/tour.ds   --pane source
shot tokens  examples/tour.ds   --pane tokens --do "tokens select 12"
shot ast     examples/tour.ds   --pane ast --do "ast view graph" --do "ast select 4"
shot stack   examples/tour.ds   --pane stack --do "stack step 40"
shot reg     examples/tour.ds   --pane reg --do "reg step 30"
shot llvm    examples/tour.ds   --pane llvm --do "llvm next-changed" --do "llvm next-changed"
shot machine examples/tour.ds   --pane machine --do "machine view asm"
shot graph   examples/mlp.ds    --pane graph --do "graph pass fuse_elementwise"
shot loops   examples/tour.ds   --pane loops --do "loops kernel matmul m=64 n=64 k=64" \
                                --do "loops sched split i 16" --do "loops sched parallel i_0"
shot bench   examples/tour.ds   --pane bench --do "bench run quick vector_add matmul_128"
