//===- Footprint.h - Bytes a range of blocks touches ------------*- C++ -*-===//
//
// Part of Cleave. For each pointer parameter of a kernel, the byte ranges
// that the blocks [first, first+count) of a launch read and write, as closed
// forms in the block range, the launch dimensions and the scalar arguments,
// derived with ScalarEvolution. Each is classified exact, bounded (a safe
// over-approximation) or unknown (the whole buffer).
//
// The result serializes to a small text format (docs/footprints.md) that the
// runtime evaluates at launch time without LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ANALYSIS_FOOTPRINT_H
#define CLEAVE_ANALYSIS_FOOTPRINT_H

#include "cleave/ABI/FootprintClass.h"

#include "llvm/IR/PassManager.h"
#include <memory>
#include <string>

namespace cleave {

struct FootprintImpl;

/// The footprints of one kernel. Opaque in this header so the expression
/// representation can change without touching users; what leaves the
/// compiler is the serialized form.
class KernelFootprint {
public:
  KernelFootprint();
  KernelFootprint(KernelFootprint &&);
  KernelFootprint &operator=(KernelFootprint &&);
  ~KernelFootprint();

  /// Class of the read / write footprint of argument ArgNo (Exact when the
  /// argument is not accessed that way at all).
  FootprintClass readClass(unsigned ArgNo) const;
  FootprintClass writeClass(unsigned ArgNo) const;

  /// True when the function was analysed as a kernel.
  bool isKernel() const;
  /// True when some access may read / write argument ArgNo (including
  /// unknown and untracked accesses).
  bool reads(unsigned ArgNo) const;
  bool writes(unsigned ArgNo) const;

  /// The text form evaluated by the runtime (see docs/footprints.md).
  std::string serialize() const;
  void print(llvm::raw_ostream &OS, const llvm::Function &F) const;

  std::unique_ptr<FootprintImpl> Impl;
};

class FootprintAnalysis : public llvm::AnalysisInfoMixin<FootprintAnalysis> {
  friend llvm::AnalysisInfoMixin<FootprintAnalysis>;
  static llvm::AnalysisKey Key;

public:
  using Result = KernelFootprint;
  Result run(llvm::Function &F, llvm::FunctionAnalysisManager &FAM);
};

/// print<cleave-footprint>
class FootprintPrinterPass : public llvm::PassInfoMixin<FootprintPrinterPass> {
  llvm::raw_ostream &OS;

public:
  explicit FootprintPrinterPass(llvm::raw_ostream &OS) : OS(OS) {}
  llvm::PreservedAnalyses run(llvm::Function &F,
                              llvm::FunctionAnalysisManager &FAM);
  static bool isRequired() { return true; }
};

} // namespace cleave

#endif
