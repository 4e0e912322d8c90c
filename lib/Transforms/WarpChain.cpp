//===- WarpChain.cpp - Warp collectives run warp-wide on vectors ----------===//
//
// Part of Cleave. See cleave/Transforms/WarpChain.h and docs/cpu-backend.md.
//
// The widened code computes, for lane l of a warp, what the thread loops of
// the general lowering compute for that thread (emitGather in CPULower.cpp):
// the same source lane for a shuffle, the reader's own value when the source
// lane does not exist (a partial warp), the same lanes taking part in a vote
// or a reduction. Lanes that do not exist compute on zeros and store nothing.
//
//===----------------------------------------------------------------------===//
#include "cleave/Transforms/WarpChain.h"

#include "cleave/Transforms/NVVMCalls.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Analysis/VectorUtils.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

using namespace llvm;

namespace cleave {

static constexpr unsigned WarpSize = 32;

namespace {

VectorType *lanesOf(Type *T) { return FixedVectorType::get(T, WarpSize); }

bool isLaneType(const Type *T) {
  return T->isIntegerTy() || T->isFloatingPointTy();
}

/// The NVVM name of a call without its prefix ("shfl.sync.bfly.f32").
StringRef nvvmName(const CallInst &CI) {
  StringRef N = CI.getCalledFunction()->getName();
  N.consume_front("llvm.nvvm.");
  return N;
}

/// A collective the chain runs on vectors: shuffles with constant lane and
/// clamp operands (the value-only forms), votes, activemask, and reductions
/// over a constant mask. The others (match, shuffles whose source lane is
/// computed, __syncthreads_count...) keep the general lowering.
bool isChainable(const CallInst &CI) {
  switch (classifyCall(CI)) {
  case CallKind::Shfl:
    return !nvvmName(CI).ends_with("p") &&
           isa<ConstantInt>(CI.getArgOperand(2)) &&
           isa<ConstantInt>(CI.getArgOperand(3));
  case CallKind::Vote:
  case CallKind::ActiveMask:
    return true;
  case CallKind::Redux:
    return isa<ConstantInt>(CI.getArgOperand(1));
  default:
    return false;
  }
}

/// Pure arithmetic on integers and floating-point values that has the same
/// meaning lane by lane on vectors and cannot trap (no integer division: a
/// lane that does not exist divides by whatever it holds).
bool isWidenable(const Instruction &I) {
  if (!isLaneType(I.getType()))
    return false;
  const auto *CI = dyn_cast<CallInst>(&I);
  for (const Use &Op : I.operands())
    if ((!CI || &Op != &CI->getCalledOperandUse()) &&
        !isLaneType(Op->getType()))
      return false;
  if (const auto *BO = dyn_cast<BinaryOperator>(&I))
    return !BO->isIntDivRem();
  if (isa<UnaryOperator>(I) || isa<CastInst>(I) || isa<CmpInst>(I) ||
      isa<SelectInst>(I) || isa<FreezeInst>(I))
    return true;
  if (!CI || !CI->getCalledFunction())
    return false;
  if (classifyCall(*CI) == CallKind::SReg)
    return true;
  Intrinsic::ID ID = CI->getCalledFunction()->getIntrinsicID();
  if (ID == Intrinsic::not_intrinsic || !isTriviallyVectorizable(ID) ||
      !CI->doesNotAccessMemory())
    return false;
  for (unsigned A = 0; A < CI->arg_size(); ++A)
    if (isVectorIntrinsicWithScalarOpAtArg(ID, A) &&
        !isa<Constant>(CI->getArgOperand(A)))
      return false;
  return true;
}

} // namespace

SmallVector<WarpChain, 8> findWarpChains(ArrayRef<CallInst *> SyncCalls) {
  SmallVector<WarpChain, 8> Chains;
  SmallPtrSet<const Instruction *, 16> Taken;
  for (CallInst *CI : SyncCalls) {
    if (Taken.contains(CI) || !isChainable(*CI))
      continue;
    WarpChain C{CI, CI};
    for (Instruction &I :
         make_range(std::next(CI->getIterator()), CI->getParent()->end())) {
      if (isa<DbgInfoIntrinsic>(I))
        continue;
      if (auto *Next = dyn_cast<CallInst>(&I); Next && isChainable(*Next)) {
        C.Last = Next;
        Taken.insert(Next);
        continue;
      }
      if (!isWidenable(I))
        break;
    }
    Chains.push_back(C);
  }
  return Chains;
}

std::optional<std::pair<std::string, const Instruction *>>
checkWarpChainBlock(BasicBlock &BB, function_ref<bool(AllocaInst *)> HasSlots) {
  auto Fail = [](const Twine &Why, const Instruction &I) {
    return std::make_pair(("internal: warp chain: " + Why).str(), &I);
  };
  SmallPtrSet<const AllocaInst *, 8> Stored;
  for (Instruction &I : BB) {
    if (I.isTerminator()) {
      const auto *Br = dyn_cast<BranchInst>(&I);
      if (!Br || Br->isConditional())
        return Fail("the chain does not end in a jump", I);
      continue;
    }
    if (isa<DbgInfoIntrinsic>(I))
      continue;
    const Value *Ptr = nullptr;
    if (auto *LI = dyn_cast<LoadInst>(&I)) {
      auto *A = dyn_cast<AllocaInst>(LI->getPointerOperand());
      if (!A || !(HasSlots(A) || Stored.contains(A)) || !LI->isSimple() ||
          !isLaneType(LI->getType()))
        return Fail("a load of memory other than a value kept per thread", I);
      Ptr = A;
    } else if (const auto *SI = dyn_cast<StoreInst>(&I)) {
      if (!isa<AllocaInst>(SI->getPointerOperand()) || !SI->isSimple() ||
          !isLaneType(SI->getValueOperand()->getType()))
        return Fail("a store to memory other than a value kept per thread", I);
      Ptr = SI->getPointerOperand();
      Stored.insert(cast<AllocaInst>(Ptr));
    } else if (const auto *CI = dyn_cast<CallInst>(&I);
               !(CI && isChainable(*CI)) && !isWidenable(I)) {
      return Fail("an instruction that does not run on lanes", I);
    }
    const auto *CI = dyn_cast<CallInst>(&I);
    for (const Use &Op : I.operands()) {
      if (Op.get() == Ptr || (CI && &Op == &CI->getCalledOperandUse()) ||
          isa<Constant>(Op) || isa<Argument>(Op))
        continue;
      const auto *OI = dyn_cast<Instruction>(Op);
      if (!OI || OI->getParent() != &BB)
        return Fail("a value from another block", I);
    }
  }
  return std::nullopt;
}

static Value *laneAddresses(IRBuilder<> &B, SlotArray Slots, Value *WarpBase,
                            bool Contiguous) {
  Value *First = B.CreateMul(WarpBase, B.getInt64(Slots.Stride));
  Value *Base = B.CreateInBoundsGEP(B.getInt8Ty(), Slots.Base, First);
  if (Contiguous)
    return Base;
  SmallVector<Constant *, WarpSize> Offsets;
  for (unsigned L = 0; L < WarpSize; ++L)
    Offsets.push_back(B.getInt64(L * Slots.Stride));
  return B.CreateInBoundsGEP(B.getInt8Ty(), Base, ConstantVector::get(Offsets));
}

/// Whether the slots of values of type Ty follow each other without a gap.
static bool contiguous(IRBuilder<> &B, Type *Ty, SlotArray Slots) {
  const DataLayout &DL = B.GetInsertBlock()->getModule()->getDataLayout();
  return DL.getTypeStoreSize(Ty) == Slots.Stride &&
         DL.getTypeAllocSize(Ty) == Slots.Stride;
}

Value *loadLanes(IRBuilder<> &B, Type *Ty, SlotArray Slots, Value *WarpBase,
                 Value *Mask, Align Alignment) {
  bool Contig = contiguous(B, Ty, Slots);
  Value *P = laneAddresses(B, Slots, WarpBase, Contig);
  Constant *Zero = Constant::getNullValue(lanesOf(Ty));
  if (Contig)
    return B.CreateMaskedLoad(lanesOf(Ty), P, Alignment, Mask, Zero);
  return B.CreateMaskedGather(lanesOf(Ty), P, Alignment, Mask, Zero);
}

void storeLanes(IRBuilder<> &B, Value *Val, SlotArray Slots, Value *WarpBase,
                Value *Mask, Align Alignment) {
  Type *Ty = cast<VectorType>(Val->getType())->getElementType();
  bool Contig = contiguous(B, Ty, Slots);
  Value *P = laneAddresses(B, Slots, WarpBase, Contig);
  if (Contig)
    B.CreateMaskedStore(Val, P, Alignment, Mask);
  else
    B.CreateMaskedScatter(Val, P, Alignment, Mask);
}

namespace {

/// Emits one chain block on vectors of lanes.
class Widener {
public:
  Widener(IRBuilder<> &B, const WarpEnv &Env) : B(B), Env(Env) {
    SmallVector<Constant *, WarpSize> L;
    for (unsigned I = 0; I < WarpSize; ++I)
      L.push_back(B.getInt32(I));
    Iota = ConstantVector::get(L);
    LanesSplat = B.CreateVectorSplat(WarpSize, Env.Lanes);
    Exists = B.CreateICmpULT(Iota, LanesSplat, "lane.exists");
  }

  void run(BasicBlock &BB);

private:
  Value *lanes(Value *V);
  Value *constLanes(ArrayRef<uint32_t> PerLane);
  void computeThreadIds(const BasicBlock &BB);
  Value *specialRegister(const CallInst &CI);
  Value *shuffle(const CallInst &CI);
  Value *vote(const CallInst &CI);
  Value *redux(const CallInst &CI);
  Value *intrinsic(const IntrinsicInst &II);
  Value *bitsOf(Value *Lanes) { return B.CreateBitCast(Lanes, B.getInt32Ty()); }

  IRBuilder<> &B;
  const WarpEnv &Env;
  Constant *Iota;
  Value *LanesSplat, *Exists;
  /// The value last stored to each alloca by the chain: a later load of it
  /// in the chain reads that instead of the slots.
  DenseMap<const AllocaInst *, Value *> Stored;
  Value *Tid[3] = {};
  DenseMap<const Value *, Value *> Map;
};

Value *Widener::lanes(Value *V) {
  if (auto It = Map.find(V); It != Map.end())
    return It->second;
  Value *W;
  if (auto *C = dyn_cast<Constant>(V))
    W = ConstantVector::getSplat(ElementCount::getFixed(WarpSize), C);
  else if (isa<Argument>(V))
    W = B.CreateVectorSplat(WarpSize, Env.Uniform(V), V->getName() + ".lanes");
  else
    llvm_unreachable("checkWarpChainBlock admits no other operands");
  Map[V] = W;
  return W;
}

Value *Widener::constLanes(ArrayRef<uint32_t> PerLane) {
  SmallVector<Constant *, WarpSize> C;
  for (uint32_t V : PerLane)
    C.push_back(B.getInt32(V));
  return ConstantVector::get(C);
}

/// The thread ids of the warp's lanes, for the dimensions BB reads. A warp
/// is 32 consecutive linear ids (x fastest). When blockDim.x >= 32, x wraps
/// at most once inside a warp and y at most once more, so the ids follow
/// from those of lane 0 without a division per lane; narrower blocks take
/// the divisions.
void Widener::computeThreadIds(const BasicBlock &BB) {
  bool Uses = false;
  for (const Instruction &I : BB)
    if (const auto *CI = dyn_cast<CallInst>(&I);
        CI && classifyCall(*CI) == CallKind::SReg &&
        nvvmName(*CI).starts_with("read.ptx.sreg.tid."))
      Uses = true;
  if (!Uses)
    return;
  Function *F = B.GetInsertBlock()->getParent();
  LLVMContext &Ctx = F->getContext();
  Type *I32 = B.getInt32Ty(), *I64 = B.getInt64Ty();
  auto *Wide = BasicBlock::Create(Ctx, "tid.wide", F);
  auto *Narrow = BasicBlock::Create(Ctx, "tid.narrow", F);
  auto *Join = BasicBlock::Create(Ctx, "tid.join", F);
  Value *NX = Env.BlockDim[0], *NY = Env.BlockDim[1];
  B.CreateCondBr(B.CreateICmpUGE(NX, B.getInt32(WarpSize)), Wide, Narrow);

  B.SetInsertPoint(Wide);
  Value *Base = B.CreateTrunc(Env.WarpBase, I32);
  Value *X0 = B.CreateURem(Base, NX), *Q0 = B.CreateUDiv(Base, NX);
  Value *Y0 = B.CreateURem(Q0, NY), *Z0 = B.CreateUDiv(Q0, NY);
  auto Splat = [&](Value *V) { return B.CreateVectorSplat(WarpSize, V); };
  Value *X = B.CreateAdd(Splat(X0), Iota);
  Value *WrapX = B.CreateICmpUGE(X, Splat(NX));
  X = B.CreateSelect(WrapX, B.CreateSub(X, Splat(NX)), X);
  Value *Y = B.CreateAdd(Splat(Y0), B.CreateZExt(WrapX, lanesOf(I32)));
  Value *WrapY = B.CreateICmpUGE(Y, Splat(NY));
  Y = B.CreateSelect(WrapY, B.CreateSub(Y, Splat(NY)), Y);
  Value *Z = B.CreateAdd(Splat(Z0), B.CreateZExt(WrapY, lanesOf(I32)));
  B.CreateBr(Join);

  B.SetInsertPoint(Narrow);
  Value *Lin =
      B.CreateAdd(Splat(Env.WarpBase), B.CreateZExt(Iota, lanesOf(I64)));
  Value *NX64 = Splat(B.CreateZExt(NX, I64));
  Value *NY64 = Splat(B.CreateZExt(NY, I64));
  Value *Q = B.CreateUDiv(Lin, NX64);
  Value *NX2 = B.CreateTrunc(B.CreateURem(Lin, NX64), lanesOf(I32));
  Value *NY2 = B.CreateTrunc(B.CreateURem(Q, NY64), lanesOf(I32));
  Value *NZ2 = B.CreateTrunc(B.CreateUDiv(Q, NY64), lanesOf(I32));
  B.CreateBr(Join);

  B.SetInsertPoint(Join);
  Value *FromWide[3] = {X, Y, Z}, *FromNarrow[3] = {NX2, NY2, NZ2};
  for (unsigned D = 0; D < 3; ++D) {
    PHINode *P = B.CreatePHI(lanesOf(I32), 2, "tid." + Twine("xyz"[D]));
    P->addIncoming(FromWide[D], Wide);
    P->addIncoming(FromNarrow[D], Narrow);
    Tid[D] = P;
  }
}

Value *Widener::specialRegister(const CallInst &CI) {
  StringRef N = nvvmName(CI);
  N.consume_front("read.ptx.sreg.");
  unsigned D = N.back() - 'x';
  if (N.starts_with("tid."))
    return Tid[D];
  if (N.starts_with("ntid."))
    return B.CreateVectorSplat(WarpSize, Env.BlockDim[D]);
  if (N.starts_with("ctaid."))
    return B.CreateVectorSplat(WarpSize, Env.BlockIdx[D]);
  if (N.starts_with("nctaid."))
    return B.CreateVectorSplat(WarpSize, Env.GridDim[D]);
  if (N == "laneid")
    return Iota;
  if (N == "warpsize")
    return B.CreateVectorSplat(WarpSize, B.getInt32(WarpSize));
  SmallVector<uint32_t, WarpSize> M;
  for (uint32_t L = 0; L < WarpSize; ++L) {
    uint32_t Eq = 1u << L;
    M.push_back(StringSwitch<uint32_t>(N)
                    .Case("lanemask.eq", Eq)
                    .Case("lanemask.lt", Eq - 1)
                    .Case("lanemask.le", Eq | (Eq - 1))
                    .Case("lanemask.gt", ~(Eq | (Eq - 1)))
                    .Default(~(Eq - 1))); // lanemask.ge
  }
  return constLanes(M);
}

/// shfl.sync with constant lane and clamp: the PTX ISA's source lane of
/// each lane is a constant, and the exchange a shufflevector.
Value *Widener::shuffle(const CallInst &CI) {
  StringRef Mode =
      nvvmName(CI).drop_front(strlen("shfl.sync.")).split('.').first;
  int32_t Bv = cast<ConstantInt>(CI.getArgOperand(2))->getSExtValue() & 31;
  int32_t Cv = cast<ConstantInt>(CI.getArgOperand(3))->getSExtValue();
  int32_t SegMask = (Cv >> 8) & 31, NotSeg = ~SegMask;
  SmallVector<int, WarpSize> Src;
  SmallVector<uint32_t, WarpSize> SrcU;
  for (int32_t L = 0; L < int32_t(WarpSize); ++L) {
    int32_t MaxLane = (L & SegMask) | ((Cv & 31) & NotSeg);
    int32_t MinLane = L & SegMask;
    int32_t J;
    bool InRange;
    if (Mode == "up") {
      J = L - Bv;
      InRange = J >= MaxLane;
    } else if (Mode == "down") {
      J = L + Bv;
      InRange = J <= MaxLane;
    } else if (Mode == "bfly") {
      J = L ^ Bv;
      InRange = J <= MaxLane;
    } else { // idx
      J = MinLane | (Bv & NotSeg);
      InRange = J <= MaxLane;
    }
    Src.push_back((InRange ? J : L) & 31);
    SrcU.push_back(Src.back());
  }
  Value *V = lanes(CI.getArgOperand(1));
  Value *Moved = B.CreateShuffleVector(V, Src, "shfl");
  // A source lane past the end of a partial warp does not exist: the
  // reader keeps its own value, as the general lowering does.
  Value *SrcExists = B.CreateICmpULT(constLanes(SrcU), LanesSplat);
  // Lanes that do not run (guarded mode) hold values of no thread; freezing
  // keeps them from carrying poison into lanes that read them.
  return B.CreateFreeze(B.CreateSelect(SrcExists, Moved, V));
}

Value *Widener::vote(const CallInst &CI) {
  StringRef N = nvvmName(CI);
  Value *Mask = lanes(CI.getArgOperand(0));
  Value *Pred = B.CreateAnd(Env.Active, lanes(CI.getArgOperand(1)));
  Value *Set = B.CreateAnd(B.CreateVectorSplat(WarpSize, bitsOf(Pred)), Mask);
  Value *Active =
      B.CreateAnd(B.CreateVectorSplat(WarpSize, bitsOf(Env.Active)), Mask);
  if (N == "vote.ballot.sync")
    return Set;
  Value *None = B.CreateICmpEQ(Set, Constant::getNullValue(Set->getType()));
  if (N == "vote.any.sync")
    return B.CreateNot(None);
  Value *All = B.CreateICmpEQ(Set, Active);
  if (N == "vote.all.sync")
    return All;
  return B.CreateOr(None, All); // uni: all active lanes agree
}

/// redux.sync over the lanes that run and are in the (constant) mask; no
/// such lane gives 0, as the runtime's helper does.
Value *Widener::redux(const CallInst &CI) {
  uint32_t Mask = cast<ConstantInt>(CI.getArgOperand(1))->getZExtValue();
  SmallVector<uint32_t, WarpSize> InMask;
  for (unsigned L = 0; L < WarpSize; ++L)
    InMask.push_back(Mask >> L & 1);
  Value *Part = B.CreateAnd(
      Env.Active, B.CreateICmpNE(constLanes(InMask),
                                 Constant::getNullValue(Iota->getType())));
  StringRef Op = nvvmName(CI).drop_front(strlen("redux.sync."));
  auto [ID, Identity] =
      StringSwitch<std::pair<Intrinsic::ID, uint32_t>>(Op)
          .Case("add", {Intrinsic::vector_reduce_add, 0})
          .Case("min", {Intrinsic::vector_reduce_smin, INT32_MAX})
          .Case("max", {Intrinsic::vector_reduce_smax, uint32_t(INT32_MIN)})
          .Case("umin", {Intrinsic::vector_reduce_umin, UINT32_MAX})
          .Case("umax", {Intrinsic::vector_reduce_umax, 0})
          .Case("and", {Intrinsic::vector_reduce_and, UINT32_MAX})
          .Case("or", {Intrinsic::vector_reduce_or, 0})
          .Default({Intrinsic::vector_reduce_xor, 0});
  Value *Vals =
      B.CreateSelect(Part, lanes(CI.getArgOperand(0)),
                     B.CreateVectorSplat(WarpSize, B.getInt32(Identity)));
  Value *R = B.CreateUnaryIntrinsic(ID, Vals);
  Value *Any = B.CreateICmpNE(bitsOf(Part), B.getInt32(0));
  return B.CreateVectorSplat(WarpSize, B.CreateSelect(Any, R, B.getInt32(0)),
                             "redux");
}

Value *Widener::intrinsic(const IntrinsicInst &II) {
  Intrinsic::ID ID = II.getIntrinsicID();
  SmallVector<Type *, 2> Tys;
  SmallVector<Value *, 4> Args;
  if (isVectorIntrinsicWithOverloadTypeAtArg(ID, -1))
    Tys.push_back(lanesOf(II.getType()));
  for (unsigned A = 0; A < II.arg_size(); ++A) {
    Value *Op = II.getArgOperand(A);
    Args.push_back(isVectorIntrinsicWithScalarOpAtArg(ID, A) ? Op : lanes(Op));
    if (isVectorIntrinsicWithOverloadTypeAtArg(ID, A))
      Tys.push_back(Args.back()->getType());
  }
  Function *F =
      Intrinsic::getDeclaration(B.GetInsertBlock()->getModule(), ID, Tys);
  CallInst *C = B.CreateCall(F, Args, II.getName() + ".lanes");
  if (isa<FPMathOperator>(C))
    C->copyFastMathFlags(&II);
  return C;
}

void Widener::run(BasicBlock &BB) {
  computeThreadIds(BB);
  for (Instruction &I : BB) {
    if (I.isTerminator() || isa<DbgInfoIntrinsic>(I))
      continue;
    Value *W = nullptr;
    if (auto *LI = dyn_cast<LoadInst>(&I)) {
      auto *A = cast<AllocaInst>(LI->getPointerOperand());
      W = Stored.lookup(A);
      if (!W || W->getType() != lanesOf(LI->getType()))
        W = loadLanes(B, LI->getType(), *Env.Slots(A), Env.WarpBase, Exists,
                      LI->getAlign());
    } else if (auto *SI = dyn_cast<StoreInst>(&I)) {
      auto *A = cast<AllocaInst>(SI->getPointerOperand());
      Value *V = lanes(SI->getValueOperand());
      Stored[A] = V;
      // A value no later region reads has no slots: nothing to keep.
      if (std::optional<SlotArray> S = Env.Slots(A))
        storeLanes(B, V, *S, Env.WarpBase, Env.Active, SI->getAlign());
      continue;
    } else if (const auto *CI = dyn_cast<CallInst>(&I)) {
      switch (classifyCall(*CI)) {
      case CallKind::SReg:
        W = specialRegister(*CI);
        break;
      case CallKind::Shfl:
        W = shuffle(*CI);
        break;
      case CallKind::Vote:
        W = vote(*CI);
        break;
      case CallKind::Redux:
        W = redux(*CI);
        break;
      case CallKind::ActiveMask:
        W = B.CreateVectorSplat(WarpSize, bitsOf(Env.Active));
        break;
      default:
        W = intrinsic(cast<IntrinsicInst>(*CI));
        break;
      }
    } else {
      Instruction *C = I.clone();
      for (unsigned Op = 0; Op < C->getNumOperands(); ++Op)
        C->setOperand(Op, lanes(I.getOperand(Op)));
      C->mutateType(lanesOf(I.getType()));
      W = B.Insert(C, I.getName() + ".lanes");
    }
    Map[&I] = W;
  }
}

} // namespace

void widenWarpChain(BasicBlock &BB, IRBuilder<> &B, const WarpEnv &Env) {
  Widener(B, Env).run(BB);
}

} // namespace cleave
