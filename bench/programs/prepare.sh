#!/usr/bin/env bash
# Here (the machine with LLVM and nvcc): builds every program of the corpus
# (test/programs/, README.md there) twice, by nvcc -O3 -arch=sm_90 and by
# `cleave compile -O3`, into a folder to carry to the GPU machine, where
# bench/programs/run.sh runs them (the GPU machine has no LLVM).
#   bench/programs/prepare.sh [CARRY_DIR]     (default build/gpu-carry-corpus)
# Environment: CLEAVE (build/bin/cleave), NVCC (/usr/local/cuda/bin/nvcc),
# PROGRAMS (names, comma-separated; default all).
#
# Each program's sources are those of its lit RUN line (`%build ... -o`), so
# the benchmark builds exactly what CI tests. A program Cleave cannot build
# yet (a missing feature: its test is XFAIL) keeps its nvcc build; its line
# in programs.tsv says why, and run.sh reports it as "no-build".
#
# The folder holds corpus.tar.xz (2-3 MB: the unpacked binaries, each nvcc
# build carrying its static CUDA runtime, would be most of the 64 MiB that
# one device call carries; run.sh unpacks it with Python's tarfile) with
# bin/NAME.nvcc, bin/NAME.cleave, lib/ (libcleave_rt.so and libtbb.so.12),
# programs.tsv (name, nvcc built, cleave built, XFAIL reason) and COMMIT;
# beside it, for reading here, programs.tsv and logs/NAME.{nvcc,cleave}.log.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/carry.sh"
carry=$(realpath -m "${1:-$root/build/gpu-carry-corpus}")
cleave=${CLEAVE:-$root/build/bin/cleave}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$cleave" ] || { echo "prepare: no $cleave (build the cleave target)" >&2; exit 1; }
[ -x "$nvcc" ] || { echo "prepare: no nvcc at $nvcc (set NVCC)" >&2; exit 1; }
rm -rf "$carry"
mkdir -p "$carry/bin" "$carry/lib" "$carry/logs"

programs=$root/test/programs
list=$carry/programs.tsv
printf 'name\tnvcc\tcleave\txfail\n' > "$list"
# The main file of each program is the one with a RUN line.
for main in $(grep -rl --include='*.cu' '^// RUN: %build' "$programs" | sort); do
  dir=$(dirname "$main")
  if [ "$dir" = "$programs" ]; then name=$(basename "$main" .cu); else name=$(basename "$dir"); fi
  if [ -n "${PROGRAMS:-}" ] && [[ ",$PROGRAMS," != *",$name,"* ]]; then continue; fi
  # "// RUN: %build %s %S/other.cu -o %t" -> the sources.
  srcs=$(sed -n 's|^// RUN: %build \(.*\) -o %t$|\1|p' "$main" | head -1)
  srcs=${srcs//%s/$main}
  srcs=${srcs//%S/$dir}
  xfail=$(sed -n 's|^// issue 25: ||p' "$main" | head -1)
  okn=0; okc=0
  # shellcheck disable=SC2086
  "$nvcc" -O3 -arch=sm_90 $srcs -o "$carry/bin/$name.nvcc" > "$carry/logs/$name.nvcc.log" 2>&1 && okn=1
  # shellcheck disable=SC2086
  "$cleave" compile -O3 $srcs -o "$carry/bin/$name.cleave" > "$carry/logs/$name.cleave.log" 2>&1 && okc=1
  rm -f "$carry/bin/$name.cleave.cleave.cpp" "$carry"/bin/*.cleave.cpp
  printf '%s\t%d\t%d\t%s\n' "$name" "$okn" "$okc" "$xfail" >> "$list"
  echo "prepare: $name: nvcc $([ $okn = 1 ] && echo built || echo FAILED), cleave $([ $okc = 1 ] && echo built || echo FAILED)"
done

lib=$(dirname "$cleave")/../lib/libcleave_rt.so
carry_runtime "$lib" "$carry/lib"
carry_commit "$root" "$carry/COMMIT"
tar -cJf "$carry/corpus.tar.xz" -C "$carry" bin lib programs.tsv COMMIT
rm -rf "$carry/bin" "$carry/lib"
du -sh "$carry"
