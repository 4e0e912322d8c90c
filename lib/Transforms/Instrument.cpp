//===- Instrument.cpp - Instrumented CPU variants for `cleave analyze` ----===//
//
// Part of Cleave. See cleave/Transforms/Instrument.h and docs/analyze.md.
//
// The markers are volatile stores to internal globals because the CPU
// lowering refuses calls to functions without a body, and keeps stores as
// they are: each lands in the thread loop of the region that executes it,
// once per thread, which is exactly where the recorder must be called.
//
//===----------------------------------------------------------------------===//
#include "cleave/Transforms/Instrument.h"

#include "cleave/ABI/CpuCheckABI.h"
#include "cleave/Support/KernelInfo.h"
#include "cleave/Transforms/CPULower.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace cleave {

static constexpr uint32_t SiteIndexBits = 20;
static constexpr uint32_t MaxModules = 1u << (32 - SiteIndexBits);

std::string instrumentedVariantName(StringRef Kernel) {
  return ("__cleave_instr_" + Kernel).str();
}

const BlockSite *InstrumentInfo::block(uint32_t Id) const {
  if ((Id >> SiteIndexBits) != ModuleIndex)
    return nullptr;
  uint32_t I = Id & ((1u << SiteIndexBits) - 1);
  return I < Blocks.size() ? &Blocks[I] : nullptr;
}

const MemSite *InstrumentInfo::mem(uint32_t Id) const {
  if ((Id >> SiteIndexBits) != ModuleIndex)
    return nullptr;
  uint32_t I = Id & ((1u << SiteIndexBits) - 1);
  return I < Mems.size() ? &Mems[I] : nullptr;
}

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

/// How many PTX instructions one IR instruction becomes: one per element
/// for vector arithmetic (PTX has no vector ALU ops), one otherwise
/// (vector loads and stores are one ld/st.v2/v4).
unsigned weightOf(const Instruction &I) {
  if (isa<LoadInst>(I) || isa<StoreInst>(I) || isa<CallBase>(I))
    return 1;
  if (auto *VT = dyn_cast<FixedVectorType>(I.getType()))
    return VT->getNumElements();
  return 1;
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

namespace {

/// The pointer and width of a global memory access that gets a memory
/// marker, if \p I is one.
std::optional<std::pair<Value *, uint64_t>> globalAccess(Instruction &I,
                                                        InstrClass C) {
  if (C != InstrClass::GlobalLoad && C != InstrClass::GlobalStore &&
      C != InstrClass::GlobalAtomic)
    return std::nullopt;
  const DataLayout &DL = I.getModule()->getDataLayout();
  if (auto *L = dyn_cast<LoadInst>(&I))
    return std::pair(L->getPointerOperand(),
                     uint64_t(DL.getTypeStoreSize(L->getType())));
  if (auto *S = dyn_cast<StoreInst>(&I))
    return std::pair(S->getPointerOperand(),
                     uint64_t(DL.getTypeStoreSize(
                         S->getValueOperand()->getType())));
  if (auto *A = dyn_cast<AtomicRMWInst>(&I))
    return std::pair(A->getPointerOperand(),
                     uint64_t(DL.getTypeStoreSize(A->getType())));
  if (auto *A = dyn_cast<AtomicCmpXchgInst>(&I))
    return std::pair(A->getPointerOperand(),
                     uint64_t(DL.getTypeStoreSize(
                         A->getNewValOperand()->getType())));
  if (auto *CB = dyn_cast<CallBase>(&I); CB && CB->arg_size() > 0 &&
                                         CB->getArgOperand(0)
                                             ->getType()
                                             ->isPointerTy())
    return std::pair(CB->getArgOperand(0),
                     uint64_t(DL.getTypeStoreSize(CB->getType())));
  return std::nullopt;
}

/// threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z), as
/// an i64: the thread's linear id in its block (x fastest, as the CPU
/// lowering numbers threads).
Value *linearThreadId(IRBuilder<> &B) {
  auto Read = [&](Intrinsic::ID ID) {
    return B.CreateZExt(B.CreateIntrinsic(ID, {}, {}), B.getInt64Ty());
  };
  Value *Z = Read(Intrinsic::nvvm_read_ptx_sreg_tid_z);
  Value *Y = Read(Intrinsic::nvvm_read_ptx_sreg_tid_y);
  Value *X = Read(Intrinsic::nvvm_read_ptx_sreg_tid_x);
  Value *NY = Read(Intrinsic::nvvm_read_ptx_sreg_ntid_y);
  Value *NX = Read(Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  return B.CreateAdd(X, B.CreateMul(NX, B.CreateAdd(Y, B.CreateMul(NY, Z))),
                     "cleave.instr.thread");
}

GlobalVariable *markerGlobal(Module &M, StringRef Name, Type *Ty) {
  if (auto *GV = M.getNamedGlobal(Name))
    return GV;
  // Address space 1 as the CPU lowering expects of device data; internal,
  // so the lowering keeps its name.
  return new GlobalVariable(M, Ty, /*isConstant=*/false,
                            GlobalValue::InternalLinkage,
                            Constant::getNullValue(Ty), Name, nullptr,
                            GlobalValue::NotThreadLocal, 1);
}

std::string locationOf(const Instruction &I) {
  const DILocation *Loc = I.getDebugLoc();
  if (!Loc)
    return {};
  while (const DILocation *In = Loc->getInlinedAt())
    Loc = In;
  return (Loc->getFilename() + ":" + Twine(Loc->getLine()) + ":" +
          Twine(Loc->getColumn()))
      .str();
}

} // namespace

Expected<InstrumentInfo> instrumentModule(Module &M, uint32_t ModuleIndex) {
  if (ModuleIndex >= MaxModules)
    return createStringError(inconvertibleErrorCode(),
                             "cannot instrument more than %u modules",
                             MaxModules);
  if (M.getNamedGlobal(InstrBlockMarker))
    return createStringError(inconvertibleErrorCode(),
                             "module '%s' is already instrumented",
                             M.getModuleIdentifier().c_str());
  InstrumentInfo Info;
  Info.ModuleIndex = ModuleIndex;
  for (Function *K : getKernels(M))
    Info.Kernels.push_back(K->getName().str());
  LLVMContext &Ctx = M.getContext();
  Type *I64 = Type::getInt64Ty(Ctx);
  auto *V2 = FixedVectorType::get(I64, 2);
  GlobalVariable *BlockMarker = markerGlobal(M, InstrBlockMarker, I64);
  GlobalVariable *MemMarker = markerGlobal(M, InstrMemMarker, V2);
  uint64_t Base = uint64_t(ModuleIndex) << SiteIndexBits;
  uint64_t Limit = 1ull << SiteIndexBits;

  for (Function &F : M) {
    if (F.isDeclaration() || F.isIntrinsic())
      continue;
    unsigned Index = 0;
    for (BasicBlock &BB : F) {
      if (Info.Blocks.size() >= Limit || Info.Mems.size() >= Limit)
        return createStringError(inconvertibleErrorCode(),
                                 "module '%s' has more than %llu sites",
                                 M.getModuleIdentifier().c_str(),
                                 (unsigned long long)Limit);
      BlockSite Site;
      Site.Id = uint32_t(Base | Info.Blocks.size());
      Site.Function = F.getName().str();
      Site.Name = BB.hasName() ? BB.getName().str()
                               : ("#" + Twine(Index)).str();
      ++Index;
      // Classify first: the markers are not part of the kernel.
      SmallVector<std::pair<Instruction *, InstrClass>, 32> Accesses;
      for (Instruction &I : BB) {
        std::optional<InstrClass> C = classifyInstruction(I);
        if (!C)
          continue;
        for (unsigned W = weightOf(I); W; --W)
          Site.Sequence.push_back(*C);
        if (globalAccess(I, *C))
          Accesses.push_back({&I, *C});
      }
      for (InstrClass C : Site.Sequence)
        ++Site.Counts[unsigned(C)];
      IRBuilder<> B(&*BB.getFirstInsertionPt());
      Value *Thread = linearThreadId(B);
      B.CreateStore(B.CreateOr(Thread, uint64_t(Site.Id) << 32), BlockMarker,
                    /*isVolatile=*/true);
      for (auto &[I, C] : Accesses) {
        auto [Ptr, Bytes] = *globalAccess(*I, C);
        MemSite MS;
        MS.Id = uint32_t(Base | Info.Mems.size());
        MS.Block = Site.Id;
        MS.Bytes = uint32_t(std::min<uint64_t>(Bytes, 0xffff));
        MS.Class = C;
        MS.Location = locationOf(*I);
        IRBuilder<> MB(I);
        Value *T = linearThreadId(MB);
        Value *Meta = MB.CreateOr(
            T, (uint64_t(MS.Id) << 32) | (uint64_t(MS.Bytes) << 16));
        Value *Addr = MB.CreatePtrToInt(Ptr, I64);
        Value *Vec = MB.CreateInsertElement(PoisonValue::get(V2), Meta,
                                            MB.getInt64(0));
        Vec = MB.CreateInsertElement(Vec, Addr, MB.getInt64(1));
        MB.CreateStore(Vec, MemMarker, /*isVolatile=*/true);
        Info.Mems.push_back(std::move(MS));
      }
      Info.Blocks.push_back(std::move(Site));
    }
  }
  return Info;
}

Error finalizeInstrumentedCPU(Module &Host) {
  LLVMContext &Ctx = Host.getContext();
  Type *I64 = Type::getInt64Ty(Ctx), *Void = Type::getVoidTy(Ctx);
  FunctionCallee BlockFn = Host.getOrInsertFunction(
      InstrBlockFunction, FunctionType::get(Void, {I64}, false));
  FunctionCallee MemFn = Host.getOrInsertFunction(
      InstrMemFunction, FunctionType::get(Void, {I64, I64}, false));
  for (const char *Name : {InstrBlockMarker, InstrMemMarker}) {
    GlobalVariable *GV = Host.getNamedGlobal(Name);
    if (!GV)
      continue;
    SmallVector<User *, 64> Users(GV->users());
    for (User *U : Users) {
      auto *SI = dyn_cast<StoreInst>(U);
      if (!SI || SI->getPointerOperand() != GV)
        return createStringError(inconvertibleErrorCode(),
                                 "instrumentation marker %s is used by "
                                 "something other than its stores",
                                 Name);
      IRBuilder<> B(SI);
      Value *V = SI->getValueOperand();
      if (GV->getName() == InstrBlockMarker)
        B.CreateCall(BlockFn, {V});
      else
        B.CreateCall(MemFn, {B.CreateExtractElement(V, uint64_t(0)),
                             B.CreateExtractElement(V, uint64_t(1))});
      SI->eraseFromParent();
    }
    GV->eraseFromParent();
  }
  return Error::success();
}

/// Recording runs the instrumented variant only: its checked twin
/// (CLEAVE_CHECK=memory) goes, with the flag that announces it.
static void dropCheckedVariant(GlobalVariable &Desc) {
  auto *Init = cast<ConstantStruct>(Desc.getInitializer());
  SmallVector<Constant *, 8> Fields;
  for (Use &Op : Init->operands())
    Fields.push_back(cast<Constant>(Op.get()));
  auto *Flags = cast<ConstantInt>(Fields[5]);
  uint64_t Kept = Flags->getZExtValue() & ~uint64_t(CLEAVE_CPU_HAS_CHECKED);
  Fields[5] = ConstantInt::get(Flags->getType(), Kept);
  Fields[6] = Constant::getNullValue(Fields[6]->getType());
  Desc.setInitializer(ConstantStruct::get(Init->getType(), Fields));
}

Error linkInstrumentedVariants(Module &Plain, std::unique_ptr<Module> Instr,
                               ArrayRef<std::string> Kernels) {
  StringSet<> Linked;
  for (const std::string &K : Kernels) {
    Function *F = Instr->getFunction(cpuVariantName(K));
    GlobalVariable *D = Instr->getNamedGlobal(cpuVariantName(K) + "_desc");
    if (!F || !D || !Plain.getNamedGlobal(cpuVariantName(K) + "_desc"))
      continue; // no CPU variant: the kernel never runs on the CPU
    F->setName(instrumentedVariantName(K));
    D->setName(instrumentedVariantName(K) + "_desc");
    dropCheckedVariant(*D);
    Linked.insert(K);
  }
  // What is left under the CPU names (merge variants, variable copies) must
  // not clash with the ordinary module: variables become declarations of
  // the ordinary copies, descriptors and their functions go.
  for (GlobalVariable &GV : make_early_inc_range(Instr->globals())) {
    if (!GV.getName().starts_with("__cleave_cpu_") || GV.isDeclaration())
      continue;
    if (GV.getName().ends_with("_desc")) {
      GV.eraseFromParent();
      continue;
    }
    GV.setInitializer(nullptr);
    GV.setLinkage(GlobalValue::ExternalLinkage);
  }
  bool Changed = true;
  while (Changed) {
    Changed = false;
    for (Function &F : make_early_inc_range(*Instr))
      if (F.getName().starts_with("__cleave_cpu_") && F.use_empty()) {
        F.eraseFromParent();
        Changed = true;
      }
  }
  if (Linker::linkModules(Plain, std::move(Instr)))
    return createStringError(inconvertibleErrorCode(),
                             "cannot link the instrumented CPU variants");

  LLVMContext &Ctx = Plain.getContext();
  Type *Ptr = PointerType::get(Ctx, 0), *I64 = Type::getInt64Ty(Ctx);
  FunctionType *KernelTy = FunctionType::get(Type::getVoidTy(Ctx),
                                             {Ptr, Ptr, I64, I64, Ptr}, false);
  FunctionCallee Run = Plain.getOrInsertFunction(
      InstrRunFunction,
      FunctionType::get(Type::getVoidTy(Ctx),
                        {Ptr, Ptr, Ptr, Ptr, I64, I64, Ptr}, false));
  for (const std::string &K : Kernels) {
    if (!Linked.contains(K))
      continue;
    GlobalVariable *PD = Plain.getNamedGlobal(cpuVariantName(K) + "_desc");
    GlobalVariable *ID =
        Plain.getNamedGlobal(instrumentedVariantName(K) + "_desc");
    Function *PF = Plain.getFunction(cpuVariantName(K));
    if (!PD || !ID || !PF || !PD->hasInitializer())
      return createStringError(inconvertibleErrorCode(),
                               "instrumented variant of %s lost in linking",
                               K.c_str());
    // void dispatch(args, launch, first, count, scratch) {
    //   __cleave_rt_instr_run(&instr_desc, plain, args, launch, first,
    //                         count, scratch); }
    Function *Dispatch =
        Function::Create(KernelTy, GlobalValue::InternalLinkage,
                         cpuVariantName(K) + ".instr_dispatch", Plain);
    IRBuilder<> B(BasicBlock::Create(Ctx, "entry", Dispatch));
    SmallVector<Value *, 7> Args = {ID, PF};
    for (Argument &A : Dispatch->args())
      Args.push_back(&A);
    B.CreateCall(Run, Args);
    B.CreateRetVoid();
    auto *Init = cast<ConstantStruct>(PD->getInitializer());
    SmallVector<Constant *, 6> Fields;
    for (Use &Op : Init->operands())
      Fields.push_back(cast<Constant>(Op.get()));
    Fields[1] = Dispatch;
    PD->setInitializer(ConstantStruct::get(Init->getType(), Fields));
  }
  return Error::success();
}

void printInstrumentInfo(const InstrumentInfo &Info, raw_ostream &OS) {
  for (const std::string &K : Info.Kernels)
    OS << "kernel " << K << "\n";
  for (const BlockSite &B : Info.Blocks) {
    OS << "block " << B.Id << " " << B.Function << " " << B.Name << ":";
    for (InstrClass C : B.Sequence)
      OS << " " << instrClassName(C);
    OS << "\n";
  }
  for (const MemSite &M : Info.Mems) {
    OS << "mem " << M.Id << " block " << M.Block << " "
       << instrClassName(M.Class) << " " << M.Bytes << " B";
    if (!M.Location.empty())
      OS << " " << M.Location;
    OS << "\n";
  }
}

PreservedAnalyses InstrumentPass::run(Module &M, ModuleAnalysisManager &) {
  Expected<InstrumentInfo> Info = instrumentModule(M, 0);
  if (!Info) {
    M.getContext().emitError(toString(Info.takeError()));
    return PreservedAnalyses::all();
  }
  return PreservedAnalyses::none();
}

} // namespace cleave
