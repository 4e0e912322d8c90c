//===- ManagedPages.h - Host writes to managed memory, page by page -*- C++
//-*-===//
//
// Part of Cleave's runtime (no LLVM). The host copies of managed buffers
// (cudaMallocManaged) are write-protected (docs/runtime.md, "Managed
// memory"); the process's SIGSEGV handler (KernelFault.cpp) hands a write
// fault to handleManagedWrite(), which opens the page (read-write) and lets
// the write run again. Each region is in one of two phases:
//
// * the host's (after allocation and after each synchronization): a page
//   opened is also marked dirty, written by the host;
// * the devices' (while work is outstanding): the writes are the runtime's
//   own (copies into the host copy, CPU kernels), whose bytes the buffer
//   manager records itself; the page only opens.
//
// Pages stay open until the next protectManagedRegion(), which closes just
// the pages opened since the last one: the cost of a synchronization grows
// with what was written, not with the size of the buffers.
//
// The regions live in a fixed table of atomic slots: the handler finds a
// region and sets its bits without locks or allocation (async-signal-safe).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_MANAGEDPAGES_H
#define CLEAVE_RT_MANAGEDPAGES_H

#include <cstdint>
#include <utility>
#include <vector>

namespace cleave::rt {

struct ManagedRegion;

/// The whole pages [Start, Start + Bytes) (page-aligned), read-write now,
/// as a region whose pages are tracked, in the devices' phase; null when
/// the table is full (MaxManagedRegions live regions). Installs the fault
/// handlers.
ManagedRegion *addManagedRegion(char *Start, uint64_t Bytes);
constexpr unsigned MaxManagedRegions = 1u << 14;

/// Forgets \p R (its pages are about to be unmapped).
void removeManagedRegion(ManagedRegion *R);

/// The host's phase begins: every page opened since the last call is
/// write-protected again (PROT_READ), so that the host's next write to
/// each faults once and is recorded. False when mprotect failed: those
/// pages stay open (and their host writes untracked).
bool protectManagedRegion(ManagedRegion *R);

/// The devices' phase begins: takes the dirty pages, the byte ranges
/// (from the region's start) of the pages the host wrote since they were
/// last taken. The pages stay as they are (open where written).
void startManagedWork(ManagedRegion *R,
                      std::vector<std::pair<uint64_t, uint64_t>> &Dirty);

/// Opens every page of \p R (page-locking a range needs it writable).
bool openManagedRegion(ManagedRegion *R);

/// From the SIGSEGV handler: when \p Addr lies in a managed region, opens
/// its page (marked dirty in the host's phase) and returns true: the
/// faulting instruction may run again. A write just past a run of open
/// pages opens as many pages ahead as the run holds (at most 512), so that
/// filling a large array faults a logarithmic number of times; in the
/// host's phase the pages opened ahead count as written (they cost an
/// upload, never a wrong value). Async-signal-safe.
bool handleManagedWrite(uintptr_t Addr);

/// Faults handled by handleManagedWrite() since the process started
/// (tests, CLEAVE_LOG).
uint64_t managedWriteFaults();

} // namespace cleave::rt

#endif
