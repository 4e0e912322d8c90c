//===- ManagedPages.cpp - Host writes to managed memory, page by page -----===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/ManagedPages.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/ManagedPages.h"
#include "cleave/rt/KernelFault.h"

#include <algorithm>
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
  uint64_t words() const { return (Pages + 63) / 64; }
  /// One bit per page: written by the host since last taken.
  std::unique_ptr<std::atomic<uint64_t>[]> Dirty;
  /// One bit per page: read-write since the region was last protected.
  std::unique_ptr<std::atomic<uint64_t>[]> Open;
  /// Some bit of Dirty may be set (set after the bits): a region the host
  /// did not write is not scanned.
  std::atomic<bool> AnyDirty{false};
  /// The host's phase (ManagedPages.h).
  std::atomic<bool> HostPhase{false};
  /// Faults of the devices' phase since the region was last protected, and
  /// whether the next devices' phase opens every page at its start (one
  /// mprotect) instead of page by page as the runtime writes.
  std::atomic<uint64_t> WorkFaults{0};
  std::atomic<bool> OpenAtStart{false};
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

bool bit(const std::atomic<uint64_t> *Bits, uint64_t P) {
  return Bits[P / 64].load(std::memory_order_relaxed) >> (P % 64) & 1;
}

void setBits(std::atomic<uint64_t> *Bits, uint64_t First, uint64_t Count) {
  for (uint64_t P = First; P < First + Count; ++P)
    Bits[P / 64].fetch_or(uint64_t(1) << (P % 64), std::memory_order_acq_rel);
}

/// The length of the run of open pages that ends just before \p Page, at
/// most \p Max.
uint64_t openRunBefore(const ManagedRegion &R, uint64_t Page, uint64_t Max) {
  uint64_t N = 0;
  while (N < Max && N < Page && bit(R.Open.get(), Page - 1 - N))
    ++N;
  return N;
}

int protect(const ManagedRegion &R, uint64_t First, uint64_t Count, int Prot) {
  return mprotect(reinterpret_cast<void *>(R.Start + First * R.PageBytes),
                  Count * R.PageBytes, Prot);
}

bool openPages(ManagedRegion &R, uintptr_t Addr) {
  uint64_t Page = (Addr - R.Start) / R.PageBytes;
  constexpr uint64_t MaxAhead = 512;
  uint64_t Count = std::max<uint64_t>(openRunBefore(R, Page, MaxAhead), 1);
  Count = std::min(Count, R.Pages - Page);
  bool Host = R.HostPhase.load(std::memory_order_acquire);
  if (!Host)
    R.WorkFaults.fetch_add(1, std::memory_order_relaxed);
  // The bits first: whoever takes them after the page opens sees them.
  setBits(R.Open.get(), Page, Count);
  if (Host) {
    setBits(R.Dirty.get(), Page, Count);
    R.AnyDirty.store(true, std::memory_order_release);
  }
  if (protect(R, Page, Count, PROT_READ | PROT_WRITE) == 0)
    return true;
  // Out of mappings (each run of pages with other permissions than its
  // neighbours is one, vm.max_map_count): the whole region opens, one
  // mapping again, and in the host's phase every page counts as written.
  setBits(R.Open.get(), 0, R.Pages);
  if (Host) {
    setBits(R.Dirty.get(), 0, R.Pages);
    R.AnyDirty.store(true, std::memory_order_release);
  }
  return protect(R, 0, R.Pages, PROT_READ | PROT_WRITE) == 0;
}

/// Calls \p Fn(First, Count) for each run of set bits of \p Bits, clearing
/// them.
template <class F>
void takeRuns(ManagedRegion &R, std::atomic<uint64_t> *Bits, F Fn) {
  uint64_t First = 0, Count = 0;
  for (uint64_t W = 0; W < R.words(); ++W) {
    uint64_t Set = Bits[W].exchange(0, std::memory_order_acq_rel);
    while (Set) {
      uint64_t P = W * 64 + uint64_t(__builtin_ctzll(Set));
      Set &= Set - 1;
      if (P >= R.Pages)
        break;
      if (Count && First + Count == P) {
        ++Count;
        continue;
      }
      if (Count)
        Fn(First, Count);
      First = P;
      Count = 1;
    }
  }
  if (Count)
    Fn(First, Count);
}

} // namespace

ManagedRegion *addManagedRegion(char *Start, uint64_t Bytes) {
  installKernelFaultHandlers();
  auto R = std::make_unique<ManagedRegion>();
  R->PageBytes = uint64_t(sysconf(_SC_PAGESIZE));
  R->Start = reinterpret_cast<uintptr_t>(Start);
  R->End = R->Start + Bytes;
  R->Pages = Bytes / R->PageBytes;
  R->Dirty.reset(new std::atomic<uint64_t>[R->words()]);
  R->Open.reset(new std::atomic<uint64_t>[R->words()]);
  for (uint64_t W = 0; W < R->words(); ++W) {
    R->Dirty[W].store(0, std::memory_order_relaxed);
    R->Open[W].store(0, std::memory_order_relaxed);
  }
  setBits(R->Open.get(), 0, R->Pages); // mapped read-write
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
  while (InFlight.load(std::memory_order_seq_cst))
    std::this_thread::yield();
  delete R;
}

bool protectManagedRegion(ManagedRegion *R) {
  R->HostPhase.store(true, std::memory_order_release);
  // A fault costs tens of microseconds and changing a page's protection
  // about one (on the machines measured): a region the runtime wrote in
  // more than a fortieth of its pages, or a small one, opens whole at the
  // start of each later work (it then faults no more, so the choice stays).
  uint64_t Faults = R->WorkFaults.exchange(0, std::memory_order_acq_rel);
  if (R->Pages <= 16 || Faults * 40 > R->Pages)
    R->OpenAtStart.store(true, std::memory_order_release);
  bool Ok = true;
  takeRuns(*R, R->Open.get(), [&](uint64_t First, uint64_t Count) {
    if (protect(*R, First, Count, PROT_READ) != 0) {
      setBits(R->Open.get(), First, Count); // still open
      Ok = false;
    }
  });
  return Ok;
}

void startManagedWork(ManagedRegion *R,
                      std::vector<std::pair<uint64_t, uint64_t>> &Dirty) {
  Dirty.clear();
  R->HostPhase.store(false, std::memory_order_release);
  if (R->OpenAtStart.load(std::memory_order_acquire))
    openManagedRegion(R); // a failure leaves pages to open one by one
  if (!R->AnyDirty.exchange(false, std::memory_order_acq_rel))
    return;
  takeRuns(*R, R->Dirty.get(), [&](uint64_t First, uint64_t Count) {
    Dirty.emplace_back(First * R->PageBytes, (First + Count) * R->PageBytes);
  });
}

bool openManagedRegion(ManagedRegion *R) {
  setBits(R->Open.get(), 0, R->Pages);
  return protect(*R, 0, R->Pages, PROT_READ | PROT_WRITE) == 0;
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
