//===- InstructionClasses.cpp - What PTX instruction an IR one becomes ----===//
//
// Part of Cleave. The classes of cleave/Analysis/InstructionMix.h
// (docs/analyze.md has the mapping from LLVM IR).
//
//===----------------------------------------------------------------------===//
#include "cleave/Analysis/InstructionMix.h"

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

using namespace llvm;

namespace cleave {

namespace {

enum class Space { Global, Shared, Const, Local, Param };

/// Where a pointer points, from its type or its underlying object: generic
/// pointers that do not come from shared, constant or private memory are
/// taken to be global (kernel arguments, cudaMalloc'ed memory).
Space spaceOf(const Value *Ptr) {
  auto FromAS = [](unsigned AS) -> std::optional<Space> {
    switch (AS) {
    case 1:
      return Space::Global;
    case 3:
      return Space::Shared;
    case 4:
      return Space::Const;
    case 5:
      return Space::Local;
    case 101:
      return Space::Param;
    default:
      return std::nullopt;
    }
  };
  if (auto S = FromAS(Ptr->getType()->getPointerAddressSpace()))
    return *S;
  const Value *Obj = getUnderlyingObject(Ptr, 16);
  if (isa<AllocaInst>(Obj))
    return Space::Local;
  if (auto *A = dyn_cast<Argument>(Obj); A && A->hasByValAttr())
    return Space::Param;
  if (auto *GV = dyn_cast<GlobalVariable>(Obj))
    if (auto S = FromAS(GV->getAddressSpace()))
      return *S;
  if (Obj->getType()->isPointerTy())
    if (auto S = FromAS(Obj->getType()->getPointerAddressSpace()))
      return *S;
  return Space::Global;
}

InstrClass fpClass(Type *T, bool Div) {
  T = T->getScalarType();
  if (T->isDoubleTy())
    return Div ? InstrClass::Fp64Div : InstrClass::Fp64;
  return Div ? InstrClass::Fp32Div : InstrClass::Fp32;
}

InstrClass loadClass(Space S) {
  switch (S) {
  case Space::Shared:
    return InstrClass::SharedLoad;
  case Space::Const:
  case Space::Param:
    return InstrClass::ConstLoad;
  case Space::Local:
    return InstrClass::Local;
  case Space::Global:
    break;
  }
  return InstrClass::GlobalLoad;
}

InstrClass storeClass(Space S) {
  switch (S) {
  case Space::Shared:
    return InstrClass::SharedStore;
  case Space::Local:
  case Space::Param:
    return InstrClass::Local;
  case Space::Const:
  case Space::Global:
    break;
  }
  return InstrClass::GlobalStore;
}

std::optional<InstrClass> classifyCall(const CallBase &CB) {
  const Function *F = CB.getCalledFunction();
  if (!F)
    return InstrClass::Other;
  Type *RT = CB.getType();
  switch (F->getIntrinsicID()) {
  case Intrinsic::not_intrinsic:
    break;
  case Intrinsic::dbg_declare:
  case Intrinsic::dbg_value:
  case Intrinsic::dbg_label:
  case Intrinsic::lifetime_start:
  case Intrinsic::lifetime_end:
  case Intrinsic::assume:
  case Intrinsic::experimental_noalias_scope_decl:
  case Intrinsic::donothing:
  case Intrinsic::invariant_start:
  case Intrinsic::invariant_end:
    return std::nullopt;
  case Intrinsic::fma:
  case Intrinsic::fmuladd:
  case Intrinsic::minnum:
  case Intrinsic::maxnum:
  case Intrinsic::minimum:
  case Intrinsic::maximum:
  case Intrinsic::fabs:
  case Intrinsic::copysign:
  case Intrinsic::floor:
  case Intrinsic::ceil:
  case Intrinsic::trunc:
  case Intrinsic::rint:
  case Intrinsic::nearbyint:
  case Intrinsic::round:
  case Intrinsic::roundeven:
    return fpClass(RT, false);
  case Intrinsic::sqrt:
    return fpClass(RT, true);
  case Intrinsic::exp2:
  case Intrinsic::log2:
  case Intrinsic::sin:
  case Intrinsic::cos:
    return InstrClass::Sfu;
  case Intrinsic::memcpy:
  case Intrinsic::memmove:
  case Intrinsic::memset:
    return InstrClass::Other;
  default: {
    StringRef N = F->getName();
    if (!N.consume_front("llvm.nvvm."))
      return InstrClass::Int; // smin/umax/ctpop/fshl/...: integer ALU
    if (N.starts_with("read.ptx.sreg."))
      return InstrClass::Other;
    if (N.starts_with("barrier") || N.starts_with("bar.sync"))
      return InstrClass::Barrier;
    if (N.starts_with("shfl.") || N.starts_with("vote.") ||
        N.starts_with("match.") || N.starts_with("redux.") ||
        N == "activemask" || N == "bar.warp.sync")
      return InstrClass::Warp;
    if (N.starts_with("ldg.global.") || N.starts_with("ldu.global."))
      return InstrClass::GlobalLoad;
    if (N.starts_with("membar.") || N.starts_with("fence."))
      return InstrClass::Other;
    if (N.starts_with("ex2.approx") || N.starts_with("lg2.approx") ||
        N.starts_with("sin.approx") || N.starts_with("cos.approx") ||
        N.starts_with("rsqrt.approx") || N.starts_with("sqrt.approx") ||
        N.starts_with("tanh.approx") ||
        (N.starts_with("rcp.approx") && !N.contains(".f64")))
      return InstrClass::Sfu;
    if (N.starts_with("div.") || N.starts_with("sqrt.") ||
        N.starts_with("rcp."))
      return fpClass(RT, true);
    if (N.starts_with("f2i") || N.starts_with("f2ui") ||
        N.starts_with("i2f") || N.starts_with("ui2f") ||
        N.starts_with("d2") || N.starts_with("f2ll") ||
        N.starts_with("f2ull") || N.starts_with("ll2") ||
        N.starts_with("ull2") || N.starts_with("f2h") ||
        N.starts_with("f2bf") || N.starts_with("d2f"))
      return InstrClass::Conversion;
    if (RT->isFPOrFPVectorTy())
      return fpClass(RT, false);
    return InstrClass::Int;
  }
  }
  // A call that stayed a call (a __device__ function the frontend did not
  // inline): its blocks are sites of their own.
  return InstrClass::Other;
}

} // namespace

std::optional<InstrClass> classifyInstruction(const Instruction &I) {
  if (isa<PHINode>(I) || isa<AllocaInst>(I) || isa<FreezeInst>(I) ||
      isa<UnreachableInst>(I) || isa<ExtractValueInst>(I) ||
      isa<InsertValueInst>(I) || isa<ExtractElementInst>(I) ||
      isa<InsertElementInst>(I) || isa<ShuffleVectorInst>(I))
    return std::nullopt;
  if (auto *BO = dyn_cast<BinaryOperator>(&I)) {
    if (BO->getType()->isFPOrFPVectorTy())
      return fpClass(BO->getType(), BO->getOpcode() == Instruction::FDiv ||
                                        BO->getOpcode() == Instruction::FRem);
    switch (BO->getOpcode()) {
    case Instruction::SDiv:
    case Instruction::UDiv:
    case Instruction::SRem:
    case Instruction::URem:
      return InstrClass::IntDiv;
    default:
      return InstrClass::Int;
    }
  }
  if (isa<UnaryOperator>(I))
    return fpClass(I.getType(), false);
  if (isa<ICmpInst>(I) || isa<SelectInst>(I))
    return InstrClass::Int;
  if (auto *FC = dyn_cast<FCmpInst>(&I))
    return fpClass(FC->getOperand(0)->getType(), false);
  if (auto *GEP = dyn_cast<GetElementPtrInst>(&I))
    return GEP->hasAllZeroIndices() ? std::nullopt
                                    : std::optional(InstrClass::Int);
  if (auto *C = dyn_cast<CastInst>(&I)) {
    switch (C->getOpcode()) {
    case Instruction::BitCast:
    case Instruction::PtrToInt:
    case Instruction::IntToPtr:
      return std::nullopt;
    case Instruction::AddrSpaceCast: // cvta
    case Instruction::Trunc:
    case Instruction::ZExt:
    case Instruction::SExt:
      return InstrClass::Int;
    default:
      return InstrClass::Conversion;
    }
  }
  if (auto *L = dyn_cast<LoadInst>(&I))
    return loadClass(spaceOf(L->getPointerOperand()));
  if (auto *S = dyn_cast<StoreInst>(&I))
    return storeClass(spaceOf(S->getPointerOperand()));
  if (auto *A = dyn_cast<AtomicRMWInst>(&I))
    return spaceOf(A->getPointerOperand()) == Space::Shared
               ? InstrClass::SharedAtomic
               : InstrClass::GlobalAtomic;
  if (auto *A = dyn_cast<AtomicCmpXchgInst>(&I))
    return spaceOf(A->getPointerOperand()) == Space::Shared
               ? InstrClass::SharedAtomic
               : InstrClass::GlobalAtomic;
  if (isa<FenceInst>(I))
    return InstrClass::Other;
  if (auto *CB = dyn_cast<CallBase>(&I))
    return classifyCall(*CB);
  if (auto *Br = dyn_cast<BranchInst>(&I)) {
    // An unconditional branch to the next block in layout is a fall-through.
    if (Br->isUnconditional() &&
        Br->getSuccessor(0) == Br->getParent()->getNextNode())
      return std::nullopt;
    return InstrClass::Branch;
  }
  if (isa<SwitchInst>(I) || isa<IndirectBrInst>(I))
    return InstrClass::Branch;
  if (isa<ReturnInst>(I))
    return InstrClass::Other;
  return InstrClass::Other;
}


unsigned ptxInstructions(const Instruction &I) {
  if (isa<LoadInst>(I) || isa<StoreInst>(I) || isa<CallBase>(I))
    return 1;
  if (auto *VT = dyn_cast<FixedVectorType>(I.getType()))
    return VT->getNumElements();
  return 1;
}


} // namespace cleave
