//===- CoRunTestKernels.h - Kernels of the co-scheduler's tests -*- C++ -*-===//
//
// Part of Cleave. What the co-scheduling phase's tests (CoRunGateTest.cpp,
// CoRunSliceSizeTest.cpp, ...) share: the engine_test bundle
// (unittests/Inputs/engine_test.ll) with hand-written CPU variants of its
// kernels keep, tr and tickets, and synthetic co-run profiles.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_UNITTESTS_RUNTIME_CORUNTESTKERNELS_H
#define CLEAVE_UNITTESTS_RUNTIME_CORUNTESTKERNELS_H

#include "../TestInputs.h"
#include "cleave/rt/CoRun.h"
#include "cleave/rt/CpuKernelABI.h"

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cleave_corun_test {

using namespace cleave::rt;

inline const std::string &bundleBytes() {
  static const std::string Bytes = cleave::test::testBundle("engine_test");
  return Bytes;
}

/// What every CPU run does first: Hook (when set) sees the output pointer
/// and the first block; Runs records them in order.
inline std::mutex RunsMutex;
inline std::vector<std::pair<const void *, uint64_t>> Runs;
inline std::function<void(const void *Out, uint64_t First)> Hook;

inline void noteRun(const void *Out, uint64_t First) {
  if (Hook)
    Hook(Out, First);
  std::lock_guard<std::mutex> L(RunsMutex);
  Runs.push_back({Out, First});
}

inline void keepCpu(void **Args, const cleave_cpu_launch *L, uint64_t First,
             uint64_t Count, void *) {
  const float *X = *static_cast<const float **>(Args[0]);
  float *Out = *static_cast<float **>(Args[1]);
  int N = *static_cast<int *>(Args[2]);
  noteRun(Out, First);
  for (uint64_t Blk = First; Blk < First + Count; ++Blk)
    for (uint32_t T = 0; T < L->block[0]; ++T) {
      int64_t I = int64_t(Blk) * L->block[0] + T;
      if (I < N && X[I] > 0)
        Out[I] = X[I] * 2;
    }
}

inline void trCpu(void **Args, const cleave_cpu_launch *L, uint64_t First,
           uint64_t Count, void *) {
  const float *In = *static_cast<const float **>(Args[0]);
  float *Out = *static_cast<float **>(Args[1]);
  int W = *static_cast<int *>(Args[2]), H = *static_cast<int *>(Args[3]);
  noteRun(Out, First);
  for (uint64_t Blk = First; Blk < First + Count; ++Blk) {
    uint64_t BX = Blk % L->grid[0], BY = Blk / L->grid[0];
    for (uint32_t T = 0; T < L->block[0]; ++T) {
      int64_t X = int64_t(BX) * L->block[0] + T, Y = int64_t(BY);
      if (X < W && Y < H)
        Out[X * H + Y] = In[Y * W + X];
    }
  }
}

inline void ticketsCpu(void **Args, const cleave_cpu_launch *L, uint64_t First,
                uint64_t Count, void *) {
  unsigned *Next = *static_cast<unsigned **>(Args[0]);
  unsigned *Ticket = *static_cast<unsigned **>(Args[1]);
  int N = *static_cast<int *>(Args[2]);
  noteRun(Ticket, First);
  for (uint64_t Blk = First; Blk < First + Count; ++Blk)
    for (uint32_t T = 0; T < L->block[0]; ++T) {
      int64_t I = int64_t(Blk) * L->block[0] + T;
      if (I < N)
        Ticket[I] = __atomic_fetch_add(Next, 1u, __ATOMIC_RELAXED);
    }
}

inline const cleave_cpu_kernel_desc KeepDesc = {"keep", keepCpu, 0, 0, 3, 0};
inline const cleave_cpu_kernel_desc TrDesc = {"tr", trCpu, 0, 0, 4, 0};
inline const cleave_cpu_kernel_desc TicketsDesc = {"tickets", ticketsCpu, 0, 0, 3, 0};

inline std::map<std::string, void *> cpuSymbols() {
  return {{"__cleave_cpu_keep_desc", (void *)&KeepDesc},
          {"__cleave_cpu_tr_desc", (void *)&TrDesc},
          {"__cleave_cpu_tickets_desc", (void *)&TicketsDesc}};
}

/// Waits (at most 20 s) for \p Ready; false when it never held.
inline bool waitFor(const std::function<bool()> &Ready) {
  auto End = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!Ready()) {
    if (std::chrono::steady_clock::now() > End)
      return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

/// A memory-bound and a compute-bound profile (digest 003 §4.11's pair).
inline corun::KernelModelInput memoryBound() {
  corun::KernelModelInput K;
  K.MemRatio = 0.2;
  K.WarpsPerBlock = 2;
  K.InstrPerBlock = 2000;
  return K;
}
inline corun::KernelModelInput computeBound() {
  corun::KernelModelInput K;
  K.MemRatio = 0.005;
  K.WarpsPerBlock = 2;
  K.InstrPerBlock = 4000;
  return K;
}

} // namespace cleave_corun_test

#endif
