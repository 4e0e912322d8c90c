//===- DeviceReports.cpp - CUDA's device printf and assert ---------------===//
//
// Part of Cleave. See cleave/Analysis/DeviceReports.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/Analysis/DeviceReports.h"

#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"

using namespace llvm;

namespace cleave {

bool isDeviceReportFunction(const Function &F) {
  if (!F.isDeclaration() || F.isVarArg())
    return false;
  // The signatures of CUDA's declarations (crt/common_functions.h).
  FunctionType *T = F.getFunctionType();
  auto IsPtr = [&](unsigned I) { return T->getParamType(I)->isPointerTy(); };
  auto IsInt = [&](unsigned I) { return T->getParamType(I)->isIntegerTy(); };
  if (F.getName() == "vprintf")
    return T->getNumParams() == 2 && IsPtr(0) && IsPtr(1) &&
           T->getReturnType()->isIntegerTy();
  if (F.getName() == "__assertfail")
    return T->getNumParams() == 5 && IsPtr(0) && IsPtr(1) && IsInt(2) &&
           IsPtr(3) && IsInt(4);
  return false;
}

} // namespace cleave
