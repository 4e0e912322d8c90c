//===- Tpsm.cpp - The six cases of Luo's single-GPU TPSM ------------------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/Tpsm.h. Each case turns
// the thesis's chunk sizes (digest 000 §3.3, in bytes of a chunk) into block
// counts: with sigma and rho the bytes a block sends and receives and kappa
// the kernel seconds per block (T_k / N), ds_min = sigma w and dr_min = rho
// w for the smallest chunk of w blocks, so every base value is a ratio of
// per-block times and the series are of blocks, rounded to whole waves.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Tpsm.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cleave {
namespace rt {
namespace tpsm {

namespace {

/// A base below this is no series at all (the chunks would not grow).
constexpr double MinBase = 1.001;

/// How chunks are cut: whole waves, never under the smallest chunk.
struct Grain {
  uint64_t Min;  ///< the smallest chunk (whole waves)
  uint64_t Wave; ///< one wave of the GPU
};

/// What every case needs to size its chunks.
struct Sizing {
  const Workload &W;
  const LinkRates &L;
  const Options &O;
  uint64_t N;
  Grain G;
  double Sigma, Rho; ///< bytes per block, each way
  double Kappa;      ///< kernel seconds per block
  Totals T;
};

/// \p Blocks rounded to whole waves, at least the smallest chunk.
uint64_t roundChunk(double Blocks, Grain G) {
  double Waves = std::round(Blocks / double(G.Wave));
  return std::max(G.Min, uint64_t(Waves) * G.Wave);
}

/// Chunks of First, First Ratio, First Ratio^2, ... blocks (rounded) until
/// Total is covered; the last takes what is left, and a tail smaller than
/// Min joins the chunk before it.
std::vector<uint64_t> growing(uint64_t Total, double First, double Ratio,
                              Grain G) {
  std::vector<uint64_t> Out;
  uint64_t Left = Total;
  double Size = First;
  while (Left) {
    uint64_t C = Size >= double(Left) ? Left : roundChunk(Size, G);
    C = std::min(C, Left);
    if (Left - C < G.Min)
      C = Left;
    Out.push_back(C);
    Left -= C;
    Size *= Ratio;
  }
  return Out;
}

/// growing() backwards: the last chunk is Last blocks, each one before it
/// Ratio times larger, the first takes what is left.
std::vector<uint64_t> shrinking(uint64_t Total, double Last, double Ratio,
                                Grain G) {
  std::vector<uint64_t> Out = growing(Total, Last, Ratio, G);
  std::reverse(Out.begin(), Out.end());
  return Out;
}

/// \p M chunks of (nearly) equal whole waves.
std::vector<uint64_t> equal(uint64_t Total, double M, Grain G) {
  M = std::max(1.0, M);
  return growing(Total, std::ceil(double(Total) / M), 1.0, G);
}

/// §3.2's skeleton: step j sends chunk j, runs chunk j-1 and receives
/// chunk j-2. KB+RH sends everything in the first step, KB+SH receives
/// everything in the last.
std::vector<Step> lockstep(const std::vector<uint64_t> &Chunks,
                           bool SendAllFirst, bool ReceiveAllLast) {
  size_t M = Chunks.size();
  uint64_t N = 0;
  for (uint64_t C : Chunks)
    N += C;
  std::vector<Step> Steps(M + 2);
  for (size_t J = 0; J < M + 2; ++J) {
    Step &S = Steps[J];
    if (J < M)
      S.Send = SendAllFirst ? (J == 0 ? N : 0) : Chunks[J];
    if (J >= 1 && J <= M)
      S.Kernel = Chunks[J - 1];
    if (J >= 2)
      S.Receive = ReceiveAllLast ? (J == M + 1 ? N : 0) : Chunks[J - 2];
  }
  return Steps;
}

/// The three phases of KB+GH and DB+RH (§3.3): \p SendChunks in lockstep;
/// one middle step that sends all the rest, runs \p MidKernel blocks of
/// the last chunk sent and receives the chunk before it; then steps that
/// run the remaining blocks in the chunks \p Tail returns for them (given
/// the remaining count and the middle step's kernel blocks) and receive
/// each one a step later.
std::vector<Step> threePhase(
    uint64_t N, const std::vector<uint64_t> &SendChunks, uint64_t MidKernel,
    const std::function<std::vector<uint64_t>(uint64_t, uint64_t)> &Tail) {
  std::vector<Step> Steps = lockstep(SendChunks, false, false);
  size_t P = SendChunks.size();
  Steps.resize(P); // the lockstep's last two steps are the middle's work
  uint64_t Sent = 0;
  for (uint64_t C : SendChunks)
    Sent += C;
  Step Mid;
  Mid.Send = N - Sent;
  Mid.Kernel = P ? std::min(MidKernel, SendChunks[P - 1]) : 0;
  Mid.Receive = P >= 2 ? SendChunks[P - 2] : 0;
  Steps.push_back(Mid);
  uint64_t Run = Sent - (P ? SendChunks[P - 1] : 0) + Mid.Kernel;
  std::vector<uint64_t> Rest =
      N > Run ? Tail(N - Run, Mid.Kernel) : std::vector<uint64_t>();
  uint64_t Prev = Mid.Kernel;
  for (uint64_t C : Rest) {
    Steps.push_back({0, C, Prev});
    Prev = C;
  }
  Steps.push_back({0, 0, Prev});
  // A step with nothing to do would only cost its synchronization.
  Steps.erase(std::remove(Steps.begin(), Steps.end(), Step()), Steps.end());
  return Steps;
}

/// The middle step's kernel blocks: as many as its transfer (sending the
/// rest, receiving the chunk before the last) takes time for, in whole
/// waves, at most the last chunk sent ("kernel chunk = tcom_p2 D_s / T_k",
/// with tcom_p2 = H() in place of the printed (4.24)).
uint64_t middleKernel(const Sizing &Z, const std::vector<uint64_t> &Chunks) {
  size_t P = Chunks.size();
  if (!P)
    return 0;
  uint64_t Sent = 0;
  for (uint64_t C : Chunks)
    Sent += C;
  double Ds = Z.Sigma * double(Z.N - Sent);
  double Dr = P >= 2 ? Z.Rho * double(Chunks[P - 2]) : 0;
  double Mid = transferTime(Ds, Dr, Z.L);
  uint64_t Avail = Chunks[P - 1];
  if (Z.Kappa <= 0)
    return Avail;
  double Blocks =
      std::round(Mid / Z.Kappa / double(Z.G.Wave)) * double(Z.G.Wave);
  uint64_t K = uint64_t(std::min(Blocks, double(Avail)));
  return Avail - K < Z.G.Min ? Avail : K;
}

/// The send phase of the three-phase cases: chunks growing by \p A from the
/// smallest as long as they fit in the range ((4.21)'s P chunks). What is
/// left is the middle step's to send; less than the smallest chunk joins
/// the last chunk instead.
std::vector<uint64_t> sendPhase(const Sizing &Z, double A) {
  std::vector<uint64_t> Out;
  uint64_t Sent = 0;
  for (double Size = double(Z.G.Min);; Size *= A) {
    uint64_t C = roundChunk(Size, Z.G);
    if (Size > double(Z.N) || Sent + C > Z.N)
      break;
    Out.push_back(C);
    Sent += C;
  }
  if (!Out.empty() && Z.N - Sent < Z.G.Min)
    Out.back() += Z.N - Sent;
  return Out;
}

// The six cases. Each returns the steps and records its base values. ------

/// KB+SH: chunks grow by a = S_S T_k / D_s (4.4); all output comes back at
/// the end.
std::vector<Step> kernelSendHeavy(const Sizing &Z, Plan &P) {
  P.A = kernelBoundBase(Z.L.SendAlone, Z.Kappa, Z.Sigma);
  if (P.A < MinBase)
    return {};
  return lockstep(growing(Z.N, double(Z.G.Min), P.A, Z.G), false, true);
}

/// KB+RH: everything is sent first; chunks shrink by a = R_R T_k / D_r
/// (4.11) down to the smallest.
std::vector<Step> kernelReceiveHeavy(const Sizing &Z, Plan &P) {
  P.A = kernelBoundBase(Z.L.ReceiveAlone, Z.Kappa, Z.Rho);
  if (P.A < MinBase)
    return {};
  return lockstep(shrinking(Z.N, double(Z.G.Min), P.A, Z.G), true, false);
}

/// KB+GH: a send phase growing by a of (4.19)-(4.20), the middle step, a
/// receive phase shrinking by b = T_k R_R / D_r (4.26).
std::vector<Step> kernelGeneralHeavy(const Sizing &Z, Plan &P) {
  P.A = kernelBoundGeneralBase(Z.Sigma, Z.Rho, Z.Kappa, Z.L);
  P.B = kernelBoundBase(Z.L.ReceiveAlone, Z.Kappa, Z.Rho);
  if (P.A < MinBase)
    return {};
  std::vector<uint64_t> Send = sendPhase(Z, P.A);
  double B = std::max(P.B, MinBase);
  return threePhase(Z.N, Send, middleKernel(Z, Send),
                    [&](uint64_t Left, uint64_t) {
                      return shrinking(Left, double(Z.G.Min), B, Z.G);
                    });
}

/// The base a of a transfer-bound case: golden-section search of the
/// plan's predicted time over [1, 2 b], b the transfer / kernel ratio
/// (Algorithm 1's interval).
double searchBase(const Sizing &Z,
                  const std::function<std::vector<Step>(double)> &Build) {
  double Ratio = Z.T.Kernel > 0 ? Z.T.Both / Z.T.Kernel : HUGE_VAL;
  double Hi = std::min(2 * Ratio, double(Z.N) / double(Z.G.Min));
  Hi = std::max(Hi, 2.0);
  return goldenSection([&](double A) { return stepsTime(Build(A), Z.W, Z.L); },
                       MinBase, Hi, Z.O.SearchIterations);
}

/// DB+SH: chunks shrink by a to the smallest (4.30)-(4.33); a minimizes
/// W(a) of (4.36).
std::vector<Step> transferSendHeavy(const Sizing &Z, Plan &P) {
  auto Build = [&](double A) {
    return lockstep(shrinking(Z.N, double(Z.G.Min), A, Z.G), false, false);
  };
  P.A = searchBase(Z, Build);
  return Build(P.A);
}

/// DB+RH: a send phase growing by a, the middle step, then each kernel
/// chunk as long as receiving the one before it ((4.43)-(4.46): chunks
/// grow by D_r / (T_k R_R)). (4.41)'s set of bases has no maximum (its
/// condition holds for every large a), so a minimizes the plan's time.
std::vector<Step> transferReceiveHeavy(const Sizing &Z, Plan &P) {
  double C = Z.Kappa > 0 ? Z.Rho / (Z.Kappa * Z.L.ReceiveAlone) : HUGE_VAL;
  P.B = C;
  auto Build = [&](double A) {
    std::vector<uint64_t> Send = sendPhase(Z, A);
    return threePhase(Z.N, Send, middleKernel(Z, Send),
                      [&](uint64_t Left, uint64_t Mid) {
                        double First = Mid ? double(Mid) * C : double(Z.G.Min);
                        return growing(Left, First, std::max(C, 1.0), Z.G);
                      });
  };
  P.A = searchBase(Z, Build);
  return Build(P.A);
}

/// DB+GH: m equal chunks, m of (4.53) (the neighbouring whole number
/// predicted faster); over symmetric GPUs (4.127), G() in place of H(),
/// which transferTime() is then.
std::vector<Step> transferGeneralHeavy(const Sizing &Z, Plan &P) {
  double Ds = Z.W.Send.total(Z.N), Dr = Z.W.Receive.total(Z.N);
  double Gain = transferTime(Ds, 0, Z.L) + transferTime(0, Dr, Z.L) -
                transferTime(Ds, Dr, Z.L);
  P.EqualChunks = Z.L.StepSync > 0
                      ? std::sqrt(2 * std::max(Gain, 0.0) / Z.L.StepSync)
                      : double(Z.N) / double(Z.G.Min);
  std::vector<Step> Best;
  double BestTime = HUGE_VAL;
  for (double M : {std::floor(P.EqualChunks), std::ceil(P.EqualChunks)}) {
    std::vector<Step> S = lockstep(equal(Z.N, M, Z.G), false, false);
    double T = stepsTime(S, Z.W, Z.L);
    if (T < BestTime) {
      BestTime = T;
      Best = std::move(S);
    }
  }
  return Best;
}

/// The smallest chunk: one wave, grown (in whole waves) to keep at most
/// MaxChunks chunks.
uint64_t smallestChunk(const Workload &W, const Options &O) {
  uint64_t Wave = std::max<uint64_t>(W.MinChunk, 1);
  uint64_t ByCount =
      (W.Blocks + O.MaxChunks - 1) / std::max<uint64_t>(O.MaxChunks, 1);
  return std::max<uint64_t>(1, (ByCount + Wave - 1) / Wave) * Wave;
}

/// Why the model cannot plan \p W at all, or empty.
std::string refusal(const Workload &W, const LinkRates &L) {
  if (!L.Missing.empty())
    return "the device profile lacks " + L.Missing;
  if (L.SendAlone <= 0 || L.ReceiveAlone <= 0 || L.SendBoth <= 0 ||
      L.ReceiveBoth <= 0)
    return "a host-link rate is not positive";
  if (!W.Kernel)
    return "no kernel time";
  if (W.Blocks < 2 * std::max<uint64_t>(W.MinChunk, 1))
    return "fewer than two waves of blocks";
  if (W.Send.total(W.Blocks) <= 0 && W.Receive.total(W.Blocks) <= 0)
    return "nothing to transfer";
  return "";
}

std::string ms(double Seconds) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.3f ms", Seconds * 1e3);
  return Buf;
}

} // namespace

std::vector<uint64_t> Plan::chunks() const {
  std::vector<uint64_t> Out;
  for (const Step &S : Steps)
    if (S.Kernel)
      Out.push_back(S.Kernel);
  return Out;
}

Plan plan(const Workload &W, const LinkRates &L, const Options &O) {
  Plan P;
  P.Notes = L.Notes;
  P.Why = refusal(W, L);
  if (!P.Why.empty())
    return P;
  P.T = totals(W, L);
  P.UnpipelinedSeconds = unpipelinedTime(W, L);
  P.BoundSeconds = std::max({P.T.Send, P.T.Kernel, P.T.Receive});
  P.C = classify(P.T, O);

  Sizing Z{W,
           L,
           O,
           W.Blocks,
           {smallestChunk(W, O), std::max<uint64_t>(W.MinChunk, 1)},
           W.Send.PerBlock,
           W.Receive.PerBlock,
           P.T.Kernel / double(W.Blocks),
           P.T};
  std::vector<Step> Steps;
  bool Kb = P.C.B == Bound::Kernel;
  switch (P.C.H) {
  case Heavy::Send:
    Steps = Kb ? kernelSendHeavy(Z, P) : transferSendHeavy(Z, P);
    break;
  case Heavy::Receive:
    Steps = Kb ? kernelReceiveHeavy(Z, P) : transferReceiveHeavy(Z, P);
    break;
  case Heavy::General:
    Steps = Kb ? kernelGeneralHeavy(Z, P) : transferGeneralHeavy(Z, P);
    break;
  }
  // A kernel-bound base at 1 grows nothing (the kernel only just outlasts
  // the transfers): equal chunks instead.
  if (Kb && P.A < MinBase) {
    P.Notes.push_back(caseName(P.C) + ": base " + std::to_string(P.A) +
                      " grows no series; equal chunks of (4.53)");
    Steps = transferGeneralHeavy(Z, P);
  }
  if (std::string Bad = checkSteps(Steps, W.Blocks); !Bad.empty()) {
    P.Why = "internal error in the " + caseName(P.C) + " plan: " + Bad;
    return P;
  }
  double T = stepsTime(Steps, W, L);
  if (T >= P.UnpipelinedSeconds) {
    P.Why = "pipelining is predicted at " + ms(T) + ", not under the " +
            ms(P.UnpipelinedSeconds) + " of send, run, receive";
    return P;
  }
  P.Pipelined = true;
  P.PipelinedSeconds = T;
  P.Steps = std::move(Steps);
  return P;
}

std::string Plan::describe() const {
  // Refused before anything was classified.
  if (!Pipelined && UnpipelinedSeconds == 0)
    return "tpsm: not pipelined: " + Why;
  std::string S = "tpsm " + caseName(C);
  char Buf[160];
  std::snprintf(Buf, sizeof(Buf),
                " (send %s, kernel %s, receive %s, both ways %s)",
                ms(T.Send).c_str(), ms(T.Kernel).c_str(), ms(T.Receive).c_str(),
                ms(T.Both).c_str());
  S += Buf;
  if (!Pipelined)
    return S + ": not pipelined: " + Why;
  std::vector<uint64_t> Cs = chunks();
  S += ": " + std::to_string(Cs.size()) + " chunks [";
  for (size_t I = 0; I < Cs.size(); ++I) {
    if (I == 8 && Cs.size() > 10) {
      S += ", ...";
      I = Cs.size() - 2;
      continue;
    }
    S += (I ? ", " : "") + std::to_string(Cs[I]);
  }
  S += "]";
  for (auto [Name, V] :
       {std::pair<const char *, double>{"a", A}, {"b", B}, {"m*", EqualChunks}})
    if (V > 0) {
      std::snprintf(Buf, sizeof(Buf), ", %s %.3g", Name, V);
      S += Buf;
    }
  std::snprintf(Buf, sizeof(Buf),
                "; predicted %s, unpipelined %s, bound %s (%.3fx the bound)",
                ms(PipelinedSeconds).c_str(), ms(UnpipelinedSeconds).c_str(),
                ms(BoundSeconds).c_str(),
                BoundSeconds > 0 ? PipelinedSeconds / BoundSeconds : 0.0);
  S += Buf;
  for (const std::string &N : Notes)
    S += "; " + N;
  return S;
}

} // namespace tpsm
} // namespace rt
} // namespace cleave
