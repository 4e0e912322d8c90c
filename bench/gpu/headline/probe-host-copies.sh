#!/usr/bin/env bash
# On the GPU machine: builds and runs probe_host_copies.cu (see its header);
# the output goes to $OUT/probe-host-copies.txt when OUT is set.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
nvcc -O3 -std=c++17 -arch=sm_90 -Xcompiler -fopenmp \
  "$here/probe_host_copies.cu" -o "$tmp/probe" -lgomp
nvidia-smi -L
"$tmp/probe" | tee "${OUT:-$tmp}/probe-host-copies.txt"
