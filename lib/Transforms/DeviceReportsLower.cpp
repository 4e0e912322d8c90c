//===- DeviceReportsLower.cpp - printf and assert in CPU variants --------===//
//
// Part of Cleave. See cleave/Transforms/DeviceReportsLower.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/Transforms/DeviceReportsLower.h"
#include "cleave/ABI/CpuReportABI.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

using namespace llvm;

namespace cleave {

namespace {

/// The size of Clang's printf argument buffer: its alloca's type, 0 for
/// none (a null buffer: a format without arguments), unknown otherwise.
uint64_t argumentBytes(Value *Args, const DataLayout &DL) {
  Args = Args->stripPointerCasts();
  if (isa<ConstantPointerNull>(Args))
    return 0;
  if (auto *A = dyn_cast<AllocaInst>(Args))
    if (std::optional<TypeSize> Size = A->getAllocationSize(DL);
        Size && !Size->isScalable())
      return Size->getFixedValue();
  return CLEAVE_PRINTF_ARGS_UNKNOWN;
}

Value *generic(IRBuilder<> &B, Value *P) {
  return B.CreateAddrSpaceCast(P, B.getPtrTy());
}

void lowerPrintf(CallBase &CB) {
  Module &M = *CB.getModule();
  IRBuilder<> B(&CB);
  FunctionCallee Fn = M.getOrInsertFunction(
      CLEAVE_PRINTF_FUNCTION,
      FunctionType::get(B.getInt32Ty(),
                        {B.getPtrTy(), B.getPtrTy(), B.getInt64Ty()}, false));
  Value *Args = CB.getArgOperand(1);
  CallInst *New =
      B.CreateCall(Fn, {generic(B, CB.getArgOperand(0)), generic(B, Args),
                        B.getInt64(argumentBytes(Args, M.getDataLayout()))});
  New->setDebugLoc(CB.getDebugLoc());
  if (!CB.use_empty())
    CB.replaceAllUsesWith(B.CreateZExtOrTrunc(New, CB.getType()));
  CB.eraseFromParent();
}

void lowerAssert(CallBase &CB) {
  Module &M = *CB.getModule();
  IRBuilder<> B(&CB);
  Type *I32 = B.getInt32Ty(), *Ptr = B.getPtrTy();
  auto *Ty = FunctionType::get(
      B.getVoidTy(),
      {Ptr, Ptr, I32, Ptr, B.getInt64Ty(), I32, I32, I32, I32, I32, I32},
      false);
  FunctionCallee Fn = M.getOrInsertFunction(CLEAVE_ASSERT_FUNCTION, Ty);
  if (auto *F = dyn_cast<Function>(Fn.getCallee())) {
    // It leaves the range of blocks (longjmp): nothing after it runs.
    F->setDoesNotReturn();
    F->setDoesNotThrow();
  }
  SmallVector<Value *, 11> Ops = {
      generic(B, CB.getArgOperand(0)), generic(B, CB.getArgOperand(1)),
      B.CreateZExtOrTrunc(CB.getArgOperand(2), I32),
      generic(B, CB.getArgOperand(3)),
      B.CreateZExtOrTrunc(CB.getArgOperand(4), B.getInt64Ty())};
  for (Intrinsic::ID Id : {Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                           Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                           Intrinsic::nvvm_read_ptx_sreg_ctaid_z,
                           Intrinsic::nvvm_read_ptx_sreg_tid_x,
                           Intrinsic::nvvm_read_ptx_sreg_tid_y,
                           Intrinsic::nvvm_read_ptx_sreg_tid_z})
    Ops.push_back(B.CreateCall(Intrinsic::getDeclaration(&M, Id)));
  CallInst *New = B.CreateCall(Fn, Ops);
  New->setDebugLoc(CB.getDebugLoc());
  New->setDoesNotReturn();
  CB.eraseFromParent();
}

} // namespace

void lowerDeviceReport(CallBase &CB) {
  if (CB.getCalledFunction()->getName() == "vprintf")
    lowerPrintf(CB);
  else
    lowerAssert(CB);
}

} // namespace cleave
