#!/usr/bin/env bash
# Cleave's main job on an example, as far as it goes today: compile
# examples/vecadd.cu's kernels through the frontend, the analyses and the
# partition, merge and CPU transforms into a kernel bundle, and print what the
# runtime will read from it (variants, parameter roles, footprints). Running
# the program across the devices needs the runtime's launch path and the host
# rewriter (not yet built; see docs/README.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh >/dev/null
out=build/examples
mkdir -p "$out"
echo "== cleave compile --emit=bundle -Rpass=cleave examples/vecadd.cu"
build/bin/cleave compile --emit=bundle -Rpass=cleave -Rpass-missed=cleave \
  examples/vecadd.cu -o "$out/vecadd.clvb"
build/bin/cleave compile --emit=cpu-obj examples/vecadd.cu -o "$out/vecadd-cpu.o"
echo "== cleave-bundle-info $out/vecadd.clvb"
build/bin/cleave-bundle-info "$out/vecadd.clvb"
echo "== PTX entry points"
build/bin/cleave compile --emit=ptx examples/vecadd.cu | grep '\.entry'
