#!/usr/bin/env bash
# Here (the machine with LLVM): builds the headline benchmark
# (bench/gpu/headline/headline.cu) with `cleave compile` into a carry
# directory, with libcleave_rt.so and libtbb.so.12 next to it, for
# bench/gpu/headline/run.sh on the GPU machine (which has no LLVM).
#   bench/gpu/headline/prepare.sh [BUILD_DIR]   (default: build)
# The carry directory is BUILD_DIR/gpu-carry-headline; the binary's
# cleave and libcleave_rt.so are BUILD_DIR's.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
. "$root/scripts/carry.sh"
build=$(cd "${1:-$root/build}" && pwd)
cleave=$build/bin/cleave
carry=$build/gpu-carry-headline
[ -x "$cleave" ] || { echo "prepare.sh: no $cleave (ninja -C $build cleave cleave-rt-shared)" >&2; exit 1; }
lib=$build/lib/libcleave_rt.so
[ -e "$lib" ] || { echo "prepare.sh: no $lib (ninja -C $build cleave-rt-shared)" >&2; exit 1; }
rm -rf "$carry"
mkdir -p "$carry/bin"
"$cleave" compile -O3 -I "$root/runtime/include" \
  "$root/bench/gpu/headline/headline.cu" -o "$carry/bin/headline"
carry_runtime "$lib" "$carry"
carry_commit "$root" "$carry/COMMIT"
du -sh "$carry"
echo "carry: ${carry#$root/} (run: bench/gpu/headline/run.sh ${carry#$root/})"
