#!/usr/bin/env bash
# On a GPU machine (one `run` call): the measured side of the accuracy report
# (issue 6 §3). Runs every entry of suite.txt built by prepare.sh on one GPU
# (CLEAVE_DEVICES=gpu0 CLEAVE_PARTITION=single CLEAVE_LOG=time): one warm-up
# run, then $REPS runs (default 5). Each launch's `cleave time` line
# (docs/runtime.md) is its GPU time from CUDA events on the compute stream.
# Writes $OUT/measured.jsonl, one line per (entry, kernel, grid, block):
# every time in run order and the median over all of them (every launch of
# that configuration in every timed run), the device's name from nvidia-smi;
# and $OUT/measure.log (the programs' output). Needs no LLVM and no python.
#   measure.sh [CARRY_DIR]    (default: the directory of this script)
# Environment: REPS (default 5), SUITE (default CARRY_DIR/suite.txt),
# DEVICES (default gpu0; `cpu` checks this script on a machine without GPU).
set -uo pipefail
carry=$(cd "${1:-$(dirname "$0")}" && pwd)
. "$(dirname "$0")/suite.sh"
out=${OUT:-.}
reps=${REPS:-5}
devices=${DEVICES:-gpu0}
suite=${SUITE:-$carry/suite.txt}
mkdir -p "$out"
log=$out/measure.log
res=$out/measured.jsonl
: > "$log"
: > "$res"
export LD_LIBRARY_PATH=$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -1)
[ -n "$gpu" ] || gpu=unknown
commit=$(head -c 40 "$carry/COMMIT" 2>/dev/null || echo unknown)
dirty=false
grep -q dirty "$carry/COMMIT" 2>/dev/null && dirty=true
host=$(hostname)
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
echo "# accuracy measurements on $gpu, $date, commit $commit" | tee -a "$log"
nvidia-smi -L >> "$log" 2>&1
fails=0
while IFS='|' read -r id prog args _; do
  name=$(basename "$prog" .cu)
  bin=$carry/bin/$name
  times=$out/$id.times
  : > "$times"
  status=ok
  for rep in $(seq 0 "$reps"); do # run 0 is the warm-up
    echo "## $id run $rep: $name $args" >> "$log"
    # shellcheck disable=SC2086
    if ! CLEAVE_DEVICES=$devices CLEAVE_PARTITION=single CLEAVE_LOG=time \
      timeout 300 "$bin" $args < /dev/null > "$out/run.txt" 2>&1; then
      status=failed
    fi
    grep -v '^cleave time ' "$out/run.txt" >> "$log"
    grep -q 'FAIL' "$out/run.txt" && status=wrong
    [ "$status" = ok ] || { tail -5 "$out/run.txt"; break; }
    [ "$rep" -eq 0 ] && continue
    # kernel grid block device ms, tab-separated, in launch order.
    sed -n 's/^cleave time \([^ ]*\) grid=(\([0-9,]*\)) block=(\([0-9,]*\)) device=\([^ ]*\) ms=\([0-9.eE+-]*\)$/\1\t\2\t\3\t\4\t\5/p' \
      "$out/run.txt" >> "$times"
  done
  if [ "$status" != ok ]; then
    echo "measure: $id: $status" | tee -a "$log"
    fails=$((fails + 1))
    printf '{"entry":"%s","program":"%s","args":"%s","device":"%s","status":"%s","git_commit":"%s","git_dirty":%s,"host":"%s","date":"%s"}\n' \
      "$id" "$prog" "$args" "$gpu" "$status" "$commit" "$dirty" "$host" "$date" >> "$res"
    rm -f "$times"
    continue
  fi
  # One line per configuration: every time (launch order within each run,
  # runs in order) and the median.
  awk -F'\t' -v id="$id" -v prog="$prog" -v args="$args" -v gpu="$gpu" \
    -v commit="$commit" -v dirty="$dirty" -v host="$host" -v date="$date" \
    -v reps="$reps" '
    function sortn(a, n,   i, j, t) { # insertion sort, numeric
      for (i = 2; i <= n; i++) { t = a[i]; j = i - 1
        while (j >= 1 && a[j] + 0 > t + 0) { a[j + 1] = a[j]; j-- }
        a[j + 1] = t }
    }
    {
      key = $1 "\t" $2 "\t" $3
      if (!(key in n)) { order[++keys] = key; dev[key] = $4 }
      n[key]++; v[key, n[key]] = $5
      all[key] = all[key] (n[key] > 1 ? "," : "") $5
    }
    END {
      for (k = 1; k <= keys; k++) {
        key = order[k]; split(key, f, "\t"); m = n[key]
        for (i = 1; i <= m; i++) s[i] = v[key, i]
        sortn(s, m)
        med = (m % 2) ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2
        printf "{\"entry\":\"%s\",\"program\":\"%s\",\"args\":\"%s\",\"kernel\":\"%s\",\"grid\":[%s],\"block\":[%s],\"device\":\"%s\",\"device_log\":\"%s\",\"status\":\"ok\",\"reps\":%d,\"samples\":%d,\"times_ms\":[%s],\"median_ms\":%.6f,\"min_ms\":%.6f,\"max_ms\":%.6f,\"git_commit\":\"%s\",\"git_dirty\":%s,\"host\":\"%s\",\"date\":\"%s\"}\n",
          id, prog, args, f[1], f[2], f[3], gpu, dev[key], reps, m, all[key], med, s[1], s[m], commit, dirty, host, date
      }
    }' "$times" >> "$res"
  echo "measure: $id: $(awk -F'\t' 'END { print NR }' "$times") launch times" | tee -a "$log"
  rm -f "$times"
done < <(suite_entries "$suite")
rm -f "$out/run.txt"
echo "# failures: $fails" | tee -a "$log"
exit $((fails > 0))
