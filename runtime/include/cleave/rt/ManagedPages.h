//===- ManagedPages.h - Host writes to managed memory, page by page -*- C++
//-*-===//
//
// Part of Cleave's runtime (no LLVM). The host copies of managed buffers
// (cudaMallocManaged) are write-protected while the host may touch them
// (docs/runtime.md, "Managed memory"): the host's first write to each page
// faults, and the process's SIGSEGV handler (KernelFault.cpp) hands the
// fault to handleManagedWrite(), which marks the page dirty and opens it
// read-write, so the write runs again and succeeds. Before work that uses
// the buffers starts, the runtime takes the dirty pages (they become
// "written at the host" in the buffer's validity) and opens every page.
//
// The regions live in a fixed table of atomic slots: the handler finds a
// region and sets its bits without locks or allocation (async-signal-safe).
// A region's storage is kept until the process ends, so that a handler
// racing with its removal never reads freed memory.
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
/// as a region whose pages are tracked; null when the table is full
/// (MaxManagedRegions live regions). Installs the fault handlers.
ManagedRegion *addManagedRegion(char *Start, uint64_t Bytes);
constexpr unsigned MaxManagedRegions = 1u << 14;

/// Forgets \p R (its pages are about to be unmapped); opens them first.
void removeManagedRegion(ManagedRegion *R);

/// Write-protects every page of \p R (PROT_READ): the host's next write to
/// each faults once and is recorded. False when mprotect failed (the pages
/// stay read-write, and writes go untracked: the caller must not rely on
/// protection then).
bool protectManagedRegion(ManagedRegion *R);

/// Opens every page of \p R (read-write) if protected, then takes its
/// dirty pages: the byte ranges, from the region's start, of the pages the
/// host wrote since they were last taken. Pages faulted in after this call
/// are kept for the next.
bool openManagedRegion(ManagedRegion *R,
                       std::vector<std::pair<uint64_t, uint64_t>> &Dirty);

/// Whether \p R is write-protected now.
bool managedRegionProtected(const ManagedRegion *R);

/// From the SIGSEGV handler: when \p Addr lies in a managed region, marks
/// its page dirty and makes it read-write (a host write to a protected
/// page), and returns true: the faulting instruction may run again. A run
/// of pages written in order opens ahead by as many pages as the run
/// already holds (at most 512), so that filling a large array faults a
/// logarithmic number of times; the pages opened ahead count as written
/// (they cost an upload, never a wrong value). Async-signal-safe.
bool handleManagedWrite(uintptr_t Addr);

/// Faults handled by handleManagedWrite() since the process started
/// (tests, CLEAVE_LOG).
uint64_t managedWriteFaults();

} // namespace cleave::rt

#endif
