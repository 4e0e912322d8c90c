//===- ParamRoles.h - How a kernel uses each pointer parameter -*- C++ -*-===//
//
// Part of Cleave. Each pointer parameter of a kernel is unused, read,
// written or both, following local copies, GEPs, casts, selects and phis.
// A pointer that escapes (stored to memory, passed to a call the analysis
// cannot see into, converted to an integer that is used other than as an
// address) is conservatively read-write and flagged.
//
// The walk over the uses of a pointer is exported (analyzePointerAccess) so
// that every analysis that asks "is this object written?" uses the same
// logic: WrittenData applies it to shared-memory globals and allocas too.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ANALYSIS_PARAMROLES_H
#define CLEAVE_ANALYSIS_PARAMROLES_H

#include "cleave/ABI/ParamRole.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/PassManager.h"

namespace llvm {
class AllocaInst;
class Argument;
class CallBase;
class Instruction;
class LoadInst;
class StoreInst;
class Value;
} // namespace llvm

namespace cleave {

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

//===----------------------------------------------------------------------===//
// Pointer tracking shared by ParamRoles, WrittenData and KernelLegality.
//===----------------------------------------------------------------------===//

/// A set of functions: the code a kernel can execute.
using FunctionSet = llvm::SmallPtrSet<const llvm::Function *, 8>;

/// F and every function with a body that F reaches through direct calls.
/// Indirect calls are not followed (KernelLegality refuses them). Order, when
/// given, receives the same functions, F first, then in discovery order.
FunctionSet getReachableFunctions(
    const llvm::Function &F,
    llvm::SmallVectorImpl<const llvm::Function *> *Order = nullptr);

/// What a walk over the uses of a pointer found.
struct PointerAccess {
  bool Read = false;
  bool Written = false;
  bool Escapes = false;  ///< may be accessed where the walk cannot see
  bool Returned = false; ///< flows into a `ret` of its function
};

/// Follows every value derived from Root (GEPs, casts, ptrtoint/inttoptr
/// round trips, selects, phis, copies kept in slots (getSlotLoadsAndStores),
/// the arguments of defined callees and what they return) and records how the
/// memory is accessed. Root may be an argument, a global or an alloca. Uses
/// in functions outside Scope are ignored when Scope is given.
PointerAccess analyzePointerAccess(const llvm::Value &Root,
                                   const FunctionSet *Scope = nullptr);

/// True when Slot is a place that only holds what the kernel stores into it
/// (an alloca, or a shared-memory global of this module, which starts
/// undefined in every block): it is only loaded, stored to (as the address),
/// addressed through GEPs and casts, and marked by lifetime intrinsics. Its
/// loads and stores are then in Loads and Stores. False when anything else
/// uses it: the slot may change behind our back.
bool getSlotLoadsAndStores(
    const llvm::Value &Slot,
    llvm::SmallVectorImpl<const llvm::LoadInst *> &Loads,
    llvm::SmallVectorImpl<const llvm::StoreInst *> &Stores);

/// How a call accesses the memory behind its pointer argument ArgNo, from
/// the call's and the callee's attributes (intrinsics and declarations).
struct MemEffect {
  bool Read = false;
  bool Write = false;
};
MemEffect getCallArgEffect(const llvm::CallBase &CB, unsigned ArgNo);

/// Calls Fn(Ptr, Effect) for each memory access that I makes itself: loads,
/// stores, atomics, memory intrinsics and other intrinsics with pointer
/// arguments. Calls into defined functions and opaque calls are not reported
/// (their bodies are scanned, or they are refused, elsewhere).
void forEachAccessedPointer(
    const llvm::Instruction &I,
    llvm::function_ref<void(const llvm::Value *Ptr, MemEffect Effect)> Fn);

} // namespace cleave

#endif
