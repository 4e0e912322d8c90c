#!/usr/bin/env bash
# On the GPU machine, from the repository root: builds and runs
# bench/gpu/probe/halo_copy_cost.cu (nvcc) over 4 and 2 GPUs, then, if a
# headline carry directory is given, CLEAVE_LOG=phases of the headline's
# vecadd, jacobi2d and stencil3d on gpu0 and 4gpu (bench/gpu/headline/run.sh,
# PHASES=phases). Writes $OUT/halo_copy_cost.jsonl and, with the carry,
# $OUT/phases.log.
#   bench/gpu/probe/run-halo.sh [CARRY_DIR]
set -uo pipefail
out=${OUT:-.}
mkdir -p "$out"
nvcc -O3 -std=c++17 -arch=sm_90 bench/gpu/probe/halo_copy_cost.cu \
  -o /tmp/halo_copy_cost.bin || exit 1
for g in 4 2; do
  /tmp/halo_copy_cost.bin "$g" 300 | tee -a "$out/halo_copy_cost.jsonl"
done
if [ -n "${1:-}" ]; then
  PHASES=phases SETS="gpu0 4gpu" DEADLINE=300 bash bench/gpu/headline/run.sh "$1" |
    tail -3
fi
