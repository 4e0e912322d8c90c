//===- InstrClass.h - Instruction classes, for both sides -------*- C++ -*-===//
//
// Part of Cleave. The classes of PTX-level instructions that `cleave
// analyze`'s instrumentation counts (lib/Transforms/Instrument.cpp
// classifies LLVM IR into them, docs/analyze.md has the mapping) and that
// the runtime's GPU models cost (cleave/rt/HopperModel.h). One enumeration
// and one table of names: the saved record and the analyze JSON name
// classes by these strings. Plain C++17, no LLVM and no runtime headers.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ABI_INSTRCLASS_H
#define CLEAVE_ABI_INSTRCLASS_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace cleave {

enum class InstrClass : uint8_t {
  Int,          ///< integer arithmetic, compares, selects, address math
  IntDiv,       ///< integer division and remainder (a sequence in SASS)
  Fp32,         ///< f32 add/mul/fma/compare/min/max
  Fp32Div,      ///< f32 division and square root (IEEE sequences)
  Fp64,         ///< f64 add/mul/fma/compare/min/max
  Fp64Div,      ///< f64 division and square root
  Sfu,          ///< MUFU: ex2, lg2, sin, cos, rsqrt, rcp, sqrt approx
  Conversion,   ///< float <-> int, float <-> float
  GlobalLoad,   ///< ld.global (and generic pointers not known to be shared)
  GlobalStore,  ///< st.global
  GlobalAtomic, ///< atom/red on global memory
  SharedLoad,   ///< ld.shared
  SharedStore,  ///< st.shared
  SharedAtomic, ///< atom.shared
  Local,        ///< ld/st.local (private arrays)
  ConstLoad,    ///< ld.const
  Branch,       ///< bra (conditional or not), switch
  Barrier,      ///< bar.sync (__syncthreads)
  Warp,         ///< shfl, vote, match, redux, activemask, syncwarp
  Other,        ///< the rest (special registers, moves, returns)
};
inline constexpr unsigned NumInstrClasses = unsigned(InstrClass::Other) + 1;

/// The names in reports, saved records and the analyze JSON, in enumeration
/// order.
inline constexpr const char *InstrClassNames[NumInstrClasses] = {
    "int",         "int.div",   "fp32",      "fp32.div",    "fp64",
    "fp64.div",    "sfu",       "cvt",       "ld.global",   "st.global",
    "atom.global", "ld.shared", "st.shared", "atom.shared", "local",
    "ld.const",    "branch",    "barrier",   "warp",        "other"};

/// "fp32", "ld.global", ...; "?" out of range.
inline constexpr const char *instrClassName(InstrClass C) {
  return unsigned(C) < NumInstrClasses ? InstrClassNames[unsigned(C)] : "?";
}

/// The class named \p Name, or std::nullopt.
inline constexpr std::optional<InstrClass>
lookupInstrClass(std::string_view Name) {
  for (unsigned I = 0; I < NumInstrClasses; ++I)
    if (Name == InstrClassNames[I])
      return InstrClass(I);
  return std::nullopt;
}

/// Global and local memory: the memory tasks of Luo's periods (§1.3).
inline constexpr bool isMemoryClass(InstrClass C) {
  return C == InstrClass::GlobalLoad || C == InstrClass::GlobalStore ||
         C == InstrClass::GlobalAtomic || C == InstrClass::Local;
}

} // namespace cleave

#endif
