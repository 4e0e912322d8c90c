#!/usr/bin/env bash
# Here (the machine with LLVM and nvcc): builds transfer pipelining's
# benchmark (bench/pipeline/pipeline.cu) twice, by nvcc -O3 -arch=sm_90 and
# by `cleave compile -O3`, into a folder to carry to the GPU machine, where
# bench/pipeline/run.sh runs it (the GPU machine has no LLVM).
#   bench/pipeline/prepare.sh [CARRY_DIR]    (default build/gpu-carry-pipeline)
# Environment: CLEAVE (build/bin/cleave), NVCC (/usr/local/cuda/bin/nvcc),
# PROFILE (profiles/h200x1-all.json: the device profile the Cleave runs
# get as CLEAVE_PROFILE, copied to profile.json).
# The folder holds bin/pipeline.{nvcc,cleave}, lib/ (libcleave_rt.so and
# libtbb.so.12), COMMIT, profile.json, and a check: the Cleave build run here on the CPU
# with --small, in host mode (8 kernels) and with --streams (vecadd and
# blackscholes, 3 chunk counts each) (check.jsonl): all 14 lines must pass.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/carry.sh"
carry=$(realpath -m "${1:-$root/build/gpu-carry-pipeline}")
carry_start "$root" "$carry"
src=$root/bench/pipeline/pipeline.cu
"$nvcc" -O3 -arch=sm_90 "$src" -o "$carry/bin/pipeline.nvcc"
"$cleave" compile -O3 "$src" -o "$carry/bin/pipeline.cleave"
rm -f "$carry"/bin/*.cleave.cpp
carry_runtime "$lib" "$carry/lib"
cp "${PROFILE:-$root/profiles/h200x1-all.json}" "$carry/profile.json"
carry_commit "$root" "$carry/COMMIT"
# The Cleave build on this machine's CPU, small sizes, every kernel in host
# mode and the hand-written streams pipeline: it computes right.
check() {
  LD_LIBRARY_PATH=$carry/lib CLEAVE_DEVICES=cpu CLEAVE_CACHE_DIR=off \
    "$carry/bin/pipeline.cleave" --small --reps 2 "$@" >> "$carry/check.jsonl"
}
: > "$carry/check.jsonl"
check --label cpu-check
check --streams --label cpu-streams-check
[ "$(grep -c '"ok": true' "$carry/check.jsonl")" = 14 ] ||
  { echo "prepare: the CPU check failed ($carry/check.jsonl)" >&2; exit 1; }
du -sh "$carry"
echo "carry: ${carry#$root/} (run there: bench/pipeline/run.sh ${carry#$root/})"
