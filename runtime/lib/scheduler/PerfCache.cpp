//===- PerfCache.cpp - Measured performance tables, persisted -------------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/PerfCache.h.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/PerfCache.h"

#include "../support/JsonUtil.h"
#include "../support/ReadFile.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

namespace cleave {
namespace rt {

using json_util::field;

const PerfCache::Rows *PerfCache::find(const std::string &Device,
                                       const std::string &Key) const {
  auto D = Tables.find(Device);
  if (D == Tables.end())
    return nullptr;
  auto K = D->second.find(Key);
  return K == D->second.end() ? nullptr : &K->second;
}

void PerfCache::record(const std::string &Device, const std::string &Key,
                       uint64_t Blocks, double BlocksPerMs) {
  if (!Blocks || !(BlocksPerMs > 0) || !std::isfinite(BlocksPerMs))
    return;
  Rows &R = Tables[Device][Key];
  auto It = R.find(Blocks);
  if (It == R.end() && R.size() >= MaxRows) {
    // Fold into the nearest row rather than grow without bound.
    auto Hi = R.lower_bound(Blocks);
    auto Lo = Hi == R.begin() ? Hi : std::prev(Hi);
    It = Hi == R.end() || (Lo != Hi && Blocks - Lo->first < Hi->first - Blocks)
             ? Lo
             : Hi;
  }
  if (It == R.end()) {
    R[Blocks] = {BlocksPerMs, 1};
  } else {
    PerfSample &S = It->second;
    S.BlocksPerMs += Alpha * (BlocksPerMs - S.BlocksPerMs);
    ++S.Samples;
  }
  Dirty = true;
}

size_t PerfCache::numTables() const {
  size_t N = 0;
  for (auto &[D, T] : Tables)
    N += T.size();
  return N;
}

uint64_t PerfCache::sliceBlocks(const std::string &Device,
                                const std::string &Kernel) const {
  auto D = Slices.find(Device);
  if (D == Slices.end())
    return 0;
  auto K = D->second.find(Kernel);
  return K == D->second.end() ? 0 : K->second;
}

void PerfCache::recordSliceBlocks(const std::string &Device,
                                  const std::string &Kernel, uint64_t Blocks) {
  if (!Blocks)
    return;
  Slices[Device][Kernel] = Blocks;
  Dirty = true;
}

bool PerfCache::reorganizeOff(const std::string &Device,
                              const std::string &Kernel) const {
  auto D = ReorganizeOff.find(Device);
  return D != ReorganizeOff.end() && D->second.count(Kernel);
}

void PerfCache::recordReorganizeOff(const std::string &Device,
                                    const std::string &Kernel) {
  uint64_t &V = ReorganizeOff[Device][Kernel];
  Dirty |= V != 1;
  V = 1;
}

namespace {

/// The "slices" object: device -> kernel -> blocks (all positive).
bool parseSlices(const nlohmann::json &J,
                 std::map<std::string, std::map<std::string, uint64_t>> &Out) {
  if (!J.is_object())
    return false;
  for (auto D = J.begin(); D != J.end(); ++D) {
    if (!D->is_object())
      return false;
    for (auto K = D->begin(); K != D->end(); ++K) {
      if (!K->is_number_unsigned() || !K->get<uint64_t>())
        return false;
      Out[D.key()][K.key()] = K->get<uint64_t>();
    }
  }
  return true;
}

} // namespace

std::string PerfCache::serialize() const {
  nlohmann::json Devices = nlohmann::json::object();
  for (auto &[D, T] : Tables) {
    nlohmann::json Keys = nlohmann::json::object();
    for (auto &[K, Rows] : T) {
      nlohmann::json A = nlohmann::json::array();
      for (auto &[B, S] : Rows)
        A.push_back({B, S.BlocksPerMs, S.Samples});
      Keys[K] = std::move(A);
    }
    Devices[D] = std::move(Keys);
  }
  nlohmann::json J = {{"schema", "cleave-perf-cache"},
                      {"version", 1},
                      {"devices", std::move(Devices)}};
  if (!Slices.empty())
    J["slices"] = Slices;
  if (!ReorganizeOff.empty())
    J["reorganize_off"] = ReorganizeOff;
  // Names are ASCII, but an odd byte must not abort the process.
  return J.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

Result PerfCache::parse(std::string_view Text) {
  auto Bad = [](const std::string &Why) {
    return Result::error(ErrorCode::InvalidValue,
                         "performance cache: " + Why);
  };
  nlohmann::json J =
      nlohmann::json::parse(Text.begin(), Text.end(), nullptr, false);
  if (J.is_discarded() || !J.is_object())
    return Bad("not a JSON object");
  const nlohmann::json *S = field(J, "schema");
  if (!S || !S->is_string() || S->get<std::string>() != "cleave-perf-cache")
    return Bad("the schema is not \"cleave-perf-cache\"");
  const nlohmann::json *V = field(J, "version");
  if (!V || !V->is_number_integer() || V->get<int64_t>() != 1)
    return Bad("version is not 1");
  const nlohmann::json *Devices = field(J, "devices");
  if (!Devices || !Devices->is_object())
    return Bad("no \"devices\" object");
  std::map<std::string, std::map<std::string, Rows>> New;
  for (auto D = Devices->begin(); D != Devices->end(); ++D) {
    if (!D->is_object())
      return Bad("device " + D.key() + " is not an object");
    for (auto K = D->begin(); K != D->end(); ++K) {
      if (!K->is_array())
        return Bad("table " + K.key() + " is not an array");
      Rows &R = New[D.key()][K.key()];
      for (const nlohmann::json &Row : *K) {
        if (!Row.is_array() || Row.size() != 3 ||
            !Row[0].is_number_unsigned() || !Row[1].is_number() ||
            !Row[2].is_number_unsigned())
          return Bad("table " + K.key() + " has a malformed row");
        uint64_t B = Row[0].get<uint64_t>();
        double T = Row[1].get<double>();
        uint64_t N = Row[2].get<uint64_t>();
        if (!B || !(T > 0) || !std::isfinite(T) || !N)
          return Bad("table " + K.key() + " has a row out of range");
        R[B] = {T, unsigned(std::min<uint64_t>(N, ~0u))};
      }
    }
  }
  std::map<std::string, std::map<std::string, uint64_t>> NewSlices;
  if (const nlohmann::json *Sl = field(J, "slices");
      Sl && !parseSlices(*Sl, NewSlices))
    return Bad("\"slices\" is not an object of positive block counts by "
               "device and kernel");
  std::map<std::string, std::map<std::string, uint64_t>> NewOff;
  if (const nlohmann::json *Ro = field(J, "reorganize_off");
      Ro && !parseSlices(*Ro, NewOff))
    return Bad("\"reorganize_off\" is not an object of kernels by device");
  Tables = std::move(New);
  Slices = std::move(NewSlices);
  ReorganizeOff = std::move(NewOff);
  Dirty = false;
  return Result::success();
}

Result PerfCache::load(const std::string &Path) {
  std::string Text;
  bool Missing = false;
  if (Result R = readRegularFile(Path, MaxConfigFileBytes, Text, &Missing);
      !R.ok()) {
    if (Missing) {
      Tables.clear();
      Slices.clear();
      ReorganizeOff.clear();
      Dirty = false;
      return Result::success();
    }
    return R;
  }
  Result R = parse(Text);
  if (!R.ok())
    return Result::error(R.code(), Path + ": " + R.message());
  return R;
}

namespace {

/// mkdir -p.
bool makeDirectories(const std::string &Dir) {
  if (Dir.empty())
    return false;
  for (size_t P = 1; P <= Dir.size(); ++P) {
    if (P != Dir.size() && Dir[P] != '/')
      continue;
    std::string Part = Dir.substr(0, P);
    if (::mkdir(Part.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
  }
  struct stat St;
  return ::stat(Dir.c_str(), &St) == 0 && S_ISDIR(St.st_mode);
}

} // namespace

Result PerfCache::save(const std::string &Path) {
  auto Fail = [&](const std::string &What) {
    return Result::error(ErrorCode::Unknown,
                         "performance cache " + Path + ": " + What + ": " +
                             std::strerror(errno));
  };
  size_t Slash = Path.rfind('/');
  if (Slash != std::string::npos && Slash > 0 &&
      !makeDirectories(Path.substr(0, Slash)))
    return Fail("cannot create its directory");
  std::string Tmp = Path + ".tmp." + std::to_string(::getpid());
  std::string Text = serialize();
  FILE *F = std::fopen(Tmp.c_str(), "wb");
  if (!F)
    return Fail("cannot create " + Tmp);
  bool Ok = std::fwrite(Text.data(), 1, Text.size(), F) == Text.size();
  Ok &= std::fflush(F) == 0;
  Ok &= std::fclose(F) == 0;
  if (!Ok || std::rename(Tmp.c_str(), Path.c_str()) != 0) {
    Result R = Fail("cannot write it");
    std::remove(Tmp.c_str());
    return R;
  }
  Dirty = false;
  return Result::success();
}

} // namespace rt
} // namespace cleave
