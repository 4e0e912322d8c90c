//===- CPULower.cpp - Kernels as host functions that run block ranges ----===//
//
// Part of Cleave. The CPU variant of a kernel (docs/cpu-backend.md):
//
//  1. The kernel is cloned into a scratch copy of the device module, calls are
//     inlined and NVVM math is rewritten to generic IR, so that everything
//     thread-specific is visible in one function.
//  2. Sync points split the body: block barriers, and warp operations (a warp
//     operation becomes "publish operand; sync; gather from the other lanes;
//     sync"). A region is what a thread runs from one sync point to the next.
//  3. Values that cross blocks are demoted to allocas; an alloca that is live
//     at a sync point gets one slot per thread in the scratch buffer.
//  4. The host function loops over the blocks of its range; per block, a
//     state machine runs one region at a time, each region inside loops over
//     the threads (z, y, x: innermost over threadIdx.x, for the vectorizer).
//     When every sync point is block-uniform, all threads leave a region at
//     the same sync point; when warp operations sit under block-divergent
//     (but warp-uniform) control, each thread keeps its own next state and the
//     machine runs the earliest pending state first ("guarded" mode).
//  5. The host functions are cloned into a fresh x86-64 module with every
//     address space mapped to 0.
//
//===----------------------------------------------------------------------===//
#include "cleave/Transforms/CPULower.h"

#include "cleave/ABI/CpuCheckABI.h"
#include "cleave/Analysis/KernelLegality.h"
#include "cleave/Analysis/VariantRefusals.h"
#include "cleave/Support/KernelInfo.h"
#include "cleave/Transforms/DeviceReportsLower.h"
#include "cleave/Transforms/HeaderAsmLower.h"
#include "cleave/Transforms/MemCheck.h"
#include "cleave/Transforms/NVVMCalls.h"
#include "cleave/Transforms/NVVMConversions.h"
#include "cleave/Transforms/WarpChain.h"
#include "cleave/Transforms/WarpSynchronous.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Analysis/CycleAnalysis.h"
#include "llvm/Analysis/OptimizationRemarkEmitter.h"
#include "llvm/Analysis/PostDominators.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/Analysis/UniformityAnalysis.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfo.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PatternMatch.h"
#include "llvm/IR/ReplaceConstant.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

#include <functional>
#include <optional>

using namespace llvm;

namespace cleave {

static constexpr const char *PassName = "cleave-cpu-lower";
static constexpr unsigned WarpSize = 32;
// State keys order the guarded scheduler: it runs the smallest pending key,
// and block barriers (which need every thread) sort after warp-level states.
static constexpr uint32_t BarrierBias = 1u << 16;
static constexpr uint32_t RetKey = 1u << 30;
// Offsets in cleave_cpu_launch (CpuKernelABI.h).
static constexpr unsigned LaunchGridOffset = 0, LaunchBlockOffset = 12,
                          LaunchDynSharedOffset = 24;
static constexpr const char *WarpBitsHelper = "__cleave_cpu_warp_bits";

std::string cpuVariantName(StringRef Kernel) {
  return ("__cleave_cpu_" + Kernel).str();
}

std::string cpuDescriptorName(StringRef Kernel) {
  return cpuVariantName(Kernel) + "_desc";
}

std::string cpuVariableName(StringRef Var) {
  return ("__cleave_cpu_var_" + Var).str();
}

namespace {

/// A construct the lowering refuses: what and where.
struct Refusal {
  std::string What;
  const Instruction *At = nullptr;
};

//===----------------------------------------------------------------------===//
// NVVM math to generic IR
//===----------------------------------------------------------------------===//

/// Flushes a subnormal float to a zero of the same sign (the .ftz modifier).
Value *flushDenormal(IRBuilder<> &B, Value *V) {
  if (!V->getType()->isFloatTy())
    return V;
  Value *Abs = B.CreateUnaryIntrinsic(Intrinsic::fabs, V);
  Value *Tiny = B.CreateFCmpOLT(
      Abs, ConstantFP::get(V->getType(), APFloat::getSmallestNormalized(
                                             APFloat::IEEEsingle())));
  Value *Zero = B.CreateBinaryIntrinsic(
      Intrinsic::copysign, ConstantFP::get(V->getType(), 0.0), V);
  return B.CreateSelect(Tiny, Zero, V);
}

/// Rewrites one NVVM math/bit intrinsic call into generic IR (or a call to a
/// runtime helper for directed-rounding FMA). Returns false when the
/// intrinsic has no host mapping.
bool lowerNVVMMath(CallInst *CI) {
  StringRef N = CI->getCalledFunction()->getName();
  N.consume_front("llvm.nvvm.");
  IRBuilder<> B(CI);
  Module &M = *CI->getModule();
  Type *Ty = CI->getType();
  bool Ftz = N.contains(".ftz");
  auto Arg = [&](unsigned I) {
    Value *V = CI->getArgOperand(I);
    return Ftz ? flushDenormal(B, V) : V;
  };
  auto Finish = [&](Value *V) {
    if (Ftz)
      V = flushDenormal(B, V);
    CI->replaceAllUsesWith(V);
    CI->eraseFromParent();
    return true;
  };
  auto Unary = [&](Intrinsic::ID ID) {
    return Finish(B.CreateUnaryIntrinsic(ID, Arg(0)));
  };
  auto Binary = [&](Intrinsic::ID ID) {
    return Finish(B.CreateBinaryIntrinsic(ID, Arg(0), Arg(1)));
  };

  if (N.starts_with("fma.rn."))
    return Finish(B.CreateIntrinsic(Intrinsic::fma, {Ty}, {Arg(0), Arg(1), Arg(2)}));
  if (N.starts_with("fma.rz.") || N.starts_with("fma.rm.") ||
      N.starts_with("fma.rp.")) {
    // Directed rounding is exact in the runtime helper (an error-free
    // transformation in double), not an MXCSR mode switch.
    std::string Helper = ("__cleave_rt_fma_" + N.substr(4, 2) +
                          (Ty->isFloatTy() ? "_f32" : "_f64"))
                             .str();
    FunctionCallee FC = M.getOrInsertFunction(Helper, Ty, Ty, Ty, Ty);
    return Finish(B.CreateCall(FC, {Arg(0), Arg(1), Arg(2)}));
  }
  if (N.starts_with("fabs."))
    return Unary(Intrinsic::fabs);
  if (N.starts_with("fmin.") && !N.contains("nan") && !N.contains("xorsign"))
    return Binary(Intrinsic::minnum);
  if (N.starts_with("fmax.") && !N.contains("nan") && !N.contains("xorsign"))
    return Binary(Intrinsic::maxnum);
  if (N.starts_with("saturate.")) {
    // max(x, 0) maps NaN to 0, as cvt.sat does.
    Value *V = B.CreateBinaryIntrinsic(Intrinsic::maxnum, Arg(0),
                                       ConstantFP::get(Ty, 0.0));
    return Finish(B.CreateBinaryIntrinsic(Intrinsic::minnum, V,
                                          ConstantFP::get(Ty, 1.0)));
  }
  if (N.starts_with("ex2.approx."))
    return Unary(Intrinsic::exp2);
  if (N.starts_with("lg2.approx."))
    return Unary(Intrinsic::log2);
  if (N.starts_with("sin.approx."))
    return Unary(Intrinsic::sin);
  if (N.starts_with("cos.approx."))
    return Unary(Intrinsic::cos);
  if (N.starts_with("sqrt."))
    return Unary(Intrinsic::sqrt);
  if (N.starts_with("rsqrt.approx."))
    return Finish(B.CreateFDiv(ConstantFP::get(Ty, 1.0),
                               B.CreateUnaryIntrinsic(Intrinsic::sqrt, Arg(0))));
  if (N.starts_with("rcp."))
    return Finish(B.CreateFDiv(ConstantFP::get(Ty, 1.0), Arg(0)));
  if (N.starts_with("div.rn.") || N.starts_with("div.approx.") ||
      N.starts_with("div.full"))
    return Finish(B.CreateFDiv(Arg(0), Arg(1)));
  if (N.starts_with("add.rn."))
    return Finish(B.CreateFAdd(Arg(0), Arg(1)));
  if (N.starts_with("mul.rn."))
    return Finish(B.CreateFMul(Arg(0), Arg(1)));
  if (N == "mulhi.i" || N == "mulhi.ui" || N == "mulhi.ll" ||
      N == "mulhi.ull") {
    bool Signed = N == "mulhi.i" || N == "mulhi.ll";
    unsigned Bits = Ty->getIntegerBitWidth();
    Type *Wide = B.getIntNTy(2 * Bits);
    Value *A = Signed ? B.CreateSExt(Arg(0), Wide) : B.CreateZExt(Arg(0), Wide);
    Value *C = Signed ? B.CreateSExt(Arg(1), Wide) : B.CreateZExt(Arg(1), Wide);
    return Finish(B.CreateTrunc(B.CreateLShr(B.CreateMul(A, C), Bits), Ty));
  }
  if (N == "popc.i" || N == "popc.ll") {
    Value *V = B.CreateUnaryIntrinsic(Intrinsic::ctpop, Arg(0));
    return Finish(B.CreateZExtOrTrunc(V, Ty));
  }
  if (N == "clz.i" || N == "clz.ll") {
    Value *V = B.CreateBinaryIntrinsic(Intrinsic::ctlz, Arg(0), B.getFalse());
    return Finish(B.CreateZExtOrTrunc(V, Ty));
  }
  if (N == "brev32" || N == "brev64")
    return Unary(Intrinsic::bitreverse);
  if (N.starts_with("atomic.load.inc.32.") ||
      N.starts_with("atomic.load.dec.32.")) {
    // atom.inc: old >= b ? 0 : old + 1; atom.dec: old == 0 || old > b ? b :
    // old - 1: LLVM's uinc_wrap and udec_wrap.
    auto Op = N.contains(".inc.") ? AtomicRMWInst::UIncWrap
                                  : AtomicRMWInst::UDecWrap;
    return Finish(B.CreateAtomicRMW(Op, CI->getArgOperand(0),
                                    CI->getArgOperand(1), MaybeAlign(4),
                                    AtomicOrdering::SequentiallyConsistent));
  }
  if (N.starts_with("ldg.global.") || N.starts_with("ldu.global.")) {
    auto *Align = cast<ConstantInt>(CI->getArgOperand(1));
    return Finish(B.CreateAlignedLoad(Ty, CI->getArgOperand(0),
                                      MaybeAlign(Align->getZExtValue())));
  }
  return false;
}

/// nvcc's -fmad=true contracts a*b+c; clang marks contractable operations
/// with `contract` and fmuladd. The NVPTX backend fuses them with LLVM's
/// DAG-combiner rules in their aggressive form (a multiply with several uses
/// is still fused into each add). Fusing here, explicitly, with the same
/// rules and then clearing `contract` keeps the x86 backend from making
/// different choices (it fuses only single-use multiplies).
void fuseContractablePairs(Function &F) {
  SmallVector<Instruction *, 32> Adds;
  for (Instruction &I : instructions(F)) {
    if (auto *II = dyn_cast<IntrinsicInst>(&I);
        II && II->getIntrinsicID() == Intrinsic::fmuladd) {
      II->setCalledFunction(Intrinsic::getDeclaration(
          F.getParent(), Intrinsic::fma, {II->getType()}));
      continue;
    }
    if ((I.getOpcode() == Instruction::FAdd ||
         I.getOpcode() == Instruction::FSub) &&
        I.hasAllowContract())
      Adds.push_back(&I);
  }
  auto ContractableMul = [](Value *V) -> BinaryOperator * {
    auto *Mul = dyn_cast<BinaryOperator>(V);
    if (Mul && Mul->getOpcode() == Instruction::FMul &&
        Mul->hasAllowContract())
      return Mul;
    return nullptr;
  };
  for (Instruction *I : Adds) {
    BinaryOperator *M0 = ContractableMul(I->getOperand(0));
    BinaryOperator *M1 = ContractableMul(I->getOperand(1));
    bool IsSub = I->getOpcode() == Instruction::FSub;
    // Prefer the multiply with fewer uses, as the DAG combiner does.
    bool UseFirst = M0 && (!M1 || M0->getNumUses() <= M1->getNumUses());
    if (IsSub)
      UseFirst = M0 != nullptr;
    if (!M0 && !M1)
      continue;
    IRBuilder<> B(I);
    B.setFastMathFlags(I->getFastMathFlags());
    Value *X, *Y, *Z;
    if (UseFirst) {
      X = M0->getOperand(0);
      Y = M0->getOperand(1);
      Z = I->getOperand(1);
      if (IsSub)
        Z = B.CreateFNeg(Z);
    } else {
      X = M1->getOperand(0);
      Y = M1->getOperand(1);
      Z = I->getOperand(0);
      if (IsSub)
        X = B.CreateFNeg(X);
    }
    Value *Fma = B.CreateIntrinsic(Intrinsic::fma, {I->getType()}, {X, Y, Z});
    I->replaceAllUsesWith(Fma);
    I->eraseFromParent();
  }
  for (Instruction &I : make_early_inc_range(instructions(F))) {
    if (isa<FPMathOperator>(&I) && I.use_empty() &&
        I.getOpcode() == Instruction::FMul) {
      I.eraseFromParent();
      continue;
    }
    if (isa<FPMathOperator>(&I) && I.hasAllowContract())
      I.setHasAllowContract(false);
  }
}

//===----------------------------------------------------------------------===//
// One kernel
//===----------------------------------------------------------------------===//

/// Chain: a run of warp collectives that runs once per warp on vectors of
/// lanes (WarpChain.h) instead of a Gather and a Resume per collective.
enum class SyncKind { Entry, Barrier, Gather, Chain, Resume };

struct SyncPoint {
  BasicBlock *BB;
  SyncKind Kind;
  CallInst *Op = nullptr;     ///< the warp operation of a Gather point
  AllocaInst *Xchg = nullptr; ///< where lanes publish its operand
  uint32_t Key = 0;
  bool BlockWide = false; ///< needs every thread (sorts after warp states)
};

struct Region {
  SmallVector<BasicBlock *, 8> Blocks; ///< Blocks[0] is the sync block
};

/// Everything the host function needs from the prepared kernel.
class KernelLowering {
public:
  KernelLowering(Function &K, StringRef Name, const CPULowerCallbacks &CB)
      : K(K), Name(Name.str()), M(*K.getParent()), Ctx(K.getContext()),
        DL(M.getDataLayout()), CB(CB) {}

  /// Builds __cleave_cpu_<K> in K's module; a Refusal when it cannot.
  std::optional<Refusal> run();

  Function *Host = nullptr;
  uint64_t StaticSharedBytes = 0;
  uint64_t PrivateBytesPerThread = 0;
  bool Guarded = false;
  unsigned NumRegions = 0;
  ThreadIdSites Sites; ///< for the checked variant

private:
  std::optional<Refusal> inlineCalls();
  std::optional<Refusal> classifyAndLowerCalls();
  std::optional<Refusal> checkDivergence();
  void rematerializeSRegs();
  void rematerializePureValues();
  void splitAtSyncPoints();
  void demoteCrossBlockValues();
  void computeRegions();
  bool liveAtSyncPoint(AllocaInst *A) const;
  void layOutStorage();
  std::optional<Refusal> checkChains();
  void buildHost();

  // Host construction helpers.
  struct ThreadLoop {
    BasicBlock *Body, *Latch, *Exit;
    Value *Lin;
    Value *Tid[3];
  };
  ThreadLoop buildThreadLoop(BasicBlock *Pre, const Twine &Name);
  ThreadLoop buildFlatThreadLoop(BasicBlock *Pre, const Twine &Name);
  Value *perThreadSlot(IRBuilder<> &B, AllocaInst *A, Value *Lin);
  void emitRegion(unsigned S, BasicBlock *Pre, BasicBlock *Post);
  BasicBlock *emitChainRegion(unsigned S, BasicBlock *Pre);
  std::optional<SlotArray> slotsOf(AllocaInst *A) const;
  ThreadLoop emitRegionCopy(unsigned S, BasicBlock *Pre, const Twine &Name,
                            ArrayRef<std::pair<Instruction *, bool>> Folds);
  bool regionIsParallel(unsigned S) const;
  Value *mapPure(Value *V, IRBuilder<> &B, int Dim, Value *TidVal,
                 DenseMap<Value *, Value *> &Memo);
  std::optional<std::pair<Value *, Value *>>
  blockWideTruth(Value *C, IRBuilder<> &B);
  Value *analyzeGuards(unsigned S, IRBuilder<> &B,
                       SmallVectorImpl<std::pair<Instruction *, bool>> &Folds);
  void replaceThreadValues(Instruction &I, const ThreadLoop &L);
  void emitGather(CallInst *Op, const SyncPoint &SP, const ThreadLoop &L,
                  BasicBlock *Pre);

  Function &K;
  std::string Name; ///< the kernel's name in the device module
  Module &M;
  LLVMContext &Ctx;
  const DataLayout &DL;
  const CPULowerCallbacks &CB;

  SmallVector<CallInst *, 8> SyncCalls;
  SmallVector<WarpChain, 8> Chains;
  DenseMap<CallInst *, bool> SyncDivergent;
  SmallPtrSet<AllocaInst *, 16> Demoted;
  SmallPtrSet<AllocaInst *, 8> XchgAllocas;
  BasicBlock *AllocaBB = nullptr;
  SmallVector<SyncPoint, 8> Syncs; ///< Syncs[0] is the entry
  DenseMap<BasicBlock *, unsigned> SyncIndex;
  SmallVector<Region, 8> Regions;
  SmallVector<AllocaInst *, 16> Allocas;
  DenseMap<AllocaInst *, uint64_t> PerThreadOffset; ///< in bytes per thread
  DenseMap<AllocaInst *, uint64_t> PerThreadStride;
  AllocaInst *PC = nullptr, *PCNext = nullptr; ///< guarded mode state
  DenseMap<GlobalVariable *, uint64_t> SharedOffset; ///< ~0 = dynamic

  // Values of the host function.
  Value *BlockDim[3] = {}, *GridDim[3] = {}, *BlockIdx[3] = {};
  Value *NumThreads = nullptr, *Scratch = nullptr, *Private = nullptr;
  DenseMap<AllocaInst *, Value *> PerThreadBase;
  DenseMap<AllocaInst *, AllocaInst *> HostAlloca;
  SmallVector<std::pair<Value *, Value *>, 16> BaseMap;
  AllocaInst *NextSlot = nullptr, *MinSlot = nullptr;
  SmallVector<BasicBlock *, 8> RegionPre;
  BasicBlock *BlockLatch = nullptr;
};

std::optional<Refusal> KernelLowering::inlineCalls() {
  for (unsigned Round = 0; Round < 16; ++Round) {
    SmallVector<CallBase *, 8> Calls;
    for (Instruction &I : instructions(K))
      if (auto *CB = dyn_cast<CallBase>(&I))
        if (Function *F = CB->getCalledFunction(); F && !F->isDeclaration())
          Calls.push_back(CB);
    if (Calls.empty())
      return std::nullopt;
    for (CallBase *CB : Calls) {
      InlineFunctionInfo IFI;
      InlineResult R = InlineFunction(*CB, IFI);
      if (!R.isSuccess())
        return Refusal{("call to " + CB->getCalledFunction()->getName() +
                        " cannot be inlined (" + R.getFailureReason() + ")")
                           .str(),
                       CB};
    }
  }
  return Refusal{"call graph too deep to inline", &*K.getEntryBlock().begin()};
}

/// Rewrites the CUDA headers' inline PTX idioms (HeaderAsm.h) into IR and
/// drops dead asm; any other inline asm is refused, named.
static std::optional<Refusal> lowerInlineAsm(Function &K) {
  SmallVector<CallBase *, 8> Asms;
  for (Instruction &I : instructions(K))
    if (auto *CB = dyn_cast<CallBase>(&I); CB && CB->isInlineAsm())
      Asms.push_back(CB);
  for (CallBase *CB : Asms) {
    if (isDeadAsm(*CB)) {
      CB->eraseFromParent();
    } else if (std::optional<HeaderAsm> H = matchHeaderAsm(*CB)) {
      lowerHeaderAsm(*CB, *H);
    } else {
      StringRef Asm = cast<InlineAsm>(CB->getCalledOperand())->getAsmString();
      return Refusal{("inline assembly '" + Asm.trim() + "'").str(), CB};
    }
  }
  return std::nullopt;
}

std::optional<Refusal> KernelLowering::classifyAndLowerCalls() {
  if (auto R = lowerInlineAsm(K))
    return R;
  SmallVector<CallBase *, 16> Calls;
  for (Instruction &I : instructions(K)) {
    if (auto *CB = dyn_cast<CallBase>(&I))
      Calls.push_back(CB);
    if (auto *A = dyn_cast<AllocaInst>(&I);
        A && (A->getParent() != &K.getEntryBlock() ||
              !isa<ConstantInt>(A->getArraySize())))
      return Refusal{"dynamic alloca (alloca/VLA with a run-time size)", &I};
  }
  for (CallBase *CB : Calls) {
    Function *F = CB->getCalledFunction();
    switch (classifyCall(*CB)) {
    case CallKind::Ordinary:
      // Lifetime markers would end up on per-thread slots, not allocas.
      if (F->getIntrinsicID() == Intrinsic::lifetime_start ||
          F->getIntrinsicID() == Intrinsic::lifetime_end)
        CB->eraseFromParent();
      break;
    case CallKind::SReg:
      break;
    case CallKind::Fence:
      // One host thread runs the whole block in program order; fences
      // between threads of a block are implied by the region structure, and
      // across blocks the host atomics are sequentially consistent.
      new FenceInst(Ctx, AtomicOrdering::SequentiallyConsistent,
                    SyncScope::System, CB);
      CB->eraseFromParent();
      break;
    case CallKind::Barrier:
    case CallKind::SyncWarp:
    case CallKind::Shfl:
    case CallKind::Vote:
    case CallKind::ActiveMask:
    case CallKind::Match:
    case CallKind::Redux:
    case CallKind::BarrierRed:
      SyncCalls.push_back(cast<CallInst>(CB));
      break;
    case CallKind::Report:
      lowerDeviceReport(*CB);
      break;
    case CallKind::Math:
      if (!lowerNVVMMath(cast<CallInst>(CB)))
        return Refusal{("unsupported NVVM intrinsic " + F->getName()).str(),
                       CB};
      break;
    case CallKind::Unsupported:
      return Refusal{F ? ("call to " + F->getName()).str()
                       : std::string("indirect call"),
                     CB};
    }
  }
  return std::nullopt;
}

/// Rewrites a copy of a kernel so that the NVPTX TTI's divergence sources
/// are the ones that hold for a block rather than its conservative defaults:
/// block-uniform special registers (ntid, ctaid, nctaid, warpsize) and pure
/// intrinsics are not sources, and a load is divergent only through its
/// address. The TTI treats every call result and every generic load as
/// divergent, which would refuse any barrier under a loop bounded by
/// blockDim.
static void prepareForUniformity(Function &F) {
  Module &M = *F.getParent();
  for (Instruction &I : make_early_inc_range(instructions(F))) {
    IRBuilder<> B(&I);
    if (auto *LI = dyn_cast<LoadInst>(&I)) {
      unsigned AS = LI->getPointerAddressSpace();
      if (AS == 0 || AS == 5) {
        // Loads from global memory are sources only through their address.
        Value *P = B.CreateAddrSpaceCast(LI->getPointerOperand(),
                                         PointerType::get(F.getContext(), 1));
        LI->setOperand(LoadInst::getPointerOperandIndex(), P);
      }
      continue;
    }
    auto *CI = dyn_cast<CallInst>(&I);
    if (!CI || !CI->getCalledFunction() || CI->getType()->isVoidTy())
      continue;
    StringRef N = CI->getCalledFunction()->getName();
    bool UniformSReg =
        N.starts_with("llvm.nvvm.read.ptx.sreg.") &&
        (N.contains(".ntid.") || N.contains(".ctaid.") ||
         N.contains(".nctaid.") || N.ends_with(".warpsize"));
    if (UniformSReg) {
      auto *G = cast<GlobalVariable>(M.getOrInsertGlobal(
          ("cleave.uniform." + N).str(), CI->getType(), [&] {
            return new GlobalVariable(M, CI->getType(), true,
                                      GlobalValue::ExternalLinkage, nullptr,
                                      "cleave.uniform." + N, nullptr,
                                      GlobalValue::NotThreadLocal, 4);
          }));
      CI->replaceAllUsesWith(B.CreateLoad(CI->getType(), G));
      CI->eraseFromParent();
      continue;
    }
    // A pure intrinsic: a select whose condition depends on every operand
    // carries exactly their divergence.
    if (!CI->getCalledFunction()->isIntrinsic() || N.starts_with("llvm.nvvm.") ||
        !CI->doesNotAccessMemory() ||
        CI->isConvergent() || !CI->getType()->isSingleValueType() ||
        CI->getType()->isVectorTy())
      continue;
    Value *Cond = B.getTrue();
    bool Scalar = true;
    for (Value *Op : CI->args()) {
      Type *T = Op->getType();
      if (T->isIntOrPtrTy())
        Cond = B.CreateAnd(Cond, B.CreateICmpEQ(Op, Op));
      else if (T->isFloatingPointTy())
        Cond = B.CreateAnd(Cond, B.CreateFCmpOEQ(Op, Op));
      else
        Scalar = false;
    }
    if (!Scalar)
      continue;
    Value *Zero = Constant::getNullValue(CI->getType());
    CI->replaceAllUsesWith(B.CreateSelect(Cond, Zero, Zero));
    CI->eraseFromParent();
  }
}

std::optional<Refusal> KernelLowering::checkDivergence() {
  if (SyncCalls.empty())
    return std::nullopt;
  // The analysis runs on a rewritten copy; blocks map back one to one.
  ValueToValueMapTy CopyMap;
  Function *Copy = CloneFunction(&K, CopyMap);
  // Kernel arguments are uniform only for a kernel (in the TTI's eyes).
  Copy->setCallingConv(CallingConv::PTX_Kernel);
  prepareForUniformity(*Copy);
  UniformityInfo *UIP = CB.GetUniformity(*Copy);
  SmallPtrSet<const BasicBlock *, 16> DivergentlyControlled;
  if (UIP) {
    UniformityInfo &UI = *UIP;
    PostDominatorTree PDT(*Copy);
    DenseMap<const BasicBlock *, BasicBlock *> Back;
    for (BasicBlock &BB : K)
      Back[cast<BasicBlock>(CopyMap[&BB])] = &BB;
    // Blocks control-dependent on a divergent branch: from each successor
    // up the post-dominator tree to the branch's immediate post-dominator.
    for (BasicBlock &BB : *Copy) {
      if (!UI.hasDivergentTerminator(BB))
        continue;
      auto *Node = PDT.getNode(&BB);
      auto *Stop = Node ? Node->getIDom() : nullptr;
      for (BasicBlock *Succ : successors(&BB))
        for (auto *N = PDT.getNode(Succ); N && N != Stop; N = N->getIDom())
          if (N->getBlock())
            DivergentlyControlled.insert(Back.lookup(N->getBlock()));
    }
  }
  CB.Forget(*Copy);
  Copy->eraseFromParent();
  for (GlobalVariable &GV : make_early_inc_range(M.globals()))
    if (GV.getName().starts_with("cleave.uniform.") && GV.use_empty())
      GV.eraseFromParent();
  if (!UIP)
    return Refusal{"barrier or warp operation without divergence information "
                   "(no NVPTX target)",
                   SyncCalls.front()};
  for (CallInst *CI : SyncCalls) {
    bool Divergent = DivergentlyControlled.contains(CI->getParent());
    SyncDivergent[CI] = Divergent;
    if (!Divergent)
      continue;
    if (classifyCall(*CI) == CallKind::Barrier)
      return Refusal{"__syncthreads()/barrier() under thread-divergent control "
                     "flow",
                     CI};
    if (classifyCall(*CI) == CallKind::BarrierRed)
      return Refusal{"__syncthreads_count/and/or under thread-divergent "
                     "control flow",
                     CI};
    // A warp operation in block-divergent control: the scheduler must let
    // each thread reach it on its own time.
    Guarded = true;
  }
  return std::nullopt;
}

void KernelLowering::rematerializeSRegs() {
  // A special register read per use keeps thread ids out of the values that
  // cross blocks, so they are never stored per thread.
  SmallVector<CallInst *, 16> Reads;
  for (Instruction &I : instructions(K))
    if (auto *CI = dyn_cast<CallInst>(&I))
      if (classifyCall(*CI) == CallKind::SReg)
        Reads.push_back(CI);
  for (CallInst *CI : Reads) {
    for (Use &U : make_early_inc_range(CI->uses())) {
      auto *User = cast<Instruction>(U.getUser());
      Instruction *InsertPt = User;
      if (auto *Phi = dyn_cast<PHINode>(User))
        InsertPt = Phi->getIncomingBlock(U)->getTerminator();
      Instruction *Copy = CI->clone();
      Copy->insertBefore(InsertPt);
      U.set(Copy);
    }
    CI->eraseFromParent();
  }
}

/// A value that is the same wherever it is computed: a pure function of
/// special registers (thread ids, block ids, launch dimensions), kernel
/// arguments, addresses of shared variables and private allocas, and
/// constants, through integer arithmetic (no division), casts, comparisons,
/// selects and GEPs. Cost counts the instructions of its expression tree.
static bool isRematerializable(Value *V, DenseMap<Instruction *, unsigned> &Cost,
                               unsigned &Out) {
  Out = 0;
  if (isa<Constant>(V) || isa<Argument>(V) || isa<AllocaInst>(V))
    return true;
  auto *I = dyn_cast<Instruction>(V);
  if (!I)
    return false;
  if (auto It = Cost.find(I); It != Cost.end()) {
    Out = It->second;
    return Out != ~0u;
  }
  Cost[I] = ~0u; // no cycles through phis, but be safe
  bool Ok = false;
  if (auto *CI = dyn_cast<CallInst>(I))
    Ok = classifyCall(*CI) == CallKind::SReg;
  else if (auto *BO = dyn_cast<BinaryOperator>(I))
    Ok = BO->getType()->isIntOrIntVectorTy() && !BO->isIntDivRem();
  else
    Ok = isa<CastInst>(I) || isa<ICmpInst>(I) || isa<SelectInst>(I) ||
         isa<GetElementPtrInst>(I) || isa<FreezeInst>(I);
  if (isa<CastInst>(I) && !I->getType()->isIntOrPtrTy())
    Ok = false;
  unsigned Total = 1;
  if (Ok && !isa<CallInst>(I))
    for (Value *Op : I->operands()) {
      unsigned C;
      if (!isRematerializable(Op, Cost, C)) {
        Ok = false;
        break;
      }
      Total += C;
    }
  // Keep the recomputed trees small.
  if (Ok && Total > 24)
    Ok = false;
  Cost[I] = Ok ? Total : ~0u;
  Out = Ok ? Total : 0;
  return Ok;
}

void KernelLowering::rematerializePureValues() {
  // Values that cross blocks are demoted to allocas, and those live at a
  // sync point get a slot per thread: every region would then reload, say,
  // &sdata[tid] from memory, which hides the address from SCEV and the
  // vectorizer. A pure function of thread ids and launch values is instead
  // recomputed at each use in another block (as the special registers are).
  DenseMap<Instruction *, unsigned> Cost;
  SmallVector<Use *, 32> Uses;
  for (BasicBlock &BB : K) {
    if (&BB == AllocaBB)
      continue;
    for (Instruction &I : BB) {
      if (isa<CallInst>(&I) || isa<AllocaInst>(&I))
        continue; // special registers are rematerialized already
      unsigned C;
      bool Crosses = any_of(I.uses(), [&](Use &U) {
        auto *UI = cast<Instruction>(U.getUser());
        return UI->getParent() != &BB || isa<PHINode>(UI);
      });
      if (!Crosses || !isRematerializable(&I, Cost, C))
        continue;
      for (Use &U : I.uses())
        if (auto *UI = cast<Instruction>(U.getUser());
            UI->getParent() != &BB || isa<PHINode>(UI))
          Uses.push_back(&U);
    }
  }
  // Clones I before At, with the operands that are not available there
  // (defined in another block) cloned too.
  std::function<Value *(Instruction *, Instruction *)> CloneAt =
      [&](Instruction *I, Instruction *At) -> Value * {
    Instruction *C = I->clone();
    for (Use &Op : C->operands())
      if (auto *OI = dyn_cast<Instruction>(Op.get());
          OI && !isa<AllocaInst>(OI) && OI->getParent() != At->getParent())
        Op.set(CloneAt(OI, At));
    C->insertBefore(At);
    if (I->hasName())
      C->setName(I->getName() + ".remat");
    return C;
  };
  for (Use *U : Uses) {
    auto *I = cast<Instruction>(U->get());
    auto *User = cast<Instruction>(U->getUser());
    Instruction *At = User;
    if (auto *Phi = dyn_cast<PHINode>(User))
      At = Phi->getIncomingBlock(*U)->getTerminator();
    if (At->getParent() == I->getParent())
      continue; // a phi whose incoming edge comes from I's own block
    U->set(CloneAt(I, At));
  }
  for (BasicBlock &BB : K)
    for (Instruction &I : make_early_inc_range(reverse(BB)))
      if (I.use_empty() && !I.isTerminator() && Cost.count(&I) &&
          Cost[&I] != ~0u && !isa<CallInst>(&I))
        I.eraseFromParent();
}

void KernelLowering::splitAtSyncPoints() {
  // Allocas live in a block of their own that no region contains.
  BasicBlock &Entry = K.getEntryBlock();
  BasicBlock::iterator FirstNonAlloca = Entry.begin();
  while (isa<AllocaInst>(&*FirstNonAlloca))
    ++FirstNonAlloca;
  BasicBlock *Start = Entry.splitBasicBlock(FirstNonAlloca, "cpu.start");
  AllocaBB = &Entry;
  Syncs.push_back({Start, SyncKind::Entry});

  IRBuilder<> AB(AllocaBB->getTerminator());
  DenseMap<Instruction *, const WarpChain *> ChainAt;
  SmallPtrSet<Instruction *, 16> InChain;
  for (const WarpChain &C : Chains) {
    ChainAt[C.First] = &C;
    for (Instruction &I :
         make_range(C.First->getIterator(), std::next(C.Last->getIterator())))
      InChain.insert(&I);
  }
  for (CallInst *CI : SyncCalls) {
    if (const WarpChain *C = ChainAt.lookup(CI)) {
      BasicBlock *At = CI->getParent()->splitBasicBlock(CI, "cpu.chain");
      BasicBlock *After =
          At->splitBasicBlock(std::next(C->Last->getIterator()), "cpu.resume");
      Syncs.push_back({At, SyncKind::Chain});
      Syncs.push_back({After, SyncKind::Resume});
      continue;
    }
    if (InChain.contains(CI))
      continue;
    CallKind Kind = classifyCall(*CI);
    BasicBlock *At = CI->getParent()->splitBasicBlock(CI, "cpu.sync");
    if (Kind == CallKind::Barrier || Kind == CallKind::SyncWarp) {
      CI->eraseFromParent();
      Syncs.push_back({At, SyncKind::Barrier});
      if (Kind == CallKind::SyncWarp)
        Syncs.back().Kind = SyncKind::Resume; // warp-level: no bias
      continue;
    }
    // Publish the operand at the end of the region that reaches the
    // operation, gather in a region of its own, resume after it.
    AllocaInst *Xchg = nullptr;
    Value *Published = nullptr;
    // Which operand each lane publishes: the value (shfl, vote, match: 1;
    // redux.sync(src, mask) and barrier0.popc/and/or: 0).
    unsigned PubArg =
        Kind == CallKind::Redux || Kind == CallKind::BarrierRed ? 0 : 1;
    if (Kind != CallKind::ActiveMask)
      Published = CI->getArgOperand(PubArg);
    if (Published) {
      Type *SlotTy = Published->getType()->isIntegerTy(64) ? AB.getInt64Ty()
                                                           : AB.getInt32Ty();
      Xchg = AB.CreateAlloca(SlotTy, nullptr, "cpu.xchg");
      XchgAllocas.insert(Xchg);
      IRBuilder<> PB(At->getSinglePredecessor()->getTerminator());
      Value *V = Published;
      if (V->getType()->isFloatTy())
        V = PB.CreateBitCast(V, PB.getInt32Ty());
      else if (V->getType()->isIntegerTy(1))
        V = PB.CreateZExt(V, PB.getInt32Ty());
      PB.CreateStore(V, Xchg);
      CI->setArgOperand(PubArg, PoisonValue::get(Published->getType()));
    }
    BasicBlock *After =
        At->splitBasicBlock(std::next(CI->getIterator()), "cpu.resume");
    Syncs.push_back({At, SyncKind::Gather, CI, Xchg});
    Syncs.back().BlockWide = Kind == CallKind::BarrierRed;
    Syncs.push_back({After, SyncKind::Resume});
  }
}

void KernelLowering::demoteCrossBlockValues() {
  // reg2mem, restricted to what crosses blocks: regions duplicate blocks, and
  // mem2reg rebuilds SSA form inside each copy afterwards.
  // Phis first: their reloads are values that may cross blocks too.
  auto AllocaPt = AllocaBB->getTerminator()->getIterator();
  SmallVector<PHINode *, 16> Phis;
  for (BasicBlock &BB : K)
    for (PHINode &P : BB.phis())
      Phis.push_back(&P);
  for (PHINode *P : Phis)
    if (AllocaInst *A = DemotePHIToStack(P, AllocaPt))
      Demoted.insert(A);
  SmallVector<Instruction *, 32> Worklist;
  for (BasicBlock &BB : K) {
    if (&BB == AllocaBB)
      continue;
    for (Instruction &I : BB) {
      bool Escapes = any_of(I.users(), [&](User *U) {
        return cast<Instruction>(U)->getParent() != &BB;
      });
      if (Escapes)
        Worklist.push_back(&I);
    }
  }
  for (Instruction *I : Worklist)
    if (AllocaInst *A = DemoteRegToStack(*I, false, AllocaPt))
      Demoted.insert(A);
  // DemoteRegToStack may put allocas at the iterator; keep them all in
  // AllocaBB before its terminator.
  for (Instruction &I : make_early_inc_range(K.getEntryBlock()))
    if (auto *A = dyn_cast<AllocaInst>(&I))
      Allocas.push_back(A);
}

void KernelLowering::computeRegions() {
  for (unsigned I = 0; I < Syncs.size(); ++I)
    SyncIndex[Syncs[I].BB] = I;
  for (SyncPoint &SP : Syncs) {
    Region R;
    SmallPtrSet<BasicBlock *, 16> Seen{SP.BB};
    R.Blocks.push_back(SP.BB);
    for (unsigned I = 0; I < R.Blocks.size(); ++I)
      for (BasicBlock *Succ : successors(R.Blocks[I]))
        if (!SyncIndex.count(Succ) && Seen.insert(Succ).second)
          R.Blocks.push_back(Succ);
    Regions.push_back(std::move(R));
  }
  NumRegions = Regions.size();
  // Keys: program order of the sync blocks (a reverse post-order walk), with
  // block barriers after every warp-level state.
  DenseMap<BasicBlock *, unsigned> Order;
  unsigned N = 0;
  SmallPtrSet<BasicBlock *, 32> Visited;
  SmallVector<BasicBlock *, 32> Post;
  // Iterative post-order.
  SmallVector<std::pair<BasicBlock *, succ_iterator>, 32> DFS;
  DFS.push_back({&K.getEntryBlock(), succ_begin(&K.getEntryBlock())});
  Visited.insert(&K.getEntryBlock());
  while (!DFS.empty()) {
    auto &[BB, It] = DFS.back();
    if (It != succ_end(BB)) {
      BasicBlock *S = *It++;
      if (Visited.insert(S).second)
        DFS.push_back({S, succ_begin(S)});
      continue;
    }
    Post.push_back(BB);
    DFS.pop_back();
  }
  for (BasicBlock *BB : reverse(Post))
    Order[BB] = N++;
  for (SyncPoint &SP : Syncs)
    SP.Key = Order.lookup(SP.BB) +
             (SP.Kind == SyncKind::Barrier || SP.BlockWide ? BarrierBias : 0);
}

bool KernelLowering::liveAtSyncPoint(AllocaInst *A) const {
  // Live at a sync block when some path from it reads A before writing it.
  for (const SyncPoint &SP : Syncs) {
    if (SP.Kind == SyncKind::Entry)
      continue;
    SmallVector<const BasicBlock *, 16> Work{SP.BB};
    SmallPtrSet<const BasicBlock *, 16> Seen{SP.BB};
    while (!Work.empty()) {
      const BasicBlock *BB = Work.pop_back_val();
      bool Killed = false;
      for (const Instruction &I : *BB) {
        if (auto *S = dyn_cast<StoreInst>(&I);
            S && S->getPointerOperand() == A && S->getValueOperand() != A) {
          Killed = true;
          break;
        }
        if (is_contained(I.operands(), A))
          return true;
      }
      if (!Killed)
        for (const BasicBlock *Succ : successors(BB))
          if (Seen.insert(Succ).second)
            Work.push_back(Succ);
    }
  }
  return false;
}

void KernelLowering::layOutStorage() {
  // Shared memory: static variables in order, then the dynamic area.
  SmallPtrSet<GlobalVariable *, 8> Used;
  for (Instruction &I : instructions(K))
    for (Value *Op : I.operands())
      if (auto *GV = dyn_cast<GlobalVariable>(Op->stripPointerCasts()))
        if (GV->getAddressSpace() == 3)
          Used.insert(GV);
  uint64_t Offset = 0;
  for (GlobalVariable &GV : M.globals()) {
    if (!Used.contains(&GV))
      continue;
    uint64_t Size = DL.getTypeAllocSize(GV.getValueType());
    if (GV.isDeclaration() || Size == 0) {
      SharedOffset[&GV] = ~0ull; // extern __shared__
      continue;
    }
    Offset = alignTo(Offset, std::max<uint64_t>(GV.getAlign().valueOrOne().value(), 16));
    SharedOffset[&GV] = Offset;
    Offset += Size;
  }
  StaticSharedBytes = Offset;

  IRBuilder<> AB(AllocaBB->getTerminator());
  if (Guarded) {
    PC = AB.CreateAlloca(AB.getInt32Ty(), nullptr, "cpu.pc");
    PCNext = AB.CreateAlloca(AB.getInt32Ty(), nullptr, "cpu.pc.next");
    Allocas.push_back(PC);
    Allocas.push_back(PCNext);
  }
  // Per-thread storage: an array of one slot per thread for each alloca that
  // a sync point separates from its next read.
  uint64_t PerThread = 0;
  for (AllocaInst *A : Allocas) {
    bool Needs;
    if (A == PC || A == PCNext || XchgAllocas.contains(A))
      Needs = true;
    else if (Demoted.contains(A))
      Needs = liveAtSyncPoint(A);
    else // the kernel's own private memory; its address may escape
      Needs = Regions.size() > 1;
    if (!Needs)
      continue;
    uint64_t Align = std::max<uint64_t>(A->getAlign().value(), 4);
    uint64_t Stride =
        alignTo(DL.getTypeAllocSize(A->getAllocatedType()), Align);
    PerThread = alignTo(PerThread, Align);
    PerThreadOffset[A] = PerThread;
    PerThreadStride[A] = Stride;
    PerThread += Stride;
  }
  PrivateBytesPerThread = alignTo(PerThread, 16);
}

KernelLowering::ThreadLoop
KernelLowering::buildThreadLoop(BasicBlock *Pre, const Twine &Name) {
  if (Guarded)
    return buildFlatThreadLoop(Pre, Name);
  Function *H = Host;
  Type *I32 = Type::getInt32Ty(Ctx);
  auto *ZH = BasicBlock::Create(Ctx, Name + ".z", H);
  auto *YH = BasicBlock::Create(Ctx, Name + ".y", H);
  auto *XH = BasicBlock::Create(Ctx, Name + ".x", H);
  auto *Body = BasicBlock::Create(Ctx, Name + ".body", H);
  auto *XL = BasicBlock::Create(Ctx, Name + ".x.latch", H);
  auto *YL = BasicBlock::Create(Ctx, Name + ".y.latch", H);
  auto *ZL = BasicBlock::Create(Ctx, Name + ".z.latch", H);
  auto *Exit = BasicBlock::Create(Ctx, Name + ".exit", H);
  IRBuilder<> B(Pre);
  B.CreateBr(ZH);
  B.SetInsertPoint(ZH);
  PHINode *Tz = B.CreatePHI(I32, 2, "tid.z");
  B.CreateCondBr(B.CreateICmpULT(Tz, BlockDim[2]), YH, Exit);
  B.SetInsertPoint(YH);
  PHINode *Ty = B.CreatePHI(I32, 2, "tid.y");
  B.CreateCondBr(B.CreateICmpULT(Ty, BlockDim[1]), XH, ZL);
  B.SetInsertPoint(XH);
  PHINode *Tx = B.CreatePHI(I32, 2, "tid.x");
  B.CreateCondBr(B.CreateICmpULT(Tx, BlockDim[0]), Body, YL);
  B.SetInsertPoint(XL);
  Value *Tx1 = B.CreateAdd(Tx, B.getInt32(1), "", true, true);
  B.CreateBr(XH);
  B.SetInsertPoint(YL);
  Value *Ty1 = B.CreateAdd(Ty, B.getInt32(1), "", true, true);
  B.CreateBr(YH);
  B.SetInsertPoint(ZL);
  Value *Tz1 = B.CreateAdd(Tz, B.getInt32(1), "", true, true);
  B.CreateBr(ZH);
  Tz->addIncoming(B.getInt32(0), Pre);
  Tz->addIncoming(Tz1, ZL);
  Ty->addIncoming(B.getInt32(0), ZH);
  Ty->addIncoming(Ty1, YL);
  Tx->addIncoming(B.getInt32(0), YH);
  Tx->addIncoming(Tx1, XL);
  B.SetInsertPoint(Body);
  Type *I64 = B.getInt64Ty();
  Value *Lin = B.CreateZExt(Tz, I64);
  Lin = B.CreateMul(Lin, B.CreateZExt(BlockDim[1], I64), "", true, true);
  Lin = B.CreateAdd(Lin, B.CreateZExt(Ty, I64), "", true, true);
  Lin = B.CreateMul(Lin, B.CreateZExt(BlockDim[0], I64), "", true, true);
  Lin = B.CreateAdd(Lin, B.CreateZExt(Tx, I64), "lin", true, true);
  Sites.Loops.push_back({Body, Lin});
  return {Body, XL, Exit, Lin, {Tx, Ty, Tz}};
}

/// The threads of a block as one loop over the linear id, the thread ids
/// stepped along (x fastest): guarded regions are never vectorized, and one
/// loop instead of three keeps the many regions and commit loops of a
/// guarded kernel cheap to optimize.
KernelLowering::ThreadLoop
KernelLowering::buildFlatThreadLoop(BasicBlock *Pre, const Twine &Name) {
  Type *I32 = Type::getInt32Ty(Ctx), *I64 = Type::getInt64Ty(Ctx);
  auto *Hdr = BasicBlock::Create(Ctx, Name + ".t", Host);
  auto *Body = BasicBlock::Create(Ctx, Name + ".body", Host);
  auto *Latch = BasicBlock::Create(Ctx, Name + ".latch", Host);
  auto *Exit = BasicBlock::Create(Ctx, Name + ".exit", Host);
  IRBuilder<> B(Pre);
  B.CreateBr(Hdr);
  B.SetInsertPoint(Hdr);
  PHINode *Lin = B.CreatePHI(I64, 2, "lin");
  PHINode *Tid[3];
  for (unsigned D = 0; D < 3; ++D)
    Tid[D] = B.CreatePHI(I32, 2, "tid." + Twine("xyz"[D]));
  B.CreateCondBr(B.CreateICmpULT(Lin, NumThreads), Body, Exit);
  B.SetInsertPoint(Latch);
  Value *Next[3];
  Value *Carry = B.getTrue();
  for (unsigned D = 0; D < 3; ++D) {
    Value *Up = B.CreateAdd(Tid[D], B.CreateZExt(Carry, I32));
    Value *Wrap = B.CreateICmpEQ(Up, BlockDim[D]);
    Next[D] = D == 2 ? Up : B.CreateSelect(Wrap, B.getInt32(0), Up);
    Carry = Wrap;
  }
  Value *Lin1 = B.CreateAdd(Lin, B.getInt64(1), "", true, true);
  B.CreateBr(Hdr);
  Lin->addIncoming(B.getInt64(0), Pre);
  Lin->addIncoming(Lin1, Latch);
  for (unsigned D = 0; D < 3; ++D) {
    Tid[D]->addIncoming(B.getInt32(0), Pre);
    Tid[D]->addIncoming(Next[D], Latch);
  }
  Sites.Loops.push_back({Body, Lin});
  return {Body, Latch, Exit, Lin, {Tid[0], Tid[1], Tid[2]}};
}

Value *KernelLowering::perThreadSlot(IRBuilder<> &B, AllocaInst *A,
                                     Value *Lin) {
  Value *Off = B.CreateMul(Lin, B.getInt64(PerThreadStride.lookup(A)), "",
                           true, true);
  return B.CreateInBoundsGEP(B.getInt8Ty(), PerThreadBase.lookup(A), Off,
                             A->getName() + ".slot");
}

void KernelLowering::replaceThreadValues(Instruction &I, const ThreadLoop &L) {
  auto *CI = dyn_cast<CallInst>(&I);
  if (!CI || classifyCall(*CI) != CallKind::SReg)
    return;
  StringRef N = CI->getCalledFunction()->getName();
  N.consume_front("llvm.nvvm.read.ptx.sreg.");
  IRBuilder<> B(CI);
  auto Dim = [&](StringRef S) { return S.back() - 'x'; };
  Value *Lane = B.CreateAnd(B.CreateTrunc(L.Lin, B.getInt32Ty()), WarpSize - 1);
  Value *V = nullptr;
  if (N.starts_with("tid."))
    V = L.Tid[Dim(N)];
  else if (N.starts_with("ntid."))
    V = BlockDim[Dim(N)];
  else if (N.starts_with("ctaid."))
    V = BlockIdx[Dim(N)];
  else if (N.starts_with("nctaid."))
    V = GridDim[Dim(N)];
  else if (N == "laneid")
    V = Lane;
  else if (N == "warpsize")
    V = B.getInt32(WarpSize);
  else {
    Value *Eq = B.CreateShl(B.getInt32(1), Lane);
    if (N == "lanemask.eq")
      V = Eq;
    else if (N == "lanemask.lt")
      V = B.CreateSub(Eq, B.getInt32(1));
    else if (N == "lanemask.le")
      V = B.CreateOr(Eq, B.CreateSub(Eq, B.getInt32(1)));
    else if (N == "lanemask.gt")
      V = B.CreateNot(B.CreateOr(Eq, B.CreateSub(Eq, B.getInt32(1))));
    else // lanemask.ge
      V = B.CreateNot(B.CreateSub(Eq, B.getInt32(1)));
  }
  CI->replaceAllUsesWith(V);
  CI->eraseFromParent();
}

void KernelLowering::emitGather(CallInst *Op, const SyncPoint &SP,
                                const ThreadLoop &L, BasicBlock *Pre) {
  IRBuilder<> B(Op);
  Type *I32 = B.getInt32Ty(), *I64 = B.getInt64Ty();
  StringRef N = Op->getCalledFunction()->getName();
  N.consume_front("llvm.nvvm.");
  Value *Lane = B.CreateAnd(B.CreateTrunc(L.Lin, I32), WarpSize - 1, "lane");
  Value *WarpBase = B.CreateAnd(L.Lin, ~uint64_t(WarpSize - 1), "warp.base");
  Value *PCBase = PC ? PerThreadBase.lookup(PC)
                     : ConstantPointerNull::get(B.getPtrTy());
  Value *Key = B.getInt32(SP.Key);
  Value *XchgBase =
      SP.Xchg ? PerThreadBase.lookup(SP.Xchg) : ConstantPointerNull::get(B.getPtrTy());
  FunctionCallee Bits = M.getOrInsertFunction(
      WarpBitsHelper, I32, B.getPtrTy(), B.getPtrTy(), I32, I64, I64);
  auto WarpBits = [&](Value *Pred) {
    return B.CreateCall(Bits, {Pred, PCBase, Key, WarpBase, NumThreads});
  };
  Value *Result = nullptr;
  if (N.starts_with("shfl.sync.")) {
    // PTX ISA, shfl.sync: c packs the segment mask (bits 8-12) and the clamp
    // value (bits 0-4); the source lane j is valid when within the clamp.
    StringRef Mode = N.drop_front(strlen("shfl.sync.")).split('.').first;
    // Only b[4:0] takes part (PTX ISA).
    Value *Bv = B.CreateAnd(Op->getArgOperand(2), 31);
    Value *Cv = Op->getArgOperand(3);
    Value *SegMask = B.CreateAnd(B.CreateLShr(Cv, 8), 31);
    Value *NotSeg = B.CreateNot(SegMask);
    Value *MaxLane = B.CreateOr(B.CreateAnd(Lane, SegMask),
                                B.CreateAnd(B.CreateAnd(Cv, 31), NotSeg));
    Value *MinLane = B.CreateAnd(Lane, SegMask);
    Value *J, *InRange;
    if (Mode == "up") {
      J = B.CreateSub(Lane, Bv);
      InRange = B.CreateICmpSGE(J, MaxLane);
    } else if (Mode == "down") {
      J = B.CreateAdd(Lane, Bv);
      InRange = B.CreateICmpSLE(J, MaxLane);
    } else if (Mode == "bfly") {
      J = B.CreateXor(Lane, Bv);
      InRange = B.CreateICmpSLE(J, MaxLane);
    } else { // idx
      J = B.CreateOr(MinLane, B.CreateAnd(Bv, NotSeg));
      InRange = B.CreateICmpSLE(J, MaxLane);
    }
    Value *Src = B.CreateSelect(InRange, J, Lane);
    Value *SrcLin = B.CreateAdd(WarpBase, B.CreateZExt(B.CreateAnd(Src, 31), I64));
    // A lane past the end of a partial warp does not exist; its value is
    // undefined on the GPU, here it is the reader's own.
    SrcLin = B.CreateSelect(B.CreateICmpULT(SrcLin, NumThreads), SrcLin, L.Lin);
    Value *Raw = B.CreateLoad(
        I32, B.CreateInBoundsGEP(I32, XchgBase, SrcLin), "shfl.raw");
    Type *ValTy = Op->getType();
    bool WithPred = ValTy->isStructTy();
    Type *ElemTy = WithPred ? ValTy->getStructElementType(0) : ValTy;
    Value *Val = B.CreateBitCast(Raw, ElemTy);
    if (WithPred) {
      Result = B.CreateInsertValue(PoisonValue::get(ValTy), Val, 0);
      Result = B.CreateInsertValue(Result, InRange, 1);
    } else {
      Result = Val;
    }
  } else if (N.starts_with("vote.")) {
    Value *Mask = Op->getArgOperand(0);
    Value *Set = B.CreateAnd(WarpBits(XchgBase), Mask);
    Value *Active = B.CreateAnd(
        WarpBits(ConstantPointerNull::get(B.getPtrTy())), Mask);
    if (N == "vote.ballot.sync")
      Result = Set;
    else if (N == "vote.any.sync")
      Result = B.CreateICmpNE(Set, B.getInt32(0));
    else if (N == "vote.all.sync")
      Result = B.CreateICmpEQ(Set, Active);
    else // uni: all active lanes agree
      Result = B.CreateOr(B.CreateICmpEQ(Set, B.getInt32(0)),
                          B.CreateICmpEQ(Set, Active));
  } else if (N.starts_with("match.") || N.starts_with("redux.sync.")) {
    // The lanes that take part: existing, at this operation, in the mask
    // (match.*(mask, value), redux.sync(src, mask)). The runtime helpers
    // (CpuWarp in CpuMath.cpp) read the published values of the warp.
    bool IsMatch = N.starts_with("match.");
    Value *Mask = Op->getArgOperand(IsMatch ? 0 : 1);
    Value *Part = B.CreateAnd(
        WarpBits(ConstantPointerNull::get(B.getPtrTy())), Mask, "part");
    Type *SlotTy = SP.Xchg->getAllocatedType();
    bool Wide = SlotTy->isIntegerTy(64);
    Value *Warp = B.CreateInBoundsGEP(SlotTy, XchgBase, WarpBase, "warp.xchg");
    if (IsMatch) {
      bool All = N.starts_with("match.all.");
      std::string Helper = std::string("__cleave_rt_match_") +
                           (All ? "all" : "any") + (Wide ? "_b64" : "_b32");
      FunctionCallee FC = M.getOrInsertFunction(Helper, I32, B.getPtrTy(), I32, I32);
      Value *R = B.CreateCall(FC, {Warp, Part, Lane});
      if (All) {
        Result = B.CreateInsertValue(PoisonValue::get(Op->getType()), R, 0);
        Result = B.CreateInsertValue(Result, B.CreateICmpNE(R, B.getInt32(0)), 1);
      } else {
        Result = R;
      }
    } else {
      unsigned Kind = StringSwitch<unsigned>(N.drop_front(strlen("redux.sync.")))
                          .Case("add", 0).Case("min", 1).Case("max", 2)
                          .Case("umin", 3).Case("umax", 4).Case("and", 5)
                          .Case("or", 6).Case("xor", 7);
      FunctionCallee FC = M.getOrInsertFunction("__cleave_rt_redux_b32", I32,
                                                B.getPtrTy(), I32, I32);
      Result = B.CreateCall(FC, {Warp, Part, B.getInt32(Kind)});
    }
  } else if (N.starts_with("barrier0.")) {
    // __syncthreads_count/and/or: every thread of the block has published
    // its predicate when this region starts, so the result is computed once,
    // before the thread loop.
    IRBuilder<> PB(Pre->getTerminator());
    unsigned Kind = N == "barrier0.popc" ? 0 : N == "barrier0.and" ? 1 : 2;
    FunctionCallee FC = M.getOrInsertFunction("__cleave_rt_block_red_b32", I32,
                                              B.getPtrTy(), I64, I32);
    Result = PB.CreateCall(FC, {XchgBase, NumThreads, PB.getInt32(Kind)},
                           "block.red");
  } else { // activemask
    Result = WarpBits(ConstantPointerNull::get(B.getPtrTy()));
  }
  Op->replaceAllUsesWith(Result);
  Op->eraseFromParent();
}

/// Whether the threads of region S may run as a loop whose iterations are
/// independent (llvm.loop.parallel_accesses): by the CUDA/OpenCL memory
/// model, two threads of a block that touch one location between two
/// barriers, one of them writing, race, unless the accesses are atomic or the
/// code is warp-synchronous. So: not in guarded mode, not in a gather region,
/// not with atomics, fences or volatile accesses, not where lanes publish
/// operands for a warp operation, and not when the region uses private memory
/// that the host function shares between threads (a kernel array that did
/// not get per-thread slots).
bool KernelLowering::regionIsParallel(unsigned S) const {
  if (Guarded || Syncs[S].Kind == SyncKind::Gather)
    return false;
  for (BasicBlock *BB : Regions[S].Blocks)
    for (Instruction &I : *BB) {
      if (isa<AtomicRMWInst>(&I) || isa<AtomicCmpXchgInst>(&I) ||
          isa<FenceInst>(&I))
        return false;
      if (auto *LI = dyn_cast<LoadInst>(&I);
          LI && (LI->isVolatile() || LI->isAtomic()))
        return false;
      if (auto *SI = dyn_cast<StoreInst>(&I)) {
        if (SI->isVolatile() || SI->isAtomic())
          return false;
        if (auto *A = dyn_cast<AllocaInst>(SI->getPointerOperand());
            A && XchgAllocas.contains(A))
          return false;
      }
      if (auto *MI = dyn_cast<MemIntrinsic>(&I); MI && MI->isVolatile())
        return false;
      if (auto *CI = dyn_cast<CallInst>(&I)) {
        Function *F = CI->getCalledFunction();
        if (!F || (!F->isIntrinsic() &&
                   !F->getName().starts_with("__cleave_rt_fma_")))
          return false;
      }
    }
  // A kernel array in one host alloca shared by the threads in turn (a
  // single-region kernel): its address may reach any region.
  for (AllocaInst *A : Allocas)
    if (!PerThreadOffset.count(A) && !Demoted.contains(A))
      return false;
  return true;
}

/// The value of the pure kernel expression V in the host function (built
/// with B), where tid.Dim reads TidVal; nullptr when V depends on anything
/// else than block-uniform values (arguments, ntid, ctaid, nctaid) and that
/// thread id. Poison-generating flags are dropped: the copy may be evaluated
/// for a thread whose original computation would not have run.
Value *KernelLowering::mapPure(Value *V, IRBuilder<> &B, int Dim,
                               Value *TidVal,
                               DenseMap<Value *, Value *> &Memo) {
  if (isa<ConstantInt>(V))
    return V;
  if (auto It = Memo.find(V); It != Memo.end())
    return It->second;
  Value *R = nullptr;
  if (auto *A = dyn_cast<Argument>(V)) {
    if (A->getType()->isIntegerTy())
      for (auto &[From, To] : BaseMap)
        if (From == A)
          R = To;
  } else if (auto *CI = dyn_cast<CallInst>(V)) {
    if (classifyCall(*CI) == CallKind::SReg) {
      StringRef N = CI->getCalledFunction()->getName();
      N.consume_front("llvm.nvvm.read.ptx.sreg.");
      unsigned D = N.empty() ? 0 : N.back() - 'x';
      if (N.starts_with("tid.") && int(D) == Dim)
        R = TidVal;
      else if (N.starts_with("ntid."))
        R = BlockDim[D];
      else if (N.starts_with("ctaid."))
        R = BlockIdx[D];
      else if (N.starts_with("nctaid."))
        R = GridDim[D];
    }
  } else if (auto *I = dyn_cast<Instruction>(V)) {
    bool Ok = false;
    if (auto *BO = dyn_cast<BinaryOperator>(I))
      Ok = BO->getType()->isIntegerTy() && !BO->isIntDivRem();
    else
      Ok = (isa<CastInst>(I) && I->getType()->isIntegerTy() &&
            I->getOperand(0)->getType()->isIntegerTy()) ||
           isa<ICmpInst>(I) || isa<SelectInst>(I);
    SmallVector<Value *, 3> Ops;
    for (Value *Op : I->operands()) {
      if (!Ok)
        break;
      Ops.push_back(mapPure(Op, B, Dim, TidVal, Memo));
      Ok = Ops.back() != nullptr;
    }
    if (Ok) {
      Instruction *C = I->clone();
      for (unsigned K = 0; K < Ops.size(); ++K)
        C->setOperand(K, Ops[K]);
      C->dropPoisonGeneratingFlags();
      R = B.Insert(C);
    }
  }
  Memo[V] = R;
  return R;
}

/// For a branch condition C of the kernel: block-uniform i1 values "C holds
/// for every thread of the block" and "C fails for every thread", computed
/// with B before the thread loops; nullopt when C is not of a supported form.
/// Supported: and/or/not of comparisons between a block-uniform value and
/// either a block-uniform value or an increasing function of one thread id,
/// ext(U + ext(tid.d)) (U uniform, any of the integer extensions). Such a
/// function is monotone over the block when U + (ntid.d - 1) overflows
/// neither as a signed nor as an unsigned addition (checked at run time):
/// then the values for tid.d = 0 .. ntid.d-1 increase in both orders and
/// keep one sign, which the extensions preserve, so a comparison against a
/// uniform bound holds for all threads exactly when it holds at the
/// relevant end (the first or the last thread).
std::optional<std::pair<Value *, Value *>>
KernelLowering::blockWideTruth(Value *C, IRBuilder<> &B) {
  using namespace PatternMatch;
  Value *X, *Y;
  if (match(C, m_Not(m_Value(X)))) {
    auto R = blockWideTruth(X, B);
    if (!R)
      return std::nullopt;
    return std::make_pair(R->second, R->first);
  }
  if (match(C, m_LogicalAnd(m_Value(X), m_Value(Y))) ||
      match(C, m_LogicalOr(m_Value(X), m_Value(Y)))) {
    bool IsAnd = match(C, m_LogicalAnd(m_Value(), m_Value()));
    auto RX = blockWideTruth(X, B), RY = blockWideTruth(Y, B);
    if (!RX || !RY)
      return std::nullopt;
    if (IsAnd)
      return std::make_pair(B.CreateAnd(RX->first, RY->first),
                            B.CreateOr(RX->second, RY->second));
    return std::make_pair(B.CreateOr(RX->first, RY->first),
                          B.CreateAnd(RX->second, RY->second));
  }
  auto *Cmp = dyn_cast<ICmpInst>(C);
  if (!Cmp || !Cmp->getOperand(0)->getType()->isIntegerTy())
    return std::nullopt;
  DenseMap<Value *, Value *> Memo;
  if (Value *U = mapPure(Cmp, B, -1, nullptr, Memo)) // block-uniform
    return std::make_pair(U, B.CreateNot(U));
  // Which side depends on a thread id: ext*(U + ext*(tid.d)).
  auto TidDim = [&](Value *V) -> int {
    while (isa<ZExtInst>(V) || isa<SExtInst>(V))
      V = cast<Instruction>(V)->getOperand(0);
    auto *CI = dyn_cast<CallInst>(V);
    if (!CI || classifyCall(*CI) != CallKind::SReg)
      return -1;
    StringRef N = CI->getCalledFunction()->getName();
    if (!N.consume_front("llvm.nvvm.read.ptx.sreg.tid."))
      return -1;
    return N[0] - 'x';
  };
  auto Increasing = [&](Value *V, int &Dim, Value *&Core,
                        Value *&Uni) -> bool {
    while (isa<ZExtInst>(V) || isa<SExtInst>(V))
      V = cast<Instruction>(V)->getOperand(0);
    Core = V;
    if ((Dim = TidDim(V)) >= 0) {
      Uni = nullptr;
      return true;
    }
    Value *A, *Bv;
    if (!match(V, m_Add(m_Value(A), m_Value(Bv))))
      return false;
    if ((Dim = TidDim(Bv)) >= 0) {
      Uni = A;
      return true;
    }
    if ((Dim = TidDim(A)) >= 0) {
      Uni = Bv;
      return true;
    }
    return false;
  };
  CmpInst::Predicate P = Cmp->getPredicate();
  Value *L = Cmp->getOperand(0), *Rhs = Cmp->getOperand(1);
  int Dim;
  Value *Core, *Uni;
  if (!Increasing(L, Dim, Core, Uni)) {
    std::swap(L, Rhs);
    P = CmpInst::getSwappedPredicate(P);
    if (!Increasing(L, Dim, Core, Uni))
      return std::nullopt;
  }
  if (!ICmpInst::isRelational(P))
    return std::nullopt;
  Value *RhsV = mapPure(Rhs, B, -1, nullptr, Memo);
  Value *UniV = Uni ? mapPure(Uni, B, -1, nullptr, Memo) : nullptr;
  if (!RhsV || (Uni && !UniV))
    return std::nullopt;
  Type *CoreTy = Core->getType();
  Value *LastTid = B.CreateSub(BlockDim[Dim], B.getInt32(1));
  // tid.d itself must not look negative to a sign extension.
  Value *Mono = B.CreateICmpSGE(LastTid, B.getInt32(0));
  if (UniV) {
    Value *Step = B.CreateZExtOrTrunc(LastTid, CoreTy);
    if (CoreTy->getIntegerBitWidth() < 32)
      return std::nullopt;
    Value *SOv = B.CreateExtractValue(
        B.CreateBinaryIntrinsic(Intrinsic::sadd_with_overflow, UniV, Step), 1);
    Value *UOv = B.CreateExtractValue(
        B.CreateBinaryIntrinsic(Intrinsic::uadd_with_overflow, UniV, Step), 1);
    Mono = B.CreateAnd(Mono, B.CreateNot(B.CreateOr(SOv, UOv)));
  }
  DenseMap<Value *, Value *> M0, M1;
  for (auto &KV : Memo) // uniform parts are shared by both ends
    if (KV.second) {
      M0.insert(KV);
      M1.insert(KV);
    }
  Value *First = mapPure(L, B, Dim, B.getInt32(0), M0);
  Value *Last = mapPure(L, B, Dim, LastTid, M1);
  if (!First || !Last)
    return std::nullopt;
  bool Less = ICmpInst::isLT(P) || ICmpInst::isLE(P);
  Value *AtFirst = B.CreateICmp(P, First, RhsV);
  Value *AtLast = B.CreateICmp(P, Last, RhsV);
  Value *AllTrue = B.CreateAnd(Mono, Less ? AtLast : AtFirst);
  Value *AllFalse = B.CreateAnd(Mono, B.CreateNot(Less ? AtFirst : AtLast));
  return std::make_pair(AllTrue, AllFalse);
}

/// Guard versioning (docs/cpu-performance.md, finding 1): for each branch of
/// region S whose condition is the same for every thread of the block in
/// the common case (`if (i < n)`, `if (x >= w || y >= h) return`), decide
/// which outcome the fast copy assumes (the side that does not just leave
/// the region) and return the block-uniform condition under which every
/// assumption holds; nullptr when there is nothing to version.
Value *KernelLowering::analyzeGuards(
    unsigned S, IRBuilder<> &B,
    SmallVectorImpl<std::pair<Instruction *, bool>> &Folds) {
  if (Guarded)
    return nullptr;
  auto Leaves = [&](BasicBlock *BB) {
    // Leaves the region at once: a sync block, a return, or a jump there.
    for (int Hop = 0; Hop < 2 && BB; ++Hop) {
      if (SyncIndex.count(BB))
        return true;
      Instruction *I = BB->getFirstNonPHI();
      if (isa<ReturnInst>(I))
        return true;
      auto *Br = dyn_cast<BranchInst>(I);
      BB = Br && Br->isUnconditional() ? Br->getSuccessor(0) : nullptr;
    }
    return false;
  };
  SmallPtrSet<BasicBlock *, 16> InRegion(Regions[S].Blocks.begin(),
                                         Regions[S].Blocks.end());
  Value *Fast = nullptr;
  SmallPtrSet<Value *, 8> Seen;
  for (BasicBlock *BB : Regions[S].Blocks) {
    auto *Br = dyn_cast<BranchInst>(BB->getTerminator());
    if (!Br || !Br->isConditional())
      continue;
    auto *C = dyn_cast<Instruction>(Br->getCondition());
    if (!C || !InRegion.contains(C->getParent()) || !Seen.insert(C).second)
      continue;
    // Only worth it for conditions that involve a thread id (others are
    // loop-invariant and unswitched by the optimizer anyway).
    bool UsesTid = false;
    SmallVector<Value *, 16> Work{C};
    SmallPtrSet<Value *, 16> Visited;
    while (!Work.empty() && !UsesTid) {
      Value *V = Work.pop_back_val();
      if (!Visited.insert(V).second)
        continue;
      if (auto *CI = dyn_cast<CallInst>(V)) {
        if (classifyCall(*CI) == CallKind::SReg &&
            CI->getCalledFunction()->getName().contains(".tid."))
          UsesTid = true;
      } else if (auto *I = dyn_cast<Instruction>(V)) {
        if (!isa<PHINode>(I) && !isa<LoadInst>(I))
          append_range(Work, I->operands());
      }
    }
    if (!UsesTid)
      continue;
    auto R = blockWideTruth(C, B);
    if (!R)
      continue;
    bool Assume = !(Leaves(Br->getSuccessor(0)) && !Leaves(Br->getSuccessor(1)));
    Value *Ok = Assume ? R->first : R->second;
    Fast = Fast ? B.CreateAnd(Fast, Ok) : Ok;
    Folds.push_back({C, Assume});
  }
  if (!Fast)
    return nullptr;
  Value *Agree = B.CreateFreeze(Fast, "all.threads.agree");
  Sites.FastPaths.push_back(Agree);
  return Agree;
}

KernelLowering::ThreadLoop KernelLowering::emitRegionCopy(
    unsigned S, BasicBlock *Pre, const Twine &Name,
    ArrayRef<std::pair<Instruction *, bool>> Folds) {
  const SyncPoint &SP = Syncs[S];
  ThreadLoop L = buildThreadLoop(Pre, Name);
  IRBuilder<> B(L.Body);

  ValueToValueMapTy VMap;
  for (auto &[From, To] : BaseMap)
    VMap[From] = To;
  Value *Lin = L.Lin;
  for (AllocaInst *A : Allocas)
    if (PerThreadOffset.count(A))
      VMap[A] = perThreadSlot(B, A, Lin);
  BasicBlock *Run = L.Body;
  if (Guarded) {
    Run = BasicBlock::Create(Ctx, Name + ".run", Host);
    Value *Here = B.CreateICmpEQ(B.CreateLoad(B.getInt32Ty(), VMap[PC]),
                                 B.getInt32(SP.Key));
    B.CreateCondBr(Here, Run, L.Latch);
  }
  // Exit stubs: record the next state, go to the next thread.
  auto MakeStub = [&](uint32_t Key, const Twine &StubName) {
    BasicBlock *Stub = BasicBlock::Create(Ctx, StubName, Host);
    IRBuilder<> SB(Stub);
    SB.CreateStore(SB.getInt32(Key),
                   Guarded ? cast<Value>(VMap[PCNext]) : NextSlot);
    SB.CreateBr(L.Latch);
    return Stub;
  };
  SmallVector<BasicBlock *, 8> Stubs;
  for (const SyncPoint &T : Syncs) {
    BasicBlock *Stub = MakeStub(T.Key, Name + ".to." + Twine(T.Key));
    VMap[T.BB] = Stub;
    Stubs.push_back(Stub);
  }
  BasicBlock *RetStub = MakeStub(RetKey, Name + ".ret");
  Stubs.push_back(RetStub);

  SmallVector<BasicBlock *, 16> Clones;
  for (BasicBlock *BB : Regions[S].Blocks) {
    BasicBlock *NB = CloneBasicBlock(BB, VMap, "." + Name, Host);
    Clones.push_back(NB);
    if (BB != SP.BB)
      VMap[BB] = NB;
  }
  for (BasicBlock *NB : Clones)
    for (Instruction &I : *NB)
      RemapInstruction(&I, VMap, RF_IgnoreMissingLocals);
  IRBuilder<>(Run).CreateBr(Clones.front());
  for (BasicBlock *NB : Clones) {
    for (Instruction &I : make_early_inc_range(*NB)) {
      if (isa<ReturnInst>(&I)) {
        IRBuilder<> RB(&I);
        RB.CreateBr(RetStub);
        I.eraseFromParent();
        continue;
      }
      replaceThreadValues(I, L);
    }
  }
  // The fast copy of a versioned region: the guards hold (or fail) for
  // every thread, so their conditions are constants here.
  for (auto &[C, V] : Folds)
    if (Value *CC = VMap.lookup(C)) {
      auto *CI = cast<Instruction>(CC);
      CI->replaceAllUsesWith(ConstantInt::getBool(Ctx, V));
      CI->eraseFromParent();
    }
  if (SP.Kind == SyncKind::Gather)
    emitGather(cast<CallInst>(VMap[SP.Op]), SP, L, Pre);
  for (BasicBlock *Stub : Stubs)
    if (pred_empty(Stub))
      Stub->eraseFromParent();

  if (regionIsParallel(S)) {
    // Iterations of the x-loop are threads of one region: independent.
    MDNode *Group = MDNode::getDistinct(Ctx, {});
    for (BasicBlock *NB : Clones)
      for (Instruction &I : *NB)
        if (I.mayReadOrWriteMemory())
          I.setMetadata(LLVMContext::MD_access_group, Group);
    MDNode *Parallel = MDNode::get(
        Ctx, {MDString::get(Ctx, "llvm.loop.parallel_accesses"), Group});
    auto Tmp = MDNode::getTemporary(Ctx, {});
    MDNode *LoopID = MDNode::getDistinct(Ctx, {Tmp.get(), Parallel});
    LoopID->replaceOperandWith(0, LoopID);
    L.Latch->getTerminator()->setMetadata(LLVMContext::MD_loop, LoopID);
  }
  return L;
}

std::optional<SlotArray> KernelLowering::slotsOf(AllocaInst *A) const {
  auto It = PerThreadOffset.find(A);
  if (It == PerThreadOffset.end())
    return std::nullopt;
  return SlotArray{PerThreadBase.lookup(A), PerThreadStride.lookup(A)};
}

/// A chain region (WarpChain.h): one loop over the warps of the block, each
/// running the chain block on vectors of its lanes; every lane that runs it
/// goes on to the sync point after it.
BasicBlock *KernelLowering::emitChainRegion(unsigned S, BasicBlock *Pre) {
  const SyncPoint &SP = Syncs[S];
  BasicBlock *Chain = SP.BB;
  uint32_t NextKey =
      Syncs[SyncIndex.lookup(Chain->getTerminator()->getSuccessor(0))].Key;
  std::string Name = "r" + std::to_string(S);
  auto *Hdr = BasicBlock::Create(Ctx, Name + ".warp", Host);
  auto *Body = BasicBlock::Create(Ctx, Name + ".warp.body", Host);
  auto *Exit = BasicBlock::Create(Ctx, Name + ".exit", Host);
  IRBuilder<> B(Pre);
  B.CreateBr(Hdr);
  B.SetInsertPoint(Hdr);
  PHINode *WarpBase = B.CreatePHI(B.getInt64Ty(), 2, "warp.base");
  B.CreateCondBr(B.CreateICmpULT(WarpBase, NumThreads), Body, Exit);
  B.SetInsertPoint(Body);
  Value *Lanes =
      B.CreateTrunc(B.CreateBinaryIntrinsic(Intrinsic::umin,
                                            B.CreateSub(NumThreads, WarpBase),
                                            B.getInt64(WarpSize)),
                    B.getInt32Ty(), "lanes");
  SmallVector<Constant *, WarpSize> Iota;
  for (unsigned L = 0; L < WarpSize; ++L)
    Iota.push_back(B.getInt32(L));
  Value *Active = B.CreateICmpULT(ConstantVector::get(Iota),
                                  B.CreateVectorSplat(WarpSize, Lanes));
  Align PCAlign(4);
  if (Guarded) {
    Value *PCs =
        loadLanes(B, B.getInt32Ty(), *slotsOf(PC), WarpBase, Active, PCAlign);
    Active = B.CreateAnd(
        Active,
        B.CreateICmpEQ(PCs, B.CreateVectorSplat(WarpSize, B.getInt32(SP.Key))),
        "lane.active");
  }
  WarpEnv Env;
  Env.WarpBase = WarpBase;
  Env.Lanes = Lanes;
  Env.Active = Active;
  for (unsigned D = 0; D < 3; ++D) {
    Env.BlockDim[D] = BlockDim[D];
    Env.GridDim[D] = GridDim[D];
    Env.BlockIdx[D] = BlockIdx[D];
  }
  auto Uniform = [&](Value *V) -> Value * {
    for (auto &[From, To] : BaseMap)
      if (From == V)
        return To;
    llvm_unreachable("a kernel argument without a host value");
  };
  auto Slots = [&](AllocaInst *A) { return slotsOf(A); };
  Env.Uniform = Uniform;
  Env.Slots = Slots;
  widenWarpChain(*Chain, B, Env);
  if (Guarded)
    storeLanes(B, B.CreateVectorSplat(WarpSize, B.getInt32(NextKey)),
               *slotsOf(PCNext), WarpBase, Active, PCAlign);
  Value *NextBase = B.CreateAdd(WarpBase, B.getInt64(WarpSize));
  B.CreateBr(Hdr);
  WarpBase->addIncoming(B.getInt64(0), Pre);
  WarpBase->addIncoming(NextBase, B.GetInsertBlock());
  if (!Guarded)
    IRBuilder<>(Exit).CreateStore(B.getInt32(NextKey), NextSlot);
  return Exit;
}

void KernelLowering::emitRegion(unsigned S, BasicBlock *Pre, BasicBlock *Post) {
  const SyncPoint &SP = Syncs[S];
  IRBuilder<> B(Pre);
  if (!Guarded)
    B.CreateStore(B.getInt32(RetKey), NextSlot);
  SmallVector<std::pair<Instruction *, bool>, 4> Folds;
  Value *Fast =
      SP.Kind == SyncKind::Chain ? nullptr : analyzeGuards(S, B, Folds);
  ThreadLoop L;
  if (SP.Kind == SyncKind::Chain) {
    L.Exit = emitChainRegion(S, Pre);
  } else if (!Fast) {
    L = emitRegionCopy(S, Pre, "r" + Twine(S), {});
  } else {
    // Two copies of the thread loops: the fast one with the guards folded,
    // chosen per block, and the general one.
    auto *FastPre = BasicBlock::Create(Ctx, "r" + Twine(S) + ".fast.pre", Host);
    auto *SlowPre = BasicBlock::Create(Ctx, "r" + Twine(S) + ".slow.pre", Host);
    B.CreateCondBr(Fast, FastPre, SlowPre);
    ThreadLoop LF = emitRegionCopy(S, FastPre, "r" + Twine(S) + ".fast", Folds);
    L = emitRegionCopy(S, SlowPre, "r" + Twine(S), {});
    auto *Join = BasicBlock::Create(Ctx, "r" + Twine(S) + ".join", Host);
    IRBuilder<>(LF.Exit).CreateBr(Join);
    IRBuilder<>(L.Exit).CreateBr(Join);
    L.Exit = Join;
  }

  // After the threads: pick the next state.
  IRBuilder<> PB(L.Exit);
  Value *Next;
  if (!Guarded) {
    Next = PB.CreateLoad(PB.getInt32Ty(), NextSlot, "next");
  } else {
    // Commit each thread's next state and find the earliest pending one.
    PB.CreateStore(PB.getInt32(RetKey), MinSlot);
    BasicBlock *FixPre = L.Exit;
    ThreadLoop F = buildThreadLoop(FixPre, "r" + Twine(S) + ".commit");
    IRBuilder<> FB(F.Body);
    Value *PCSlot = perThreadSlot(FB, PC, F.Lin);
    Value *Cur = FB.CreateLoad(FB.getInt32Ty(), PCSlot);
    Value *New = FB.CreateLoad(FB.getInt32Ty(), perThreadSlot(FB, PCNext, F.Lin));
    Value *Ran = FB.CreateICmpEQ(Cur, FB.getInt32(SP.Key));
    Value *Now = FB.CreateSelect(Ran, New, Cur);
    FB.CreateStore(Now, PCSlot);
    Value *Min = FB.CreateLoad(FB.getInt32Ty(), MinSlot);
    FB.CreateStore(FB.CreateBinaryIntrinsic(Intrinsic::umin, Min, Now), MinSlot);
    FB.CreateBr(F.Latch);
    PB.SetInsertPoint(F.Exit);
    Next = PB.CreateLoad(PB.getInt32Ty(), MinSlot, "next");
  }
  PB.CreateBr(Post);
  // Post holds the dispatch switch, filled by buildHost.
  (void)Next;
  Post->setName("r" + Twine(S) + ".dispatch");
  IRBuilder<> DB(Post);
  PHINode *P = DB.CreatePHI(DB.getInt32Ty(), 1, "next.key");
  P->addIncoming(Next, PB.GetInsertBlock());
  // Without guards all threads leave the region at one of its exits, so
  // only those are cases: the state machine's CFG then has the kernel's own
  // shape (no loop where the kernel has none), which keeps the optimizer's
  // loop passes cheap. A guarded block may resume any pending state.
  SmallPtrSet<BasicBlock *, 8> Exits;
  for (BasicBlock *BB : Regions[S].Blocks)
    for (BasicBlock *Succ : successors(BB))
      if (SyncIndex.count(Succ))
        Exits.insert(Succ);
  SwitchInst *SW = DB.CreateSwitch(P, BlockLatch, Syncs.size());
  for (unsigned T = 0; T < Syncs.size(); ++T)
    if (Guarded || Exits.contains(Syncs[T].BB))
      SW->addCase(DB.getInt32(Syncs[T].Key), RegionPre[T]);
}

std::optional<Refusal> KernelLowering::checkChains() {
  for (const SyncPoint &SP : Syncs)
    if (SP.Kind == SyncKind::Chain)
      if (auto Why = checkWarpChainBlock(
              *SP.BB, [&](AllocaInst *A) { return PerThreadOffset.count(A); }))
        return Refusal{Why->first, Why->second};
  return std::nullopt;
}

void KernelLowering::buildHost() {
  Type *Ptr = PointerType::get(Ctx, 0);
  Type *I32 = Type::getInt32Ty(Ctx), *I64 = Type::getInt64Ty(Ctx);
  auto *FTy = FunctionType::get(Type::getVoidTy(Ctx),
                                {Ptr, Ptr, I64, I64, Ptr}, false);
  Host = Function::Create(FTy, GlobalValue::ExternalLinkage,
                          cpuVariantName(Name), M);
  Host->addFnAttr(Attribute::NoUnwind);
  Host->addFnAttr(VariantAttr, "cpu");
  Host->addFnAttr(OriginAttr, Name);
  Argument *Args = Host->getArg(0), *Launch = Host->getArg(1),
           *First = Host->getArg(2), *Count = Host->getArg(3);
  Scratch = Host->getArg(4);
  Args->setName("args");
  Launch->setName("launch");
  First->setName("first_block");
  Count->setName("block_count");
  Scratch->setName("scratch");
  for (unsigned I : {0u, 1u, 4u}) {
    Host->addParamAttr(I, Attribute::NoAlias);
    Host->addParamAttr(I, Attribute::NoCapture);
  }

  auto *Entry = BasicBlock::Create(Ctx, "entry", Host);
  IRBuilder<> B(Entry);
  // Parameters: args[i] points to the value of parameter i.
  SmallVector<Argument *, 2> LocalArgs;
  for (Argument &A : K.args()) {
    if (A.getType()->isPointerTy() && A.getType()->getPointerAddressSpace() == 3) {
      // OpenCL __local pointer argument: the dynamic shared area (its size
      // is the launch's dynamic_shared_bytes; args[i] is not read).
      LocalArgs.push_back(&A);
      continue;
    }
    Value *Slot = B.CreateLoad(
        Ptr, B.CreateConstInBoundsGEP1_64(Ptr, Args, A.getArgNo()));
    Value *V = A.hasByValAttr() ? Slot
                                : B.CreateLoad(A.getType(), Slot, A.getName());
    if (A.hasByValAttr() && A.getType()->getPointerAddressSpace() != 0)
      V = B.CreateAddrSpaceCast(V, A.getType());
    BaseMap.push_back({&A, V});
  }
  for (unsigned D = 0; D < 3; ++D) {
    GridDim[D] = B.CreateLoad(
        I32, B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Launch,
                                          LaunchGridOffset + 4 * D),
        "nctaid." + Twine("xyz"[D]));
    BlockDim[D] = B.CreateLoad(
        I32, B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Launch,
                                          LaunchBlockOffset + 4 * D),
        "ntid." + Twine("xyz"[D]));
  }
  Value *DynBytes = B.CreateLoad(
      I64, B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Launch,
                                        LaunchDynSharedOffset),
      "dyn.shared");
  NumThreads = B.CreateMul(
      B.CreateMul(B.CreateZExt(BlockDim[0], I64), B.CreateZExt(BlockDim[1], I64)),
      B.CreateZExt(BlockDim[2], I64), "nthreads");
  uint64_t DynOffset = alignTo(StaticSharedBytes, 16);
  Value *DynBase = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Scratch,
                                                DynOffset, "shared.dyn");
  Value *DynPadded =
      B.CreateAnd(B.CreateAdd(DynBytes, B.getInt64(63)), B.getInt64(~63ull));
  Private = B.CreateInBoundsGEP(B.getInt8Ty(), DynBase, DynPadded, "private");
  for (Argument *A : LocalArgs)
    BaseMap.push_back({A, B.CreateAddrSpaceCast(DynBase, A->getType())});
  for (auto &[GV, Off] : SharedOffset) {
    Value *P = Off == ~0ull ? DynBase
                            : B.CreateConstInBoundsGEP1_64(B.getInt8Ty(),
                                                           Scratch, Off);
    BaseMap.push_back({GV, B.CreateAddrSpaceCast(P, GV->getType(),
                                                 GV->getName() + ".cpu")});
  }
  for (AllocaInst *A : Allocas) {
    if (auto It = PerThreadOffset.find(A); It != PerThreadOffset.end()) {
      Value *Off = B.CreateMul(NumThreads, B.getInt64(It->second));
      PerThreadBase[A] =
          B.CreateInBoundsGEP(B.getInt8Ty(), Private, Off, A->getName() + ".base");
      continue;
    }
    AllocaInst *HA = B.CreateAlloca(A->getAllocatedType(), A->getArraySize(),
                                    A->getName());
    HA->setAlignment(A->getAlign());
    Value *V = HA;
    if (A->getType() != HA->getType())
      V = B.CreateAddrSpaceCast(HA, A->getType());
    BaseMap.push_back({A, V});
  }
  NextSlot = B.CreateAlloca(I32, nullptr, "next.slot");
  MinSlot = B.CreateAlloca(I32, nullptr, "min.slot");

  // Blocks of the range, one after the other.
  auto *BlkHdr = BasicBlock::Create(Ctx, "block", Host);
  auto *BlkBody = BasicBlock::Create(Ctx, "block.body", Host);
  BlockLatch = BasicBlock::Create(Ctx, "block.latch", Host);
  auto *Done = BasicBlock::Create(Ctx, "done", Host);
  Value *End = B.CreateAdd(First, Count, "end");
  B.CreateBr(BlkHdr);
  B.SetInsertPoint(BlkHdr);
  PHINode *Blk = B.CreatePHI(I64, 2, "block.id");
  Sites.BlockId = Blk;
  B.CreateCondBr(B.CreateICmpULT(Blk, End), BlkBody, Done);
  B.SetInsertPoint(BlockLatch);
  Blk->addIncoming(First, Entry);
  Blk->addIncoming(B.CreateAdd(Blk, B.getInt64(1)), BlockLatch);
  B.CreateBr(BlkHdr);
  B.SetInsertPoint(Done);
  B.CreateRetVoid();

  B.SetInsertPoint(BlkBody);
  Value *GX = B.CreateZExt(GridDim[0], I64), *GY = B.CreateZExt(GridDim[1], I64);
  BlockIdx[0] = B.CreateTrunc(B.CreateURem(Blk, GX), I32, "ctaid.x");
  Value *Rest = B.CreateUDiv(Blk, GX);
  BlockIdx[1] = B.CreateTrunc(B.CreateURem(Rest, GY), I32, "ctaid.y");
  BlockIdx[2] = B.CreateTrunc(B.CreateUDiv(Rest, GY), I32, "ctaid.z");

  for (unsigned S = 0; S < Syncs.size(); ++S)
    RegionPre.push_back(BasicBlock::Create(Ctx, "r" + Twine(S) + ".pre", Host));
  if (Guarded) {
    // Every thread starts at the entry state.
    ThreadLoop Init = buildThreadLoop(BlkBody, "init");
    IRBuilder<> IB(Init.Body);
    IB.CreateStore(IB.getInt32(Syncs[0].Key), perThreadSlot(IB, PC, Init.Lin));
    IB.CreateBr(Init.Latch);
    IRBuilder<>(Init.Exit).CreateBr(RegionPre[0]);
  } else {
    B.CreateBr(RegionPre[0]);
  }
  for (unsigned S = 0; S < Syncs.size(); ++S)
    emitRegion(S, RegionPre[S],
               BasicBlock::Create(Ctx, "r" + Twine(S) + ".dispatch", Host));
  stripDebugInfo(*Host);
}

std::optional<Refusal> KernelLowering::run() {
  unsigned LocalPtrArgs = 0;
  for (Argument &A : K.args())
    LocalPtrArgs += A.getType()->isPointerTy() &&
                    A.getType()->getPointerAddressSpace() == 3;
  if (LocalPtrArgs > 1)
    return Refusal{"more than one __local pointer argument (only one maps "
                   "to the dynamic shared area)",
                   &*K.getEntryBlock().begin()};
  if (auto R = inlineCalls())
    return R;
  syncVolatileSharedStores(K);
  lowerNVVMConversions(K);
  if (auto R = classifyAndLowerCalls())
    return R;
  // Constant expressions over non-generic globals become instructions, so
  // that shared variables can be replaced by scratch pointers and address
  // spaces stripped instruction by instruction.
  SmallVector<Constant *, 8> Globals;
  for (GlobalVariable &GV : M.globals())
    if (GV.getAddressSpace() != 0)
      Globals.push_back(&GV);
  convertUsersOfConstantsToInstructions(Globals, &K);
  if (auto R = checkDivergence())
    return R;
  fuseContractablePairs(K);
  rematerializeSRegs();
  Chains = findWarpChains(SyncCalls);
  splitAtSyncPoints();
  rematerializePureValues();
  demoteCrossBlockValues();
  computeRegions();
  layOutStorage();
  if (auto R = checkChains())
    return R;
  buildHost();
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// The host module
//===----------------------------------------------------------------------===//

/// Maps every pointer type to the generic address space.
class AddrSpaceStripper : public ValueMapTypeRemapper {
public:
  explicit AddrSpaceStripper(LLVMContext &C) : C(C) {}
  Type *remapType(Type *Ty) override {
    auto It = Cache.find(Ty);
    if (It != Cache.end())
      return It->second;
    Type *R = Ty;
    if (isa<PointerType>(Ty)) {
      R = PointerType::get(C, 0);
    } else if (auto *VT = dyn_cast<VectorType>(Ty)) {
      R = VectorType::get(remapType(VT->getElementType()),
                          VT->getElementCount());
    } else if (auto *AT = dyn_cast<ArrayType>(Ty)) {
      R = ArrayType::get(remapType(AT->getElementType()),
                         AT->getNumElements());
    } else if (auto *ST = dyn_cast<StructType>(Ty); ST && !ST->isOpaque()) {
      SmallVector<Type *, 8> Elems;
      bool Changed = false;
      for (Type *E : ST->elements()) {
        Elems.push_back(remapType(E));
        Changed |= Elems.back() != E;
      }
      if (Changed)
        R = ST->isLiteral()
                ? StructType::get(C, Elems, ST->isPacked())
                : StructType::create(C, Elems, (ST->getName() + ".host").str(),
                                     ST->isPacked());
    } else if (auto *FT = dyn_cast<FunctionType>(Ty)) {
      SmallVector<Type *, 8> Params;
      for (Type *P : FT->params())
        Params.push_back(remapType(P));
      R = FunctionType::get(remapType(FT->getReturnType()), Params,
                            FT->isVarArg());
    }
    Cache[Ty] = R;
    return R;
  }

private:
  LLVMContext &C;
  DenseMap<Type *, Type *> Cache;
};

/// The warp-bits helper: bit l set when lane l of the warp exists, is at
/// state key (or pc is null) and its predicate is non-zero (or pred is null).
void defineWarpBitsHelper(Function &F) {
  LLVMContext &C = F.getContext();
  F.setLinkage(GlobalValue::InternalLinkage);
  // Called once per thread at each vote/match/redux/activemask: inlining its
  // 32-lane loop everywhere multiplies the code (and compile time) for
  // little gain.
  F.addFnAttr(Attribute::NoInline);
  F.addFnAttr(Attribute::NoUnwind);
  Argument *Pred = F.getArg(0), *PC = F.getArg(1), *Key = F.getArg(2),
           *Base = F.getArg(3), *N = F.getArg(4);
  auto *Entry = BasicBlock::Create(C, "entry", &F);
  auto *Loop = BasicBlock::Create(C, "lane", &F);
  auto *Body = BasicBlock::Create(C, "lane.body", &F);
  auto *Exit = BasicBlock::Create(C, "exit", &F);
  IRBuilder<> B(Entry);
  B.CreateBr(Loop);
  B.SetInsertPoint(Loop);
  PHINode *L = B.CreatePHI(B.getInt32Ty(), 2, "l");
  PHINode *Bits = B.CreatePHI(B.getInt32Ty(), 2, "bits");
  Value *T = B.CreateAdd(Base, B.CreateZExt(L, B.getInt64Ty()));
  B.CreateCondBr(B.CreateICmpULT(T, N), Body, Exit);
  B.SetInsertPoint(Body);
  auto *PCLoad = BasicBlock::Create(C, "pc", &F);
  auto *PredCheck = BasicBlock::Create(C, "pred", &F);
  auto *PredLoad = BasicBlock::Create(C, "pred.load", &F);
  auto *Latch = BasicBlock::Create(C, "latch", &F);
  B.CreateCondBr(B.CreateIsNull(PC), PredCheck, PCLoad);
  B.SetInsertPoint(PCLoad);
  Value *AtState = B.CreateICmpEQ(
      B.CreateLoad(B.getInt32Ty(), B.CreateInBoundsGEP(B.getInt32Ty(), PC, T)),
      Key);
  B.CreateCondBr(AtState, PredCheck, Latch);
  B.SetInsertPoint(PredCheck);
  B.CreateCondBr(B.CreateIsNull(Pred), Latch, PredLoad);
  B.SetInsertPoint(PredLoad);
  Value *PredOn = B.CreateICmpNE(
      B.CreateLoad(B.getInt32Ty(), B.CreateInBoundsGEP(B.getInt32Ty(), Pred, T)),
      B.getInt32(0));
  B.CreateBr(Latch);
  B.SetInsertPoint(Latch);
  PHINode *On = B.CreatePHI(B.getInt1Ty(), 3, "on");
  On->addIncoming(B.getFalse(), PCLoad);
  On->addIncoming(B.getTrue(), PredCheck);
  On->addIncoming(PredOn, PredLoad);
  Value *NewBits =
      B.CreateOr(Bits, B.CreateShl(B.CreateZExt(On, B.getInt32Ty()), L));
  Value *L1 = B.CreateAdd(L, B.getInt32(1));
  B.CreateCondBr(B.CreateICmpULT(L1, B.getInt32(WarpSize)), Loop, Exit);
  L->addIncoming(B.getInt32(0), Entry);
  L->addIncoming(L1, Latch);
  Bits->addIncoming(B.getInt32(0), Entry);
  Bits->addIncoming(NewBits, Latch);
  B.SetInsertPoint(Exit);
  PHINode *Out = B.CreatePHI(B.getInt32Ty(), 2, "out");
  Out->addIncoming(Bits, Loop);
  Out->addIncoming(NewBits, Latch);
  B.CreateRet(Out);
}

/// The f32 directed-rounding FMA (fma.rz/rm/rp.f32) as IR, so that it is
/// inlined and vectorized instead of called: the same algorithm, bit for
/// bit, as __cleave_rt_fma_*_f32 in runtime/lib/cpu/CpuMath.cpp. a*b is
/// exact in double, TwoSum gives the exact error e of s = a*b + c, and s + e
/// is rounded to float in the direction by a step of nextafter from the
/// nearest float when that lies on the wrong side.
void defineFmaDirectedF32(Function &F, char Mode /* 'z', 'm', 'p' */) {
  LLVMContext &C = F.getContext();
  F.setLinkage(GlobalValue::InternalLinkage);
  F.addFnAttr(Attribute::AlwaysInline);
  F.addFnAttr(Attribute::NoUnwind);
  F.setDoesNotAccessMemory();
  auto *Entry = BasicBlock::Create(C, "entry", &F);
  IRBuilder<> B(Entry);
  Type *F32 = B.getFloatTy(), *F64 = B.getDoubleTy(), *I32 = B.getInt32Ty();
  Value *A = B.CreateFPExt(F.getArg(0), F64);
  Value *Bv = B.CreateFPExt(F.getArg(1), F64);
  Value *Cv = B.CreateFPExt(F.getArg(2), F64);
  Value *P = B.CreateFMul(A, Bv);
  Value *S = B.CreateFAdd(P, Cv);
  Value *Bp = B.CreateFSub(S, P);
  Value *E = B.CreateFAdd(B.CreateFSub(P, B.CreateFSub(S, Bp)),
                          B.CreateFSub(Cv, Bp));
  Value *Fl = B.CreateFPTrunc(S, F32);
  Value *Fd = B.CreateFPExt(Fl, F64);
  Value *Zero = ConstantFP::get(F64, 0.0);
  // Sign of (F - exact): F against s first, then against e.
  Value *Above = B.CreateOr(B.CreateFCmpOGT(Fd, S),
                            B.CreateAnd(B.CreateFCmpOEQ(Fd, S),
                                        B.CreateFCmpOLT(E, Zero)));
  Value *Below = B.CreateOr(B.CreateFCmpOLT(Fd, S),
                            B.CreateAnd(B.CreateFCmpOEQ(Fd, S),
                                        B.CreateFCmpOGT(E, Zero)));
  Value *WantDown;
  if (Mode == 'm')
    WantDown = B.getTrue();
  else if (Mode == 'p')
    WantDown = B.getFalse();
  else // toward zero: down when the exact value is not negative
    WantDown = B.CreateNot(B.CreateOr(
        B.CreateFCmpOLT(B.CreateFAdd(S, E), Zero),
        B.CreateAnd(B.CreateFCmpOEQ(S, Zero), B.CreateFCmpOLT(E, Zero))));
  // nextafter(F, -inf) and nextafter(F, +inf) on the bits (F is not NaN
  // here: s is finite).
  Value *Bits = B.CreateBitCast(Fl, I32);
  Value *IsZero = B.CreateFCmpOEQ(Fl, ConstantFP::get(F32, 0.0));
  Value *Pos = B.CreateFCmpOGT(Fl, ConstantFP::get(F32, 0.0));
  Value *Inc = B.CreateAdd(Bits, B.getInt32(1));
  Value *Dec = B.CreateSub(Bits, B.getInt32(1));
  Value *DownBits = B.CreateSelect(
      IsZero, B.getInt32(0x80000001u), B.CreateSelect(Pos, Dec, Inc));
  Value *UpBits = B.CreateSelect(IsZero, B.getInt32(1),
                                 B.CreateSelect(Pos, Inc, Dec));
  Value *Down = B.CreateBitCast(DownBits, F32);
  Value *Up = B.CreateBitCast(UpBits, F32);
  Value *R = B.CreateSelect(
      B.CreateAnd(WantDown, Above), Down,
      B.CreateSelect(B.CreateAnd(B.CreateNot(WantDown), Below), Up, Fl));
  // A non-finite s (overflow of the sum, inf or NaN inputs) rounds as is.
  Value *Finite = B.CreateFCmpOLT(B.CreateUnaryIntrinsic(Intrinsic::fabs, S),
                                  ConstantFP::getInfinity(F64));
  B.CreateRet(B.CreateSelect(Finite, R, Fl));
}

struct LoweredKernel {
  Function *Host;
  std::string Name;
  unsigned NumParams;
  uint64_t StaticShared, PrivatePerThread;
  bool Guarded;
  ThreadIdSites Sites;
  Function *Checked = nullptr; ///< CLEAVE_CHECK=memory's twin
};

} // namespace

static void remarkRefused(const CPULowerCallbacks &CB, Function &Kernel,
                          const Refusal &R) {
  std::string Where;
  raw_string_ostream OS(Where);
  if (R.At)
    printLocation(OS, *R.At);
  OptimizationRemarkMissed Remark =
      R.At ? OptimizationRemarkMissed(PassName, "NoCPUVariant",
                                      userLocation(*R.At), R.At->getParent())
           : OptimizationRemarkMissed(PassName, "NoCPUVariant",
                                      &*Kernel.getEntryBlock().begin());
  Remark << "kernel " << displayName(Kernel)
         << " stays GPU-only: " << R.What << OS.str();
  if (CB.Refused)
    CB.Refused(Kernel, Remark);
  CB.GetORE(Kernel).emit(Remark);
}

std::unique_ptr<Module> createCPUModule(Module &Device,
                                        const CPULowerCallbacks &CB) {
  LLVMContext &Ctx = Device.getContext();
  ValueToValueMapTy CloneMap;
  std::unique_ptr<Module> Tmp = CloneModule(Device, CloneMap);

  SmallVector<LoweredKernel, 8> Lowered;
  for (Function *Kernel : getKernels(Device)) {
    OptimizationRemarkEmitter &ORE = CB.GetORE(*Kernel);
    if (std::string Blocker = CB.CPUBlocker(*Kernel); !Blocker.empty()) {
      remarkRefused(CB, *Kernel, {Blocker, nullptr});
      continue;
    }
    // The scratch copy of the kernel is changed in place; a refusal halfway
    // leaves it broken but unused, since only host functions are kept.
    auto *K = cast<Function>(CloneMap[Kernel]);
    KernelLowering KL(*K, Kernel->getName(), CB);
    if (std::optional<Refusal> R = KL.run()) {
      remarkRefused(CB, *Kernel, *R);
      if (KL.Host)
        KL.Host->eraseFromParent();
      continue;
    }
    ORE.emit([&] {
      return OptimizationRemark(PassName, "CPUVariant", Kernel)
             << "kernel " << displayName(*Kernel) << ": CPU variant "
             << KL.Host->getName() << " with " << ore::NV("Regions", KL.NumRegions)
             << " region(s)" << (KL.Guarded ? ", guarded" : "");
    });
    Lowered.push_back({KL.Host, Kernel->getName().str(),
                       static_cast<unsigned>(Kernel->arg_size()),
                       KL.StaticSharedBytes, KL.PrivateBytesPerThread,
                       KL.Guarded, KL.Sites});
  }
  for (LoweredKernel &LK : Lowered) {
    SmallVector<Constant *, 8> Globals;
    for (GlobalVariable &GV : Tmp->globals())
      if (GV.getAddressSpace() != 0)
        Globals.push_back(&GV);
    convertUsersOfConstantsToInstructions(Globals, LK.Host);
    LK.Checked = createCheckedVariant(*LK.Host, LK.Sites,
                                      cpuCheckedVariantName(LK.Name));
  }

  auto Host = std::make_unique<Module>(Device.getName().str() + ".cpu", Ctx);
  Host->setTargetTriple("x86_64-unknown-linux-gnu");
  Host->setDataLayout("e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-"
                      "f80:128-n8:16:32:64-S128");
  Host->setSourceFileName(Device.getSourceFileName());
  AddrSpaceStripper Strip(Ctx);
  ValueToValueMapTy VMap;
  // Declarations and non-shared globals first, so bodies can refer to them.
  for (GlobalVariable &GV : Tmp->globals()) {
    if (GV.getAddressSpace() == 3 || GV.getName().starts_with("llvm."))
      continue;
    // __device__ and __constant__ variables: the CPU's own copy, under a
    // name that cannot clash with the host program's shadow variable of the
    // same name; the runtime finds it by that name (docs/cpu-backend.md).
    std::string GVName = GV.getName().str();
    if (!GV.hasLocalLinkage() &&
        (GV.getAddressSpace() == 1 || GV.getAddressSpace() == 4))
      GVName = cpuVariableName(GV.getName());
    auto *NG = new GlobalVariable(*Host, Strip.remapType(GV.getValueType()),
                                  GV.isConstant(), GV.getLinkage(), nullptr,
                                  GVName, nullptr,
                                  GV.getThreadLocalMode(), 0);
    NG->copyAttributesFrom(&GV);
    VMap[&GV] = NG;
  }
  for (Function &F : *Tmp) {
    if (!F.isDeclaration())
      continue;
    auto *NF = Function::Create(
        cast<FunctionType>(Strip.remapType(F.getFunctionType())),
        GlobalValue::ExternalLinkage, F.getName(), Host.get());
    if (!F.isIntrinsic())
      NF->copyAttributesFrom(&F);
    VMap[&F] = NF;
  }
  auto CloneIntoHost = [&](Function *F) {
    auto *NF = Function::Create(
        cast<FunctionType>(Strip.remapType(F->getFunctionType())),
        F->getLinkage(), F->getName(), Host.get());
    VMap[F] = NF;
    for (auto [A, NA] : zip(F->args(), NF->args())) {
      NA.setName(A.getName());
      VMap[&A] = &NA;
    }
    SmallVector<ReturnInst *, 4> Returns;
    CloneFunctionInto(NF, F, VMap, CloneFunctionChangeType::DifferentModule,
                      Returns, "", nullptr, &Strip);
    // Casts between address spaces that are now all 0 are no-ops.
    for (Instruction &I : make_early_inc_range(instructions(*NF)))
      if (auto *ASC = dyn_cast<AddrSpaceCastInst>(&I);
          ASC && ASC->getSrcTy() == ASC->getDestTy()) {
        ASC->replaceAllUsesWith(ASC->getOperand(0));
        ASC->eraseFromParent();
      }
    return NF;
  };
  for (LoweredKernel &LK : Lowered) {
    LK.Host = CloneIntoHost(LK.Host);
    LK.Checked = CloneIntoHost(LK.Checked);
  }
  for (GlobalVariable &GV : Tmp->globals())
    if (GV.hasInitializer() && VMap.count(&GV))
      cast<GlobalVariable>(VMap[&GV])
          ->setInitializer(MapValue(GV.getInitializer(), VMap, RF_None, &Strip));
  // Intrinsic names mangle address spaces (llvm.memcpy.p1.p0.i64).
  for (Function &F : make_early_inc_range(*Host))
    if (F.isIntrinsic())
      if (std::optional<Function *> NF = Intrinsic::remangleIntrinsicFunction(&F)) {
        F.replaceAllUsesWith(*NF);
        F.eraseFromParent();
      }
  if (Function *Bits = Host->getFunction(WarpBitsHelper);
      Bits && !Bits->use_empty())
    defineWarpBitsHelper(*Bits);
  for (char Mode : {'z', 'm', 'p'})
    if (Function *Fma = Host->getFunction(std::string("__cleave_rt_fma_r") +
                                          Mode + "_f32");
        Fma && Fma->isDeclaration() && !Fma->use_empty()) {
      // An internal copy under its own name: the runtime keeps the
      // external helper (and its tests).
      Fma->setName(std::string("__cleave_cpu_fma_r") + Mode + "_f32");
      defineFmaDirectedF32(*Fma, Mode);
    }
  // Drop what no variant uses (device-only globals, kernels' callees).
  bool Changed = true;
  while (Changed) {
    Changed = false;
    for (GlobalVariable &GV : make_early_inc_range(Host->globals()))
      if (GV.use_empty()) {
        GV.eraseFromParent();
        Changed = true;
      }
    for (Function &F : make_early_inc_range(*Host))
      if (F.isDeclaration() && F.use_empty()) {
        F.eraseFromParent();
        Changed = true;
      }
  }
  for (GlobalVariable &GV : make_early_inc_range(Host->globals()))
    if (GV.use_empty() && GV.isDeclaration())
      GV.eraseFromParent();

  // Descriptors (cleave_cpu_kernel_desc).
  Type *Ptr = PointerType::get(Ctx, 0);
  Type *I32 = Type::getInt32Ty(Ctx), *I64 = Type::getInt64Ty(Ctx);
  StructType *DescTy =
      StructType::get(Ctx, {Ptr, Ptr, I64, I64, I32, I32, Ptr});
  for (LoweredKernel &LK : Lowered) {
    Constant *Name = ConstantDataArray::getString(Ctx, LK.Name);
    auto *NameGV = new GlobalVariable(*Host, Name->getType(), true,
                                      GlobalValue::PrivateLinkage, Name,
                                      ".name." + LK.Name);
    Constant *Desc = ConstantStruct::get(
        DescTy, {NameGV, LK.Host, ConstantInt::get(I64, LK.StaticShared),
                 ConstantInt::get(I64, LK.PrivatePerThread),
                 ConstantInt::get(I32, LK.NumParams),
                 ConstantInt::get(I32, (LK.Guarded ? 1 : 0) |
                                           CLEAVE_CPU_HAS_CHECKED),
                 LK.Checked});
    new GlobalVariable(*Host, DescTy, true, GlobalValue::ExternalLinkage, Desc,
                       cpuDescriptorName(LK.Name));
  }
  return Host;
}

PreservedAnalyses CPULowerPass::run(Module &M, ModuleAnalysisManager &MAM) {
  auto &FAM = MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
  CPULowerCallbacks CB;
  CB.CPUBlocker = [&](Function &F) -> std::string {
    const KernelLegality &KL = FAM.getResult<KernelLegalityAnalysis>(F);
    if (KL.canRunOnCPU())
      return {};
    for (const LegalityIssue &I : KL.Issues)
      if (I.ForbidsCPU) {
        std::string S;
        raw_string_ostream OS(S);
        OS << getIssueKindName(I.Kind);
        if (!I.Detail.empty())
          OS << " (" << I.Detail << ")";
        printLocation(OS, *I.Inst);
        return S;
      }
    return "kernel legality forbids the CPU";
  };
  CB.GetUniformity = [&](Function &F) -> UniformityInfo * {
    TargetTransformInfo &TTI = FAM.getResult<TargetIRAnalysis>(F);
    if (!TTI.hasBranchDivergence(&F))
      return nullptr;
    return &FAM.getResult<UniformityInfoAnalysis>(F);
  };
  CB.Forget = [&](Function &F) { FAM.clear(F, F.getName()); };
  CB.GetORE = [&](Function &F) -> OptimizationRemarkEmitter & {
    return FAM.getResult<OptimizationRemarkEmitterAnalysis>(F);
  };
  VariantRefusals &Refusals = MAM.getResult<VariantRefusalAnalysis>(M);
  CB.Refused = [&](Function &F, const DiagnosticInfoOptimizationBase &R) {
    Refusals.record(F.getName(), RefusedVariant::CPU, R);
  };
  std::unique_ptr<Module> Host = createCPUModule(M, CB);

  // Replace M's contents with the host module.
  for (Function &F : M)
    FAM.clear(F, F.getName());
  for (Function &F : M)
    F.dropAllReferences();
  for (GlobalVariable &GV : M.globals())
    GV.dropAllReferences();
  for (GlobalAlias &GA : M.aliases())
    GA.dropAllReferences();
  while (!M.alias_empty())
    M.alias_begin()->eraseFromParent();
  while (!M.empty())
    M.begin()->eraseFromParent();
  while (!M.global_empty())
    M.global_begin()->eraseFromParent();
  for (NamedMDNode &NMD : make_early_inc_range(M.named_metadata()))
    if (NMD.getName() != "llvm.module.flags" && NMD.getName() != "llvm.ident")
      M.eraseNamedMetadata(&NMD);
  M.setTargetTriple(Host->getTargetTriple());
  M.setDataLayout(Host->getDataLayout());
  if (Linker::linkModules(M, std::move(Host)))
    report_fatal_error("cleave-cpu-lower: linking the host module failed");
  return PreservedAnalyses::none();
}

} // namespace cleave
