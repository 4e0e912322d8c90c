//===- CoRun.h - Markov-chain model of kernels sharing an SM ----*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). Kernelet's co-run model (digest 003
// §4, docs/coschedule.md): a discrete-time Markov chain over the number of
// memory-stalled warps of each kernel resident on one SM predicts each
// kernel's IPC alone and co-resident, hence the co-scheduling profit of a
// pair and the per-SM block ratio at which both kernels' slices finish
// together.
//
// The chain runs on a "virtual SM" of one warp scheduler (§4.7): the SM's
// warps and memory bandwidth divided by its schedulers; an SM's IPC is the
// schedulers times the virtual SM's. A warp is ready, or idle waiting for a
// coalesced or an uncoalesced global memory request (§4.6); one step of the
// chain is one scheduling round in which every ready warp issues one
// instruction (§4.3). Memory latency grows linearly with the sectors in
// flight (§4.4, the digest's corrected form). When the states of a pair
// would exceed a budget, warps are lumped into units that move together
// (our form of the online shortcut of §4.8).
//
// Units: cycles of the SM clock; IPC in warp instructions per cycle.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_CORUN_H
#define CLEAVE_RT_CORUN_H

#include "cleave/rt/Error.h"
#include "cleave/rt/HopperModel.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cleave {
namespace rt {
namespace corun {

/// Latency of one global memory request on the virtual SM (§4.4, linear in
/// the sectors in flight): Base + Slope * (InFlight + Sectors) / Bandwidth,
/// where Bandwidth is in 32-byte sectors per cycle. A Bandwidth of 0 means
/// no contention: every request takes Base.
struct MemoryModel {
  double Base = 400;          ///< L0 + b0, cycles
  double SectorsPerCycle = 0; ///< B of the virtual SM
  double Slope = 1;           ///< a0
  double latency(double Sectors, double InFlightSectors) const;
};

/// One kernel's resident warps on the virtual SM, in units of
/// WarpsPerUnit warps that the chain moves together (1: warp level).
struct Population {
  unsigned Units = 0;
  unsigned WarpsPerUnit = 1;
  /// Rm: global memory instructions / all instructions.
  double MemRatio = 0;
  /// Of the memory instructions, the fraction that is coalesced; the rest
  /// are uncoalesced (§4.6). 1 or 0 gives the two-state chain.
  double CoalescedFraction = 1;
  /// 32-byte sectors one request of each kind moves.
  double CoalescedSectors = 4, UncoalescedSectors = 32;
};

struct ChainOptions {
  /// Largest chain solved by direct elimination; larger ones by power
  /// iteration.
  unsigned DirectLimit = 800;
  unsigned MaxIterations = 200000;
  double Tolerance = 1e-13;
};

struct ChainResult {
  /// Per population: issued instructions per cycle of the virtual SM
  /// (Eqs. 4-6).
  std::vector<double> Ipc;
  unsigned States = 0;
  /// Power iterations used (0: direct solution).
  unsigned Iterations = 0;
};

/// Number of states the chain of \p Pops has (the product of each
/// population's: Units + 1, or (Units + 1)(Units + 2) / 2 with both kinds
/// of request).
uint64_t chainStates(const std::vector<Population> &Pops);

/// Builds the chain of \p Pops sharing one virtual SM, solves its steady
/// state (Eq. 3) and returns each population's IPC. InvalidValue for an
/// empty population list, a population without units, or a ratio outside
/// [0, 1]; NotSupported for a chain over 1e6 states; Unknown when power
/// iteration does not converge.
Result solveChain(const std::vector<Population> &Pops, const MemoryModel &M,
                  ChainResult &Out, const ChainOptions &O = {});

/// The homogeneous chain of §4.3 (Eq. 4): W warps of one kernel.
Result homogeneousIpc(unsigned Warps, double MemRatio, const MemoryModel &M,
                      double &Ipc);

/// Eq. 1: CP = 1 - 1 / sum_i (Co_i / Solo_i). 0 when the sizes differ or
/// a solo IPC is not positive.
double coSchedulingProfit(const std::vector<double> &Co,
                          const std::vector<double> &Solo);

/// What the pair model needs of an SM (from model::GpuParams and the
/// device profile: runtime/lib/model/CoRunInputs.cpp).
struct SmLimits {
  unsigned Sms = 1;
  unsigned MaxWarps = 64, MaxBlocks = 32;
  unsigned Registers = 65536;
  uint64_t SharedBytes = 228 * 1024;
  unsigned Schedulers = 4;
  /// The whole SM's memory: its bandwidth is divided among the schedulers
  /// for the virtual SM.
  MemoryModel Memory;
  /// States a pair's chain may have before warps are lumped (§4.8).
  unsigned MaxStates = 800;
};

/// One kernel's model inputs (§4.9).
struct KernelModelInput {
  double MemRatio = 0;
  double CoalescedFraction = 1;
  double CoalescedSectors = 4, UncoalescedSectors = 32;
  unsigned WarpsPerBlock = 1;
  /// Resources one block holds on an SM.
  unsigned RegistersPerBlock = 0;
  uint64_t SharedPerBlock = 0;
  /// I_K of Eq. 8: warp instructions one block executes.
  double InstrPerBlock = 0;
};

/// A kernel alone on the GPU.
struct SoloPrediction {
  unsigned BlocksPerSm = 0;
  double Ipc = 0; ///< per SM
  /// Pipeline and memory-bandwidth utilisation (§5.2), here from the model:
  /// IPC over the SM's peak (its schedulers), and the sectors it requests
  /// per cycle over the SM's bandwidth (0 without a bandwidth).
  double Pur = 0, Mur = 0;
};

/// Blocks of \p K that fit on one SM alone (warps, blocks, registers,
/// shared memory); 0 when none does.
unsigned blocksPerSm(const KernelModelInput &K, const SmLimits &S);

/// The populations of the virtual SM for \p Blocks blocks per SM of each
/// kernel, lumped as §4.8 needs to stay within S.MaxStates (one warp-unit
/// size for all of them).
std::vector<Population>
virtualSm(const std::vector<const KernelModelInput *> &K,
          const std::vector<unsigned> &Blocks, const SmLimits &S);

Result predictSolo(const KernelModelInput &K, const SmLimits &S,
                   SoloPrediction &Out);

/// How the per-SM block counts of a pair are chosen (§4.5): Balanced
/// (the digest's reading): the least relative imbalance of Eq. 8, taking
/// the highest CP among those within BalanceSlack of it; MaxProfit: the
/// highest CP.
enum class RatioRule { Balanced, MaxProfit };

struct PairOptions {
  RatioRule Rule = RatioRule::Balanced;
  double BalanceSlack = 0.05;
  /// A measurement control: when both are set, the filling co-schedule
  /// whose blocks are nearest Forced[0]:Forced[1] (the first kernel's
  /// share of the SM's blocks), whatever the rule.
  unsigned Forced[2] = {0, 0};
};

struct PairPrediction {
  unsigned Blocks[2] = {0, 0}; ///< P_K1, P_K2: blocks per SM
  double CoIpc[2] = {0, 0};    ///< per SM, co-resident (Eqs. 5, 6)
  double SoloIpc[2] = {0, 0};
  double Profit = 0; ///< Eq. 1
  /// |T1 - T2| / max(T1, T2) with T_i = I_Ki P_Ki / cIPC_i (Eq. 8).
  double Imbalance = 0;
  /// Co-schedules evaluated.
  unsigned Ratios = 0;
};

/// Eq. 8 over every per-SM block pair that fits together and fills the SM
/// (no further block of either kernel fits), and Eq. 1 for the chosen
/// one. NotSupported when no pair of at least one block each
/// fits on an SM.
Result predictPair(const KernelModelInput &A, const KernelModelInput &B,
                   const SoloPrediction &SoloA, const SoloPrediction &SoloB,
                   const SmLimits &S, PairPrediction &Out,
                   const PairOptions &O = {});

/// Cycles (SM clock) \p Blocks blocks of \p K take alone on \p Sms SMs:
/// whole waves of S.BlocksPerSm blocks per SM, a wave lasting
/// BlocksPerSm x I_K / IPC (the solo chain's IPC at that occupancy).
double soloCycles(const KernelModelInput &K, const SoloPrediction &S,
                  uint64_t Blocks, unsigned Sms);

/// Cycles a pair takes interleaved at \p P's ratio on \p Sms SMs: rounds
/// of P_i x Sms blocks each, a round lasting the longer of I_i P_i /
/// cIPC_i, until one kernel runs out of its \p Blocks; then the other's
/// remaining blocks alone (soloCycles). 0 for a pair without a ratio.
double interleaveCycles(const KernelModelInput &A, const KernelModelInput &B,
                        const SoloPrediction &SoloA,
                        const SoloPrediction &SoloB, const PairPrediction &P,
                        const uint64_t Blocks[2], unsigned Sms);

/// The pair run side by side on a split of the SMs (green contexts): the
/// first kernel on Sms[0] SMs, the second on the rest, each unsliced at
/// its own occupancy; the pair takes the longer of the two.
struct PartitionPrediction {
  unsigned Sms[2] = {0, 0};
  double Cycles[2] = {0, 0}; ///< soloCycles of each on its SMs
  double PairCycles = 0;     ///< max of the two
};

/// The split of \p Sms SMs, in multiples of \p Granularity for the first
/// kernel and at least Granularity for the second (the remainder goes to
/// it), that minimises PairCycles for \p Blocks blocks of each.
/// NotSupported when the SMs cannot be split in two (fewer than twice the
/// granularity, or a granularity of 0).
Result predictPartition(const KernelModelInput &A, const KernelModelInput &B,
                        const SoloPrediction &SoloA,
                        const SoloPrediction &SoloB, const uint64_t Blocks[2],
                        unsigned Sms, unsigned Granularity,
                        PartitionPrediction &Out);

/// The model inputs of a kernel from what an instrumented run counted
/// (model::LaunchStats, docs/analyze.md) and its resources (§4.9):
///  - Rm: the average warp's global memory requests over its instructions;
///  - coalescing: a request of the launch's lanes and bytes per lane needs
///    ceil(lanes x bytes / 32) sectors when coalesced, one per lane when
///    not; the coalesced fraction is the mix of the two that gives the
///    measured sectors per request;
///  - I_K: the average warp's instructions times the warps per block;
///  - registers and shared memory per block, in the allocation units
///    model::occupancy uses.
/// InvalidValue when the stats have no instructions or no threads.
Result kernelInputs(const model::LaunchStats &S,
                    const model::KernelResources &R, const model::GpuParams &G,
                    KernelModelInput &Out);

/// The SM of \p G: its limits, schedulers (sub-partitions), and memory:
/// base latency the profile's dependent DRAM load latency, bandwidth the
/// DRAM bandwidth in sectors per SM clock per SM. InvalidValue when G
/// lacks SMs, a clock or a DRAM latency.
Result smLimits(const model::GpuParams &G, SmLimits &Out);

} // namespace corun
} // namespace rt
} // namespace cleave

#endif
