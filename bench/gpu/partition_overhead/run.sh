#!/usr/bin/env bash
# Run on the GPU machine (CUDA and g++, no LLVM), from anywhere:
#   CLEAVE_COMMIT=<sha> CLEAVE_TREE=<clean|dirty:...> bench/gpu/partition_overhead/run.sh [REPS]
# Builds the driver-API harness, loads the PTX in ptx/ (gen_ptx.sh), checks
# every kernel, times original and partition variants side by side, and
# writes $OUT/partition_overhead.jsonl (or ./partition_overhead.jsonl).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out=${OUT:-.}
cuda=${CUDA_PATH:-/usr/local/cuda}
export CLEAVE_COMMIT=${CLEAVE_COMMIT:-$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)}
export CLEAVE_DATE=${CLEAVE_DATE:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}
bin=$(mktemp -d)/harness
g++ -O2 -std=c++17 -I"$cuda/include" -I"$repo/runtime/include" \
    "$here/harness.cpp" -o "$bin" -L"$cuda/lib64/stubs" -lcuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv 2>/dev/null | tee "$out/nvidia-smi.txt" || true
"$bin" "$here/ptx" "$out/partition_overhead.jsonl" "${1:-30}"
