// Warp chains (docs/cpu-backend.md): runs of warp collectives with pure
// arithmetic between them run once per warp on vectors of lanes. Reduction
// trees and scans with xor/down/up/idx shuffles (full width and segments),
// 64-bit shuffles, votes, redux and activemask in one chain, cg::reduce with
// plus and greater, a chain that reads threadIdx, chains under warp-divergent
// control with a partial mask and under block-divergent control (guarded
// mode), in full, partial and 2-D warps. Differential: every plan of the
// harness against a reference that follows CUDA's definitions; results that
// read a lane that does not exist (undefined on the GPU) are not compared.
// RUN: %cleave compile --emit=ir --cleave-passes=cleave-swap-grid %s -o %t.ll
// RUN: %cleave compile --emit=ir --cleave-passes=cleave-swap-grid %s -o - \
// RUN:   | %opt -load-pass-plugin=%cleave_plugin -passes=cleave-cpu-lower \
// RUN:       -pass-remarks=cleave-cpu-lower -disable-output 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe
//
// Shuffle trees with only arithmetic between them are one chain: three
// regions, the entry, the chain and what follows (two per shuffle without).
// REMARK: kernel xor_tree: CPU variant __cleave_cpu_xor_tree with 3 region(s)
// REMARK: kernel down_tree: CPU variant __cleave_cpu_down_tree with 3 region(s)
// REMARK: kernel divergent: CPU variant __cleave_cpu_divergent with 5 region(s), guarded
#define NOUT 5
#ifndef CLEAVE_HOST_DRIVER
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
#define FULL 0xffffffffu

__device__ unsigned linearTid() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
__device__ int *outOf(int *out) {
  unsigned B = blockIdx.x;
  return out + NOUT * (B * blockDim.x * blockDim.y * blockDim.z + linearTid());
}
__device__ int inOf(const int *in) {
  return in[blockIdx.x * blockDim.x * blockDim.y * blockDim.z + linearTid()];
}

extern "C" __global__ void xor_tree(const int *in, int *out) {
  int *o = outOf(out);
  float v = (float)inOf(in), u = v;
  for (int m = 16; m > 0; m >>= 1)
    v += __shfl_xor_sync(FULL, v, m);
  for (int m = 8; m > 0; m >>= 1)
    u += __shfl_xor_sync(FULL, u, m, 16);
  o[0] = (int)v;
  o[1] = (int)u;
}

extern "C" __global__ void down_tree(const int *in, int *out) {
  int *o = outOf(out);
  int v = inOf(in), w = v;
#pragma unroll
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(FULL, v, off);
  for (int off = 4; off > 0; off /= 2)
    w += __shfl_down_sync(FULL, w, off, 8);
  double d = v * 0.5 + w;
  for (int off = 16; off > 0; off /= 2)
    d += __shfl_down_sync(FULL, d, off);
  o[0] = v;
  o[1] = w;
  o[2] = (int)(d * 2);
}

extern "C" __global__ void up_scan(const int *in, int *out) {
  int *o = outOf(out);
  int lane = threadIdx.x & 31; // the lane only when blockDim.x % 32 == 0
  int v = inOf(in);
  for (int d = 1; d < 32; d *= 2) {
    int t = __shfl_up_sync(FULL, v, d);
    if (lane >= d)
      v += t;
  }
  o[0] = v;
  // threadIdx inside the chain: an operand of its last shuffle.
  o[1] = __shfl_sync(FULL, v, 3) * 1000 +
         __shfl_sync(FULL, v * 2 + 1 + threadIdx.y * 100000, 5, 8) +
         threadIdx.x * 7;
}

extern "C" __global__ void votes(const int *in, int *out) {
  int *o = outOf(out);
  int v = inOf(in);
  unsigned bal = __ballot_sync(FULL, v > 0);
  int any = __any_sync(FULL, v == 7), all = __all_sync(FULL, v > -90);
  o[0] = (int)bal;
  o[1] = any * 2 + all;
  o[2] = __nvvm_redux_sync_add(v, FULL);
  o[3] = __nvvm_redux_sync_max(v, FULL) - __nvvm_redux_sync_umin(v, FULL);
  o[4] = (int)__activemask();
}

extern "C" __global__ void cg_reduce(const int *in, int *out) {
  int *o = outOf(out);
  cg::thread_block_tile<32> tile =
      cg::tiled_partition<32>(cg::this_thread_block());
  int v = inOf(in);
  o[0] = (int)cg::reduce(tile, (float)v, cg::plus<float>());
  o[1] = cg::reduce(tile, v, cg::greater<int>());
  o[2] = cg::reduce(tile, v * 3, cg::plus<int>());
}

extern "C" __global__ void divergent(const int *in, int *out) {
  int *o = outOf(out);
  unsigned lin = linearTid(), lane = lin & 31;
  int v = inOf(in), w = v;
  if (lane < 16) { // warp-divergent: a partial mask
    v += __shfl_xor_sync(0x0000ffffu, v, 1);
    v += __shfl_xor_sync(0x0000ffffu, v, 4);
  }
  if (lin / 32 % 2 == 1) { // block-divergent, warp-uniform
    w *= 3;
    w += __shfl_down_sync(FULL, w, 1);
    w += __shfl_down_sync(FULL, w, 2);
  }
  o[0] = v;
  o[1] = w;
}
#else
#include "harness.h"
#include <functional>
CLEAVE_CPU_KERNEL(xor_tree);
CLEAVE_CPU_KERNEL(down_tree);
CLEAVE_CPU_KERNEL(up_scan);
CLEAVE_CPU_KERNEL(votes);
CLEAVE_CPU_KERNEL(cg_reduce);
CLEAVE_CPU_KERNEL(divergent);

namespace {

/// One warp's values; Def[l] false once lane l's value depends on a lane that
/// does not exist (or is not in the mask): undefined on the GPU.
struct Lanes {
  std::vector<long long> V;
  std::vector<bool> Def;
};

/// CUDA's __shfl_*_sync(v, b, width) over the lanes that exist.
Lanes shfl(const Lanes &X, char Mode, int B, int Width, unsigned Mask = ~0u) {
  int N = X.V.size();
  Lanes R = X;
  for (int L = 0; L < N; ++L) {
    int Seg = L / Width * Width, Src;
    if (Mode == 'i')
      Src = Seg + B % Width;
    else if (Mode == 'u')
      Src = L - Seg >= B ? L - B : L;
    else if (Mode == 'd')
      Src = L - Seg + B < Width ? L + B : L;
    else
      Src = (L ^ B) < Seg + Width ? L ^ B : L;
    bool Exists = Src < N && (Mask >> Src & 1);
    R.V[L] = Exists ? X.V[Src] : X.V[L];
    R.Def[L] = X.Def[L] && Exists && X.Def[Src];
  }
  return R;
}

Lanes add(const Lanes &A, const Lanes &B) {
  Lanes R = A;
  for (size_t L = 0; L < A.V.size(); ++L) {
    R.V[L] += B.V[L];
    R.Def[L] = A.Def[L] && B.Def[L];
  }
  return R;
}

using WarpRef = std::function<void(const Lanes &In, const std::vector<int> &Tx,
                                   const std::vector<int> &Ty,
                                   std::vector<std::vector<long long>> &Out,
                                   std::vector<std::vector<bool>> &Def,
                                   unsigned WarpIndex)>;

/// Runs Kernel over blocks of BX x BY threads and compares every defined
/// output with Ref, warp by warp.
int check(const char *Name, const cleave_cpu_kernel_desc &K, unsigned BX,
          unsigned BY, const WarpRef &Ref) {
  unsigned Grid = 3, Block = BX * BY, N = Grid * Block;
  std::vector<int> In(N), Out(NOUT * N), Want(NOUT * N, 0);
  std::vector<bool> Defined(NOUT * N, false);
  harness::fillInt(In, -100, 100);
  for (unsigned B = 0; B < Grid; ++B)
    for (unsigned W = 0; W < Block; W += 32) {
      unsigned Lanes32 = std::min(32u, Block - W);
      Lanes X{std::vector<long long>(Lanes32), std::vector<bool>(Lanes32, true)};
      std::vector<int> Tx(Lanes32), Ty(Lanes32);
      for (unsigned L = 0; L < Lanes32; ++L) {
        X.V[L] = In[B * Block + W + L];
        Tx[L] = (W + L) % BX;
        Ty[L] = (W + L) / BX;
      }
      std::vector<std::vector<long long>> O(NOUT,
                                            std::vector<long long>(Lanes32));
      std::vector<std::vector<bool>> D(NOUT, std::vector<bool>(Lanes32));
      Ref(X, Tx, Ty, O, D, W / 32);
      for (unsigned J = 0; J < NOUT; ++J)
        for (unsigned L = 0; L < Lanes32; ++L) {
          size_t I = NOUT * (B * Block + W + L) + J;
          Want[I] = int(O[J][L]);
          Defined[I] = D[J][L];
        }
    }
  const int *PI = In.data();
  int *PO = Out.data();
  void *Args[] = {&PI, &PO};
  auto L = harness::launch3(Grid, 1, 1, BX, BY, 1);
  std::string What = std::string(Name) + "/" + std::to_string(BX) + "x" +
                     std::to_string(BY);
  return harness::runPlans(
      What.c_str(), K, Args, L, [&] { std::fill(Out.begin(), Out.end(), -1); },
      [&] {
        for (size_t I = 0; I < Out.size(); ++I)
          if (Defined[I] && Out[I] != Want[I]) {
            std::printf("  out[%zu] (thread %zu, output %zu): got %d, want %d\n",
                        I, I / NOUT, I % NOUT, Out[I], Want[I]);
            return false;
          }
        return true;
      });
}

void put(std::vector<std::vector<long long>> &Out,
         std::vector<std::vector<bool>> &Def, unsigned J, const Lanes &X) {
  Out[J] = X.V;
  Def[J] = X.Def;
}

Lanes scale(Lanes X, long long M, long long A = 0) {
  for (long long &V : X.V)
    V = V * M + A;
  return X;
}

} // namespace

int main() {
  int Fails = 0;
  const unsigned Shapes[][2] = {{64, 1}, {48, 1}, {70, 1}, {16, 4},
                                {40, 2}, {32, 3}};
  for (auto [BX, BY] : Shapes) {
    Fails += check("xor_tree", __cleave_cpu_xor_tree_desc, BX, BY,
                   [](const Lanes &X, auto &, auto &, auto &O, auto &D, unsigned) {
                     Lanes V = X, U = X;
                     for (int M = 16; M > 0; M >>= 1)
                       V = add(V, shfl(V, 'x', M, 32));
                     for (int M = 8; M > 0; M >>= 1)
                       U = add(U, shfl(U, 'x', M, 16));
                     put(O, D, 0, V);
                     put(O, D, 1, U);
                   });
    Fails += check("down_tree", __cleave_cpu_down_tree_desc, BX, BY,
                   [](const Lanes &X, auto &, auto &, auto &O, auto &D, unsigned) {
                     Lanes V = X, W = X;
                     for (int Off = 16; Off > 0; Off /= 2)
                       V = add(V, shfl(V, 'd', Off, 32));
                     for (int Off = 4; Off > 0; Off /= 2)
                       W = add(W, shfl(W, 'd', Off, 8));
                     // d = v/2 + w, kept doubled: exact in integers.
                     Lanes Dbl = add(V, scale(W, 2));
                     for (int Off = 16; Off > 0; Off /= 2)
                       Dbl = add(Dbl, shfl(Dbl, 'd', Off, 32));
                     put(O, D, 0, V);
                     put(O, D, 1, W);
                     put(O, D, 2, Dbl);
                   });
    Fails += check("up_scan", __cleave_cpu_up_scan_desc, BX, BY,
                   [](const Lanes &X, const std::vector<int> &Tx,
                      const std::vector<int> &Ty, auto &O, auto &D, unsigned) {
                     Lanes V = X;
                     for (int Dd = 1; Dd < 32; Dd *= 2) {
                       Lanes T = shfl(V, 'u', Dd, 32);
                       for (size_t L = 0; L < V.V.size(); ++L)
                         if ((Tx[L] & 31) >= Dd) {
                           V.V[L] += T.V[L];
                           V.Def[L] = V.Def[L] && T.Def[L];
                         }
                     }
                     Lanes Arg = scale(V, 2, 1);
                     for (size_t L = 0; L < V.V.size(); ++L)
                       Arg.V[L] += Ty[L] * 100000LL;
                     Lanes R = add(scale(shfl(V, 'i', 3, 32), 1000),
                                   shfl(Arg, 'i', 5, 8));
                     for (size_t L = 0; L < V.V.size(); ++L)
                       R.V[L] += Tx[L] * 7;
                     put(O, D, 0, V);
                     put(O, D, 1, R);
                   });
    Fails += check("votes", __cleave_cpu_votes_desc, BX, BY,
                   [](const Lanes &X, auto &, auto &, auto &O, auto &D, unsigned) {
                     size_t N = X.V.size();
                     unsigned Bal = 0;
                     bool Any = false, All = true;
                     long long Sum = 0, Max = INT32_MIN;
                     unsigned UMin = UINT32_MAX;
                     for (size_t L = 0; L < N; ++L) {
                       Bal |= unsigned(X.V[L] > 0) << L;
                       Any |= X.V[L] == 7;
                       All &= X.V[L] > -90;
                       Sum += X.V[L];
                       Max = std::max(Max, X.V[L]);
                       UMin = std::min(UMin, unsigned(X.V[L]));
                     }
                     unsigned Active = N == 32 ? ~0u : (1u << N) - 1;
                     long long Vals[NOUT] = {Bal, Any * 2 + All, Sum,
                                             (long long)(int)(unsigned)(Max - UMin),
                                             (int)Active};
                     for (unsigned J = 0; J < NOUT; ++J) {
                       O[J].assign(N, Vals[J]);
                       D[J].assign(N, true);
                     }
                   });
    // A tile of 32 in a partial warp is undefined on the GPU.
    Fails += check("cg_reduce", __cleave_cpu_cg_reduce_desc, BX, BY,
                   [](const Lanes &X, auto &, auto &, auto &O, auto &D, unsigned) {
                     size_t N = X.V.size();
                     long long Sum = 0, Max = INT32_MIN;
                     for (long long V : X.V) {
                       Sum += V;
                       Max = std::max(Max, V);
                     }
                     long long Vals[3] = {Sum, Max, 3 * Sum};
                     for (unsigned J = 0; J < 3; ++J) {
                       O[J].assign(N, Vals[J]);
                       D[J].assign(N, N == 32);
                     }
                   });
    Fails += check("divergent", __cleave_cpu_divergent_desc, BX, BY,
                   [](const Lanes &X, auto &, auto &, auto &O, auto &D, unsigned W) {
                     Lanes V = X;
                     for (int M : {1, 4})
                       V = add(V, shfl(V, 'x', M, 32, 0x0000ffffu));
                     for (size_t L = 16; L < V.V.size(); ++L) {
                       V.V[L] = X.V[L];
                       V.Def[L] = true;
                     }
                     Lanes Wv = X;
                     if (W % 2 == 1) {
                       Wv = scale(Wv, 3);
                       for (int Off : {1, 2})
                         Wv = add(Wv, shfl(Wv, 'd', Off, 32));
                     }
                     put(O, D, 0, V);
                     put(O, D, 1, Wv);
                   });
  }
  return Fails;
}
#endif
