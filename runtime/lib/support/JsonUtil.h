//===- JsonUtil.h - Type-checked reads of nlohmann::json ---------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM); internal. The runtime builds with
// -fno-exceptions, where nlohmann::json aborts on a type error: these
// helpers check the type before every read, so a malformed profile or cache
// file is an error value, never a crash.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_LIB_JSONUTIL_H
#define CLEAVE_RT_LIB_JSONUTIL_H

#include <nlohmann/json.hpp>

#include <cmath>

namespace cleave {
namespace rt {
namespace json_util {

/// \p O[Key] when \p O is an object that has it, else null.
inline const nlohmann::json *field(const nlohmann::json &O, const char *Key) {
  if (!O.is_object())
    return nullptr;
  auto It = O.find(Key);
  return It == O.end() ? nullptr : &*It;
}

/// A number, or a cleave-calibrate summary's median; 0 for anything else
/// (null, missing, a string, an {"error": ...} entry, non-finite).
inline double number(const nlohmann::json *V) {
  if (!V)
    return 0;
  if (V->is_object())
    return number(field(*V, "median"));
  if (!V->is_number())
    return 0;
  double D = V->get<double>();
  return std::isfinite(D) ? D : 0;
}

} // namespace json_util
} // namespace rt
} // namespace cleave

#endif
