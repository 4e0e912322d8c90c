#!/usr/bin/env bash
# On the GPU machine: the model policy's plans (CLEAVE_LOG=plan) for the
# host mode of vecadd, reduction and transpose on cpu+gpu0 and cpu+2gpu,
# after an untimed warm-up pass with the same cache, and each kernel on
# the CPU alone and on gpu0 alone (even) for comparison. Writes
# $OUT/host-<set>.log (the plans) and $OUT/host.jsonl.
carry=$(cd "${1:-build/gpu-carry-headline}" && pwd)
export LD_LIBRARY_PATH=$carry
K=vecadd,reduction,transpose
H="$carry/bin/headline --reps 8 --budget-ms 3000 --kernels $K --modes host"
for set in cpu gpu0; do
  CLEAVE_DEVICES=$set CLEAVE_PARTITION=even $H --set $set --policy even >> $OUT/host.jsonl 2>/dev/null
done
for set in cpu,gpu0 cpu,gpu0,gpu1; do
  c=$(mktemp -d)
  env CLEAVE_DEVICES=$set CLEAVE_PARTITION=model CLEAVE_CACHE_DIR=$c \
    CLEAVE_PROFILE=$(pwd)/profiles/h200x4-all.json $H --reps 1 --set $set --policy warm > /dev/null 2>&1
  env CLEAVE_DEVICES=$set CLEAVE_PARTITION=model CLEAVE_CACHE_DIR=$c CLEAVE_LOG=plan \
    CLEAVE_PROFILE=$(pwd)/profiles/h200x4-all.json $H --set $set --policy model >> $OUT/host.jsonl 2> $OUT/host-$set.log
done
python3 - "$OUT/host.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    print(d['kernel'], d['set'], d['policy'], d.get('median_ms'), d['plan'].get('blocks'))
PY
