#!/usr/bin/env bash
# Run here (the machine with LLVM and CUDA's nvcc/ptxas): writes what the GPU
# run loads.
#   gen_ptx.sh CLEAVE [CLEAVE_UDIV | NAME=CLEAVE[,FLAG...]]...
# CLEAVE: the driver to measure (build*/bin/cleave). For each kernel K of
# test/Inputs:
#   ptx/K.ptx     its `cleave compile --emit=ptx` output, plus hand-made
#                 entries (make_variants.py): __cleave_box_K and, for 2-D
#                 grids, __cleave_rows_K (other launch conventions for the
#                 partition-ready variant), and, for the 1-D kernels,
#                 __cleave_nd_K (the original's body taking the partition
#                 parameters without reading them: a control);
#   ptx/K.cubin   ptxas -arch=sm_90 of ptx/K.ptx (what is timed; the same
#                 file is disassembled on the GPU machine);
#   ptx/nvcc/K.{ptx,cubin}  nvcc -O3 -arch=sm_90 of the same source;
#   ptx/ptxas-K.txt, ptx/nvcc/ptxas-K.txt  ptxas -v (registers, spills).
# CLEAVE_UDIV, optional: a driver built before the multiply-shift decode,
# timed as "partition_udiv" (its calling convention: i64 first, grid x/y/z).
# NAME=CLEAVE[,FLAG...]: another Cleave build, written to ptx/NAME/ the same
# way as the main one (variants, cubin) and timed as "original@NAME",
# "partition@NAME", ... when the GPU run gets BUILDS=NAME. FLAGs: -O3 (pass
# `-O 3`), llc (emit IR and let llc-19 -O2 make the PTX, out of process).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cleave=${1:?usage: gen_ptx.sh CLEAVE [CLEAVE_UDIV]}
cuda=${CUDA_PATH:-/usr/local/cuda}
kernels="vecadd matmul transpose stencil3d blackscholes reduction"
declare -A mangled=(
  [vecadd]=_Z6vecaddPKfS0_Pfi [matmul]=_Z6matmulPKfS0_Pfiii
  [transpose]=_Z9transposePfPKfii [stencil3d]=_Z9stencil3dPKfPfiii
  [blackscholes]=_Z12blackscholesPfS_PKfS1_S1_ffi
  [reduction]=_Z10reduce_sumPKfPfi)
rm -rf "$here/ptx"
mkdir -p "$here/ptx/nvcc"
# cleave_build DRIVER FLAGS OUTDIR: the variants and cubins of one build.
cleave_build() {
  local drv=$1 flags=$2 dir=$3 opt=() k nd
  mkdir -p "$dir"
  case ",$flags," in *,-O3,*) opt=(-O 3) ;; esac
  for k in $kernels; do
    if [[ ",$flags," == *,llc,* ]]; then
      "$drv" compile "${opt[@]}" --emit=ir "$repo/test/Inputs/$k.cu" -o "$dir/$k.ll"
      llc-19 -O2 -mcpu=sm_90 -mattr=+ptx85 "$dir/$k.ll" -o "$dir/$k.ptx"
      rm "$dir/$k.ll"
    else
      "$drv" compile "${opt[@]}" --emit=ptx "$repo/test/Inputs/$k.cu" -o "$dir/$k.ptx"
    fi
    # The bundle of the same compile: the rebased variants' records.
    "$drv" compile "${opt[@]}" --emit=bundle "$repo/test/Inputs/$k.cu" -o "$dir/$k.clvb"
    nd=
    case $k in vecadd|blackscholes|reduction) nd=--nodecode ;; esac
    python3 "$here/make_variants.py" "$dir/$k.ptx" "${mangled[$k]}" $nd
    "$cuda/bin/ptxas" -arch=sm_90 -v "$dir/$k.ptx" -o "$dir/$k.cubin" \
      > "$dir/ptxas-$k.txt" 2>&1
  done
}
cleave_build "$cleave" "" "$here/ptx"
for k in $kernels; do
  "$cuda/bin/nvcc" -O3 -arch=sm_90 --ptx "$repo/test/Inputs/$k.cu" \
    -o "$here/ptx/nvcc/$k.ptx"
  "$cuda/bin/ptxas" -arch=sm_90 -v "$here/ptx/nvcc/$k.ptx" \
    -o "$here/ptx/nvcc/$k.cubin" > "$here/ptx/nvcc/ptxas-$k.txt" 2>&1
done
shift
for arg in "$@"; do
  case $arg in
    *=*) spec=${arg#*=}; cleave_build "${spec%%,*}" \
           "$( [[ $spec == *,* ]] && echo "${spec#*,}")" "$here/ptx/${arg%%=*}" ;;
    *) mkdir -p "$here/ptx/udiv"
       for k in $kernels; do
         "$arg" compile --emit=ptx "$repo/test/Inputs/$k.cu" -o "$here/ptx/udiv/$k.ptx"
       done ;;
  esac
done
{ "$cuda/bin/nvcc" --version | tail -2; "$cuda/bin/ptxas" --version | tail -1; } \
  > "$here/ptx/versions.txt"
