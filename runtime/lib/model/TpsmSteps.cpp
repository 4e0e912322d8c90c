//===- TpsmSteps.cpp - TPSM's step model, classes and equations -----------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/Tpsm.h: what a plan of
// steps costs, the classification of §3.1, and the equations the cases take
// their base values from (digest 000 §3.3). The cases themselves are in
// Tpsm.cpp.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Tpsm.h"

#include "cleave/rt/LuoModel.h"

#include <algorithm>
#include <cmath>

namespace cleave {
namespace rt {
namespace tpsm {

double transferTime(double Xs, double Xr, const LinkRates &L) {
  if (L.Transfer)
    return L.Transfer(std::max(Xs, 0.0), std::max(Xr, 0.0));
  if (Xr <= 0)
    return Xs > 0 ? Xs / L.SendAlone : 0;
  if (Xs <= 0)
    return Xr / L.ReceiveAlone;
  return luo::bidirectionalTime(Xs, Xr, L.SendAlone, L.ReceiveAlone, L.SendBoth,
                                L.ReceiveBoth);
}

namespace {

/// The latency a step's copies add: the two directions' copies run on their
/// own streams, so the longer of the two.
double copyLatency(double Xs, double Xr, const Workload &W,
                   const LinkRates &L) {
  double S = Xs > 0 ? W.SendCopies * L.SendLatency : 0;
  double R = Xr > 0 ? W.ReceiveCopies * L.ReceiveLatency : 0;
  return std::max(S, R);
}

} // namespace

KernelTime proportionalKernelTime(double SecondsPerBlock) {
  return [SecondsPerBlock](uint64_t Blocks) {
    return SecondsPerBlock * double(Blocks);
  };
}

KernelTime waveKernelTime(double SecondsPerWave, uint64_t WaveBlocks,
                          double LaunchSeconds) {
  WaveBlocks = std::max<uint64_t>(WaveBlocks, 1);
  return [=](uint64_t Blocks) {
    if (Blocks == 0)
      return 0.0;
    uint64_t Waves = (Blocks + WaveBlocks - 1) / WaveBlocks;
    return LaunchSeconds + SecondsPerWave * double(Waves);
  };
}

KernelTime hopperKernelTime(const model::GpuParams &G,
                            const model::LaunchStats &S,
                            const model::KernelResources &R) {
  return [G, S, R](uint64_t Blocks) {
    if (Blocks == 0)
      return 0.0;
    model::LaunchStats Chunk = S;
    // A chunk touches its share of the launch's footprint (what decides
    // whether it fits in L2).
    if (S.Blocks)
      Chunk.FootprintBytes = S.FootprintBytes * double(Blocks) / S.Blocks;
    Chunk.Blocks = Blocks;
    return model::predictHopper(G, Chunk, R).Seconds;
  };
}

uint64_t waveBlocks(unsigned SMs, unsigned BlocksPerSM) {
  return std::max<uint64_t>(uint64_t(SMs) * BlocksPerSM, 1);
}

std::string caseName(Case C) {
  std::string S = C.B == Bound::Kernel ? "KB+" : "DB+";
  switch (C.H) {
  case Heavy::Send:
    return S + "SH";
  case Heavy::Receive:
    return S + "RH";
  case Heavy::General:
    return S + "GH";
  }
  return S + "?";
}

Totals totals(const Workload &W, const LinkRates &L) {
  Totals T;
  double Ds = W.Send.total(W.Blocks), Dr = W.Receive.total(W.Blocks);
  T.Send = transferTime(Ds, 0, L);
  T.Receive = transferTime(0, Dr, L);
  T.Both = transferTime(Ds, Dr, L);
  T.Kernel = W.Kernel && W.Blocks ? W.Kernel(W.Blocks) : 0;
  return T;
}

Case classify(const Totals &T, const Options &O) {
  Case C;
  // §3.1 asks whether the kernel outlasts the transfers; in a pipeline the
  // two directions move at once, so the transfers take H(D_s, D_r).
  C.B = T.Kernel >= T.Both ? Bound::Kernel : Bound::Transfer;
  if (T.Receive <= O.HeavyRatio * T.Send)
    C.H = Heavy::Send;
  else if (T.Send <= O.HeavyRatio * T.Receive)
    C.H = Heavy::Receive;
  else
    C.H = Heavy::General;
  return C;
}

std::string checkSteps(const std::vector<Step> &Steps, uint64_t Blocks) {
  uint64_t Sent = 0, Run = 0, Received = 0;
  for (size_t J = 0; J < Steps.size(); ++J) {
    const Step &S = Steps[J];
    // What this step runs must have been sent before it; what it receives
    // must have been run before it.
    if (Run + S.Kernel > Sent)
      return "step " + std::to_string(J + 1) + " runs blocks not yet sent";
    if (Received + S.Receive > Run)
      return "step " + std::to_string(J + 1) + " receives blocks not yet run";
    Sent += S.Send;
    Run += S.Kernel;
    Received += S.Receive;
  }
  if (Sent != Blocks || Run != Blocks || Received != Blocks)
    return "the steps send " + std::to_string(Sent) + ", run " +
           std::to_string(Run) + " and receive " + std::to_string(Received) +
           " of " + std::to_string(Blocks) + " blocks";
  return "";
}

std::vector<double> stepTimes(const std::vector<Step> &Steps,
                              const Workload &W, const LinkRates &L) {
  // The fixed bytes go with the first step that sends and the last that
  // receives.
  size_t FirstSend = Steps.size(), LastReceive = Steps.size();
  for (size_t J = 0; J < Steps.size(); ++J) {
    if (Steps[J].Send && FirstSend == Steps.size())
      FirstSend = J;
    if (Steps[J].Receive)
      LastReceive = J;
  }
  std::vector<double> Out;
  Out.reserve(Steps.size());
  for (size_t J = 0; J < Steps.size(); ++J) {
    const Step &S = Steps[J];
    double Xs = S.Send ? W.Send.PerBlock * double(S.Send) : 0;
    double Xr = S.Receive ? W.Receive.PerBlock * double(S.Receive) : 0;
    if (J == FirstSend)
      Xs += W.Send.Fixed;
    if (J == LastReceive)
      Xr += W.Receive.Fixed;
    double Transfer = transferTime(Xs, Xr, L) + copyLatency(Xs, Xr, W, L);
    double Kernel = S.Kernel ? W.Kernel(S.Kernel) : 0;
    Out.push_back(std::max(Transfer, Kernel) + L.StepSync);
  }
  return Out;
}

double stepsTime(const std::vector<Step> &Steps, const Workload &W,
                 const LinkRates &L) {
  double T = 0;
  for (double S : stepTimes(Steps, W, L))
    T += S;
  return T;
}

double unpipelinedTime(const Workload &W, const LinkRates &L) {
  double Ds = W.Send.total(W.Blocks), Dr = W.Receive.total(W.Blocks);
  return transferTime(Ds, 0, L) + copyLatency(Ds, 0, W, L) +
         (W.Blocks ? W.Kernel(W.Blocks) : 0) + transferTime(0, Dr, L) +
         copyLatency(0, Dr, W, L);
}

double kernelBoundBase(double Rate, double KernelPerBlock,
                       double BytesPerBlock) {
  return BytesPerBlock > 0 ? Rate * KernelPerBlock / BytesPerBlock : 0;
}

namespace {

/// The largest root of x^2 - 2 P x + Q <= 0 lying in [Lo, Hi], or 0 when
/// the interval of solutions misses it.
double largestRootIn(double P, double Q, double Lo, double Hi) {
  double Disc = P * P - Q;
  if (Disc < 0)
    return 0;
  double Left = P - std::sqrt(Disc), Right = P + std::sqrt(Disc);
  double Top = std::min(Right, Hi);
  return Top >= std::max(Left, Lo) ? Top : 0;
}

} // namespace

double kernelBoundGeneralBase(double Sigma, double Rho, double Kappa,
                              const LinkRates &L) {
  if (Sigma <= 0 || Rho <= 0 || Kappa <= 0)
    return 0;
  const double SS = L.SendAlone, RR = L.ReceiveAlone;
  const double SSR = L.SendBoth, RSR = L.ReceiveBoth;
  // Step i of the send phase sends sigma w a^(i-1), runs kappa w a^(i-2) and
  // receives rho w a^(i-3) ((4.17) corrected); H is homogeneous, so the
  // step keeps its transfer under its kernel iff H(sigma a^2, rho) <=
  // kappa a, a quadratic in a on each side of delta, where both directions
  // end together (4.19).
  double Delta = std::sqrt(Rho * SSR / (Sigma * RSR));
  // a >= delta: the send outlasts the receive (set A).
  double Beta = SS * Kappa / (2 * Sigma);
  double Gamma = (SS - SSR) * Rho / (Sigma * RSR);
  double A = largestRootIn(Beta, Gamma, Delta, HUGE_VAL);
  // a <= delta: the receive outlasts the send (set B). With R_SR = R_R the
  // quadratic is linear: kappa a >= rho / R_R.
  double B = 0;
  if (RR > RSR) {
    double Lambda = Kappa * SSR * RR / (2 * Sigma * (RR - RSR));
    double Mu = Rho * SSR / (Sigma * (RR - RSR));
    B = largestRootIn(Lambda, Mu, 0, Delta);
  } else if (Kappa * Delta >= Rho / RR) {
    B = Delta;
  }
  return std::max(A, B); // (4.20)
}

double goldenSection(const std::function<double(double)> &F, double Lo,
                     double Hi, unsigned Iterations) {
  const double R = (std::sqrt(5.0) - 1) / 2;
  double C = Hi - R * (Hi - Lo), D = Lo + R * (Hi - Lo);
  double FC = F(C), FD = F(D);
  for (unsigned I = 0; I < Iterations; ++I) {
    if (FC <= FD) {
      Hi = D;
      D = C;
      FD = FC;
      C = Hi - R * (Hi - Lo);
      FC = F(C);
    } else {
      Lo = C;
      C = D;
      FC = FD;
      D = Lo + R * (Hi - Lo);
      FD = F(D);
    }
  }
  return FC <= FD ? C : D;
}

} // namespace tpsm
} // namespace rt
} // namespace cleave
