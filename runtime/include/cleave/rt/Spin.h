//===- Spin.h - Polling before blocking at a thread hand-off -----*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). A hand-off between threads that
// blocks on a condition variable at once costs tens of microseconds when the
// other side answers within a few: the stream workers (api/Runtime.cpp) and
// the engine's issue workers (IssuePool.h) poll for up to CLEAVE_SPIN_US
// microseconds (default 200; 0: block at once) before they block.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_SPIN_H
#define CLEAVE_RT_SPIN_H

#include <chrono>
#include <thread>

namespace cleave {
namespace rt {

/// CLEAVE_SPIN_US, read once; a value that is not a number up to 100000 is
/// reported on stderr and the default (200) is used.
unsigned spinMicros();

/// Polls \p Ready for up to spinMicros(); true as soon as it holds, false
/// when the time ran out first (the caller then blocks).
template <class Pred> bool spinUntil(Pred Ready) {
  unsigned Us = spinMicros();
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
