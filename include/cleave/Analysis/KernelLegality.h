//===- KernelLegality.h - What forbids splitting or CPU runs ---*- C++ -*-===//
//
// Part of Cleave. For one kernel, every construct that forbids running a
// subset of its blocks on a device (splitting) or running it on the CPU,
// each with the instruction that carries it (and so its source location when
// the module has debug info).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ANALYSIS_KERNELLEGALITY_H
#define CLEAVE_ANALYSIS_KERNELLEGALITY_H

#include "cleave/ABI/CombineOp.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/PassManager.h"
#include <string>

namespace llvm {
class Instruction;
class raw_ostream;
} // namespace llvm

namespace cleave {

enum class LegalityIssueKind {
  GlobalAtomic,       ///< atomic RMW / cmpxchg on global (or generic) memory
  GridSync,           ///< grid-wide barrier, cooperative groups grid sync
  Cluster,            ///< thread-block-cluster registers or barriers
  DynamicParallelism, ///< device-side kernel launch
  HardwareRegister,   ///< %smid, %warpid, %nsmid, %clock*, %globaltimer
  InlineAsm,          ///< inline PTX
  LoadedPointer,      ///< a pointer loaded from memory and dereferenced
  /// a pointer field of a read-only by-value struct parameter, dereferenced
  ArgumentPointer,
  ExternalCall,       ///< a call to a function with no body
  DataDependentStore, ///< store address depends on data the kernel writes
};

/// Stable lower-case name of a kind, used in printer output and remarks.
llvm::StringRef getIssueKindName(LegalityIssueKind Kind);

struct LegalityIssue {
  LegalityIssueKind Kind;
  const llvm::Instruction *Inst; ///< where it happens; never null
  std::string Detail;            ///< e.g. the intrinsic or callee name
  bool ForbidsSplit;
  bool ForbidsCPU;
  /// What makes Inst a problem when that is another instruction: where a
  /// dereferenced pointer came from, usually a load (loaded-pointer; null
  /// for an integer argument or constant; argument-pointer: the load of
  /// the struct parameter's field), or the first read of written data the
  /// store address depends on (data-dependent-store).
  const llvm::Instruction *Cause = nullptr;
};

/// A pointer parameter that the kernel touches only through integer atomic
/// read-modify-writes of one commutative kind whose results it never uses
/// (a histogram's bins, a counter). Blocks on different devices may then
/// each update a replica that starts at the operation's identity; the
/// final value is the original combined with every replica, in any order
/// (integer arithmetic wraps, and these operations are associative and
/// commutative), so the atomics do not forbid splitting.
struct CombinedParam {
  unsigned Arg = 0;
  CombineOp Op = CombineOp::Add;
  unsigned Bytes = 4; ///< the width of every atomic on it: 4 or 8
  const llvm::Instruction *First = nullptr; ///< one of the atomics
};

class KernelLegality {
public:
  llvm::SmallVector<LegalityIssue, 4> Issues;
  /// In parameter order.
  llvm::SmallVector<CombinedParam, 2> Combined;

  bool canSplit() const;
  bool canRunOnCPU() const;
  /// The first issue that forbids splitting, or null.
  const LegalityIssue *firstSplitBlocker() const;
  void print(llvm::raw_ostream &OS) const;
};

class KernelLegalityAnalysis
    : public llvm::AnalysisInfoMixin<KernelLegalityAnalysis> {
  friend llvm::AnalysisInfoMixin<KernelLegalityAnalysis>;
  static llvm::AnalysisKey Key;

public:
  using Result = KernelLegality;
  Result run(llvm::Function &F, llvm::FunctionAnalysisManager &FAM);
};

/// print<cleave-legality>: one block per kernel, e.g.
///   cleave-legality: kernel 'gather_rows(float* const*, float*, int)'
///     split: no
///     cpu: yes
///     issue: loaded-pointer (forbids split) 'load' at chase.cu:5:43; pointer
///       from 'load' at chase.cu:4:22           (all on one line)
///     combine: arg 1 add i32 'atomicrmw add' at hist.cu:9:5
class KernelLegalityPrinterPass
    : public llvm::PassInfoMixin<KernelLegalityPrinterPass> {
  llvm::raw_ostream &OS;

public:
  explicit KernelLegalityPrinterPass(llvm::raw_ostream &OS) : OS(OS) {}
  llvm::PreservedAnalyses run(llvm::Function &F,
                              llvm::FunctionAnalysisManager &FAM);
  static bool isRequired() { return true; }
};

} // namespace cleave

#endif
