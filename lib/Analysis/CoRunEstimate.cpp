//===- CoRunEstimate.cpp - Static inputs of the co-run model --------------===//
//
// Part of Cleave. See cleave/Analysis/CoRunEstimate.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/Analysis/CoRunEstimate.h"

#include "cleave/Analysis/InstructionMix.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Analysis/BlockFrequencyInfo.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GetElementPtrTypeIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Operator.h"

#include <algorithm>
#include <cmath>

using namespace llvm;

namespace cleave {

namespace {

/// A value's change from lane threadIdx.x to lane threadIdx.x + 1: a
/// constant (0: the same in every lane of a warp), or Varying.
struct Delta {
  bool Varying = false;
  int64_t C = 0;
  static Delta varying() { return {true, 0}; }
  static Delta of(int64_t C) {
    // Distances this large are no access pattern: treat as unknown.
    if (C > (int64_t(1) << 40) || C < -(int64_t(1) << 40))
      return varying();
    return {false, C};
  }
  bool zero() const { return !Varying && C == 0; }
};

Delta join(Delta A, Delta B) {
  if (A.Varying || B.Varying || A.C != B.C)
    return Delta::varying();
  return A;
}

class LaneDelta {
public:
  explicit LaneDelta(const DataLayout &DL) : DL(DL) {}

  Delta of(const Value *V) {
    if (auto It = Memo.find(V); It != Memo.end())
      return It->second;
    // A cycle through phis: an induction variable's step does not depend
    // on the lane unless something outside the cycle does.
    Memo[V] = Delta::of(0);
    Delta D = compute(V);
    Memo[V] = D;
    return D;
  }

private:
  Delta compute(const Value *V) {
    const auto *I = dyn_cast<Instruction>(V);
    if (!I)
      return Delta::of(0); // constants, arguments, globals
    if (const auto *II = dyn_cast<IntrinsicInst>(I)) {
      switch (II->getIntrinsicID()) {
      case Intrinsic::nvvm_read_ptx_sreg_tid_x:
      case Intrinsic::nvvm_read_ptx_sreg_laneid:
        return Delta::of(1);
      default:
        return uniformIf(*I);
      }
    }
    switch (I->getOpcode()) {
    case Instruction::Add:
      return add(of(I->getOperand(0)), of(I->getOperand(1)), 1);
    case Instruction::Sub:
      return add(of(I->getOperand(0)), of(I->getOperand(1)), -1);
    case Instruction::Or:
      if (cast<PossiblyDisjointInst>(I)->isDisjoint())
        return add(of(I->getOperand(0)), of(I->getOperand(1)), 1);
      return uniformIf(*I);
    case Instruction::Mul:
      return mul(I->getOperand(0), I->getOperand(1));
    case Instruction::Shl:
      if (const auto *S = dyn_cast<ConstantInt>(I->getOperand(1)))
        if (S->getZExtValue() < 32)
          return scale(of(I->getOperand(0)), int64_t(1) << S->getZExtValue());
      return uniformIf(*I);
    case Instruction::SExt:
    case Instruction::ZExt:
    case Instruction::Trunc:
    case Instruction::BitCast:
    case Instruction::AddrSpaceCast:
    case Instruction::PtrToInt:
    case Instruction::IntToPtr:
      return of(I->getOperand(0));
    case Instruction::GetElementPtr:
      return gep(cast<GetElementPtrInst>(*I));
    case Instruction::PHI: {
      Delta D = Delta::of(0);
      bool First = true;
      for (const Value *In : cast<PHINode>(I)->incoming_values()) {
        Delta X = of(In);
        D = First ? X : join(D, X);
        First = false;
      }
      return D;
    }
    case Instruction::Select:
      if (!of(I->getOperand(0)).zero())
        return Delta::varying();
      return join(of(I->getOperand(1)), of(I->getOperand(2)));
    case Instruction::Load:
      // The same address in every lane loads the same value.
      return of(I->getOperand(0)).zero() ? Delta::of(0) : Delta::varying();
    default:
      return uniformIf(*I);
    }
  }

  /// 0 when no operand changes with the lane, else unknown.
  Delta uniformIf(const Instruction &I) {
    for (const Value *Op : I.operands())
      if (!of(Op).zero())
        return Delta::varying();
    return Delta::of(0);
  }
  static Delta add(Delta A, Delta B, int64_t Sign) {
    if (A.Varying || B.Varying)
      return Delta::varying();
    return Delta::of(A.C + Sign * B.C);
  }
  static Delta scale(Delta A, int64_t K) {
    if (A.Varying)
      return A;
    return Delta::of(A.C * K);
  }
  Delta mul(const Value *A, const Value *B) {
    if (const auto *C = dyn_cast<ConstantInt>(B))
      return scale(of(A), C->getSExtValue());
    if (const auto *C = dyn_cast<ConstantInt>(A))
      return scale(of(B), C->getSExtValue());
    // A lane-dependent value times a run-time factor: no constant stride.
    if (of(A).zero() && of(B).zero())
      return Delta::of(0);
    return Delta::varying();
  }
  Delta gep(const GetElementPtrInst &G) {
    Delta D = of(G.getPointerOperand());
    for (gep_type_iterator GTI = gep_type_begin(G), E = gep_type_end(G);
         GTI != E; ++GTI) {
      Delta Idx = of(GTI.getOperand());
      if (GTI.isStruct() || Idx.zero())
        continue; // struct field indices are constants
      TypeSize Size = GTI.getSequentialElementStride(DL);
      if (Size.isScalable())
        return Delta::varying();
      D = add(D, scale(Idx, int64_t(Size.getFixedValue())), 1);
    }
    return D;
  }

  const DataLayout &DL;
  DenseMap<const Value *, Delta> Memo;
};

/// BFI's iterations of \p L per entry, from its preheader; 0 when it has
/// none.
double bfiIterations(const Loop &L, const BlockFrequencyInfo &BFI) {
  const BasicBlock *Pre = L.getLoopPreheader();
  if (!Pre)
    return 0;
  double In = double(BFI.getBlockFreq(Pre).getFrequency());
  double Header = double(BFI.getBlockFreq(L.getHeader()).getFrequency());
  return In > 0 ? Header / In : 0;
}

/// The factor that turns BFI's frequency of a block in \p L into one with
/// the constant trip counts ScalarEvolution knows of its loops.
double tripScale(const Loop *L, const BlockFrequencyInfo &BFI,
                 ScalarEvolution &SE, DenseMap<const Loop *, double> &Memo) {
  if (!L)
    return 1;
  if (auto It = Memo.find(L); It != Memo.end())
    return It->second;
  double S = tripScale(L->getParentLoop(), BFI, SE, Memo);
  unsigned Trips = SE.getSmallConstantTripCount(L);
  double Est = bfiIterations(*L, BFI);
  if (Trips && Est > 0)
    S *= Trips / Est;
  Memo[L] = S;
  return S;
}

bool isGlobalAccess(InstrClass C) {
  return C == InstrClass::GlobalLoad || C == InstrClass::GlobalStore ||
         C == InstrClass::GlobalAtomic;
}

/// The pointer and the bytes one lane moves of a global memory access.
std::pair<const Value *, uint64_t> accessOf(const Instruction &I,
                                            const DataLayout &DL) {
  if (const auto *L = dyn_cast<LoadInst>(&I))
    return {L->getPointerOperand(), DL.getTypeStoreSize(L->getType())};
  if (const auto *S = dyn_cast<StoreInst>(&I))
    return {S->getPointerOperand(),
            DL.getTypeStoreSize(S->getValueOperand()->getType())};
  if (const auto *A = dyn_cast<AtomicRMWInst>(&I))
    return {A->getPointerOperand(),
            DL.getTypeStoreSize(A->getValOperand()->getType())};
  if (const auto *X = dyn_cast<AtomicCmpXchgInst>(&I))
    return {X->getPointerOperand(),
            DL.getTypeStoreSize(X->getNewValOperand()->getType())};
  return {nullptr, 0};
}

} // namespace

std::optional<int64_t> laneStride(const Value &Ptr, const DataLayout &DL) {
  Delta D = LaneDelta(DL).of(&Ptr);
  if (D.Varying)
    return std::nullopt;
  return D.C;
}

double sectorsPerRequest(std::optional<int64_t> Stride, uint64_t Bytes) {
  if (!Stride)
    return 32;
  uint64_t S = uint64_t(*Stride < 0 ? -*Stride : *Stride);
  if (S == 0)
    return std::ceil(double(Bytes) / 32);
  // 32 lanes span 31 strides and one access; never fewer sectors than the
  // lanes' bytes need, never more than one per lane (of at most 32 bytes).
  double Span = std::ceil(double(31 * std::max(S, Bytes) + Bytes) / 32);
  return std::min(Span, 32 * std::ceil(double(Bytes) / 32));
}

CoRunEstimate estimateCoRun(Function &K, FunctionAnalysisManager &FAM) {
  CoRunEstimate Out;
  if (K.isDeclaration())
    return Out;
  const DataLayout &DL = K.getDataLayout();
  auto &BFI = FAM.getResult<BlockFrequencyAnalysis>(K);
  auto &LI = FAM.getResult<LoopAnalysis>(K);
  auto &SE = FAM.getResult<ScalarEvolutionAnalysis>(K);
  double Entry = double(BFI.getEntryFreq().getFrequency());
  if (!(Entry > 0))
    return Out;
  DenseMap<const Loop *, double> Scales;
  LaneDelta Lanes(DL);
  double Requests = 0, Bytes = 0, Sectors = 0;
  for (BasicBlock &BB : K) {
    double Freq = double(BFI.getBlockFreq(&BB).getFrequency()) / Entry *
                  tripScale(LI.getLoopFor(&BB), BFI, SE, Scales);
    if (!(Freq > 0))
      continue;
    for (const Instruction &I : BB) {
      std::optional<InstrClass> C = classifyInstruction(I);
      unsigned N = C ? issuedInstructions(I) : 0;
      if (!N)
        continue;
      Out.PerThread[unsigned(*C)] += N * Freq;
      if (!isGlobalAccess(*C))
        continue;
      auto [Ptr, Size] = accessOf(I, DL);
      if (!Ptr)
        continue;
      Delta D = Lanes.of(Ptr);
      std::optional<int64_t> Stride =
          D.Varying ? std::nullopt : std::optional<int64_t>(D.C);
      Requests += N * Freq;
      Bytes += N * Freq * double(Size);
      Sectors += N * Freq * sectorsPerRequest(Stride, Size);
    }
  }
  if (Requests > 0) {
    Out.BytesPerLane = Bytes / Requests;
    Out.SectorsPerRequest = Sectors / Requests;
  }
  return Out;
}

} // namespace cleave
