#!/usr/bin/env bash
# Runs the launch engine's differential harness on a GPU machine (no LLVM
# there) with the files test/gpu/prepare-engine.sh made, over
#
#   CLEAVE_DEVICES = gpu0 | cpu,gpu0 | gpu0,gpu1 | cpu,gpu0,gpu1 | all
#
# (combinations naming a GPU that is absent are skipped), each with random
# explicit partitions and the even, proportional and single policies, plus
# fault-injection runs (a GPU launch or allocation failing: its blocks are
# re-run elsewhere). Everything goes to $OUT/engine-gpu.log (or ./ when OUT
# is unset); the exit status is non-zero when any check failed.
#
#   test/gpu/run-engine.sh [CARRY_DIR]     (default: build-h1/gpu-carry)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry=${1:-}
if [ -z "$carry" ]; then
  if [ -x "$here/engine_harness" ]; then carry=$here
  else carry=$here/../../build-h1/gpu-carry; fi
fi
carry=$(cd "$carry" && pwd)
out=${OUT:-.}
mkdir -p "$out"
log=$out/engine-gpu.log
: > "$log"
say() { echo "$@" | tee -a "$log"; }

say "# cleave engine GPU run, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
ngpu=0
if command -v nvidia-smi > /dev/null; then
  nvidia-smi -L | tee -a "$log"
  ngpu=$(nvidia-smi -L | grep -c '^GPU ')
fi
say "# $ngpu GPU(s); host: $(nproc) CPU threads"
export LD_LIBRARY_PATH=$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

status=0
run() { # run DEVICES [ENV...] -- ARGS...
  local devs=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  say "## CLEAVE_DEVICES=$devs ${envs[*]:-} engine_harness $*"
  env CLEAVE_DEVICES="$devs" "${envs[@]}" "$carry/engine_harness" \
    "$carry/engine.clvb" "$@" >> "$log" 2>&1
  local rc=$?
  say "## exit $rc"
  [ $rc -eq 0 ] || status=1
}

# The CPU-only split first: the carried binary works on this machine.
run cpu,cpu,cpu -- all even single
for devs in gpu0 cpu,gpu0 gpu0,gpu1 cpu,gpu0,gpu1 all; do
  need=0
  for g in 0 1 2 3; do
    case ",$devs," in *",gpu$g,"*) need=$((g + 1));; esac
  done
  if [ "$devs" = all ]; then need=1; fi
  if [ "$ngpu" -lt "$need" ]; then
    say "## CLEAVE_DEVICES=$devs: skipped ($ngpu GPU(s))"
    continue
  fi
  run "$devs" -- all
done

if [ "$ngpu" -ge 1 ]; then
  run cpu,gpu0 CLEAVE_FAULT=gpu0:launch:1 -- vecadd even
  run cpu,gpu0 CLEAVE_FAULT=gpu0:launch:1 -- keep_positive even
  run cpu,gpu0 CLEAVE_FAULT=gpu0:alloc:1 -- vecadd even
  run cpu,gpu0 CLEAVE_FAULT=cpu0:launch:1 -- keep_positive even
  run cpu,gpu0 CLEAVE_LOG=plan -- residency even
fi
if [ "$ngpu" -ge 2 ]; then
  run gpu0,gpu1 CLEAVE_FAULT=gpu1:launch:1 -- keep_positive even
  run gpu0,gpu1 CLEAVE_FAULT=gpu1:alloc:1 -- scale2d even
fi
say "# FAIL lines: $(grep -c '^FAIL' "$log")"
say "# status $status"
exit $status
