//===- MemCheck.h - Checked CPU variants (CLEAVE_CHECK=memory) -*- C++ -*-===//
//
// Part of Cleave. A lowered CPU variant's twin that validates every access to
// global or generic memory at run time (include/cleave/ABI/CpuCheckABI.h). The
// ordinary variant is untouched, so checking costs nothing unless it is
// asked for: the runtime runs the twin only under CLEAVE_CHECK=memory.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_MEMCHECK_H
#define CLEAVE_TRANSFORMS_MEMCHECK_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <utility>

namespace llvm {
class BasicBlock;
class Function;
class Value;
} // namespace llvm

namespace cleave {

/// The name of the checked CPU variant of kernel \p Kernel.
std::string cpuCheckedVariantName(llvm::StringRef Kernel);

/// Where a lowered CPU variant keeps the ids that a report names: the linear
/// block id, and per thread loop its body (which dominates the loop's code)
/// and the linear thread id computed there. FastPaths are the conditions
/// that choose a region's guard-versioned copy (CPULower.cpp): the checked
/// variant, compiled for size and never vectorized, keeps only the general
/// copy.
struct ThreadIdSites {
  llvm::Value *BlockId = nullptr;
  llvm::SmallVector<std::pair<llvm::BasicBlock *, llvm::Value *>, 8> Loops;
  llvm::SmallVector<llvm::Value *, 4> FastPaths;
};

/// Clones \p Host, a lowered CPU variant whose pointers still carry their
/// address spaces, into its module as the checked variant (internal
/// linkage: the descriptor reaches it). Loads, stores, atomics and memory
/// intrinsics through global or generic pointers are checked, except those
/// whose every underlying object is the variant's own (an alloca, a
/// variable, the scratch area, the launch's argument slots). Device printf
/// calls its checked entry, which validates the strings `%s` reads
/// (include/cleave/ABI/CpuReportABI.h).
llvm::Function *createCheckedVariant(llvm::Function &Host,
                                     const ThreadIdSites &Sites,
                                     llvm::StringRef Name);

} // namespace cleave

#endif
