#!/usr/bin/env bash
# Run here (the machine with LLVM): writes the PTX the GPU run loads.
#   gen_ptx.sh CLEAVE [CLEAVE_UDIV]
# CLEAVE: the driver to measure (build*/bin/cleave). ptx/K.ptx is its output
# for test/Inputs/K.cu, plus, for the 1-D kernels, __cleave_nd_K: the
# original's body taking the partition parameters without reading them (a
# control: what the extra parameters and the launch path cost without any
# decode).
# CLEAVE_UDIV, optional: a driver built before the multiply-shift decode,
# timed as "partition_udiv" (its calling convention: i64 first, grid x/y/z).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cleave=${1:?usage: gen_ptx.sh CLEAVE [CLEAVE_UDIV]}
kernels="vecadd matmul transpose stencil3d blackscholes reduction"
rm -rf "$here/ptx"
mkdir -p "$here/ptx"
for k in $kernels; do
  "$cleave" compile --emit=ptx "$repo/test/Inputs/$k.cu" -o "$here/ptx/$k.ptx"
done
python3 - "$here/ptx" <<'PY'
import re, sys
d = sys.argv[1]
for k, name in [("vecadd", "_Z6vecaddPKfS0_Pfi"),
                ("blackscholes", "_Z12blackscholesPfS_PKfS1_S1_ffi"),
                ("reduction", "_Z10reduce_sumPKfPfi")]:
    path = f"{d}/{k}.ptx"
    text = open(path).read()
    start = text.index(f".visible .entry {name}(")
    end = text.index("\n}\n", start) + 3
    body = text[start:end].replace(name + "_param_", f"__cleave_nd_{name}_param_")
    body = body.replace(f".entry {name}(", f".entry __cleave_nd_{name}(")
    n = len(re.findall(r"\.param ", body[:body.index(")")]))
    extra = "".join(f",\n\t.param .u32 __cleave_nd_{name}_param_{n + i}"
                    for i in range(12))
    close = body.index("\n)")
    body = body[:close] + extra + body[close:]
    open(path, "w").write(text + "\n\t// .globl\t__cleave_nd_" + name + "\n" + body)
PY
if [ $# -ge 2 ]; then
  mkdir -p "$here/ptx/udiv"
  for k in $kernels; do
    "$2" compile --emit=ptx "$repo/test/Inputs/$k.cu" -o "$here/ptx/udiv/$k.ptx"
  done
fi
for f in "$here"/ptx/*.ptx; do /usr/local/cuda/bin/ptxas -arch=sm_90 "$f" -o /dev/null; done
