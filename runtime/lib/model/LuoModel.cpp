//===- LuoModel.cpp - Luo's analytical kernel model and link states -------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/LuoModel.h.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/LuoModel.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cleave {
namespace rt {
namespace luo {

namespace {
constexpr double Infinity = std::numeric_limits<double>::infinity();
} // namespace

double warpBandwidth(double NThread, double DMem, double NTrans,
                     double TMem) {
  return NThread * DMem / (NTrans * TMem);
}

double memoryParallelDegree(double NAct, double NSm, double GpuBwt,
                            double WarpBwt, const Corrections &C) {
  if (C.MpdSingleDivision) {
    double M = std::min(NAct, std::floor(GpuBwt / (NSm * WarpBwt)));
    return std::clamp(M, 1.0, std::max(1.0, NAct));
  }
  return std::min(NAct, std::floor(GpuBwt / (NAct * NSm * WarpBwt)));
}

double computeFraction(double TCmp, double TMem) {
  return TCmp / (TCmp + TMem);
}

double cpd1(double NAct, double P, const CpdFit &F) {
  return (F.C - P) * (NAct - F.B) + F.A;
}

double cpd2(double NAct, double P, const CpdFit &F) {
  double N = F.D * (P - F.C) * (P - F.C);
  double R = (F.M - 1) * (F.M - 1) - (NAct - F.M) * (NAct - F.M);
  return N / (F.M - 1) * std::sqrt(std::max(0.0, R)) + F.A;
}

double computeParallelDegree(double NAct, double P, const CpdFit &F,
                             const Corrections &C) {
  double V = std::min(cpd1(NAct, P, F), cpd2(NAct, P, F));
  if (C.ClampCpd)
    V = std::clamp(V, 1.0, std::max(1.0, NAct));
  return V;
}

int periodType(const Period *Prev, const Period &Cur) {
  bool PrevCompute = !Prev || Prev->Compute >= Prev->Memory;
  bool CurCompute = Cur.Compute >= Cur.Memory;
  if (PrevCompute)
    return CurCompute ? 1 : 2;
  return CurCompute ? 3 : 4;
}

double periodCycles(const Period *Prev, const Period &Cur, double NAct,
                    double Cpd, double Mpd, const Corrections &C) {
  double Base = std::ceil(NAct * Cur.Compute / Cpd);
  int Type = periodType(Prev, Cur);
  // (3.9), n read as N_act.
  auto Tc2 = [&] {
    return std::max(Cur.Memory - (NAct - 1) * Cur.Compute, 0.0);
  };
  // (3.11): the memory tasks of the previous period that wait for a free
  // memory slot.
  auto Tp = [&] {
    double Waves = std::floor(NAct / Mpd - 1);
    double V = Prev->Memory * Waves - (NAct - 1) * Cur.Compute;
    return std::max(V, 0.0);
  };
  switch (Type) {
  case 1:
    return Base;
  case 2:
    return Base + Tc2();
  case 3:
    return Base + Tp();
  default: {
    double P = Tp();
    double Tc = Cur.Memory - ((NAct - 1) * Cur.Compute + P);
    if (C.ClampTc4)
      Tc = std::max(Tc, 0.0);
    return Base + P + Tc;
  }
  }
}

double kernelCycles(const std::vector<Period> &Periods, double NAct,
                    double Cpd, double Mpd, const Corrections &C) {
  double Sum = 0;
  for (size_t I = 0; I < Periods.size(); ++I)
    Sum += periodCycles(I ? &Periods[I - 1] : nullptr, Periods[I], NAct, Cpd,
                        Mpd, C);
  return Sum;
}

double accuracy(double TTest, double TModel) {
  double Hi = std::max(TTest, TModel);
  return Hi > 0 ? std::min(TTest, TModel) / Hi : 1.0;
}

double bidirectionalTime(double Xs, double Xr, double SS, double RR,
                         double SSR, double RSR) {
  if (Xs / SSR <= Xr / RSR)
    return Xs / SSR + (Xr - (Xs / SSR) * RSR) / RR;
  return Xr / RSR + (Xs - (Xr / RSR) * SSR) / SS;
}

double optimalChunkCount(double Ds, double Dr, double SS, double RR,
                         double SSR, double RSR, double TStr) {
  double Gain = Ds / SS + Dr / RR - bidirectionalTime(Ds, Dr, SS, RR, SSR, RSR);
  return std::sqrt(2 * std::max(Gain, 0.0) / TStr);
}

double optimalTransferTime(const std::vector<LinkState> &States, double Xs,
                           double Xr,
                           std::vector<std::pair<size_t, double>> *Used) {
  if (Used)
    Used->clear();
  if (Xs <= 0 && Xr <= 0)
    return 0;
  double Best = Infinity;
  std::vector<std::pair<size_t, double>> BestUse;
  // One state: time enough for both directions.
  for (size_t Q = 0; Q < States.size(); ++Q) {
    const LinkState &S = States[Q];
    double T = 0;
    if (Xs > 0)
      T = S.Send > 0 ? Xs / S.Send : Infinity;
    if (Xr > 0)
      T = std::max(T, S.Receive > 0 ? Xr / S.Receive : Infinity);
    if (T < Best) {
      Best = T;
      BestUse = {{Q, T}};
    }
  }
  // Two states meeting both demands exactly (a vertex of the LP).
  for (size_t P = 0; P < States.size(); ++P)
    for (size_t Q = P + 1; Q < States.size(); ++Q) {
      const LinkState &A = States[P], &B = States[Q];
      double Det = A.Send * B.Receive - B.Send * A.Receive;
      if (std::fabs(Det) < 1e-12)
        continue;
      double TA = (Xs * B.Receive - Xr * B.Send) / Det;
      double TB = (A.Send * Xr - A.Receive * Xs) / Det;
      if (TA < -1e-12 || TB < -1e-12)
        continue;
      TA = std::max(TA, 0.0);
      TB = std::max(TB, 0.0);
      if (TA + TB < Best) {
        Best = TA + TB;
        BestUse = {{P, TA}, {Q, TB}};
      }
    }
  if (Used)
    *Used = BestUse;
  return Best;
}

} // namespace luo
} // namespace rt
} // namespace cleave
