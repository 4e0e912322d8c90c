#!/usr/bin/env bash
# On the GPU machine (no carry needed): builds probe_chain.cu and
# probe_nbody.cu with nvcc and runs them. Writes $OUT/probe-chain.jsonl and
# $OUT/probe-nbody.jsonl, and prints both.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${OUT:-.}
work=$(mktemp -d)
for p in probe_chain probe_nbody; do
  nvcc -O3 -arch=sm_90 -o "$work/$p" "$here/$p.cu" || exit 1
done
"$work/probe_nbody" --reps 10 | tee "$out/probe-nbody.jsonl"
"$work/probe_chain" --reps 30 | tee "$out/probe-chain.jsonl"
