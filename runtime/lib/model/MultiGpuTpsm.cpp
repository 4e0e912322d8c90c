//===- MultiGpuTpsm.cpp - TPSM over several GPUs sharing host links -------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/MultiGpuTpsm.h.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/MultiGpuTpsm.h"

#include "cleave/rt/DeviceProfile.h"
#include "cleave/rt/SmallLp.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cleave {
namespace rt {
namespace tpsm {

namespace {

void missing(LinkRates &L, const std::string &What) {
  L.Missing += (L.Missing.empty() ? "" : ", ") + What;
}

/// One GPU's mean rates (GB/s) in the state where every GPU is in \p Link.
bool allAlike(const links::StateTable &T, links::Link Link, links::Rates &Out) {
  std::vector<links::Rates> R;
  if (!T.rates(links::SystemState(T.gpus(), Link), R))
    return false;
  Out = {};
  for (const links::Rates &X : R) {
    Out.Send += X.Send / double(R.size());
    Out.Receive += X.Receive / double(R.size());
  }
  return true;
}

std::string ms(double Seconds) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.3f ms", Seconds * 1e3);
  return Buf;
}

} // namespace

GpuGroup symmetricGroup(const DeviceProfile &P,
                        const std::vector<int> &Ordinals) {
  GpuGroup G;
  G.Ordinals = Ordinals;
  LinkRates &L = G.PerGpu;
  if (Ordinals.empty()) {
    missing(L, "GPUs");
    return G;
  }
  // Latencies and t_str: the worst GPU of the group (all step together).
  for (int O : Ordinals) {
    const GpuProfile *Gp = P.gpu(O);
    if (!Gp) {
      missing(L, "GPU " + std::to_string(O));
      continue;
    }
    LinkRates One = linkRates(*Gp, HostMemory::Pinned);
    if (!One.Missing.empty())
      missing(L, "gpu" + std::to_string(O) + ": " + One.Missing);
    L.SendLatency = std::max(L.SendLatency, One.SendLatency);
    L.ReceiveLatency = std::max(L.ReceiveLatency, One.ReceiveLatency);
    L.StepSync = std::max(L.StepSync, One.StepSync);
    for (const std::string &N : One.Notes)
      if (std::find(L.Notes.begin(), L.Notes.end(), N) == L.Notes.end())
        L.Notes.push_back(N);
  }
  G.Table = links::tableFromProfile(P, Ordinals);
  links::Rates S, R, SR;
  unsigned N = unsigned(Ordinals.size());
  std::string All = N == 1 ? "" : "all-";
  if (!allAlike(G.Table, links::Link::S, S))
    missing(L, "the host-link state " + All + "S");
  if (!allAlike(G.Table, links::Link::R, R))
    missing(L, "the host-link state " + All + "R");
  if (!allAlike(G.Table, links::Link::SR, SR))
    missing(L, "the host-link state " + All + "SR");
  std::vector<std::string> Classes = G.Table.missingClasses();
  if (!Classes.empty() && G.Table.gpus())
    L.Notes.push_back(std::to_string(Classes.size()) +
                      " classes of host-link states not measured (" +
                      Classes.front() + ", ...): G() over the others");
  // §3.4.2's substitutions; a direction is no faster for sharing the link.
  L.SendAlone = S.Send * 1e9;
  L.ReceiveAlone = R.Receive * 1e9;
  L.SendBoth = std::min(SR.Send, S.Send) * 1e9;
  L.ReceiveBoth = std::min(SR.Receive, R.Receive) * 1e9;
  G.G = links::symmetricLinks(links::statePoints(G.Table));
  if (L.Missing.empty()) {
    links::SymmetricLinks Hull = G.G;
    L.Transfer = [Hull, N](double Xs, double Xr) {
      return Hull.seconds(N * Xs / 1e9, N * Xr / 1e9);
    };
  }
  return G;
}

MultiPlan planSymmetric(const Workload &W, const GpuGroup &G,
                        const Options &O) {
  MultiPlan M;
  M.Gpus = unsigned(G.Ordinals.size());
  if (!M.Gpus) {
    M.PerGpu.Why = "no GPUs";
    return M;
  }
  Workload Share = W;
  Share.Blocks = (W.Blocks + M.Gpus - 1) / M.Gpus;
  M.BlocksPerGpu = Share.Blocks;
  M.PerGpu = plan(Share, G.PerGpu, O);
  if (!G.PerGpu.Missing.empty() || !W.Kernel)
    return M;
  double Ds = Share.Send.total(Share.Blocks) * M.Gpus / 1e9;
  double Dr = Share.Receive.total(Share.Blocks) * M.Gpus / 1e9;
  M.LinkBoundSeconds = std::max(Share.Blocks ? W.Kernel(Share.Blocks) : 0.0,
                                G.G.seconds(Ds, Dr));
  return M;
}

MultiPlan planHostMode(const DeviceProfile &P, const std::vector<int> &Ordinals,
                       const Workload &W, const Options &O) {
  return planSymmetric(W, symmetricGroup(P, Ordinals), O);
}

std::string MultiPlan::describe() const {
  std::string S = "tpsm over " + std::to_string(Gpus) + " GPUs, " +
                  std::to_string(BlocksPerGpu) + " blocks each";
  if (LinkBoundSeconds > 0)
    S += ", link bound " + ms(LinkBoundSeconds);
  return S + ": " + PerGpu.describe();
}

// Two-layer partitioning. ----------------------------------------------------

namespace {

/// Whole blocks from shares of \p Total (largest remainders first).
std::vector<uint64_t> wholeBlocks(const std::vector<double> &Frac,
                                  uint64_t Total) {
  std::vector<uint64_t> Out(Frac.size(), 0);
  std::vector<std::pair<double, size_t>> Rem;
  uint64_t Given = 0;
  for (size_t I = 0; I < Frac.size(); ++I) {
    double X = std::max(Frac[I], 0.0) * double(Total);
    Out[I] = uint64_t(std::floor(X));
    Given += Out[I];
    Rem.push_back({X - std::floor(X), I});
  }
  std::sort(Rem.begin(), Rem.end(), [](auto &A, auto &B) {
    return A.first != B.first ? A.first > B.first : A.second < B.second;
  });
  for (size_t K = 0; Given < Total && !Rem.empty(); ++K, ++Given)
    ++Out[Rem[K % Rem.size()].second];
  return Out;
}

/// The kernel and transfer seconds of a whole-block split.
void timeSplit(const std::vector<Worker> &Workers, double SendGB,
               double ReceiveGB,
               const std::vector<links::MeasuredState> &States, LayerSplit &S) {
  S.KernelSeconds = 0;
  size_t Gpus = States.empty() ? 0 : States.front().PerGpu.size();
  std::vector<double> Xs(Gpus, 0), Xr(Gpus, 0);
  for (size_t I = 0; I < Workers.size(); ++I) {
    S.KernelSeconds = std::max(S.KernelSeconds, Workers[I].SecondsPerBlock *
                                                    double(S.Blocks[I]));
    int G = Workers[I].TableGpu;
    if (G >= 0 && size_t(G) < Gpus) {
      Xs[G] += SendGB * double(S.Blocks[I]);
      Xr[G] += ReceiveGB * double(S.Blocks[I]);
    }
  }
  links::Schedule T = links::optimalSchedule(States, Xs, Xr);
  S.Feasible = T.Feasible;
  S.TransferSeconds = T.Seconds;
}

} // namespace

LayerSplit splitLayer(const std::vector<Worker> &Workers, uint64_t Blocks,
                      double SendGB, double ReceiveGB,
                      const std::vector<links::MeasuredState> &States) {
  LayerSplit Out;
  size_t W = Workers.size(), Q = States.size();
  if (!W || !Blocks)
    return Out;
  // Time in units of the fastest device's kernel on the whole layer, the
  // shares as fractions: every coefficient near 1 for the solver.
  double Ref = HUGE_VAL;
  for (const Worker &X : Workers)
    if (X.SecondsPerBlock > 0)
      Ref = std::min(Ref, X.SecondsPerBlock * double(Blocks));
  if (!std::isfinite(Ref))
    return Out;
  // Variables: f_0..f_{W-1}, T_0..T_{Q-1}, tau.
  size_t Tau = W + Q;
  lp::Problem P;
  P.Cost.assign(Tau + 1, 0.0);
  P.Cost[Tau] = 1;
  lp::Row Sum;
  Sum.A.assign(Tau + 1, 0.0);
  std::fill(Sum.A.begin(), Sum.A.begin() + W, 1.0);
  Sum.S = lp::Sense::Equal;
  Sum.B = 1;
  P.Rows.push_back(Sum);
  for (size_t I = 0; I < W; ++I) {
    lp::Row K; // kernel_i <= tau
    K.A.assign(Tau + 1, 0.0);
    K.A[I] = Workers[I].SecondsPerBlock * double(Blocks) / Ref;
    K.A[Tau] = -1;
    P.Rows.push_back(K);
  }
  lp::Row Link; // the states' times <= tau
  Link.A.assign(Tau + 1, 0.0);
  std::fill(Link.A.begin() + W, Link.A.begin() + Tau, 1.0);
  Link.A[Tau] = -1;
  P.Rows.push_back(Link);
  for (size_t I = 0; I < W; ++I) {
    int G = Workers[I].TableGpu;
    if (G < 0)
      continue;
    for (bool Send : {true, false}) {
      double GB = (Send ? SendGB : ReceiveGB) * double(Blocks) / Ref;
      if (GB <= 0)
        continue;
      lp::Row D; // the share's bytes <= what the states move for GPU G
      D.A.assign(Tau + 1, 0.0);
      D.A[I] = GB;
      for (size_t K = 0; K < Q; ++K) {
        const links::Rates &R = States[K].PerGpu[size_t(G)];
        D.A[W + K] = -(Send ? R.Send : R.Receive);
      }
      P.Rows.push_back(D);
    }
  }
  lp::Solution S = lp::minimize(P);
  if (S.St != lp::Status::Optimal)
    return Out;
  std::vector<double> Frac(S.X.begin(), S.X.begin() + W);
  Out.Blocks = wholeBlocks(Frac, Blocks);
  timeSplit(Workers, SendGB, ReceiveGB, States, Out);
  return Out;
}

TwoLayerPlan planTwoLayer(const std::vector<Worker> &Workers, uint64_t Blocks,
                          double SendGB, double ReceiveGB,
                          const std::vector<links::MeasuredState> &States,
                          const TwoLayerOptions &O) {
  TwoLayerPlan P;
  LayerSplit Whole = splitLayer(Workers, Blocks, SendGB, ReceiveGB, States);
  if (!Whole.Feasible)
    return P;
  uint64_t MaxByBlocks = Blocks / std::max<uint64_t>(O.MinLayerBlocks, 1);
  double Want = std::round(Whole.seconds() / O.LayerSeconds);
  uint64_t L = uint64_t(std::clamp(Want, 1.0, double(O.MaxLayers)));
  L = std::max<uint64_t>(1, std::min(L, MaxByBlocks));
  for (uint64_t I = 0; I < L; ++I)
    P.Layers.push_back(Blocks / L + (I < Blocks % L ? 1 : 0));
  // At most two layer sizes: each is split once.
  P.First = splitLayer(Workers, P.Layers.front(), SendGB, ReceiveGB, States);
  LayerSplit Small =
      splitLayer(Workers, P.Layers.back(), SendGB, ReceiveGB, States);
  for (uint64_t N : P.Layers)
    P.PredictedSeconds +=
        N == P.Layers.front() ? P.First.seconds() : Small.seconds();
  return P;
}

std::string TwoLayerPlan::describe(const std::vector<Worker> &Workers) const {
  if (Layers.empty())
    return "two-layer: no feasible split";
  std::string S = "two-layer: " + std::to_string(Layers.size()) +
                  " layers of " + std::to_string(Layers.front()) +
                  " blocks, first split";
  for (size_t I = 0; I < Workers.size() && I < First.Blocks.size(); ++I)
    S += " " + Workers[I].Name + " " + std::to_string(First.Blocks[I]);
  return S + "; layer kernel " + ms(First.KernelSeconds) + ", transfer " +
         ms(First.TransferSeconds) + "; predicted " + ms(PredictedSeconds);
}

void rebalance(std::vector<Worker> &Workers, const LayerSplit &Split,
               const std::vector<double> &Measured) {
  for (size_t I = 0; I < Workers.size(); ++I)
    if (I < Split.Blocks.size() && I < Measured.size() && Split.Blocks[I] &&
        Measured[I] > 0)
      Workers[I].SecondsPerBlock = Measured[I] / double(Split.Blocks[I]);
}

} // namespace tpsm
} // namespace rt
} // namespace cleave
