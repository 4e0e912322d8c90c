//===- Spin.h - Polling before blocking at a thread hand-off -----*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). A hand-off between threads that
// blocks on a condition variable at once costs tens of microseconds when the
// other side answers within a few: the stream workers (api/Runtime.cpp) and
// the engine's issue workers (IssuePool.h) poll for up to spin_us
// microseconds (CLEAVE_TUNE, Options.h; default 200; 0: block at once)
// before they block.
//
// A thread that waits for work already under way (a synchronizing call
// waiting for the stream's worker, the engine waiting for an issue worker)
// polls longer on a host with cores to spare: the driver does the same
// (cudaDeviceScheduleAuto spins while the host has more cores than
// contexts), and a wake-up after a longer wait cost 0.1-0.3 ms on the GPU
// machines, a third of a 1 ms launch's repetitions on one H200
// (the 4x H200 headline run of 2026-11-22).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_SPIN_H
#define CLEAVE_RT_SPIN_H

#include <chrono>
#include <thread>

namespace cleave {
namespace rt {

/// Polls \p Ready for up to \p Us microseconds (TuneOptions::SpinUs, or
/// TuneOptions::busyWaitUs() for work under way); true as soon as it holds,
/// false when the time ran out first (the caller then blocks).
template <class Pred> bool spinUntil(Pred Ready, unsigned Us) {
  if (!Us)
    return Ready();
  auto Until =
      std::chrono::steady_clock::now() + std::chrono::microseconds(Us);
  for (unsigned I = 0;; ++I) {
    if (Ready())
      return true;
    // Every 64 polls: the clock, and the core to whoever else may run.
    if ((I & 63) == 63) {
      if (std::chrono::steady_clock::now() >= Until)
        return Ready();
      std::this_thread::yield();
    }
  }
}

} // namespace rt
} // namespace cleave

#endif // CLEAVE_RT_SPIN_H
