#!/usr/bin/env bash
# Regenerates the visualizer screenshots in docs/img/ the README and docs/visualizer.md show,
# and the lesson pictures for the docs (docs/img/lesson_*.png: the stack VM mid-recursion,
# register live ranges with spills, the tensor graph before/after fusion, a tiled loop nest).
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
shot machine_compare examples/tour.ds --pane machine --do "machine view asm" \
  --do "machine function fib" --do "machine encodings off" --do "machine target x86-64" \
  --do "machine compare aarch64"
# The native backend's instruction selection for fib: each DAG node filled in the colour of
# the pattern that covered it, the legend above.
shot native  examples/tour.ds   --pane native --do "native stage isel" --do "native function fib"
# The same on the second target: AArch64's pattern names in the legend.
shot native_aarch64 examples/tour.ds --pane native --do "native target aarch64" --do "native stage isel" \
  --do "native function fib"
# Both targets' register allocation side by side: x86-64 spills the float live across the
# call, AAPCS64 keeps it in d8.
shot native_compare examples/native.ds --pane native --do "native stage regalloc" \
  --do "native function plus_area" --do "native compare on"
# The analysis pane at the solver step that widens the while loop's head (B5): k jumps from
# [0, 1] towards +inf; narrowing later wins back k in [1, 100].
shot analysis examples/analysis.ds --pane analysis --do "analysis step block 5" \
                                 --do "analysis step block 5"
shot graph   examples/mlp.ds    --pane graph --do "graph pass fuse_elementwise"
shot digits  examples/mlp_digits/mlp_digits.ds --pane graph --do "graph pass fuse_elementwise"
shot loops   examples/tour.ds   --pane loops --do "loops kernel matmul m=64 n=64 k=64" \
                                --do "loops sched split i 16" --do "loops sched parallel i_0"
shot tune    examples/tour.ds   --pane tune --do "loops kernel matmul m=256 n=256 k=256" \
                                --do "tune run trials=24"
shot bench   examples/tour.ds   --pane bench --do "bench run quick vector_add matmul_128"
# The labs pane works in ./descent-labs: a scratch folder, so the picture is of a fresh start.
labs_dir=$(mktemp -d)
(cd "$labs_dir" && "$OLDPWD/$viz" "$OLDPWD/examples/tour.ds" --screenshot "$OLDPWD/$out/viz_labs.png" \
  --pane labs --do "labs select no_spill" --do "labs start" --do "labs check")
echo "$out/viz_labs.png"
rm -rf "$labs_dir"

# The lesson pictures. The spill lesson needs more values live at once than 3 registers
# hold: its program is written here, so the picture and its source stay together.
spills=$(mktemp --suffix=.ds)
trap 'rm -f "$spills"' EXIT
cat >"$spills" <<'DS'
# Six values live at once: with 3 registers, the allocator spills some to the frame.
fn mix(a: int, b: int) -> int {
  c = a + b
  d = a * b
  e = c - d
  f = c * d + e
  return a + b + c + d + e + f
}
print(mix(3, 4))
DS
lesson() {  # lesson NAME FILE ARGS...
  local name=$1 file=$2
  shift 2
  "$viz" "$file" --screenshot "$out/lesson_$name.png" "$@"
  echo "$out/lesson_$name.png"
}
lesson stack_vm       examples/tour.ds --pane stack --do "stack break 37 fib" \
                                       --do "stack continue" --do "stack continue" --do "stack continue"
lesson reg_spills     "$spills"        --pane reg --do "reg registers 3" --do "reg function mix" \
                                       --do "reg break 10 mix" --do "reg continue"
lesson graph_fusion   examples/mlp.ds  --pane graph --do "graph pass fuse_elementwise"
lesson loop_nest_tiled examples/tour.ds --pane loops --do "loops kernel matmul m=64 n=64 k=64" \
                                       --do "loops sched tile i j 8 16"

# Flash attention in the loop-nest pane: the prelude's attention as lowered (five nests, the
# scores a buffer), then after the road of docs/transformers.md section 4 (one pass per row,
# the trace of steps beside it, the last step's lines in green).
flash_kernel="loops kernel attention h=1 s=64 t=64 d=16 e=16"
lesson flash_unfused  examples/attention.ds --pane loops --do "$flash_kernel"
flash_steps=(--do "$flash_kernel")
for step in "reverse_compute_at mx sc_acc.i" "reverse_compute_at p sc_acc.i" \
            "reverse_compute_at l sc_acc.i" "reverse_compute_at out_acc sc_acc.i" \
            "reverse_compute_at out sc_acc.i" "set_scope sc local" "set_scope sc_acc local" \
            "set_scope p local" "set_scope mx local" "set_scope l local" \
            "set_scope out_acc local" "reorder out_acc.j out_acc.c" "online_softmax mx" \
            "merge sc.j mx.j"; do
  flash_steps+=(--do "loops sched $step")
done
lesson flash_fused    examples/attention.ds --pane loops "${flash_steps[@]}"

# The iteration order of a 32 x 32 matmul, naive and tiled 8 x 8: the loop-nest pane's own
# PNG export (one 16-pixel square per element of C), and for the tiled one the pane itself
# part way through (300 of 1024 visits).
order() {  # order NAME SCREENSHOT ACTIONS...
  local name=$1 screenshot=$2
  shift 2
  "$viz" examples/tour.ds --screenshot "$screenshot" --pane loops \
    --do "loops kernel matmul n=32 m=32 k=8" "$@" \
    --do "loops order export $out/lesson_order_$name.png" --do "loops order step 300"
  echo "$out/lesson_order_$name.png"
}
scratch=$(mktemp --suffix=.png)
trap 'rm -f "$spills" "$scratch"' EXIT
order naive "$scratch"
order tiled "$out/lesson_order_tiled_pane.png" --do "loops sched tile i j 8 8"
echo "$out/lesson_order_tiled_pane.png"

# The tuner's two charts as `descent tune --plot` draws them: best-so-far against trials, and
# the cost model's scores against the measured speeds (docs/tuning.md).
./build/descent tune examples/tour.ds matmul --dim n=256 --dim m=256 --dim k=256 --trials 48 \
  --repeats 3 --plot "$out/tune_plot.png" >/dev/null 2>&1
echo "$out/tune_plot.png"

# The loss curve of the training example as `descent run --plot` draws it (docs/training.md).
./build/descent run examples/train_digits/train_digits.ds --device cpu \
  --plot "$out/train_loss.png" >/dev/null 2>&1
echo "$out/train_loss.png"
