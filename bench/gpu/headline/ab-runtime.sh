#!/usr/bin/env bash
# A/B of two runtime libraries under one headline binary, on the GPU
# machine, in one call: for each device set and round, the model policy
# with library A, then with B (fresh performance cache, an untimed warm-up
# pass each), data resident and from the host. Same machine, same session:
# compare A and B as ratios, never across calls.
#
#   bash bench/gpu/headline/ab-runtime.sh CARRY LIB-A-DIR LIB-B-DIR
#
# CARRY is a headline carry (bench/gpu/headline/prepare.sh); each LIB dir
# holds a libcleave_rt.so (and libtbb.so.12). SETS (4gpu 2gpu cpu+gpu0),
# ROUNDS (2), REPS (15), KERNELS (all), PROFILE (profiles/h200x4-all.json),
# MODES (resident,host), ENV_A and ENV_B (space-separated NAME=VALUE set for
# A's and B's runs only: one library with two settings, e.g.
# ENV_A=CLEAVE_TUNE=defer=off).
# Writes $OUT/ab.jsonl (each line tagged "runtime":"a"|"b", "round") and
# $OUT/ab.log.
set -uo pipefail
carry=$1 liba=$2 libb=$3
out=${OUT:-/tmp/ab-out}
mkdir -p "$out"
sets=${SETS:-4gpu 2gpu cpu+gpu0}
rounds=${ROUNDS:-2}
reps=${REPS:-15}
kernels=${KERNELS:-vecadd,triad,blackscholes,matmul,transpose,reduction,histogram,jacobi2d,nbody,stencil3d}
profile=${PROFILE:-profiles/h200x4-all.json}
modes=${MODES:-resident,host}
read -r -a env_a <<< "${ENV_A:-}"
read -r -a env_b <<< "${ENV_B:-}"
declare -A devs=([gpu0]=gpu0 [cpu+gpu0]=cpu,gpu0 [2gpu]=gpu0,gpu1
                 [cpu+2gpu]=cpu,gpu0,gpu1 [4gpu]=gpu0,gpu1,gpu2,gpu3
                 [cpu+4gpu]=cpu,gpu0,gpu1,gpu2,gpu3)
work=$(mktemp -d)
log=$out/ab.log
: > "$out/ab.jsonl"
echo "carry $(cat "$carry/COMMIT" | tr '\n' ' '); A=$liba ${ENV_A:-} B=$libb ${ENV_B:-}; $(uptime)" | tee "$log"
for r in $(seq 1 "$rounds"); do
  for s in $sets; do
    for tag in a b; do
      lib=$liba extra=("${env_a[@]}")
      [ $tag = b ] && lib=$libb extra=("${env_b[@]}")
      cache=$work/cache-$tag-$s-$r
      mkdir -p "$cache"
      common=(env -u CLEAVE_SPLIT -u CLEAVE_LOG LD_LIBRARY_PATH="$lib"
              CLEAVE_DEVICES="${devs[$s]}" CLEAVE_PARTITION=model
              CLEAVE_PROFILE="$profile" CLEAVE_CACHE_DIR="$cache"
              "${extra[@]}")
      "${common[@]}" timeout 240 "$carry/bin/headline" --reps 1 --budget-ms 0 \
        --kernels "$kernels" --set "$s" --modes "$modes" \
        --policy model-warmup > /dev/null 2>> "$log"
      "${common[@]}" timeout 240 "$carry/bin/headline" --reps "$reps" \
        --budget-ms 1000 --kernels "$kernels" --set "$s" \
        --modes "$modes" --policy model > "$work/run.jsonl" 2>> "$log" ||
        echo "FAIL: $s $tag round $r" | tee -a "$log"
      sed "s|^{|{\"runtime\":\"$tag\",\"round\":$r,|" "$work/run.jsonl" >> "$out/ab.jsonl"
      echo "[$SECONDS s] round $r $s $tag: $(grep -c '"status":"ok"' "$work/run.jsonl") ok, $(grep -c '"status":"wrong"' "$work/run.jsonl") wrong" | tee -a "$log"
    done
  done
done
rm -rf "$work"
