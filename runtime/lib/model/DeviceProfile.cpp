//===- DeviceProfile.cpp - Reading cleave-calibrate's profiles ------------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/DeviceProfile.h. The
// runtime builds with -fno-exceptions: nlohmann::json is only parsed with
// allow_exceptions = false, and every value is type-checked before it is
// read (a wrong type would otherwise abort).
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/DeviceProfile.h"

#include "../support/JsonUtil.h"
#include "../support/ReadFile.h"

#include <fstream>
#include <sstream>

namespace cleave {
namespace rt {

using json_util::field;
using json_util::number;

const GpuProfile *DeviceProfile::gpu(int Ordinal) const {
  for (const GpuProfile &G : Gpus)
    if (G.Index == Ordinal)
      return &G;
  return nullptr;
}

namespace {

Result bad(const std::string &Why) {
  return Result::error(ErrorCode::InvalidValue, "device profile: " + Why);
}

/// The state in which every one of \p N GPUs is in \p State ("S/S/S").
std::string allIn(const char *State, size_t N) {
  std::string S;
  for (size_t I = 0; I < N; ++I)
    S += (I ? "/" : "") + std::string(State);
  return S;
}

} // namespace

Result parseDeviceProfile(std::string_view Text, DeviceProfile &Out) {
  nlohmann::json J =
      nlohmann::json::parse(Text.begin(), Text.end(), nullptr, false);
  if (J.is_discarded() || !J.is_object())
    return bad("not a JSON object");
  const nlohmann::json *Schema = field(J, "schema");
  if (!Schema || !Schema->is_string() ||
      Schema->get<std::string>() != "cleave-device-profile")
    return bad("the schema is not \"cleave-device-profile\"");
  if (number(field(J, "schema_version")) != 1)
    return bad("schema_version is not 1");

  DeviceProfile P;
  P.FromFile = true;
  std::string Host, Date;
  if (const nlohmann::json *H = field(J, "host"))
    if (const nlohmann::json *N = field(*H, "name"); N && N->is_string())
      Host = N->get<std::string>();
  if (const nlohmann::json *D = field(J, "date"); D && D->is_string())
    Date = D->get<std::string>();
  P.Tag = (Host.empty() ? "host" : Host) + "-" + (Date.empty() ? "0" : Date);

  if (const nlohmann::json *Gpus = field(J, "gpus"); Gpus && Gpus->is_array())
    for (const nlohmann::json &G : *Gpus) {
      if (!G.is_object() || field(G, "error"))
        continue;
      GpuProfile GP;
      GP.Index = int(number(field(G, "index")));
      if (const nlohmann::json *N = field(G, "name"); N && N->is_string())
        GP.Name = N->get<std::string>();
      GP.SMs = unsigned(number(field(G, "sm_count")));
      GP.MaxThreadsPerSM = unsigned(number(field(G, "max_threads_per_sm")));
      GP.MaxBlocksPerSM = unsigned(number(field(G, "max_blocks_per_sm")));
      GP.SharedBytesPerSM = uint64_t(number(field(G, "shared_bytes_per_sm")));
      if (const nlohmann::json *B = field(G, "bandwidth"))
        if (const nlohmann::json *D = field(*B, "dram"))
          GP.DramGBps = number(field(*D, "read_gbps"));
      if (const nlohmann::json *L = field(G, "launch"))
        GP.LaunchUs = number(field(*L, "roundtrip_us"));
      if (const nlohmann::json *S = field(G, "sync"))
        GP.SyncUs = number(field(*S, "stream_sync_idle_us"));
      P.Gpus.push_back(std::move(GP));
    }

  if (const nlohmann::json *Links = field(J, "host_links")) {
    if (const nlohmann::json *Alone = field(*Links, "alone");
        Alone && Alone->is_array())
      for (const nlohmann::json &A : *Alone) {
        GpuProfile *G = nullptr;
        int Idx = int(number(field(A, "gpu")));
        for (GpuProfile &X : P.Gpus)
          if (X.Index == Idx)
            G = &X;
        if (!G)
          continue;
        if (const nlohmann::json *Pin = field(A, "pinned")) {
          G->PinnedH2DGBps = number(field(*Pin, "h2d_gbps"));
          G->PinnedD2HGBps = number(field(*Pin, "d2h_gbps"));
        }
        if (const nlohmann::json *Pg = field(A, "pageable")) {
          G->PageableH2DGBps = number(field(*Pg, "h2d_gbps"));
          G->PageableD2HGBps = number(field(*Pg, "d2h_gbps"));
        }
      }
    if (const nlohmann::json *States = field(*Links, "states");
        States && States->is_array() && !P.Gpus.empty()) {
      std::string AllS = allIn("S", P.Gpus.size());
      std::string AllR = allIn("R", P.Gpus.size());
      for (const nlohmann::json &S : *States) {
        const nlohmann::json *N = field(S, "name");
        if (!N || !N->is_string())
          continue;
        if (N->get<std::string>() == AllS)
          P.AggregateH2DGBps = number(field(S, "total_send_gbps"));
        else if (N->get<std::string>() == AllR)
          P.AggregateD2HGBps = number(field(S, "total_receive_gbps"));
      }
    }
    if (const nlohmann::json *Peer = field(*Links, "peer");
        Peer && Peer->is_array())
      for (const nlohmann::json &E : *Peer) {
        int Src = int(number(field(E, "src")));
        int Dst = int(number(field(E, "dst")));
        double GBps = number(field(E, "gbps"));
        for (GpuProfile &X : P.Gpus)
          if (X.Index == Src && GBps > 0)
            X.PeerGBps[Dst] = GBps;
      }
  }

  if (const nlohmann::json *Cpu = field(J, "cpu")) {
    P.Cpu.Threads = unsigned(number(field(*Cpu, "threads")));
    if (const nlohmann::json *MB = field(*Cpu, "memory_bandwidth"))
      if (const nlohmann::json *BT = field(*MB, "by_threads");
          BT && BT->is_array()) {
        double MaxThreads = 0;
        for (const nlohmann::json &E : *BT) {
          double T = number(field(E, "threads"));
          double G = number(field(E, "gbps"));
          if (T == 1)
            P.Cpu.TriadOneThreadGBps = G;
          if (T >= MaxThreads && G > 0) {
            MaxThreads = T;
            P.Cpu.TriadGBps = G;
          }
        }
      }
  }
  if (P.Gpus.empty() && P.Cpu.TriadGBps <= 0)
    return bad("neither GPU nor CPU numbers in it");
  Out = std::move(P);
  return Result::success();
}

Result loadDeviceProfile(const std::string &Path, DeviceProfile &Out) {
  std::string Text;
  if (Result R = readRegularFile(Path, MaxConfigFileBytes, Text); !R.ok())
    return Result::error(R.code(), "device profile " + R.message());
  Result R = parseDeviceProfile(Text, Out);
  if (!R.ok())
    return Result::error(R.code(), Path + ": " + R.message());
  Out.Source = Path;
  return R;
}

} // namespace rt
} // namespace cleave
