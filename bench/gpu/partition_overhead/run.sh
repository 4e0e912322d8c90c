#!/usr/bin/env bash
# Run on the GPU machine (CUDA and g++, no LLVM), from anywhere:
#   CLEAVE_COMMIT=<sha> CLEAVE_TREE=<clean|dirty:...> bench/gpu/partition_overhead/run.sh [REPS]
# Builds the driver-API harness, loads what gen_ptx.sh wrote in ptx/, checks
# every kernel and variant, times them side by side (partition-ready
# conventions against the original; nvcc's build against Cleave's), and
# writes to $OUT (or .): partition_overhead.jsonl, nvidia-smi.txt, and
# sass.tar.gz (cuobjdump -sass / -res-usage of every cubin, when cuobjdump
# is there). KERNELS=a,b limits the kernels; BUILDS="name ..." adds the
# Cleave builds gen_ptx.sh wrote to ptx/<name>/; SPLIT=1 also times each
# convention as three uneven ranges launched back to back.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out=${OUT:-.}
cuda=${CUDA_PATH:-/usr/local/cuda}
export CLEAVE_COMMIT=${CLEAVE_COMMIT:-$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)}
export CLEAVE_DATE=${CLEAVE_DATE:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}
bin=$(mktemp -d)/harness
g++ -O2 -std=c++17 -I"$cuda/include" -I"$repo/runtime/include" \
    -I"$repo/include" "$here/harness.cpp" "$repo/runtime/lib/program/Bundle.cpp" \
    "$repo/runtime/lib/program/Footprint.cpp" -o "$bin" -L"$cuda/lib64/stubs" -lcuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv 2>/dev/null | tee "$out/nvidia-smi.txt" || true
objdump=$(command -v cuobjdump || echo "$cuda/bin/cuobjdump")
if [ -x "$objdump" ]; then
  sass=$(mktemp -d)/sass
  for f in "$here"/ptx/*.cubin "$here"/ptx/*/*.cubin; do
    rel=${f#"$here/ptx/"}
    mkdir -p "$sass/$(dirname "$rel")"
    "$objdump" -sass "$f" > "$sass/${rel%.cubin}.sass"
    "$objdump" -res-usage "$f" > "$sass/${rel%.cubin}.res" 2>&1 || true
  done
  { "$objdump" --version; command -v nvcc >/dev/null && nvcc --version; } \
    > "$sass/tools-on-gpu-machine.txt" 2>&1 || true
  tar -C "$(dirname "$sass")" -czf "$out/sass.tar.gz" sass
fi
"$bin" "$here/ptx" "$out/partition_overhead.jsonl" "${1:-30}"
