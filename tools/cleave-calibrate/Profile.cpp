//===- Profile.cpp - The JSON profile: schema and helpers -----------------===//
//
// Part of cleave-calibrate (no LLVM). See Profile.h.
//
//===----------------------------------------------------------------------===//
#include "Profile.h"
#include "Version.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cmath>
#include <ctime>

namespace cleave {
namespace calibrate {

namespace {
/// JSON has no infinity or NaN; a non-finite number is written as null.
Json number(double V) { return std::isfinite(V) ? Json(V) : Json(); }
} // namespace

Json toJson(const Summary &S) {
  Json J;
  J["median"] = number(S.Median);
  J["min"] = number(S.Min);
  J["max"] = number(S.Max);
  J["mean"] = number(S.Mean);
  J["spread"] = number(S.spread());
  J["samples"] = S.Count;
  return J;
}

Json toJson(const CpdFitResult &R) {
  if (!R.ok())
    return errorJson(R.Error);
  Json J;
  J["a"] = number(R.Fit.A);
  J["b"] = number(R.Fit.B);
  J["c"] = number(R.Fit.C);
  J["d"] = number(R.Fit.D);
  J["m"] = number(R.Fit.M);
  J["rms"] = number(R.Rms);
  J["r_squared"] = number(R.RSquared);
  J["points"] = R.Points;
  J["iterations"] = R.Iterations;
  return J;
}

Json errorJson(const std::string &Message) {
  Json J;
  J["error"] = Message;
  return J;
}

Json profileHeader(bool Quick, const std::string &Devices) {
  Json J;
  J["schema"] = DeviceProfileSchema;
  J["schema_version"] = DeviceProfileSchemaVersion;
  Json Tool;
  Tool["name"] = "cleave-calibrate";
  Tool["version"] = CLEAVE_CALIBRATE_VERSION;
  Tool["commit"] = CLEAVE_CALIBRATE_COMMIT;
  Tool["mode"] = Quick ? "quick" : "full";
  Tool["devices"] = Devices;
  J["tool"] = Tool;
  char Date[32] = "";
  std::time_t Now = std::time(nullptr);
  std::tm Utc{};
  if (gmtime_r(&Now, &Utc))
    std::strftime(Date, sizeof(Date), "%Y-%m-%dT%H:%M:%SZ", &Utc);
  J["date"] = Date;
  Json Host;
  char Name[256] = "";
  if (gethostname(Name, sizeof(Name) - 1) != 0)
    Name[0] = 0;
  Host["name"] = Name;
  struct utsname U {};
  if (uname(&U) == 0) {
    Host["os"] = std::string(U.sysname) + " " + U.release;
    Host["arch"] = U.machine;
  }
  J["host"] = Host;
  return J;
}

std::string checkProfileHeader(const Json &P) {
  if (!P.is_object())
    return "the profile is not a JSON object";
  if (!P.contains("schema") || P["schema"] != DeviceProfileSchema)
    return std::string("\"schema\" is not \"") + DeviceProfileSchema + "\"";
  if (!P.contains("schema_version") || !P["schema_version"].is_number_integer())
    return "\"schema_version\" is missing or not an integer";
  if (P["schema_version"].get<int>() > DeviceProfileSchemaVersion)
    return "schema_version " + std::to_string(P["schema_version"].get<int>()) +
           " is newer than this tool's " +
           std::to_string(DeviceProfileSchemaVersion);
  for (const char *K : {"tool", "host"})
    if (!P.contains(K) || !P[K].is_object())
      return std::string("\"") + K + "\" is missing or not an object";
  if (!P.contains("date") || !P["date"].is_string())
    return "\"date\" is missing or not a string";
  return "";
}

} // namespace calibrate
} // namespace cleave
