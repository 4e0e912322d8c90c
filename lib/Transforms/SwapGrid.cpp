//===- SwapGrid.cpp - Twins of 2-D kernels with x and y swapped ----------===//
//
// Part of Cleave. See SwapGrid.h. The twin is a plain clone whose calls of
// the ctaid/nctaid x and y intrinsics are exchanged; nothing else changes,
// so it is built before every other Cleave pass and gets its own variants.
//
//===----------------------------------------------------------------------===//
#include "cleave/Transforms/SwapGrid.h"

#include "cleave/Analysis/HeaderAsm.h"
#include "cleave/Analysis/KernelLegality.h"
#include "cleave/Transforms/PartitionReady.h"
#include "cleave/Support/KernelInfo.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/OptimizationRemarkEmitter.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Cloning.h"

using namespace llvm;

namespace cleave {

static constexpr const char *PassName = "cleave-swap-grid";

std::string swappedKernelName(StringRef Kernel) {
  return ("__cleave_sw_" + Kernel).str();
}

namespace {

/// The intrinsic a read becomes in the twin, or not_intrinsic for a read
/// that stays (along z) and for any other instruction.
Intrinsic::ID swappedRead(Intrinsic::ID ID) {
  switch (ID) {
  case Intrinsic::nvvm_read_ptx_sreg_ctaid_x:
    return Intrinsic::nvvm_read_ptx_sreg_ctaid_y;
  case Intrinsic::nvvm_read_ptx_sreg_ctaid_y:
    return Intrinsic::nvvm_read_ptx_sreg_ctaid_x;
  case Intrinsic::nvvm_read_ptx_sreg_nctaid_x:
    return Intrinsic::nvvm_read_ptx_sreg_nctaid_y;
  case Intrinsic::nvvm_read_ptx_sreg_nctaid_y:
    return Intrinsic::nvvm_read_ptx_sreg_nctaid_x;
  default:
    return Intrinsic::not_intrinsic;
  }
}

bool isZRead(Intrinsic::ID ID) {
  return ID == Intrinsic::nvvm_read_ptx_sreg_ctaid_z ||
         ID == Intrinsic::nvvm_read_ptx_sreg_nctaid_z;
}

/// What keeps K from having a twin, with the instruction it concerns (null
/// for the kernel as a whole); an empty reason when a twin can be made.
struct Refusal {
  std::string Why;
  const Instruction *At = nullptr;
};

/// Whether an nvvm.annotations entry of K sets cluster dimensions: the
/// twin's grid would have to be a multiple of them swapped.
bool hasClusterAnnotation(const Function &K) {
  const NamedMDNode *Annotations =
      K.getParent()->getNamedMetadata("nvvm.annotations");
  if (!Annotations)
    return false;
  for (const MDNode *Op : Annotations->operands()) {
    auto *FnMD = Op->getNumOperands()
                     ? dyn_cast_or_null<ValueAsMetadata>(Op->getOperand(0).get())
                     : nullptr;
    if (!FnMD || FnMD->getValue() != &K)
      continue;
    for (unsigned I = 1; I < Op->getNumOperands(); I += 2)
      if (auto *Key = dyn_cast_or_null<MDString>(Op->getOperand(I).get()))
        if (Key->getString().starts_with("cluster_dim") ||
            Key->getString() == "maxclusterrank")
          return true;
  }
  return false;
}

Refusal checkSwappable(const Function &K,
                       const SmallPtrSet<const Function *, 8> &Readers) {
  if (hasClusterAnnotation(K))
    return {"it is launched in clusters of blocks", nullptr};
  bool ReadsX = false;
  for (const Instruction &I : instructions(K)) {
    const auto *CB = dyn_cast<CallBase>(&I);
    if (!CB)
      continue;
    if (const auto *II = dyn_cast<IntrinsicInst>(CB)) {
      Intrinsic::ID ID = II->getIntrinsicID();
      if (isZRead(ID))
        return {"it reads the block index or grid size along z", &I};
      ReadsX |= ID == Intrinsic::nvvm_read_ptx_sreg_ctaid_x ||
                ID == Intrinsic::nvvm_read_ptx_sreg_nctaid_x;
      continue;
    }
    const Function *Callee = CB->getCalledFunction();
    if (Callee && Readers.contains(Callee))
      return {"a function it calls reads the block index", &I};
    if (!Callee && !CB->isInlineAsm() && !Readers.empty())
      return {"an indirect call may read the block index", &I};
    // The headers' idioms read lane registers only.
    if (CB->isInlineAsm() && !isDeadAsm(*CB) && !matchHeaderAsm(*CB))
      return {"inline assembly may read the block index", &I};
  }
  if (!ReadsX)
    return {"it does not read the block index along x", nullptr};
  return {};
}

bool readsYBlockIndex(const Function &K) {
  for (const Instruction &I : instructions(K))
    if (const auto *II = dyn_cast<IntrinsicInst>(&I))
      if (II->getIntrinsicID() == Intrinsic::nvvm_read_ptx_sreg_ctaid_y)
        return true;
  return false;
}

Function *makeTwin(Function &K, const std::string &Name) {
  Module &M = *K.getParent();
  Function *Twin = Function::Create(K.getFunctionType(),
                                    GlobalValue::ExternalLinkage,
                                    K.getAddressSpace(), Name, &M);
  ValueToValueMapTy VMap;
  for (Argument &A : K.args()) {
    Argument *NewA = Twin->getArg(A.getArgNo());
    NewA->setName(A.getName());
    VMap[&A] = NewA;
  }
  SmallVector<ReturnInst *, 4> Returns;
  // LocalChangesOnly: same module, same compile unit; the twin gets a
  // DISubprogram of its own.
  CloneFunctionInto(Twin, &K, VMap, CloneFunctionChangeType::LocalChangesOnly,
                    Returns);
  // The runtime looks the twin up by name, whatever K's linkage.
  Twin->setLinkage(GlobalValue::ExternalLinkage);
  Twin->setVisibility(GlobalValue::DefaultVisibility);
  if (DISubprogram *SP = Twin->getSubprogram())
    if (SP != K.getSubprogram() && !SP->getLinkageName().empty())
      SP->replaceLinkageName(MDString::get(M.getContext(), Twin->getName()));
  Twin->addFnAttr(SwappedFromAttr, K.getName());
  markAsKernelLike(*Twin, K);

  // Exchange the reads. Range metadata on a call stays true: the twin is
  // launched with grid (gy, gx), so each swapped read returns the value
  // the original read returned in the original launch.
  SmallVector<std::pair<IntrinsicInst *, Intrinsic::ID>, 8> Reads;
  for (Instruction &I : instructions(*Twin))
    if (auto *II = dyn_cast<IntrinsicInst>(&I))
      if (Intrinsic::ID To = swappedRead(II->getIntrinsicID());
          To != Intrinsic::not_intrinsic)
        Reads.push_back({II, To});
  for (auto [II, To] : Reads)
    II->setCalledFunction(Intrinsic::getDeclaration(&M, To));
  return Twin;
}

} // namespace

PreservedAnalyses SwapGridPass::run(Module &M, ModuleAnalysisManager &MAM) {
  FunctionAnalysisManager &FAM =
      MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
  SmallPtrSet<const Function *, 8> Readers = getBlockIndexReaders(M);
  bool Changed = false;
  for (Function *K : getKernels(M)) {
    // Kernels that do not read blockIdx.y (1-D kernels) have nothing to
    // swap and get no remark.
    if (isSwappedTwin(*K) || !readsYBlockIndex(*K))
      continue;
    std::string Name = swappedKernelName(K->getName());
    if (M.getFunction(Name))
      continue; // Made by an earlier run of the pass.
    auto &ORE = FAM.getResult<OptimizationRemarkEmitterAnalysis>(*K);
    Refusal R = checkSwappable(*K, Readers);
    if (R.Why.empty() && !FAM.getResult<KernelLegalityAnalysis>(*K).canSplit())
      R.Why = "it is not split (cleave-partition says why)";
    if (!R.Why.empty()) {
      ORE.emit([&] {
        OptimizationRemarkMissed Rm =
            R.At ? OptimizationRemarkMissed(PassName, "NotSwapped",
                                            userLocation(*R.At),
                                            R.At->getParent())
                 : OptimizationRemarkMissed(PassName, "NotSwapped", K);
        return Rm << "kernel '" << displayName(*K)
                  << "' has no twin with x and y swapped: " << R.Why;
      });
      continue;
    }
    Function *Twin = makeTwin(*K, Name);
    Changed = true;
    ORE.emit([&] {
      return OptimizationRemark(PassName, "SwappedTwin", K)
             << "kernel '" << displayName(*K) << "': created '"
             << Twin->getName() << "' (block index and grid size x <-> y)";
    });
  }
  return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace cleave
