#!/usr/bin/env bash
# The probe of host copy paths (probe_host_copies.cu, see its header).
#   probe-host-copies.sh --build DIR   here: builds DIR/probe (oneTBB rows
#                                      included) with libtbb.so.12 beside it
#   probe-host-copies.sh [DIR]         on the GPU machine: runs DIR/probe,
#                                      or builds one there without oneTBB
# The output goes to $OUT/probe-host-copies.txt when OUT is set.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ "${1:-}" = --build ]; then
  mkdir -p "$2"
  "$nvcc" -O3 -std=c++17 -arch=sm_90 -DPROBE_TBB -Xcompiler -fopenmp \
    "$here/probe_host_copies.cu" -o "$2/probe" -ltbb -lgomp
  cp -L "$(ldd "$2/probe" | awk '/libtbb\.so/ {print $3; exit}')" "$2/"
  cp -L "$(ldd "$2/probe" | awk '/libgomp\.so/ {print $3; exit}')" "$2/"
  exit 0
fi
if [ -n "${1:-}" ]; then
  dir=$(cd "$1" && pwd)
  probe=$dir/probe
  export LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  tmp=$(mktemp -d)
  "$nvcc" -O3 -std=c++17 -arch=sm_90 -Xcompiler -fopenmp \
    "$here/probe_host_copies.cu" -o "$tmp/probe" -lgomp
  probe=$tmp/probe
fi
nvidia-smi -L
"$probe" | tee "${OUT:-/tmp}/probe-host-copies.txt"
