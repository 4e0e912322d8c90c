//===- GuardedMemory.h - Memory that CPU kernels run on ---------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). The host copies of device allocations
// and the CPU devices' replicas are mapped between inaccessible guard
// regions, so that a kernel's access past the end (or before the start) of
// an allocation faults instead of corrupting a neighbour; the executor turns
// that fault into cudaErrorIllegalAddress (KernelFault.h).
//
// Layout of one allocation of B bytes (P the page size):
//
//   [guard: GuardBytes][slack | data: B bytes][guard: GuardBytes]
//                      ^ page   ^ 256-aligned ^ page
//
// The data starts 256-byte aligned, as cudaMalloc guarantees (kernels'
// vector loads and programs' pointer arithmetic rely on it), and ends as
// close to the page boundary as that allows: less than 256 bytes before it.
// An overrun is caught by the guard from the first byte when B is a
// multiple of 256; otherwise the first (256 - B % 256) bytes past the end
// land in the slack, which only CLEAVE_CHECK=memory catches. An underrun is
// caught once it leaves the first page. Guards are address space only
// (PROT_NONE, no memory), wide enough that a far overrun does not reach the
// next allocation's data.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_GUARDEDMEMORY_H
#define CLEAVE_RT_GUARDEDMEMORY_H

#include <cstdint>

namespace cleave::rt {

/// Address space left inaccessible on each side of an allocation.
constexpr uint64_t GuardBytes = uint64_t(1) << 20;

/// Allocations this large commit pages only when they are touched
/// (MAP_NORESERVE): a buffer that lives on a GPU costs no host memory until
/// the host reads it, and buffers larger than the free memory can exist, as
/// they can on a large GPU.
constexpr uint64_t NoReserveBytes = uint64_t(1) << 20;

/// \p Bytes (> 0) of read-write memory laid out as above; null when the
/// address space or memory is exhausted. One mmap and one mprotect (or a
/// fixed mmap). When the mappings cannot be made (each allocation takes
/// three of vm.max_map_count, 65530 by default), an allocation under
/// NoReserveBytes is made without guards (256-byte aligned), with a
/// message on stderr the first time, unless \p MayFallBack is false (the
/// data's pages must be the allocation's own: managed memory).
char *allocateGuarded(uint64_t Bytes, bool MayFallBack = true);

/// Frees what allocateGuarded(\p Bytes) returned.
void freeGuarded(char *P, uint64_t Bytes);

/// The whole pages that hold [P, P + Bytes) of a guarded allocation: what
/// page-locking registers.
struct PageSpan {
  char *Start;
  uint64_t Bytes;
};
PageSpan guardedPages(char *P, uint64_t Bytes);

} // namespace cleave::rt

#endif
