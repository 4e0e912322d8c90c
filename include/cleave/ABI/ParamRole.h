//===- ParamRole.h - How a kernel uses a parameter --------------*- C++ -*-===//
//
// Part of Cleave. The role of each kernel parameter: the compiler's
// ParamRoleAnalysis computes it, the bundle stores its numeric value, the
// runtime's engine reads it to decide which buffers a launch reads and
// writes. Plain C++17, no LLVM and no runtime headers, so that both layers
// include this one definition (docs/bundle.md).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ABI_PARAMROLE_H
#define CLEAVE_ABI_PARAMROLE_H

#include <cstdint>

namespace cleave {

/// The numeric values are stored in bundles: append only, and bump
/// bundle::FormatVersion when one changes.
enum class ParamRole : uint8_t {
  NotPointer = 0, ///< not a pointer: passed by value
  Unused = 1,     ///< a pointer the kernel never dereferences
  Read = 2,
  Write = 3,
  ReadWrite = 4,
};
inline constexpr unsigned NumParamRoles = 5;

/// "scalar", "unused", "read", "write", "read-write" (print<cleave-param-roles>
/// and the bundle dump); "?" out of range.
inline constexpr const char *getParamRoleName(ParamRole R) {
  constexpr const char *Names[NumParamRoles] = {"scalar", "unused", "read",
                                                "write", "read-write"};
  return unsigned(R) < NumParamRoles ? Names[unsigned(R)] : "?";
}

} // namespace cleave

#endif
