#!/usr/bin/env bash
# Where `cleave compile -O3 FILE` spends its time, phase by phase, in CPU
# seconds (user + system, children included: steadier than wall time on a
# shared machine). Each phase is run on its own:
#
#   bench/compile/breakdown.sh FILE.cu [BUILD_DIR]
#
#   host parse+rewrite   cleave compile --emit=host-source
#   device frontend      cleave compile --emit=ir (device code only)
#   bundle               cleave compile --emit=bundle (frontend, CPU lowering
#                        for the variant names, GPU variants, PTX, ptxas)
#   CPU object           cleave compile --emit=cpu-obj (frontend, CPU lowering,
#                        O3, x86 code generation)
#   host compile         g++ -O3 -c of the rewritten host source
#   O3 / x86 codegen     opt-19 -O3 and llc-19 on the lowered CPU module, and
#                        on its parts: the ordinary variants, the checked twins,
#                        the merge kernels' variants (with their twins)
set -euo pipefail
IN=$(realpath "$1")
BUILD=$(realpath "${2:-build}")
CLEAVE="$BUILD/bin/cleave"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LLVM=/usr/lib/llvm-19/bin
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cpu() { # NAME CMD...: prints NAME and the CPU seconds of CMD
  local name=$1
  shift
  /usr/bin/time -f "%U %S" -o "$W/t" "$@" >/dev/null 2>"$W/err" ||
    { cat "$W/err" >&2; exit 1; }
  awk -v n="$name" '{printf "%-44s %6.2f\n", n, $1 + $2}' "$W/t"
}
echo "# $(basename "$IN"): CPU seconds per phase; $(uptime | sed 's/.*load/load/')"
cpu "host parse+rewrite" "$CLEAVE" compile -O3 --emit=host-source "$IN" -o "$W/host.cpp"
cpu "device frontend" "$CLEAVE" compile -O3 --emit=ir --cleave-passes=cleave-swap-grid "$IN" -o "$W/dev.ll"
cpu "bundle (GPU variants, PTX, ptxas)" "$CLEAVE" compile -O3 --emit=bundle "$IN" -o "$W/b"
cpu "CPU object (whole)" "$CLEAVE" compile -O3 --emit=cpu-obj "$IN" -o "$W/cpu.o"
cpu "host compile (g++ -O3 -c)" g++ -O3 -I"$ROOT/runtime/include" -I/usr/local/cuda/include \
  -isystem /usr/local/cuda/include/cccl -w -c -x c++ "$W/host.cpp" -o "$W/host.o"
# The CPU module as the driver lowers it: merge kernels first, lowered as
# kernels (lowerForCPU in lib/Bundle/BundleWriter.cpp).
P="$BUILD/lib/CleavePasses.so"
"$LLVM/opt" -load-pass-plugin="$P" -passes=cleave-swap-grid,cleave-merge "$W/dev.ll" -S -o "$W/m.ll"
sed -i 's/"cleave-variant"="merge"//' "$W/m.ll"
cpu "  CPU lowering (cleave-cpu-lower)" "$LLVM/opt" -load-pass-plugin="$P" -passes=cleave-cpu-lower "$W/m.ll" -o "$W/low.bc"
cpu "  O3 (all)" "$LLVM/opt" -O3 -mcpu=x86-64-v3 "$W/low.bc" -o "$W/opt.bc"
LLC=("$LLVM/llc" -O3 -mcpu=x86-64-v3 -fp-contract=off -relocation-model=pic -filetype=obj)
cpu "  x86 codegen (all)" "${LLC[@]}" "$W/opt.bc" -o "$W/all.o"
part() { # NAME LLVM-EXTRACT-ARGS...: O3 and codegen of part of the module
  local name=$1
  shift
  "$LLVM/llvm-extract" "$@" "$W/low.bc" -o "$W/p.bc" 2>/dev/null
  cpu "    O3, $name" "$LLVM/opt" -O3 -mcpu=x86-64-v3 "$W/p.bc" -o "$W/p.opt.bc"
  cpu "    x86 codegen, $name" "${LLC[@]}" "$W/p.opt.bc" -o "$W/p.o"
}
part "ordinary variants" --delete --rfunc='_checked$' --rfunc='^__cleave_cpu___cleave_merge_'
part "checked twins" --rfunc='_checked$'
"$LLVM/llvm-dis" "$W/low.bc" -o "$W/low.ll" 2>/dev/null
if grep -q '^define.*@__cleave_cpu___cleave_merge_' "$W/low.ll"; then
  part "merge variants and their twins" --rfunc='^__cleave_cpu___cleave_merge_'
fi
