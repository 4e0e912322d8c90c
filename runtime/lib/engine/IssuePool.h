//===- IssuePool.h - One thread per GPU to issue and wait for ranges -*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). Issuing a range to a GPU costs the
// host several microseconds (the driver's launch call); issued one after
// the other, the last GPU of a split launch starts, and finishes, that much
// per GPU later than the first. The engine hands each GPU but the first to a
// worker of this pool, which issues the range and waits for it, so the GPUs
// start together (docs/runtime.md, "Issue"). A worker polls for work for
// spin_us (CLEAVE_TUNE) after its last task (Spin.h), then sleeps; the engine
// issues inline to a worker that sleeps rather than wait for it to wake,
// and wakes the workers a launch will use when the launch starts (wake()),
// so that they poll again by the time it issues.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_LIB_ISSUEPOOL_H
#define CLEAVE_RT_LIB_ISSUEPOOL_H

#include "cleave/rt/Options.h"

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace cleave {
namespace rt {

class IssuePool {
public:
  /// How an idle worker polls for its next task: true once \p Posted is
  /// set, false when it gives up and sleeps.
  using PollFn = std::function<bool(const std::atomic<bool> &Posted)>;

  /// Workers poll for \p T's spin_us (spinUntil), the engine waits for a
  /// worker for its busyWaitUs(), and its issue mode says which launches
  /// use the pool (usedFor).
  explicit IssuePool(const TuneOptions &T);
  /// Workers poll with \p Poll: tests decide when a worker gives up.
  explicit IssuePool(PollFn Poll, const TuneOptions &T = TuneOptions());
  IssuePool(const IssuePool &) = delete;
  IssuePool &operator=(const IssuePool &) = delete;
  ~IssuePool();

  /// Whether a launch with \p Gpus GPU ranges uses the pool: Parallel
  /// always, Serial never; Auto from three GPUs, when the host has a core
  /// for each worker besides the launching thread and the stream's.
  bool usedFor(size_t Gpus) const;

  /// Gives \p Task to worker \p Slot (started on first use) if it is
  /// polling for work, and returns true; false, without running anything,
  /// if it sleeps (it is woken for the next launch) or still runs a task.
  bool tryPost(size_t Slot, std::function<void()> Task);

  /// Starts worker \p Slot polling for work if it sleeps (starting the
  /// worker on first use); does nothing to a polling or busy worker.
  /// Called as a launch starts: woken only when a post was refused, a
  /// worker would start a fresh spin at the issue of the launch
  /// that refused it, and launches that take longer than that (the
  /// 0.25 ms ranges of 4 H200s) would find it asleep every time.
  void wake(size_t Slot);

  /// Waits until the task given to \p Slot has run (at once if none).
  void wait(size_t Slot);

  /// Whether worker \p Slot exists and sleeps.
  bool asleep(size_t Slot) const;

private:
  struct Worker {
    std::thread Thread;
    std::mutex Mutex;
    std::condition_variable Cond;
    std::function<void()> Task;
    /// Idle-and-polling, idle-and-asleep, or busy.
    enum State : int { Polling, Asleep, Busy };
    std::atomic<int> St{Polling};
    /// A task was handed over and not run yet; and its completion.
    std::atomic<bool> Posted{false};
    std::atomic<bool> Done{true};
    bool Stop = false;
    void loop(const PollFn &Poll);
  };
  PollFn Poll;
  IssueMode Mode;
  unsigned BusyWaitUs;
  std::vector<std::unique_ptr<Worker>> Workers;
  Worker &worker(size_t Slot);
};

} // namespace rt
} // namespace cleave

#endif // CLEAVE_RT_LIB_ISSUEPOOL_H
