//===- PartitionReady.cpp - The partition-ready / sliced variant ---------===//
//
// Part of Cleave. One transformation serves SKMD partitions (digest 002
// §8.2) and Kernelet slices (digest 003 §3.2, §7.3): the clone is launched as
// a 1-D grid of `count` blocks and recovers the original block index from
// first + ctaid.x; gridDim reads see the original grid. Unlike SKMD's
// prologue (§3.2) there is no early exit: only the assigned blocks run, so
// barriers stay safe and no idle block is scheduled.
//
//===----------------------------------------------------------------------===//
#include "cleave/Transforms/PartitionReady.h"

#include "cleave/Analysis/KernelLegality.h"
#include "cleave/Analysis/VariantRefusals.h"
#include "cleave/Support/KernelInfo.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/OptimizationRemarkEmitter.h"
#include "llvm/IR/Attributes.h"
#include "llvm/IR/ConstantRange.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <array>
#include <optional>

using namespace llvm;

namespace cleave {

static constexpr const char *PassName = "cleave-partition";


namespace {

/// A read of a block-index (ctaid) or grid-size (nctaid) special register.
struct SRegRead {
  bool IsGridSize;
  unsigned Dim; // 0 = x, 1 = y, 2 = z
};

/// The reads of ctaid and nctaid in one function, by dimension.
struct BlockIndexReads {
  std::array<SmallVector<CallInst *, 2>, 3> Ctaid;
  std::array<SmallVector<CallInst *, 2>, 3> Nctaid;

  bool readsCtaid() const {
    return any_of(Ctaid, [](const auto &V) { return !V.empty(); });
  }
};

} // namespace

static std::optional<SRegRead> classifySRegRead(const Instruction &I) {
  const auto *II = dyn_cast<IntrinsicInst>(&I);
  if (!II)
    return std::nullopt;
  switch (II->getIntrinsicID()) {
  case Intrinsic::nvvm_read_ptx_sreg_ctaid_x:
    return SRegRead{false, 0};
  case Intrinsic::nvvm_read_ptx_sreg_ctaid_y:
    return SRegRead{false, 1};
  case Intrinsic::nvvm_read_ptx_sreg_ctaid_z:
    return SRegRead{false, 2};
  case Intrinsic::nvvm_read_ptx_sreg_nctaid_x:
    return SRegRead{true, 0};
  case Intrinsic::nvvm_read_ptx_sreg_nctaid_y:
    return SRegRead{true, 1};
  case Intrinsic::nvvm_read_ptx_sreg_nctaid_z:
    return SRegRead{true, 2};
  default:
    return std::nullopt;
  }
}

static BlockIndexReads collectBlockIndexReads(Function &F) {
  BlockIndexReads Reads;
  for (Instruction &I : instructions(F))
    if (std::optional<SRegRead> R = classifySRegRead(I))
      (R->IsGridSize ? Reads.Nctaid : Reads.Ctaid)[R->Dim].push_back(
          cast<CallInst>(&I));
  return Reads;
}

/// A call into one of these from a clone must be inlined so that its reads
/// can be remapped: the callee is shared with the original kernel.
SmallPtrSet<const Function *, 8> getBlockIndexReaders(const Module &M) {
  SmallPtrSet<const Function *, 8> Readers;
  for (const Function &F : M)
    if (any_of(instructions(F),
               [](const Instruction &I) { return classifySRegRead(I); }))
      Readers.insert(&F);
  bool Grew = true;
  while (Grew) {
    Grew = false;
    for (const Function &F : M) {
      if (F.isDeclaration() || Readers.contains(&F))
        continue;
      for (const Instruction &I : instructions(F)) {
        const auto *CB = dyn_cast<CallBase>(&I);
        const Function *Callee = CB ? CB->getCalledFunction() : nullptr;
        if (Callee && Readers.contains(Callee)) {
          Readers.insert(&F);
          Grew = true;
          break;
        }
      }
    }
  }
  return Readers;
}

/// True when Root can reach itself through direct calls among Readers.
static bool isRecursiveReader(const Function &Root,
                              const SmallPtrSet<const Function *, 8> &Readers) {
  SmallVector<const Function *, 8> Worklist{&Root};
  SmallPtrSet<const Function *, 8> Seen;
  while (!Worklist.empty()) {
    const Function *F = Worklist.pop_back_val();
    for (const Instruction &I : instructions(*F)) {
      const auto *CB = dyn_cast<CallBase>(&I);
      const Function *Callee = CB ? CB->getCalledFunction() : nullptr;
      if (!Callee || !Readers.contains(Callee))
        continue;
      if (Callee == &Root)
        return true;
      if (Seen.insert(Callee).second)
        Worklist.push_back(Callee);
    }
  }
  return false;
}

const Instruction *findUnremappableCall(const Function &Kernel) {
  const Module &M = *Kernel.getParent();
  SmallPtrSet<const Function *, 8> Readers = getBlockIndexReaders(M);
  bool AddressTakenReader = any_of(Readers, [](const Function *F) {
    return F->hasAddressTaken(/*PutOffender=*/nullptr,
                              /*IgnoreCallbackUses=*/false,
                              /*IgnoreAssumeLikeCalls=*/true,
                              /*IngoreLLVMUsed=*/true);
  });

  // Walk the code the clone will contain once readers are inlined: Kernel
  // and, transitively, the readers it calls.
  SmallVector<const Function *, 8> Worklist{&Kernel};
  SmallPtrSet<const Function *, 8> Seen{&Kernel};
  while (!Worklist.empty()) {
    const Function *F = Worklist.pop_back_val();
    for (const Instruction &I : instructions(*F)) {
      const auto *CB = dyn_cast<CallBase>(&I);
      if (!CB || CB->isInlineAsm())
        continue;
      const Function *Callee = CB->getCalledFunction();
      if (!Callee) {
        // An indirect call may land in a function that reads the block
        // index, and that read would see the launch's 1-D grid.
        if (AddressTakenReader)
          return CB;
        continue;
      }
      if (!Readers.contains(Callee) || Callee->isDeclaration())
        continue;
      if (isRecursiveReader(*Callee, Readers))
        return CB;
      if (Seen.insert(Callee).second)
        Worklist.push_back(Callee);
    }
  }
  return nullptr;
}

/// Inlines every call of F into a function that reads the block index, so
/// that all reads are F's own. Terminates because findUnremappableCall ruled
/// out recursion among those functions.
static bool inlineBlockIndexReaders(Function &F) {
  SmallPtrSet<const Function *, 8> Readers =
      getBlockIndexReaders(*F.getParent());
  Readers.erase(&F);
  for (;;) {
    CallBase *Call = nullptr;
    for (Instruction &I : instructions(F)) {
      auto *CB = dyn_cast<CallBase>(&I);
      const Function *Callee = CB ? CB->getCalledFunction() : nullptr;
      if (Callee && !Callee->isDeclaration() && Readers.contains(Callee)) {
        Call = CB;
        break;
      }
    }
    if (!Call)
      return true;
    InlineFunctionInfo IFI;
    if (!InlineFunction(*Call, IFI).isSuccess())
      return false;
  }
}

//===----------------------------------------------------------------------===//
// OpenCL argument metadata
//===----------------------------------------------------------------------===//

/// The per-argument metadata clang attaches to OpenCL kernels. Runtimes that
/// reflect on kernel arguments expect one entry per parameter, so the clone
/// gets entries for the parameters it adds.
static constexpr const char *KernelArgMDKinds[] = {
    "kernel_arg_addr_space", "kernel_arg_access_qual", "kernel_arg_type",
    "kernel_arg_base_type",  "kernel_arg_type_qual",   "kernel_arg_name"};

static StringRef getOpenCLTypeName(Type *Ty) {
  if (Ty->isPointerTy())
    return "void*";
  switch (Ty->getIntegerBitWidth()) {
  case 8:
    return "uchar";
  case 16:
    return "ushort";
  case 32:
    return "uint";
  default:
    return "ulong";
  }
}

static Metadata *describeNewArg(LLVMContext &Ctx, StringRef Kind, Type *Ty,
                                StringRef Name) {
  if (Kind == "kernel_arg_addr_space") {
    unsigned AS = Ty->isPointerTy() ? Ty->getPointerAddressSpace() : 0;
    return ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(Ctx), AS));
  }
  if (Kind == "kernel_arg_access_qual")
    return MDString::get(Ctx, "none");
  if (Kind == "kernel_arg_type" || Kind == "kernel_arg_base_type")
    return MDString::get(Ctx, getOpenCLTypeName(Ty));
  if (Kind == "kernel_arg_name")
    return MDString::get(Ctx, Name);
  return MDString::get(Ctx, ""); // kernel_arg_type_qual
}

static void extendKernelArgMetadata(Function &NewF, const Function &Kernel,
                                    ArrayRef<ExtraParam> Extra) {
  LLVMContext &Ctx = NewF.getContext();
  unsigned NumOld = Kernel.arg_size();
  for (const char *Kind : KernelArgMDKinds) {
    MDNode *Old = Kernel.getMetadata(Kind);
    if (!Old)
      continue;
    if (Old->getNumOperands() != NumOld) {
      // Malformed to begin with; do not pretend to know what it meant.
      NewF.setMetadata(Kind, nullptr);
      continue;
    }
    SmallVector<Metadata *, 16> Ops(Old->op_begin(), Old->op_end());
    for (const ExtraParam &P : Extra) {
      if (P.Mirrors >= 0 && StringRef(Kind) != "kernel_arg_name")
        Ops.push_back(Old->getOperand(P.Mirrors));
      else
        Ops.push_back(describeNewArg(Ctx, Kind, P.Ty, P.Name));
    }
    for (unsigned I = 0; I < NumPartitionParams; ++I) {
      Argument *A = NewF.getArg(NewF.arg_size() - NumPartitionParams + I);
      Ops.push_back(describeNewArg(Ctx, Kind, A->getType(), A->getName()));
    }
    NewF.setMetadata(Kind, MDNode::get(Ctx, Ops));
  }
}

//===----------------------------------------------------------------------===//
// Block-index decode
//===----------------------------------------------------------------------===//

/// Moves the static allocas of the entry block in front of its first other
/// instruction, which it returns: the decode goes there, after them.
static Instruction *gatherStaticAllocas(BasicBlock &Entry) {
  SmallVector<AllocaInst *, 8> Allocas;
  Instruction *FirstOther = nullptr;
  for (Instruction &I : Entry) {
    auto *AI = dyn_cast<AllocaInst>(&I);
    if (AI && AI->isStaticAlloca()) {
      if (FirstOther)
        Allocas.push_back(AI);
    } else if (!FirstOther) {
      FirstOther = &I;
    }
  }
  for (AllocaInst *AI : Allocas)
    AI->moveBefore(FirstOther);
  return FirstOther;
}

/// Emits Q = N / D for the divisor D described by the FastDivisor
/// parameters (cleave/rt/PartitionParams.h, where the range is proven):
/// umulhi(N + Inc, Magic) >> Shift, exact for every N <= 2^32 - 2. The high
/// half of the 64-bit product is what NVPTX selects as one mul.hi.u32.
static Value *emitFastDivide(IRBuilder<> &B, Value *N, Value *Magic,
                             Value *Shift, Value *Inc, const Twine &Name) {
  Type *I64 = B.getInt64Ty();
  Value *Biased = B.CreateAdd(N, Inc, Name + ".n", /*HasNUW=*/true);
  Value *Product = B.CreateMul(B.CreateZExt(Biased, I64, Name + ".n64"),
                               B.CreateZExt(Magic, I64, Name + ".m64"),
                               Name + ".prod", /*HasNUW=*/true);
  Value *High = B.CreateTrunc(B.CreateLShr(Product, 32, Name + ".prod.hi"),
                              B.getInt32Ty(), Name + ".hi");
  return B.CreateLShr(High, Shift, Name);
}

/// Tells later IR passes what the original's range attributes on the ctaid
/// reads told them: CUDA's limits on blockIdx (the backend ignores assumes;
/// the code the pass clones was optimized with these facts already, and the
/// flags they justified stay valid because the decode is exact).
static void assumeBelow(IRBuilder<> &B, Value *V, uint64_t Bound,
                        const Twine &Name) {
  Value *InRange = B.CreateICmpULT(
      V, ConstantInt::get(V->getType(), Bound), Name);
  B.CreateAssumption(InRange);
}

/// Decodes the original block index of the running block at the start of
/// F's entry block, for the dimensions in Need, from the partition
/// parameters P (in PartitionParam order, docs/transforms.md):
///   n1 = ctaid.x + first.x             q1 = n1 / gx (FastDivisor x)
///   bx = n1 - q1 * gx
///   n2 = q1 + first.y                  q2 = n2 / gy (FastDivisor y)
///   by = n2 - q2 * gy                  bz = q2 + first.z
/// Straight-line 32-bit code, no branch and no division: one mul.hi, a
/// shift and a multiply-add per dimension, on values that are the same for
/// every thread of the block (ptxas puts it on the uniform datapath). A
/// kernel that reads only blockIdx.x stops after bx; one that reads no
/// blockIdx.x skips its remainder. Branching around the divisions for 1-D
/// and 2-D grids (as the previous decode did) measured slower on an H100
/// (transpose +8.2% against +4.0% without; bench/results/).
static std::array<Value *, 3> emitDecode(Function &F, ArrayRef<Argument *> P,
                                         const std::array<bool, 3> &Need) {
  LLVMContext &Ctx = F.getContext();
  BasicBlock &Entry = F.getEntryBlock();
  IRBuilder<> B(gatherStaticAllocas(Entry));
  // Compiler-generated code: line 0 in the kernel's scope keeps the
  // location valid without pretending to be a source line.
  if (DISubprogram *SP = F.getSubprogram())
    B.SetCurrentDebugLocation(DILocation::get(Ctx, 0, 0, SP));

  // The launch is a 1-D grid of at most 2^31 - 1 blocks, so the launched
  // ctaid.x has the range CUDA gives every ctaid.x.
  CallInst *Launched = B.CreateIntrinsic(
      Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {}, {}, nullptr, "cleave.ctaid");
  Launched->addRetAttr(Attribute::get(
      Ctx, Attribute::Range,
      ConstantRange(APInt(32, 0), APInt(32, uint64_t(1) << 31) - 1)));

  std::array<Value *, 3> Idx = {nullptr, nullptr, nullptr};
  // n1 <= 2^32 - 4 (count and gx are below 2^31): no unsigned wrap.
  Value *N1 = B.CreateAdd(Launched, P[pp::FirstX], "cleave.n1",
                          /*HasNUW=*/true);
  Value *Q1 = emitFastDivide(B, N1, P[pp::MagicX], P[pp::ShiftX], P[pp::IncX],
                             "cleave.q1");
  if (Need[0]) {
    Idx[0] = B.CreateNUWSub(
        N1, B.CreateNUWMul(Q1, P[pp::GridX], "cleave.q1.gx"), "cleave.bx");
    assumeBelow(B, Idx[0], (uint64_t(1) << 31) - 1, "cleave.bx.range");
  }
  if (Need[1] || Need[2]) {
    // n2 <= linear / gx < gy * gz < 2^32.
    Value *N2 = B.CreateAdd(Q1, P[pp::FirstY], "cleave.n2", /*HasNUW=*/true);
    Value *Q2 = emitFastDivide(B, N2, P[pp::MagicY], P[pp::ShiftY],
                               P[pp::IncY], "cleave.q2");
    if (Need[1]) {
      Idx[1] = B.CreateNUWSub(
          N2, B.CreateNUWMul(Q2, P[pp::GridY], "cleave.q2.gy"), "cleave.by");
      assumeBelow(B, Idx[1], 65535, "cleave.by.range");
    }
    if (Need[2]) {
      Idx[2] = B.CreateAdd(Q2, P[pp::FirstZ], "cleave.bz", /*HasNUW=*/true,
                           /*HasNSW=*/true);
      assumeBelow(B, Idx[2], 65535, "cleave.bz.range");
    }
  }
  return Idx;
}

/// Rewrites every ctaid/nctaid read of F (a clone whose last
/// NumPartitionParams arguments are the partition parameters).
static void remapBlockIndexReads(Function &F) {
  BlockIndexReads Reads = collectBlockIndexReads(F);
  unsigned Base = F.arg_size() - NumPartitionParams;
  SmallVector<Argument *, NumPartitionParams> P;
  for (unsigned I = 0; I < NumPartitionParams; ++I)
    P.push_back(F.getArg(Base + I));

  std::array<Value *, 3> Idx = {nullptr, nullptr, nullptr};
  if (Reads.readsCtaid()) {
    std::array<bool, 3> Need;
    for (unsigned D = 0; D < 3; ++D)
      Need[D] = !Reads.Ctaid[D].empty();
    Idx = emitDecode(F, P, Need);
  }
  for (unsigned D = 0; D < 3; ++D) {
    for (CallInst *Call : Reads.Ctaid[D]) {
      Call->replaceAllUsesWith(Idx[D]);
      Call->eraseFromParent();
    }
    for (CallInst *Call : Reads.Nctaid[D]) {
      Call->replaceAllUsesWith(P[pp::GridX + D]);
      Call->eraseFromParent();
    }
  }
}

//===----------------------------------------------------------------------===//
// Cloning
//===----------------------------------------------------------------------===//

Function *clonePartitioned(Function &Kernel, const Twine &Name,
                           ArrayRef<Type *> ExtraParams) {
  SmallVector<ExtraParam, 4> Extra;
  for (Type *Ty : ExtraParams)
    Extra.push_back({Ty, "", -1});
  return clonePartitioned(Kernel, Name, Extra, nullptr);
}

Function *clonePartitioned(Function &Kernel, const Twine &Name,
                           ArrayRef<ExtraParam> ExtraParams,
                           ValueToValueMapTy *VMapOut) {
  if (findUnremappableCall(Kernel))
    return nullptr;
  Module &M = *Kernel.getParent();
  LLVMContext &Ctx = M.getContext();
  Type *I32 = Type::getInt32Ty(Ctx);

  FunctionType *OldTy = Kernel.getFunctionType();
  SmallVector<Type *, 16> Params(OldTy->params());
  for (const ExtraParam &P : ExtraParams)
    Params.push_back(P.Ty);
  Params.append(NumPartitionParams, I32);
  auto *NewTy =
      FunctionType::get(OldTy->getReturnType(), Params, OldTy->isVarArg());
  Function *NewF = Function::Create(NewTy, GlobalValue::ExternalLinkage,
                                    Kernel.getAddressSpace(), Name, &M);

  ValueToValueMapTy LocalVMap;
  ValueToValueMapTy &VMap = VMapOut ? *VMapOut : LocalVMap;
  for (Argument &A : Kernel.args()) {
    Argument *NewA = NewF->getArg(A.getArgNo());
    NewA->setName(A.getName());
    VMap[&A] = NewA;
  }
  SmallVector<ReturnInst *, 4> Returns;
  // LocalChangesOnly: the clone lives in the same module, so it shares the
  // compile unit and types but gets its own DISubprogram (two functions
  // may not share one).
  CloneFunctionInto(NewF, &Kernel, VMap,
                    CloneFunctionChangeType::LocalChangesOnly, Returns);
  // External and visible whatever the original's linkage and visibility (a
  // static __global__ is internal): the runtime looks variants up by name.
  NewF->setLinkage(GlobalValue::ExternalLinkage);
  NewF->setVisibility(GlobalValue::DefaultVisibility);
  if (DISubprogram *SP = NewF->getSubprogram())
    if (SP != Kernel.getSubprogram() && !SP->getLinkageName().empty())
      SP->replaceLinkageName(MDString::get(Ctx, NewF->getName()));

  unsigned Base = OldTy->getNumParams();
  for (auto [I, P] : enumerate(ExtraParams)) {
    Argument *A = NewF->getArg(Base + I);
    A->setName(P.Name);
    if (P.Mirrors >= 0)
      if (MaybeAlign Align = Kernel.getParamAlign(P.Mirrors))
        A->addAttr(Attribute::getWithAlignment(Ctx, *Align));
  }
  Base += ExtraParams.size();
  // Ranges from CUDA's grid limits (those LLVM gives the ctaid and nctaid
  // reads these parameters replace) and from PartitionParams.h.
  for (unsigned I = 0; I < NumPartitionParams; ++I) {
    Argument *A = NewF->getArg(Base + I);
    A->setName(PartitionParamNames[I]);
    A->addAttr(Attribute::NoUndef);
    uint64_t Lo = 0, Hi = 0; // [Lo, Hi), none when Hi == 0
    switch (I) {
    case pp::FirstX:
      Hi = (uint64_t(1) << 31) - 1;
      break;
    case pp::FirstY:
    case pp::FirstZ:
      Hi = 65535;
      break;
    case pp::GridX:
      Lo = 1, Hi = uint64_t(1) << 31;
      break;
    case pp::GridY:
    case pp::GridZ:
      Lo = 1, Hi = 65536;
      break;
    case pp::ShiftX:
      Hi = 31;
      break;
    case pp::ShiftY:
      Hi = 16;
      break;
    case pp::IncX:
    case pp::IncY:
      Hi = 2;
      break;
    default:
      break;
    }
    if (Hi)
      A->addAttr(Attribute::get(Ctx, Attribute::Range,
                                ConstantRange(APInt(32, Lo), APInt(32, Hi))));
  }

  extendKernelArgMetadata(*NewF, Kernel, ExtraParams);
  NewF->addFnAttr(VariantAttr, "partition");
  NewF->addFnAttr(OriginAttr, Kernel.getName());
  markAsKernelLike(*NewF, Kernel);

  bool Inlined = inlineBlockIndexReaders(*NewF);
  assert(Inlined && "findUnremappableCall admitted a call it cannot inline");
  (void)Inlined;
  remapBlockIndexReads(*NewF);
  return NewF;
}

//===----------------------------------------------------------------------===//
// Remarks
//===----------------------------------------------------------------------===//

OptimizationRemarkMissed notSplittableRemark(const Function &Kernel,
                                             const KernelLegality &Legality,
                                             const char *Pass) {
  const LegalityIssue *Issue = Legality.firstSplitBlocker();
  {
    OptimizationRemarkMissed R =
        Issue ? OptimizationRemarkMissed(Pass, "NotSplittable",
                                         userLocation(*Issue->Inst),
                                         Issue->Inst->getParent())
              : OptimizationRemarkMissed(Pass, "NotSplittable", &Kernel);
    R << "kernel '" << displayName(Kernel) << "' is not split";
    if (Issue) {
      R << ": " << getIssueKindName(Issue->Kind);
      if (!Issue->Detail.empty())
        R << " '" << Issue->Detail << "'";
      // The instruction behind the issue, when it is another one: where the
      // dereferenced pointer was loaded, or the read of written data that
      // the store address depends on.
      if (const Instruction *Cause = Issue->Cause) {
        std::string Where;
        raw_string_ostream OS(Where);
        printLocation(OS, *Cause);
        bool Pointer = Issue->Kind == LegalityIssueKind::LoadedPointer ||
                       Issue->Kind == LegalityIssueKind::ArgumentPointer;
        R << (Pointer ? "; the pointer comes from a '" : "; it depends on a '")
          << Cause->getOpcodeName() << "'"
          << (Issue->Kind == LegalityIssueKind::ArgumentPointer
                  ? " of a by-value argument"
                  : "")
          << OS.str();
      }
    }
    return R;
  }
}

/// Describes what the clone of Kernel remaps, e.g. "decodes blockIdx.x,
/// blockIdx.y; reads gridDim.x from parameters", counting the reads of the
/// functions that will be inlined into the clone.
static std::string describeRemap(const Function &Kernel) {
  SmallPtrSet<const Function *, 8> Readers =
      getBlockIndexReaders(*Kernel.getParent());
  bool Used[2][3] = {};
  SmallVector<const Function *, 8> Worklist{&Kernel};
  SmallPtrSet<const Function *, 8> Seen{&Kernel};
  while (!Worklist.empty()) {
    for (const Instruction &I : instructions(*Worklist.pop_back_val())) {
      if (std::optional<SRegRead> R = classifySRegRead(I))
        Used[R->IsGridSize][R->Dim] = true;
      const auto *CB = dyn_cast<CallBase>(&I);
      const Function *Callee = CB ? CB->getCalledFunction() : nullptr;
      if (Callee && Readers.contains(Callee) && Seen.insert(Callee).second)
        Worklist.push_back(Callee);
    }
  }
  static constexpr const char *Dims[] = {"x", "y", "z"};
  std::string Lists[2];
  for (unsigned Kind = 0; Kind < 2; ++Kind)
    for (unsigned D = 0; D < 3; ++D)
      if (Used[Kind][D])
        Lists[Kind] += (Lists[Kind].empty() ? "" : ", ") +
                       std::string(Kind ? "gridDim." : "blockIdx.") + Dims[D];
  if (Lists[0].empty() && Lists[1].empty())
    return "reads no block index";
  std::string S;
  if (!Lists[0].empty())
    S = "decodes " + Lists[0];
  if (!Lists[1].empty())
    S += (S.empty() ? "reads " : "; reads ") + Lists[1] + " from parameters";
  return S;
}

PreservedAnalyses PartitionReadyPass::run(Module &M,
                                          ModuleAnalysisManager &MAM) {
  FunctionAnalysisManager &FAM =
      MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
  VariantRefusals &Refusals = MAM.getResult<VariantRefusalAnalysis>(M);
  bool Changed = false;
  for (Function *K : getKernels(M)) {
    auto &ORE = FAM.getResult<OptimizationRemarkEmitterAnalysis>(*K);
    const KernelLegality &Legality = FAM.getResult<KernelLegalityAnalysis>(*K);
    if (!Legality.canSplit()) {
      OptimizationRemarkMissed R = notSplittableRemark(*K, Legality, PassName);
      Refusals.record(K->getName(), RefusedVariant::Partition, R);
      ORE.emit(R);
      continue;
    }
    std::string Name = partitionVariantName(K->getName());
    if (M.getFunction(Name))
      continue; // Made by an earlier run of the pass.
    if (const Instruction *Call = findUnremappableCall(*K)) {
      OptimizationRemarkMissed R(PassName, "NotRemappable",
                                 userLocation(*Call), Call->getParent());
      R << "kernel '" << displayName(*K)
        << "' is not split: a call that cannot be inlined may read the block "
           "index or grid size";
      Refusals.record(K->getName(), RefusedVariant::Partition, R);
      ORE.emit(R);
      continue;
    }
    std::string Remap = describeRemap(*K);
    Function *Variant = clonePartitioned(*K, Name, ArrayRef<Type *>());
    Changed = true;
    ORE.emit([&] {
      return OptimizationRemark(PassName, "PartitionVariant", K)
             << "kernel '" << displayName(*K) << "': created '"
             << Variant->getName() << "' (" << Remap << ")";
    });
  }
  return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace cleave
