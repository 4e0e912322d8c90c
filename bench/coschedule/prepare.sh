#!/usr/bin/env bash
# Here (the machine with LLVM and nvcc): builds co-scheduling's benchmark
# (bench/coschedule/coschedule.cu) twice, by nvcc -O3 -arch=sm_90 and by
# `cleave compile -O3`, into a folder to carry to the GPU machine, where
# bench/coschedule/run.sh runs it (the GPU machine has no LLVM).
#   bench/coschedule/prepare.sh [CARRY_DIR]  (default build/gpu-carry-coschedule)
# Environment: CLEAVE (build/bin/cleave), NVCC (/usr/local/cuda/bin/nvcc).
# The folder holds bin/coschedule.{nvcc,cleave}, lib/ (libcleave_rt.so and
# libtbb.so.12), COMMIT, and a check: the Cleave build run here on the CPU
# at --small, every mix on 1 and 3 streams with the co-scheduler on, off,
# always and at a forced ratio (check.jsonl), which must compute right.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/carry.sh"
carry=$(realpath -m "${1:-$root/build/gpu-carry-coschedule}")
carry_start "$root" "$carry"
src=$root/bench/coschedule/coschedule.cu
"$nvcc" -O3 -arch=sm_90 "$src" -o "$carry/bin/coschedule.nvcc"
"$cleave" compile -O3 "$src" -o "$carry/bin/coschedule.cleave"
rm -f "$carry"/bin/*.cleave.cpp
carry_runtime "$lib" "$carry/lib"
carry_commit "$root" "$carry/COMMIT"
# The Cleave build on this machine's CPU, small sizes: it computes right,
# with the co-scheduler on, off, holding every launch (always), and at a
# forced ratio (the oracle's runs).
: > "$carry/check.jsonl"
for mix in ci mi mix all; do
  for s in 1 3; do
    for cs in on off always always,green=off,coratio=1:3; do
      LD_LIBRARY_PATH=$carry/lib CLEAVE_DEVICES=cpu CLEAVE_CACHE_DIR=off \
        CLEAVE_TUNE=coschedule=$cs "$carry/bin/coschedule.cleave" --small \
        --mix $mix --streams $s --instances 2 --reps 1 \
        --label "cpu-check-$cs" >> "$carry/check.jsonl"
    done
  done
done
! grep -q '"ok": false' "$carry/check.jsonl"
du -sh "$carry"
echo "carry: ${carry#$root/} (run there: bench/coschedule/run.sh ${carry#$root/})"
