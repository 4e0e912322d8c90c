//===- KernelInfo.cpp - What makes a function a GPU kernel ---------------===//
#include "cleave/Support/KernelInfo.h"

#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/CallingConv.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instruction.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace cleave {

static bool hasKernelAnnotation(const Function &F) {
  const NamedMDNode *Annotations =
      F.getParent()->getNamedMetadata("nvvm.annotations");
  if (!Annotations)
    return false;
  for (const MDNode *Op : Annotations->operands()) {
    if (Op->getNumOperands() < 3)
      continue;
    auto *FnMD = dyn_cast_or_null<ValueAsMetadata>(Op->getOperand(0).get());
    if (!FnMD || FnMD->getValue() != &F)
      continue;
    // Entries are (function, key, value) pairs repeated along the node.
    for (unsigned I = 1; I + 1 < Op->getNumOperands(); I += 2) {
      auto *Key = dyn_cast_or_null<MDString>(Op->getOperand(I).get());
      if (Key && Key->getString() == "kernel")
        return true;
    }
  }
  return false;
}

bool isKernel(const Function &F) {
  if (F.isDeclaration() || isCleaveVariant(F))
    return false;
  CallingConv::ID CC = F.getCallingConv();
  if (CC == CallingConv::PTX_Kernel || CC == CallingConv::SPIR_KERNEL)
    return true;
  return hasKernelAnnotation(F);
}

bool isCleaveVariant(const Function &F) { return F.hasFnAttribute(VariantAttr); }

bool isSwappedTwin(const Function &F) {
  return F.hasFnAttribute(SwappedFromAttr);
}

SmallVector<Function *, 8> getKernels(Module &M) {
  SmallVector<Function *, 8> Kernels;
  for (Function &F : M)
    if (isKernel(F))
      Kernels.push_back(&F);
  return Kernels;
}

void markAsKernelLike(Function &NewF, const Function &Original) {
  NewF.setCallingConv(Original.getCallingConv());
  Module &M = *NewF.getParent();
  NamedMDNode *Annotations = M.getNamedMetadata("nvvm.annotations");
  if (!Annotations)
    return;
  LLVMContext &Ctx = M.getContext();
  SmallVector<MDNode *, 4> Copies;
  for (MDNode *Op : Annotations->operands()) {
    if (Op->getNumOperands() == 0)
      continue;
    auto *FnMD = dyn_cast_or_null<ValueAsMetadata>(Op->getOperand(0).get());
    if (!FnMD || FnMD->getValue() != &Original)
      continue;
    SmallVector<Metadata *, 4> Ops(Op->op_begin(), Op->op_end());
    Ops[0] = ValueAsMetadata::get(&NewF);
    Copies.push_back(MDNode::get(Ctx, Ops));
  }
  for (MDNode *Copy : Copies)
    Annotations->addOperand(Copy);
}

std::string partitionVariantName(StringRef Kernel) {
  return ("__cleave_pr_" + Kernel).str();
}

std::string mergeVariantName(StringRef Kernel) {
  return ("__cleave_merge_" + Kernel).str();
}

std::string displayName(const Function &F) {
  if (isSwappedTwin(F))
    return llvm::demangle(
               F.getFnAttribute(SwappedFromAttr).getValueAsString().str()) +
           " [x<->y]";
  return llvm::demangle(F.getName().str());
}

// After inlining the innermost location is often inside a CUDA header
// (atomicAdd, __shfl_down_sync); users need the line of their own code that
// the header function was inlined into.
static const DILocation *outermostLocation(const Instruction &I) {
  const DILocation *Loc = I.getDebugLoc().get();
  if (!Loc)
    return nullptr;
  while (const DILocation *Outer = Loc->getInlinedAt())
    Loc = Outer;
  return Loc;
}

DiagnosticLocation userLocation(const Instruction &I) {
  if (const DILocation *Loc = outermostLocation(I))
    return DiagnosticLocation(DebugLoc(const_cast<DILocation *>(Loc)));
  return DiagnosticLocation();
}

void printLocation(raw_ostream &OS, const Instruction &I) {
  const DILocation *Loc = outermostLocation(I);
  if (!Loc)
    return;
  OS << " at " << Loc->getFilename() << ":" << Loc->getLine() << ":"
     << Loc->getColumn();
}

} // namespace cleave
