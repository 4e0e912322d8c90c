#!/usr/bin/env bash
# Here (the machine with LLVM): builds the cleave tile benchmark programs of
# this directory (README.md) into a folder to carry to the GPU machine, where
# its run.sh runs them (the GPU machine has no LLVM).
#   bench/tile/prepare.sh [CARRY_DIR]         (default build/gpu-carry-tile)
# Environment: CLEAVE (build/bin/cleave), CXX (clang++), PROGS
# ("edit_distance smith_waterman sor blocks"), STENCIL (1; 0 leaves the stencils out).
# For each program: bin/NAME.tiled (`cleave tile`, then `cleave compile -O3`:
# the model's candidate tile sizes, swept on the first run of each size and
# cached), bin/NAME.model (-DCLEAVE_TILE_AUTOTUNE=0: the model's size),
# bin/NAME.persistent and bin/NAME.launches (the same with
# CLEAVE_TILE_WAVEFRONT=1 and 0: the persistent kernel and one launch per
# anti-diagonal forced) and bin/NAME.seq (clang++ -O3 of the same source: the host compiler ignores
# the pragma); src/ with the naive CUDA ports, which run.sh builds with the
# GPU machine's nvcc; lib/ (libcleave_rt.so, libtbb.so.12); run.sh; COMMIT.
# The stencils (stencil.cpp, technique(timeskew)): bin/stencil.tiled (the
# model chooses at run time), bin/stencil.tiles and bin/stencil.steps
# (CLEAVE_TILE_SCHEDULE=1 and 0 force time tiles and one launch per step),
# bin/stencil.seq and bin/stencil.omp ($CXX -O3, and -fopenmp, with the
# libomp it links in lib/); src/naive/stencil.cu.
# logs/ (beside, for reading here) holds cleave tile's remarks.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/scripts/carry.sh"
carry=$(realpath -m "${1:-$root/build/gpu-carry-tile}")
cleave=${CLEAVE:-$root/build/bin/cleave}
cxx=${CXX:-clang++}
progs=${PROGS-edit_distance smith_waterman sor blocks}
stencil=${STENCIL:-1}
[ -x "$cleave" ] || { echo "prepare: no $cleave (build the cleave target)" >&2; exit 1; }
rm -rf "$carry"
mkdir -p "$carry/bin" "$carry/lib" "$carry/logs" "$carry/src/naive"
for p in $progs; do
  echo "prepare: $p: cleave tile, cleave compile -O3 (rule, model, persistent, launches); $cxx -O3"
  "$cleave" tile "$here/$p.cpp" -o "$carry/logs/$p.cu" 2> "$carry/logs/$p.tile.log"
  # The benchmark is meaningless if the nest was left as written.
  grep -q 'remark: cleave tile: nest tiled' "$carry/logs/$p.tile.log" ||
    { cat "$carry/logs/$p.tile.log" >&2; echo "prepare: $p: nest not tiled" >&2; exit 1; }
  # tiled: the run-time rule picks the schedule (docs/tile.md); persistent
  # and launches force the persistent kernel and one launch per
  # anti-diagonal (CLEAVE_TILE_WAVEFRONT).
  for v in tiled:"" model:-DCLEAVE_TILE_AUTOTUNE=0 persistent:-DCLEAVE_TILE_WAVEFRONT=1 launches:-DCLEAVE_TILE_WAVEFRONT=0; do
    "$cleave" compile -O3 ${v#*:} -I "$here" "$carry/logs/$p.cu" \
      -o "$carry/bin/$p.${v%%:*}" < /dev/null 2> "$carry/logs/$p.${v%%:*}.log"
  done
  rm -f "$carry"/bin/*.cleave.cpp
  "$cxx" -std=c++17 -O3 -Wno-unknown-pragmas "$here/$p.cpp" -o "$carry/bin/$p.seq"
  cp "$here/$p.cpp" "$carry/src/"
  cp "$here/naive/$p.cu" "$carry/src/naive/"
done
if [ "$stencil" = 1 ]; then
  echo "prepare: stencil: cleave tile, cleave compile -O3 (model, tiles, steps); $cxx -O3 (seq, -fopenmp)"
  "$cleave" tile "$here/stencil.cpp" -o "$carry/logs/stencil.cu" 2> "$carry/logs/stencil.tile.log"
  tiled=$(grep -c 'remark: cleave tile: nest tiled' "$carry/logs/stencil.tile.log" || true)
  [ "$tiled" = 8 ] ||
    { cat "$carry/logs/stencil.tile.log" >&2; echo "prepare: stencil: $tiled of 8 nests tiled" >&2; exit 1; }
  for v in tiled:"" tiles:-DCLEAVE_TILE_SCHEDULE=1 steps:-DCLEAVE_TILE_SCHEDULE=0; do
    "$cleave" compile -O3 ${v#*:} -I "$here" "$carry/logs/stencil.cu" \
      -o "$carry/bin/stencil.${v%%:*}" < /dev/null 2> "$carry/logs/stencil.${v%%:*}.log"
  done
  rm -f "$carry"/bin/*.cleave.cpp
  "$cxx" -std=c++17 -O3 -Wno-unknown-pragmas "$here/stencil.cpp" -o "$carry/bin/stencil.seq"
  "$cxx" -std=c++17 -O3 -fopenmp "$here/stencil.cpp" -o "$carry/bin/stencil.omp"
  omp=$(ldd "$carry/bin/stencil.omp" | awk '/libomp|libgomp/ {print $3; exit}')
  [ -n "$omp" ] && cp -L "$omp" "$carry/lib/"
  cp "$here/stencil.cpp" "$carry/src/"
  cp "$here/naive/stencil.cu" "$carry/src/naive/"
fi
cp "$here/bench.h" "$carry/src/"
cp "$here/naive/naive.cuh" "$carry/src/naive/"
cp "$here/run.sh" "$carry/"
lib=$(dirname "$cleave")/../lib/libcleave_rt.so
carry_runtime "$lib" "$carry/lib"
carry_commit "$root" "$carry/COMMIT"
du -sh "$carry"
