// SCAFFOLD: replaced by the real analysis (helper A).
#include "cleave/Analysis/ParamRoles.h"
#include "llvm/Support/raw_ostream.h"
using namespace llvm;
namespace cleave {
AnalysisKey ParamRoleAnalysis::Key;
StringRef getParamRoleName(ParamRole) { return "unknown"; }
bool ParamRoles::isOutput(unsigned) const { return false; }
void ParamRoles::print(raw_ostream &, const Function &) const {}
ParamRoles ParamRoleAnalysis::run(Function &, FunctionAnalysisManager &) { return {}; }
PreservedAnalyses ParamRolePrinterPass::run(Function &, FunctionAnalysisManager &) { return PreservedAnalyses::all(); }
} // namespace cleave
