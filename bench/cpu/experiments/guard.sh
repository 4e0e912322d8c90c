#!/usr/bin/env bash
# Cost of the thread guard's masked loads/stores: bench/cpu/experiments/guard.sh
# (BUILD_DIR as in ../run.sh; a one-off experiment, not part of the results).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD_DIR=${BUILD_DIR:-build}
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
CUDA_PATH=${CUDA_PATH:-/usr/local/cuda}
W="$BUILD_DIR/bench-cpu/guard"
mkdir -p "$W"
D="$ROOT/bench/cpu/experiments"
/usr/lib/llvm-19/bin/clang++ -x cuda --cuda-device-only --cuda-gpu-arch=sm_90 \
  "--cuda-path=$CUDA_PATH" -Wno-unknown-cuda-version -isystem "$ROOT/compat/cuda" \
  -isystem "$CUDA_PATH/include/cccl" -O2 -S -emit-llvm "$D/guard.cu" -o "$W/guard.ll"
"$BUILD_DIR/bin/cleave-cpu-test" "$W/guard.ll" -o "$W/guard.o"
g++ -O2 -I"$ROOT/runtime/include" "$D/guard.cpp" "$W/guard.o" \
  "$BUILD_DIR/runtime/libcleave-rt-cpu.a" -ltbb -o "$W/guard"
"$W/guard"
echo "vmaskmovps in the object: $(objdump -d "$W/guard.o" | grep -c vmaskmovps)"
