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

/// Functions of M that read ctaid/nctaid themselves or through direct calls.
/// A call into one of them from a clone must be inlined so that its reads
/// can be remapped: the callee is shared with the original kernel.
static SmallPtrSet<const Function *, 8> getBlockIndexReaders(const Module &M) {
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
/// instruction, so that splitting the block there keeps them static.
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

/// Emits, at the end of B's block, a loop that divides L (i64) by GX (i32)
/// bit by bit in 32-bit registers, assuming L < GX * 2^32, and exits to Exit.
/// Returns the loop block; Quot (when NeedQuotient) and Rem are the 32-bit
/// results, available in Exit.
///
/// This is the path for blocks whose linear index needs more than 32 bits.
/// A plain 64-bit udiv would do, but ptxas expands div.u64 inline with
/// enough temporaries to raise the register count of the whole kernel
/// (22 -> 32 for matmul, 12 -> 18 for vecadd) for a path that runs only on
/// grids of more than 2^32 blocks. The loop keeps every value in 32 bits:
/// the partial remainder stays below GX < 2^31, so shifting in one more bit
/// cannot overflow.
static BasicBlock *emitWideDivision(IRBuilder<> &B, Value *L, Value *GX,
                                    BasicBlock *Exit, bool NeedQuotient,
                                    Value *&Quot, Value *&Rem) {
  LLVMContext &Ctx = B.getContext();
  Type *I32 = Type::getInt32Ty(Ctx);
  BasicBlock *Pred = B.GetInsertBlock();
  BasicBlock *Loop = BasicBlock::Create(Ctx, "cleave.div64", Pred->getParent(),
                                        Pred->getNextNode());

  // L < GX * 2^32 makes the high word smaller than GX: it is the first
  // partial remainder and the high word of the quotient is 0.
  Value *Hi = B.CreateTrunc(B.CreateLShr(L, 32), I32, "cleave.hi");
  Value *Lo = B.CreateTrunc(L, I32, "cleave.lo");
  B.CreateBr(Loop);

  B.SetInsertPoint(Loop);
  PHINode *Bit = B.CreatePHI(I32, 2, "cleave.bit");
  PHINode *R = B.CreatePHI(I32, 2, "cleave.rem");
  PHINode *Q = NeedQuotient ? B.CreatePHI(I32, 2, "cleave.quot") : nullptr;
  Value *In = B.CreateAnd(B.CreateLShr(Lo, Bit), 1);
  Value *Shifted = B.CreateOr(B.CreateShl(R, 1, "", /*HasNUW=*/true), In);
  Value *Ge = B.CreateICmpUGE(Shifted, GX);
  Value *NextR = B.CreateSelect(Ge, B.CreateNUWSub(Shifted, GX), Shifted,
                                "cleave.rem.next");
  Value *NextQ = nullptr;
  if (Q)
    NextQ = B.CreateOr(B.CreateShl(Q, 1), B.CreateZExt(Ge, I32),
                       "cleave.quot.next");
  Value *NextBit = B.CreateSub(Bit, ConstantInt::get(I32, 1));
  BranchInst *Latch =
      B.CreateCondBr(B.CreateICmpEQ(Bit, ConstantInt::get(I32, 0)), Exit, Loop);
  // Unrolled (ptxas does it by itself otherwise), the 32 steps are scheduled
  // together and need as many registers as the 64-bit division did.
  // llvm.loop.unroll.disable becomes `.pragma "nounroll"` in the PTX.
  MDNode *NoUnroll =
      MDNode::get(Ctx, MDString::get(Ctx, "llvm.loop.unroll.disable"));
  Latch->setMetadata(LLVMContext::MD_loop, makePostTransformationMetadata(
                                               Ctx, nullptr, {}, {NoUnroll}));
  Bit->addIncoming(ConstantInt::get(I32, 31), Pred);
  Bit->addIncoming(NextBit, Loop);
  R->addIncoming(Hi, Pred);
  R->addIncoming(NextR, Loop);
  if (Q) {
    Q->addIncoming(ConstantInt::get(I32, 0), Pred);
    Q->addIncoming(NextQ, Loop);
  }
  Quot = NextQ;
  Rem = NextR;
  return Loop;
}

/// Decodes the original block index of the running block in F's entry
/// block and returns it per dimension (null where not Needed):
///   linear = first + ctaid.x
///   bx = linear % gx,  by = (linear / gx) % gy,  bz = linear / gx / gy
///
/// The decode takes one of these paths, chosen by conditions that are the
/// same for every thread of a block (the grid shape for the whole launch),
/// so the branches never diverge:
///   - 1-D original grid (gy == gz == 1): bx = linear; one branch, no
///     division;
///   - 2-D grid and linear < 2^32: one 32-bit division (by = the quotient);
///     two branches;
///   - 3-D grid and linear < 2^32: two 32-bit divisions; three branches;
///   - linear >= 2^32 (grids of more than 2^32 blocks, which Hopper allows
///     as gridDim.x may reach 2^31 - 1): the first division by the
///     bit-serial loop above. Its quotient, linear / gx < gy * gz < 2^32,
///     fits in 32 bits, so the division by gy is 32-bit here too.
/// A kernel that reads only blockIdx.x needs the remainder alone (one
/// division on every N-D path). Each division costs as much as the rest of
/// the decode together (measured on an H200: +12% on an 8192^2 transpose,
/// one element per thread), hence the 2-D path of its own.
static std::array<Value *, 3> emitDecode(Function &F, Argument *First,
                                         ArrayRef<Argument *> Grid,
                                         const std::array<bool, 3> &Need) {
  LLVMContext &Ctx = F.getContext();
  Type *I32 = Type::getInt32Ty(Ctx);
  Type *I64 = Type::getInt64Ty(Ctx);
  Value *GX = Grid[0], *GY = Grid[1], *GZ = Grid[2];
  Value *One = ConstantInt::get(I32, 1), *Zero = ConstantInt::get(I32, 0);
  bool NeedQuotient = Need[1] || Need[2];

  BasicBlock &Entry = F.getEntryBlock();
  BasicBlock *Body =
      Entry.splitBasicBlock(gatherStaticAllocas(Entry), "cleave.body");
  Entry.getTerminator()->eraseFromParent();
  auto NewBlock = [&](const char *Name) {
    return BasicBlock::Create(Ctx, Name, &F, Body);
  };
  // Incoming values of the decoded indices, per predecessor of Body.
  SmallVector<std::pair<BasicBlock *, std::array<Value *, 3>>, 4> Paths;

  IRBuilder<> B(&Entry);
  // Compiler-generated code: line 0 in the kernel's scope keeps the
  // location valid without pretending to be a source line.
  if (DISubprogram *SP = F.getSubprogram())
    B.SetCurrentDebugLocation(DILocation::get(Ctx, 0, 0, SP));

  // A fresh read without the original's range attribute: the launched grid
  // is not the grid the original's range described.
  Value *Launched = B.CreateIntrinsic(Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {},
                                      {}, nullptr, "cleave.ctaid");
  Value *Linear =
      B.CreateAdd(First, B.CreateZExt(Launched, I64), "cleave.linear",
                  /*HasNUW=*/true, /*HasNSW=*/false);
  Value *Linear32 = B.CreateTrunc(Linear, I32, "cleave.linear32");
  // gy and gz are at least 1, so gy | gz == 1 exactly when both are 1.
  Value *Is1D = B.CreateICmpEQ(B.CreateOr(GY, GZ), One, "cleave.is1d");
  BasicBlock *ND = NewBlock("cleave.decode");
  B.CreateCondBr(Is1D, Body, ND);
  Paths.push_back({&Entry, {Linear32, Zero, Zero}});

  B.SetInsertPoint(ND);
  Value *Fits32 = B.CreateICmpULT(
      Linear, ConstantInt::get(I64, uint64_t(1) << 32), "cleave.fits32");

  if (!NeedQuotient) {
    // blockIdx.x only: the remainder by gx.
    BasicBlock *Narrow = NewBlock("cleave.rem32");
    BasicBlock *Wide = NewBlock("cleave.wide");
    B.CreateCondBr(Fits32, Narrow, Wide);
    B.SetInsertPoint(Narrow);
    Value *R = B.CreateURem(Linear32, GX, "cleave.bx.32");
    B.CreateBr(Body);
    Paths.push_back({Narrow, {R, nullptr, nullptr}});
    B.SetInsertPoint(Wide);
    Value *QWide, *RWide;
    BasicBlock *Loop = emitWideDivision(B, Linear, GX, Body,
                                        /*NeedQuotient=*/false, QWide, RWide);
    Paths.push_back({Loop, {RWide, nullptr, nullptr}});
  } else {
    // 2-D and 32-bit: the quotient is y, done in one division.
    Value *Is2D = B.CreateICmpEQ(GZ, One, "cleave.is2d");
    BasicBlock *Narrow2D = NewBlock("cleave.div2d");
    BasicBlock *General = NewBlock("cleave.div3d");
    B.CreateCondBr(B.CreateAnd(Is2D, Fits32, "cleave.fast2d"), Narrow2D,
                   General);
    B.SetInsertPoint(Narrow2D);
    Value *Q2 = B.CreateUDiv(Linear32, GX, "cleave.by.2d");
    Value *R2 =
        B.CreateNUWSub(Linear32, B.CreateNUWMul(Q2, GX), "cleave.bx.2d");
    B.CreateBr(Body);
    Paths.push_back({Narrow2D, {R2, Q2, Zero}});

    // Otherwise the first division, 32-bit or wide, then the second one.
    B.SetInsertPoint(General);
    BasicBlock *Narrow = NewBlock("cleave.div32");
    BasicBlock *Wide = NewBlock("cleave.wide");
    BasicBlock *Second = NewBlock("cleave.divy");
    B.CreateCondBr(Fits32, Narrow, Wide);
    B.SetInsertPoint(Narrow);
    Value *Q32 = B.CreateUDiv(Linear32, GX, "cleave.q32");
    Value *R32 =
        B.CreateNUWSub(Linear32, B.CreateNUWMul(Q32, GX), "cleave.r32");
    B.CreateBr(Second);
    B.SetInsertPoint(Wide);
    Value *QWide, *RWide;
    BasicBlock *Loop = emitWideDivision(B, Linear, GX, Second,
                                        /*NeedQuotient=*/true, QWide, RWide);

    // The wide path may come from a 2-D grid too, where the quotient is
    // below gy: the division by gy then yields by = quotient, bz = 0.
    B.SetInsertPoint(Second);
    PHINode *R = B.CreatePHI(I32, 2, "cleave.bx.nd");
    R->addIncoming(R32, Narrow);
    R->addIncoming(RWide, Loop);
    PHINode *Q = B.CreatePHI(I32, 2, "cleave.q");
    Q->addIncoming(Q32, Narrow);
    Q->addIncoming(QWide, Loop);
    std::array<Value *, 3> ThreeD = {R, nullptr, nullptr};
    if (Need[2]) {
      ThreeD[2] = B.CreateUDiv(Q, GY, "cleave.bz.nd");
      if (Need[1])
        ThreeD[1] =
            B.CreateNUWSub(Q, B.CreateNUWMul(ThreeD[2], GY), "cleave.by.nd");
    } else {
      ThreeD[1] = B.CreateURem(Q, GY, "cleave.by.nd");
    }
    B.CreateBr(Body);
    Paths.push_back({Second, ThreeD});
  }

  static constexpr const char *Names[3] = {"cleave.bx", "cleave.by",
                                           "cleave.bz"};
  std::array<Value *, 3> Idx = {nullptr, nullptr, nullptr};
  B.SetInsertPoint(Body, Body->begin());
  for (unsigned D = 0; D < 3; ++D) {
    if (!Need[D])
      continue;
    PHINode *Phi = B.CreatePHI(I32, Paths.size(), Names[D]);
    for (auto &[Pred, Values] : Paths)
      Phi->addIncoming(Values[D], Pred);
    Idx[D] = Phi;
  }
  return Idx;
}

/// Rewrites every ctaid/nctaid read of F (a clone whose last
/// NumPartitionParams arguments are the partition parameters).
static void remapBlockIndexReads(Function &F) {
  BlockIndexReads Reads = collectBlockIndexReads(F);
  unsigned Base = F.arg_size() - NumPartitionParams;
  Argument *First = F.getArg(Base);
  SmallVector<Argument *, 3> Grid = {F.getArg(Base + 1), F.getArg(Base + 2),
                                     F.getArg(Base + 3)};

  std::array<Value *, 3> Idx = {nullptr, nullptr, nullptr};
  if (Reads.readsCtaid()) {
    std::array<bool, 3> Need;
    for (unsigned D = 0; D < 3; ++D)
      Need[D] = !Reads.Ctaid[D].empty();
    Idx = emitDecode(F, First, Grid, Need);
  }
  for (unsigned D = 0; D < 3; ++D) {
    for (CallInst *Call : Reads.Ctaid[D]) {
      Call->replaceAllUsesWith(Idx[D]);
      Call->eraseFromParent();
    }
    for (CallInst *Call : Reads.Nctaid[D]) {
      Call->replaceAllUsesWith(Grid[D]);
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
  Type *I64 = Type::getInt64Ty(Ctx);

  FunctionType *OldTy = Kernel.getFunctionType();
  SmallVector<Type *, 16> Params(OldTy->params());
  for (const ExtraParam &P : ExtraParams)
    Params.push_back(P.Ty);
  Params.append({I64, I32, I32, I32});
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
  Argument *First = NewF->getArg(Base);
  First->setName(FirstBlockParamName);
  First->addAttr(Attribute::NoUndef);
  // The original grid obeys CUDA's limits, the same ranges LLVM gives the
  // nctaid reads these parameters replace.
  static const ConstantRange GridRanges[3] = {
      ConstantRange(APInt(32, 1), APInt(32, uint64_t(1) << 31)),
      ConstantRange(APInt(32, 1), APInt(32, 65536)),
      ConstantRange(APInt(32, 1), APInt(32, 65536))};
  for (unsigned D = 0; D < 3; ++D) {
    Argument *G = NewF->getArg(Base + 1 + D);
    G->setName(GridParamNames[D]);
    G->addAttr(Attribute::NoUndef);
    G->addAttr(Attribute::get(Ctx, Attribute::Range, GridRanges[D]));
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

void remarkNotSplittable(const Function &Kernel, const KernelLegality &Legality,
                         OptimizationRemarkEmitter &ORE, const char *Pass) {
  const LegalityIssue *Issue = Legality.firstSplitBlocker();
  ORE.emit([&] {
    OptimizationRemarkMissed R =
        Issue ? OptimizationRemarkMissed(Pass, "NotSplittable", Issue->Inst)
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
        R << (Issue->Kind == LegalityIssueKind::LoadedPointer
                  ? "; the pointer comes from a '"
                  : "; it depends on a '")
          << Cause->getOpcodeName() << "'" << OS.str();
      }
    }
    return R;
  });
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
  bool Changed = false;
  for (Function *K : getKernels(M)) {
    auto &ORE = FAM.getResult<OptimizationRemarkEmitterAnalysis>(*K);
    const KernelLegality &Legality = FAM.getResult<KernelLegalityAnalysis>(*K);
    if (!Legality.canSplit()) {
      remarkNotSplittable(*K, Legality, ORE, PassName);
      continue;
    }
    std::string Name = partitionVariantName(K->getName());
    if (M.getFunction(Name))
      continue; // Made by an earlier run of the pass.
    if (const Instruction *Call = findUnremappableCall(*K)) {
      ORE.emit([&] {
        return OptimizationRemarkMissed(PassName, "NotRemappable", Call)
               << "kernel '" << displayName(*K)
               << "' is not split: a call that cannot be inlined may read "
                  "the block index or grid size";
      });
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
