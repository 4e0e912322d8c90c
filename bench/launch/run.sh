#!/usr/bin/env bash
# On a GPU machine: the launch-cost programs built by prepare.sh, each run
# by nvcc's build and by Cleave's on gpu0, cpu+gpu0 and the default devices
# (3 repetitions, fresh performance cache for the first), then once more
# under CLEAVE_LOG=phases, whose per-step host times phases.py summarizes.
# Writes $OUT/launch.jsonl (one line per run) and $OUT/phases.txt.
#   bench/launch/run.sh [CARRY_DIR]     (default: build/gpu-carry-launch)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry=$(cd "${1:-$here/../../build/gpu-carry-launch}" && pwd)
out=${OUT:-.}
mkdir -p "$out"
export LD_LIBRARY_PATH=$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
commit=$(head -1 "$carry/COMMIT")
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
declare -A args=([rows]="1000 65536" [resident]="5000 65536" [copies]="500 65536")
export CLEAVE_CACHE_DIR=$(mktemp -d)
for prog in rows resident copies; do
  for build in nvcc gpu0 cpu,gpu0 default; do
    for rep in 1 2 3; do
      bin=$carry/cleave/$prog
      env=()
      case $build in
        nvcc) bin=$carry/nvcc/$prog ;;
        default) ;;
        *) env=(CLEAVE_DEVICES=$build) ;;
      esac
      # shellcheck disable=SC2086
      env "${env[@]}" timeout 120 "$bin" ${args[$prog]} > "$out/run.txt" 2>&1
      status=$?
      python3 - "$prog" "$build" "$rep" "$status" "$commit" "$device" "$out/run.txt" <<'PY' >> "$out/launch.jsonl"
import json, re, sys
prog, build, rep, status, commit, device, path = sys.argv[1:]
text = open(path, errors="replace").read()
def num(key):
    m = re.search(key + r": ([0-9.]+)", text)
    return float(m.group(1)) if m else None
print(json.dumps({"bench": "launch", "program": prog, "build": build,
                  "rep": int(rep), "status": int(status),
                  "pass": "PASS" in text, "launches": num("launches"),
                  "time_ms": num("time_ms"),
                  "wall_us_per_launch": num("wall_us_per_launch"),
                  "commit": commit, "device": device}))
PY
    done
  done
  for devs in gpu0 cpu,gpu0; do
    echo "## $prog CLEAVE_DEVICES=$devs" >> "$out/phases.txt"
    # shellcheck disable=SC2086
    CLEAVE_DEVICES=$devs CLEAVE_LOG=phases timeout 120 "$carry/cleave/$prog" ${args[$prog]} 2> "$out/phases.log" |
      tee -a "$out/phases.txt"
    python3 "$carry/phases.py" < "$out/phases.log" >> "$out/phases.txt"
  done
done
rm -f "$out/phases.log" "$out/run.txt"
python3 - "$out/launch.jsonl" <<'PY' | tee "$out/summary.txt"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
progs = sorted({r["program"] for r in rows})
builds = ["nvcc", "gpu0", "cpu,gpu0", "default"]
print("program  " + "  ".join(f"{b:>22}" for b in builds) + "   (host us per launch, median; ratio to nvcc)")
for p in progs:
    base = None
    cells = []
    for b in builds:
        v = [r["wall_us_per_launch"] for r in rows if r["program"] == p and r["build"] == b and r["wall_us_per_launch"]]
        ok = all(r["pass"] for r in rows if r["program"] == p and r["build"] == b)
        m = statistics.median(v) if v else float("nan")
        if b == "nvcc":
            base = m
        cells.append(f"{m:10.2f} {m / base:5.2f}x {'ok ' if ok else 'BAD'}")
    print(f"{p:8} " + "  ".join(f"{c:>22}" for c in cells))
PY
