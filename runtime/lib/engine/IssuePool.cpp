//===- IssuePool.cpp - One thread per GPU to issue and wait for ranges ----===//
//
// Part of Cleave's runtime (no LLVM). See IssuePool.h.
//
//===----------------------------------------------------------------------===//
#include "IssuePool.h"

#include "cleave/rt/Spin.h"

namespace cleave {
namespace rt {

bool IssuePool::usedFor(size_t Gpus) const {
  static const unsigned Cores = std::thread::hardware_concurrency();
  if (Gpus < 2 || Mode == IssueMode::Serial)
    return false;
  // auto: from three GPUs. Same run on 4x H200, even split, resident
  // (the 4x H200 headline run of 2026-11-21): over 4 GPUs the
  // workers made the 0.1 ms launches 1.09-1.17x faster (jacobi2d, whose
  // launches also copy halos, 0.93x); over 2 GPUs, 0.95-1.03x.
  return Mode == IssueMode::Parallel || (Gpus >= 3 && Cores >= Gpus + 2);
}

IssuePool::IssuePool(const TuneOptions &T)
    : IssuePool(
          [Us = T.SpinUs](const std::atomic<bool> &Posted) {
            return spinUntil(
                [&] { return Posted.load(std::memory_order_acquire); }, Us);
          },
          T) {}

IssuePool::IssuePool(PollFn Poll, const TuneOptions &T)
    : Poll(std::move(Poll)), Mode(T.Issue),
      BusyWaitUs(T.busyWaitUs(std::thread::hardware_concurrency())) {}

IssuePool::~IssuePool() {
  for (auto &W : Workers) {
    if (!W) // a slot no GPU used (slots are device locations)
      continue;
    {
      std::lock_guard<std::mutex> Lock(W->Mutex);
      W->Stop = true;
    }
    W->Cond.notify_all();
    W->Thread.join();
  }
}

IssuePool::Worker &IssuePool::worker(size_t Slot) {
  while (Workers.size() <= Slot)
    Workers.push_back(nullptr);
  if (!Workers[Slot]) {
    Workers[Slot] = std::make_unique<Worker>();
    Worker *W = Workers[Slot].get();
    W->Thread = std::thread([W, this] { W->loop(Poll); });
  }
  return *Workers[Slot];
}

void IssuePool::Worker::loop(const PollFn &Poll) {
  for (;;) {
    bool Got = Poll(Posted);
    if (!Got) {
      int Was = Polling;
      if (St.compare_exchange_strong(Was, Asleep)) {
        std::unique_lock<std::mutex> Lock(Mutex);
        Cond.wait(Lock, [&] {
          return St.load(std::memory_order_acquire) != Asleep || Stop;
        });
        if (Stop)
          return;
        continue; // woken to poll for the next launch's task
      }
      // Claimed as it gave up polling: the task is being handed over.
      while (!Posted.load(std::memory_order_acquire))
        std::this_thread::yield();
    }
    Posted.store(false, std::memory_order_relaxed);
    std::function<void()> T = std::move(Task);
    Task = nullptr;
    T();
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      St.store(Polling, std::memory_order_release);
      Done.store(true, std::memory_order_release);
    }
    Cond.notify_all();
  }
}

void IssuePool::wake(size_t Slot) {
  Worker &W = worker(Slot);
  if (W.St.load(std::memory_order_acquire) != Worker::Asleep)
    return;
  {
    std::lock_guard<std::mutex> Lock(W.Mutex);
    int Sleeping = Worker::Asleep;
    W.St.compare_exchange_strong(Sleeping, Worker::Polling);
  }
  W.Cond.notify_all();
}

bool IssuePool::tryPost(size_t Slot, std::function<void()> Task) {
  Worker &W = worker(Slot);
  int Was = Worker::Polling;
  if (!W.St.compare_exchange_strong(Was, Worker::Busy)) {
    if (Was == Worker::Asleep)
      wake(Slot);
    return false;
  }
  W.Task = std::move(Task);
  W.Done.store(false, std::memory_order_relaxed);
  W.Posted.store(true, std::memory_order_release);
  return true;
}

bool IssuePool::asleep(size_t Slot) const {
  return Slot < Workers.size() && Workers[Slot] &&
         Workers[Slot]->St.load(std::memory_order_acquire) == Worker::Asleep;
}

void IssuePool::wait(size_t Slot) {
  if (Slot >= Workers.size() || !Workers[Slot])
    return;
  Worker &W = *Workers[Slot];
  if (spinUntil([&] { return W.Done.load(std::memory_order_acquire); },
                BusyWaitUs))
    return;
  std::unique_lock<std::mutex> Lock(W.Mutex);
  W.Cond.wait(Lock, [&] { return W.Done.load(std::memory_order_acquire); });
}

} // namespace rt
} // namespace cleave
