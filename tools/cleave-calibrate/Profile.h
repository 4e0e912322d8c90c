//===- Profile.h - The JSON profile: schema and helpers ---------*- C++ -*-===//
//
// Part of cleave-calibrate (no LLVM). The profile's schema is documented in
// docs/calibrate.md; cleave::DeviceProfileSchemaVersion
// (cleave/ABI/FormatVersions.h) changes whenever a key changes meaning or
// moves. Its one reader is the runtime's (cleave/rt/DeviceProfile.h). Objects
// keep their keys in insertion order (so the file reads top-down like the
// documentation).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_CALIBRATE_PROFILE_H
#define CLEAVE_CALIBRATE_PROFILE_H

#include "CpdFit.h"
#include "Stats.h"
#include "cleave/ABI/FormatVersions.h"

#include <nlohmann/json.hpp>

#include <string>

namespace cleave {
namespace calibrate {

using Json = nlohmann::ordered_json;

/// {"median": m, "min": a, "max": b, "mean": x, "spread": s, "samples": n}
/// (spread = (max - min) / median).
Json toJson(const Summary &S);

/// {"a", "b", "c", "d", "m", "rms", "r_squared", "points", "iterations"},
/// or {"error": ...}.
Json toJson(const CpdFitResult &R);

/// {"error": Message}: what a measurement that failed leaves in the profile.
Json errorJson(const std::string &Message);

/// The top-level keys every profile has: schema, schema_version, tool
/// (name, version, commit), date (UTC, ISO 8601), host (name, kernel).
Json profileHeader(bool Quick, const std::string &Devices);

/// Checks that \p Profile has the header keys with the right types and a
/// supported schema version; returns the first problem, or "".
std::string checkProfileHeader(const Json &Profile);

} // namespace calibrate
} // namespace cleave

#endif
