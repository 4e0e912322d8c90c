//===- HeaderAsmLower.h - CUDA headers' inline PTX as IR --------*- C++ -*-===//
//
// Part of Cleave. Rewrites the inline PTX idioms of HeaderAsm.h into NVVM
// IR with the same meaning, for the CPU lowering (docs/cpu-backend.md).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_HEADERASMLOWER_H
#define CLEAVE_TRANSFORMS_HEADERASMLOWER_H

#include "cleave/Analysis/HeaderAsm.h"

namespace cleave {

/// Replaces \p CB (inline asm matching \p H) with equivalent IR and erases
/// it. The reserved shared-memory scratch becomes a static __shared__
/// array of the module, so each block gets its own.
void lowerHeaderAsm(llvm::CallBase &CB, const HeaderAsm &H);

/// Replaces \p CB (an fp16/bf16 arithmetic block parsed into \p P) with IR
/// of the same bits, and erases it (HeaderAsmPtxLower.cpp).
void lowerPtxArithmetic(llvm::CallBase &CB, const PtxBlock &P);

} // namespace cleave

#endif
