//===- VariantRefusals.cpp - Why a kernel has no variant, as data ---------===//
#include "cleave/Analysis/VariantRefusals.h"

#include "llvm/IR/DiagnosticInfo.h"

using namespace llvm;

namespace cleave {

AnalysisKey VariantRefusalAnalysis::Key;

void VariantRefusals::record(StringRef Kernel, RefusedVariant Variant,
                             const DiagnosticInfoOptimizationBase &Remark) {
  VariantRefusal R;
  R.Reason = Remark.getMsg();
  if (const auto *WithLoc = dyn_cast<DiagnosticInfoWithLocationBase>(&Remark);
      WithLoc && WithLoc->isLocationAvailable())
    R.Location = WithLoc->getLocationStr();
  Refusals[{Kernel.str(), Variant}] = std::move(R);
}

const VariantRefusal *VariantRefusals::lookup(StringRef Kernel,
                                              RefusedVariant Variant) const {
  auto It = Refusals.find({Kernel.str(), Variant});
  return It == Refusals.end() ? nullptr : &It->second;
}

} // namespace cleave
