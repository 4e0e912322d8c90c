#!/usr/bin/env bash
# On the GPU machine (CUDA driver, python3; no LLVM), from the repository
# root: co-scheduling's benchmark as bench/coschedule/prepare.sh built it,
# in one call (about 3-5 minutes). For each of Kernelet's mixes (ci, mi,
# mix, all) and 2, 4 and 8 streams of one program, with CLEAVE_DEVICES=gpu0:
#   nvcc-serial    the nvcc build, every launch on the legacy stream;
#   nvcc-streams   the nvcc build on S streams (CUDA's own concurrency);
#   serial         the Cleave build on the legacy stream;
#   streams        the Cleave build on S streams, CLEAVE_TUNE=coschedule=off
#                  (each launch whole, as it comes);
#   default        the Cleave build on S streams, CLEAVE_TUNE unset (the
#                  runtime's default, docs/coschedule.md);
#   cosched        the Cleave build on S streams, CLEAVE_TUNE=coschedule=on
#                  (held and sliced only where the model predicts a gain);
# and once more cosched on the mix mix, 4 streams, one repetition, under
# CLEAVE_LOG=plan ($OUT/plans.log: each co-schedule decision).
#   bench/coschedule/run.sh [CARRY_DIR]   (default build/gpu-carry-coschedule)
# Writes to $OUT (default .): coschedule.jsonl (the program's lines),
# coschedule.log (progress, stderr), plans.log, coschedule.md (throughput
# per configuration and the ratios against the targets, for cosched and for
# default: >= 1.15x streams on mix and all, never below 0.98x). Environment: REPS (5),
# INSTANCES (4 per kernel), SCALE (1), STREAMS ("2 4 8"), MIXES
# ("ci mi mix all"), TIMEOUT per run (90 s). Exit status 0 when every run
# finished and computed right.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
carry=$(cd "${1:-$root/build/gpu-carry-coschedule}" && pwd)
out=${OUT:-.}
mkdir -p "$out"
jsonl=$out/coschedule.jsonl
log=$out/coschedule.log
: > "$jsonl"
: > "$log"
export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
args=(--reps "${REPS:-5}" --instances "${INSTANCES:-4}" --scale "${SCALE:-1}")
tmo=${TIMEOUT:-90}
fails=0
say() { echo "$*" | tee -a "$log"; }
say "# coschedule benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ), host $(hostname), commit $(tr '\n' ' ' < "$carry/COMMIT")"
nvidia-smi -L 2>/dev/null | tee -a "$log"
say "cpus: $(nproc); load: $(uptime)"

# one LABEL ENV... -- BINARY ARGS...
one() {
  local label=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  say "== $label: ${envs[*]} $*"
  local t0=$(date +%s)
  env "${envs[@]}" timeout "$tmo" "$@" "${args[@]}" --label "$label" \
    >> "$jsonl" 2>> "$log"
  local rc=$?
  say "   rc=$rc, $(( $(date +%s) - t0 )) s"
  [ $rc = 0 ] || fails=$((fails + 1))
}

cl=(CLEAVE_DEVICES=gpu0 CLEAVE_CACHE_DIR=off)
for mix in ${MIXES:-ci mi mix all}; do
  one nvcc-serial X=1 -- "$carry/bin/coschedule.nvcc" --mix $mix --streams 1
  one serial "${cl[@]}" -- "$carry/bin/coschedule.cleave" --mix $mix --streams 1
  for s in ${STREAMS:-2 4 8}; do
    one nvcc-streams X=1 -- "$carry/bin/coschedule.nvcc" --mix $mix --streams $s
    one streams "${cl[@]}" CLEAVE_TUNE=coschedule=off -- \
      "$carry/bin/coschedule.cleave" --mix $mix --streams $s
    one default "${cl[@]}" -- "$carry/bin/coschedule.cleave" --mix $mix --streams $s
    one cosched "${cl[@]}" CLEAVE_TUNE=coschedule=on -- \
      "$carry/bin/coschedule.cleave" --mix $mix --streams $s
  done
done
say "== plans: CLEAVE_LOG=plan, cosched, mix, 4 streams, one repetition"
env "${cl[@]}" CLEAVE_TUNE=coschedule=on CLEAVE_LOG=plan timeout "$tmo" "$carry/bin/coschedule.cleave" \
  --mix mix --streams 4 --reps 1 --instances "${INSTANCES:-4}" \
  --scale "${SCALE:-1}" --label plans > /dev/null 2> "$out/plans.log" ||
  fails=$((fails + 1))

python3 "$root/bench/coschedule/report.py" "$jsonl" > "$out/coschedule.md"
cat "$out/coschedule.md" | tee -a "$log"
grep -q '"ok": false' "$jsonl" && fails=$((fails + 1))
exit $(( fails > 0 ))
