//===- HopperModel.h - Kernel time from counted instructions -----*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). The kernel-time models of `cleave
// analyze` (docs/analyze.md, docs/models.md), evaluated on what an
// instrumented run counted (each warp's dynamic instructions by class, the
// sectors and segments of its global memory requests, a representative
// warp's instruction sequence) and on a device profile:
//
//  - paper:  Luo's MPD/CPD period model (digest 000 §1, luo:: in
//            LuoModel.h) as printed; each correction is a named option of
//            luo::Corrections.
//  - hopper: our extension: occupancy from registers, shared memory,
//            threads and blocks per SM; waves; issue throughput per
//            instruction class; a latency path through the representative
//            warp's periods; 32-byte sectors split between L2 and DRAM;
//            the launch cost.
//
// Units: clocks of the SM clock inside, seconds out.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_HOPPERMODEL_H
#define CLEAVE_RT_HOPPERMODEL_H

#include "cleave/rt/LuoModel.h"

#include "cleave/ABI/InstrClass.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace cleave {
namespace rt {
namespace model {

/// One cost per instruction class (cleave/ABI/InstrClass.h, the classes
/// the instrumentation counts).
using ClassArray = std::array<double, NumInstrClasses>;

/// What the models need of a GPU (a device profile, docs/calibrate.md).
struct GpuParams {
  std::string Name;
  unsigned Sms = 0;
  double ClockMHz = 0;
  unsigned MaxWarpsPerSm = 64, MaxBlocksPerSm = 32, MaxThreadsPerSm = 2048;
  unsigned MaxThreadsPerBlock = 1024;
  unsigned RegistersPerSm = 65536;
  /// Registers are allocated per warp in units of this many (256 on
  /// sm_70 and later: 8 registers per thread).
  unsigned RegisterUnitPerWarp = 256;
  uint64_t SharedPerSm = 0, SharedPerBlockMax = 0, SharedReservedPerBlock = 0;
  /// Shared memory is allocated per block in units of this many bytes.
  uint64_t SharedUnit = 128;
  double DramGBps = 0, L2GBps = 0;
  /// A copy kernel's DRAM bandwidth (bytes read + bytes written per second,
  /// one read per write); 0: writes at the read bandwidth.
  double DramCopyGBps = 0;
  /// 128-byte lines: L2 accepts a store as one packet per line it touches.
  unsigned LineBytes = 128;
  uint64_t L2Bytes = 0;
  double LatencyL1 = 0, LatencyL2 = 0, LatencyDram = 0; ///< clocks,
                                                        ///< dependent loads
  double LaunchUs = 0; ///< per launch, back to back
  /// Dependent-chain latency of one instruction of each class (clocks):
  /// the paired-kernel costs of the profile (Luo's table, §1.2).
  ClassArray Latency{};
  /// Clocks one SM sub-partition needs to issue one warp instruction of
  /// each class: 32 / (lanes of that unit per sub-partition).
  ClassArray Issue{};
  unsigned SubPartitions = 4;
  luo::CpdFit Cpd;
};

/// The execution pipes of an sm_90 SM sub-partition: each takes a warp
/// instruction of its classes every G.Issue clocks, and the sub-partition
/// dispatches at most one instruction per clock to all of them together.
enum class Pipe : uint8_t { Fma, Alu, Fp64, Xu, Mio };
constexpr unsigned NumPipes = unsigned(Pipe::Mio) + 1;
/// fp32 and its division sequence: FMA; int, branches, barriers and the rest:
/// ALU; fp64: FP64; sfu and conversions: XU (the transcendental unit);
/// memory, constant loads and warp shuffles: MIO (the load/store path).
Pipe pipeOf(InstrClass C);

/// The issue costs of an sm_90 SM sub-partition (H100/H200 whitepaper: per
/// SM and clock 128 FP32, 64 INT32, 64 FP64, 16 SFU lanes, 32 load/store
/// units; division and square root are multi-instruction sequences).
ClassArray hopperIssueCosts();

/// Per-thread resources of a kernel (ptxas -v) and its launch.
struct KernelResources {
  unsigned Registers = 0;     ///< per thread
  uint64_t StaticShared = 0;  ///< bytes per block
  uint64_t DynamicShared = 0; ///< bytes per block
};

enum class Limiter { Registers, SharedMemory, Threads, Blocks };
const char *limiterName(Limiter L);

struct Occupancy {
  unsigned BlocksPerSm = 0; ///< resident blocks per SM
  unsigned WarpsPerSm = 0;  ///< BlocksPerSm * warps per block
  unsigned ByRegisters = 0, BySharedMemory = 0, ByThreads = 0, ByBlocks = 0;
  Limiter Limit = Limiter::Blocks;
  double Fraction = 0; ///< WarpsPerSm / max warps per SM
  std::string Error;   ///< why not even one block fits (then BlocksPerSm 0)
};

/// Resident blocks per SM: the least of what registers (allocated per warp
/// in RegisterUnitPerWarp units), shared memory (SharedUnit units plus the
/// reserved bytes per block), threads (whole warps) and the block limit
/// allow; the limiter is the first in that order that attains the least.
Occupancy occupancy(const GpuParams &G, const KernelResources &R,
                    unsigned ThreadsPerBlock);

/// What the instrumented run counted for one launch configuration.
struct LaunchStats {
  uint64_t Blocks = 0;
  unsigned ThreadsPerBlock = 0;
  /// The average warp of the sampled blocks: dynamic instructions by class.
  ClassArray Count{};
  /// Its global memory requests (warp-level memory instructions) and, per
  /// request, the active lanes, bytes per lane, 32-byte sectors and
  /// 128-byte segments touched.
  double Requests = 0, LanesPerRequest = 0, BytesPerLane = 0;
  double SectorsPerRequest = 0, SegmentsPerRequest = 0;
  /// Of those, the stores' (global stores, per warp): requests and the
  /// 32-byte sectors and 128-byte segments they touch.
  double StoreRequests = 0, StoreSectors = 0, StoreSegments = 0;
  /// 128-byte segments the loads and atomics of a warp touch (all its
  /// requests' segments less the stores').
  double LoadSegments = 0;
  /// The representative warp's instruction sequence (classes in order).
  std::vector<InstrClass> Stream;
  /// Data dependences of the Stream, when known (else both empty): entry
  /// I uses the results of the entries Deps[DepBegin[I] .. DepBegin[I+1])
  /// (earlier positions of the Stream). DepBegin has Stream.size() + 1
  /// elements.
  std::vector<uint32_t> DepBegin, Deps;
  /// Dynamic instructions the Stream stands for / its length (> 1 when the
  /// recorded trace was cut short).
  double StreamScale = 1;
  /// Distinct 32-byte sector bytes one block touches (average), and the
  /// launch's footprint: the union of the address ranges each memory
  /// instruction spans over the sampled blocks.
  double BlockDistinctBytes = 0, FootprintBytes = 0;
};

/// Luo's calculate periods (§1.3) of an instruction sequence: a period is a
/// maximal run of computation instructions (cost: the sum of \p Cost) and
/// the maximal run of memory instructions after it (\p MemoryTask gives the
/// cost of a memory task from its number of loads and stores).
std::vector<luo::Period> periodsOf(
    const std::vector<InstrClass> &Stream, const ClassArray &Cost,
    double (*MemoryTask)(unsigned Loads, unsigned Stores, const void *Ctx),
    const void *Ctx);

enum class Bottleneck { Memory, Compute, Latency, Launch };
const char *bottleneckName(Bottleneck B);

struct Prediction {
  double Seconds = 0;       ///< what the model predicts for one launch
  double KernelSeconds = 0; ///< without the launch cost
  double LaunchSeconds = 0; ///< included in Seconds or not (paper)
  Occupancy Occ;
  uint64_t Waves = 0;
  double NAct = 0, Mpd = 0, Cpd = 0, P = 0;
  double WarpBandwidth = 0; ///< (3.1), bytes per clock
  /// The periods by type 1-4 (index 0-3): how many, and their cycles T_i
  /// (paper: (3.7)-(3.14); hopper: compute latency + memory latency).
  std::array<unsigned, 4> PeriodCount{};
  std::array<double, 4> PeriodCycles{};
  double ComputeCycles = 0, MemoryCycles = 0; ///< sums of c_i and m_i
  double BlockCycles = 0;                     ///< paper: sum of T_i
  // hopper's three bounds (seconds) and its memory traffic (bytes)
  double ComputeSeconds = 0, LatencySeconds = 0, MemorySeconds = 0;
  double RequestedBytes = 0, DramBytes = 0, L2HitBytes = 0;
  /// hopper: the representative warp's path (clocks), its rounds of
  /// memory latency, the bytes L2 moves for the SMs (load sectors, store
  /// packets of whole lines) and the DRAM time alone (seconds).
  double PathCycles = 0, Rounds = 0, L2Bytes = 0, DramSeconds = 0;
  /// hopper: load bytes served by L1 (sectors a block reads again), and
  /// the issue bound's busiest pipe (or the dispatch of one instruction
  /// per clock).
  double L1HitBytes = 0;
  std::string IssueLimit;
  Bottleneck Bound = Bottleneck::Compute;
  std::vector<std::string> Notes;
};

/// Digest 000 §1 with the corrections \p C (luo::Corrections::paper() is
/// the thesis as printed: one block on one SM, N_act = the block's warps,
/// costs = the profile's dependent-chain latencies, t_mem = DRAM latency,
/// N_trans = 128-byte segments per request).
Prediction predictPaper(const GpuParams &G, const LaunchStats &S,
                        const KernelResources &R, const luo::Corrections &C);

/// Our Hopper model (docs/analyze.md): max of issue time, latency path and
/// memory traffic time, plus the launch cost.
Prediction predictHopper(const GpuParams &G, const LaunchStats &S,
                         const KernelResources &R);

/// One warp alone issuing its Stream in program order (the hopper model's
/// latency path when the Stream's dependences are known): an instruction
/// issues one clock after the one before it, and not before the results it
/// uses are ready; a result is ready its class's dependent-chain latency
/// (\p G.Latency) after issue, a global or local load's \p MemLatency
/// after; stores produce nothing anyone waits for. Without dependences
/// (DepBegin empty) every instruction waits for the one before it (a
/// chain). \p Rounds, when given, receives the rounds of memory latency the
/// warp waits through one after the other (a load issued once the data of
/// the round before it is back starts a new round; the loads of the first
/// round wait \p FirstLatency when it is given); \p Issued the
/// instructions issued (the path's lower bound). Returns the clocks until
/// the last instruction has issued and every result is ready.
double dependentPath(const GpuParams &G, const LaunchStats &S,
                     double MemLatency, double *Issued = nullptr,
                     double *Rounds = nullptr, double FirstLatency = -1);

/// Seconds DRAM needs to read \p Read and write \p Written bytes: reads
/// at the read bandwidth, writes at the write bandwidth a copy implies
/// (1 / write = 2 / copy - 1 / read; the read bandwidth when the profile
/// has no copy bandwidth or it implies none).
double dramSeconds(const GpuParams &G, double Read, double Written);

/// The L2 rule of the hopper model: DRAM bytes of a launch that requests
/// \p Requested sector bytes, whose blocks touch \p BlockDistinct distinct
/// sector bytes each and whose footprint is \p Footprint: every byte of the
/// footprint once when it fits in L2 (re-reads hit), else every block's
/// distinct bytes (only reuse within a block hits); never more than
/// requested.
double dramBytes(double Requested, double BlockDistinct, uint64_t Blocks,
                 double Footprint, uint64_t L2Bytes);

} // namespace model
} // namespace rt
} // namespace cleave

#endif
