//===- ChunkPlan.cpp - How many blocks each pipelined chunk gets ----------===//
//
// Part of Cleave's runtime (no LLVM). See ChunkPlan.h.
//
//===----------------------------------------------------------------------===//

#include "ChunkPlan.h"

#include <algorithm>
#include <cstdio>

namespace cleave {
namespace rt {

uint64_t waveBlocks(unsigned SMs, uint64_t ThreadsPerBlock) {
  uint64_t PerSM =
      std::min<uint64_t>(32, 2048 / std::max<uint64_t>(ThreadsPerBlock, 1));
  return std::max<uint64_t>(1, uint64_t(SMs) * std::max<uint64_t>(PerSM, 1));
}

std::vector<uint64_t> provisionalChunks(const ChunkQuery &Q) {
  if (Q.Blocks == 0)
    return {};
  uint64_t Align = std::max<uint64_t>(Q.Align, 1);
  uint64_t Eighth =
      (Q.Blocks + MaxProvisionalChunks - 1) / MaxProvisionalChunks;
  uint64_t Size =
      std::max<uint64_t>(std::max<uint64_t>(Q.WaveBlocks, 1), Eighth);
  Size = (Size + Align - 1) / Align * Align;
  std::vector<uint64_t> Out;
  for (uint64_t Done = 0; Done < Q.Blocks;) {
    uint64_t N = std::min(Size, Q.Blocks - Done);
    // A remainder smaller than a wave joins the chunk before it.
    if (!Out.empty() && N < Q.WaveBlocks && N < Size) {
      Out.back() += N;
      break;
    }
    Out.push_back(N);
    Done += N;
  }
  return Out;
}

std::vector<uint64_t> alignChunks(const std::vector<uint64_t> &Sizes,
                                  uint64_t Align) {
  Align = std::max<uint64_t>(Align, 1);
  uint64_t Total = 0;
  for (uint64_t S : Sizes)
    Total += S;
  std::vector<uint64_t> Out;
  uint64_t Prev = 0, End = 0;
  for (size_t I = 0; I < Sizes.size(); ++I) {
    End += Sizes[I];
    uint64_t Cut = I + 1 == Sizes.size()
                       ? Total
                       : std::min(Total, (End + Align / 2) / Align * Align);
    if (Cut > Prev) {
      Out.push_back(Cut - Prev);
      Prev = Cut;
    }
  }
  return Out;
}

namespace {

/// Why the model cannot be asked, or empty.
std::string whyProvisional(const ChunkQuery &Q) {
  if (!Q.Links)
    return "no device profile for this GPU";
  if (!Q.Links->Missing.empty())
    return "the device profile lacks " + Q.Links->Missing;
  if (!Q.Kernel)
    return "no kernel time";
  return "";
}

} // namespace

ChunkPlan planChunks(const ChunkQuery &Q) {
  ChunkPlan P;
  P.KernelSource = Q.KernelSource;
  P.Memory = Q.Memory;
  if (Q.Blocks == 0)
    return P;
  P.Why = whyProvisional(Q);
  if (!P.Why.empty()) {
    P.Sizes = provisionalChunks(Q);
    return P;
  }
  uint64_t Align = std::max<uint64_t>(Q.Align, 1);
  tpsm::Workload W;
  W.Blocks = Q.Blocks;
  W.Send = Q.Send;
  W.Receive = Q.Receive;
  W.SendCopies = std::max(1u, Q.SendCopies);
  W.ReceiveCopies = std::max(1u, Q.ReceiveCopies);
  W.Kernel = Q.Kernel;
  // One wave, in whole slabs: the model's chunks are whole multiples of it.
  W.MinChunk = (std::max<uint64_t>(Q.WaveBlocks, 1) + Align - 1) / Align *
               Align;
  P.Model = tpsm::plan(W, *Q.Links);
  if (!P.Model->Pipelined) {
    P.Sizes = {Q.Blocks};
    P.Why = P.Model->Why;
    return P;
  }
  P.FromModel = true;
  P.StepSeconds = tpsm::stepTimes(P.Model->Steps, W, *Q.Links);
  P.Sizes = alignChunks(P.Model->chunks(), Align);
  return P;
}

std::string ChunkPlan::describe() const {
  const char *Mem = Memory == tpsm::HostMemory::Pinned ? "pinned" : "pageable";
  if (!Model)
    return "provisional chunks (max(one wave, an eighth of the blocks)), "
           "not the TPSM model: " +
           Why;
  std::string S = Model->describe();
  S += std::string("; ") + Mem + " host link rates; kernel time " +
       KernelSource;
  if (!FromModel)
    return S;
  S += "; predicted per step [";
  char Buf[32];
  for (size_t I = 0; I < StepSeconds.size(); ++I) {
    if (I == 8 && StepSeconds.size() > 10) {
      S += ", ...";
      I = StepSeconds.size() - 2;
      continue;
    }
    std::snprintf(Buf, sizeof(Buf), "%s%.3f", I ? ", " : "",
                  StepSeconds[I] * 1e3);
    S += Buf;
  }
  S += "] ms";
  return S;
}

} // namespace rt
} // namespace cleave
