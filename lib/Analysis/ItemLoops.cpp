//===- ItemLoops.cpp - Loops whose trip count an item determines ----------===//
//
// Part of Cleave. See ItemLoops.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/Analysis/ItemLoops.h"

#include "cleave/Analysis/WrittenData.h"
#include "cleave/Support/KernelInfo.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Analysis/CFG.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/PostDominators.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/PatternMatch.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace llvm::PatternMatch;

namespace cleave {

AnalysisKey ItemLoopAnalysis::Key;

const ItemLoop *ItemLoopInfo::candidate() const {
  for (const ItemLoop &L : Loops)
    if (L.candidate())
      return &L;
  return nullptr;
}

namespace {

constexpr unsigned SharedAS = 3;

Intrinsic::ID intrinsicOf(const Value *V) {
  if (const auto *II = dyn_cast<IntrinsicInst>(V))
    return II->getIntrinsicID();
  return Intrinsic::not_intrinsic;
}

/// V, or the value V extends or truncates.
const Value *stripCasts(const Value *V) {
  while (const auto *C = dyn_cast<CastInst>(V))
    if (C->isIntegerCast())
      V = C->getOperand(0);
    else
      break;
  return V;
}

bool isRead(const Value *V, Intrinsic::ID ID) {
  return intrinsicOf(stripCasts(V)) == ID;
}

/// blockIdx.x * blockDim.x + threadIdx.x, in any operand order and width.
bool isItemIndex(const Instruction &I) {
  Value *A, *B;
  if (!match(&I, m_c_Add(m_Value(A), m_Value(B))))
    return false;
  for (auto [Mul, Tid] : {std::pair(A, B), std::pair(B, A)}) {
    Value *X, *Y;
    if (!isRead(Tid, Intrinsic::nvvm_read_ptx_sreg_tid_x) ||
        !match(stripCasts(Mul), m_c_Mul(m_Value(X), m_Value(Y))))
      continue;
    if ((isRead(X, Intrinsic::nvvm_read_ptx_sreg_ctaid_x) &&
         isRead(Y, Intrinsic::nvvm_read_ptx_sreg_ntid_x)) ||
        (isRead(Y, Intrinsic::nvvm_read_ptx_sreg_ctaid_x) &&
         isRead(X, Intrinsic::nvvm_read_ptx_sreg_ntid_x)))
      return true;
  }
  return false;
}

/// Intrinsics through which threads see each other's values.
bool isCommunication(const CallBase &CB) {
  if (const Function *Callee = CB.getCalledFunction()) {
    StringRef N = Callee->getName();
    return N.contains(".shfl.") || N.contains(".vote.") ||
           N.contains(".match.") || N.contains(".redux.") ||
           N.contains(".atomic.") || N.contains("barrier.sync") ||
           N.contains(".bar.red.");
  }
  return false;
}

/// Barriers and memory fences order memory but write none of it.
bool isBarrier(const IntrinsicInst &II) {
  StringRef N = II.getCalledFunction()->getName();
  return N.starts_with("llvm.nvvm.barrier") ||
         N.starts_with("llvm.nvvm.bar.warp.sync") ||
         N.starts_with("llvm.nvvm.membar") || N.starts_with("llvm.nvvm.fence");
}

/// The y and z thread and block indices: the item space is then not 1-D.
bool readsHigherDimension(Intrinsic::ID ID) {
  switch (ID) {
  case Intrinsic::nvvm_read_ptx_sreg_tid_y:
  case Intrinsic::nvvm_read_ptx_sreg_tid_z:
  case Intrinsic::nvvm_read_ptx_sreg_ctaid_y:
  case Intrinsic::nvvm_read_ptx_sreg_ctaid_z:
    return true;
  default:
    return false;
  }
}

/// The condition of BB's conditional branch or switch, else null.
const Value *branchCondition(const BasicBlock &BB) {
  const Instruction *T = BB.getTerminator();
  if (const auto *Br = dyn_cast<BranchInst>(T); Br && Br->isConditional())
    return Br->getCondition();
  if (const auto *Sw = dyn_cast<SwitchInst>(T))
    return Sw->getCondition();
  return nullptr;
}

/// BB is control dependent on A's branch when BB post-dominates one of A's
/// successors but not A itself.
bool isControlDependent(const BasicBlock &BB, const BasicBlock &A,
                        const PostDominatorTree &PDT) {
  if (PDT.properlyDominates(&BB, &A))
    return false;
  for (const BasicBlock *S : successors(&A))
    if (PDT.dominates(&BB, S))
      return true;
  return false;
}

/// Walks the backward slice of a loop's exit conditions; stops at the first
/// value a thread could not compute ahead from its own item.
class ExitSlice {
public:
  ExitSlice(const Function &F, const Loop &L, const Instruction *ItemIndex,
            const PostDominatorTree &PDT, const DominatorTree &DT,
            const WrittenDataFinder &Written)
      : F(F), L(L), ItemIndex(ItemIndex), PDT(PDT), DT(DT), Written(Written) {}

  /// Fills Out's verdict for L.
  void run(ItemLoop &Out);

private:
  void push(const Value *V) {
    if (Seen.insert(V).second)
      Work.push_back(V);
  }
  void pushControlDeps(const BasicBlock *BB);
  /// Empty when I's value is computable ahead; else why not.
  std::string visit(const Instruction &I);
  std::string visitLoad(const LoadInst &LI);
  std::string visitCall(const CallBase &CB);
  std::string visitPrivate(const Value *Object);
  std::string visitItemState(const LoadInst &LI);

  const Function &F;
  const Loop &L;
  const Instruction *ItemIndex;
  const PostDominatorTree &PDT;
  const DominatorTree &DT;
  const WrittenDataFinder &Written;
  SmallPtrSet<const Value *, 32> Seen;
  SmallVector<const Value *, 64> Work;
  bool ItemDependent = false;
};

void ExitSlice::pushControlDeps(const BasicBlock *BB) {
  for (const BasicBlock &A : F)
    if (const Value *Cond = branchCondition(A);
        Cond && isControlDependent(*BB, A, PDT))
      push(Cond);
}

void ExitSlice::run(ItemLoop &Out) {
  SmallVector<BasicBlock *, 4> Exiting;
  L.getExitingBlocks(Exiting);
  for (const BasicBlock *BB : Exiting) {
    if (const Value *Cond = branchCondition(*BB))
      push(Cond);
    pushControlDeps(BB);
  }
  while (!Work.empty()) {
    const Value *V = Work.pop_back_val();
    const auto *I = dyn_cast<Instruction>(V);
    if (!I)
      continue; // constants and arguments are uniform
    if (I == ItemIndex) {
      ItemDependent = true;
      continue;
    }
    std::string Why = visit(*I);
    if (!Why.empty()) {
      Out.Why = std::move(Why);
      Out.Blocker = I;
      return;
    }
  }
  Out.ItemDependent = ItemDependent;
}

std::string ExitSlice::visit(const Instruction &I) {
  if (const auto *LI = dyn_cast<LoadInst>(&I))
    return visitLoad(*LI);
  if (isa<AtomicRMWInst>(I) || isa<AtomicCmpXchgInst>(I))
    return "the exit condition depends on an atomic, whose value other "
           "threads determine";
  if (const auto *CB = dyn_cast<CallBase>(&I))
    return visitCall(*CB);
  if (const auto *Phi = dyn_cast<PHINode>(&I)) {
    for (const Value *In : Phi->incoming_values())
      push(In);
    pushControlDeps(Phi->getParent());
    return "";
  }
  for (const Value *Op : I.operands())
    push(Op);
  return "";
}

std::string ExitSlice::visitCall(const CallBase &CB) {
  if (CB.isInlineAsm())
    return "the exit condition depends on inline assembly";
  if (isCommunication(CB))
    return "the exit condition depends on a value exchanged between threads "
           "(shuffle, vote, atomic or barrier reduction)";
  const Function *Callee = CB.getCalledFunction();
  Intrinsic::ID ID = intrinsicOf(&CB);
  if (Callee && Callee->getName().starts_with("llvm.nvvm.read.ptx.sreg.")) {
    switch (ID) {
    case Intrinsic::nvvm_read_ptx_sreg_tid_x:
    case Intrinsic::nvvm_read_ptx_sreg_ctaid_x:
      // Reached other than through the item index (where the walk stops):
      // the count would follow the thread, not the item.
      return "the exit condition depends on threadIdx.x or blockIdx.x other "
             "than through the work-item index";
    case Intrinsic::nvvm_read_ptx_sreg_ntid_x:
    case Intrinsic::nvvm_read_ptx_sreg_nctaid_x:
      return "";
    default:
      return ("the exit condition depends on '" + Callee->getName() +
              "', which is not the item's")
          .str();
    }
  }
  // libdevice's math is pure; so is anything LLVM knows touches no memory.
  bool Pure = CB.doesNotAccessMemory() ||
              (Callee && (Callee->doesNotAccessMemory() ||
                          Callee->getName().starts_with("__nv_")));
  if (!Pure)
    return ("the exit condition depends on a call of '" +
            (Callee ? Callee->getName() : StringRef("an unknown function")) +
            "' that may access memory")
        .str();
  for (const Value *Arg : CB.args())
    push(Arg);
  return "";
}

std::string ExitSlice::visitLoad(const LoadInst &LI) {
  const Value *Ptr = LI.getPointerOperand();
  if (Ptr->getType()->getPointerAddressSpace() == SharedAS ||
      getPointerSpace(Ptr, F, Written.getScope()) == PointerSpace::Shared)
    return "the exit condition reads shared memory, which other threads "
           "of the block write";
  if (const auto *AI = dyn_cast<AllocaInst>(getUnderlyingObject(Ptr))) {
    push(Ptr);
    return visitPrivate(AI);
  }
  push(Ptr);
  if (!Written.mayBeWritten(Ptr))
    return "";
  return visitItemState(LI);
}

/// The values stored to a private object are part of the slice.
std::string ExitSlice::visitPrivate(const Value *Object) {
  SmallVector<const Value *, 8> Ptrs = {Object};
  SmallPtrSet<const Value *, 8> SeenPtrs = {Object};
  while (!Ptrs.empty()) {
    const Value *P = Ptrs.pop_back_val();
    for (const User *U : P->users()) {
      if (isa<LoadInst>(U))
        continue;
      if (const auto *SI = dyn_cast<StoreInst>(U)) {
        if (SI->getValueOperand() == P)
          return "a private object's address escapes into memory";
        push(SI->getValueOperand());
        continue;
      }
      if (const auto *II = dyn_cast<IntrinsicInst>(U)) {
        if (II->isLifetimeStartOrEnd())
          continue;
        if (isa<MemIntrinsic>(II)) {
          for (const Value *Arg : II->args())
            push(Arg);
          continue;
        }
      }
      if (isa<GetElementPtrInst>(U) || isa<CastInst>(U) || isa<PHINode>(U) ||
          isa<SelectInst>(U)) {
        if (SeenPtrs.insert(U).second)
          Ptrs.push_back(U);
        continue;
      }
      return "the exit condition reads private memory that a call may write";
    }
  }
  return "";
}

/// A load of memory the kernel writes is still the item's own state (a
/// PRNG state array) when it happens before the loop and every write to
/// that memory is a store at the very same address that cannot reach the
/// load.
std::string ExitSlice::visitItemState(const LoadInst &LI) {
  static constexpr const char *Why =
      "the exit condition reads memory the kernel writes";
  if (L.contains(&LI))
    return Why;
  const Value *Ptr = LI.getPointerOperand()->stripPointerCasts();
  SmallVector<const Value *, 4> Objects;
  getUnderlyingObjects(Ptr, Objects);
  SmallPtrSet<const Value *, 4> Mine(Objects.begin(), Objects.end());
  for (const Value *O : Objects)
    if (!isa<Argument>(O) && !isa<GlobalVariable>(O))
      return Why;
  for (const Instruction &I : instructions(F)) {
    if (!I.mayWriteToMemory() || isa<AllocaInst>(I))
      continue;
    const auto *SI = dyn_cast<StoreInst>(&I);
    if (!SI) {
      // Calls are inlined at this point; what is left (atomics, fences,
      // intrinsics that write) may write anywhere we cannot tell.
      if (const auto *II = dyn_cast<IntrinsicInst>(&I);
          II && (II->isLifetimeStartOrEnd() || isBarrier(*II)))
        continue;
      if (isa<FenceInst>(I))
        continue;
      return Why;
    }
    SmallVector<const Value *, 4> Stored;
    getUnderlyingObjects(SI->getPointerOperand(), Stored);
    bool Overlaps = false;
    for (const Value *O : Stored) {
      if (isa<AllocaInst>(O))
        continue;
      if (Mine.contains(O) || (!isa<Argument>(O) && !isa<GlobalVariable>(O)))
        Overlaps = true;
    }
    if (!Overlaps)
      continue;
    if (SI->getPointerOperand()->stripPointerCasts() != Ptr ||
        isPotentiallyReachable(SI, &LI, nullptr, &DT))
      return Why;
  }
  return "";
}

Instruction *findItemIndex(Function &F) {
  for (Instruction &I : instructions(F))
    if (isItemIndex(I))
      return &I;
  return nullptr;
}

const Instruction *firstLocated(const BasicBlock &BB) {
  for (const Instruction &I : BB)
    if (I.getDebugLoc() && I.getDebugLoc().getLine())
      return &I;
  return BB.getTerminator();
}

/// The values that depend on Seeds, through data and through the branches
/// that choose among phi inputs; Controlled gets the blocks that run or not
/// depending on them.
///  * From the item index: the bounds guard (the index compared with an
///    item-independent bound) selects the same threads whatever the
///    permutation (docs/reorganize.md), so it controls nothing here.
///  * Positional (from the x thread and block indices): the item index
///    itself and loads from shared memory stop the walk; a block's shared
///    tile holds data every item may read, which the kernel checks
///    separately.
void taintFrom(const Function &F, ArrayRef<const Value *> Seeds,
               const Instruction *Item, bool Positional,
               const FunctionSet &Scope, const PostDominatorTree &PDT,
               SmallPtrSetImpl<const Value *> &Tainted,
               SmallPtrSetImpl<const BasicBlock *> &Controlled) {
  SmallVector<const Value *, 32> Work;
  auto Taint = [&](const Value *V) {
    if (Tainted.insert(V).second)
      Work.push_back(V);
  };
  for (const Value *S : Seeds)
    Taint(S);
  while (!Work.empty()) {
    const Value *V = Work.pop_back_val();
    for (const User *U : V->users()) {
      if (isa<StoreInst>(U))
        continue;
      if (Positional) {
        const auto *LI = dyn_cast<LoadInst>(U);
        if (U == Item ||
            (LI && getPointerSpace(LI->getPointerOperand(), F, Scope) ==
                       PointerSpace::Shared))
          continue;
      }
      Taint(U);
      const auto *Cmp = dyn_cast<ICmpInst>(U);
      bool Guard =
          !Positional && Cmp && stripCasts(V) == Item &&
          !Tainted.contains(Cmp->getOperand(0) == V ? Cmp->getOperand(1)
                                                    : Cmp->getOperand(0));
      if (Guard)
        continue;
      for (const User *B : U->users()) {
        const auto *T = dyn_cast<Instruction>(B);
        if (!T || !T->isTerminator() || branchCondition(*T->getParent()) != U)
          continue;
        for (const BasicBlock &BB : F)
          if (isControlDependent(BB, *T->getParent(), PDT) &&
              Controlled.insert(&BB).second)
            for (const PHINode &Phi : BB.phis())
              Taint(&Phi);
      }
    }
  }
}

/// Why permuting the items over the threads could change the kernel's
/// results (ItemLoops.h); empty when it cannot.
std::string checkReorganizable(const Function &F, const Instruction *Item,
                               const LoopInfo &LI, const FunctionSet &Scope,
                               const PostDominatorTree &PDT,
                               const DominatorTree &DT,
                               const Instruction *&Blocker) {
  SmallPtrSet<const Value *, 32> Tainted, Positional;
  SmallPtrSet<const BasicBlock *, 16> Controlled, PosControlled;
  taintFrom(F, {Item}, Item, /*Positional=*/false, Scope, PDT, Tainted,
            Controlled);
  SmallVector<const Value *, 8> Position;
  for (const Instruction &I : instructions(F))
    if (intrinsicOf(&I) == Intrinsic::nvvm_read_ptx_sreg_tid_x ||
        intrinsicOf(&I) == Intrinsic::nvvm_read_ptx_sreg_ctaid_x)
      Position.push_back(&I);
  taintFrom(F, Position, Item, /*Positional=*/true, Scope, PDT, Positional,
            PosControlled);
  for (const Instruction &I : instructions(F)) {
    Blocker = &I;
    if (isa<ReturnInst>(I) && !DT.dominates(Item, &I))
      return "a path returns before the work-item index is computed";
    if (const auto *CB = dyn_cast<CallBase>(&I)) {
      const Function *Callee = CB->getCalledFunction();
      if (!isa<IntrinsicInst>(CB) && !CB->onlyReadsMemory() &&
          !(Callee && Callee->getName().starts_with("__nv_")))
        return ("it calls '" +
                (Callee ? Callee->getName() : StringRef("a function")) +
                "', which may write memory")
            .str();
      if (readsHigherDimension(intrinsicOf(CB)))
        return "it reads a y or z thread or block index; only 1-D item "
               "spaces are reorganized";
      if (isCommunication(*CB))
        return "threads exchange values (shuffle, vote, atomic or barrier "
               "reduction), which a new thread-to-item map would change";
    }
    if (isa<AtomicRMWInst>(I) || isa<AtomicCmpXchgInst>(I))
      return "it uses atomics, whose combining order a new thread-to-item "
             "map would change";
    if (const auto *Phi = dyn_cast<PHINode>(&I)) {
      const Loop *L = LI.getLoopFor(Phi->getParent());
      if (L && L->getHeader() == Phi->getParent())
        for (const Value *In : Phi->incoming_values())
          if (stripCasts(In) == Item)
            return "the work-item index starts a grid-stride loop: a thread "
                   "runs several items";
    }
    const Value *Ptr = getLoadStorePointerOperand(&I);
    if (!Ptr)
      continue;
    bool Shared = Ptr->getType()->getPointerAddressSpace() == SharedAS ||
                  getPointerSpace(Ptr, F, Scope) == PointerSpace::Shared;
    if (Shared && Tainted.contains(Ptr))
      return "it indexes shared memory by the work-item index";
    const auto *SI = dyn_cast<StoreInst>(&I);
    if (SI && !Shared && !isa<AllocaInst>(getUnderlyingObject(Ptr)) &&
        (Positional.contains(Ptr) ||
         Positional.contains(SI->getValueOperand()) ||
         PosControlled.contains(SI->getParent())))
      return "it writes global memory where, or what, or whether depends on "
             "threadIdx.x or blockIdx.x other than through the work-item "
             "index";
    if (!SI || (!Tainted.contains(SI->getValueOperand()) &&
                !Controlled.contains(SI->getParent())))
      continue;
    if (Shared)
      return "it stores an item's value to shared memory, where other "
             "threads read it";
    if (!Tainted.contains(Ptr) && !isa<AllocaInst>(getUnderlyingObject(Ptr)))
      return "it stores an item's value at an address that is not the "
             "item's own";
  }
  // A part of the sorted order runs on a device as a launch of its own
  // blocks with perm advanced to the part (docs/reorganize.md, "Routing"):
  // exact only when the grid's size and the block index reach nothing but
  // the work-item index.
  SmallPtrSet<const Value *, 8> IndexTree;
  SmallVector<const Value *, 8> Work = {Item};
  while (!Work.empty()) {
    const auto *V = dyn_cast<Instruction>(Work.pop_back_val());
    if (V && IndexTree.insert(V).second && !isa<CallBase>(V))
      Work.append(V->op_begin(), V->op_end());
  }
  for (const Instruction &I : instructions(F)) {
    Blocker = &I;
    Intrinsic::ID ID = intrinsicOf(&I);
    if (ID == Intrinsic::nvvm_read_ptx_sreg_nctaid_x)
      return "it reads gridDim.x, which a part of the sorted grid routed to "
             "one device would see as the part's";
    if (ID != Intrinsic::nvvm_read_ptx_sreg_ctaid_x)
      continue;
    SmallVector<const Value *, 4> Derived = {&I};
    while (!Derived.empty()) {
      const Value *V = Derived.pop_back_val();
      for (const User *U : V->users()) {
        if (U == Item)
          continue;
        if (!IndexTree.contains(U))
          return "it reads blockIdx.x other than through the work-item "
                 "index, which a part of the sorted grid routed to one "
                 "device would see renumbered";
        Derived.push_back(U);
      }
    }
  }
  Blocker = nullptr;
  return "";
}

} // namespace

ItemLoopInfo ItemLoopAnalysis::run(Function &F, FunctionAnalysisManager &FAM) {
  ItemLoopInfo R;
  if (!isKernel(F) && !isSwappedTwin(F))
    return R;
  auto &LI = FAM.getResult<LoopAnalysis>(F);
  auto &DT = FAM.getResult<DominatorTreeAnalysis>(F);
  auto &PDT = FAM.getResult<PostDominatorTreeAnalysis>(F);
  WrittenDataFinder Written(F);
  R.ItemIndex = findItemIndex(F);
  for (const Loop *L : LI) {
    ItemLoop IL;
    IL.Header = L->getHeader();
    IL.At = firstLocated(*IL.Header);
    ExitSlice(F, *L, R.ItemIndex, PDT, DT, Written).run(IL);
    R.Loops.push_back(std::move(IL));
  }
  // Loops come in reverse program order from LoopInfo; report them in order.
  std::reverse(R.Loops.begin(), R.Loops.end());
  if (!R.ItemIndex)
    R.ReorganizeWhy = "it has no work-item index "
                      "(blockIdx.x * blockDim.x + threadIdx.x)";
  else
    R.ReorganizeWhy = checkReorganizable(F, R.ItemIndex, LI, Written.getScope(),
                                         PDT, DT, R.ReorganizeBlocker);
  return R;
}

PreservedAnalyses ItemLoopPrinterPass::run(Function &F,
                                           FunctionAnalysisManager &FAM) {
  if (!isKernel(F) && !isSwappedTwin(F))
    return PreservedAnalyses::all();
  const ItemLoopInfo &R = FAM.getResult<ItemLoopAnalysis>(F);
  OS << "cleave-item-loops: kernel '" << displayName(F) << "'\n";
  OS << "  item index: " << (R.ItemIndex ? "yes" : "no") << "\n";
  for (const ItemLoop &L : R.Loops) {
    OS << "  loop";
    printLocation(OS, *L.At);
    if (L.predictable())
      OS << ": predictable, "
         << (L.ItemDependent ? "item-dependent" : "uniform");
    else {
      OS << ": refused: " << L.Why;
      if (L.Blocker)
        printLocation(OS, *L.Blocker);
    }
    OS << "\n";
  }
  OS << "  reorganize: ";
  if (R.ReorganizeWhy.empty())
    OS << "yes";
  else {
    OS << "no: " << R.ReorganizeWhy;
    if (R.ReorganizeBlocker)
      printLocation(OS, *R.ReorganizeBlocker);
  }
  OS << "\n";
  return PreservedAnalyses::all();
}

} // namespace cleave
