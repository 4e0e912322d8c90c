#!/usr/bin/env bash
# Here (the machine with LLVM and nvcc): builds the multi-GPU host-link
# benchmark (issue 32) into a folder to carry to a 2x, 4x or 8x GPU machine,
# where bench/linkstates/run.sh runs it. The programs are bench/pipeline's
# (bench/pipeline/prepare.sh builds them, with their CPU check); beside them
# bin/linkbound, the planner's numbers for one kernel (linkbound.cpp, on
# the runtime's model and profile libraries of build/).
#   bench/linkstates/prepare.sh [CARRY_DIR]  (default build/gpu-carry-linkstates)
# Environment: as bench/pipeline/prepare.sh; BUILD (build): where
# libcleave-rt-model.a and libcleave-rt-profile.a are (ninja -C build
# cleave-rt-model cleave-rt-profile); CXX (g++).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
carry=$(realpath -m "${1:-$root/build/gpu-carry-linkstates}")
build=$(realpath "${BUILD:-$root/build}")
"$root/bench/pipeline/prepare.sh" "$carry"
"${CXX:-g++}" -std=c++17 -O2 -I"$root/runtime/include" -I"$build/include" \
  -I"$root/include" "$root/bench/linkstates/linkbound.cpp" \
  "$build/runtime/libcleave-rt-model.a" "$build/runtime/libcleave-rt-profile.a" \
  -o "$carry/bin/linkbound"
# The planner on the committed 4x profile: it answers.
"$carry/bin/linkbound" --profile "$root/profiles/h200x4-all.json" \
  --gpus 0,1,2,3 --blocks 1000 --wave 10 --kernel-ms 1 --send-bytes 1e9 \
  --receive-bytes 1e9 > /dev/null
cp -r "$root/profiles" "$carry/profiles"
echo "carry: ${carry#$root/} (run there: bench/linkstates/run.sh ${carry#$root/})"
