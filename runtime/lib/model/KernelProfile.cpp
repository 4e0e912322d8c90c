//===- KernelProfile.cpp - What `cleave analyze` measured of kernels ------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/KernelProfile.h.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/KernelProfile.h"

#include "../support/JsonUtil.h"
#include "../support/ReadFile.h"
#include "cleave/ABI/InstrClass.h"

#include <cmath>

namespace cleave {
namespace rt {

using json_util::field;
using json_util::typeName;

namespace {

Result bad(const std::string &Why) {
  return Result::error(ErrorCode::InvalidValue,
                       "kernel profile (cleave analyze --json): " + Why);
}

/// \p O[Key] as three unsigned numbers, each at least 1.
Result triple(const nlohmann::json &O, const char *Key, const std::string &At,
              uint32_t Out[3]) {
  const nlohmann::json *V = field(O, Key);
  if (!V || !V->is_array() || V->size() != 3)
    return bad(At + "." + Key + " is not an array of 3 numbers");
  for (int I = 0; I < 3; ++I) {
    const nlohmann::json &E = (*V)[I];
    if (!E.is_number_unsigned() || E.get<uint64_t>() < 1 ||
        E.get<uint64_t>() > UINT32_MAX)
      return bad(At + "." + Key + "[" + std::to_string(I) +
                 "] is not a positive count");
    Out[I] = uint32_t(E.get<uint64_t>());
  }
  return Result::success();
}

/// One element of "kernels".
Result parseEntry(const nlohmann::json &K, const std::string &At,
                  json_util::NumberReader &Num, KernelProfileEntry &E) {
  const nlohmann::json *Name = field(K, "kernel");
  if (!Name || !Name->is_string())
    return bad(At + ".kernel is not a string");
  E.Kernel = Name->get<std::string>();
  if (Result R = triple(K, "grid", At, E.Grid); !R.ok())
    return R;
  if (Result R = triple(K, "block", At, E.Block); !R.ok())
    return R;
  E.DynamicShared = uint64_t(Num.get(&K, "dynamic_shared_bytes", At));
  E.Resources.DynamicShared = E.DynamicShared;
  E.Resources.Registers = unsigned(Num.get(&K, "registers", At));
  E.Resources.StaticShared = uint64_t(Num.get(&K, "static_shared_bytes", At));
  model::LaunchStats &S = E.Stats;
  S.Blocks = uint64_t(E.Grid[0]) * E.Grid[1] * E.Grid[2];
  S.ThreadsPerBlock = E.Block[0] * E.Block[1] * E.Block[2];
  const nlohmann::json *Warp = field(K, "per_warp");
  const nlohmann::json *Classes = Warp ? field(*Warp, "classes") : nullptr;
  if (!Classes || !Classes->is_object())
    return bad(At + ".per_warp.classes is not an object");
  for (auto It = Classes->begin(); It != Classes->end(); ++It) {
    std::optional<InstrClass> C = lookupInstrClass(It.key());
    if (!C)
      return bad(At + ".per_warp.classes: unknown instruction class '" +
                 It.key() + "'");
    S.Count[unsigned(*C)] =
        Num.get(Classes, It.key().c_str(), At + ".per_warp.classes");
  }
  const nlohmann::json *Mem = field(K, "memory");
  if (!Mem || !Mem->is_object())
    return bad(At + ".memory is not an object");
  std::string M = At + ".memory";
  S.Requests = Num.get(Mem, "requests_per_warp", M);
  S.LanesPerRequest = Num.get(Mem, "lanes_per_request", M);
  S.BytesPerLane = Num.get(Mem, "bytes_per_lane", M);
  S.SectorsPerRequest = Num.get(Mem, "sectors_per_request", M);
  S.SegmentsPerRequest = Num.get(Mem, "segments_per_request", M);
  S.StoreRequests = Num.get(Mem, "store_requests_per_warp", M);
  S.StoreSectors = Num.get(Mem, "store_sectors_per_warp", M);
  S.StoreSegments = Num.get(Mem, "store_segments_per_warp", M);
  S.LoadSegments = Num.get(Mem, "load_segments_per_warp", M);
  S.BlockDistinctBytes = Num.get(Mem, "block_distinct_bytes", M);
  S.FootprintBytes = Num.get(Mem, "footprint_bytes", M);
  return Result::success();
}

} // namespace

Result parseKernelProfile(std::string_view Text, KernelProfile &Out) {
  nlohmann::json Doc = nlohmann::json::parse(Text, nullptr, false);
  if (Doc.is_discarded() || !Doc.is_object())
    return bad("not a JSON object");
  const nlohmann::json *Tool = field(Doc, "tool");
  if (!Tool || !Tool->is_string() ||
      Tool->get<std::string>() != "cleave analyze")
    return bad("not a report of `cleave analyze --json` (no \"tool\": "
               "\"cleave analyze\")");
  const nlohmann::json *Version = field(Doc, "schema_version");
  if (!Version || !Version->is_number_integer() || Version->get<int>() != 1)
    return bad("schema_version is not 1");
  const nlohmann::json *Kernels = field(Doc, "kernels");
  if (!Kernels || !Kernels->is_array())
    return bad("\"kernels\" is " +
               std::string(Kernels ? typeName(*Kernels) : "missing") +
               ", not an array");
  KernelProfile P;
  json_util::NumberReader Num;
  for (size_t I = 0; I < Kernels->size(); ++I) {
    KernelProfileEntry E;
    if (Result R = parseEntry((*Kernels)[I],
                              "kernels[" + std::to_string(I) + "]", Num, E);
        !R.ok())
      return R;
    P.Entries.push_back(std::move(E));
  }
  if (!Num.problems().empty())
    return bad(Num.problems().front());
  Out = std::move(P);
  return Result::success();
}

Result loadKernelProfile(const std::string &Path, KernelProfile &Out) {
  std::string Text;
  if (Result R = readRegularFile(Path, MaxConfigFileBytes, Text); !R.ok())
    return Result::error(R.code(), "kernel profile " + R.message());
  if (Result R = parseKernelProfile(Text, Out); !R.ok())
    return Result::error(R.code(), Path + ": " + R.message());
  Out.Source = Path;
  return Result::success();
}

const KernelProfileEntry *KernelProfile::find(const std::string &Kernel,
                                              const uint32_t Grid[3],
                                              const uint32_t Block[3],
                                              uint64_t Shared) const {
  const KernelProfileEntry *Best = nullptr;
  double BestGap = 0;
  double Blocks = double(Grid[0]) * Grid[1] * Grid[2];
  for (const KernelProfileEntry &E : Entries) {
    if (E.Kernel != Kernel || E.DynamicShared != Shared ||
        E.Block[0] != Block[0] || E.Block[1] != Block[1] ||
        E.Block[2] != Block[2])
      continue;
    double Gap = std::fabs(std::log(double(E.Stats.Blocks) / Blocks));
    if (E.Grid[0] == Grid[0] && E.Grid[1] == Grid[1] && E.Grid[2] == Grid[2])
      return &E;
    if (!Best || Gap < BestGap) {
      Best = &E;
      BestGap = Gap;
    }
  }
  return Best;
}

} // namespace rt
} // namespace cleave
