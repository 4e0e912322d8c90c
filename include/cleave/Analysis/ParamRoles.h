//===- ParamRoles.h - How a kernel uses each pointer parameter -*- C++ -*-===//
//
// Part of Cleave. Each pointer parameter of a kernel is unused, read,
// written or both, following local copies, GEPs, casts, selects and phis.
// A pointer that escapes (stored to memory, passed to a call the analysis
// cannot see into, converted to an integer that is used other than as an
// address) is conservatively read-write and flagged.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ANALYSIS_PARAMROLES_H
#define CLEAVE_ANALYSIS_PARAMROLES_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/PassManager.h"

namespace cleave {

enum class ParamRole { NotPointer, Unused, Read, Write, ReadWrite };

llvm::StringRef getParamRoleName(ParamRole Role);

struct ParamRoleEntry {
  ParamRole Role = ParamRole::NotPointer;
  bool Escapes = false; ///< the role is a conservative guess
};

class ParamRoles {
public:
  llvm::SmallVector<ParamRoleEntry, 8> Params; ///< one per formal argument

  bool isOutput(unsigned ArgNo) const;
  void print(llvm::raw_ostream &OS, const llvm::Function &F) const;
};

class ParamRoleAnalysis : public llvm::AnalysisInfoMixin<ParamRoleAnalysis> {
  friend llvm::AnalysisInfoMixin<ParamRoleAnalysis>;
  static llvm::AnalysisKey Key;

public:
  using Result = ParamRoles;
  Result run(llvm::Function &F, llvm::FunctionAnalysisManager &FAM);
};

/// print<cleave-param-roles>
class ParamRolePrinterPass : public llvm::PassInfoMixin<ParamRolePrinterPass> {
  llvm::raw_ostream &OS;

public:
  explicit ParamRolePrinterPass(llvm::raw_ostream &OS) : OS(OS) {}
  llvm::PreservedAnalyses run(llvm::Function &F,
                              llvm::FunctionAnalysisManager &FAM);
  static bool isRequired() { return true; }
};

} // namespace cleave

#endif
