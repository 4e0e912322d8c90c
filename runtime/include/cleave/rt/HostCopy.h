//===- HostCopy.h - Large host memory copies on every core ------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). The runtime copies host memory where
// CUDA would move bytes over a link: a cudaMemcpy between the program's
// memory and a buffer's host copy, and each chunk of a pageable transfer
// through a GPU's pinned staging buffers. One thread copies 10-20 GB/s,
// below a PCIe 5 link; these split a large copy over the cores (oneTBB)
// and do a small one in place.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_HOSTCOPY_H
#define CLEAVE_RT_HOSTCOPY_H

#include <cstdint>

namespace cleave {
namespace rt {

/// Copies below this many bytes run on the calling thread.
constexpr uint64_t ParallelCopyBytes = uint64_t(4) << 20;

/// memcpy(Dst, Src, Bytes); the ranges must not overlap.
void hostCopy(void *Dst, const void *Src, uint64_t Bytes);
/// memset(Dst, Value, Bytes).
void hostFill(void *Dst, int Value, uint64_t Bytes);

} // namespace rt
} // namespace cleave

#endif
