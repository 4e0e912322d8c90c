// OpenCL kernels through libclc: barrier(CLK_LOCAL_MEM_FENCE), __local
// memory (static and a kernel argument), get_local_id/get_group_id/
// get_local_size/get_global_id/get_num_groups on 1-D and 2-D NDRanges.
// RUN: %cl_to_ir %s -o %t.ll
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe
#ifndef CLEAVE_HOST_DRIVER
__kernel void cl_block_sum(__global const int *in, __global int *out, __local int *tmp, int n) {
  size_t l = get_local_id(0), g = get_global_id(0);
  tmp[l] = g < (size_t)n ? in[g] : 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (l < s) tmp[l] += tmp[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) out[get_group_id(0)] = tmp[0] * 1000 + (int)get_num_groups(0);
}
__kernel void cl_transpose(__global const float *in, __global float *out, int w, int h) {
  __local float tile[16][17];
  int x = get_global_id(0), y = get_global_id(1);
  int lx = get_local_id(0), ly = get_local_id(1);
  if (x < w && y < h) tile[ly][lx] = in[y * w + x];
  barrier(CLK_LOCAL_MEM_FENCE);
  int ox = get_group_id(1) * 16 + lx, oy = get_group_id(0) * 16 + ly;
  if (ox < h && oy < w) out[oy * h + ox] = tile[lx][ly];
}
#else
#include "harness.h"
CLEAVE_CPU_KERNEL(cl_block_sum);
CLEAVE_CPU_KERNEL(cl_transpose);
int main() {
  int F = 0;
  {
    int n = 3001; unsigned B = 64, G = (n + B - 1) / B;
    std::vector<int> in(n), out(G), w(G, 0);
    harness::fillInt(in, -1000, 1000);
    for (int i = 0; i < n; ++i) w[i / B] += in[i];
    for (unsigned g = 0; g < G; ++g) w[g] = w[g] * 1000 + int(G);
    const int *pi = in.data(); int *po = out.data(); void *loc = nullptr;
    void *Args[] = {&pi, &po, &loc, &n};
    F += harness::runPlans("cl_block_sum", __cleave_cpu_cl_block_sum_desc, Args,
                           harness::launch3(G, 1, 1, B, 1, 1, B * sizeof(int)),
                           [&] { std::fill(out.begin(), out.end(), 0); },
                           [&] { return harness::equal("out", out, w); });
  }
  {
    int W = 53, H = 37;
    std::vector<float> in(W * H), out(W * H), w(W * H);
    harness::fill(in, -1, 1);
    for (int y = 0; y < H; ++y) for (int x = 0; x < W; ++x) w[x * H + y] = in[y * W + x];
    const float *pi = in.data(); float *po = out.data();
    void *Args[] = {&pi, &po, &W, &H};
    F += harness::runPlans("cl_transpose", __cleave_cpu_cl_transpose_desc, Args,
                           harness::launch3((W + 15) / 16, (H + 15) / 16, 1, 16, 16, 1),
                           [&] { std::fill(out.begin(), out.end(), 0.f); },
                           [&] { return harness::equal("out", out, w); });
  }
  return F;
}
#endif
