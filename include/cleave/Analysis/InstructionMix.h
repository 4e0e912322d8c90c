//===- InstructionMix.h - Each block's instructions, by class --*- C++ -*-===//
//
// Part of Cleave. What a kernel's code is made of, for the analytical models
// of `cleave analyze` (docs/analyze.md): every IR instruction classified as
// the PTX instruction it becomes (InstrClass), and, per basic block, the
// sequence of instructions the GPU issues with the data dependences between
// them. `opt -passes='print<cleave-instr-mix>'` prints it.
//
// The classes, their names and which are memory are shared with the
// runtime's models (cleave/ABI/InstrClass.h).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ANALYSIS_INSTRUCTIONMIX_H
#define CLEAVE_ANALYSIS_INSTRUCTIONMIX_H

#include "cleave/ABI/InstrClass.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/IR/PassManager.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace llvm {
class BasicBlock;
class Function;
class Instruction;
class raw_ostream;
} // namespace llvm

namespace cleave {

/// The class of one instruction of NVPTX IR; std::nullopt for what emits no
/// PTX instruction (phis, no-op casts, lifetime markers, debug intrinsics).
std::optional<InstrClass> classifyInstruction(const llvm::Instruction &I);
/// How many PTX instructions \p I becomes: one per element for vector
/// arithmetic (PTX has no vector ALU ops), one otherwise (vector loads and
/// stores are one ld/st.v2/v4).
unsigned ptxInstructions(const llvm::Instruction &I);
/// How many instructions of the code ptxas emits \p I stands for:
/// ptxInstructions, or 0 for what the GPU does not execute as an
/// instruction of its own:
///  - an fmul whose only use is an fadd/fsub of the same block: ptxas
///    contracts the pair into one fma (--fmad=true, its default);
///  - a getelementptr with constant indices whose users are all loads and
///    stores through it: the offset is the instruction's immediate;
///  - a sign or zero extension used only by getelementptrs: the wide
///    multiply-add (IMAD.WIDE) that computes the address takes the 32-bit
///    index.
unsigned issuedInstructions(const llvm::Instruction &I);

/// The IR passes the NVPTX backend runs before instruction selection at -O1
/// and above (NVPTXTargetMachine::addIRPasses: address-space inference, the
/// straight-line scalar optimizations, loop strength reduction, CSE,
/// load/store vectorization): run them before the analysis to count the
/// code ptxas gets.
inline constexpr const char *NVPTXBackendIRPipeline =
    "function(infer-address-spaces,separate-const-offset-from-gep,slsr,"
    "early-cse,nary-reassociate,early-cse,loop-mssa(loop-reduce),early-cse,"
    "load-store-vectorizer,sroa)";

/// An instruction of a function's code: its block (index in the function)
/// and its position in that block's sequence.
struct MixEntry {
  uint32_t Block = 0;
  uint32_t Index = 0;
  bool operator==(const MixEntry &O) const {
    return Block == O.Block && Index == O.Index;
  }
  bool operator<(const MixEntry &O) const {
    return Block != O.Block ? Block < O.Block : Index < O.Index;
  }
};

/// One basic block's code as the GPU issues it.
struct BlockMix {
  const llvm::BasicBlock *Block = nullptr;
  /// The classes of its instructions, in order (issuedInstructions each).
  std::vector<InstrClass> Sequence;
  /// Per entry of Sequence: the entries of the function whose results it
  /// uses through registers (looking through phis and what issues nothing),
  /// sorted.
  std::vector<std::vector<MixEntry>> Deps;
};

/// The instruction mix of a function: one BlockMix per basic block, in the
/// function's order.
class InstructionMix {
public:
  std::vector<BlockMix> Blocks;

  /// The mix of \p BB, or null when it is not a block of this function.
  const BlockMix *lookup(const llvm::BasicBlock &BB) const;
  void print(llvm::raw_ostream &OS) const;

private:
  friend class InstructionMixAnalysis;
  llvm::DenseMap<const llvm::BasicBlock *, unsigned> Index;
};

class InstructionMixAnalysis
    : public llvm::AnalysisInfoMixin<InstructionMixAnalysis> {
  friend llvm::AnalysisInfoMixin<InstructionMixAnalysis>;
  static llvm::AnalysisKey Key;

public:
  using Result = InstructionMix;
  Result run(llvm::Function &F, llvm::FunctionAnalysisManager &);
};

/// print<cleave-instr-mix>: the mix of every defined function.
class InstructionMixPrinterPass
    : public llvm::PassInfoMixin<InstructionMixPrinterPass> {
  llvm::raw_ostream &OS;

public:
  explicit InstructionMixPrinterPass(llvm::raw_ostream &OS) : OS(OS) {}
  llvm::PreservedAnalyses run(llvm::Function &F,
                              llvm::FunctionAnalysisManager &FAM);
  static bool isRequired() { return true; }
};

} // namespace cleave

#endif
