//===- MultiGpuTpsm.h - TPSM over several GPUs sharing host links -*- C++ -*-=//
//
// Part of Cleave's runtime (no LLVM). Luo's TPSM when several GPUs copy
// through the same host links (digest 000 §3.4-3.5), on the host-link
// states of LinkStates.h:
//
//   * symmetric GPUs (§3.4.2): each GPU takes 1/n of the blocks and runs
//     the single-GPU plan of Tpsm.h on its share, all GPUs step by step
//     together; S_S, R_R, S_SR and R_SR are one GPU's rates in the states
//     where all GPUs send, receive or do both, and a step's transfer is
//     G(n x_s, n x_r) in place of H(x_s, x_r) ((4.104); the searched
//     bases then minimize the same G-based time, (4.110), (4.112); the
//     equal chunk count is (4.127)). The link bound is max(T_k / n,
//     G(D_s, D_r));
//   * unequal devices, the CPU among them (§3.5): two-layer partitioning.
//     The blocks are cut into layers of about 10-50 ms; each layer is
//     split among the devices so that the slowest of their kernels and
//     the time-optimal transfer of the GPUs' shares (the LP over the link
//     states) is least (an LP too: for two devices and no transfer it is
//     the thesis's b / (a + b)); measured kernel times re-split the next
//     layer. The CPU computes on the host copy and moves nothing.
//
// The engine's pipeliner plans one GPU at a time (Tpsm.h); these are the
// queries a multi-GPU host-mode launch asks (docs/models.md, "Multi-GPU
// transfer planner").
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_MULTIGPUTPSM_H
#define CLEAVE_RT_MULTIGPUTPSM_H

#include "cleave/rt/LinkStates.h"
#include "cleave/rt/Tpsm.h"

namespace cleave {
namespace rt {

struct DeviceProfile;

namespace tpsm {

/// n GPUs of one profile taken as symmetric.
struct GpuGroup {
  std::vector<int> Ordinals;
  links::StateTable Table;
  /// G() over the states' total rates (GB, GB/s).
  links::SymmetricLinks G;
  /// One GPU's rates among the n (pinned memory: the states are measured
  /// with it), with Transfer = G(n x_s, n x_r).
  LinkRates PerGpu;
};

/// The group of the GPUs \p Ordinals of \p P. PerGpu.Missing names what
/// the profile lacks: the all-S, all-R or all-SR state, or what
/// linkRates() misses for a GPU; classes of states it did not measure are
/// a note (G is then taken over the measured ones only).
GpuGroup symmetricGroup(const DeviceProfile &P,
                        const std::vector<int> &Ordinals);

/// A symmetric plan: each GPU's plan for its share and the group's times.
struct MultiPlan {
  unsigned Gpus = 0;
  uint64_t BlocksPerGpu = 0; ///< the largest share
  Plan PerGpu;               ///< what each GPU runs; Why when refused
  /// max(T_k(share), G(D_s, D_r)): no schedule of these transfers and
  /// kernels can be shorter on these links.
  double LinkBoundSeconds = 0;
  double seconds() const { return PerGpu.seconds(); }
  /// One line for CLEAVE_LOG=plan.
  std::string describe() const;
};

/// Splits the launch \p W (all its blocks, one GPU's kernel time) evenly
/// over \p G's GPUs and plans one share; each GPU needs W's fixed bytes.
MultiPlan planSymmetric(const Workload &W, const GpuGroup &G,
                        const Options &O = {});

/// The query for a host-mode launch over the GPUs \p Ordinals of \p P.
MultiPlan planHostMode(const DeviceProfile &P, const std::vector<int> &Ordinals,
                       const Workload &W, const Options &O = {});

// Two-layer partitioning (§3.5). -------------------------------------------

/// A device of an unequal group.
struct Worker {
  std::string Name;
  /// Its GPU's position in the state table; -1 for the CPU (no transfer).
  int TableGpu = -1;
  /// Kernel seconds per block: predicted for the first layer, measured
  /// after it (rebalance()).
  double SecondsPerBlock = 0;
};

/// One layer's split.
struct LayerSplit {
  bool Feasible = false;
  std::vector<uint64_t> Blocks; ///< per worker, summing to the layer
  double KernelSeconds = 0;     ///< the slowest worker's kernel
  double TransferSeconds = 0;   ///< the GPUs' shares' optimal transfer
  double seconds() const { return std::max(KernelSeconds, TransferSeconds); }
};

/// Splits \p Blocks among \p Workers to minimize max(slowest kernel,
/// transfer), each block sending \p SendGB and receiving \p ReceiveGB
/// through the states \p States (GPU i of a state is TableGpu i).
LayerSplit splitLayer(const std::vector<Worker> &Workers, uint64_t Blocks,
                      double SendGB, double ReceiveGB,
                      const std::vector<links::MeasuredState> &States);

struct TwoLayerOptions {
  double LayerSeconds = 0.03; ///< §3.5: layers of about 10-50 ms
  unsigned MaxLayers = 200;
  uint64_t MinLayerBlocks = 1;
};

struct TwoLayerPlan {
  std::vector<uint64_t> Layers; ///< blocks per layer, in order
  LayerSplit First;             ///< the first layer's split
  double PredictedSeconds = 0;  ///< the layers one after the other
  std::string describe(const std::vector<Worker> &Workers) const;
};

TwoLayerPlan planTwoLayer(const std::vector<Worker> &Workers, uint64_t Blocks,
                          double SendGB, double ReceiveGB,
                          const std::vector<links::MeasuredState> &States,
                          const TwoLayerOptions &O = {});

/// After a layer ran with \p Split, each worker's measured kernel seconds
/// \p Measured become its seconds per block (those that ran nothing keep
/// theirs): the next layer's split follows the measurement.
void rebalance(std::vector<Worker> &Workers, const LayerSplit &Split,
               const std::vector<double> &Measured);

} // namespace tpsm
} // namespace rt
} // namespace cleave

#endif
