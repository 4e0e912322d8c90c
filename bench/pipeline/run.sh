#!/usr/bin/env bash
# On the GPU machine (CUDA driver, python3; no LLVM), from the repository
# root: transfer pipelining's benchmark (issue 27, "Benchmark") as
# bench/pipeline/prepare.sh built it, in one call. Each kernel of
# pipeline.cu (vecadd, stencil1d, stencil2d, blackscholes, sepia, filter,
# matmul_sh, matmul_rh) in host mode (inputs rewritten on the host, copied
# in, one launch, results copied back), under:
#   bound         (d) the nvcc build with --bound: pinned host arrays, the
#                 copies in, the kernel and the copies back each timed
#                 alone by events; bound_ms = max(send, kernel, receive);
#   host-serial   (a) the Cleave build on gpu0, CLEAVE_TUNE=pipeline=
#                 host-serial: the copies land in the runtime's host
#                 copies, the launch uploads them whole, then runs;
#   host-piped    (b) the same with CLEAVE_TUNE=pipeline=host: the launch
#                 pipelined (chunks sent, run and received on three
#                 streams);
#   cpu+gpu0      (c) CLEAVE_DEVICES=cpu,gpu0 with pipeline=host: the CPU
#                 computes its share in place, gpu0 pipelines the rest,
#                 under the model;
#   streams       (e) the nvcc build with --streams (vecadd, blackscholes):
#                 the program's own pipeline, pinned memory, 4 streams,
#                 8, 16 and 32 chunks;
#   cpu           the Cleave build on the CPU alone;
#   gpu0          the Cleave build on gpu0, defaults (the program's copies
#                 go straight to the GPU, its home device);
#   nvcc          the nvcc build (CUDA's own pageable copies);
#   streams-cleave the Cleave build with --streams on gpu0: a program that
#                 pipelines itself, which Cleave must not slow down;
# then host-piped and cpu+gpu0 once more with one repetition under
# CLEAVE_LOG=plan ($OUT/plans.log: the chunks, their sizes and bytes).
#   bench/pipeline/run.sh [CARRY_DIR]       (default build/gpu-carry-pipeline)
# Writes to $OUT (default .): pipeline.jsonl (the program's lines, each
# with its configuration's label), pipeline.log (progress, each run's
# PASS/FAIL, stderr), plans.log, pipeline.md (bench/pipeline/report.py:
# medians, the ratios against issue 27's targets). Environment: REPS (5),
# SCALE (1), KERNELS (all), PROFILE (the device profile of every Cleave
# run, CLEAVE_PROFILE: the carry's profile.json, which prepare.sh copied),
# SMALL (set: the programs' --small sizes, to try the script), TIMEOUT per
# configuration (120 s), BUDGET (450 s: no configuration runs past it;
# those left are skipped, and said so).
# Exit status 0 when every run finished and computed right.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
carry=$(cd "${1:-$root/build/gpu-carry-pipeline}" && pwd)
out=${OUT:-.}
mkdir -p "$out"
jsonl=$out/pipeline.jsonl
log=$out/pipeline.log
plans=$out/plans.log
: > "$jsonl"
: > "$log"
: > "$plans"
export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
args=(--reps "${REPS:-5}" --scale "${SCALE:-1}")
[ -n "${KERNELS:-}" ] && args+=(--kernels "$KERNELS")
[ -n "${SMALL:-}" ] && args+=(--small)
tmo=${TIMEOUT:-120}
budget=${BUDGET:-450}
start=$(date +%s)
fails=0
say() { echo "$*" | tee -a "$log"; }
say "# pipeline benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ), host $(hostname), commit $(tr '\n' ' ' < "$carry/COMMIT")"
nvidia-smi -L 2>/dev/null | tee -a "$log"
say "cpus: $(nproc); load: $(uptime)"

source "$root/bench/pipeline/one.sh"

profile=$(realpath "${PROFILE:-$carry/profile.json}")
say "profile: $profile"
cl=(CLEAVE_CACHE_DIR=off CLEAVE_PROFILE="$profile")
gpu=("${cl[@]}" CLEAVE_DEVICES=gpu0)
both=("${cl[@]}" CLEAVE_DEVICES=cpu,gpu0)
# The targets' configurations first, so that a spent budget skips the
# context, not them.
one bound X=1 -- "$carry/bin/pipeline.nvcc" --bound
one host-serial "${gpu[@]}" CLEAVE_TUNE=pipeline=host-serial -- "$carry/bin/pipeline.cleave"
one host-piped "${gpu[@]}" CLEAVE_TUNE=pipeline=host -- "$carry/bin/pipeline.cleave"
one cpu+gpu0 "${both[@]}" CLEAVE_TUNE=pipeline=host -- "$carry/bin/pipeline.cleave"
one streams X=1 -- "$carry/bin/pipeline.nvcc" --streams
one cpu "${cl[@]}" CLEAVE_DEVICES=cpu -- "$carry/bin/pipeline.cleave"
one plans-host-piped "${gpu[@]}" CLEAVE_TUNE=pipeline=host CLEAVE_LOG=plan -- "$carry/bin/pipeline.cleave"
one plans-cpu+gpu0 "${both[@]}" CLEAVE_TUNE=pipeline=host CLEAVE_LOG=plan -- "$carry/bin/pipeline.cleave"
one gpu0 "${gpu[@]}" -- "$carry/bin/pipeline.cleave"
one streams-cleave "${gpu[@]}" -- "$carry/bin/pipeline.cleave" --streams
one nvcc X=1 -- "$carry/bin/pipeline.nvcc"

python3 "$root/bench/pipeline/report.py" "$jsonl" "$plans" > "$out/pipeline.md" ||
  fails=$((fails + 1))
tee -a "$log" < "$out/pipeline.md"
grep -q '"ok": false' "$jsonl" && fails=$((fails + 1))
say "total: $(( $(date +%s) - start )) s, $fails failure(s)"
exit $(( fails > 0 ))
