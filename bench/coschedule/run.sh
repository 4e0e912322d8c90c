#!/usr/bin/env bash
# On the GPU machine (CUDA driver, python3; no LLVM), from the repository
# root: co-scheduling's benchmark as bench/coschedule/prepare.sh built it,
# in one call (about 6-7 minutes on one H200). For each of Kernelet's mixes
# (ci, mi, mix, all) and 2, 4 and 8 streams of one program, with
# CLEAVE_DEVICES=gpu0 and the H200's device profile (the co-run model's SM
# and clock):
#   nvcc-serial    the nvcc build, every launch on the legacy stream;
#   nvcc-streams   the nvcc build on S streams (CUDA's own concurrency);
#   serial         the Cleave build on the legacy stream;
#   streams        the Cleave build on S streams, CLEAVE_TUNE=coschedule=off
#                  (each launch whole, as it comes);
#   default        the Cleave build on S streams, CLEAVE_TUNE unset (the
#                  runtime's default, docs/coschedule.md);
#   cosched        the Cleave build on S streams, CLEAVE_TUNE=coschedule=on
#                  (held and sliced only where the model predicts a gain;
#                  a pair interleaved or on an SM split, as the model says);
#   cosched-green  the same with every modeled pair on an SM split (green
#                  contexts: CLEAVE_TUNE=...,green=always);
# the oracle on ORACLE_STREAMS streams: every launch held and every pair
# interleaved at a forced per-SM ratio (coschedule=always,green=off,
# coratio=R), one run per ratio of ORACLE_RATIOS, the best kept by report.py
# (a forced ratio holds for all the mix's pairs: an oracle over the ratios
# tried, not over every pair's own); and once more cosched and cosched-green
# on every mix, 4 streams, one repetition, under CLEAVE_LOG=plan
# ($OUT/plans-cosched-MIX.log, plans-green-MIX.log: each decision, and each
# pair's predicted against measured co-run time, whose mean absolute error
# report.py gives).
#   bench/coschedule/run.sh [CARRY_DIR]   (default build/gpu-carry-coschedule)
# Writes to $OUT (default .): coschedule.jsonl (the program's lines),
# coschedule.log (progress, stderr), the plan logs, coschedule.md
# (throughput per configuration and the ratios against the targets, for
# cosched, cosched-green and default: >= 1.15x streams on mix and all,
# never below 0.98x, within 5 % of the oracle; and the model's co-run time
# error). Environment: REPS (5), INSTANCES (4 per kernel), SCALE (1),
# STREAMS ("2 4 8"), MIXES ("ci mi mix all"), ORACLE_STREAMS ("4"),
# ORACLE_RATIOS ("1:3 1:1 3:1"; "" skips the oracle), TIMEOUT per run
# (90 s). Exit status 0 when every run finished and computed right.
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

cl=(CLEAVE_DEVICES=gpu0 CLEAVE_CACHE_DIR=off
    CLEAVE_PROFILE=$root/profiles/h200x1-all.json)
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
    one cosched-green "${cl[@]}" CLEAVE_TUNE=coschedule=on,green=always -- \
      "$carry/bin/coschedule.cleave" --mix $mix --streams $s
  done
  for s in ${ORACLE_STREAMS:-4}; do
    for r in ${ORACLE_RATIOS-1:3 1:1 3:1}; do
      one "oracle-$r" "${cl[@]}" \
        CLEAVE_TUNE=coschedule=always,green=off,coratio=$r -- \
        "$carry/bin/coschedule.cleave" --mix $mix --streams $s
    done
  done
done
plans=()
for mix in ${MIXES:-ci mi mix all}; do
  for cfg in cosched:coschedule=on green:coschedule=on,green=always; do
    f=$out/plans-${cfg%%:*}-$mix.log
    say "== plans: CLEAVE_LOG=plan, CLEAVE_TUNE=${cfg#*:}, $mix, 4 streams, one repetition"
    env "${cl[@]}" CLEAVE_TUNE=${cfg#*:} CLEAVE_LOG=plan timeout "$tmo" \
      "$carry/bin/coschedule.cleave" --mix $mix --streams 4 --reps 1 \
      --instances "${INSTANCES:-4}" --scale "${SCALE:-1}" --label plans \
      > /dev/null 2> "$f" || fails=$((fails + 1))
    plans+=("$f")
  done
done

python3 "$root/bench/coschedule/report.py" "$jsonl" "${plans[@]}" \
  > "$out/coschedule.md"
cat "$out/coschedule.md" | tee -a "$log"
grep -q '"ok": false' "$jsonl" && fails=$((fails + 1))
exit $(( fails > 0 ))
