// Warp and block collectives with data: match.any/all (32 and 64 bits),
// redux.sync (all eight operations), __syncthreads_count/and/or, in full and
// partial warps (blocks of 64, 48 and 70 threads), with the whole warp and
// with half of it (lanes 0-15 under warp-divergent control, guarded mode).
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe
#define NOUT 24
#ifndef CLEAVE_HOST_DRIVER
// __reduce_*_sync in clang 19's header passes (mask, value) to builtins that
// take (value, mask); the builtins are called directly here.
extern "C" __global__ void collectives(const int *in, int *out) {
  int t = threadIdx.x + blockDim.x * blockIdx.x;
  int v = in[t];
  int *o = out + NOUT * t;
  int pred = -1;
  o[0] = __match_any_sync(~0u, v & 3);
  o[1] = __match_all_sync(~0u, v >> 6, &pred); // v < 64 in some blocks
  o[2] = pred;
  o[3] = __match_any_sync(~0u, (long long)(v & 1) << 40 | 7);
  o[4] = __match_all_sync(~0u, (long long)v << 33, &pred);
  o[5] = pred;
  o[6] = __nvvm_redux_sync_add(v, ~0u);
  o[7] = __nvvm_redux_sync_min(v - 40, ~0u);
  o[8] = __nvvm_redux_sync_max(v - 40, ~0u);
  o[9] = __nvvm_redux_sync_umin(v - 40, ~0u);
  o[10] = __nvvm_redux_sync_umax(v - 40, ~0u);
  o[11] = __nvvm_redux_sync_and(v | 0x100, ~0u);
  o[12] = __nvvm_redux_sync_or(v, ~0u);
  o[13] = __nvvm_redux_sync_xor(v, ~0u);
  o[17] = __syncthreads_count(v > 20);
  o[18] = __syncthreads_and(v != 63);
  o[19] = __syncthreads_or(v == 63);
  o[20] = __syncthreads_and(v >= 0);
}
extern "C" __global__ void half_warp(const int *in, int *out) {
  int t = threadIdx.x + blockDim.x * blockIdx.x;
  int v = in[t];
  int *o = out + NOUT * t;
  if ((threadIdx.x & 31) < 16) {
    o[14] = __match_any_sync(0xffffu, v & 1);
    o[15] = __nvvm_redux_sync_add(v, 0xffffu);
    o[16] = __nvvm_redux_sync_umax(v, 0xffffu);
  }
}
#else
#include "harness.h"
CLEAVE_CPU_KERNEL(collectives);
CLEAVE_CPU_KERNEL(half_warp);

static void refBlock(const int *V, unsigned Block, int *Out) {
  unsigned Count = 0;
  bool And = true, Or = false;
  for (unsigned T = 0; T < Block; ++T) {
    Count += V[T] > 20;
    And &= V[T] != 63;
    Or |= V[T] == 63;
  }
  for (unsigned W = 0; W < Block; W += 32) {
    unsigned Lanes = std::min(32u, Block - W);
    const int *X = V + W;
    for (unsigned L = 0; L < Lanes; ++L) {
      int *O = Out + NOUT * (W + L);
      auto MatchAny = [&](auto Key, unsigned Lim) {
        unsigned R = 0;
        for (unsigned J = 0; J < std::min(Lanes, Lim); ++J)
          if (Key(X[J]) == Key(X[L])) R |= 1u << J;
        return R;
      };
      auto MatchAll = [&](auto Key, int &P) {
        for (unsigned J = 0; J < Lanes; ++J)
          if (Key(X[J]) != Key(X[0])) { P = 0; return 0u; }
        P = 1;
        return Lanes == 32 ? ~0u : (1u << Lanes) - 1;
      };
      O[0] = MatchAny([](int A) { return A & 3; }, 32);
      O[1] = MatchAll([](int A) { return A >> 6; }, O[2]);
      O[3] = MatchAny([](int A) { return (long long)(A & 1) << 40 | 7; }, 32);
      O[4] = MatchAll([](int A) { return (long long)A << 33; }, O[5]);
      unsigned Add = 0, And2 = ~0u, Or2 = 0, Xor = 0, UMin = ~0u, UMax = 0;
      int Min = INT32_MAX, Max = INT32_MIN;
      for (unsigned J = 0; J < Lanes; ++J) {
        int A = X[J] - 40;
        Add += X[J]; Min = std::min(Min, A); Max = std::max(Max, A);
        UMin = std::min(UMin, unsigned(A)); UMax = std::max(UMax, unsigned(A));
        And2 &= X[J] | 0x100; Or2 |= X[J]; Xor ^= X[J];
      }
      O[6] = Add; O[7] = Min; O[8] = Max; O[9] = UMin; O[10] = UMax;
      O[11] = And2; O[12] = Or2; O[13] = Xor;
      if (L < 16) {
        O[14] = MatchAny([](int A) { return A & 1; }, 16);
        unsigned S = 0, M = 0;
        for (unsigned J = 0; J < std::min(Lanes, 16u); ++J) {
          S += X[J]; M = std::max(M, unsigned(X[J]));
        }
        O[15] = S; O[16] = M;
      }
      O[17] = Count; O[18] = And; O[19] = Or; O[20] = 1;
    }
  }
}

int main() {
  int Fails = 0;
  for (unsigned Block : {64u, 48u, 70u}) {
    unsigned Grid = 6, N = Grid * Block;
    std::vector<int> In(N), Out(NOUT * N), Want(NOUT * N, -7);
    harness::fillInt(In, 0, 63);
    for (unsigned B = 0; B < Grid; B += 2) // uniform warps: match.all holds
      for (unsigned T = 0; T < Block; ++T) In[B * Block + T] = 5 + (B & 1);
    for (unsigned B = 0; B < Grid; ++B)
      refBlock(&In[B * Block], Block, &Want[NOUT * B * Block]);
    const int *PI = In.data();
    int *PO = Out.data();
    void *Args[] = {&PI, &PO};
    auto L = harness::launch3(Grid, 1, 1, Block, 1, 1);
    bool Half = false; // collectives leaves ops 14-16 to half_warp
    auto Check = [&] {
          for (size_t I = 0; I < Out.size(); ++I)
            if (Out[I] != Want[I] && (Half || I % NOUT < 14 || I % NOUT > 16)) {
              std::printf("  thread %zu op %zu: got %d, want %d\n", I / NOUT,
                          I % NOUT, Out[I], Want[I]);
              return false;
            }
          return true;
    };
    Fails += harness::runPlans(
        ("collectives/" + std::to_string(Block)).c_str(),
        __cleave_cpu_collectives_desc, Args, L,
        [&] { std::fill(Out.begin(), Out.end(), -7); }, Check);
    Fails += harness::runPlans(
        ("half_warp/" + std::to_string(Block)).c_str(),
        __cleave_cpu_half_warp_desc, Args, L,
        [&] {
          Half = true;
          for (size_t I = 0; I < Out.size(); I += NOUT)
            std::fill(&Out[I + 14], &Out[I + 17], -7);
        },
        Check);
  }
  return Fails;
}
#endif
