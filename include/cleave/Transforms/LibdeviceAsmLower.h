//===- LibdeviceAsmLower.h - libdevice's inline PTX as IR -------*- C++ -*-===//
//
// Part of Cleave. Rewrites the inline PTX forms of LibdeviceAsm.h into IR
// with the same meaning, for the CPU lowering (docs/cpu-backend.md).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_LIBDEVICEASMLOWER_H
#define CLEAVE_TRANSFORMS_LIBDEVICEASMLOWER_H

#include "cleave/Analysis/LibdeviceAsm.h"

#include "llvm/IR/IRBuilder.h"

namespace cleave {

/// The value that replaces \p CB (inline asm of form \p L), built at \p B.
/// Floating-point forms become the NVVM intrinsics of the same operation,
/// which the CPU lowering maps to the host like any other; integer forms
/// become arithmetic on wider integers.
llvm::Value *buildLibdeviceAsm(llvm::IRBuilder<> &B, llvm::CallBase &CB,
                               const LibdeviceAsm &L);

} // namespace cleave

#endif
