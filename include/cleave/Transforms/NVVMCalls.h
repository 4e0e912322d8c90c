//===- NVVMCalls.h - What an NVVM call is, for the CPU lowering -*- C++ -*-===//
//
// Part of Cleave. The CPU lowering (CPULower.cpp) and its warp chains
// (WarpChain.cpp) classify the calls of a kernel the same way.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_NVVMCALLS_H
#define CLEAVE_TRANSFORMS_NVVMCALLS_H

namespace llvm {
class CallBase;
} // namespace llvm

namespace cleave {

enum class CallKind {
  Ordinary,   ///< generic LLVM intrinsic: kept as is
  SReg,       ///< special register read
  Barrier,    ///< block-wide barrier
  SyncWarp,   ///< __syncwarp
  Shfl,       ///< shfl.sync.{idx,up,down,bfly}
  Vote,       ///< vote.{any,all,uni,ballot}.sync
  ActiveMask, ///< activemask
  Match,      ///< match.{any,all}.sync.{i32,i64}
  Redux,      ///< redux.sync.{add,min,max,umin,umax,and,or,xor}
  BarrierRed, ///< barrier0.{popc,and,or}: __syncthreads_count/and/or
  Fence,      ///< memory fence: a no-op order on one host thread's view
  Math,       ///< NVVM math with a host equivalent
  Report,     ///< device printf or assert (vprintf, __assertfail)
  Unsupported,
};

/// What the call \p CB is to the CPU lowering.
CallKind classifyCall(const llvm::CallBase &CB);

} // namespace cleave

#endif
