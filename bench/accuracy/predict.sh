#!/usr/bin/env bash
# Here (the machine with LLVM): the model side of the accuracy report (issue 6
# §3). For every entry of suite.txt, `cleave analyze` builds the program with
# instrumented CPU variants and runs it ONCE on this machine's CPU, saving
# what it gathered (`--save-record`, docs/analyze.md) to
# $OUT_DIR/records/<id>.record; then every GPU profile
# (profiles/h100x1-all.json, profiles/h200x1-all.json) and mode is evaluated
# from that record (`--from-record`, no build, no run):
#   hopper      --model=hopper
#   paper       --model=paper               (digest 000 §1 as printed)
#   paper-fix   --model=paper --paper-fix=all
# Writes one JSON line per (entry, GPU, mode, kernel, launch configuration)
# to $OUT_DIR/predictions.jsonl, and every raw report to $OUT_DIR/raw/.
#
#   bench/accuracy/predict.sh [CLEAVE]      (default: build/bin/cleave)
# Environment: OUT_DIR (default bench/accuracy/out), SUITE (default
# bench/accuracy/suite.txt), ONLY=id,id (entries), GPUS="h100x1 h200x1",
# MODES="hopper paper paper-fix", REUSE=1 (keep a record that exists and
# only evaluate the models again: seconds instead of a run per entry; a
# record of another version of the program is refused by cleave analyze).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/suite.sh"
root=$(cd "$here/../.." && pwd)
cleave=${1:-${CLEAVE:-$root/build/bin/cleave}}
suite=${SUITE:-$here/suite.txt}
out=${OUT_DIR:-$here/out}
gpus=${GPUS:-h100x1 h200x1}
modes=${MODES:-hopper paper paper-fix}
only=${ONLY:-}
reuse=${REUSE:-0}
[ -x "$cleave" ] || { echo "predict: no cleave at $cleave (build it, or pass its path)" >&2; exit 1; }
[ -f "$suite" ] || { echo "predict: no suite file $suite" >&2; exit 1; }
mkdir -p "$out/raw" "$out/records"
preds=$out/predictions.jsonl
: > "$preds"
commit=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
dirty=false
git -C "$root" --no-optional-locks status --porcelain 2>/dev/null | grep -q . && dirty=true
start=$(date +%s)
fails=0
# The suite: "id | program | arguments | kernels", '#' starts a comment.
while IFS='|' read -r id prog args kernels; do
  if [ -n "$only" ] && [[ ",$only," != *",$id,"* ]]; then continue; fi
  record=$out/records/$id.record
  rt0=$(date +%s.%N)
  if [ "$reuse" = 1 ] && [ -s "$record" ]; then
    rs=$(awk '/^record_s / {print $2}' "$out/records/$id.err" 2>/dev/null || true)
    rs=${rs:-0}
  else
    # The one run of the program: the record (the report is not kept).
    # shellcheck disable=SC2086
    if ! "$cleave" analyze "$root/$prog" --json --save-record="$record" \
      -- $args < /dev/null > /dev/null 2> "$out/records/$id.err"; then
      echo "predict: FAIL $id: the instrumented run (see $out/records/$id.err)" >&2
      fails=$((fails + 1))
      continue
    fi
    rs=$(awk -v a="$rt0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    printf 'record_s %s\n' "$rs" >> "$out/records/$id.err"
    printf 'predict: %-14s record  %6.1f s\n' "$id" "$rs"
  fi
  for gpu in $gpus; do
    profile=$root/profiles/$gpu-all.json
    [ -f "$profile" ] || { echo "predict: no profile $profile" >&2; exit 1; }
    for mode in $modes; do
      case "$mode" in
      hopper) flags=(--model=hopper) ;;
      paper) flags=(--model=paper) ;;
      paper-fix) flags=(--model=paper --paper-fix=all) ;;
      *) echo "predict: unknown mode $mode" >&2; exit 1 ;;
      esac
      raw=$out/raw/$id.$gpu.$mode.json
      t0=$(date +%s.%N)
      # shellcheck disable=SC2086
      if ! "$cleave" analyze "$root/$prog" --from-record="$record" --json \
        --gpu="$profile" "${flags[@]}" -- $args < /dev/null > "$raw" \
        2> "$out/raw/$id.$gpu.$mode.err"; then
        echo "predict: FAIL $id $gpu $mode (see $out/raw/$id.$gpu.$mode.err)" >&2
        fails=$((fails + 1))
        continue
      fi
      t1=$(date +%s.%N)
      if ! python3 - "$raw" "$id" "$prog" "$args" "$kernels" "$gpu" "$mode" \
        "$commit" "$dirty" "$t0" "$t1" "$rs" >> "$preds" <<'EOF'
import json, sys
raw, ident, prog, args, kernels, gpu, mode, commit, dirty, t0, t1, rs = \
    sys.argv[1:]
doc = json.load(open(raw))
# Blank-separated "kernel[@X,Y,Z]": a kernel (mangled name) counts in every
# configuration, or only with grid X,Y,Z.
counted = []
for k in kernels.split():
    name, _, grid = k.partition("@")
    counted.append((name, [int(x) for x in grid.split(",")] if grid else None))
def counts(k):
    return any(k["kernel"] == n and (g is None or k["grid"] == g)
               for n, g in counted)
for k in doc["kernels"]:
    t = k.get("time", {})
    print(json.dumps({
        "entry": ident, "program": prog, "args": args, "gpu": gpu,
        "gpu_name": doc["profile"]["name"], "profile": doc["profile"]["path"],
        "mode": mode, "model": doc["model"], "paper_fixes": doc["paper_fixes"],
        "kernel": k["kernel"], "display": k.get("display", ""),
        "grid": k["grid"], "block": k["block"],
        "dynamic_shared_bytes": k.get("dynamic_shared_bytes", 0),
        "launches": k.get("launches", 1), "counts": counts(k),
        "predicted_s": t.get("seconds"),
        "kernel_s": t.get("kernel_seconds"),
        "launch_s": t.get("launch_seconds"),
        "bottleneck": k.get("bottleneck"), "waves": k.get("waves"),
        "occupancy_limiter": k.get("occupancy", {}).get("limiter"),
        "notes": k.get("notes", []),
        # record_s: the entry's one instrumented run (shared by its GPU
        # and mode lines); analyze_s: this evaluation from the record.
        "record_s": float(rs), "analyze_s": round(float(t1) - float(t0), 2),
        "git_commit": commit, "git_dirty": dirty == "true"},
        sort_keys=True))
missing = [n + ("@" + ",".join(map(str, g)) if g else "") for n, g in counted
           if not any(k["kernel"] == n and (g is None or k["grid"] == g)
                      for k in doc["kernels"])]
if missing:
    sys.stderr.write("predict: %s: no prediction for %s\n" %
                     (ident, ", ".join(missing)))
    sys.exit(1)
EOF
      then
        fails=$((fails + 1))
      fi
      printf 'predict: %-14s %-7s %-9s %6.2f s\n' "$id" "$gpu" "$mode" \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
    done
  done
done < <(suite_entries "$suite")
echo "predict: $(wc -l < "$preds") predictions in $preds, $(( $(date +%s) - start )) s, $fails failure(s)"
exit $((fails > 0))
