// Warp-synchronous code: the last steps of a shared-memory reduction through
// a volatile pointer with no __syncwarp (warp_sync_tree, the unrolled form
// under `if (tid < 32)`), and a shift and a loop over a volatile view of
// dynamic shared memory by every lane of every warp (warp_sync_shift: each
// lane's store must wait for the other lanes' loads). The reference replays
// the warp in lockstep; the sums are exact integers.
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe | FileCheck %s
// CHECK: warp_sync_tree: ok
// CHECK: warp_sync_shift: ok
#ifndef CLEAVE_HOST_DRIVER
extern "C" __global__ void warp_sync_tree(const int *in, int *out) {
  __shared__ int sdata[128];
  unsigned tid = threadIdx.x;
  sdata[tid] = in[blockIdx.x * 128 + tid];
  __syncthreads();
  if (tid < 64)
    sdata[tid] += sdata[tid + 64];
  __syncthreads();
  if (tid < 32) {
    volatile int *s = sdata;
    s[tid] += s[tid + 32];
    s[tid] += s[tid + 16];
    s[tid] += s[tid + 8];
    s[tid] += s[tid + 4];
    s[tid] += s[tid + 2];
    s[tid] += s[tid + 1];
  }
  if (tid == 0)
    out[blockIdx.x] = sdata[0];
}

// 64 ints of dynamic shared memory per warp.
extern "C" __global__ void warp_sync_shift(const int *in, int *out) {
  extern __shared__ int buf[];
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  volatile int *seg = buf + warp * 64;
  seg[lane] = in[g];
  seg[lane + 32] = 0;
  seg[lane + 1] = seg[lane] * 3;
  for (int o = 16; o > 0; o >>= 1)
    seg[lane] += seg[lane + o];
  out[g] = seg[lane];
}
#else
#include "harness.h"
CLEAVE_CPU_KERNEL(warp_sync_tree);
CLEAVE_CPU_KERNEL(warp_sync_shift);

int main() {
  const unsigned Blocks = 37;
  int Failures = 0;
  {
    std::vector<int> In(Blocks * 128), Out(Blocks), Want(Blocks);
    harness::fillInt(In, -1000, 1000);
    for (unsigned B = 0; B < Blocks; ++B) {
      int S = 0;
      for (unsigned T = 0; T < 128; ++T)
        S += In[B * 128 + T];
      Want[B] = S;
    }
    const int *PI = In.data();
    int *PO = Out.data();
    void *Args[] = {&PI, &PO};
    Failures += harness::runPlans(
        "warp_sync_tree", __cleave_cpu_warp_sync_tree_desc, Args,
        harness::launch3(Blocks, 1, 1, 128, 1, 1),
        [&] { std::fill(Out.begin(), Out.end(), -1); },
        [&] { return harness::equal("out", Out, Want); });
  }
  {
    const unsigned Threads = 96, N = Blocks * Threads;
    std::vector<int> In(N), Out(N), Want(N);
    harness::fillInt(In, -1000, 1000);
    for (unsigned W = 0; W < N / 32; ++W) {
      int Seg[64];
      for (unsigned L = 0; L < 32; ++L) {
        Seg[L] = In[W * 32 + L];
        Seg[L + 32] = 0;
      }
      int Loaded[32];
      for (unsigned L = 0; L < 32; ++L)
        Loaded[L] = Seg[L] * 3;
      for (unsigned L = 0; L < 32; ++L)
        Seg[L + 1] = Loaded[L];
      for (int O = 16; O > 0; O >>= 1) {
        for (unsigned L = 0; L < 32; ++L)
          Loaded[L] = Seg[L] + Seg[L + O];
        for (unsigned L = 0; L < 32; ++L)
          Seg[L] = Loaded[L];
      }
      for (unsigned L = 0; L < 32; ++L)
        Want[W * 32 + L] = Seg[L];
    }
    const int *PI = In.data();
    int *PO = Out.data();
    void *Args[] = {&PI, &PO};
    Failures += harness::runPlans(
        "warp_sync_shift", __cleave_cpu_warp_sync_shift_desc, Args,
        harness::launch3(Blocks, 1, 1, Threads, 1, 1,
                         Threads / 32 * 64 * sizeof(int)),
        [&] { std::fill(Out.begin(), Out.end(), -1); },
        [&] { return harness::equal("out", Out, Want); });
  }
  return Failures;
}
#endif
