#!/usr/bin/env bash
# Here (the machine with LLVM and nvcc): builds the launch-cost programs by
# nvcc -O3 and by `cleave compile -O3` into build/gpu-carry-launch/, with
# libcleave_rt.so and libtbb.so.12, for bench/launch/run.sh on a GPU machine.
#   bench/launch/prepare.sh [CLEAVE]     (default: build/bin/cleave)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/carry.sh"
cleave=${1:-$root/build/bin/cleave}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
carry=$root/build/gpu-carry-launch
rm -rf "$carry"
mkdir -p "$carry/nvcc" "$carry/cleave"
for src in "$root"/bench/launch/*.cu; do
  name=$(basename "$src" .cu)
  "$nvcc" -O3 -arch=sm_90 "$src" -o "$carry/nvcc/$name"
  "$cleave" compile -O3 "$src" -o "$carry/cleave/$name"
done
carry_runtime "$(dirname "$cleave")/../lib/libcleave_rt.so" "$carry"
cp "$root/bench/launch/run.sh" "$root/bench/launch/phases.py" "$carry/"
carry_commit "$root" "$carry/COMMIT"
du -sh "$carry"
