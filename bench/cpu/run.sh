#!/usr/bin/env bash
# Cleave CPU variant vs PoCL 3.1 vs OpenMP, same machine, same thread counts.
#
#   bench/cpu/run.sh [THREADS...]        (default: 1 and every core: "1 $(nproc)")
#
# Environment:
#   BUILD_DIR   Cleave build tree with bin/cleave-cpu-test and
#               runtime/libcleave-rt-cpu.a (default: build). Built with ninja
#               if the targets are missing or stale.
#   SKIP_BUILD  1: do not run ninja in BUILD_DIR
#   CUDA_PATH   for the CUDA device compilation (default /usr/local/cuda)
#   KERNELS     comma-separated subset (default: all)
#   BUDGET_MS   target time per variant and kernel for the timed reps
#               (reps = clamp(BUDGET_MS / first-run time, 10, 50)); default 1500
#   OUT_NAME    results basename (default cpu-vs-pocl-<date>-<host>-<commit>)
#
# Writes bench/results/cpu-vs-pocl/$OUT_NAME.jsonl (one line per kernel, variant and
# thread count, with every repetition) and bench/results/cpu-vs-pocl/$OUT_NAME.md (the
# summary table, also printed). Intermediate files go to $BUILD_DIR/bench-cpu.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=${BUILD_DIR:-build}
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
CUDA_PATH=${CUDA_PATH:-/usr/local/cuda}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-19/bin}
BUDGET_MS=${BUDGET_MS:-1500}
THREADS=("$@")
[ ${#THREADS[@]} -gt 0 ] || THREADS=(1 "$(nproc)")
# Deduplicate (on a 1-core machine "1 1").
THREADS=($(printf '%s\n' "${THREADS[@]}" | awk '!seen[$0]++'))
KDIR="$ROOT/bench/cpu/kernels"
ALL_KERNELS="vecadd triad blackscholes matmul_naive matmul_tiled transpose reduction jacobi nbody sepia"
W="$BUILD_DIR/bench-cpu"
mkdir -p "$W" "$ROOT/bench/results"

# 1. Cleave: compiler tool and CPU runtime (SKIP_BUILD=1: use them as they are).
[ "${SKIP_BUILD:-0}" = 1 ] || ninja -C "$BUILD_DIR" cleave-cpu-test cleave-rt-cpu >/dev/null

# 2. CUDA kernels -> device IR -> CPU-variant objects (and the optimized
#    host IR, kept for docs/cpu-performance.md).
CUDA_FLAGS=(-x cuda --cuda-device-only --cuda-gpu-arch=sm_90 "--cuda-path=$CUDA_PATH"
  -Wno-unknown-cuda-version -isystem "$ROOT/compat/cuda" -isystem "$CUDA_PATH/include/cccl"
  -O2 -S -emit-llvm)
OBJS=()
for k in $ALL_KERNELS; do
  "$LLVM_BIN/clang++" "${CUDA_FLAGS[@]}" "$KDIR/$k.cu" -o "$W/$k.dev.ll"
  "$BUILD_DIR/bin/cleave-cpu-test" "$W/$k.dev.ll" -o "$W/$k.o"
  "$BUILD_DIR/bin/cleave-cpu-test" -S "$W/$k.dev.ll" -o "$W/$k.host.ll"
  OBJS+=("$W/$k.o")
done

# 3. The driver (also the OpenMP versions): g++ -O3 for x86-64-v3, the
#    same ISA level as Cleave's default target CPU.
g++ -std=c++17 -O3 -march=x86-64-v3 -fopenmp -I"$ROOT/runtime/include" \
  "$ROOT/bench/cpu/bench.cpp" "${OBJS[@]}" "$BUILD_DIR/runtime/libcleave-rt-cpu.a" \
  -ltbb -lOpenCL -lpthread -o "$W/cpu-bench"

# 4. Run, one process per thread count (PoCL reads its thread count once).
HOST=$(hostname -s)
DATE=$(date -u +%Y-%m-%d)
COMMIT=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
OUT_NAME=${OUT_NAME:-cpu-vs-pocl-$DATE-$HOST-${COMMIT:0:7}}
mkdir -p "$ROOT/bench/results/cpu-vs-pocl"
JSONL="$ROOT/bench/results/cpu-vs-pocl/$OUT_NAME.jsonl"
MD="$ROOT/bench/results/cpu-vs-pocl/$OUT_NAME.md"
DIRTY=false
[ -z "$(git -C "$ROOT" status --porcelain -- lib runtime tools include bench/cpu 2>/dev/null)" ] || DIRTY=true
CPU_MODEL=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
CORES=$(nproc)
CMD="BUILD_DIR=${BUILD_DIR#$ROOT/} bench/cpu/run.sh ${THREADS[*]}"
META=$(printf '"bench":"cpu-vs-pocl","git_commit":"%s","git_dirty":%s,"host":"%s","date":"%s","device":{"cpu":"%s","cores":%s,"isa":"x86-64-v3"},"command":"%s"' \
  "$COMMIT" "$DIRTY" "$HOST" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$CPU_MODEL" "$CORES" "$CMD")
: > "$JSONL"
UPTIME_BEFORE=$(uptime)
export POCL_CACHE_DIR="$W/pocl-cache"
for t in "${THREADS[@]}"; do
  echo "== $t thread(s); load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  POCL_MAX_PTHREAD_COUNT=$t OMP_NUM_THREADS=$t OMP_PROC_BIND=false \
    "$W/cpu-bench" --threads "$t" --cl-dir "$KDIR" --meta "$META" \
    --budget-ms "$BUDGET_MS" ${KERNELS:+--kernels "$KERNELS"} >> "$JSONL"
done
UPTIME_AFTER=$(uptime)

# 5. Summary.
python3 "$ROOT/bench/cpu/summarize.py" "$JSONL" --command "$CMD" \
  --uptime-before "$UPTIME_BEFORE" --uptime-after "$UPTIME_AFTER" | tee "$MD"
echo "raw: $JSONL" >&2
echo "summary: $MD" >&2
