//===- LinkStates.cpp - Host-link states to measure -----------------------===//
//
// Part of cleave-calibrate (no LLVM). See LinkStates.h.
//
//===----------------------------------------------------------------------===//
#include "LinkStates.h"

#include <algorithm>

namespace cleave {
namespace calibrate {

const char *linkStateName(LinkState S) {
  switch (S) {
  case LinkState::N:
    return "N";
  case LinkState::S:
    return "S";
  case LinkState::R:
    return "R";
  case LinkState::SR:
    return "SR";
  }
  return "?";
}

std::string systemStateName(const SystemState &S) {
  std::string Name;
  for (size_t I = 0; I < S.size(); ++I) {
    if (I)
      Name += '/';
    Name += linkStateName(S[I]);
  }
  return Name;
}

static void addUnique(std::vector<SystemState> &Out, const SystemState &S) {
  bool AllIdle = std::all_of(S.begin(), S.end(),
                             [](LinkState L) { return L == LinkState::N; });
  if (AllIdle || std::find(Out.begin(), Out.end(), S) != Out.end())
    return;
  Out.push_back(S);
}

std::vector<SystemState> statesToMeasure(unsigned NumGpus, bool Quick) {
  std::vector<SystemState> Out;
  if (NumGpus == 0)
    return Out;
  const LinkState Busy[] = {LinkState::S, LinkState::R, LinkState::SR};
  // Each GPU alone.
  for (unsigned G = 0; G < NumGpus; ++G)
    for (LinkState L : Busy) {
      SystemState S(NumGpus, LinkState::N);
      S[G] = L;
      addUnique(Out, S);
    }
  // All GPUs alike.
  for (LinkState L : Busy)
    addUnique(Out, SystemState(NumGpus, L));
  if (NumGpus == 2) {
    const LinkState All[] = {LinkState::N, LinkState::S, LinkState::R,
                             LinkState::SR};
    for (LinkState A : All)
      for (LinkState B : All)
        addUnique(Out, {A, B});
    return Out;
  }
  if (Quick || NumGpus < 3)
    return Out;
  if (NumGpus <= MaxClassGpus) {
    // One representative per permutation class: counts of SR, S, R and N
    // GPUs, laid out in that order over GPUs 0..n-1 (Table A.4's rows).
    for (unsigned NSR = 0; NSR <= NumGpus; ++NSR)
      for (unsigned NS = 0; NSR + NS <= NumGpus; ++NS)
        for (unsigned NR = 0; NSR + NS + NR <= NumGpus; ++NR) {
          SystemState S;
          S.insert(S.end(), NSR, LinkState::SR);
          S.insert(S.end(), NS, LinkState::S);
          S.insert(S.end(), NR, LinkState::R);
          S.resize(NumGpus, LinkState::N);
          addUnique(Out, S);
        }
    return Out;
  }
  // Many GPUs: how the aggregate grows with the number of busy GPUs.
  for (LinkState L : Busy)
    for (unsigned K = 2; K < NumGpus; ++K) {
      SystemState S(NumGpus, LinkState::N);
      std::fill(S.begin(), S.begin() + K, L);
      addUnique(Out, S);
    }
  return Out;
}

} // namespace calibrate
} // namespace cleave
