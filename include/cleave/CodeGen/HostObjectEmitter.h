//===- HostObjectEmitter.h - CPU variants to x86-64 object code -*- C++ -*-===//
#ifndef CLEAVE_CODEGEN_HOSTOBJECTEMITTER_H
#define CLEAVE_CODEGEN_HOSTOBJECTEMITTER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace cleave {

/// Optimizes the host module of createCPUModule (O3 with the X86 target's
/// cost model, so thread loops vectorize) and emits an ELF object for
/// x86-64. \p CPU names the target CPU ("x86-64-v3" by default); when LLVM
/// does not know it, the generic "x86-64" is used. Position-independent, so
/// the object can go into a shared library.
llvm::Expected<std::string> emitHostObject(llvm::Module &M,
                                           llvm::StringRef CPU = "x86-64-v3");

/// Only the optimization step of emitHostObject (for inspection and tests).
llvm::Error optimizeHostModule(llvm::Module &M,
                               llvm::StringRef CPU = "x86-64-v3");

} // namespace cleave

#endif
