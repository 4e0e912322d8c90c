#!/usr/bin/env python3
"""Writes a CUDA program of N warp-reduction kernels, the way users write them.

The compile-time benchmark (bench/compile/README.md) builds it with nvcc and
with Cleave. Each kernel reduces one warp's values with a warp collective and
writes the warp's result; main launches every kernel once and checks every
result against the host (exact: integers, or floats whose sums are exact),
so the program is also a correctness test of the CPU variants.

Kinds of kernels, in turn (--kind mixed), or one kind throughout:
  cg-plus      cg::reduce(tile, float, cg::plus<float>())
  cg-greater   cg::reduce(tile, int, cg::greater<int>())
  cg-plus-int  cg::reduce(tile, int, cg::plus<int>())
  xor          a __shfl_xor_sync butterfly loop (float)
  down         a __shfl_down_sync tree (int)
  up-scan      a __shfl_up_sync inclusive scan (int)

usage: gen_warp_kernels.py N [--kind KIND] > file.cu
"""
import argparse

KINDS = ["cg-plus", "cg-greater", "cg-plus-int", "xor", "down", "up-scan"]


def kernel(i, kind):
    """Source of kernel i of the given kind; its result per warp."""
    if kind.startswith("cg-"):
        ty = "float" if kind == "cg-plus" else "int"
        op = "cg::greater<int>()" if kind == "cg-greater" else f"cg::plus<{ty}>()"
        return f"""
__global__ void k{i}(const int *in, {ty} *out, int n) {{
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  {ty} v = idx < n ? ({ty})(in[idx] * {i % 7 + 1}) : ({ty})0;
  {ty} r = cg::reduce(tile, v, {op});
  if (tile.thread_rank() == 0)
    out[idx / 32] = r;
}}
"""
    if kind == "xor":
        return f"""
__global__ void k{i}(const int *in, float *out, int n) {{
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  float v = idx < n ? (float)(in[idx] * {i % 7 + 1}) : 0.0f;
  for (int mask = 16; mask > 0; mask >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, mask);
  if ((threadIdx.x & 31) == 0)
    out[idx / 32] = v;
}}
"""
    if kind == "down":
        return f"""
__global__ void k{i}(const int *in, int *out, int n) {{
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int v = idx < n ? in[idx] * {i % 7 + 1} : 0;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0)
    out[idx / 32] = v;
}}
"""
    assert kind == "up-scan"
    # The warp's result: its last lane's inclusive sum.
    return f"""
__global__ void k{i}(const int *in, int *out, int n) {{
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  int v = idx < n ? in[idx] * {i % 7 + 1} : 0;
  for (int d = 1; d < 32; d *= 2) {{
    int t = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d)
      v += t;
  }}
  if (lane == 31)
    out[idx / 32] = v;
}}
"""


def result_type(kind):
    return "float" if kind in ("cg-plus", "xor") else "int"


def program(n, kind):
    kinds = [KINDS[i % len(KINDS)] if kind == "mixed" else kind for i in range(n)]
    out = [f"""// {n} warp-reduction kernels ({kind}), written by
// bench/compile/gen_warp_kernels.py for the compile-time benchmark.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cg = cooperative_groups;

#define CUDA_CHECK(call)                                                       \\
  do {{                                                                         \\
    cudaError_t err_ = call;                                                   \\
    if (err_ != cudaSuccess) {{                                                 \\
      fprintf(stderr, "%s:%d: %s\\n", __FILE__, __LINE__,                       \\
              cudaGetErrorString(err_));                                       \\
      exit(1);                                                                 \\
    }}                                                                          \\
  }} while (0)
"""]
    for i, k in enumerate(kinds):
        out.append(kernel(i, k))
    out.append("""
// The expected result of warp w for a kernel that scales by s: the sum (or
// the maximum, for cg-greater) of the warp's scaled inputs (0 past n).
static long long expected(const std::vector<int> &h, int n, int w, int s,
                          bool isMax) {
  long long r = isMax ? -2147483647LL - 1 : 0;
  for (int i = w * 32; i < w * 32 + 32; ++i) {
    long long v = i < n ? (long long)h[i] * s : 0;
    r = isMax ? (v > r ? v : r) : r + v;
  }
  return r;
}

int main() {
  const int n = 4000, threads = 128;
  const int blocks = (n + threads - 1) / threads, warps = blocks * threads / 32;
  std::vector<int> h(n);
  srand(7);
  for (int i = 0; i < n; ++i)
    h[i] = rand() % 2001 - 1000;
  int *dIn;
  void *dOut;
  CUDA_CHECK(cudaMalloc(&dIn, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dOut, warps * sizeof(float) > warps * sizeof(int)
                                   ? warps * sizeof(float)
                                   : warps * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(dIn, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  std::vector<int> gotI(warps);
  std::vector<float> gotF(warps);
  int failures = 0;
""")
    for i, k in enumerate(kinds):
        ty = result_type(k)
        got = "gotF" if ty == "float" else "gotI"
        is_max = "true" if k == "cg-greater" else "false"
        out.append(f"""  k{i}<<<blocks, threads>>>(dIn, ({ty} *)dOut, n);
  CUDA_CHECK(cudaMemcpy({got}.data(), dOut, warps * sizeof({ty}), cudaMemcpyDeviceToHost));
  for (int w = 0; w < warps; ++w)
    if ((long long){got}[w] != expected(h, n, w, {i % 7 + 1}, {is_max}) && failures++ < 10)
      printf("FAIL: k{i} warp %d: %lld\\n", w, (long long){got}[w]);
""")
    out.append("""  printf(failures ? "FAIL\\n" : "PASS\\n");
  return failures != 0;
}
""")
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", type=int)
    ap.add_argument("--kind", default="mixed", choices=KINDS + ["mixed"])
    a = ap.parse_args()
    print(program(a.n, a.kind), end="")


if __name__ == "__main__":
    main()
