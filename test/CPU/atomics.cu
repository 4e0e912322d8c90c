// Atomics on global and shared memory (add/sub/min/max/and/or/xor/inc/dec,
// exch, CAS loops; int, unsigned, unsigned long long, float with exact
// integer-valued sums) with results independent of the order, and
// __device__/__constant__ variables: a __constant__ table initialized in the
// source, a __device__ counter that kernels update (the CPU module's copy,
// __cleave_cpu_var_<name>). Grid sizes are not multiples of the block.
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe
#ifndef CLEAVE_HOST_DRIVER
__constant__ int lut[8] = {3, 1, 4, 1, 5, 9, 2, 6};
__device__ unsigned counter;
extern "C" __global__ void global_atomics(const int *in, int n, int *gi, unsigned *gu,
                                          unsigned long long *gl, float *gf, int *old) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  int v = in[t];
  atomicAdd(&gi[0], v); atomicSub(&gi[1], v); atomicMin(&gi[2], v); atomicMax(&gi[3], v);
  atomicAdd(&gu[0], (unsigned)v); atomicMin(&gu[1], (unsigned)v); atomicMax(&gu[2], (unsigned)v);
  atomicAnd(&gu[3], ~(1u << (v & 31))); atomicOr(&gu[4], 1u << (v & 31)); atomicXor(&gu[5], (unsigned)v);
  atomicInc(&gu[6], 17u); atomicDec(&gu[7], 13u);
  atomicAdd(&gl[0], (unsigned long long)(v + 1000) << 20);
  atomicAdd(&gf[0], (float)v);
  old[t] = atomicExch(&gi[4], t);
  int o = gi[5], prev;
  while ((prev = atomicCAS(&gi[5], o, o + lut[v & 7])) != o) o = prev;
  if (v & 1) atomicAdd(&counter, 1u);
}
extern "C" __global__ void shared_atomics(const int *in, int n, int *out) {
  __shared__ unsigned hist[8];
  __shared__ int mn, mx, winner, claims;
  __shared__ float fsum;
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x < 8) hist[threadIdx.x] = 0;
  if (threadIdx.x == 0) { mn = 1 << 30; mx = -(1 << 30); winner = -1; claims = 0; fsum = 0; }
  __syncthreads();
  if (t < n) {
    int v = in[t];
    atomicAdd(&hist[v & 7], 1u);
    atomicMin(&mn, v); atomicMax(&mx, v);
    atomicAdd(&fsum, (float)v);
    if (atomicCAS(&winner, -1, (int)threadIdx.x) == -1) atomicAdd(&claims, 1);
    atomicExch(&winner, atomicExch(&winner, 0) + 0 * v); // exchange twice
  }
  __syncthreads();
  int *o = out + 13 * blockIdx.x;
  if (threadIdx.x < 8) o[threadIdx.x] = hist[threadIdx.x];
  if (threadIdx.x == 0) { o[8] = mn; o[9] = mx; o[10] = (int)fsum; o[11] = claims; o[12] = lut[blockIdx.x & 7]; }
}
#else
#include "harness.h"
CLEAVE_CPU_KERNEL(global_atomics);
CLEAVE_CPU_KERNEL(shared_atomics);
extern "C" unsigned __cleave_cpu_var_counter;
static const int Lut[8] = {3, 1, 4, 1, 5, 9, 2, 6};

int main() {
  int F = 0, n = 5000;
  std::vector<int> in(n), old(n);
  harness::fillInt(in, -3000, 3000);
  auto L = harness::launch3((n + 127) / 128, 1, 1, 128, 1, 1);
  {
    std::vector<int> gi(6), wi(6);
    std::vector<unsigned> gu(8), wu(8);
    std::vector<unsigned long long> gl(1), wl(1);
    std::vector<float> gf(1), wf(1);
    const std::vector<int> i0 = {7, 7, 1 << 30, -(1 << 30), -1, 0};
    const std::vector<unsigned> u0 = {5, ~0u, 0, ~0u, 0, 0x1234, 0, 0};
    wi = i0; wu = u0; wl = {1}; wf = {0.5f};
    unsigned wc = 0;
    for (int t = 0; t < n; ++t) {
      int v = in[t];
      wi[0] += v; wi[1] -= v; wi[2] = std::min(wi[2], v); wi[3] = std::max(wi[3], v);
      wu[0] += v; wu[1] = std::min(wu[1], unsigned(v)); wu[2] = std::max(wu[2], unsigned(v));
      wu[3] &= ~(1u << (v & 31)); wu[4] |= 1u << (v & 31); wu[5] ^= unsigned(v);
      wu[6] = wu[6] >= 17 ? 0 : wu[6] + 1;
      wu[7] = (wu[7] == 0 || wu[7] > 13) ? 13 : wu[7] - 1;
      wl[0] += (unsigned long long)(v + 1000) << 20;
      wf[0] += float(v);
      wi[5] += Lut[v & 7];
      wc += v & 1;
    }
    int *pi = gi.data(), *po = old.data(); unsigned *pu = gu.data();
    unsigned long long *pl = gl.data(); float *pf = gf.data();
    void *Args[] = {&in, &n, &pi, &pu, &pl, &pf, &po};
    const int *pin = in.data();
    Args[0] = &pin;
    F += harness::runPlans("global_atomics", __cleave_cpu_global_atomics_desc, Args, L,
        [&] { gi = i0; gu = u0; gl = {1}; gf = {0.5f}; __cleave_cpu_var_counter = 0;
              std::fill(old.begin(), old.end(), -7); },
        [&] {
          // atomicExch: the old values and the final one are -1 and every t.
          std::vector<int> Seen(old);
          Seen.push_back(gi[4]);
          std::sort(Seen.begin(), Seen.end());
          for (int t = -1; t < n; ++t)
            if (Seen[t + 1] != t) { std::printf("  exch: %d missing\n", t); return false; }
          std::vector<int> G4 = gi, W4 = wi;
          G4[4] = W4[4] = 0;
          if (__cleave_cpu_var_counter != wc) { std::printf("  counter %u, want %u\n", __cleave_cpu_var_counter, wc); return false; }
          return harness::equal("gi", G4, W4) && harness::equal("gu", gu, wu) &&
                 harness::equal("gl", gl, wl) && harness::equal("gf", gf, wf);
        });
  }
  {
    unsigned Blocks = L.grid[0];
    std::vector<int> out(13 * Blocks), w(13 * Blocks, 0);
    for (unsigned B = 0; B < Blocks; ++B) {
      int *o = &w[13 * B], mn = 1 << 30, mx = -(1 << 30); float fs = 0;
      for (int t = B * 128; t < std::min<int>(n, (B + 1) * 128); ++t) {
        o[in[t] & 7]++; mn = std::min(mn, in[t]); mx = std::max(mx, in[t]); fs += float(in[t]);
      }
      o[8] = mn; o[9] = mx; o[10] = int(fs); o[11] = 1; o[12] = Lut[B & 7];
    }
    const int *pin = in.data(); int *po = out.data();
    void *Args[] = {&pin, &n, &po};
    F += harness::runPlans("shared_atomics", __cleave_cpu_shared_atomics_desc, Args, L,
        [&] { std::fill(out.begin(), out.end(), -1); }, [&] { return harness::equal("out", out, w); });
  }
  return F;
}
#endif
