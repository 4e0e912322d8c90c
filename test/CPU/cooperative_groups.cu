// Cooperative groups as CUDA 13's headers implement them on sm_90 (inline
// PTX for lane registers, the reserved shared-memory scratch, elect.sync,
// bfind) run on the CPU: thread_block and its sync, tiled_partition (static
// and dynamic) with shfl, cg::reduce with plus/greater/less/bit_xor,
// coalesced_threads, labeled_partition, invoke_one and this_grid() without a
// grid sync. Differential: every plan of the harness against a reference.
// The device IR comes from Cleave's frontend, which corrects Clang 19's
// operand order of __reduce_*_sync (cg::reduce on integers); plain clang's
// IR reduces the wrong operand.
// RUN: %cleave compile --emit=ir --cleave-passes=cleave-swap-grid %s -o %t.ll
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe
#ifndef CLEAVE_HOST_DRIVER
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void cg_block(const int *in, int *out) {
  __shared__ int s[256];
  cg::thread_block b = cg::this_thread_block();
  unsigned i = b.group_index().x * b.size() + b.thread_rank();
  s[b.thread_rank()] = in[i];
  b.sync();
  out[i] = s[b.size() - 1 - b.thread_rank()] + b.group_index().x;
}

extern "C" __global__ void cg_tile_shfl(const int *in, int *out) {
  cg::thread_block b = cg::this_thread_block();
  cg::thread_block_tile<32> t = cg::tiled_partition<32>(b);
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = t.size() / 2; o > 0; o /= 2)
    v += t.shfl_down(v, o);
  if (t.thread_rank() == 0)
    out[blockIdx.x * t.meta_group_size() + t.meta_group_rank()] = v;
}

extern "C" __global__ void cg_dynamic_tile(const int *in, int *out) {
  cg::thread_group t = cg::tiled_partition(cg::this_thread_block(), 16);
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  t.sync();
  out[i] = v + t.thread_rank() * 1000 + t.size() * 100000;
}

extern "C" __global__ void cg_reduce(const int *in, int *sum, int *max,
                                     float *fsum, int *mix) {
  auto b = cg::this_thread_block();
  auto t32 = cg::tiled_partition<32>(b);
  auto t16 = cg::tiled_partition<16>(b);
  auto t8 = cg::tiled_partition<8>(b);
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  sum[i] = cg::reduce(t32, v, cg::plus<int>());
  max[i] = cg::reduce(t32, v, cg::greater<int>());
  fsum[i] = cg::reduce(t16, float(v), cg::plus<float>());
  mix[i] = cg::reduce(t8, v, cg::bit_xor<int>()) * 1000 +
           int(cg::reduce(t8, unsigned(v), cg::less<unsigned>()));
}

extern "C" __global__ void cg_coalesced(const int *in, int *out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  if (v & 1) {
    cg::coalesced_group a = cg::coalesced_threads();
    out[i] = a.thread_rank() + 100 * a.size() +
             10000 * cg::reduce(a, v, cg::plus<int>());
  }
}

extern "C" __global__ void cg_labeled(const int *in, int *out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  auto t = cg::tiled_partition<32>(cg::this_thread_block());
  auto l = cg::labeled_partition(t, in[i] & 3);
  out[i] = l.thread_rank() + 100 * l.size();
}

extern "C" __global__ void cg_invoke_one(int *out) {
  auto t = cg::tiled_partition<32>(cg::this_thread_block());
  unsigned Slot = blockIdx.x * t.meta_group_size() + t.meta_group_rank();
  cg::invoke_one(t, [&] { out[Slot] += 1 + t.thread_rank(); });
}

extern "C" __global__ void cg_grid_rank(int *out) {
  cg::grid_group g = cg::this_grid();
  out[g.thread_rank()] = int(g.size() - g.thread_rank());
}
#else
#include "harness.h"
#include <bitset>
CLEAVE_CPU_KERNEL(cg_block);
CLEAVE_CPU_KERNEL(cg_tile_shfl);
CLEAVE_CPU_KERNEL(cg_dynamic_tile);
CLEAVE_CPU_KERNEL(cg_reduce);
CLEAVE_CPU_KERNEL(cg_coalesced);
CLEAVE_CPU_KERNEL(cg_labeled);
CLEAVE_CPU_KERNEL(cg_invoke_one);
CLEAVE_CPU_KERNEL(cg_grid_rank);

// Applies Op to the values of each group of Size consecutive threads.
template <class T, class Fn>
static std::vector<T> perGroup(const std::vector<int> &In, unsigned Size,
                               Fn Op) {
  std::vector<T> Out(In.size());
  for (size_t G = 0; G < In.size(); G += Size) {
    T Acc = T(In[G]);
    for (size_t K = 1; K < Size; ++K)
      Acc = Op(Acc, T(In[G + K]));
    for (size_t K = 0; K < Size; ++K)
      Out[G + K] = Acc;
  }
  return Out;
}

int main() {
  const unsigned Grid = 6, Block = 128, N = Grid * Block, Warps = Block / 32;
  std::vector<int> In(N);
  harness::fillInt(In, 0, 15);
  const int *PI = In.data();
  auto L = harness::launch3(Grid, 1, 1, Block, 1, 1);
  int Fails = 0;
  auto Run = [&](const char *Name, const cleave_cpu_kernel_desc &K,
                 void **Args, std::vector<std::vector<int> *> Outs,
                 std::vector<std::vector<int>> Wants, int Init) {
    Fails += harness::runPlans(
        Name, K, Args, L,
        [&] {
          for (auto *O : Outs)
            std::fill(O->begin(), O->end(), Init);
        },
        [&] {
          for (size_t I = 0; I < Outs.size(); ++I)
            if (!harness::equal(Name, *Outs[I], Wants[I]))
              return false;
          return true;
        });
  };

  std::vector<int> Out(N), Want(N);
  int *PO = Out.data();
  void *Args2[] = {&PI, &PO};
  for (unsigned I = 0; I < N; ++I)
    Want[I] = In[(I / Block) * Block + Block - 1 - I % Block] + I / Block;
  Run("cg_block", __cleave_cpu_cg_block_desc, Args2, {&Out}, {Want}, -1);

  std::vector<int> Tiles(Grid * Warps), WantTiles(Grid * Warps, 0);
  for (unsigned I = 0; I < N; ++I)
    WantTiles[I / 32] += In[I];
  int *PT = Tiles.data();
  void *ArgsT[] = {&PI, &PT};
  Run("cg_tile_shfl", __cleave_cpu_cg_tile_shfl_desc, ArgsT, {&Tiles},
      {WantTiles}, -1);

  for (unsigned I = 0; I < N; ++I)
    Want[I] = In[I] + (I % 16) * 1000 + 16 * 100000;
  Run("cg_dynamic_tile", __cleave_cpu_cg_dynamic_tile_desc, Args2, {&Out},
      {Want}, -1);

  {
    std::vector<int> Sum(N), Max(N), Mix(N);
    std::vector<float> FSum(N), WantF(N);
    int *PS = Sum.data(), *PM = Max.data(), *PX = Mix.data();
    float *PF = FSum.data();
    void *Args[] = {&PI, &PS, &PM, &PF, &PX};
    auto WantSum = perGroup<int>(In, 32, [](int A, int B) { return A + B; });
    auto WantMax =
        perGroup<int>(In, 32, [](int A, int B) { return std::max(A, B); });
    auto WantF16 =
        perGroup<float>(In, 16, [](float A, float B) { return A + B; });
    auto Xor = perGroup<int>(In, 8, [](int A, int B) { return A ^ B; });
    auto Min = perGroup<int>(In, 8, [](int A, int B) { return std::min(A, B); });
    std::vector<int> WantMix(N);
    for (unsigned I = 0; I < N; ++I)
      WantMix[I] = Xor[I] * 1000 + Min[I];
    Fails += harness::runPlans(
        "cg_reduce", __cleave_cpu_cg_reduce_desc, Args, L,
        [&] {
          for (auto *O : {&Sum, &Max, &Mix})
            std::fill(O->begin(), O->end(), -1);
          std::fill(FSum.begin(), FSum.end(), -1.0f);
        },
        [&] {
          return harness::equal("sum", Sum, WantSum) &&
                 harness::equal("max", Max, WantMax) &&
                 harness::equal("fsum", FSum, WantF16) &&
                 harness::equal("mix", Mix, WantMix);
        });
  }

  // Lanes of a warp that share a key: rank among them and their count.
  auto Grouped = [&](auto Key, bool Sum) {
    std::vector<int> W(N, -1);
    for (unsigned I = 0; I < N; ++I) {
      if (Key(I) < 0)
        continue;
      unsigned Base = I / 32 * 32;
      int Rank = 0, Size = 0, Total = 0;
      for (unsigned J = Base; J < Base + 32; ++J)
        if (Key(J) == Key(I)) {
          Rank += J < I;
          ++Size;
          Total += In[J];
        }
      W[I] = Rank + 100 * Size + (Sum ? 10000 * Total : 0);
    }
    return W;
  };
  Run("cg_coalesced", __cleave_cpu_cg_coalesced_desc, Args2, {&Out},
      {Grouped([&](unsigned I) { return In[I] & 1 ? 1 : -1; }, true)}, -1);
  Run("cg_labeled", __cleave_cpu_cg_labeled_desc, Args2, {&Out},
      {Grouped([&](unsigned I) { return In[I] & 3; }, false)}, -1);

  std::vector<int> Once(Grid * Warps);
  int *PN = Once.data();
  void *Args1[] = {&PN};
  Run("cg_invoke_one", __cleave_cpu_cg_invoke_one_desc, Args1, {&Once},
      {std::vector<int>(Grid * Warps, 1)}, 0);

  PO = Out.data();
  void *ArgsG[] = {&PO};
  for (unsigned I = 0; I < N; ++I)
    Want[I] = int(N - I);
  Run("cg_grid_rank", __cleave_cpu_cg_grid_rank_desc, ArgsG, {&Out}, {Want},
      -1);
  return Fails;
}
#endif
