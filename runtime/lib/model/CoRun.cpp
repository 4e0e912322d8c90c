//===- CoRun.cpp - Markov-chain model of kernels sharing an SM ------------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/CoRun.h and
// docs/coschedule.md. Equation numbers are those of digest 003.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/CoRun.h"

#include <algorithm>
#include <cmath>

namespace cleave {
namespace rt {
namespace corun {

double MemoryModel::latency(double Sectors, double InFlightSectors) const {
  if (!(SectorsPerCycle > 0))
    return Base;
  return Base + Slope * (InFlightSectors + Sectors) / SectorsPerCycle;
}

namespace {

/// A population's local states: (idle on coalesced, idle on uncoalesced)
/// unit counts, and the index of each in a (Units + 1)^2 table.
struct LocalStates {
  std::vector<std::pair<unsigned, unsigned>> States;
  std::vector<int> Index;
  unsigned Side = 0;
  int at(unsigned C, unsigned U) const { return Index[C * Side + U]; }
};

bool hasCoalesced(const Population &P) {
  return P.MemRatio > 0 && P.CoalescedFraction > 0;
}
bool hasUncoalesced(const Population &P) {
  return P.MemRatio > 0 && P.CoalescedFraction < 1;
}

/// Only the kinds of request the kernel makes get a dimension, so a kernel
/// with one kind has the two-state chain of §4.3.
LocalStates localStates(const Population &P) {
  LocalStates L;
  L.Side = P.Units + 1;
  L.Index.assign(L.Side * L.Side, -1);
  unsigned MaxC = hasCoalesced(P) || !hasUncoalesced(P) ? P.Units : 0;
  for (unsigned C = 0; C <= MaxC; ++C) {
    unsigned MaxU = hasUncoalesced(P) ? P.Units - C : 0;
    for (unsigned U = 0; U <= MaxU; ++U) {
      L.Index[C * L.Side + U] = int(L.States.size());
      L.States.push_back({C, U});
    }
  }
  return L;
}

uint64_t localCount(const Population &P) {
  uint64_t N = P.Units + 1;
  return hasCoalesced(P) && hasUncoalesced(P) ? N * (N + 1) / 2 : N;
}

std::vector<double> binomial(unsigned N, double P) {
  P = std::min(std::max(P, 0.0), 1.0);
  std::vector<double> D(N + 1, 0.0);
  double C = 1; // C(N, K)
  for (unsigned K = 0; K <= N; ++K) {
    D[K] = C * std::pow(P, K) * std::pow(1 - P, N - K);
    C = C * (N - K) / (K + 1);
  }
  return D;
}

/// One population's next local state from (C, U) in a round of \p Round
/// cycles (Eq. 2 as a convolution): each idle unit returns with
/// probability Round / latency of its request, clamped to 1; each ready
/// unit issues one instruction per warp and stalls on a coalesced request
/// with Rm * f_c, on an uncoalesced one with Rm * (1 - f_c) (§4.6).
std::vector<double> nextLocal(const Population &P, const LocalStates &L,
                              unsigned C, unsigned U, double PC, double PU) {
  unsigned Ready = P.Units - C - U;
  std::vector<double> BackC = binomial(C, PC), BackU = binomial(U, PU);
  double QC = P.MemRatio * P.CoalescedFraction;
  double QU = P.MemRatio * (1 - P.CoalescedFraction);
  // New stalls (X coalesced, Y uncoalesced) among the ready units.
  std::vector<double> Stall((Ready + 1) * (Ready + 1), 0.0);
  std::vector<double> ToC = binomial(Ready, QC);
  for (unsigned X = 0; X <= Ready; ++X) {
    double Rest = QC < 1 ? QU / (1 - QC) : 0;
    std::vector<double> ToU = binomial(Ready - X, Rest);
    for (unsigned Y = 0; X + Y <= Ready; ++Y)
      Stall[X * (Ready + 1) + Y] = ToC[X] * ToU[Y];
  }
  std::vector<double> D(L.States.size(), 0.0);
  for (unsigned A = 0; A <= C; ++A)
    for (unsigned B = 0; B <= U; ++B) {
      double PB = BackC[A] * BackU[B];
      if (PB < 1e-300)
        continue;
      for (unsigned X = 0; X <= Ready; ++X)
        for (unsigned Y = 0; X + Y <= Ready; ++Y) {
          double PS = Stall[X * (Ready + 1) + Y];
          if (PS < 1e-300)
            continue;
          int J = L.at(C - A + X, U - B + Y);
          if (J >= 0)
            D[J] += PB * PS;
        }
    }
  return D;
}

struct Chain {
  std::vector<LocalStates> Local;
  std::vector<uint64_t> Stride;
  uint64_t N = 1;
  /// Sparse rows: (target, probability).
  std::vector<std::vector<std::pair<uint32_t, double>>> Rows;
  /// Per state: each population's ready warps, and the round length.
  std::vector<std::vector<double>> ReadyWarps;
  std::vector<double> Round;
};

/// The local state of population K in joint state S.
std::pair<unsigned, unsigned> localOf(const Chain &Ch, uint64_t S, size_t K) {
  uint64_t I = (S / Ch.Stride[K]) % Ch.Local[K].States.size();
  return Ch.Local[K].States[I];
}

/// The joint row of state S: the product of the populations' next local
/// distributions, each evaluated in the context of all of them (§4.5: the
/// round is every population's ready warps, the latency sees every
/// population's sectors in flight).
void buildRow(const std::vector<Population> &Pops, const MemoryModel &M,
              Chain &Ch, uint64_t S) {
  double Round = 0, InFlight = 0;
  std::vector<double> &Ready = Ch.ReadyWarps[S];
  Ready.assign(Pops.size(), 0.0);
  for (size_t K = 0; K < Pops.size(); ++K) {
    auto [C, U] = localOf(Ch, S, K);
    const Population &P = Pops[K];
    Ready[K] = double(P.Units - C - U) * P.WarpsPerUnit;
    Round += Ready[K];
    InFlight +=
        P.WarpsPerUnit * (C * P.CoalescedSectors + U * P.UncoalescedSectors);
  }
  // An SM with every warp stalled still spends one cycle per round (§4.3).
  Round = std::max(Round, 1.0);
  Ch.Round[S] = Round;
  std::vector<std::pair<uint32_t, double>> Row = {{0, 1.0}};
  for (size_t K = 0; K < Pops.size(); ++K) {
    auto [C, U] = localOf(Ch, S, K);
    const Population &P = Pops[K];
    double PC = Round / M.latency(P.CoalescedSectors, InFlight);
    double PU = Round / M.latency(P.UncoalescedSectors, InFlight);
    std::vector<double> D = nextLocal(P, Ch.Local[K], C, U, PC, PU);
    std::vector<std::pair<uint32_t, double>> Next;
    for (auto [T, V] : Row)
      for (size_t J = 0; J < D.size(); ++J)
        if (D[J] * V > 1e-300)
          Next.push_back({uint32_t(T + J * Ch.Stride[K]), D[J] * V});
    Row = std::move(Next);
  }
  Ch.Rows[S] = std::move(Row);
}

/// Eq. 3 by elimination: pi (P - I) = 0 with sum(pi) = 1 replacing the
/// last equation.
bool solveDirect(const Chain &Ch, std::vector<double> &Pi) {
  size_t N = Ch.N;
  std::vector<double> A(N * N, 0.0), B(N, 0.0);
  for (size_t I = 0; I < N; ++I) {
    for (auto [J, V] : Ch.Rows[I])
      A[J * N + I] += V;
    A[I * N + I] -= 1;
  }
  for (size_t I = 0; I < N; ++I)
    A[(N - 1) * N + I] = 1;
  B[N - 1] = 1;
  for (size_t Col = 0; Col < N; ++Col) {
    size_t Piv = Col;
    for (size_t R = Col + 1; R < N; ++R)
      if (std::fabs(A[R * N + Col]) > std::fabs(A[Piv * N + Col]))
        Piv = R;
    if (std::fabs(A[Piv * N + Col]) < 1e-300)
      return false;
    if (Piv != Col) {
      for (size_t K = 0; K < N; ++K)
        std::swap(A[Col * N + K], A[Piv * N + K]);
      std::swap(B[Col], B[Piv]);
    }
    for (size_t R = Col + 1; R < N; ++R) {
      double F = A[R * N + Col] / A[Col * N + Col];
      if (F == 0)
        continue;
      for (size_t K = Col; K < N; ++K)
        A[R * N + K] -= F * A[Col * N + K];
      B[R] -= F * B[Col];
    }
  }
  Pi.assign(N, 0.0);
  for (size_t I = N; I-- > 0;) {
    double S = B[I];
    for (size_t K = I + 1; K < N; ++K)
      S -= A[I * N + K] * Pi[K];
    Pi[I] = S / A[I * N + I];
  }
  for (double &V : Pi)
    V = std::max(V, 0.0);
  return true;
}

/// Eq. 3 by power iteration; the number of iterations, 0 if it did not
/// converge.
unsigned solveIterative(const Chain &Ch, std::vector<double> &Pi,
                        const ChainOptions &O) {
  Pi.assign(Ch.N, 1.0 / double(Ch.N));
  std::vector<double> Next(Ch.N);
  for (unsigned It = 1; It <= O.MaxIterations; ++It) {
    std::fill(Next.begin(), Next.end(), 0.0);
    for (size_t I = 0; I < Ch.N; ++I)
      for (auto [J, V] : Ch.Rows[I])
        Next[J] += Pi[I] * V;
    double Sum = 0, Diff = 0;
    for (double V : Next)
      Sum += V;
    for (size_t I = 0; I < Ch.N; ++I) {
      Next[I] /= Sum;
      Diff = std::max(Diff, std::fabs(Next[I] - Pi[I]));
    }
    Pi.swap(Next);
    if (Diff < O.Tolerance)
      return It;
  }
  return 0;
}

Result checkPopulations(const std::vector<Population> &Pops) {
  if (Pops.empty())
    return Result::error(ErrorCode::InvalidValue, "co-run model: no kernels");
  for (const Population &P : Pops)
    if (!P.Units || !P.WarpsPerUnit || !(P.MemRatio >= 0) ||
        !(P.MemRatio <= 1) || !(P.CoalescedFraction >= 0) ||
        !(P.CoalescedFraction <= 1))
      return Result::error(ErrorCode::InvalidValue,
                           "co-run model: a kernel without warps, or a "
                           "ratio outside [0, 1]");
  return Result::success();
}

} // namespace

uint64_t chainStates(const std::vector<Population> &Pops) {
  uint64_t N = 1;
  for (const Population &P : Pops)
    N = std::min<uint64_t>(N * localCount(P), uint64_t(1) << 40);
  return N;
}

Result solveChain(const std::vector<Population> &Pops, const MemoryModel &M,
                  ChainResult &Out, const ChainOptions &O) {
  if (Result R = checkPopulations(Pops); !R.ok())
    return R;
  if (chainStates(Pops) > 1000000)
    return Result::error(ErrorCode::NotSupported,
                         "co-run model: the chain has over 1e6 states; "
                         "lump warps into units (§4.8)");
  Chain Ch;
  for (const Population &P : Pops) {
    Ch.Local.push_back(localStates(P));
    Ch.Stride.push_back(Ch.N);
    Ch.N *= Ch.Local.back().States.size();
  }
  Ch.Rows.resize(Ch.N);
  Ch.ReadyWarps.resize(Ch.N);
  Ch.Round.resize(Ch.N);
  for (uint64_t S = 0; S < Ch.N; ++S)
    buildRow(Pops, M, Ch, S);
  std::vector<double> Pi;
  Out.Iterations = 0;
  if (Ch.N > O.DirectLimit || !solveDirect(Ch, Pi)) {
    Out.Iterations = solveIterative(Ch, Pi, O);
    if (!Out.Iterations)
      return Result::error(ErrorCode::Unknown,
                           "co-run model: the steady state did not converge");
  }
  // Eqs. 4-6: a population's issued instructions over all cycles.
  double Cycles = 0;
  Out.Ipc.assign(Pops.size(), 0.0);
  for (uint64_t S = 0; S < Ch.N; ++S) {
    Cycles += Pi[S] * Ch.Round[S];
    for (size_t K = 0; K < Pops.size(); ++K)
      Out.Ipc[K] += Pi[S] * Ch.ReadyWarps[S][K];
  }
  for (double &V : Out.Ipc)
    V /= Cycles;
  Out.States = unsigned(Ch.N);
  return Result::success();
}

Result homogeneousIpc(unsigned Warps, double MemRatio, const MemoryModel &M,
                      double &Ipc) {
  Population P;
  P.Units = Warps;
  P.MemRatio = MemRatio;
  ChainResult R;
  if (Result E = solveChain({P}, M, R); !E.ok())
    return E;
  Ipc = R.Ipc[0];
  return Result::success();
}

double coSchedulingProfit(const std::vector<double> &Co,
                          const std::vector<double> &Solo) {
  if (Co.size() != Solo.size() || Co.empty())
    return 0;
  double Speedup = 0;
  for (size_t I = 0; I < Co.size(); ++I) {
    if (!(Solo[I] > 0))
      return 0;
    Speedup += Co[I] / Solo[I];
  }
  return Speedup > 0 ? 1 - 1 / Speedup : 0;
}

} // namespace corun
} // namespace rt
} // namespace cleave
