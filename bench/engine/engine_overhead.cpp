//===- engine_overhead.cpp - The engine's host work per launch ------------===//
//
// Part of Cleave's benchmarks. Measures what the launch engine itself costs
// on the host per launch -- footprint evaluation, the split decision,
// validity bookkeeping, transfer planning -- with the kernels' own time
// taken out: the GPUs are "null" devices whose memory is host memory and
// whose launches return at once (cleave/rt/NullGpu.h). The kernels are six
// of the headline suite's (vecadd, blackscholes, reduction, transpose,
// jacobi2d, stencil3d of bench/gpu/headline/headline.cu, its bundle built
// by `cleave compile --emit=bundle`), at the headline's sizes, data resident:
// every buffer is first written by the host (cudaMemset), each
// configuration is warmed up once, then timed over --reps launches.
//
//   cleave-engine-overhead BUNDLE [--gpus=1,2,4] [--reps=N] [--kernels=a,b]
//                          [--policy=even|model]
//
// Output: one JSON line per kernel and GPU count (median and min of the
// per-launch wall time in microseconds, the plan's summary line).
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Buffers.h"
#include "cleave/rt/CpuExecutor.h"
#include "cleave/rt/Device.h"
#include "cleave/rt/Engine.h"
#include "cleave/rt/Launch.h"
#include "cleave/rt/NullGpu.h"
#include "cleave/rt/Options.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace cleave::rt;

namespace {

/// One kernel of the suite: its symbol, launch shape and arguments.
struct Case {
  std::string Name, Symbol;
  uint32_t Grid[3], Block[3];
  uint64_t Shared = 0;
  /// Buffer sizes in bytes, in argument order of the pointers.
  std::vector<uint64_t> Buffers;
  /// Builds the argument values from the buffers' virtual pointers.
  std::function<std::vector<uint64_t>(const std::vector<void *> &)> Args;
  /// Launches per timed repetition (jacobi's steps).
  unsigned Launches = 1;
  /// Swaps the first two pointer arguments between launches (jacobi).
  bool PingPong = false;
};

uint64_t bits(const void *P) { return reinterpret_cast<uintptr_t>(P); }
uint64_t bits(int V) { return uint64_t(uint32_t(V)); }

std::vector<Case> suite() {
  std::vector<Case> S;
  const uint64_t F = 4;
  {
    long N = 64l << 20;
    uint32_t B = uint32_t((N + 255) / 256);
    S.push_back({"vecadd", "_Z6vecaddPKfS0_Pfl", {B, 1, 1}, {256, 1, 1}, 0,
                 {N * F, N * F, N * F},
                 [N](const std::vector<void *> &P) {
                   return std::vector<uint64_t>{bits(P[0]), bits(P[1]),
                                                bits(P[2]), uint64_t(N)};
                 }});
  }
  {
    long N = 1l << 25;
    uint32_t B = uint32_t((N + 127) / 128);
    S.push_back({"blackscholes", "_Z12blackscholesPfS_PKfS1_S1_ffl",
                 {B, 1, 1}, {128, 1, 1}, 0,
                 {N * F, N * F, N * F, N * F, N * F},
                 [N](const std::vector<void *> &P) {
                   float R = 0.02f, V = 0.30f;
                   uint32_t RB, VB;
                   std::memcpy(&RB, &R, 4);
                   std::memcpy(&VB, &V, 4);
                   return std::vector<uint64_t>{bits(P[0]), bits(P[1]),
                                                bits(P[2]), bits(P[3]),
                                                bits(P[4]), RB, VB,
                                                uint64_t(N)};
                 }});
  }
  {
    unsigned N = 1u << 27, Block = 512;
    uint32_t B = (N + 2 * Block - 1) / (2 * Block);
    S.push_back({"reduction", "_Z9reductionPKfPfj", {B, 1, 1}, {Block, 1, 1},
                 0, {uint64_t(N) * F, uint64_t(B) * F},
                 [N](const std::vector<void *> &P) {
                   return std::vector<uint64_t>{bits(P[0]), bits(P[1]),
                                                uint64_t(N)};
                 }});
  }
  {
    int R = 8192, C = 8192;
    S.push_back({"transpose", "_Z9transposePfPKfii",
                 {uint32_t(C / 32), uint32_t(R / 32), 1}, {32, 8, 1}, 0,
                 {uint64_t(R) * C * F, uint64_t(R) * C * F},
                 [R, C](const std::vector<void *> &P) {
                   return std::vector<uint64_t>{bits(P[0]), bits(P[1]), bits(R),
                                                bits(C)};
                 }});
  }
  {
    int NX = 8192, NY = 8192;
    Case J{"jacobi2d", "_Z6jacobiPKfPfii",
           {uint32_t((NX + 31) / 32), uint32_t((NY + 7) / 8), 1}, {32, 8, 1},
           0, {uint64_t(NX) * NY * F, uint64_t(NX) * NY * F},
           [NX, NY](const std::vector<void *> &P) {
             return std::vector<uint64_t>{bits(P[0]), bits(P[1]), bits(NX),
                                          bits(NY)};
           }};
    J.Launches = 10;
    J.PingPong = true;
    S.push_back(J);
  }
  {
    int NX = 384, NY = 384, NZ = 384;
    uint64_t NN = uint64_t(NX) * NY * NZ;
    S.push_back({"stencil3d", "_Z9stencil3dPKfPfiii",
                 {uint32_t((NX + 31) / 32), uint32_t((NY + 7) / 8),
                  uint32_t(NZ)},
                 {32, 8, 1}, 0, {NN * F, NN * F},
                 [NX, NY, NZ](const std::vector<void *> &P) {
                   return std::vector<uint64_t>{bits(P[0]), bits(P[1]),
                                                bits(NX), bits(NY), bits(NZ)};
                 }});
  }
  return S;
}

std::vector<std::string> splitList(const std::string &S) {
  std::vector<std::string> Out;
  std::stringstream SS(S);
  for (std::string Item; std::getline(SS, Item, ',');)
    if (!Item.empty())
      Out.push_back(Item);
  return Out;
}

int fail(const std::string &Msg) {
  std::fprintf(stderr, "cleave-engine-overhead: %s\n", Msg.c_str());
  return 1;
}

} // namespace

int main(int Argc, char **Argv) {
  std::string BundlePath;
  std::vector<std::string> Gpus{"1", "2", "4"}, Only;
  int Reps = 20;
  PartitionPolicy Policy = PartitionPolicy::Even;
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    if (A == "--help" || A == "-h") {
      std::printf("usage: cleave-engine-overhead BUNDLE [--gpus=1,2,4] "
                  "[--reps=N] [--kernels=vecadd,blackscholes,reduction,"
                  "transpose,jacobi2d,stencil3d] [--policy=even|model]\n  the engine's host time per launch on null "
                  "GPUs (nothing runs), data resident\n");
      return 0;
    }
    if (A.rfind("--gpus=", 0) == 0)
      Gpus = splitList(A.substr(7));
    else if (A.rfind("--reps=", 0) == 0)
      Reps = std::max(1, std::atoi(A.c_str() + 7));
    else if (A == "--policy=even")
      Policy = PartitionPolicy::Even;
    else if (A == "--policy=model")
      Policy = PartitionPolicy::Model;
    else if (A.rfind("--kernels=", 0) == 0)
      Only = splitList(A.substr(10));
    else if (A[0] == '-')
      return fail("unknown option " + A + " (see --help)");
    else
      BundlePath = A;
  }
  if (BundlePath.empty())
    return fail("no bundle given (see --help)");
  std::ifstream In(BundlePath, std::ios::binary);
  if (!In)
    return fail("cannot read " + BundlePath);
  std::string Bytes((std::istreambuf_iterator<char>(In)),
                    std::istreambuf_iterator<char>());

  for (const std::string &G : Gpus) {
    int NumGpus = std::atoi(G.c_str());
    if (NumGpus < 1 || NumGpus > 16)
      return fail("bad GPU count '" + G + "'");
    for (const Case &C : suite()) {
      if (!Only.empty() &&
          std::find(Only.begin(), Only.end(), C.Name) == Only.end())
        continue;
      std::vector<std::unique_ptr<NullGpu>> Owned;
      std::vector<Device *> Devs;
      for (int I = 0; I < NumGpus; ++I) {
        Owned.push_back(std::make_unique<NullGpu>(I));
        Devs.push_back(Owned.back().get());
      }
      BufferManager Bufs(Devs);
      CpuExecutor Exec(1);
      // The runtime's variables (CLEAVE_LOG, CLEAVE_PROFILE, CLEAVE_CACHE_DIR,
      // CLEAVE_TUNE) as a program's runtime would read them.
      Engine Eng(Bufs, Exec, Policy, processOptions());
      Result R = Eng.addProgram(Bytes.data(), Bytes.size(), {});
      if (!R.ok())
        return fail("bundle: " + R.toString());
      const KernelHandle *K = Eng.findKernel(C.Symbol);
      if (!K)
        return fail("no kernel " + C.Symbol + " in " + BundlePath);
      std::vector<void *> Ptrs;
      for (uint64_t B : C.Buffers) {
        void *P = nullptr;
        R = Bufs.allocate(B, P);
        if (!R.ok())
          return fail(R.toString());
        // Written by the host first (cudaMemset), as the headline does:
        // the devices start without valid copies.
        R = Bufs.memset(P, 0, B);
        if (!R.ok())
          return fail(R.toString());
        Ptrs.push_back(P);
      }
      std::vector<uint64_t> Vals = C.Args(Ptrs);
      std::vector<void *> ArgPtrs;
      for (uint64_t &V : Vals)
        ArgPtrs.push_back(&V);
      KernelLaunchRequest Req;
      Req.Kernel = K;
      std::memcpy(Req.Grid, C.Grid, sizeof Req.Grid);
      std::memcpy(Req.Block, C.Block, sizeof Req.Block);
      Req.DynamicSharedBytes = C.Shared;
      Req.Args = ArgPtrs.data();
      LaunchPlan Last; // described after the timing, not inside it
      auto Once = [&]() -> bool {
        for (unsigned L = 0; L < C.Launches; ++L) {
          if (C.PingPong && L)
            std::swap(Vals[0], Vals[1]);
          LaunchPlan Plan;
          Result LR = Eng.launch(Req, Plan);
          if (!LR.ok()) {
            fail(C.Name + ": " + LR.toString());
            return false;
          }
          Last = std::move(Plan);
        }
        if (C.PingPong && C.Launches % 2 == 0)
          std::swap(Vals[0], Vals[1]);
        return true;
      };
      if (!Once()) // warm-up: replicas, first transfers
        return 1;
      std::vector<double> Us;
      for (int Rep = 0; Rep < Reps; ++Rep) {
        auto T0 = std::chrono::steady_clock::now();
        if (!Once())
          return 1;
        auto T1 = std::chrono::steady_clock::now();
        Us.push_back(std::chrono::duration<double, std::micro>(T1 - T0)
                         .count() /
                     C.Launches);
      }
      std::sort(Us.begin(), Us.end());
      std::string Summary = Last.describe();
      Summary = Summary.substr(0, Summary.find('\n'));
      std::printf("{\"kernel\":\"%s\",\"gpus\":%d,\"reps\":%d,"
                  "\"median_us\":%.1f,\"min_us\":%.1f,\"max_us\":%.1f,"
                  "\"plan\":\"%s\"}\n",
                  C.Name.c_str(), NumGpus, Reps, Us[Us.size() / 2], Us.front(),
                  Us.back(), Summary.c_str());
      std::fflush(stdout);
      for (void *P : Ptrs)
        (void)Bufs.free(P);
    }
  }
  return 0;
}
