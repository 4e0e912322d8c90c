#!/usr/bin/env bash
# On a machine with 2, 4 or 8 GPUs (CUDA driver, python3; no LLVM), from the
# repository root: host mode over several GPUs under the shared host link
# (issue 32), in one call. bench/pipeline's kernels, inputs on the host,
# one launch, results back, under:
#   bound        bench/pipeline's nvcc build --bound on gpu0: one GPU's
#                send, kernel and receive alone, the blocks and the bytes;
#   serial-1     the Cleave build on gpu0, CLEAVE_TUNE=pipeline=host-serial
#                (one GPU unpipelined: the reference of the >= 3.0x target);
#   serial-N     N GPUs (CLEAVE_DEVICES=gpu0,...), pipeline=host-serial:
#                unpipelined;
#   piped-N      the same with pipeline=host: each GPU's share pipelined;
#   plans-N      piped-N once more under CLEAVE_LOG=plan ($OUT/plans.log);
# for N = 2 and 4 (and 8 where there are 8 GPUs). The report
# (bench/linkstates/report.py) adds, per kernel and N, what bin/linkbound
# computes from the measured host-link states of the profile: the link
# bound max(T_k / N, G(D_s, D_r)) and the symmetric TPSM plan's predicted
# time (cleave/rt/MultiGpuTpsm.h), and checks the targets: piped-4 within
# 1.10x of its link bound, serial-1 / piped-4 >= 3.0.
#   bench/linkstates/run.sh [CARRY_DIR]     (default build/gpu-carry-linkstates)
# Writes to $OUT (default .): linkstates.jsonl, linkstates.log, plans.log,
# linkstates.md. Environment: PROFILE (the device profile, CLEAVE_PROFILE of
# every run and the planner's states: default the carry's
# profiles/h200x<GPUs>-all.json; an 8-GPU machine has none committed:
# calibrate it first, docs/calibrate.md), REPS (3), KERNELS (all), SMALL
# (the programs' --small sizes), TIMEOUT per configuration (120 s), BUDGET
# (540 s), DRY (set: no GPU; each GPU is a CPU device, --small sizes, the
# nvcc runs replaced by bound lines of the planner's own making for the
# 2x and 4x profiles: checks the script, the tool and the report here).
# Exit status 0 when every run finished and computed right.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
carry=$(cd "${1:-$root/build/gpu-carry-linkstates}" && pwd)
out=${OUT:-.}
mkdir -p "$out"
jsonl=$out/linkstates.jsonl
log=$out/linkstates.log
plans=$out/plans.log
: > "$jsonl"
: > "$log"
: > "$plans"
export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
dry=${DRY:-}
args=(--reps "${REPS:-3}")
[ -n "${KERNELS:-}" ] && args+=(--kernels "$KERNELS")
[ -n "${SMALL:-}$dry" ] && args+=(--small)
tmo=${TIMEOUT:-120}
budget=${BUDGET:-540}
start=$(date +%s)
fails=0
say() { echo "$*" | tee -a "$log"; }
if [ -n "$dry" ]; then
  ngpu=4
else
  ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
fi
profile=$(realpath "${PROFILE:-$carry/profiles/h200x${ngpu}-all.json}" 2>/dev/null)
say "# linkstates benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ), host $(hostname), commit $(tr '\n' ' ' < "$carry/COMMIT")${dry:+, DRY (CPU devices)}"
say "gpus: $ngpu; cpus: $(nproc); profile: $profile"
[ -f "$profile" ] || { say "no profile for $ngpu GPUs: calibrate (docs/calibrate.md) and set PROFILE"; exit 1; }
[ "$ngpu" -ge 2 ] || { say "fewer than 2 GPUs"; exit 1; }

source "$root/bench/pipeline/one.sh"

# devices N: N GPUs, or N CPU devices in the dry run.
devices() {
  local d="" i
  for ((i = 0; i < $1; i++)); do
    if [ -n "$dry" ]; then d+="${d:+,}cpu"; else d+="${d:+,}gpu$i"; fi
  done
  echo "$d"
}
cl=(CLEAVE_CACHE_DIR=off CLEAVE_PROFILE="$profile")
prog=$carry/bin/pipeline.cleave
if [ -n "$dry" ]; then
  # Bound lines for vecadd of the default sizes (4 GB in, 2 GB out).
  echo '{"kernel": "vecadd", "label": "bound", "ok": true, "bound_ms": 74.0, "kernel_ms": [1.9], "blocks": 1048576, "wave_blocks": 264, "send_bytes": 4294967296, "receive_bytes": 2147483648}' >> "$jsonl"
else
  one bound X=1 -- "$carry/bin/pipeline.nvcc" --bound
fi
one serial-1 "${cl[@]}" CLEAVE_DEVICES="$(devices 1)" CLEAVE_TUNE=pipeline=host-serial -- "$prog"
counts=()
for n in 2 4 8; do [ "$n" -le "$ngpu" ] && counts+=("$n"); done
for n in "${counts[@]}"; do
  dev=(CLEAVE_DEVICES="$(devices "$n")")
  one "serial-$n" "${cl[@]}" "${dev[@]}" CLEAVE_TUNE=pipeline=host-serial -- "$prog"
  one "piped-$n" "${cl[@]}" "${dev[@]}" CLEAVE_TUNE=pipeline=host -- "$prog"
done
for n in "${counts[@]}"; do
  one "plans-$n" "${cl[@]}" CLEAVE_DEVICES="$(devices "$n")" CLEAVE_TUNE=pipeline=host CLEAVE_LOG=plan -- "$prog"
done

python3 "$root/bench/linkstates/report.py" --linkbound "$carry/bin/linkbound" \
  --profile "$profile" --gpus "${counts[*]}" ${dry:+--dry} "$jsonl" \
  > "$out/linkstates.md" ||
  fails=$((fails + 1))
tee -a "$log" < "$out/linkstates.md"
grep -q '"ok": false' "$jsonl" && fails=$((fails + 1))
say "total: $(( $(date +%s) - start )) s, $fails failure(s)"
exit $(( fails > 0 ))
