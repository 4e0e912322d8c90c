// SCAFFOLD: replaced by the real analysis (helper A).
#include "cleave/Analysis/KernelLegality.h"
#include "llvm/Support/raw_ostream.h"
using namespace llvm;
namespace cleave {
AnalysisKey KernelLegalityAnalysis::Key;
StringRef getIssueKindName(LegalityIssueKind) { return "unknown"; }
bool KernelLegality::canSplit() const { return Issues.empty(); }
bool KernelLegality::canRunOnCPU() const { return Issues.empty(); }
const LegalityIssue *KernelLegality::firstSplitBlocker() const { return nullptr; }
void KernelLegality::print(raw_ostream &) const {}
KernelLegality KernelLegalityAnalysis::run(Function &, FunctionAnalysisManager &) { return {}; }
PreservedAnalyses KernelLegalityPrinterPass::run(Function &, FunctionAnalysisManager &) { return PreservedAnalyses::all(); }
} // namespace cleave
