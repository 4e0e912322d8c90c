#!/usr/bin/env bash
# On the GPU machine (CUDA driver, python3; no LLVM), from the repository
# root: the reorganization step's benchmark as bench/reorganize/prepare.sh
# built it, in one call of at most ~8 minutes. Every configuration of
# reorganize.cu (bootstrap over l and p, option pricing over the mean path
# length, SpMV over power-law row lengths) under:
#   nvcc    the nvcc build, the original kernels;
#   peer    the nvcc build with --peer: hand-written dynamic lane refill
#           (a warp-aggregated atomic counter hands idle lanes new items);
#   off     the Cleave build on gpu0, CLEAVE_TUNE=reorganize=off;
#   force   the same, reorganize=force: inspector, sort, reorganized kernel
#           at every launch (CLEAVE_LOG=plan: $OUT/plans-force.log, whose
#           `measured:` lines time the three parts);
#   on      the same, reorganize=on: the model decides (CLEAVE_LOG=plan:
#           $OUT/plans-on.log).
# Then the target's check, end to end: each configuration as a program of
# its own (one process, --case N), ROUNDS times in turn under
#   off-p, default-p (CLEAVE_TUNE unset: the runtime's default) and on-p
#           (reorganize=on), REPS launches each;
#   off-long, on-long: the same with LONG_REPS launches (a program long
#           enough for the model to learn), two rounds; on-long-plan once
#           more with CLEAVE_LOG=plan ($OUT/plans-long.log; not timed
#           against off: printing the plans costs host time a launch).
#   bench/reorganize/run.sh [CARRY_DIR]     (default build/gpu-carry-reorganize)
# Writes to $OUT (default .): reorganize.jsonl (the program's lines, each
# with its label), reorganize.log (progress, stderr), plans-force.log,
# plans-on.log, plans-long.log, reorganize.md (bench/reorganize/report.py:
# per configuration the trip counts' cv, kernel and end-to-end times and
# the targets: >= 1.4x kernel time where cv >= 0.5, end to end never > 1 %
# slower than the original with the default settings). Environment: REPS
# (5), LONG_REPS (100), ROUNDS (5), TIMEOUT per run (150 s). Exit status 0
# when every run finished and computed right.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
carry=$(cd "${1:-$root/build/gpu-carry-reorganize}" && pwd)
out=${OUT:-.}
mkdir -p "$out"
jsonl=$out/reorganize.jsonl
log=$out/reorganize.log
: > "$jsonl"
: > "$log"
export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
reps=${REPS:-5}
long_reps=${LONG_REPS:-100}
rounds=${ROUNDS:-5}
tmo=${TIMEOUT:-150}
fails=0
say() { echo "$*" | tee -a "$log"; }
say "# reorganize benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ), host $(hostname), commit $(tr '\n' ' ' < "$carry/COMMIT")"
nvidia-smi -L 2>/dev/null | tee -a "$log"
say "cpus: $(nproc); load: $(uptime)"

# one LABEL PLANLOG ENV... -- BINARY ARGS... (--reps R among ARGS wins)
one() {
  local label=$1 plans=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  say "== $label: ${envs[*]} $*"
  local t0=$(date +%s)
  env "${envs[@]}" timeout "$tmo" "$1" --reps "$reps" "${@:2}" \
    --label "$label" >> "$jsonl" 2>> "$plans"
  local rc=$?
  say "   rc=$rc, $(( $(date +%s) - t0 )) s"
  [ $rc = 0 ] || fails=$((fails + 1))
}

cl=(CLEAVE_DEVICES=gpu0 CLEAVE_CACHE_DIR=off)
one nvcc "$log" X=1 -- "$carry/bin/reorganize.nvcc"
one peer "$log" X=1 -- "$carry/bin/reorganize.nvcc" --peer
one off "$log" "${cl[@]}" CLEAVE_TUNE=reorganize=off -- "$carry/bin/reorganize.cleave"
one force "$out/plans-force.log" "${cl[@]}" CLEAVE_TUNE=reorganize=force CLEAVE_LOG=plan -- "$carry/bin/reorganize.cleave"
one on "$out/plans-on.log" "${cl[@]}" CLEAVE_TUNE=reorganize=on CLEAVE_LOG=plan -- "$carry/bin/reorganize.cleave"

# The programs: one configuration a process, the labels in turn each round
# (drifts of the machine fall on all of them alike).
: > "$out/plans-long.log"
cases=$("$carry/bin/reorganize.nvcc" --case 999 2>&1 >/dev/null |
  sed -n 's/.*there are \([0-9]*\).*/\1/p')
[ -n "$cases" ] || { say "no case count"; cases=0; fails=$((fails + 1)); }
for round in $(seq 1 "$rounds"); do
  for c in $(seq 0 $((cases - 1))); do
    b=("$carry/bin/reorganize.cleave" --case "$c")
    one off-p "$log" "${cl[@]}" CLEAVE_TUNE=reorganize=off -- "${b[@]}"
    one default-p "$log" "${cl[@]}" -- "${b[@]}"
    one on-p "$log" "${cl[@]}" CLEAVE_TUNE=reorganize=on -- "${b[@]}"
    if [ "$round" -le 2 ]; then
      one off-long "$log" "${cl[@]}" CLEAVE_TUNE=reorganize=off -- \
        "${b[@]}" --reps "$long_reps"
      one on-long "$log" "${cl[@]}" CLEAVE_TUNE=reorganize=on -- \
        "${b[@]}" --reps "$long_reps"
    fi
    if [ "$round" = 1 ]; then
      # What the model did, from its plans (their printing costs host time
      # a launch: this run is not timed against off).
      echo "== case $c round $round" >> "$out/plans-long.log"
      one on-long-plan "$out/plans-long.log" "${cl[@]}" \
        CLEAVE_TUNE=reorganize=on CLEAVE_LOG=plan -- "${b[@]}" \
        --reps "$long_reps"
    fi
  done
done

python3 "$root/bench/reorganize/report.py" "$jsonl" "$out/plans-force.log" \
  "$out/plans-on.log" "$out/plans-long.log" > "$out/reorganize.md" ||
  fails=$((fails + 1))
cat "$out/reorganize.md" | tee -a "$log"
grep -q '"ok": false' "$jsonl" && fails=$((fails + 1))
exit $(( fails > 0 ))
