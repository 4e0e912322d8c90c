//===- AnalyzeTpsm.cpp - The TPSM class of a launch, data on the host -----===//
//
// Part of Cleave's driver (docs/analyze.md, "Transfer pipelining"). For one
// launch configuration: the bytes the GPU would receive from the host and
// send back (from the recorded address spans of the global loads and
// stores), then Luo's TPSM (cleave/rt/Tpsm.h) on the profile's host-link
// rates, pinned and pageable: the case, the chunks, and the pipelined time
// against send + kernel + receive and the bound max(send, kernel, receive).
//
//===----------------------------------------------------------------------===//
#include "AnalyzeData.h"

#include "cleave/rt/DeviceProfile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace llvm;

namespace cleave {
namespace analyze {

namespace {

namespace tpsm = rt::tpsm;

/// Inclusive byte ranges [first, last].
using Interval = std::pair<uint64_t, uint64_t>;

/// \p V sorted, with overlapping or touching ranges joined.
std::vector<Interval> merged(std::vector<Interval> V) {
  llvm::sort(V);
  std::vector<Interval> Out;
  for (Interval I : V) {
    if (!Out.empty() && I.first <= Out.back().second + 1) {
      Out.back().second = std::max(Out.back().second, I.second);
      continue;
    }
    Out.push_back(I);
  }
  return Out;
}

uint64_t length(const std::vector<Interval> &V) {
  uint64_t N = 0;
  for (Interval I : V)
    N += I.second - I.first + 1;
  return N;
}

/// The bytes in both \p A and \p B (each merged).
std::vector<Interval> intersect(const std::vector<Interval> &A,
                                const std::vector<Interval> &B) {
  std::vector<Interval> Out;
  size_t I = 0, J = 0;
  while (I < A.size() && J < B.size()) {
    uint64_t Lo = std::max(A[I].first, B[J].first);
    uint64_t Hi = std::min(A[I].second, B[J].second);
    if (Lo <= Hi)
      Out.push_back({Lo, Hi});
    if (A[I].second < B[J].second)
      ++I;
    else
      ++J;
  }
  return Out;
}

/// Whether a memory site moves host data in the direction asked: loads
/// (and atomics) need their bytes sent, stores (and atomics) received.
/// Private arrays (Local) live on the GPU alone.
bool moves(InstrClass C, bool Receive) {
  if (C == InstrClass::GlobalAtomic)
    return true;
  return C == (Receive ? InstrClass::GlobalStore : InstrClass::GlobalLoad);
}

/// One direction of \p L from its sampled blocks: each site spans, over
/// the launch, from its lowest to its highest address in any sampled block
/// (the first and last blocks are sampled, so an affine index spans its
/// array); the direction's bytes are the union of those spans, one copy
/// per disjoint range. The part every sampled block touches (a matrix all
/// blocks read) is fixed: it moves once, not with each block.
TransferBytes direction(const Analysis &A, const LaunchRecord &L,
                        bool Receive) {
  std::map<uint32_t, Interval> Launch;
  std::vector<std::vector<Interval>> PerBlock;
  for (const BlockRecord &B : L.Blocks) {
    std::vector<Interval> Mine;
    for (const WarpRecord &W : B.Warps)
      for (const WarpRecord::Mem &M : W.Mems) {
        const MemSite *MS = findMem(A, M.Site);
        if (!M.Requests || !MS || !moves(MS->Class, Receive))
          continue;
        Mine.push_back({M.Min, M.Max});
        auto [It, New] = Launch.try_emplace(M.Site, M.Min, M.Max);
        if (!New) {
          It->second.first = std::min(It->second.first, M.Min);
          It->second.second = std::max(It->second.second, M.Max);
        }
      }
    PerBlock.push_back(merged(std::move(Mine)));
  }
  std::vector<Interval> Spans;
  for (auto &[Site, I] : Launch)
    Spans.push_back(I);
  Spans = merged(std::move(Spans));
  TransferBytes T;
  T.Total = double(length(Spans));
  T.Buffers = unsigned(Spans.size());
  uint64_t Blocks = uint64_t(L.Grid[0]) * L.Grid[1] * L.Grid[2];
  if (PerBlock.size() >= 2 && Blocks >= 2) {
    std::vector<Interval> Common = PerBlock.front();
    for (size_t I = 1; I < PerBlock.size(); ++I)
      Common = intersect(Common, PerBlock[I]);
    T.Fixed = double(length(Common));
  }
  return T;
}

/// The plan for one kind of host memory. A plan the model refuses before
/// classifying (too few blocks, say) still gets its case and times when the
/// rates are known: the class does not depend on the chunking.
tpsm::Plan planFor(const tpsm::Workload &W, const tpsm::LinkRates &L) {
  tpsm::Plan P = tpsm::plan(W, L);
  if (!P.Pipelined && P.UnpipelinedSeconds == 0 && L.Missing.empty()) {
    P.T = tpsm::totals(W, L);
    P.C = tpsm::classify(P.T);
    P.UnpipelinedSeconds = tpsm::unpipelinedTime(W, L);
    P.BoundSeconds = std::max({P.T.Send, P.T.Kernel, P.T.Receive});
  }
  return P;
}

std::string ms(double S) { return formatv("{0:f3} ms", S * 1e3).str(); }

std::string byteText(double B) {
  if (B >= 1e9)
    return formatv("{0:f2} GB", B / 1e9).str();
  if (B >= 1e6)
    return formatv("{0:f2} MB", B / 1e6).str();
  if (B >= 1e3)
    return formatv("{0:f2} KB", B / 1e3).str();
  return formatv("{0:f0} B", B).str();
}

std::string directionText(const TransferBytes &T, uint64_t Blocks) {
  std::string S =
      byteText(T.Total) + " (" + byteText(T.perBlock(Blocks)) + " per block";
  if (T.Fixed > 0)
    S += " + " + byteText(T.Fixed) + " fixed";
  return S + ", " + std::to_string(T.Buffers) + " range(s))";
}

} // namespace

double TransferBytes::perBlock(uint64_t Blocks) const {
  return Blocks ? std::max(0.0, Total - Fixed) / double(Blocks) : 0;
}

TpsmReport planTransfers(const Analysis &A, const LaunchRecord &L,
                         const Summary &S, const model::Prediction &P,
                         const model::GpuParams &G, const rt::GpuProfile &Link,
                         const model::KernelResources &R, ModelKind Model) {
  TpsmReport T;
  T.Blocks = S.Stats.Blocks;
  T.Send = direction(A, L, false);
  T.Receive = direction(A, L, true);
  model::Occupancy Occ = model::occupancy(G, R, S.Stats.ThreadsPerBlock);
  T.WaveBlocks = tpsm::waveBlocks(G.Sms, Occ.BlocksPerSm);
  if (!Occ.BlocksPerSm) {
    T.Why = "no block fits on an SM: " + Occ.Error;
    return T;
  }
  if (!std::isfinite(P.Seconds)) {
    T.Why = "the model gives the kernel no finite time";
    return T;
  }
  tpsm::Workload W;
  W.Blocks = T.Blocks;
  W.Send = {T.Send.Fixed, T.Send.perBlock(T.Blocks)};
  W.Receive = {T.Receive.Fixed, T.Receive.perBlock(T.Blocks)};
  W.SendCopies = std::max(1u, T.Send.Buffers);
  W.ReceiveCopies = std::max(1u, T.Receive.Buffers);
  W.MinChunk = T.WaveBlocks;
  // The hopper model predicts any chunk of the launch; the paper model is
  // taken as Luo's TPSM takes it, proportional to the blocks.
  W.Kernel = Model == ModelKind::Hopper
                 ? tpsm::hopperKernelTime(G, S.Stats, R)
                 : tpsm::proportionalKernelTime(
                       T.Blocks ? P.Seconds / double(T.Blocks) : 0);
  for (auto [Name, M] : {std::pair("pinned", tpsm::HostMemory::Pinned),
                         std::pair("pageable", tpsm::HostMemory::Pageable)})
    T.Plans.push_back({Name, planFor(W, tpsm::linkRates(Link, M))});
  return T;
}

void printTpsm(raw_ostream &OS, const TpsmReport &T) {
  OS << "  data on the host: sends " << directionText(T.Send, T.Blocks)
     << ", receives " << directionText(T.Receive, T.Blocks) << "; a wave is "
     << T.WaveBlocks << " blocks\n";
  if (!T.Why.empty()) {
    OS << "  tpsm: not planned: " << T.Why << "\n";
    return;
  }
  for (const auto &[Memory, P] : T.Plans) {
    OS << "  tpsm, " << Memory << " host memory: ";
    if (P.UnpipelinedSeconds == 0) {
      OS << "not planned: " << P.Why << "\n";
      continue;
    }
    OS << tpsm::caseName(P.C) << " (send " << ms(P.T.Send) << ", kernel "
       << ms(P.T.Kernel) << ", receive " << ms(P.T.Receive) << ", both ways "
       << ms(P.T.Both) << ")";
    if (P.Pipelined) {
      std::vector<uint64_t> Cs = P.chunks();
      OS << "; " << Cs.size() << " chunk(s) of [";
      for (size_t I = 0; I < Cs.size(); ++I) {
        if (I == 8 && Cs.size() > 10) {
          OS << ", ...";
          I = Cs.size() - 2;
          continue;
        }
        OS << (I ? ", " : "") << Cs[I];
      }
      OS << "] blocks; pipelined " << ms(P.PipelinedSeconds);
    } else {
      OS << "; not pipelined: " << P.Why;
    }
    OS << "; send+kernel+receive " << ms(P.UnpipelinedSeconds) << ", bound "
       << ms(P.BoundSeconds);
    if (P.Pipelined && P.BoundSeconds > 0)
      OS << formatv(" ({0:f2}x the bound)",
                    P.PipelinedSeconds / P.BoundSeconds);
    OS << "\n";
    for (const std::string &N : P.Notes)
      OS << "    note: " << N << "\n";
  }
}

json::Value tpsmJson(const TpsmReport &T) {
  auto Dir = [&](const TransferBytes &D) {
    return json::Object{{"bytes", D.Total},
                        {"fixed_bytes", D.Fixed},
                        {"bytes_per_block", D.perBlock(T.Blocks)},
                        {"ranges", D.Buffers}};
  };
  json::Object O{{"send", Dir(T.Send)},
                 {"receive", Dir(T.Receive)},
                 {"wave_blocks", T.WaveBlocks}};
  if (!T.Why.empty())
    O["why"] = T.Why;
  for (const auto &[Memory, P] : T.Plans) {
    json::Object M;
    if (P.UnpipelinedSeconds > 0) {
      M["case"] = tpsm::caseName(P.C);
      M["send_seconds"] = P.T.Send;
      M["kernel_seconds"] = P.T.Kernel;
      M["receive_seconds"] = P.T.Receive;
      M["both_ways_seconds"] = P.T.Both;
      M["unpipelined_seconds"] = P.UnpipelinedSeconds;
      M["bound_seconds"] = P.BoundSeconds;
    }
    M["pipelined"] = P.Pipelined;
    if (P.Pipelined) {
      json::Array Cs;
      for (uint64_t C : P.chunks())
        Cs.push_back(C);
      M["chunks"] = std::move(Cs);
      M["pipelined_seconds"] = P.PipelinedSeconds;
    } else {
      M["why"] = P.Why;
    }
    json::Array Notes;
    for (const std::string &N : P.Notes)
      Notes.push_back(N);
    M["notes"] = std::move(Notes);
    O[Memory] = std::move(M);
  }
  return O;
}

} // namespace analyze
} // namespace cleave
