//===- MemCheck.cpp - CLEAVE_CHECK=memory: checked CPU variants ----------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/MemCheck.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/MemCheck.h"
#include "cleave/ABI/CpuCheckABI.h"
#include "cleave/rt/KernelFault.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string_view>

#include <dlfcn.h>
#include <pthread.h>

namespace cleave::rt {

namespace {

std::atomic<bool> Enabled{false};

/// Addresses below this are reported as a null pointer plus an offset
/// (Linux maps nothing below vm.mmap_min_addr, 64 KiB by default).
constexpr uintptr_t NullPageBytes = 64 * 1024;

std::mutex RegistryMutex;
std::map<uintptr_t, uint64_t> &registry() {
  static auto *R = new std::map<uintptr_t, uint64_t>();
  return *R;
}

/// What the checks of the calling thread see.
struct ThreadContext {
  MemCheckLaunch *Launch = nullptr;
  uintptr_t ScratchLo = 0, ScratchHi = 0;
  uintptr_t StackLo = 0, StackHi = 0;
};
thread_local ThreadContext Context;

std::string hex(uintptr_t A) {
  char Buf[32];
  std::snprintf(Buf, sizeof Buf, "0x%llx", static_cast<unsigned long long>(A));
  return Buf;
}

std::string triple(uint64_t Linear, const uint32_t Dims[3]) {
  uint64_t X = Linear % Dims[0], Rest = Linear / Dims[0];
  return "(" + std::to_string(X) + "," + std::to_string(Rest % Dims[1]) + "," +
         std::to_string(Rest / Dims[1]) + ")";
}

} // namespace

bool memoryChecksEnabled() { return Enabled.load(std::memory_order_acquire); }

void setMemoryChecks(bool On) { Enabled.store(On, std::memory_order_release); }

void noteAllocation(const void *P, uint64_t Bytes) {
  if (!memoryChecksEnabled())
    return;
  std::lock_guard<std::mutex> Lock(RegistryMutex);
  registry()[reinterpret_cast<uintptr_t>(P)] = Bytes;
}

void noteFree(const void *P) {
  if (!memoryChecksEnabled())
    return;
  std::lock_guard<std::mutex> Lock(RegistryMutex);
  registry().erase(reinterpret_cast<uintptr_t>(P));
}

MemCheckLaunch::MemCheckLaunch(const cleave_cpu_kernel_desc &K,
                               const cleave_cpu_launch &L)
    : Kernel(K.name ? K.name : "?"), Launch(L) {
  std::lock_guard<std::mutex> Lock(RegistryMutex);
  Allocations.assign(registry().begin(), registry().end());
}

void MemCheckLaunch::enter(void *Scratch, uint64_t Bytes) {
  ThreadContext &C = Context;
  C.Launch = this;
  C.ScratchLo = reinterpret_cast<uintptr_t>(Scratch);
  C.ScratchHi = C.ScratchLo + Bytes;
  if (!C.StackHi) {
    pthread_attr_t A;
    void *Lo = nullptr;
    size_t Size = 0;
    if (pthread_getattr_np(pthread_self(), &A) == 0) {
      pthread_attr_getstack(&A, &Lo, &Size);
      pthread_attr_destroy(&A);
    }
    C.StackLo = reinterpret_cast<uintptr_t>(Lo);
    C.StackHi = C.StackLo + Size;
  }
}

void MemCheckLaunch::leave() { Context.Launch = nullptr; }

MemCheckLaunch *currentMemCheck() { return Context.Launch; }

uintptr_t MemCheckLaunch::regionEnd(uintptr_t Addr) const {
  const ThreadContext &C = Context;
  if (Addr >= C.ScratchLo && Addr < C.ScratchHi)
    return C.ScratchHi;
  if (Addr >= C.StackLo && Addr < C.StackHi)
    return C.StackHi;
  auto It = std::upper_bound(
      Allocations.begin(), Allocations.end(), Addr,
      [](uintptr_t A, const std::pair<uintptr_t, uint64_t> &X) {
        return A < X.first;
      });
  if (It == Allocations.begin())
    return 0;
  --It;
  return Addr - It->first < It->second ? It->first + It->second : 0;
}

bool MemCheckLaunch::check(uintptr_t Addr, uint64_t Bytes, uint32_t Kind,
                           uint64_t Block, uint64_t Thread) {
  uint64_t End = Addr + Bytes;
  uintptr_t Hi = regionEnd(Addr);
  if (End >= Addr && Hi && End <= Hi)
    return true;
  std::lock_guard<std::mutex> Lock(Mutex);
  if (!Failed.load(std::memory_order_relaxed)) {
    First = {Addr, Bytes, Block, Thread, Kind};
    Failed.store(true, std::memory_order_release);
  }
  return false;
}

bool MemCheckLaunch::checkString(uintptr_t Addr, uint64_t MaxBytes,
                                 uint64_t Block, uint64_t Thread) {
  uintptr_t Hi = regionEnd(Addr);
  if (!Hi) {
    Dl_info Info;
    if (dladdr(reinterpret_cast<void *>(Addr), &Info))
      return true;
    return check(Addr, 1, CLEAVE_CHECK_LOAD, Block, Thread);
  }
  uint64_t Span = std::min<uint64_t>(Hi - Addr, MaxBytes);
  if (Span == MaxBytes ||
      std::memchr(reinterpret_cast<const void *>(Addr), 0, Span))
    return true;
  // No terminating zero before the region ends: the read runs past it.
  return check(Addr, Span + 1, CLEAVE_CHECK_LOAD, Block, Thread);
}

std::string MemCheckLaunch::nearest(uintptr_t Addr, uint64_t Bytes) const {
  // Page 0 and its neighbours are never mapped: a null pointer, offset.
  if (Addr < NullPageBytes)
    return "it is a null pointer (plus " + std::to_string(Addr) + ")";
  auto It = std::upper_bound(
      Allocations.begin(), Allocations.end(), Addr,
      [](uintptr_t A, const std::pair<uintptr_t, uint64_t> &X) {
        return A < X.first;
      });
  auto Name = [](const std::pair<uintptr_t, uint64_t> &X) {
    return "the " + std::to_string(X.second) + "-byte allocation at " +
           hex(X.first);
  };
  std::string Before, After;
  uint64_t DBefore = ~uint64_t(0), DAfter = ~uint64_t(0);
  if (It != Allocations.begin()) {
    const auto &P = *std::prev(It);
    if (Addr < P.first + P.second)
      return "it runs " + std::to_string(Addr + Bytes - P.first - P.second) +
             " byte(s) past the end of " + Name(P) + " (at offset " +
             std::to_string(Addr - P.first) + ")";
    DBefore = Addr - (P.first + P.second);
    Before = std::to_string(DBefore) + " byte(s) past the end of " + Name(P);
  }
  if (It != Allocations.end()) {
    DAfter = It->first - Addr;
    After =
        std::to_string(DAfter) + " byte(s) before the start of " + Name(*It);
  }
  if (Before.empty() && After.empty())
    return "no allocation is live";
  return "it is " + (DBefore <= DAfter ? Before : After);
}

std::string MemCheckLaunch::describe() const {
  const char *What = First.Kind == CLEAVE_CHECK_STORE    ? "write"
                     : First.Kind == CLEAVE_CHECK_ATOMIC ? "atomic access"
                                                         : "read";
  std::string Who = (First.Thread == CLEAVE_CHECK_UNKNOWN
                         ? std::string("a thread")
                         : "thread " + triple(First.Thread, Launch.block)) +
                    (First.Block == CLEAVE_CHECK_UNKNOWN
                         ? std::string()
                         : " of block " + triple(First.Block, Launch.grid));
  return "invalid " + std::string(What) + " of " + std::to_string(First.Bytes) +
         " byte(s) at " + hex(First.Addr) + " by " + Who + " of kernel " +
         Kernel + ": " + nearest(First.Addr, First.Bytes) +
         " (CLEAVE_CHECK=memory)";
}

} // namespace cleave::rt

extern "C" void __cleave_rt_check(const void *Addr, uint64_t Bytes,
                                  uint32_t Kind, uint64_t Block,
                                  uint64_t Thread) {
  using namespace cleave::rt;
  MemCheckLaunch *L = Context.Launch;
  if (!L || Bytes == 0)
    return;
  if (!L->check(reinterpret_cast<uintptr_t>(Addr), Bytes, Kind, Block, Thread))
    leaveGuarded();
}
