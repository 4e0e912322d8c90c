#!/usr/bin/env bash
# Prepares what test/gpu/run-engine.sh needs on a GPU machine, which has no
# LLVM: the bundle of test/Runtime/Engine/Inputs/kernels.cu (PTX, plus the
# sm_90 cubin when ptxas is found), the engine harness linked with the CPU
# variants and the runtime, and libtbb.so.12 next to it (the binary's rpath
# is $ORIGIN).
#
#   test/gpu/prepare-engine.sh [BUILD_DIR] [CARRY_DIR]
#
# BUILD_DIR defaults to build-h1 (it must have built cleave and the runtime
# libraries); CARRY_DIR to BUILD_DIR/gpu-carry.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build-h1}" && pwd)
carry=${2:-$build/gpu-carry}
llvm_bin=$(llvm-config-19 --bindir 2>/dev/null || echo /usr/lib/llvm-19/bin)
inputs=$root/test/Runtime/Engine/Inputs
mkdir -p "$carry"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "prepare-engine: bundle"
"$build/bin/cleave" compile --emit=bundle "$inputs/kernels.cu" -o "$carry/engine.clvb"
echo "prepare-engine: CPU variants (kernels and their merge kernels)"
"$build/bin/cleave" compile --emit=cpu-obj "$inputs/kernels.cu" \
  -o "$tmp/kernels.cpu.o"
echo "prepare-engine: harness"
"$llvm_bin/clang++" -std=c++17 -O1 -I"$root/runtime/include" -I"$root/include" -c \
  "$inputs/engine_harness.cpp" -o "$tmp/harness.o"
"$llvm_bin/clang++" -o "$carry/engine_harness" "$tmp/harness.o" \
  "$tmp/kernels.cpu.o" \
  "$build/runtime/libcleave-rt.a" "$build/runtime/libcleave-rt-bundle.a" \
  "$build/runtime/libcleave-rt-footprint.a" "$build/runtime/libcleave-rt-cpu.a" \
  "$build/runtime/libcleave-rt-profile.a" \
  -ltbb -ldl -lpthread -Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN'
tbb=$(ldd "$carry/engine_harness" | awk '/libtbb\.so/ {print $3; exit}')
if [ -z "$tbb" ]; then
  echo "prepare-engine: libtbb not found in ldd output" >&2
  exit 1
fi
# A carry made before resolves libtbb to its own copy ($ORIGIN).
[ "$tbb" -ef "$carry/libtbb.so.12" ] || cp -L "$tbb" "$carry/libtbb.so.12"
cp "$root/test/gpu/run-engine.sh" "$carry/"
echo "prepare-engine: ready in $carry:"
ls -l "$carry"
