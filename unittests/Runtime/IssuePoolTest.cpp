//===- IssuePoolTest.cpp - The engine's issue workers ---------------------===//
//
// Part of Cleave. A worker of the pool polls for a task for a while after
// its last one, then sleeps. The tests decide when a worker gives up polling
// (the pool's poll function), and wait until it sleeps, so that nothing
// depends on how fast the threads run.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/lib/engine/IssuePool.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

using namespace cleave::rt;

namespace {

/// A pool whose workers poll until the test lets them give up.
struct ControlledPool {
  std::atomic<bool> GiveUp{false};
  IssuePool Pool{[this](const std::atomic<bool> &Posted) {
    while (!GiveUp.load(std::memory_order_acquire))
      if (Posted.load(std::memory_order_acquire))
        return true;
      else
        std::this_thread::yield();
    return Posted.load(std::memory_order_acquire);
  }};
  /// Workers that poll without end stop only once they may give up.
  ~ControlledPool() { GiveUp = true; }

  /// Lets worker \p Slot give up polling and waits until it sleeps; it
  /// polls without end again once woken.
  void putToSleep(size_t Slot) {
    GiveUp = true;
    while (!Pool.asleep(Slot))
      std::this_thread::yield();
    GiveUp = false;
  }
};

TEST(IssuePool, TasksOfDifferentWorkersRunAtOnce) {
  // Each task waits until all three have started: run one after the other,
  // they would wait for ever (the wait gives up after a minute, so that
  // such a pool fails the test rather than hang it).
  ControlledPool P;
  std::mutex M;
  std::condition_variable AllStarted;
  int Started = 0;
  std::atomic<int> TimedOut{0};
  auto Task = [&] {
    std::unique_lock<std::mutex> Lock(M);
    if (++Started == 3)
      AllStarted.notify_all();
    if (!AllStarted.wait_for(Lock, std::chrono::minutes(1),
                             [&] { return Started == 3; }))
      ++TimedOut;
  };
  for (size_t Slot = 0; Slot < 3; ++Slot)
    ASSERT_TRUE(P.Pool.tryPost(Slot, Task)); // new workers poll for work
  for (size_t Slot = 0; Slot < 3; ++Slot)
    P.Pool.wait(Slot);
  EXPECT_EQ(Started, 3);
  EXPECT_EQ(TimedOut.load(), 0);
}

TEST(IssuePool, SlotsNeedNotBeDense) {
  // Slots are device locations: with the CPU at 0 and GPUs at 1-3, slot 0
  // never has a worker, and the pool must still stop the others.
  auto P = std::make_unique<ControlledPool>();
  std::atomic<int> Ran{0};
  for (size_t Slot : {2, 3}) {
    ASSERT_TRUE(P->Pool.tryPost(Slot, [&] { ++Ran; }));
    P->Pool.wait(Slot);
  }
  P->Pool.wait(0); // no worker: returns at once
  EXPECT_FALSE(P->Pool.asleep(0));
  P.reset();
  EXPECT_EQ(Ran.load(), 2);
}

TEST(IssuePool, ASleepingWorkerIsWokenForTheNextLaunch) {
  // A post to a sleeping worker says no (the caller issues inline) and
  // wakes it; the next post is taken.
  ControlledPool P;
  int Ran = 0;
  ASSERT_TRUE(P.Pool.tryPost(0, [&] { ++Ran; }));
  P.Pool.wait(0);
  P.putToSleep(0);
  EXPECT_FALSE(P.Pool.tryPost(0, [&] { ++Ran; }));
  EXPECT_FALSE(P.Pool.asleep(0));
  ASSERT_TRUE(P.Pool.tryPost(0, [&] { ++Ran; }));
  P.Pool.wait(0);
  EXPECT_EQ(Ran, 2);
}

TEST(IssuePool, AWorkerWokenAsALaunchStartsTakesItsTask) {
  // wake() sets a sleeping worker polling again at once, so a post right
  // after it is taken, every time.
  ControlledPool P;
  int Ran = 0;
  ASSERT_TRUE(P.Pool.tryPost(0, [&] { ++Ran; })); // a new worker polls
  P.Pool.wait(0);
  for (int Try = 0; Try < 5; ++Try) {
    P.putToSleep(0);
    P.Pool.wake(0);
    ASSERT_TRUE(P.Pool.tryPost(0, [&] { ++Ran; })) << "try " << Try;
    P.Pool.wait(0);
  }
  EXPECT_EQ(Ran, 6);
}

TEST(IssuePool, WakeLeavesAPollingWorkerAlone) {
  // A worker that still polls takes the post whether or not it was woken.
  ControlledPool P;
  int Ran = 0;
  P.Pool.wake(0); // starts the worker, polling
  EXPECT_FALSE(P.Pool.asleep(0));
  ASSERT_TRUE(P.Pool.tryPost(0, [&] { ++Ran; }));
  P.Pool.wait(0);
  EXPECT_EQ(Ran, 1);
}

} // namespace
