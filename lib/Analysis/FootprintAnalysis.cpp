// SCAFFOLD: replaced by the real analysis (helper B).
#include "cleave/Analysis/Footprint.h"
#include "llvm/Support/raw_ostream.h"
using namespace llvm;
namespace cleave {
struct FootprintImpl {};
AnalysisKey FootprintAnalysis::Key;
StringRef getFootprintClassName(FootprintClass) { return "unknown"; }
KernelFootprint::KernelFootprint() = default;
KernelFootprint::KernelFootprint(KernelFootprint &&) = default;
KernelFootprint &KernelFootprint::operator=(KernelFootprint &&) = default;
KernelFootprint::~KernelFootprint() = default;
FootprintClass KernelFootprint::readClass(unsigned) const { return FootprintClass::Unknown; }
FootprintClass KernelFootprint::writeClass(unsigned) const { return FootprintClass::Unknown; }
std::string KernelFootprint::serialize() const { return ""; }
void KernelFootprint::print(raw_ostream &, const Function &) const {}
KernelFootprint FootprintAnalysis::run(Function &, FunctionAnalysisManager &) { return {}; }
PreservedAnalyses FootprintPrinterPass::run(Function &, FunctionAnalysisManager &) { return PreservedAnalyses::all(); }
} // namespace cleave
