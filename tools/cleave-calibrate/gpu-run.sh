#!/usr/bin/env bash
# Runs on a GPU machine (CUDA driver, no LLVM needed): profiles the whole
# machine (every GPU, the host links and the CPU), then each GPU alone, and
# writes the profiles and logs under $OUT (default ./calibrate-out).
#
#   tools/cleave-calibrate/gpu-run.sh [BINARY] [--quick]
#
# BINARY defaults to $CLEAVE_CALIBRATE, else the first build*/bin/
# cleave-calibrate under the repository root. Files written:
#   <tag>-all.json, <tag>-gpuN.json   the profiles (tag: h100x1, h200x4, ...)
#   <tag>-*.log                       the tool's progress (stderr)
#   <tag>-nvidia-smi.txt              nvidia-smi -L and the topology matrix
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

BIN="${CLEAVE_CALIBRATE:-}"
QUICK=""
for a in "$@"; do
  case "$a" in
    --quick) QUICK="--quick" ;;
    *) BIN="$a" ;;
  esac
done
if [ -z "$BIN" ]; then
  for b in build*/bin/cleave-calibrate; do
    [ -x "$b" ] && BIN="$b" && break
  done
fi
if [ -z "$BIN" ] || [ ! -x "$BIN" ]; then
  echo "gpu-run.sh: no cleave-calibrate binary (give its path, or carry a build*/bin)" >&2
  exit 1
fi
# oneTBB is not needed; a libtbb carried next to the binary is harmless.
export LD_LIBRARY_PATH="$(dirname "$BIN")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

OUT="${OUT:-./calibrate-out}"
mkdir -p "$OUT"

ngpu=0
model="gpu"
if command -v nvidia-smi >/dev/null; then
  ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  m=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 |
      grep -oE '[A-Z][0-9]{2,4}' | head -1 | tr 'A-Z' 'a-z')
  [ -n "$m" ] && model="$m"
fi
tag="${model}x${ngpu}"
{
  nvidia-smi -L 2>&1
  echo
  nvidia-smi topo -m 2>&1
} > "$OUT/$tag-nvidia-smi.txt" || true

status=0
run() {
  local name="$1"; shift
  echo "gpu-run.sh: $BIN $* -> $OUT/$tag-$name.json" >&2
  local t0=$SECONDS
  if ! "$BIN" "$@" $QUICK -o "$OUT/$tag-$name.json" 2> "$OUT/$tag-$name.log"; then
    echo "gpu-run.sh: $name failed; see $OUT/$tag-$name.log" >&2
    tail -5 "$OUT/$tag-$name.log" >&2
    status=1
  fi
  echo "gpu-run.sh: $name took $((SECONDS - t0)) s" >&2
}

run all --device=all
if [ "$ngpu" -gt 1 ]; then
  for ((i = 0; i < ngpu; i++)); do
    run "gpu$i" "--device=gpu$i"
  done
fi
exit $status
