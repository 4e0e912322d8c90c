//===- LinkStates.h - Host-link states to measure ---------------*- C++ -*-===//
//
// Part of cleave-calibrate (no LLVM). Digest 000 §3.4: each GPU's host link
// is idle (N), sending to the GPU (S, host to device), receiving from it
// (R, device to host) or both (SR); a system state is one such state per
// GPU, and Luo's time-optimal transfer LP needs the per-GPU send and receive
// bandwidth in each. With n GPUs there are 4^n states; which are measured:
//
//   * every GPU alone in S, R and SR;
//   * all GPUs in S, all in R, all in SR;
//   * with exactly 2 GPUs, every combination (15 non-idle states, ordered:
//     the two links need not be symmetric);
//   * in the full (non-quick) mode with 3 to 8 GPUs, one representative of
//     each class of states equal up to a permutation of the GPUs (34 for 4
//     GPUs, Table A.4; 164 for 8, where 4^8 states could not all be
//     measured), its SR GPUs first, then S, then R, then the idle ones: the
//     runtime's planner (cleave/rt/LinkStates.h) fills every other state of
//     the class from it; with more GPUs, the k-GPU scaling of S, R and SR
//     (GPUs 0..k-1 busy) instead.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_CALIBRATE_LINKSTATES_H
#define CLEAVE_CALIBRATE_LINKSTATES_H

#include <string>
#include <vector>

namespace cleave {
namespace calibrate {

enum class LinkState { N, S, R, SR };

/// The most GPUs whose permutation classes the full mode measures.
constexpr unsigned MaxClassGpus = 8;

/// "N", "S", "R", "SR".
const char *linkStateName(LinkState S);
inline bool sends(LinkState S) { return S == LinkState::S || S == LinkState::SR; }
inline bool receives(LinkState S) {
  return S == LinkState::R || S == LinkState::SR;
}

/// One system state: the state of each GPU, in the order of the profiled
/// GPUs.
using SystemState = std::vector<LinkState>;

/// "S/R" (GPU 0 sends, GPU 1 receives): the names of Table 4.2's cells.
std::string systemStateName(const SystemState &S);

/// The states to measure for \p NumGpus GPUs (see the file comment), each
/// once, none all idle, in a stable order.
std::vector<SystemState> statesToMeasure(unsigned NumGpus, bool Quick);

} // namespace calibrate
} // namespace cleave

#endif
