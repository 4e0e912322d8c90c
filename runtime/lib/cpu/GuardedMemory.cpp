//===- GuardedMemory.cpp - Memory that CPU kernels run on ----------------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/GuardedMemory.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/GuardedMemory.h"
#include "cleave/rt/MemCheck.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include <sys/mman.h>
#include <unistd.h>

namespace cleave::rt {

namespace {

constexpr uint64_t DataAlign = 256;

uint64_t pageSize() {
  static const uint64_t P = uint64_t(sysconf(_SC_PAGESIZE));
  return P;
}

uint64_t dataPages(uint64_t Bytes) {
  uint64_t P = pageSize();
  return (Bytes + P - 1) / P * P;
}

/// The mapping's first byte, from the data pointer: the data ends in the
/// last data page, so the pages start at the data's page.
char *mappingOf(char *Data) {
  uintptr_t A = reinterpret_cast<uintptr_t>(Data);
  return reinterpret_cast<char *>(A / pageSize() * pageSize()) - GuardBytes;
}

/// Allocations made without guards because the mappings could not be made
/// (each guarded allocation takes three of the process's vm.max_map_count,
/// 65530 by default): correct, only unguarded.
std::mutex FallbackMutex;
std::atomic<bool> AnyFallback{false};
std::set<char *> &fallbacks() {
  static auto *S = new std::set<char *>();
  return *S;
}

char *allocateUnguarded(uint64_t Bytes) {
  auto *P = static_cast<char *>(std::aligned_alloc(
      DataAlign, (Bytes + DataAlign - 1) / DataAlign * DataAlign));
  if (!P)
    return nullptr;
  std::lock_guard<std::mutex> Lock(FallbackMutex);
  if (!AnyFallback.exchange(true))
    std::fprintf(stderr,
                 "cleave: cannot map guard regions (%s); later allocations "
                 "may go unguarded (vm.max_map_count)\n",
                 std::strerror(errno));
  fallbacks().insert(P);
  return P;
}

/// Frees \p P when it is an unguarded allocation.
bool freeUnguarded(char *P) {
  if (!AnyFallback.load(std::memory_order_acquire))
    return false;
  std::lock_guard<std::mutex> Lock(FallbackMutex);
  if (!fallbacks().erase(P))
    return false;
  std::free(P);
  return true;
}

/// The guarded mapping, or null when it cannot be made.
char *mapGuarded(uint64_t Bytes) {
  uint64_t Pages = dataPages(Bytes); // bytes, whole pages
  int Flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  void *Map = mmap(nullptr, Pages + 2 * GuardBytes, PROT_NONE, Flags, -1, 0);
  if (Map == MAP_FAILED)
    return nullptr;
  char *First = static_cast<char *>(Map) + GuardBytes;
  // Small allocations reserve their memory now (a later touch never fails
  // for want of memory); see NoReserveBytes for large ones. A private
  // mapping is accounted when it becomes writable.
  bool Mapped =
      Bytes < NoReserveBytes
          ? mmap(First, Pages, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED
          : mprotect(First, Pages, PROT_READ | PROT_WRITE) == 0;
  if (!Mapped) {
    munmap(Map, Pages + 2 * GuardBytes);
    return nullptr;
  }
  uintptr_t End = reinterpret_cast<uintptr_t>(First + Pages);
  return reinterpret_cast<char *>((End - Bytes) / DataAlign * DataAlign);
}

} // namespace

char *allocateGuarded(uint64_t Bytes, bool MayFallBack) {
  uint64_t Pages = dataPages(Bytes);
  if (Bytes == 0 || Pages < Bytes || Pages > ~uint64_t(0) - 2 * GuardBytes)
    return nullptr;
  char *Data = mapGuarded(Bytes);
  // Out of mappings, not of memory: small allocations go on unguarded.
  if (!Data && MayFallBack && Bytes < NoReserveBytes)
    Data = allocateUnguarded(Bytes);
  if (Data)
    noteAllocation(Data, Bytes);
  return Data;
}

void freeGuarded(char *P, uint64_t Bytes) {
  if (!P)
    return;
  noteFree(P);
  if (!freeUnguarded(P))
    munmap(mappingOf(P), dataPages(Bytes) + 2 * GuardBytes);
}

PageSpan guardedPages(char *P, uint64_t Bytes) {
  uintptr_t Lo = reinterpret_cast<uintptr_t>(P) / pageSize() * pageSize();
  uintptr_t Hi = reinterpret_cast<uintptr_t>(P) + Bytes;
  Hi = (Hi + pageSize() - 1) / pageSize() * pageSize();
  return {reinterpret_cast<char *>(Lo), Hi - Lo};
}

} // namespace cleave::rt
