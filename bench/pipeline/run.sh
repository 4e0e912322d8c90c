#!/usr/bin/env bash
# On the GPU machine (CUDA driver, python3; no LLVM), from the repository
# root: transfer pipelining's benchmark as bench/pipeline/prepare.sh built
# it, in one call. Each kernel of pipeline.cu (vecadd, stencil1d, stencil2d,
# blackscholes) in host mode (inputs rewritten on the host, copied in,
# one launch, results copied back), under:
#   nvcc          the nvcc build (CUDA's own pageable copies);
#   bound         the nvcc build with --bound: pinned host arrays, the
#                 copies in, the kernel and the copies back each timed
#                 alone by events; bound_ms = max(send, kernel, receive);
#   gpu0          the Cleave build, CLEAVE_DEVICES=gpu0, defaults: the
#                 program's copies go straight to the GPU (its home
#                 device), so the launch finds its inputs there and has
#                 nothing to pipeline;
#   host-serial   CLEAVE_TUNE=pipeline=host-serial: the copies land in the
#                 runtime's host copies, the launch uploads them whole,
#                 then runs, unpipelined;
#   host-piped    CLEAVE_TUNE=pipeline=host: the same, the launch pipelined
#                 (chunks sent, run and received on three streams);
# and once more host-piped with one repetition under CLEAVE_LOG=plan
# ($OUT/plans.log: the chunks, their sizes and bytes).
#   bench/pipeline/run.sh [CARRY_DIR]       (default build/gpu-carry-pipeline)
# Writes to $OUT (default .): pipeline.jsonl (the program's lines, each
# with its configuration's label), pipeline.log (progress, stderr),
# plans.log, pipeline.md (summary: medians; host-piped against
# host-serial, gpu0 and nvcc; host-piped's launch + download against the
# bound). Environment: REPS (5), SCALE (1: 2^28 floats per vecadd array),
# KERNELS (all), TIMEOUT per configuration (150 s). Exit status 0 when
# every run finished and computed right.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
carry=$(cd "${1:-$root/build/gpu-carry-pipeline}" && pwd)
out=${OUT:-.}
mkdir -p "$out"
jsonl=$out/pipeline.jsonl
log=$out/pipeline.log
: > "$jsonl"
: > "$log"
export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
args=(--reps "${REPS:-5}" --scale "${SCALE:-1}")
[ -n "${KERNELS:-}" ] && args+=(--kernels "$KERNELS")
tmo=${TIMEOUT:-150}
fails=0
say() { echo "$*" | tee -a "$log"; }
say "# pipeline benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ), host $(hostname), commit $(tr '\n' ' ' < "$carry/COMMIT")"
nvidia-smi -L 2>/dev/null | tee -a "$log"
say "cpus: $(nproc); load: $(uptime)"

# one LABEL ENV... -- BINARY ARGS...
one() {
  local label=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  say "== $label: ${envs[*]} $*"
  local t0=$(date +%s)
  env "${envs[@]}" timeout "$tmo" "$@" "${args[@]}" --label "$label" \
    >> "$jsonl" 2>> "$log"
  local rc=$?
  say "   rc=$rc, $(( $(date +%s) - t0 )) s"
  [ $rc = 0 ] || fails=$((fails + 1))
}

cl=(CLEAVE_DEVICES=gpu0 CLEAVE_CACHE_DIR=off)
one nvcc X=1 -- "$carry/bin/pipeline.nvcc"
one bound X=1 -- "$carry/bin/pipeline.nvcc" --bound
one gpu0 "${cl[@]}" -- "$carry/bin/pipeline.cleave"
one host-serial "${cl[@]}" CLEAVE_TUNE=pipeline=host-serial -- "$carry/bin/pipeline.cleave"
one host-piped "${cl[@]}" CLEAVE_TUNE=pipeline=host -- "$carry/bin/pipeline.cleave"
say "== plans: CLEAVE_LOG=plan, host-piped, one repetition"
env "${cl[@]}" CLEAVE_TUNE=pipeline=host CLEAVE_LOG=plan timeout "$tmo" \
  "$carry/bin/pipeline.cleave" --reps 1 --scale "${SCALE:-1}" \
  ${KERNELS:+--kernels "$KERNELS"} --label plans > /dev/null 2> "$out/plans.log" ||
  fails=$((fails + 1))

python3 - "$jsonl" > "$out/pipeline.md" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("{"):
        r = json.loads(line)
        rows[(r["kernel"], r["label"])] = r
med = lambda v: statistics.median(v) if v else float("nan")
kernels = sorted({k for k, _ in rows})
print("| kernel | nvcc | gpu0 | host-serial | host-piped | piped: launch+down | bound | piped vs serial | piped vs gpu0 | piped vs nvcc | (launch+down)/bound | ok |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for k in kernels:
    t = {l: med(rows[(k, l)]["total_ms"]) for l in ("nvcc", "gpu0", "host-serial", "host-piped") if (k, l) in rows}
    p = rows.get((k, "host-piped"))
    ld = med([a + b for a, b in zip(p["launch_ms"], p["download_ms"])]) if p else float("nan")
    b = rows.get((k, "bound"), {}).get("bound_ms", float("nan"))
    ok = all(r["ok"] for (kk, _), r in rows.items() if kk == k)
    g = lambda l: t.get(l, float("nan"))
    r = lambda a, c: a / c if c == c and c else float("nan")
    print(f"| {k} | {g('nvcc'):.1f} | {g('gpu0'):.1f} | {g('host-serial'):.1f} | {g('host-piped'):.1f} | {ld:.1f} | {b:.1f} | "
          f"{r(g('host-serial'), g('host-piped')):.2f}x | {r(g('gpu0'), g('host-piped')):.2f}x | {r(g('nvcc'), g('host-piped')):.2f}x | {r(ld, b):.2f} | {ok} |")
print()
print("Medians in ms of total_ms (copies in + launch + copies back) per configuration (run.sh's header);")
print("'piped vs X' is X's median over host-piped's (above 1: pipelined is faster).")
PY
cat "$out/pipeline.md" | tee -a "$log"
grep -q '"ok": false' "$jsonl" && fails=$((fails + 1))
exit $(( fails > 0 ))
