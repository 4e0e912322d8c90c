#!/usr/bin/env bash
# Cleave's main job on an example: compile examples/vecadd.cu's kernels
# through the frontend and the partition and merge transforms, and print the
# PTX of the original kernel and of its variants.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh >/dev/null
echo "== cleave compile --emit=ptx -Rpass=cleave examples/vecadd.cu"
build/bin/cleave compile --emit=ptx -Rpass=cleave -Rpass-missed=cleave examples/vecadd.cu
