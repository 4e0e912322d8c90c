// Warp operations with exact warp semantics: shfl up/down/xor/idx with
// widths, ballot/any/all, activemask, in full and partial warps (blocks of 48
// and 70 threads), and under block-divergent control (guarded scheduling).
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe
#ifndef CLEAVE_HOST_DRIVER
extern "C" __global__ void shuffles(const int *in, int *out) {
  int t = threadIdx.x + blockDim.x * blockIdx.x;
  int v = in[t];
  int *o = out + 8 * t;
  o[0] = __shfl_up_sync(0xffffffffu, v, 3);
  o[1] = __shfl_down_sync(0xffffffffu, v, 5);
  o[2] = __shfl_xor_sync(0xffffffffu, v, 9);
  o[3] = __shfl_sync(0xffffffffu, v, 7);
  o[4] = __shfl_down_sync(0xffffffffu, v, 2, 8);
  o[5] = __shfl_sync(0xffffffffu, v, (int)threadIdx.x + 1, 16);
  o[6] = __ballot_sync(0xffffffffu, v & 1);
  o[7] = __any_sync(0xffffffffu, v == 7) * 2 + __all_sync(0xffffffffu, v >= 0);
}
extern "C" __global__ void divergent_shfl(const int *in, int *out) {
  int t = threadIdx.x;
  int v = in[t];
  if (t >= 32 && t < 64) // the second warp only: warp-uniform, block-divergent
    v += __shfl_xor_sync(0xffffffffu, v, 1);
  out[t] = v;
}
#else
#include "harness.h"
CLEAVE_CPU_KERNEL(shuffles);
CLEAVE_CPU_KERNEL(divergent_shfl);

// One warp of Lanes lanes (a partial warp when Lanes < 32); lanes past the end
// do not exist, and a shfl from one is not compared (undefined on the GPU).
static void refWarp(const int *V, int Lanes, int *Out, std::vector<bool> &Defined) {
  auto Shfl = [&](int Lane, int Src) { return Src >= 0 && Src < Lanes ? V[Src] : -999; };
  unsigned Ballot = 0;
  bool Any7 = false, AllPos = true;
  for (int L = 0; L < Lanes; ++L) {
    Ballot |= unsigned(V[L] & 1) << L;
    Any7 |= V[L] == 7;
    AllPos &= V[L] >= 0;
  }
  for (int L = 0; L < Lanes; ++L) {
    int *O = Out + 8 * L;
    int Src[6] = {L >= 3 ? L - 3 : L, L + 5 < 32 ? L + 5 : L, L ^ 9, 7,
                  (L % 8) + 2 < 8 ? L + 2 : L, (L / 16) * 16 + ((L + 1) % 16)};
    for (int K = 0; K < 6; ++K) {
      O[K] = Shfl(L, Src[K]);
      Defined[8 * L + K] = Src[K] < Lanes;
    }
    O[6] = int(Ballot);
    O[7] = Any7 * 2 + AllPos;
    Defined[8 * L + 6] = Defined[8 * L + 7] = true;
  }
}

int main() {
  int Fails = 0;
  for (unsigned Block : {64u, 48u, 70u}) {
    unsigned Grid = 5, N = Grid * Block;
    std::vector<int> In(N), Out(8 * N), Want(8 * N);
    std::vector<bool> Defined(8 * N);
    harness::fillInt(In, 0, 15);
    for (unsigned B = 0; B < Grid; ++B)
      for (unsigned W = 0; W < Block; W += 32) {
        std::vector<bool> D(8 * 32);
        unsigned Lanes = std::min(32u, Block - W);
        refWarp(&In[B * Block + W], Lanes, &Want[8 * (B * Block + W)], D);
        for (unsigned I = 0; I < 8 * Lanes; ++I)
          Defined[8 * (B * Block + W) + I] = D[I];
      }
    const int *PI = In.data();
    int *PO = Out.data();
    void *Args[] = {&PI, &PO};
    auto L = harness::launch3(Grid, 1, 1, Block, 1, 1);
    Fails += harness::runPlans(
        ("shuffles/" + std::to_string(Block)).c_str(), __cleave_cpu_shuffles_desc,
        Args, L, [&] { std::fill(Out.begin(), Out.end(), -1); },
        [&] {
          for (size_t I = 0; I < Out.size(); ++I)
            if (Defined[I] && Out[I] != Want[I]) {
              std::printf("  out[%zu] (lane %zu, op %zu): got %d, want %d\n", I,
                          (I / 8) % 32, I % 8, Out[I], Want[I]);
              return false;
            }
          return true;
        });
  }
  {
    unsigned Block = 96;
    std::vector<int> In(Block), Out(Block), Want(Block);
    harness::fillInt(In, -100, 100);
    for (unsigned T = 0; T < Block; ++T)
      Want[T] = T >= 32 && T < 64 ? In[T] + In[T ^ 1] : In[T];
    const int *PI = In.data();
    int *PO = Out.data();
    void *Args[] = {&PI, &PO};
    auto L = harness::launch3(1, 1, 1, Block, 1, 1);
    Fails += harness::runPlans(
        "divergent_shfl", __cleave_cpu_divergent_shfl_desc, Args, L,
        [&] { std::fill(Out.begin(), Out.end(), 0); },
        [&] { return harness::equal("out", Out, Want); });
  }
  return Fails;
}
#endif
