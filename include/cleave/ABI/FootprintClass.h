//===- FootprintClass.h - How much a footprint knows ------------*- C++ -*-===//
//
// Part of Cleave. The class of a parameter's footprint for a range of blocks
// (docs/footprints.md): the compiler's footprint analysis classifies each
// parameter, the runtime's evaluator classifies each launch. Plain C++17, no
// LLVM and no runtime headers.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ABI_FOOTPRINTCLASS_H
#define CLEAVE_ABI_FOOTPRINTCLASS_H

#include <cstdint>

namespace cleave {

/// Ordered from best to worst: combining two footprints keeps the worse.
enum class FootprintClass : uint8_t {
  Exact,   ///< the regions are exactly the bytes the blocks touch
  Bounded, ///< the regions contain every byte the blocks touch
  Unknown, ///< nothing is known: assume the whole buffer
};
inline constexpr unsigned NumFootprintClasses = 3;

/// "exact", "bounded" or "unknown"; "?" out of range.
inline constexpr const char *getFootprintClassName(FootprintClass C) {
  constexpr const char *Names[NumFootprintClasses] = {"exact", "bounded",
                                                      "unknown"};
  return unsigned(C) < NumFootprintClasses ? Names[unsigned(C)] : "?";
}

} // namespace cleave

#endif
