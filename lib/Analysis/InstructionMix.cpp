//===- InstructionMix.cpp - Each block's instructions, by class -----------===//
#include "cleave/Analysis/InstructionMix.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

namespace cleave {

AnalysisKey InstructionMixAnalysis::Key;

unsigned issuedInstructions(const Instruction &I) {
  if (I.getOpcode() == Instruction::FMul && I.hasOneUse()) {
    const auto *U = cast<Instruction>(*I.user_begin());
    if (U->getParent() == I.getParent() &&
        (U->getOpcode() == Instruction::FAdd ||
         U->getOpcode() == Instruction::FSub))
      return 0;
  }
  if (const auto *GEP = dyn_cast<GetElementPtrInst>(&I)) {
    bool AllMemory = !GEP->use_empty();
    for (const Use &U : GEP->uses()) {
      const auto *User = dyn_cast<Instruction>(U.getUser());
      AllMemory &= User && ((isa<LoadInst>(User) && U.getOperandNo() == 0) ||
                            (isa<StoreInst>(User) && U.getOperandNo() == 1));
    }
    if (GEP->hasAllConstantIndices() && AllMemory)
      return 0;
  }
  if ((isa<SExtInst>(I) || isa<ZExtInst>(I)) && !I.use_empty() &&
      all_of(I.users(),
             [](const User *U) { return isa<GetElementPtrInst>(U); }))
    return 0;
  return ptxInstructions(I);
}

const BlockMix *InstructionMix::lookup(const BasicBlock &BB) const {
  auto It = Index.find(&BB);
  return It == Index.end() ? nullptr : &Blocks[It->second];
}

/// The entries whose results \p I uses: its operands' last entries, looking
/// through phis and instructions that issue nothing.
static std::vector<MixEntry>
producersOf(const Instruction &I,
            const DenseMap<const Instruction *, MixEntry> &Entry) {
  std::vector<MixEntry> Producers;
  SmallPtrSet<const Value *, 16> Seen;
  SmallVector<const Value *, 16> Work(I.op_begin(), I.op_end());
  while (!Work.empty()) {
    const auto *Op = dyn_cast<Instruction>(Work.pop_back_val());
    if (!Op || !Seen.insert(Op).second)
      continue;
    auto P = Entry.find(Op);
    if (P != Entry.end()) {
      Producers.push_back(P->second);
      continue;
    }
    Work.append(Op->op_begin(), Op->op_end());
  }
  llvm::sort(Producers);
  Producers.erase(std::unique(Producers.begin(), Producers.end()),
                  Producers.end());
  return Producers;
}

InstructionMix InstructionMixAnalysis::run(Function &F,
                                           FunctionAnalysisManager &) {
  InstructionMix Mix;
  // An instruction's entry: the last of the ones it stands for.
  DenseMap<const Instruction *, MixEntry> Entry;
  for (BasicBlock &BB : F) {
    uint32_t B = Mix.Blocks.size();
    Mix.Index[&BB] = B;
    BlockMix &BM = Mix.Blocks.emplace_back();
    BM.Block = &BB;
    for (const Instruction &I : BB) {
      std::optional<InstrClass> C = classifyInstruction(I);
      unsigned N = C ? issuedInstructions(I) : 0;
      if (!N)
        continue;
      BM.Sequence.insert(BM.Sequence.end(), N, *C);
      Entry[&I] = {B, uint32_t(BM.Sequence.size() - 1)};
    }
  }
  for (BlockMix &BM : Mix.Blocks)
    for (const Instruction &I : *BM.Block)
      if (Entry.count(&I)) {
        std::vector<MixEntry> P = producersOf(I, Entry);
        for (unsigned W = 0, N = issuedInstructions(I); W < N; ++W)
          BM.Deps.push_back(P);
      }
  return Mix;
}

void InstructionMix::print(raw_ostream &OS) const {
  for (const BlockMix &BM : Blocks) {
    OS << "  block ";
    BM.Block->printAsOperand(OS, /*PrintType=*/false);
    OS << ": " << BM.Sequence.size() << " instruction(s)\n";
    for (size_t I = 0; I < BM.Sequence.size(); ++I) {
      OS << "    " << I << " " << instrClassName(BM.Sequence[I]);
      for (const MixEntry &D : BM.Deps[I])
        OS << (&D == &BM.Deps[I].front() ? " <- " : ", ") << D.Block << "."
           << D.Index;
      OS << "\n";
    }
  }
}

PreservedAnalyses InstructionMixPrinterPass::run(Function &F,
                                                 FunctionAnalysisManager &FAM) {
  if (F.isDeclaration())
    return PreservedAnalyses::all();
  OS << "instruction mix of " << F.getName() << ":\n";
  FAM.getResult<InstructionMixAnalysis>(F).print(OS);
  return PreservedAnalyses::all();
}

} // namespace cleave
