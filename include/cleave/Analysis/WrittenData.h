//===- WrittenData.h - Values depending on data a kernel writes -*- C++ -*-===//
//
// Part of Cleave. Splitting and merging need addresses (and the predicates
// that guard stores) to be recomputable from data the kernel never modifies:
// its inputs, scalar arguments and thread/block indices. This finds the
// first reason a value is not: a load from memory the kernel may write, the
// result of an atomic, or a call whose result the analysis cannot see into.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ANALYSIS_WRITTENDATA_H
#define CLEAVE_ANALYSIS_WRITTENDATA_H

#include "cleave/Analysis/ParamRoles.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>

namespace llvm {
class BasicBlock;
class Function;
class Instruction;
class PostDominatorTree;
class Value;
} // namespace llvm

namespace cleave {

/// Walks the backward data slice of V (through arithmetic, casts, GEPs,
/// selects, phis, and the conditions of the branches that choose among phi
/// inputs) inside kernel F. Returns the first instruction of that slice that
/// reads memory F may write (a load whose underlying object F stores to, or
/// may store to, including shared memory), an atomic, or an opaque call; null
/// when V depends only on data F never writes.
const llvm::Instruction *findWrittenDataDependence(const llvm::Value *V,
                                                   const llvm::Function &F);

/// The memory a pointer may address, as far as the IR shows.
enum class PointerSpace {
  Global,   ///< global memory, or generic memory we cannot place
  Shared,   ///< addrspace(3): per-block shared memory
  Private,  ///< allocas and by-value parameter copies
  Constant, ///< addrspace(4), constant globals, kernel parameter space
};

/// The underlying objects of Ptr inside the code of Kernel (Scope is what
/// Kernel reaches, see getReachableFunctions). Beyond llvm's
/// getUnderlyingObjects it follows an argument of a callee to the actual
/// arguments of its call sites in Scope, a call to a defined function to its
/// returned values, a load from a slot (see getSlotLoadsAndStores) to what
/// was stored there, and
/// inttoptr back to the pointer of a ptrtoint. An object that is none of
/// Argument, GlobalVariable or AllocaInst is something the walk could not
/// place: a load (a pointer read from memory), an opaque call, or an integer.
void getKernelUnderlyingObjects(
    const llvm::Value *Ptr, const llvm::Function &Kernel,
    const FunctionSet &Scope,
    llvm::SmallVectorImpl<const llvm::Value *> &Objects);

/// Where Ptr may point; generic pointers are placed by their objects.
PointerSpace getPointerSpace(const llvm::Value *Ptr,
                             const llvm::Function &Kernel,
                             const FunctionSet &Scope);

/// findWrittenDataDependence with the per-kernel facts (what the kernel
/// writes, post-dominator trees) computed once, for callers that ask about
/// many values of one kernel.
class WrittenDataFinder {
public:
  explicit WrittenDataFinder(const llvm::Function &Kernel);
  ~WrittenDataFinder();

  /// See findWrittenDataDependence.
  const llvm::Instruction *find(const llvm::Value *V);

  /// True when the memory Ptr addresses may be written by the kernel.
  bool mayBeWritten(const llvm::Value *Ptr) const;

  const FunctionSet &getScope() const { return Scope; }

private:
  void computeWrittenObjects();
  /// Appends the blocks whose branches BB is control dependent on.
  void appendControllingBlocks(
      const llvm::BasicBlock *BB,
      llvm::SmallVectorImpl<const llvm::BasicBlock *> &Blocks);

  const llvm::Function &Kernel;
  FunctionSet Scope;
  /// Arguments, globals and allocas the kernel writes (or lets escape).
  llvm::SmallPtrSet<const llvm::Value *, 16> WrittenObjects;
  /// Some write lands outside private memory, or somewhere we cannot place:
  /// then memory behind an unplaced pointer may be written.
  bool NonPrivateWrite = false;
  /// Blocks with the branches each block is control dependent on, per
  /// function, built on demand.
  llvm::DenseMap<const llvm::Function *,
                 std::unique_ptr<llvm::PostDominatorTree>>
      PostDomTrees;
  llvm::DenseMap<const llvm::BasicBlock *,
                 llvm::SmallVector<const llvm::BasicBlock *, 4>>
      ControlDeps;
};

} // namespace cleave

#endif
