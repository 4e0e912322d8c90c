//===- WarpSynchronous.h - Lockstep for volatile shared memory --*- C++ -*-===//
//
// Part of Cleave. Warp-synchronous code (the unrolled last steps of a
// reduction through a `volatile` pointer to shared memory, with no
// __syncwarp) relies on the lanes of a warp running each access in
// lockstep. The CPU lowering runs the threads of a region one after the
// other, so it makes those accesses warp-level sync points first
// (docs/cpu-backend.md, "Warp-synchronous code").
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_WARPSYNCHRONOUS_H
#define CLEAVE_TRANSFORMS_WARPSYNCHRONOUS_H

namespace llvm {
class Function;
} // namespace llvm

namespace cleave {

/// Inserts a `__syncwarp` (llvm.nvvm.bar.warp.sync) immediately before and
/// after every volatile store to shared memory of \p K, so that every lane of
/// a warp completes each volatile shared access before any lane makes a
/// conflicting one (a store and an access on either side of it); loads
/// between two stores need no order among themselves. Returns how many were
/// inserted.
unsigned syncVolatileSharedStores(llvm::Function &K);

} // namespace cleave

#endif
