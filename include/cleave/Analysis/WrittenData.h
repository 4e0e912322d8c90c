//===- WrittenData.h - Values that depend on data a kernel writes -*- C++ -*-===//
//
// Part of Cleave. Splitting and merging need addresses (and the predicates
// that guard stores) to be recomputable from data the kernel never modifies:
// its inputs, scalar arguments and thread/block indices. This finds the
// first reason a value is not: a load from memory the kernel may write, the
// result of an atomic, or a call whose result the analysis cannot see into.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ANALYSIS_WRITTENDATA_H
#define CLEAVE_ANALYSIS_WRITTENDATA_H

namespace llvm {
class Function;
class Instruction;
class Value;
} // namespace llvm

namespace cleave {

/// Walks the backward data slice of V (through arithmetic, casts, GEPs,
/// selects, phis, and the conditions of the branches that choose among phi
/// inputs) inside kernel F. Returns the first instruction of that slice that
/// reads memory F may write (a load whose underlying object F stores to, or
/// may store to, including shared memory), an atomic, or an opaque call; null
/// when V depends only on data F never writes.
const llvm::Instruction *findWrittenDataDependence(const llvm::Value *V,
                                                   const llvm::Function &F);

} // namespace cleave

#endif
