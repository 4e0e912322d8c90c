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

#include "cleave/Analysis/InstructionMix.h"

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
        for (unsigned W = ptxInstructions(I); W; --W)
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
  // Erasing a descriptor leaves its initializer behind as a dead constant
  // that still uses the variant it named: such users do not count.
  bool Changed = true;
  while (Changed) {
    Changed = false;
    for (Function &F : make_early_inc_range(*Instr)) {
      if (!F.getName().starts_with("__cleave_cpu_"))
        continue;
      F.removeDeadConstantUsers();
      if (F.use_empty()) {
        F.eraseFromParent();
        Changed = true;
      }
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
