#!/usr/bin/env bash
# On the GPU machine: CLEAVE_LOG=phases,plan of jacobi2d (resident) over 2
# and 4 GPUs, even split, with the halo copies queued on the compute
# streams (default) and waited for (CLEAVE_QUEUE_PEER_COPIES=off). That
# variable exists only at commit 44c32e1, reverted after this probe.
# Writes $OUT/jacobi-<set>-<queue>.log and prints the median of each.
carry=$(cd "${1:-build/gpu-carry-headline}" && pwd)
export LD_LIBRARY_PATH=$carry
for set in gpu0,gpu1 gpu0,gpu1,gpu2,gpu3; do
  for q in on off; do
    log=$OUT/jacobi-$(echo $set | tr -cd , | wc -c)-$q.log
    CLEAVE_DEVICES=$set CLEAVE_PARTITION=even CLEAVE_QUEUE_PEER_COPIES=$q \
      CLEAVE_LOG=phases,plan "$carry/bin/headline" --reps 20 --budget-ms 2000 \
      --kernels jacobi2d --modes resident --set "$set" --policy "even-queue-$q" \
      > "$log.jsonl" 2> "$log"
    echo "$set queue=$q $(grep -o '"median_ms":[0-9.]*' "$log.jsonl")"
  done
done
