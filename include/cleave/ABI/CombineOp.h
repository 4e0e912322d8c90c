//===- CombineOp.h - How partial replicas combine ---------------*- C++ -*-===//
//
// Part of Cleave. The operation of a combined parameter's atomics
// (KernelLegality finds them, docs/runtime.md "Combined outputs"): the
// compiler records it in the bundle, the runtime fills each replica with the
// operation's identity and folds the replicas into the original. Plain
// C++17, no LLVM and no runtime headers.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ABI_COMBINEOP_H
#define CLEAVE_ABI_COMBINEOP_H

#include <cstdint>

namespace cleave {

/// Each has an identity that is a byte pattern (0x00 or 0xff), so a replica
/// is filled with a memset. The numeric values are stored in bundles.
enum class CombineOp : uint8_t {
  Add = 0,
  And = 1,
  Or = 2,
  Xor = 3,
  UMin = 4,
  UMax = 5,
};
inline constexpr unsigned NumCombineOps = 6;

/// Its stable lower-case name ("add", "umax", ...), the one the compiler's
/// legality printer and the runtime's bundle dump use; "?" out of range.
inline constexpr const char *getCombineOpName(CombineOp Op) {
  constexpr const char *Names[NumCombineOps] = {"add", "and",  "or",
                                                "xor", "umin", "umax"};
  return unsigned(Op) < NumCombineOps ? Names[unsigned(Op)] : "?";
}

} // namespace cleave

#endif
