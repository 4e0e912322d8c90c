#!/usr/bin/env bash
# Installs what Cleave needs on Debian 12 (only what is missing), then
# configures and builds it in ./build. Safe to run again: it only rebuilds
# what changed. Sourced by test.sh and run-example.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PACKAGES=(
  cmake ninja-build g++ python3 python3-matplotlib
  llvm-19-dev libclang-19-dev clang-19 llvm-19-tools libclc-19 libclc-19-dev
  libgtest-dev libtbb-dev nlohmann-json3-dev libisl-dev
  pocl-opencl-icd ocl-icd-opencl-dev opencl-headers
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if ((${#missing[@]})); then
  echo "cleave setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ ! -x /usr/local/cuda/bin/ptxas ] && ! command -v ptxas >/dev/null; then
  echo "cleave setup: note: CUDA's ptxas not found; PTX will not be assembled"
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build
