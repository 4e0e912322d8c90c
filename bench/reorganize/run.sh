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
# Then the balancer against SKMD's greedy split (issue 30's second target),
# every configuration in one process over gpu0 and the CPU:
#   cpu     CLEAVE_DEVICES=cpu, the step off (the other single device; gpu0
#           alone is `off`);
#   greedy  gpu0,cpu under the model policy, CLEAVE_TUNE=balance=greedy
#           (SKMD's greedy split, the balancer not consulted);
#   balancer  the same, balance=balancer (the balancer's split);
#   route   the same, reorganize=force,route=on: the step on the device the
#           model chose, its sorted order routed over gpu0 and the CPU where
#           the per-device models predict a gain;
#   route-force  the same with route=force: every launch whole on the best
#           device, its sorted order routed over both (the CPU kept).
# (CLEAVE_LOG=plan: $OUT/plans-{greedy,balancer,route,route-force}.log.)
# Then the target's check, end to end: each configuration as a program of
# its own (one process, --case N), ROUNDS times, in an order that rotates
# each round, under
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
# (5), LONG_REPS (100), ROUNDS (3), TIMEOUT per run (150 s), DEADLINE (280
# s: no run starts after it, and a run is cut at it; the report says how
# many were skipped or cut). Exit status 0 when every run that started
# finished (or was cut by the deadline) and computed right.
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
rounds=${ROUNDS:-3}
tmo=${TIMEOUT:-150}
deadline=${DEADLINE:-280}
start=$(date +%s)
fails=0
skipped=0
cut=0
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
  local left=$(( deadline - ($(date +%s) - start) ))
  if [ "$left" -le 2 ]; then
    say "== $label: skipped (DEADLINE ${deadline} s reached)"
    skipped=$((skipped + 1))
    return
  fi
  local t=$(( tmo < left ? tmo : left ))
  say "== $label: ${envs[*]} $*"
  local t0=$(date +%s)
  env "${envs[@]}" timeout "$t" "$1" --reps "$reps" "${@:2}" \
    --label "$label" >> "$jsonl" 2>> "$plans"
  local rc=$?
  say "   rc=$rc, $(( $(date +%s) - t0 )) s"
  if [ $rc = 124 ] && [ "$t" -lt "$tmo" ]; then
    cut=$((cut + 1))
  elif [ $rc != 0 ]; then
    fails=$((fails + 1))
  fi
}

cl=(CLEAVE_DEVICES=gpu0 CLEAVE_CACHE_DIR=off)
one nvcc "$log" X=1 -- "$carry/bin/reorganize.nvcc"
one peer "$log" X=1 -- "$carry/bin/reorganize.nvcc" --peer
one off "$log" "${cl[@]}" CLEAVE_TUNE=reorganize=off -- "$carry/bin/reorganize.cleave"
one force "$out/plans-force.log" "${cl[@]}" CLEAVE_TUNE=reorganize=force CLEAVE_LOG=plan -- "$carry/bin/reorganize.cleave"
one on "$out/plans-on.log" "${cl[@]}" CLEAVE_TUNE=reorganize=on CLEAVE_LOG=plan -- "$carry/bin/reorganize.cleave"

# The balancer against the greedy split, and routing, over gpu0 and the CPU
# (the CPU alone with fewer launches: it is the slow single device).
two=(CLEAVE_DEVICES=gpu0,cpu CLEAVE_CACHE_DIR=off CLEAVE_LOG=plan)
one cpu "$log" CLEAVE_DEVICES=cpu CLEAVE_CACHE_DIR=off \
  CLEAVE_TUNE=reorganize=off -- "$carry/bin/reorganize.cleave" --reps 2
for b in greedy balancer; do
  : > "$out/plans-$b.log"
  one "$b" "$out/plans-$b.log" "${two[@]}" \
    CLEAVE_TUNE=reorganize=off,balance=$b -- "$carry/bin/reorganize.cleave"
done
for r in on force; do
  l=route; [ $r = force ] && l=route-force
  : > "$out/plans-$l.log"
  one $l "$out/plans-$l.log" "${two[@]}" \
    CLEAVE_TUNE=reorganize=force,route=$r -- "$carry/bin/reorganize.cleave"
done

# The programs: one configuration a process, the labels in turn each round
# (drifts of the machine fall on all of them alike).
: > "$out/plans-long.log"
cases=$("$carry/bin/reorganize.nvcc" --case 999 2>&1 >/dev/null |
  sed -n 's/.*there are \([0-9]*\).*/\1/p')
[ -n "$cases" ] || { say "no case count"; cases=0; fails=$((fails + 1)); }
for round in $(seq 1 "$rounds"); do
  for c in $(seq 0 $((cases - 1))); do
    b=("$carry/bin/reorganize.cleave" --case "$c")
    # The three in a rotating order (off first in round 1, default in
    # round 2, on in round 3): at 52a0fe4, with off always first, the first
    # launch of default and on alike took 0.30 ms against off's 0.22.
    for k in 0 1 2; do
      case $(( (k + round - 1) % 3 )) in
      0) one off-p "$log" "${cl[@]}" CLEAVE_TUNE=reorganize=off -- "${b[@]}" ;;
      1) one default-p "$log" "${cl[@]}" -- "${b[@]}" ;;
      2) one on-p "$log" "${cl[@]}" CLEAVE_TUNE=reorganize=on -- "${b[@]}" ;;
      esac
    done
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

say "runs skipped at the deadline: $skipped, cut by it: $cut; $(( $(date +%s) - start )) s in all"
python3 "$root/bench/reorganize/report.py" "$jsonl" "$out/plans-force.log" \
  "$out/plans-on.log" "$out/plans-long.log" "$out" > "$out/reorganize.md" ||
  fails=$((fails + 1))
echo "runs skipped at the deadline ($deadline s): $skipped; cut by it: $cut" \
  >> "$out/reorganize.md"
cat "$out/reorganize.md" | tee -a "$log"
grep -q '"ok": false' "$jsonl" && fails=$((fails + 1))
exit $(( fails > 0 ))
