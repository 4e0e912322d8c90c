#!/usr/bin/env bash
# The whole CPU test suite: installs what is missing, builds, runs the unit
# tests (GoogleTest) and the lit suite. Exit status is non-zero on any failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
status=0
# opt-19 loading the pass plugin on its own (a CTest), then the runners.
(cd build && ctest -R opt-loads-plugin --output-on-failure) || status=1
# The runtime's unit tests (no LLVM), then the compiler's.
build/unittests/CleaveRuntimeTests --gtest_brief=1 || status=1
build/unittests/CleaveUnitTests --gtest_brief=1 || status=1
python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv build/test || status=1
exit $status
