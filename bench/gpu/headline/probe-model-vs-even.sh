#!/usr/bin/env bash
# vecadd over 4 GPUs, resident: even, the model's shares as static weights, the model.
carry=$(pwd)/build/gpu-carry-headline
export LD_LIBRARY_PATH=$carry
H="$carry/bin/headline --reps 30 --budget-ms 2000 --kernels vecadd,blackscholes --modes resident --set 4gpu"
export CLEAVE_DEVICES=gpu0,gpu1,gpu2,gpu3
CLEAVE_PARTITION=even $H --policy even > $OUT/even.jsonl 2>/dev/null
CLEAVE_SPLIT=263168,259072,263680,262656 $H --policy modelshares > $OUT/shares.jsonl 2>/dev/null
mkdir -p /tmp/c; export CLEAVE_PROFILE=$(pwd)/profiles/h200x4-all.json CLEAVE_CACHE_DIR=/tmp/c
CLEAVE_PARTITION=model $H --policy warm > /dev/null 2>&1
CLEAVE_PARTITION=model $H --policy model > $OUT/model.jsonl 2>/dev/null
CLEAVE_PARTITION=model CLEAVE_LOG=phases,plan $H --policy modelphases > /dev/null 2> $OUT/model-phases.log
CLEAVE_PARTITION=even CLEAVE_LOG=phases,plan $H --policy evenphases > /dev/null 2> $OUT/even-phases.log
for f in even shares model; do python3 -c "
import json,sys
for l in open('$OUT/$f.jsonl'):
    d=json.loads(l); print('$f',d['kernel'],d['median_ms'],d['plan']['blocks'])"; done
