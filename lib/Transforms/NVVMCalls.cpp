//===- NVVMCalls.cpp - What an NVVM call is, for the CPU lowering ---------===//
//
// Part of Cleave. See cleave/Transforms/NVVMCalls.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/Transforms/NVVMCalls.h"
#include "cleave/Analysis/DeviceReports.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InstrTypes.h"

#include <cstring>

using namespace llvm;

namespace cleave {

CallKind classifyCall(const CallBase &CB) {
  const Function *F = CB.getCalledFunction();
  if (!F)
    return CallKind::Unsupported;
  StringRef N = F->getName();
  if (isDeviceReportFunction(*F))
    return CallKind::Report;
  if (!N.consume_front("llvm.nvvm."))
    return F->isIntrinsic() ? CallKind::Ordinary : CallKind::Unsupported;
  if (N.consume_front("read.ptx.sreg."))
    return StringSwitch<CallKind>(N)
        .Cases("tid.x", "tid.y", "tid.z", "ntid.x", "ntid.y", "ntid.z",
               CallKind::SReg)
        .Cases("ctaid.x", "ctaid.y", "ctaid.z", "nctaid.x", "nctaid.y",
               "nctaid.z", CallKind::SReg)
        .Cases("laneid", "warpsize", "lanemask.eq", "lanemask.le",
               "lanemask.lt", "lanemask.ge", "lanemask.gt", CallKind::SReg)
        .Default(CallKind::Unsupported);
  if (N == "barrier0")
    return CallKind::Barrier;
  if (N == "barrier0.popc" || N == "barrier0.and" || N == "barrier0.or")
    return CallKind::BarrierRed;
  if (N == "match.any.sync.i32" || N == "match.any.sync.i64" ||
      N == "match.all.sync.i32p" || N == "match.all.sync.i64p")
    return CallKind::Match;
  if (N.starts_with("redux.sync.") &&
      StringSwitch<bool>(N.drop_front(strlen("redux.sync.")))
          .Cases("add", "min", "max", "umin", "umax", "and", "or", "xor", true)
          .Default(false))
    return CallKind::Redux;
  if (N == "barrier.sync" || N == "barrier.sync.aligned" || N == "barrier.n" ||
      N == "bar.sync") {
    // Only barrier 0 is __syncthreads(); named barriers with other ids
    // synchronize subsets of warps.
    auto *Id = dyn_cast<ConstantInt>(CB.getArgOperand(0));
    return Id && Id->isZero() ? CallKind::Barrier : CallKind::Unsupported;
  }
  if (N == "bar.warp.sync")
    return CallKind::SyncWarp;
  if (N.starts_with("shfl.sync.") &&
      !N.starts_with("shfl.sync.idx.i32p.") /* never produced */)
    return CallKind::Shfl;
  if (N == "vote.any.sync" || N == "vote.all.sync" || N == "vote.uni.sync" ||
      N == "vote.ballot.sync")
    return CallKind::Vote;
  if (N == "activemask")
    return CallKind::ActiveMask;
  if (N.starts_with("membar.") || N.starts_with("fence."))
    return CallKind::Fence;
  return CallKind::Math; // decided by lowerNVVMMath
}

} // namespace cleave
