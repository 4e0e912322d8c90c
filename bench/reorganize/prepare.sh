#!/usr/bin/env bash
# Here (the machine with LLVM and nvcc): builds the reorganization step's
# benchmark (bench/reorganize/reorganize.cu) by nvcc -O3 -arch=sm_90 and by
# `cleave compile -O3` into a folder to carry to the GPU machine, where
# bench/reorganize/run.sh runs it (the GPU machine has no LLVM).
#   bench/reorganize/prepare.sh [CARRY_DIR]  (default build/gpu-carry-reorganize)
# Environment: CLEAVE (build/bin/cleave), NVCC (/usr/local/cuda/bin/nvcc).
# The folder holds bin/reorganize.{nvcc,cleave}, lib/ (libcleave_rt.so and
# libtbb.so.12), COMMIT, remarks.txt (Cleave's reorganize remarks: the three
# user kernels must get their variants), and check.jsonl: the Cleave build
# run here on the CPU with --small, the step off, forced, and the peers,
# routed over two CPU devices and split by the balancer, which must compute
# right and give equal outputs (hashes).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/carry.sh"
carry=$(realpath -m "${1:-$root/build/gpu-carry-reorganize}")
carry_start "$root" "$carry"
src=$root/bench/reorganize/reorganize.cu
"$nvcc" -O3 -arch=sm_90 "$src" -o "$carry/bin/reorganize.nvcc"
"$cleave" compile -O3 -Rpass=cleave-reorganize "$src" \
  -o "$carry/bin/reorganize.cleave" 2> "$carry/remarks.txt"
rm -f "$carry"/bin/*.cleave.cpp
for k in bootstrap option spmv; do
  grep -q "kernel '$k(.*created '__cleave_tc_" "$carry/remarks.txt" ||
    { echo "prepare: $k got no reorganized variant (remarks.txt)" >&2; exit 1; }
done
carry_runtime "$lib" "$carry/lib"
carry_commit "$root" "$carry/COMMIT"
# The Cleave build on this machine's CPU, small sizes: right, and the same
# outputs whether the step is off, forced, or replaced by the peers.
# route: the step's sorted order routed over two CPU devices, the written
# bytes merged (docs/reorganize.md, "Routing"); balancer: the balancer's
# split over them.
for mode in off force peer route balancer; do
  extra=(); tune=reorganize=$mode; devs=cpu
  [ $mode = peer ] && { extra=(--peer); tune=reorganize=off; }
  [ $mode = route ] && { tune=reorganize=force,route=force; devs=cpu,cpu; }
  [ $mode = balancer ] && { tune=balance=balancer; devs=cpu,cpu; }
  LD_LIBRARY_PATH=$carry/lib CLEAVE_DEVICES=$devs CLEAVE_CACHE_DIR=off \
    CLEAVE_TUNE=$tune "$carry/bin/reorganize.cleave" --small --reps 2 \
    "${extra[@]}" --label cpu-$mode >> "$carry/check.jsonl"
done
python3 - "$carry/check.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
bad = [r for r in rows if not r["ok"]]
hashes = {}
for r in rows:
    hashes.setdefault((r["kernel"], r["config"]), set()).add(r["hash"])
differ = [k for k, h in hashes.items() if len(h) != 1]
if bad or differ:
    sys.exit(f"prepare: check failed: {len(bad)} wrong, outputs differ for {differ}")
print(f"check: {len(rows)} runs right, outputs equal across off, force, peer, route and balancer")
PY
du -sh "$carry"
echo "carry: ${carry#$root/} (run there: bench/reorganize/run.sh ${carry#$root/})"
