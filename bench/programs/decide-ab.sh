#!/usr/bin/env bash
# On the GPU machine: why a program's launches cost more in one build of the
# corpus than in another (issue 26's launch-cost check). Runs one program
# of two corpus carries (bench/programs/prepare.sh) REPS times each,
# alternating, each time with a fresh cache warmed by one untimed run, then
# once under CLEAVE_LOG=phases,plan; counts the launches each device ran and
# the median decide phase, and keeps every log.
#   bench/programs/decide-ab.sh BEFORE_CARRY AFTER_CARRY
# Environment: PROGRAM (edit_distance_wavefront), DEVICES (cpu,gpu0),
# REPS (5), SCALE (8). Writes $OUT/decide-ab.txt and $OUT/decide-ab-logs.tar.xz.
set -uo pipefail
before=$1 after=$2
out=${OUT:-.}
mkdir -p "$out"
prog=${PROGRAM:-edit_distance_wavefront}
devs=${DEVICES:-cpu,gpu0}
reps=${REPS:-5}
scale=${SCALE:-8}
work=$(mktemp -d)
for side in before after; do
  carry=$before
  [ $side = after ] && carry=$after
  mkdir -p "$work/$side" "$work/logs"
  tar xJf "$carry/corpus.tar.xz" -C "$work/$side"
  echo "$side: $(cat "$carry/COMMIT")"
done | tee "$out/decide-ab.txt"
for i in $(seq 1 "$reps"); do
  for side in before after; do
    cache=$(mktemp -d)
    exe=$work/$side/bin/$prog.cleave
    export LD_LIBRARY_PATH=$work/$side/lib
    CLEAVE_DEVICES=$devs CLEAVE_CACHE_DIR=$cache "$exe" "$scale" > /dev/null 2>&1
    log=$work/logs/$side-$i.log
    CLEAVE_DEVICES=$devs CLEAVE_CACHE_DIR=$cache CLEAVE_LOG=phases,plan \
      "$exe" "$scale" > "$log" 2>&1
    rm -rf "$cache"
    python3 - "$side" "$i" "$log" <<'PY' | tee -a "$out/decide-ab.txt"
import re, statistics, sys
side, i, path = sys.argv[1:]
text = open(path, errors="replace").read()
issues = {}
for d in re.findall(r"issue:(\w+)=", text):
    issues[d] = issues.get(d, 0) + 1
dec = [float(x) for x in re.findall(r" decide=([0-9.]+)", text)]
tot = [float(x) for x in re.findall(r" total=([0-9.]+)", text)]
t = re.findall(r"time_ms: ([0-9.]+)", text)
med = lambda v: statistics.median(v) if v else float("nan")
print(f"{side} rep {i}: time_ms {t[-1] if t else '?'} issues {issues} "
      f"median decide {med(dec):.1f} us total {med(tot):.1f} us "
      f"{'PASS' if re.search(r'^PASS', text, re.M) else 'FAIL'}")
PY
  done
done
tar cJf "$out/decide-ab-logs.tar.xz" -C "$work" logs
rm -rf "$work"
