//===- Instrument.cpp - Recording instrumented CPU variants ---------------===//
//
// Part of Cleave's runtime (no LLVM). See Instrument.h and docs/analyze.md.
//
// A sampled block runs on one worker thread, one thread of the block after
// the other inside each region (the CPU lowering's thread loops), so its
// record needs no lock: the worker's thread-local pointer names it. A
// warp's k-th execution of a memory instruction is the k-th execution by
// each of its lanes (SIMT order for structured control flow); the sectors
// its lanes touch are gathered under that key. A warp executes a basic
// block as often as its busiest lane does.
//
//===----------------------------------------------------------------------===//
#include "Instrument.h"

#include "cleave/ABI/FormatVersions.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

constexpr uint32_t WarpSize = 32;
constexpr uint64_t SectorBytes = 32, SegmentBytes = 128;
constexpr size_t MaxTrace = size_t(1) << 16;     // per warp
constexpr size_t MaxRequests = size_t(1) << 22;  // per block
constexpr uint64_t MaxOccurrence = uint64_t(1) << 22;

/// One warp-level execution of a memory instruction.
struct Request {
  uint32_t Lanes = 0;
  uint64_t Bytes = 0;
  std::vector<uint64_t> Sectors; // distinct
};

/// The raw record of one sampled block while it runs.
struct BlockRecord {
  uint64_t Block = 0;
  uint32_t Threads = 0;
  bool Overflow = false;
  std::unordered_map<uint64_t, uint64_t> ThreadSite; // site<<32|thread
  std::unordered_map<uint64_t, uint64_t> MemOcc;     // site<<32|thread
  std::unordered_map<uint64_t, Request> Requests;    // site<<32|warp<<22|occ
  std::vector<std::vector<uint32_t>> Traces;         // lane 0 of each warp
  std::vector<bool> Truncated;
};

thread_local BlockRecord *Current = nullptr;

struct ConfigKey {
  std::string Kernel;
  uint32_t Grid[3], Block[3];
  uint64_t Shared;
  bool operator<(const ConfigKey &O) const {
    return std::tie(Kernel, Grid[0], Grid[1], Grid[2], Block[0], Block[1],
                    Block[2], Shared) < std::tie(O.Kernel, O.Grid[0],
                                                 O.Grid[1], O.Grid[2],
                                                 O.Block[0], O.Block[1],
                                                 O.Block[2], O.Shared);
  }
};

struct Config {
  uint64_t Launches = 0;
  std::vector<uint64_t> Sampled; // sorted block ids
  std::vector<bool> Claimed;
  std::vector<std::string> Records; // summaries, in the order they ended
};

/// Turns a block's raw record into its lines of the record file.
std::string summarize(BlockRecord &R) {
  uint32_t Warps = (R.Threads + WarpSize - 1) / WarpSize;
  // Per warp: each block site's count (its busiest lane's).
  std::vector<std::map<uint32_t, uint64_t>> Sites(Warps);
  for (auto &[Key, N] : R.ThreadSite) {
    uint32_t Site = uint32_t(Key >> 32), Thread = uint32_t(Key);
    uint64_t &C = Sites[Thread / WarpSize][Site];
    C = std::max(C, N);
  }
  struct MemSummary {
    uint64_t Requests = 0, Lanes = 0, Bytes = 0, Sectors = 0, Segments = 0;
    uint64_t Min = UINT64_MAX, Max = 0;
  };
  std::vector<std::map<uint32_t, MemSummary>> Mems(Warps);
  std::unordered_set<uint64_t> BlockSectors, BlockSegments;
  uint64_t TotalRequests = 0, TotalSectors = 0;
  for (auto &[Key, Q] : R.Requests) {
    uint32_t Site = uint32_t(Key >> 32);
    uint32_t Warp = uint32_t((Key >> 22) & 0x3ff);
    MemSummary &M = Mems[Warp][Site];
    ++M.Requests;
    M.Lanes += Q.Lanes;
    M.Bytes += Q.Bytes;
    M.Sectors += Q.Sectors.size();
    std::vector<uint64_t> Segs;
    for (uint64_t S : Q.Sectors) {
      uint64_t Seg = S * SectorBytes / SegmentBytes;
      if (std::find(Segs.begin(), Segs.end(), Seg) == Segs.end())
        Segs.push_back(Seg);
      BlockSectors.insert(S);
      BlockSegments.insert(Seg);
      M.Min = std::min(M.Min, S * SectorBytes);
      M.Max = std::max(M.Max, S * SectorBytes + SectorBytes - 1);
    }
    M.Segments += Segs.size();
    ++TotalRequests;
    TotalSectors += Q.Sectors.size();
  }
  std::string Out;
  char Line[256];
  std::snprintf(Line, sizeof Line,
                "block %" PRIu64 " threads %u requests %" PRIu64
                " sectors %" PRIu64 " distinct-sectors %zu distinct-segments "
                "%zu overflow %d\n",
                R.Block, R.Threads, TotalRequests, TotalSectors,
                BlockSectors.size(), BlockSegments.size(), R.Overflow ? 1 : 0);
  Out += Line;
  for (uint32_t W = 0; W < Warps; ++W) {
    uint32_t Lanes = std::min(WarpSize, R.Threads - W * WarpSize);
    std::snprintf(Line, sizeof Line, "warp %u lanes %u\n", W, Lanes);
    Out += Line;
    for (auto &[Site, N] : Sites[W]) {
      std::snprintf(Line, sizeof Line, "site %u %" PRIu64 "\n", Site, N);
      Out += Line;
    }
    for (auto &[Site, M] : Mems[W]) {
      std::snprintf(Line, sizeof Line,
                    "mem %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
                    " %" PRIu64 " 0x%" PRIx64 " 0x%" PRIx64 "\n",
                    Site, M.Requests, M.Lanes, M.Bytes, M.Sectors,
                    M.Segments, M.Min == UINT64_MAX ? 0 : M.Min, M.Max);
      Out += Line;
    }
    const std::vector<uint32_t> &T = R.Traces[W];
    std::snprintf(Line, sizeof Line, "trace %zu %d", T.size(),
                  R.Truncated[W] ? 1 : 0);
    Out += Line;
    for (uint32_t S : T) {
      std::snprintf(Line, sizeof Line, " %u", S);
      Out += Line;
    }
    Out += "\n";
  }
  Out += "end\n";
  return Out;
}

class Recorder {
public:
  ~Recorder() { write(); }

  void configure(const std::string &File, unsigned Blocks) {
    std::lock_guard<std::mutex> G(Lock);
    Path = File;
    Samples = Blocks;
  }

  bool enabled() const { return !Path.empty(); }

  /// The configuration of this launch; counts the launch when the range
  /// holds its block 0 (every launch runs block 0 exactly once).
  Config &config(const char *Kernel, const cleave_cpu_launch &L,
                 uint64_t First) {
    ConfigKey K{Kernel ? Kernel : "?",
                {L.grid[0], L.grid[1], L.grid[2]},
                {L.block[0], L.block[1], L.block[2]},
                L.dynamic_shared_bytes};
    std::lock_guard<std::mutex> G(Lock);
    auto [It, New] = Configs.try_emplace(K);
    Config &C = It->second;
    if (New) {
      Order.push_back(K);
      uint64_t Blocks = uint64_t(L.grid[0]) * L.grid[1] * L.grid[2];
      uint64_t N = std::min(Samples, Blocks);
      for (uint64_t I = 0; I < N; ++I) {
        uint64_t B = N == 1 ? 0 : I * (Blocks - 1) / (N - 1);
        if (C.Sampled.empty() || C.Sampled.back() != B)
          C.Sampled.push_back(B);
      }
      C.Claimed.assign(C.Sampled.size(), false);
    }
    if (First == 0)
      ++C.Launches;
    return C;
  }

  /// Claims sampled block \p B of \p C for recording (once per config).
  bool claim(Config &C, uint64_t B) {
    std::lock_guard<std::mutex> G(Lock);
    auto It = std::lower_bound(C.Sampled.begin(), C.Sampled.end(), B);
    if (It == C.Sampled.end() || *It != B)
      return false;
    size_t I = size_t(It - C.Sampled.begin());
    if (C.Claimed[I])
      return false;
    C.Claimed[I] = true;
    return true;
  }

  /// The next sampled block of \p C at or after \p B (UINT64_MAX: none).
  uint64_t nextSampled(const Config &C, uint64_t B) {
    std::lock_guard<std::mutex> G(Lock);
    auto It = std::lower_bound(C.Sampled.begin(), C.Sampled.end(), B);
    return It == C.Sampled.end() ? UINT64_MAX : *It;
  }

  void store(Config &C, std::string Record) {
    std::lock_guard<std::mutex> G(Lock);
    C.Records.push_back(std::move(Record));
  }

private:
  void write() {
    if (Path.empty())
      return;
    std::FILE *F = std::fopen(Path.c_str(), "w");
    if (!F) {
      std::fprintf(stderr, "cleave: cannot write the instrumentation record "
                           "'%s': %s\n",
                   Path.c_str(), std::strerror(errno));
      return;
    }
    std::fprintf(F, "%s %u\n", cleave::InstrumentRecordMagic,
                 cleave::InstrumentRecordVersion);
    for (const ConfigKey &K : Order) {
      const Config &C = Configs[K];
      std::fprintf(F,
                   "launch %s grid %u %u %u block %u %u %u shared %" PRIu64
                   " launches %" PRIu64 " sampled %zu\n",
                   K.Kernel.c_str(), K.Grid[0], K.Grid[1], K.Grid[2],
                   K.Block[0], K.Block[1], K.Block[2], K.Shared, C.Launches,
                   C.Records.size());
      for (const std::string &R : C.Records)
        std::fputs(R.c_str(), F);
    }
    if (std::fclose(F) != 0)
      std::fprintf(stderr, "cleave: cannot write the instrumentation record "
                           "'%s': %s\n",
                   Path.c_str(), std::strerror(errno));
  }

  std::string Path;
  uint64_t Samples = 3;
  std::mutex Lock;
  std::map<ConfigKey, Config> Configs;
  std::vector<ConfigKey> Order;
};

Recorder &recorder() {
  static Recorder R;
  return R;
}

/// Runs sampled block \p B with the instrumented variant on scratch of its
/// own (its lowering may lay out per-thread storage differently).
void runSampled(const cleave_cpu_kernel_desc &Instr, void **Args,
                const cleave_cpu_launch &L, uint64_t B, BlockRecord &R) {
  uint64_t Bytes = cleave_cpu_align_up(
      std::max<uint64_t>(cleave_cpu_scratch_bytes(&Instr, &L), 64),
      CLEAVE_CPU_SCRATCH_ALIGN);
  void *Scratch = std::aligned_alloc(CLEAVE_CPU_SCRATCH_ALIGN, Bytes);
  if (!Scratch) {
    std::fprintf(stderr,
                 "cleave: out of memory for an instrumented block's scratch "
                 "(%" PRIu64 " bytes); block %" PRIu64 " of %s not recorded\n",
                 Bytes, B, Instr.name ? Instr.name : "?");
    R.Overflow = true;
    return;
  }
  Current = &R;
  Instr.fn(Args, &L, B, 1, Scratch);
  Current = nullptr;
  std::free(Scratch);
}

} // namespace

void cleave::rt::configureInstrumentation(const std::string &Path,
                                          unsigned Blocks) {
  recorder().configure(Path, Blocks);
}

extern "C" void __cleave_rt_instr_run(const cleave_cpu_kernel_desc *Instr,
                                      cleave_cpu_kernel_fn Plain, void **Args,
                                      const cleave_cpu_launch *L,
                                      uint64_t First, uint64_t Count,
                                      void *Scratch) {
  Recorder &Rec = recorder();
  if (!Rec.enabled() || !Instr || !Instr->fn) {
    Plain(Args, L, First, Count, Scratch);
    return;
  }
  Config &C = Rec.config(Instr->name, *L, First);
  uint64_t End = First + Count, At = First;
  uint32_t Threads = L->block[0] * L->block[1] * L->block[2];
  while (At < End) {
    uint64_t S = Rec.nextSampled(C, At);
    if (S >= End) {
      Plain(Args, L, At, End - At, Scratch);
      break;
    }
    if (S > At)
      Plain(Args, L, At, S - At, Scratch);
    if (Rec.claim(C, S)) {
      BlockRecord R;
      R.Block = S;
      R.Threads = Threads;
      uint32_t Warps = (Threads + WarpSize - 1) / WarpSize;
      R.Traces.resize(Warps);
      R.Truncated.assign(Warps, false);
      runSampled(*Instr, Args, *L, S, R);
      Rec.store(C, summarize(R));
    } else {
      Plain(Args, L, S, 1, Scratch);
    }
    At = S + 1;
  }
}

extern "C" void __cleave_rt_instr_block(uint64_t SiteThread) {
  BlockRecord *R = Current;
  if (!R)
    return;
  uint32_t Thread = uint32_t(SiteThread);
  ++R->ThreadSite[SiteThread];
  if (Thread % WarpSize == 0 && Thread / WarpSize < R->Traces.size()) {
    std::vector<uint32_t> &T = R->Traces[Thread / WarpSize];
    if (T.size() < MaxTrace)
      T.push_back(uint32_t(SiteThread >> 32));
    else
      R->Truncated[Thread / WarpSize] = true;
  }
}

extern "C" void __cleave_rt_instr_mem(uint64_t Meta, uint64_t Addr) {
  BlockRecord *R = Current;
  if (!R)
    return;
  uint64_t Site = Meta >> 32;
  uint64_t Bytes = (Meta >> 16) & 0xffff;
  uint64_t Thread = Meta & 0xffff;
  uint64_t Occ = R->MemOcc[(Site << 32) | Thread]++;
  if (Occ >= MaxOccurrence ||
      (R->Requests.size() >= MaxRequests &&
       !R->Requests.count((Site << 32) | ((Thread / WarpSize) << 22) | Occ))) {
    R->Overflow = true;
    return;
  }
  Request &Q = R->Requests[(Site << 32) | ((Thread / WarpSize) << 22) | Occ];
  ++Q.Lanes;
  Q.Bytes += Bytes;
  if (Bytes == 0)
    return;
  for (uint64_t S = Addr / SectorBytes, E = (Addr + Bytes - 1) / SectorBytes;
       S <= E; ++S)
    if (std::find(Q.Sectors.begin(), Q.Sectors.end(), S) == Q.Sectors.end())
      Q.Sectors.push_back(S);
}
