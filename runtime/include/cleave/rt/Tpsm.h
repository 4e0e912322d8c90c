//===- Tpsm.h - Luo's transfer pipelining model (TPSM) ----------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). How to cut one GPU's block range into
// chunks whose send (host to GPU), kernel and receive (GPU to host) overlap
// on three streams, after Luo's single-GPU TPSM (digest 000 §3.2-3.3):
//
//   * the launch is classified kernel-bound (KB) or transfer-bound (DB), and
//     send-, receive- or general-heavy (SH, RH, GH);
//   * each of the six cases has its own chunk sizes: geometric series whose
//     bases come from the link rates and the kernel time, a three-phase
//     schedule, or equal chunks;
//   * every plan is a list of steps; in step j the GPU sends the inputs of
//     some blocks, runs the kernel on blocks whose inputs came in an earlier
//     step and returns the outputs of blocks computed in an earlier step,
//     then all three streams synchronize (t_str). The plan's predicted time
//     is the sum over steps of max(transfer, kernel) + t_str, the transfer
//     of a step being H() of (4.35) plus the copies' latency.
//
// Corrected from the thesis as printed (docs/models.md lists them): (4.17)
// uses a^(i-3); the middle step's transfer (4.24) is H(); the base value of
// the transfer-bound cases comes from golden-section search on the plan's
// predicted time instead of Algorithm 1 (whose update rules are swapped);
// (4.41)'s set has no maximum, so the receive-heavy transfer-bound case
// searches its base the same way. Chunks are at least one wave of the GPU
// and whole waves but for the one that takes the range's remainder, and a
// plan that is not predicted to beat the unpipelined sequence (send all,
// run, receive all) is not taken.
//
// Units: bytes, bytes per second and seconds. Everything here is arithmetic:
// no devices, no clocks.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_TPSM_H
#define CLEAVE_RT_TPSM_H

#include "cleave/rt/HopperModel.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cleave {
namespace rt {

struct GpuProfile;

namespace tpsm {

/// One GPU's host link for one kind of host memory (digest 000 §3.2).
struct LinkRates {
  double SendAlone = 0;    ///< S_S: host to GPU, nothing else moving
  double ReceiveAlone = 0; ///< R_R: GPU to host, nothing else moving
  double SendBoth = 0;     ///< S_SR: host to GPU while GPU to host moves
  double ReceiveBoth = 0;  ///< R_SR: GPU to host while host to GPU moves
  /// Fixed cost of one copy in each direction (seconds), paid once per
  /// copy on top of bytes / rate.
  double SendLatency = 0, ReceiveLatency = 0;
  /// t_str: one step's synchronization of the three streams (seconds).
  double StepSync = 0;
  /// Seconds for this GPU to send \p Xs and receive \p Xr bytes in one
  /// step. Empty for one GPU alone: H() of (4.35) from the rates above.
  /// Set for a GPU among n symmetric ones that step together (digest 000
  /// §3.4, MultiGpuTpsm.h): G(n Xs, n Xr) of the host-link states, (4.104).
  std::function<double(double Xs, double Xr)> Transfer;
  /// What the device profile lacks ("pageable S_SR", ...); the model
  /// refuses to pipeline, naming it, when this is not empty.
  std::string Missing;
  /// Facts worth saying with a plan ("copy latency not in the profile:
  /// taken as 0").
  std::vector<std::string> Notes;
};

enum class HostMemory { Pinned, Pageable };

/// The rates of GPU \p G's host link for \p M memory, from its profile
/// (docs/calibrate.md): S_S and R_R from the GPU alone, S_SR and R_SR
/// from the state where only this GPU sends and receives, the latencies
/// from the small-copy fit, t_str from the 3-stream step. Rates absent
/// from the profile are named in Missing (no nominal rates are assumed);
/// an absent latency is taken as 0 with a note. S_SR and R_SR are capped
/// at S_S and R_R (a measurement above them is noise).
LinkRates linkRates(const GpuProfile &G, HostMemory M);

/// The bytes a range of n blocks moves one way: Fixed + PerBlock * n. The
/// fixed part (a matrix every block reads, the halo at the range's ends)
/// moves once: with the first chunk sent, with the last chunk received.
struct Bytes {
  double Fixed = 0;
  double PerBlock = 0;
  double total(uint64_t Blocks) const { return Fixed + PerBlock * Blocks; }
};

/// Seconds the kernel takes on a chunk of the given number of blocks,
/// launch included.
using KernelTime = std::function<double(uint64_t Blocks)>;

/// Luo's assumption: time proportional to the blocks (digest 000 §3.2).
KernelTime proportionalKernelTime(double SecondsPerBlock);
/// Whole waves of \p WaveBlocks blocks, each \p SecondsPerWave, plus
/// \p LaunchSeconds per chunk.
KernelTime waveKernelTime(double SecondsPerWave, uint64_t WaveBlocks,
                          double LaunchSeconds);
/// The hopper model's prediction (HopperModel.h) for a chunk: \p S with its
/// block count (and footprint, in proportion) set to the chunk's.
KernelTime hopperKernelTime(const model::GpuParams &G,
                            const model::LaunchStats &S,
                            const model::KernelResources &R);

/// One wave of the GPU: SMs x co-resident blocks per SM (at least 1).
uint64_t waveBlocks(unsigned SMs, unsigned BlocksPerSM);

/// One launch's work on one GPU, data on the host.
struct Workload {
  uint64_t Blocks = 0;
  Bytes Send;    ///< inputs the GPU needs (host to GPU)
  Bytes Receive; ///< outputs the host reads back (GPU to host)
  /// Copies per chunk and direction (one per buffer); each pays the
  /// latency.
  unsigned SendCopies = 1, ReceiveCopies = 1;
  KernelTime Kernel;
  /// The smallest chunk: one wave (waveBlocks).
  uint64_t MinChunk = 1;
};

enum class Bound { Kernel, Transfer };
enum class Heavy { Send, Receive, General };
struct Case {
  Bound B = Bound::Transfer;
  Heavy H = Heavy::General;
  bool operator==(const Case &O) const { return B == O.B && H == O.H; }
};
/// "KB+SH", "DB+GH", ...
std::string caseName(Case C);

struct Options {
  /// A direction is light when its time alone is at most this fraction of
  /// the other's (the thesis gives no number; Table 4.1's heavy rows have
  /// 0.03-0.13, its general ones 0.88-1.15).
  double HeavyRatio = 0.25;
  /// At most this many kernel chunks (the smallest chunk grows to keep it).
  uint64_t MaxChunks = 1024;
  /// Golden-section iterations for the transfer-bound bases.
  unsigned SearchIterations = 48;
};

/// The times a classification and a plan are judged by.
struct Totals {
  double Send = 0;    ///< all inputs alone: D_s / S_S
  double Kernel = 0;  ///< T_k, every block in one launch
  double Receive = 0; ///< all outputs alone: D_r / R_R
  double Both = 0;    ///< H(D_s, D_r): both directions at once
};
Totals totals(const Workload &W, const LinkRates &L);

/// §3.1: kernel-bound when the kernel is not shorter than the transfers
/// at once (T_k >= H(D_s, D_r)); send-heavy when receiving alone takes at
/// most HeavyRatio of sending alone, receive-heavy the other way round,
/// else general-heavy.
Case classify(const Totals &T, const Options &O = {});

/// One step of the pipeline: the blocks (consecutive, in order, after
/// those of the steps before) whose inputs are sent, that the kernel runs
/// and whose outputs are received. The prediction synchronizes the three
/// streams after every step (t_str); a runtime that chains them with
/// events instead only removes waiting.
struct Step {
  uint64_t Send = 0, Kernel = 0, Receive = 0;
  bool operator==(const Step &O) const {
    return Send == O.Send && Kernel == O.Kernel && Receive == O.Receive;
  }
};

/// Empty when \p Steps sends, runs and receives each of \p Blocks blocks
/// exactly once, runs a block only after the step that sent it and
/// receives it only after the step that ran it; else what is wrong.
std::string checkSteps(const std::vector<Step> &Steps, uint64_t Blocks);

/// H() of (4.35): seconds to send \p Xs and receive \p Xr bytes at once
/// (one direction alone moves at its own rate), or L.Transfer when set.
double transferTime(double Xs, double Xr, const LinkRates &L);

/// Send everything, run every block in one launch, receive everything, one
/// after the other, with the copies' latency.
double unpipelinedTime(const Workload &W, const LinkRates &L);

/// The predicted time of \p Steps: the sum over steps of max(H(x_s, x_r)
/// + latency, kernel) + t_str ((4.36) and (4.52) are this sum).
double stepsTime(const std::vector<Step> &Steps, const Workload &W,
                 const LinkRates &L);
/// Each step's predicted time, max(H(x_s, x_r) + latency, kernel) +
/// t_str, in order: stepsTime() is their sum.
std::vector<double> stepTimes(const std::vector<Step> &Steps,
                              const Workload &W, const LinkRates &L);

struct Plan {
  /// Whether to pipeline; when not, Steps is empty and Why says why (the
  /// model refused, or the pipeline is not predicted to win).
  bool Pipelined = false;
  std::string Why;
  Case C;
  /// The base values used (a: send phase or the only series, b: receive
  /// phase), 0 when the case has none; the chunk count of (4.53) for DB+GH.
  double A = 0, B = 0, EqualChunks = 0;
  std::vector<Step> Steps;
  Totals T;
  double PipelinedSeconds = 0;   ///< stepsTime(Steps), when Pipelined
  double UnpipelinedSeconds = 0; ///< send all, run, receive all, latencies
  double BoundSeconds = 0;       ///< max(send, kernel, receive)
  std::vector<std::string> Notes;

  /// The kernel chunks in order (the steps' non-zero Kernel counts).
  std::vector<uint64_t> chunks() const;
  /// The predicted time of what the plan does: pipelined or not.
  double seconds() const {
    return Pipelined ? PipelinedSeconds : UnpipelinedSeconds;
  }
  /// One line for CLEAVE_LOG=plan: the case, the chunks, the predicted,
  /// unpipelined and bound times, or why not pipelined.
  std::string describe() const;
};

/// Classifies \p W and cuts it by its case; see the file comment.
Plan plan(const Workload &W, const LinkRates &L, const Options &O = {});

// The thesis's equations, for the plan and for tests. -------------------

/// (4.4) / (4.11): a = S_S T_k / D_s (KB+SH) or R_R T_k / D_r (KB+RH), the
/// largest base keeping each step's transfer under its kernel. Per block:
/// \p Rate * \p KernelPerBlock / \p BytesPerBlock.
double kernelBoundBase(double Rate, double KernelPerBlock,
                       double BytesPerBlock);

/// (4.19)-(4.20) with (4.17) corrected to a^(i-3): the largest a with
/// H(sigma a^2, rho) <= kappa a, where sigma and rho are the bytes sent and
/// received per block and kappa the kernel seconds per block; 0 when no a
/// qualifies.
double kernelBoundGeneralBase(double Sigma, double Rho, double Kappa,
                              const LinkRates &L);

/// Argmin of \p F over [Lo, Hi] by golden-section search, \p Iterations
/// shrinking steps (replaces the printed Algorithm 1).
double goldenSection(const std::function<double(double)> &F, double Lo,
                     double Hi, unsigned Iterations);

} // namespace tpsm
} // namespace rt
} // namespace cleave

#endif
