//===- WarpChain.h - Warp collectives run warp-wide on vectors -*- C++ -*-===//
//
// Part of Cleave. In the CPU variant (CPULower.cpp), a warp collective
// normally splits the thread loop twice: every lane publishes its operand,
// a loop gathers, and another resumes. A run of collectives with only pure
// arithmetic between them (a shuffle-reduction tree, cg::reduce) is instead
// one region that runs once per warp, every value a vector of 32 lanes and
// each shuffle a shufflevector: one loop over the warps instead of two
// thread loops per collective. See docs/cpu-backend.md.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_WARPCHAIN_H
#define CLEAVE_TRANSFORMS_WARPCHAIN_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/IRBuilder.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace llvm {
class AllocaInst;
class BasicBlock;
class CallInst;
class Instruction;
class Value;
} // namespace llvm

namespace cleave {

/// A run [First, Last] of one basic block: First and Last are warp
/// collectives the chain supports, and every instruction between them is
/// either one too or pure arithmetic that can run on vectors of lanes.
struct WarpChain {
  llvm::Instruction *First, *Last;
};

/// The chains among \p SyncCalls, a kernel's synchronizing calls in program
/// order; each supported collective belongs to exactly one chain (a chain of
/// one collective is still a chain).
llvm::SmallVector<WarpChain, 8>
findWarpChains(llvm::ArrayRef<llvm::CallInst *> SyncCalls);

/// Where a chain's per-thread inputs and outputs live: thread t's copy of a
/// value kept in alloca A is at Base + t * Stride.
struct SlotArray {
  llvm::Value *Base;
  uint64_t Stride;
};

/// The values of type \p Ty of the 32 lanes of the warp whose lane 0 is
/// thread \p WarpBase (i64) in \p Slots, for the lanes set in \p Mask (a
/// <32 x i1>; the others read zero).
llvm::Value *loadLanes(llvm::IRBuilder<> &B, llvm::Type *Ty, SlotArray Slots,
                       llvm::Value *WarpBase, llvm::Value *Mask,
                       llvm::Align Alignment);

/// Stores the vector \p Val into the slots of the lanes set in \p Mask.
void storeLanes(llvm::IRBuilder<> &B, llvm::Value *Val, SlotArray Slots,
                llvm::Value *WarpBase, llvm::Value *Mask,
                llvm::Align Alignment);

/// What the widened chain reads from the host function around it.
struct WarpEnv {
  llvm::Value *WarpBase = nullptr; ///< i64: the linear id of lane 0
  llvm::Value *Lanes = nullptr;    ///< i32: lanes that exist (1-32)
  /// <32 x i1>: the lanes that run the chain: they exist and, in guarded
  /// mode, are at the chain's state.
  llvm::Value *Active = nullptr;
  llvm::Value *BlockDim[3] = {}, *GridDim[3] = {}, *BlockIdx[3] = {};
  /// The host value of a kernel argument (block-uniform).
  llvm::function_ref<llvm::Value *(llvm::Value *)> Uniform;
  /// The per-thread slots of an alloca; nullopt when it has none.
  llvm::function_ref<std::optional<SlotArray>(llvm::AllocaInst *)> Slots;
};

/// Why the chain block \p BB (after values that cross blocks were demoted)
/// cannot be widened; nullopt when it can. \p HasSlots says whether an
/// alloca has per-thread slots.
std::optional<std::pair<std::string, const llvm::Instruction *>>
checkWarpChainBlock(llvm::BasicBlock &BB,
                    llvm::function_ref<bool(llvm::AllocaInst *)> HasSlots);

/// Emits, with \p B, the chain block \p BB for one warp: every value as a
/// vector of 32 lanes, inputs loaded from and outputs stored to the
/// per-thread slots of their allocas (for the lanes that exist, and run).
/// \p BB must pass checkWarpChainBlock; it is left unchanged.
void widenWarpChain(llvm::BasicBlock &BB, llvm::IRBuilder<> &B,
                    const WarpEnv &Env);

} // namespace cleave

#endif
