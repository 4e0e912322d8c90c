#!/usr/bin/env bash
# Cleave's main job on an example: compile an unmodified CUDA program
# (examples/matmul.cu by default, or the one named: vecadd, blackscholes,
# matmul, transpose, reduction, histogram, jacobi2d, nbody) with
# `cleave compile`, then run it across every device present (the CPU and
# each GPU), printing the plan of each launch (which device ran which blocks,
# the bytes moved) and the program's check against its CPU reference.
#   bash scripts/run-example.sh [example] [program arguments...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh >/dev/null
name=${1:-matmul}
shift || true
src=examples/$name.cu
[ -f "$src" ] || { echo "run-example: no $src" >&2; exit 1; }
out=build/examples
mkdir -p "$out"
echo "== cleave compile $src -o $out/$name"
build/bin/cleave compile "$src" -o "$out/$name"
echo "   (rewritten host code: $out/$name.cleave.cpp)"
echo "== CLEAVE_LOG=devices,plan $out/$name $*"
CLEAVE_LOG=devices,plan "$out/$name" "$@"
if ! CLEAVE_LOG=devices "$out/$name" "$@" 2>&1 | grep -q "gpu[0-9]"; then
  # The default policy (the model) keeps launches on one of two CPU
  # devices that share the cores; an even split shows the machinery.
  echo "== no GPU here: the same program split evenly over two CPU devices"
  CLEAVE_DEVICES=cpu,cpu CLEAVE_PARTITION=even CLEAVE_LOG=plan "$out/$name" "$@"
fi
