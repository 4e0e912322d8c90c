#!/usr/bin/env bash
# Here (the machine with LLVM): builds every program of suite.txt with
# `cleave compile -O3` into build/gpu-carry-accuracy/ (one binary per program,
# named after the source file), with libcleave_rt.so, libtbb.so.12, the suite
# and measure.sh with the suite parser it sources (suite.sh) next to them,
# for bench/accuracy/measure.sh on a GPU machine
# (which has no LLVM). Carry that directory with the `run` tool:
#   bench/accuracy/prepare.sh [CLEAVE]         (default: build/bin/cleave)
#   (GPU) build/gpu-carry-accuracy/measure.sh  (writes $OUT/measured.jsonl)
# Environment: CARRY (default build/gpu-carry-accuracy), SUITE.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/suite.sh"
root=$(cd "$here/../.." && pwd)
. "$root/scripts/carry.sh"
cleave=${1:-${CLEAVE:-$root/build/bin/cleave}}
suite=${SUITE:-$here/suite.txt}
carry=${CARRY:-$root/build/gpu-carry-accuracy}
[ -x "$cleave" ] || { echo "prepare: no cleave at $cleave" >&2; exit 1; }
rm -rf "$carry"
mkdir -p "$carry/bin"
declare -A built=()
while IFS='|' read -r id prog _; do
  name=$(basename "$prog" .cu)
  [ -n "${built[$name]:-}" ] && continue
  [ -f "$root/$prog" ] || { echo "prepare: $id: no $prog" >&2; exit 1; }
  echo "prepare: cleave compile -O3 $prog"
  "$cleave" compile -O3 "$root/$prog" -o "$carry/bin/$name" < /dev/null
  built[$name]=1
done < <(suite_entries "$suite")
lib=$(dirname "$cleave")/../lib/libcleave_rt.so
carry_runtime "$lib" "$carry"
cp "$suite" "$carry/suite.txt"
cp "$here/measure.sh" "$here/suite.sh" "$carry/"
carry_commit "$root" "$carry/COMMIT"
du -sh "$carry"
