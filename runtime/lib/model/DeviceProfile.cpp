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
using json_util::NumberReader;

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

/// The number at a dotted path of object keys under \p O (named \p Where
/// in messages; NumberReader::value).
std::optional<double> numberAt(NumberReader &Num, const nlohmann::json &O,
                               std::string_view Path,
                               const std::string &Where) {
  const nlohmann::json *V = &O;
  std::string_view Rest = Path;
  while (V) {
    size_t Dot = Rest.find('.');
    V = field(*V, std::string(Rest.substr(0, Dot)).c_str());
    if (Dot == std::string_view::npos)
      break;
    Rest.remove_prefix(Dot + 1);
  }
  return Num.value(V, Where + "." + std::string(Path));
}

/// What the GPU models need of one "gpus" entry (docs/analyze.md), named
/// \p Where in messages; the first key that is missing goes to \p Missing.
void readModelParams(NumberReader &Num, const nlohmann::json &G,
                     const std::string &Where, model::GpuParams &P,
                     std::string &Missing) {
  auto Need = [&](std::string_view Key) -> double {
    std::optional<double> V = numberAt(Num, G, Key, Where);
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
  P.DramCopyGBps =
      numberAt(Num, G, "bandwidth.dram.copy_gbps", Where).value_or(0);
  P.LatencyL2 = Need("memory_latency.l2.clocks");
  // Optional: L1 hits wait the L2 latency without it.
  P.LatencyL1 = numberAt(Num, G, "memory_latency.l1.clocks", Where).value_or(0);
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
    for (size_t I = 0; I < Classes->size(); ++I) {
      const nlohmann::json &C = (*Classes)[I];
      if (const nlohmann::json *N = field(C, "name"); N && N->is_string())
        if (std::optional<double> V = numberAt(
                Num, C, "clocks",
                Where + ".instructions.classes[" + std::to_string(I) + "]"))
          Clocks[N->get<std::string>()] = *V;
    }
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
/// negative one stays -1. \p Where names \p Lat in messages.
void readLatency(NumberReader &Num, const nlohmann::json &Lat,
                 const std::string &Where, GpuProfile &G) {
  auto Read = [&](const char *Kind, const char *Key, double &Out) {
    const nlohmann::json *K = field(Lat, Kind);
    std::optional<double> V =
        K ? numberAt(Num, *K, Key, Where + "." + Kind) : std::nullopt;
    if (V && *V >= 0)
      Out = *V;
  };
  Read("pinned", "h2d_us", G.PinnedH2DLatencyUs);
  Read("pinned", "d2h_us", G.PinnedD2HLatencyUs);
  Read("pageable", "h2d_us", G.PageableH2DLatencyUs);
  Read("pageable", "d2h_us", G.PageableD2HLatencyUs);
}

/// S_SR and R_SR of a GPU from a "host_links.states" entry in which it is
/// the only busy GPU, in state SR. \p Where names \p State in messages.
void readBothWaysAlone(NumberReader &Num, const nlohmann::json &State,
                       const std::string &Where,
                       std::vector<GpuProfile> &Gpus) {
  const nlohmann::json *PerGpu = field(State, "gpus");
  if (!PerGpu || !PerGpu->is_array())
    return;
  const nlohmann::json *Busy = nullptr;
  size_t BusyAt = 0;
  for (size_t I = 0; I < PerGpu->size(); ++I) {
    const nlohmann::json &E = (*PerGpu)[I];
    const nlohmann::json *St = field(E, "state");
    if (!St || !St->is_string())
      return;
    if (St->get<std::string>() == "N")
      continue;
    if (Busy || St->get<std::string>() != "SR")
      return;
    Busy = &E;
    BusyAt = I;
  }
  if (!Busy)
    return;
  std::string At = Where + ".gpus[" + std::to_string(BusyAt) + "]";
  int Idx = int(Num.get(Busy, "gpu", At));
  for (GpuProfile &G : Gpus)
    if (G.Index == Idx) {
      G.PinnedBothH2DGBps = Num.get(Busy, "send_gbps", At);
      G.PinnedBothD2HGBps = Num.get(Busy, "receive_gbps", At);
    }
}

/// A "host_links.states" entry as the planner's table row; false when it
/// is not one (an error entry, a GPU without a state). \p Where names \p S
/// in messages.
bool readLinkState(NumberReader &Num, const nlohmann::json &S,
                   const std::string &Where, HostLinkState &Out) {
  const nlohmann::json *N = field(S, "name");
  const nlohmann::json *PerGpu = field(S, "gpus");
  if (field(S, "error") || !N || !N->is_string() || !PerGpu ||
      !PerGpu->is_array() || PerGpu->empty())
    return false;
  Out.Name = N->get<std::string>();
  for (size_t I = 0; I < PerGpu->size(); ++I) {
    const nlohmann::json &E = (*PerGpu)[I];
    std::string At = Where + ".gpus[" + std::to_string(I) + "]";
    const nlohmann::json *St = field(E, "state");
    if (!St || !St->is_string())
      return false;
    Out.Gpus.push_back(int(Num.get(&E, "gpu", At)));
    Out.States.push_back(St->get<std::string>());
    // A direction the GPU does not use is null.
    auto Rate = [&](const char *Key) {
      const nlohmann::json *V = field(E, Key);
      return V && !V->is_null() ? Num.get(&E, Key, At) : 0.0;
    };
    Out.SendGBps.push_back(Rate("send_gbps"));
    Out.ReceiveGBps.push_back(Rate("receive_gbps"));
  }
  return true;
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
  NumberReader Num;
  if (Num.get(&J, "schema_version", "") != DeviceProfileSchemaVersion)
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
      std::string At = "gpus[" + std::to_string(Entry) + "]";
      GP.Index = int(Num.get(&G, "index", At));
      if (const nlohmann::json *N = field(G, "name"); N && N->is_string())
        GP.Name = N->get<std::string>();
      GP.SMs = unsigned(Num.get(&G, "sm_count", At));
      GP.MaxThreadsPerSM = unsigned(Num.get(&G, "max_threads_per_sm", At));
      GP.MaxBlocksPerSM = unsigned(Num.get(&G, "max_blocks_per_sm", At));
      GP.SharedBytesPerSM = uint64_t(Num.get(&G, "shared_bytes_per_sm", At));
      GP.AsyncEngines = unsigned(Num.get(&G, "async_engines", At));
      GP.DramGBps =
          numberAt(Num, G, "bandwidth.dram.read_gbps", At).value_or(0);
      GP.LaunchRoundTripUs =
          numberAt(Num, G, "launch.roundtrip_us", At).value_or(0);
      GP.SyncUs = numberAt(Num, G, "sync.stream_sync_idle_us", At).value_or(0);
      GP.StepSyncUs =
          numberAt(Num, G, "sync.step_sync_3_streams_us", At).value_or(0);
      readModelParams(Num, G, At, GP.Model, GP.ModelMissing);
      P.Gpus.push_back(std::move(GP));
    }

  if (const nlohmann::json *Links = field(J, "host_links")) {
    if (const nlohmann::json *Alone = field(*Links, "alone");
        Alone && Alone->is_array())
      for (size_t I = 0; I < Alone->size(); ++I) {
        const nlohmann::json &A = (*Alone)[I];
        std::string At = "host_links.alone[" + std::to_string(I) + "]";
        GpuProfile *G = nullptr;
        int Idx = int(Num.get(&A, "gpu", At));
        for (GpuProfile &X : P.Gpus)
          if (X.Index == Idx)
            G = &X;
        if (!G)
          continue;
        if (const nlohmann::json *Pin = field(A, "pinned")) {
          G->PinnedH2DGBps = Num.get(Pin, "h2d_gbps", At + ".pinned");
          G->PinnedD2HGBps = Num.get(Pin, "d2h_gbps", At + ".pinned");
        }
        if (const nlohmann::json *Pg = field(A, "pageable")) {
          G->PageableH2DGBps = Num.get(Pg, "h2d_gbps", At + ".pageable");
          G->PageableD2HGBps = Num.get(Pg, "d2h_gbps", At + ".pageable");
          if (const nlohmann::json *Both = field(*Pg, "both")) {
            G->PageableBothH2DGBps =
                Num.get(Both, "h2d_gbps", At + ".pageable.both");
            G->PageableBothD2HGBps =
                Num.get(Both, "d2h_gbps", At + ".pageable.both");
          }
        }
        if (const nlohmann::json *Lat = field(A, "latency"))
          readLatency(Num, *Lat, At + ".latency", *G);
      }
    if (const nlohmann::json *States = field(*Links, "states");
        States && States->is_array() && !P.Gpus.empty()) {
      std::string AllS = allIn("S", P.Gpus.size());
      std::string AllR = allIn("R", P.Gpus.size());
      for (size_t I = 0; I < States->size(); ++I) {
        const nlohmann::json &S = (*States)[I];
        std::string At = "host_links.states[" + std::to_string(I) + "]";
        const nlohmann::json *N = field(S, "name");
        if (!N || !N->is_string())
          continue;
        if (N->get<std::string>() == AllS)
          P.AggregateH2DGBps = Num.get(&S, "total_send_gbps", At);
        else if (N->get<std::string>() == AllR)
          P.AggregateD2HGBps = Num.get(&S, "total_receive_gbps", At);
        readBothWaysAlone(Num, S, At, P.Gpus);
        if (HostLinkState L; readLinkState(Num, S, At, L))
          P.LinkStates.push_back(std::move(L));
      }
    }
    if (const nlohmann::json *Peer = field(*Links, "peer");
        Peer && Peer->is_array())
      for (size_t I = 0; I < Peer->size(); ++I) {
        const nlohmann::json &E = (*Peer)[I];
        std::string At = "host_links.peer[" + std::to_string(I) + "]";
        int Src = int(Num.get(&E, "src", At));
        int Dst = int(Num.get(&E, "dst", At));
        double GBps = Num.get(&E, "gbps", At);
        for (GpuProfile &X : P.Gpus)
          if (X.Index == Src && GBps > 0)
            X.PeerGBps[Dst] = GBps;
      }
  }

  if (const nlohmann::json *Cpu = field(J, "cpu")) {
    P.Cpu.Threads = unsigned(Num.get(Cpu, "threads", "cpu"));
    if (const nlohmann::json *MB = field(*Cpu, "memory_bandwidth"))
      if (const nlohmann::json *BT = field(*MB, "by_threads");
          BT && BT->is_array()) {
        double MaxThreads = 0;
        for (size_t I = 0; I < BT->size(); ++I) {
          const nlohmann::json &E = (*BT)[I];
          std::string At =
              "cpu.memory_bandwidth.by_threads[" + std::to_string(I) + "]";
          double T = Num.get(&E, "threads", At);
          double G = Num.get(&E, "gbps", At);
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
  P.TypeErrors = Num.problems();
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
