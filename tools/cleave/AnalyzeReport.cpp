//===- AnalyzeReport.cpp - Model inputs and reports -------------------------===//
//
// Part of Cleave's driver (docs/analyze.md).
//
//===----------------------------------------------------------------------===//
#include "AnalyzeData.h"

#include "cleave/Analysis/InstructionMix.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <cmath>
#include <limits>
#include <unordered_map>

using namespace llvm;

namespace cleave {
namespace analyze {

const BlockSite *findBlock(const Analysis &A, uint32_t Id) {
  for (const InstrumentInfo &I : A.Sites)
    if (const BlockSite *B = I.block(Id))
      return B;
  return nullptr;
}

const MemSite *findMem(const Analysis &A, uint32_t Id) {
  for (const InstrumentInfo &I : A.Sites)
    if (const MemSite *M = I.mem(Id))
      return M;
  return nullptr;
}

/// A block site's instructions for the model: as ptxas gets them
/// (refineCode) when A.IssuedCode, as the instrumentation classified
/// them otherwise (digest 000 counts the kernel's own code).
const std::vector<InstrClass> &codeOf(const Analysis &A, const BlockSite &BS) {
  if (A.IssuedCode) {
    auto It = A.Code.find(BS.Id);
    if (It != A.Code.end())
      return It->second.Sequence;
  }
  return BS.Sequence;
}

/// Instructions of a warp's recorded trace.
size_t traceLength(const Analysis &A, const WarpRecord &W) {
  size_t N = 0;
  for (uint32_t Site : W.Trace)
    if (const BlockSite *BS = findBlock(A, Site))
      N += codeOf(A, *BS).size();
  return N;
}

/// The representative warp's stream of instructions (St.Stream) and, where
/// every site has them, its data dependences: an entry depends on the
/// latest earlier instance of each producer. \p BestCount is the warp's
/// instruction count, which scales a trace that was cut short.
void addStream(const Analysis &A, const WarpRecord &Rep, double BestCount,
               Summary &S) {
  model::LaunchStats &St = S.Stats;
  // The stream and, where every site has them, its data dependences: an
  // entry depends on the latest earlier instance of each producer.
  bool HaveDeps = A.IssuedCode;
  for (uint32_t Site : Rep.Trace)
    HaveDeps &= findBlock(A, Site) && A.Code.count(Site);
  std::unordered_map<EntryRef, uint32_t> Latest;
  if (HaveDeps)
    St.DepBegin.push_back(0);
  for (uint32_t Site : Rep.Trace) {
    const BlockSite *BS = findBlock(A, Site);
    if (!BS)
      continue;
    const std::vector<InstrClass> &Seq = codeOf(A, *BS);
    const std::vector<std::vector<EntryRef>> *D =
        HaveDeps ? &A.Code.find(Site)->second.Deps : nullptr;
    for (size_t I = 0; I < Seq.size(); ++I) {
      if (D) {
        for (EntryRef P : (*D)[I]) {
          auto It = Latest.find(P);
          if (It != Latest.end())
            St.Deps.push_back(It->second);
        }
        St.DepBegin.push_back(uint32_t(St.Deps.size()));
        Latest[(EntryRef(Site) << 32) | I] = uint32_t(St.Stream.size());
      }
      St.Stream.push_back(Seq[I]);
    }
  }
  S.Truncated = Rep.Truncated;
  if (!St.Stream.empty() && BestCount > double(St.Stream.size()))
    St.StreamScale = BestCount / double(St.Stream.size());
}

/// The sampled blocks stand for the launch: the last block (often partial)
/// for itself, the others evenly for the rest.
Summary summarize(const Analysis &A, const LaunchRecord &L) {
  Summary S;
  model::LaunchStats &St = S.Stats;
  St.Blocks = uint64_t(L.Grid[0]) * L.Grid[1] * L.Grid[2];
  St.ThreadsPerBlock = L.Block[0] * L.Block[1] * L.Block[2];
  unsigned WarpsPerBlock = (St.ThreadsPerBlock + 31) / 32;
  S.Recorded = L.Blocks.size();
  if (L.Blocks.empty())
    return S;
  auto Weight = [&](const BlockRecord &B) {
    size_t N = L.Blocks.size();
    if (N == 1 || St.Blocks <= N)
      return double(St.Blocks) / double(N);
    if (B.Block == St.Blocks - 1)
      return 1.0;
    return double(St.Blocks - 1) / double(N - 1);
  };
  MemTotals All;
  double BlockDistinct = 0, WeightSum = 0;
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> Ranges;
  double BestCount = -1;
  const WarpRecord *Rep = nullptr;
  for (const BlockRecord &B : L.Blocks) {
    double W = Weight(B);
    WeightSum += W;
    S.Overflow |= B.Overflow;
    BlockDistinct += W * double(B.DistinctSectors) * 32;
    for (const WarpRecord &Wr : B.Warps) {
      double Count = 0;
      for (auto &[Site, N] : Wr.Sites) {
        const BlockSite *BS = findBlock(A, Site);
        if (!BS) {
          S.Problems.push_back("unknown block site " + std::to_string(Site));
          continue;
        }
        for (InstrClass C : codeOf(A, *BS)) {
          St.Count[unsigned(C)] += W * double(N);
          Count += double(N);
        }
      }
      // Among the busiest warps, the one whose trace (lane 0's path) covers
      // the most: lane 0 may leave early while the others work.
      if (Count > BestCount || (Count == BestCount && Rep &&
                                traceLength(A, Wr) > traceLength(A, *Rep))) {
        BestCount = Count;
        Rep = &Wr;
      }
      for (const WarpRecord::Mem &M : Wr.Mems) {
        MemTotals &T = S.Mems[M.Site];
        T.Requests += W * M.Requests;
        T.Lanes += W * M.Lanes;
        T.Bytes += W * M.Bytes;
        T.Sectors += W * M.Sectors;
        T.Segments += W * M.Segments;
        All.Requests += W * M.Requests;
        All.Lanes += W * M.Lanes;
        All.Bytes += W * M.Bytes;
        All.Sectors += W * M.Sectors;
        All.Segments += W * M.Segments;
        if (const MemSite *MS = findMem(A, M.Site);
            MS && MS->Class == InstrClass::GlobalStore) {
          St.StoreRequests += W * M.Requests;
          St.StoreSectors += W * M.Sectors;
          St.StoreSegments += W * M.Segments;
        }
        if (M.Requests) {
          auto [It, New] = Ranges.try_emplace(M.Site, M.Min, M.Max);
          if (!New) {
            It->second.first = std::min(It->second.first, M.Min);
            It->second.second = std::max(It->second.second, M.Max);
          }
        }
      }
    }
  }
  // Totals over the launch -> the average warp.
  double Warps = double(St.Blocks) * WarpsPerBlock;
  for (double &C : St.Count)
    C /= Warps;
  for (auto &[Site, T] : S.Mems) {
    T.Requests /= double(St.Blocks);
    T.Lanes /= double(St.Blocks);
    T.Bytes /= double(St.Blocks);
    T.Sectors /= double(St.Blocks);
    T.Segments /= double(St.Blocks);
  }
  St.Requests = All.Requests / Warps;
  St.StoreRequests /= Warps;
  St.StoreSectors /= Warps;
  St.StoreSegments /= Warps;
  St.LoadSegments = std::max(0.0, All.Segments / Warps - St.StoreSegments);
  if (All.Requests > 0) {
    St.LanesPerRequest = All.Lanes / All.Requests;
    St.BytesPerLane = All.Lanes > 0 ? All.Bytes / All.Lanes : 0;
    St.SectorsPerRequest = All.Sectors / All.Requests;
    St.SegmentsPerRequest = All.Segments / All.Requests;
  }
  St.BlockDistinctBytes = WeightSum > 0 ? BlockDistinct / WeightSum : 0;
  // Footprint: the union of each memory instruction's address span.
  std::vector<std::pair<uint64_t, uint64_t>> Spans;
  for (auto &[Site, R] : Ranges)
    Spans.push_back(R);
  llvm::sort(Spans);
  uint64_t Foot = 0, CurLo = 0, CurHi = 0;
  bool Open = false;
  for (auto [Lo, Hi] : Spans) {
    if (Open && Lo <= CurHi + 1) {
      CurHi = std::max(CurHi, Hi);
      continue;
    }
    if (Open)
      Foot += CurHi - CurLo + 1;
    CurLo = Lo;
    CurHi = Hi;
    Open = true;
  }
  if (Open)
    Foot += CurHi - CurLo + 1;
  St.FootprintBytes = double(Foot);
  // The representative warp: the sampled warp with the most instructions
  // (a block lasts as long as its slowest warp).
  if (Rep)
    addStream(A, *Rep, BestCount, S);
  return S;
}

std::string seconds(double S) {
  if (!std::isfinite(S))
    return "inf";
  if (S >= 1)
    return formatv("{0:f3} s", S).str();
  if (S >= 1e-3)
    return formatv("{0:f3} ms", S * 1e3).str();
  return formatv("{0:f2} us", S * 1e6).str();
}

std::string bytes(double B) {
  if (B >= 1e9)
    return formatv("{0:f2} GB", B / 1e9).str();
  if (B >= 1e6)
    return formatv("{0:f2} MB", B / 1e6).str();
  if (B >= 1e3)
    return formatv("{0:f2} KB", B / 1e3).str();
  return formatv("{0:f0} B", B).str();
}

json::Value num(double V) {
  if (!std::isfinite(V))
    return nullptr;
  return V;
}


std::string limitText(unsigned V) {
  return V == std::numeric_limits<unsigned>::max() ? "-" : std::to_string(V);
}

void printText(raw_ostream &OS, const Report &R, const model::GpuParams &G,
               ModelKind Model) {
  const LaunchRecord &L = *R.L;
  const model::LaunchStats &St = R.S.Stats;
  const model::Prediction &P = R.P;
  OS << "\nkernel " << R.Display << " [" << L.Kernel << "]\n";
  OS << formatv("  launch: grid ({0},{1},{2}) x block ({3},{4},{5}), dynamic "
                "shared {6} B, {7} launch(es), {8} block(s) sampled\n",
                L.Grid[0], L.Grid[1], L.Grid[2], L.Block[0], L.Block[1],
                L.Block[2], L.Shared, L.Launches, R.S.Recorded);
  OS << "  sampled:";
  for (const BlockRecord &B : L.Blocks)
    OS << formatv(" block {0} ({1} requests, {2} sectors, {3} distinct)",
                  B.Block, B.Requests, B.Sectors, B.DistinctSectors);
  OS << "\n";
  OS << "  resources: " << R.Res.Registers << " registers/thread, "
     << R.Res.StaticShared << " B static shared (" << R.Res.From << ")\n";
  if (P.Occ.BlocksPerSm) {
    OS << formatv("  occupancy: {0} blocks/SM = {1} warps ({2:f0}%), limited "
                  "by {3} (registers {4}, shared memory {5}, threads {6}, "
                  "blocks {7})\n",
                  P.Occ.BlocksPerSm, P.Occ.WarpsPerSm, P.Occ.Fraction * 100,
                  model::limiterName(P.Occ.Limit),
                  limitText(P.Occ.ByRegisters),
                  limitText(P.Occ.BySharedMemory), P.Occ.ByThreads,
                  P.Occ.ByBlocks);
  } else {
    OS << "  occupancy: " << P.Occ.Error << "\n";
  }
  OS << formatv("  waves: {0} ({1} blocks / ({2} SMs x {3}))\n", P.Waves,
                St.Blocks, G.Sms,
                Model == ModelKind::Paper && !R.P.Occ.BlocksPerSm ? 0u
                : Model == ModelKind::Paper ? 1u
                                            : P.Occ.BlocksPerSm);
  double Total = 0;
  for (double C : St.Count)
    Total += C;
  OS << formatv("  per warp: {0:f1} instructions:", Total);
  for (unsigned C = 0; C < NumInstrClasses; ++C)
    if (St.Count[C] > 0)
      OS << formatv(" {0} {1:f1}", instrClassName(InstrClass(C)), St.Count[C]);
  OS << "\n";
  if (St.Requests > 0)
    OS << formatv("  global memory: {0:f2} requests/warp; per request {1:f1} "
                  "lanes x {2:f1} B, {3:f2} sectors (32 B), {4:f2} segments "
                  "(128 B)\n",
                  St.Requests, St.LanesPerRequest, St.BytesPerLane,
                  St.SectorsPerRequest, St.SegmentsPerRequest);
  if (Model == ModelKind::Hopper && P.RequestedBytes > 0)
    OS << "  traffic: requested " << bytes(P.RequestedBytes) << ", DRAM "
       << bytes(P.DramBytes) << ", L2 hits " << bytes(P.L2HitBytes)
       << " (footprint " << bytes(St.FootprintBytes)
       << (St.FootprintBytes <= double(G.L2Bytes) ? ", fits in L2)"
                                                  : ", exceeds L2)")
       << "; L1 hits " << bytes(P.L1HitBytes) << ", L2 moves "
       << bytes(P.L2Bytes) << "\n";
  OS << formatv("  N_act {0:f0}, MPD {1:f2}, CPD {2:f2}, P {3:f3}\n", P.NAct,
                P.Mpd, P.Cpd, P.P);
  unsigned NP = 0;
  for (unsigned C : P.PeriodCount)
    NP += C;
  OS << formatv("  periods: {0} per warp", NP);
  for (unsigned T = 0; T < 4; ++T)
    if (P.PeriodCount[T])
      OS << formatv("; type {0}: {1} ({2} clk)", T + 1, P.PeriodCount[T],
                    std::isfinite(P.PeriodCycles[T])
                        ? formatv("{0:f0}", P.PeriodCycles[T]).str()
                        : std::string("inf"));
  OS << formatv("; compute {0:f0} clk, memory {1:f0} clk\n", P.ComputeCycles,
                P.MemoryCycles);
  if (Model == ModelKind::Hopper) {
    OS << formatv("  path: {0:f0} clk per warp, {1:f1} round(s) of memory "
                  "latency, x {2} wave(s)\n",
                  P.PathCycles, P.Rounds, P.Waves);
    OS << "  time: compute " << seconds(P.ComputeSeconds) << " ("
       << P.IssueLimit << "), latency " << seconds(P.LatencySeconds)
       << ", memory " << seconds(P.MemorySeconds) << " (DRAM "
       << seconds(P.DramSeconds) << ") -> kernel "
       << seconds(P.KernelSeconds) << " + launch " << seconds(P.LaunchSeconds)
       << " = " << seconds(P.Seconds) << "\n";
  }
  else
    OS << "  time: " << seconds(P.Seconds) << " ("
       << formatv("{0:f0}", P.BlockCycles) << " clk per block)\n";
  OS << "  predicted: " << seconds(P.Seconds) << ", bottleneck "
     << model::bottleneckName(P.Bound) << "\n";
  for (const std::string &N : P.Notes)
    OS << "  note: " << N << "\n";
  for (const std::string &N : R.S.Problems)
    OS << "  warning: " << N << "\n";
  if (R.S.Overflow)
    OS << "  warning: the record of a sampled block overflowed its limits "
          "(memory requests not all recorded)\n";
  if (R.S.Truncated)
    OS << "  note: the representative warp's trace was cut short; its "
          "periods are scaled by "
       << formatv("{0:f2}", St.StreamScale) << "\n";
  printTpsm(OS, R.Tpsm);
}

json::Value toJson(const Report &R, const Analysis &A) {
  const LaunchRecord &L = *R.L;
  const model::LaunchStats &St = R.S.Stats;
  const model::Prediction &P = R.P;
  json::Object Classes;
  double Total = 0;
  for (unsigned C = 0; C < NumInstrClasses; ++C) {
    Total += St.Count[C];
    if (St.Count[C] > 0)
      Classes[instrClassName(InstrClass(C))] = St.Count[C];
  }
  json::Array Types;
  for (unsigned T = 0; T < 4; ++T)
    Types.push_back(json::Object{{"type", T + 1},
                                 {"count", P.PeriodCount[T]},
                                 {"cycles", num(P.PeriodCycles[T])}});
  json::Array Mems;
  for (auto &[Site, T] : R.S.Mems) {
    const MemSite *M = findMem(A, Site);
    json::Object O{{"site", Site},
                   {"requests_per_block", T.Requests},
                   {"sectors_per_request",
                    T.Requests > 0 ? T.Sectors / T.Requests : 0.0},
                   {"segments_per_request",
                    T.Requests > 0 ? T.Segments / T.Requests : 0.0},
                   {"lanes_per_request",
                    T.Requests > 0 ? T.Lanes / T.Requests : 0.0}};
    if (M) {
      O["class"] = instrClassName(M->Class);
      O["bytes"] = M->Bytes;
      if (!M->Location.empty())
        O["location"] = M->Location;
    }
    Mems.push_back(std::move(O));
  }
  json::Array Notes;
  for (const std::string &N : P.Notes)
    Notes.push_back(N);
  for (const std::string &N : R.S.Problems)
    Notes.push_back(N);
  json::Object Occ{{"blocks_per_sm", P.Occ.BlocksPerSm},
                   {"warps_per_sm", P.Occ.WarpsPerSm},
                   {"fraction", P.Occ.Fraction},
                   {"limiter", P.Occ.BlocksPerSm
                                   ? json::Value(model::limiterName(P.Occ.Limit))
                                   : json::Value(nullptr)}};
  auto Lim = [](unsigned V) -> json::Value {
    if (V == std::numeric_limits<unsigned>::max())
      return nullptr;
    return V;
  };
  Occ["by_registers"] = Lim(P.Occ.ByRegisters);
  Occ["by_shared_memory"] = Lim(P.Occ.BySharedMemory);
  Occ["by_threads"] = P.Occ.ByThreads;
  Occ["by_blocks"] = P.Occ.ByBlocks;
  if (!P.Occ.Error.empty())
    Occ["error"] = P.Occ.Error;
  json::Array Sampled;
  for (const BlockRecord &B : L.Blocks)
    Sampled.push_back(json::Object{{"block", B.Block},
                                   {"requests", B.Requests},
                                   {"sectors", B.Sectors},
                                   {"distinct_sectors", B.DistinctSectors},
                                   {"distinct_segments", B.DistinctSegments},
                                   {"overflow", B.Overflow}});
  return json::Object{
      {"kernel", L.Kernel},
      {"sampled", std::move(Sampled)},
      {"display", R.Display},
      {"grid", json::Array{L.Grid[0], L.Grid[1], L.Grid[2]}},
      {"block", json::Array{L.Block[0], L.Block[1], L.Block[2]}},
      {"dynamic_shared_bytes", L.Shared},
      {"launches", L.Launches},
      {"sampled_blocks", R.S.Recorded},
      {"registers", R.Res.Registers},
      {"static_shared_bytes", R.Res.StaticShared},
      {"resources_from", R.Res.From},
      {"occupancy", std::move(Occ)},
      {"waves", P.Waves},
      {"per_warp",
       json::Object{{"instructions", Total}, {"classes", std::move(Classes)}}},
      {"memory",
       json::Object{{"requests_per_warp", St.Requests},
                    {"lanes_per_request", St.LanesPerRequest},
                    {"bytes_per_lane", St.BytesPerLane},
                    {"sectors_per_request", St.SectorsPerRequest},
                    {"segments_per_request", St.SegmentsPerRequest},
                    {"block_distinct_bytes", St.BlockDistinctBytes},
                    {"footprint_bytes", St.FootprintBytes},
                    {"requested_bytes", P.RequestedBytes},
                    {"dram_bytes", P.DramBytes},
                    {"l2_hit_bytes", P.L2HitBytes},
                    {"l2_bytes", P.L2Bytes},
                    {"l1_hit_bytes", P.L1HitBytes},
                    {"load_segments_per_warp", St.LoadSegments},
                    {"store_requests_per_warp", St.StoreRequests},
                    {"store_sectors_per_warp", St.StoreSectors},
                    {"store_segments_per_warp", St.StoreSegments},
                    {"instructions", std::move(Mems)}}},
      {"n_act", P.NAct},
      {"mpd", num(P.Mpd)},
      {"cpd", num(P.Cpd)},
      {"p", num(P.P)},
      {"periods",
       json::Object{{"by_type", std::move(Types)},
                    {"compute_cycles", num(P.ComputeCycles)},
                    {"memory_cycles", num(P.MemoryCycles)},
                    {"stream_scale", St.StreamScale}}},
      {"time",
       json::Object{{"seconds", num(P.Seconds)},
                    {"kernel_seconds", num(P.KernelSeconds)},
                    {"launch_seconds", num(P.LaunchSeconds)},
                    {"compute_seconds", num(P.ComputeSeconds)},
                    {"latency_seconds", num(P.LatencySeconds)},
                    {"memory_seconds", num(P.MemorySeconds)},
                    {"dram_seconds", num(P.DramSeconds)},
                    {"path_cycles", num(P.PathCycles)},
                    {"issue_limit", P.IssueLimit},
                    {"memory_rounds", num(P.Rounds)},
                    {"block_cycles", num(P.BlockCycles)}}},
      {"bottleneck", model::bottleneckName(P.Bound)},
      {"tpsm", tpsmJson(R.Tpsm)},
      {"notes", std::move(Notes)}};
}


} // namespace analyze
} // namespace cleave
