//===- VariantRefusals.h - Why a kernel has no variant, as data -*- C++ -*-===//
//
// Part of Cleave. The passes that make a kernel's variants (cleave-partition,
// cleave-merge, cleave-cpu-lower) record each refusal here, with the text of
// the remark they emit for it and where it points; the bundle writer reads
// them for the bundle's "why no variant" entries (docs/bundle.md). The
// result is a module analysis that is never invalidated: it is a log of
// what the passes decided about the module, kept by the analysis manager
// for as long as the module is.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ANALYSIS_VARIANTREFUSALS_H
#define CLEAVE_ANALYSIS_VARIANTREFUSALS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/PassManager.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace llvm {
class DiagnosticInfoOptimizationBase;
class Module;
} // namespace llvm

namespace cleave {

/// The variants a pass may refuse to make.
enum class RefusedVariant : uint8_t { Partition, Merge, CPU };

struct VariantRefusal {
  std::string Reason;   ///< the remark's message
  std::string Location; ///< file:line:col of the remark, or empty
};

class VariantRefusals {
public:
  /// Records that \p Kernel (its symbol) gets no \p Variant, for the reason
  /// \p Remark gives; a later record for the same pair replaces it.
  void record(llvm::StringRef Kernel, RefusedVariant Variant,
              const llvm::DiagnosticInfoOptimizationBase &Remark);
  /// The refusal recorded for \p Kernel's \p Variant, or null.
  const VariantRefusal *lookup(llvm::StringRef Kernel,
                               RefusedVariant Variant) const;

  bool invalidate(llvm::Module &, const llvm::PreservedAnalyses &,
                  llvm::ModuleAnalysisManager::Invalidator &) {
    return false;
  }

private:
  std::map<std::pair<std::string, RefusedVariant>, VariantRefusal> Refusals;
};

class VariantRefusalAnalysis
    : public llvm::AnalysisInfoMixin<VariantRefusalAnalysis> {
  friend llvm::AnalysisInfoMixin<VariantRefusalAnalysis>;
  static llvm::AnalysisKey Key;

public:
  using Result = VariantRefusals;
  Result run(llvm::Module &, llvm::ModuleAnalysisManager &) { return {}; }
};

} // namespace cleave

#endif
