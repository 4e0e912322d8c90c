//===- JsonUtil.h - Type-checked reads of nlohmann::json ---------*- C++
//-*-===//
//
// Part of Cleave's runtime (no LLVM); internal. The runtime builds with
// -fno-exceptions, where nlohmann::json aborts on a type error: these
// helpers check the type before every read, so a malformed profile or cache
// file is an error value or a reported field, never a crash.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_LIB_JSONUTIL_H
#define CLEAVE_RT_LIB_JSONUTIL_H

#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

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

/// The JSON type of \p V, for messages.
inline const char *typeName(const nlohmann::json &V) {
  if (V.is_null())
    return "null";
  if (V.is_boolean())
    return "a boolean";
  if (V.is_number())
    return "a number";
  if (V.is_string())
    return "a string";
  if (V.is_array())
    return "an array";
  if (V.is_object())
    return "an object";
  return "not a JSON value";
}

/// Reads the numbers of one file and records each field whose value has
/// another type (a string where a number belongs): read as 0, it would
/// change silently what the file says, so the file's reader reports it.
class NumberReader {
public:
  /// The number at \p V, named \p Path in messages ("gpus[0].sm_count"): a
  /// plain number or a cleave-calibrate summary's median. Nothing when it
  /// is absent, null, not finite, or a failed measurement ({"error": ...});
  /// nothing, and a problem recorded, when it has another type.
  std::optional<double> value(const nlohmann::json *V,
                              const std::string &Path) {
    if (!V || V->is_null())
      return std::nullopt;
    if (V->is_object()) {
      if (const nlohmann::json *M = field(*V, "median"))
        return value(M, Path + ".median");
      if (!field(*V, "error"))
        wrongType(*V, Path);
      return std::nullopt;
    }
    if (!V->is_number()) {
      wrongType(*V, Path);
      return std::nullopt;
    }
    double D = V->get<double>();
    return std::isfinite(D) ? std::optional<double>(D) : std::nullopt;
  }

  /// value() of \p O[\p Key] (\p O may be null), 0 when there is none;
  /// \p Where names \p O in messages ("gpus[0]"; "" at the top).
  double get(const nlohmann::json *O, const char *Key,
             const std::string &Where) {
    const nlohmann::json *V = O ? field(*O, Key) : nullptr;
    return value(V, Where.empty() ? Key : Where + "." + Key).value_or(0);
  }

  /// One line per field of the wrong type, in the order read, each once:
  /// "gpus[0].sm_count is a string, not a number".
  const std::vector<std::string> &problems() const { return Problems; }

private:
  void wrongType(const nlohmann::json &V, const std::string &Path) {
    for (const std::string &P : Seen)
      if (P == Path)
        return;
    Seen.push_back(Path);
    Problems.push_back(Path + " is " + typeName(V) + ", not a number");
  }
  std::vector<std::string> Seen, Problems;
};

} // namespace json_util
} // namespace rt
} // namespace cleave

#endif
