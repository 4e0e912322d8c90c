//===- GuardedMemory.cpp - Memory that CPU kernels run on ----------------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/GuardedMemory.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/GuardedMemory.h"
#include "cleave/rt/MemCheck.h"

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

} // namespace

char *allocateGuarded(uint64_t Bytes) {
  uint64_t Pages = dataPages(Bytes); // bytes, whole pages
  if (Bytes == 0 || Pages < Bytes || Pages > ~uint64_t(0) - 2 * GuardBytes)
    return nullptr;
  int Flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  void *Map = mmap(nullptr, Pages + 2 * GuardBytes, PROT_NONE, Flags, -1, 0);
  if (Map == MAP_FAILED)
    return nullptr;
  char *First = static_cast<char *>(Map) + GuardBytes;
  // Small allocations reserve their memory now (a later touch never fails
  // for want of memory); see NoReserveBytes for large ones. A private
  // mapping is accounted when it becomes writable.
  if (Bytes < NoReserveBytes) {
    if (mmap(First, Pages, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
      munmap(Map, Pages + 2 * GuardBytes);
      return nullptr;
    }
  } else if (mprotect(First, Pages, PROT_READ | PROT_WRITE) != 0) {
    munmap(Map, Pages + 2 * GuardBytes);
    return nullptr;
  }
  uintptr_t End = reinterpret_cast<uintptr_t>(First + Pages);
  char *Data = reinterpret_cast<char *>((End - Bytes) / DataAlign * DataAlign);
  noteAllocation(Data, Bytes);
  return Data;
}

void freeGuarded(char *P, uint64_t Bytes) {
  if (!P)
    return;
  noteFree(P);
  munmap(mappingOf(P), dataPages(Bytes) + 2 * GuardBytes);
}

PageSpan guardedPages(char *P, uint64_t Bytes) {
  char *Start = mappingOf(P) + GuardBytes;
  return {Start, dataPages(Bytes)};
}

} // namespace cleave::rt
