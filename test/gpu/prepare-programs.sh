#!/usr/bin/env bash
# Here (the machine with LLVM): builds every example and the split benchmark
# with `cleave compile` into build/gpu-carry-programs/, with libcleave_rt.so
# and libtbb.so.12 next to them, for test/gpu/run-programs.sh on a GPU
# machine (which has no LLVM). Carry that directory with the `run` tool.
#   test/gpu/prepare-programs.sh [CLEAVE]     (default: build/bin/cleave)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/carry.sh"
cleave=${1:-$root/build/bin/cleave}
carry=$root/build/gpu-carry-programs
rm -rf "$carry"
mkdir -p "$carry/bin"
for src in "$root"/examples/*.cu; do
  name=$(basename "$src" .cu)
  "$cleave" compile -O3 "$src" -o "$carry/bin/$name"
done
"$cleave" compile -O3 "$root/bench/gpu/split/split.cu" -o "$carry/bin/split"
lib=$(dirname "$cleave")/../lib/libcleave_rt.so
carry_runtime "$lib" "$carry"
# The split benchmark's source for nvcc there, with the header it includes
# (../common/CudaCheck.h) at the same place relative to it.
mkdir -p "$carry/split" "$carry/common"
cp "$root/bench/gpu/split/split.cu" "$carry/split/"
cp "$root/bench/gpu/common/CudaCheck.h" "$carry/common/"
carry_commit "$root" "$carry/COMMIT"
du -sh "$carry"
