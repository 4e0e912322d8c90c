//===- DeviceProfile.cpp - Reading cleave-calibrate's profiles ------------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/DeviceProfile.h; the
// writer is tools/cleave-calibrate (docs/calibrate.md has the keys). The
// runtime builds with -fno-exceptions: nlohmann::json is only parsed with
// allow_exceptions = false, and every value is type-checked before it is
// read (a wrong type would otherwise abort).
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/DeviceProfile.h"

#include "cleave/ABI/FormatVersions.h"

#include "../support/JsonUtil.h"
#include "../support/ReadFile.h"

#include <cmath>
#include <fstream>
#include <map>
#include <optional>
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

/// The number at a dotted path of object keys: a plain number or a
/// summary's median; nothing when a key is missing or it is not finite.
std::optional<double> numberAt(const nlohmann::json &O, std::string_view Path) {
  const nlohmann::json *V = &O;
  while (V) {
    size_t Dot = Path.find('.');
    V = field(*V, std::string(Path.substr(0, Dot)).c_str());
    if (Dot == std::string_view::npos)
      break;
    Path.remove_prefix(Dot + 1);
  }
  if (V && V->is_object())
    V = field(*V, "median");
  if (!V || !V->is_number())
    return std::nullopt;
  double D = V->get<double>();
  return std::isfinite(D) ? std::optional<double>(D) : std::nullopt;
}

/// What the GPU models need of one "gpus" entry (docs/analyze.md); the
/// first key that is missing goes to \p Missing.
void readModelParams(const nlohmann::json &G, model::GpuParams &P,
                     std::string &Missing) {
  auto Need = [&](std::string_view Key) -> double {
    std::optional<double> V = numberAt(G, Key);
    if (!V && Missing.empty())
      Missing = std::string(Key);
    return V.value_or(0);
  };
  if (const nlohmann::json *N = field(G, "name"); N && N->is_string())
    P.Name = N->get<std::string>();
  else
    P.Name = "GPU";
  P.Sms = unsigned(Need("sm_count"));
  P.ClockMHz = Need("sm_clock_mhz");
  P.MaxWarpsPerSm = unsigned(Need("max_warps_per_sm"));
  P.MaxBlocksPerSm = unsigned(Need("max_blocks_per_sm"));
  P.MaxThreadsPerSm = unsigned(Need("max_threads_per_sm"));
  P.MaxThreadsPerBlock = unsigned(Need("max_threads_per_block"));
  P.RegistersPerSm = unsigned(Need("registers_per_sm"));
  P.SharedPerSm = uint64_t(Need("shared_bytes_per_sm"));
  P.SharedPerBlockMax = uint64_t(Need("shared_bytes_per_block_optin"));
  P.SharedReservedPerBlock = uint64_t(Need("shared_bytes_reserved_per_block"));
  P.L2Bytes = uint64_t(Need("l2_bytes"));
  P.DramGBps = Need("bandwidth.dram.read_gbps");
  P.L2GBps = Need("bandwidth.l2.read_gbps");
  // Optional: writes go at the read bandwidth without it.
  P.DramCopyGBps = numberAt(G, "bandwidth.dram.copy_gbps").value_or(0);
  P.LatencyL2 = Need("memory_latency.l2.clocks");
  // Optional: L1 hits wait the L2 latency without it.
  P.LatencyL1 = numberAt(G, "memory_latency.l1.clocks").value_or(0);
  P.LatencyDram = Need("memory_latency.dram.clocks");
  P.LaunchUs = Need("launch.throughput.wall_us");
  P.Cpd.A = Need("cpd.fit.a");
  P.Cpd.B = Need("cpd.fit.b");
  P.Cpd.C = Need("cpd.fit.c");
  P.Cpd.D = Need("cpd.fit.d");
  P.Cpd.M = Need("cpd.fit.m");

  std::map<std::string, double, std::less<>> Clocks;
  const nlohmann::json *Instr = field(G, "instructions");
  if (const nlohmann::json *Classes =
          Instr ? field(*Instr, "classes") : nullptr;
      Classes && Classes->is_array())
    for (const nlohmann::json &C : *Classes)
      if (const nlohmann::json *N = field(C, "name"); N && N->is_string())
        if (std::optional<double> V = numberAt(C, "clocks"))
          Clocks[N->get<std::string>()] = *V;
  // Which measured instruction stands for each class (docs/analyze.md).
  auto Clock = [&](const char *Name) {
    auto It = Clocks.find(Name);
    if (It != Clocks.end())
      return It->second;
    if (Missing.empty())
      Missing = std::string("instructions.classes[") + Name + "]";
    return 0.0;
  };
  auto Set = [&](InstrClass C, double V) { P.Latency[unsigned(C)] = V; };
  Set(InstrClass::Int, Clock("add.s32"));
  Set(InstrClass::IntDiv, Clock("div.s32"));
  Set(InstrClass::Fp32, Clock("fma.f32"));
  Set(InstrClass::Fp32Div, Clock("div.rn.f32"));
  Set(InstrClass::Fp64, Clock("fma.f64"));
  Set(InstrClass::Fp64Div, Clock("div.rn.f64"));
  Set(InstrClass::Sfu, Clock("ex2.approx.f32"));
  Set(InstrClass::Conversion, Clock("cvt.s32.f32"));
  for (InstrClass C :
       {InstrClass::GlobalLoad, InstrClass::GlobalStore,
        InstrClass::GlobalAtomic, InstrClass::Local, InstrClass::ConstLoad})
    Set(C, Clock("ld.global.ca"));
  Set(InstrClass::SharedLoad, Clock("ld.shared"));
  Set(InstrClass::SharedStore, Clock("st.shared"));
  Set(InstrClass::SharedAtomic, Clock("ld.shared"));
  Set(InstrClass::Warp, Clock("ld.shared"));
  for (InstrClass C :
       {InstrClass::Branch, InstrClass::Barrier, InstrClass::Other})
    Set(C, Clock("add.s32"));
}

/// The copy latencies of one "host_links.alone" entry ({"pinned":
/// {"h2d_us", "d2h_us"}, "pageable": {...}}, summaries); a missing or
/// negative one stays -1.
void readLatency(const nlohmann::json &Lat, GpuProfile &G) {
  auto Read = [&](const char *Kind, const char *Key, double &Out) {
    const nlohmann::json *K = field(Lat, Kind);
    std::optional<double> V = K ? numberAt(*K, Key) : std::nullopt;
    if (V && *V >= 0)
      Out = *V;
  };
  Read("pinned", "h2d_us", G.PinnedH2DLatencyUs);
  Read("pinned", "d2h_us", G.PinnedD2HLatencyUs);
  Read("pageable", "h2d_us", G.PageableH2DLatencyUs);
  Read("pageable", "d2h_us", G.PageableD2HLatencyUs);
}

/// S_SR and R_SR of a GPU from a "host_links.states" entry in which it is
/// the only busy GPU, in state SR.
void readBothWaysAlone(const nlohmann::json &State,
                       std::vector<GpuProfile> &Gpus) {
  const nlohmann::json *PerGpu = field(State, "gpus");
  if (!PerGpu || !PerGpu->is_array())
    return;
  const nlohmann::json *Busy = nullptr;
  for (const nlohmann::json &E : *PerGpu) {
    const nlohmann::json *St = field(E, "state");
    if (!St || !St->is_string())
      return;
    if (St->get<std::string>() == "N")
      continue;
    if (Busy || St->get<std::string>() != "SR")
      return;
    Busy = &E;
  }
  if (!Busy)
    return;
  int Idx = int(number(field(*Busy, "gpu")));
  for (GpuProfile &G : Gpus)
    if (G.Index == Idx) {
      G.PinnedBothH2DGBps = number(field(*Busy, "send_gbps"));
      G.PinnedBothD2HGBps = number(field(*Busy, "receive_gbps"));
    }
}

} // namespace

Result parseDeviceProfile(std::string_view Text, DeviceProfile &Out) {
  nlohmann::json J =
      nlohmann::json::parse(Text.begin(), Text.end(), nullptr, false);
  if (J.is_discarded() || !J.is_object())
    return bad("not a JSON object");
  const nlohmann::json *Schema = field(J, "schema");
  if (!Schema || !Schema->is_string() ||
      Schema->get<std::string>() != DeviceProfileSchema)
    return bad(std::string("the schema is not \"") + DeviceProfileSchema +
               "\"");
  if (number(field(J, "schema_version")) != DeviceProfileSchemaVersion)
    return bad("schema_version is not " +
               std::to_string(DeviceProfileSchemaVersion));

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
      unsigned Entry = P.GpuEntries++;
      if (!G.is_object() || field(G, "error"))
        continue;
      GpuProfile GP;
      GP.Entry = Entry;
      GP.Index = int(number(field(G, "index")));
      if (const nlohmann::json *N = field(G, "name"); N && N->is_string())
        GP.Name = N->get<std::string>();
      GP.SMs = unsigned(number(field(G, "sm_count")));
      GP.MaxThreadsPerSM = unsigned(number(field(G, "max_threads_per_sm")));
      GP.MaxBlocksPerSM = unsigned(number(field(G, "max_blocks_per_sm")));
      GP.SharedBytesPerSM = uint64_t(number(field(G, "shared_bytes_per_sm")));
      GP.AsyncEngines = unsigned(number(field(G, "async_engines")));
      if (const nlohmann::json *B = field(G, "bandwidth"))
        if (const nlohmann::json *D = field(*B, "dram"))
          GP.DramGBps = number(field(*D, "read_gbps"));
      if (const nlohmann::json *L = field(G, "launch"))
        GP.LaunchRoundTripUs = number(field(*L, "roundtrip_us"));
      if (const nlohmann::json *S = field(G, "sync")) {
        GP.SyncUs = number(field(*S, "stream_sync_idle_us"));
        GP.StepSyncUs = number(field(*S, "step_sync_3_streams_us"));
      }
      readModelParams(G, GP.Model, GP.ModelMissing);
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
          if (const nlohmann::json *Both = field(*Pg, "both")) {
            G->PageableBothH2DGBps = number(field(*Both, "h2d_gbps"));
            G->PageableBothD2HGBps = number(field(*Both, "d2h_gbps"));
          }
        }
        if (const nlohmann::json *Lat = field(A, "latency"))
          readLatency(*Lat, *G);
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
        readBothWaysAlone(S, P.Gpus);
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
