//===- ManagedPages.cpp - Host writes to managed memory, page by page -----===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/ManagedPages.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/ManagedPages.h"
#include "cleave/rt/KernelFault.h"

#include <atomic>
#include <cerrno>
#include <memory>
#include <mutex>
#include <thread>

#include <sys/mman.h>
#include <unistd.h>

namespace cleave::rt {

struct ManagedRegion {
  uintptr_t Start = 0, End = 0;
  uint64_t PageBytes = 0, Pages = 0;
  /// One bit per page: written by the host since last taken.
  std::unique_ptr<std::atomic<uint64_t>[]> Dirty;
  /// Some bit of Dirty may be set (set after the bits): a region the host
  /// did not write is not scanned.
  std::atomic<bool> AnyDirty{false};
  std::atomic<bool> Protected{false};
};

namespace {

std::atomic<ManagedRegion *> Slots[MaxManagedRegions];
/// Slots at and past this index have never been used.
std::atomic<unsigned> Used{0};
/// Handlers between their first and last look at a region: a removed
/// region is deleted only once none is (handlers never block, so this
/// drains).
std::atomic<unsigned> InFlight{0};
std::atomic<uint64_t> Faults{0};
/// Serializes adding and removing (never taken by the handler).
std::mutex TableMutex;

/// The length of the run of dirty pages that ends just before \p Page, at
/// most \p Max.
uint64_t dirtyRunBefore(const ManagedRegion &R, uint64_t Page, uint64_t Max) {
  uint64_t N = 0;
  while (N < Max && N < Page) {
    uint64_t P = Page - 1 - N;
    if (!(R.Dirty[P / 64].load(std::memory_order_relaxed) >> (P % 64) & 1))
      break;
    ++N;
  }
  return N;
}

bool openPages(ManagedRegion &R, uintptr_t Addr) {
  uint64_t Page = (Addr - R.Start) / R.PageBytes;
  constexpr uint64_t MaxAhead = 512;
  uint64_t Count = dirtyRunBefore(R, Page, MaxAhead);
  if (Count == 0)
    Count = 1;
  if (Count > R.Pages - Page)
    Count = R.Pages - Page;
  // The bits first: whoever takes them after the page opens sees them.
  for (uint64_t P = Page; P < Page + Count; ++P)
    R.Dirty[P / 64].fetch_or(uint64_t(1) << (P % 64),
                             std::memory_order_acq_rel);
  R.AnyDirty.store(true, std::memory_order_release);
  if (mprotect(reinterpret_cast<void *>(R.Start + Page * R.PageBytes),
               Count * R.PageBytes, PROT_READ | PROT_WRITE) == 0)
    return true;
  // Out of mappings (each run of pages with other permissions than its
  // neighbours is one, vm.max_map_count): the whole region opens, one
  // mapping again, and every page counts as written.
  for (uint64_t W = 0; W < (R.Pages + 63) / 64; ++W)
    R.Dirty[W].store(~uint64_t(0), std::memory_order_release);
  R.AnyDirty.store(true, std::memory_order_release);
  return mprotect(reinterpret_cast<void *>(R.Start), R.End - R.Start,
                  PROT_READ | PROT_WRITE) == 0;
}

} // namespace

ManagedRegion *addManagedRegion(char *Start, uint64_t Bytes) {
  installKernelFaultHandlers();
  auto R = std::make_unique<ManagedRegion>();
  R->PageBytes = uint64_t(sysconf(_SC_PAGESIZE));
  R->Start = reinterpret_cast<uintptr_t>(Start);
  R->End = R->Start + Bytes;
  R->Pages = Bytes / R->PageBytes;
  uint64_t Words = (R->Pages + 63) / 64;
  R->Dirty.reset(new std::atomic<uint64_t>[Words]);
  for (uint64_t W = 0; W < Words; ++W)
    R->Dirty[W].store(0, std::memory_order_relaxed);
  std::lock_guard<std::mutex> Lock(TableMutex);
  unsigned N = Used.load(std::memory_order_acquire);
  for (unsigned I = 0; I < MaxManagedRegions; ++I) {
    if (Slots[I].load(std::memory_order_acquire))
      continue;
    Slots[I].store(R.get(), std::memory_order_release);
    if (I >= N)
      Used.store(I + 1, std::memory_order_release);
    return R.release();
  }
  return nullptr;
}

void removeManagedRegion(ManagedRegion *R) {
  if (!R)
    return;
  {
    std::lock_guard<std::mutex> Lock(TableMutex);
    unsigned N = Used.load(std::memory_order_acquire);
    for (unsigned I = 0; I < N; ++I)
      if (Slots[I].load(std::memory_order_acquire) == R)
        Slots[I].store(nullptr, std::memory_order_seq_cst);
  }
  if (R->Protected.exchange(false))
    mprotect(reinterpret_cast<void *>(R->Start), R->End - R->Start,
             PROT_READ | PROT_WRITE);
  while (InFlight.load(std::memory_order_seq_cst))
    std::this_thread::yield();
  delete R;
}

bool protectManagedRegion(ManagedRegion *R) {
  if (mprotect(reinterpret_cast<void *>(R->Start), R->End - R->Start,
               PROT_READ) != 0)
    return false;
  R->Protected.store(true, std::memory_order_release);
  return true;
}

bool openManagedRegion(ManagedRegion *R,
                       std::vector<std::pair<uint64_t, uint64_t>> &Dirty) {
  Dirty.clear();
  bool Ok = true;
  if (R->Protected.load(std::memory_order_acquire)) {
    Ok = mprotect(reinterpret_cast<void *>(R->Start), R->End - R->Start,
                  PROT_READ | PROT_WRITE) == 0;
    if (Ok)
      R->Protected.store(false, std::memory_order_release);
  }
  if (!R->AnyDirty.exchange(false, std::memory_order_acq_rel))
    return Ok;
  uint64_t Words = (R->Pages + 63) / 64;
  for (uint64_t W = 0; W < Words; ++W) {
    uint64_t Bits = R->Dirty[W].exchange(0, std::memory_order_acq_rel);
    while (Bits) {
      uint64_t P = W * 64 + uint64_t(__builtin_ctzll(Bits));
      Bits &= Bits - 1;
      if (P >= R->Pages)
        break;
      uint64_t Lo = P * R->PageBytes, Hi = Lo + R->PageBytes;
      if (!Dirty.empty() && Dirty.back().second == Lo)
        Dirty.back().second = Hi;
      else
        Dirty.emplace_back(Lo, Hi);
    }
  }
  return Ok;
}

bool managedRegionProtected(const ManagedRegion *R) {
  return R->Protected.load(std::memory_order_acquire);
}

bool handleManagedWrite(uintptr_t Addr) {
  if (!Used.load(std::memory_order_acquire))
    return false;
  int SavedErrno = errno;
  InFlight.fetch_add(1, std::memory_order_seq_cst);
  bool Handled = false;
  unsigned N = Used.load(std::memory_order_acquire);
  for (unsigned I = 0; I < N; ++I) {
    ManagedRegion *R = Slots[I].load(std::memory_order_seq_cst);
    if (R && Addr >= R->Start && Addr < R->End) {
      Handled = openPages(*R, Addr);
      break;
    }
  }
  InFlight.fetch_sub(1, std::memory_order_seq_cst);
  if (Handled)
    Faults.fetch_add(1, std::memory_order_relaxed);
  errno = SavedErrno;
  return Handled;
}

uint64_t managedWriteFaults() { return Faults.load(std::memory_order_relaxed); }

} // namespace cleave::rt
