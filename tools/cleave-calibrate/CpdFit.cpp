//===- CpdFit.cpp - Least-squares fit of Luo's CPD curve ------------------===//
//
// Part of cleave-calibrate (no LLVM). See CpdFit.h.
//
//===----------------------------------------------------------------------===//
#include "CpdFit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace cleave {
namespace calibrate {

namespace {

using Params = std::array<double, 4>; // a, b, c, d

rt::luo::CpdFit toFit(const Params &T, double M) {
  rt::luo::CpdFit F;
  F.A = T[0];
  F.B = T[1];
  F.C = T[2];
  F.D = T[3];
  F.M = M;
  return F;
}

struct Point {
  double N, P, Y;
};

double sse(const std::vector<Point> &Pts, const Params &T, double M) {
  rt::luo::CpdFit F = toFit(T, M);
  double S = 0;
  for (const Point &Q : Pts) {
    double R = cpdModel(F, Q.N, Q.P) - Q.Y;
    S += R * R;
  }
  return S;
}

/// Solves the 4x4 system A x = B by Gaussian elimination with partial
/// pivoting; false when singular.
bool solve4(std::array<std::array<double, 4>, 4> A, std::array<double, 4> B,
            std::array<double, 4> &X) {
  for (int Col = 0; Col < 4; ++Col) {
    int Piv = Col;
    for (int R = Col + 1; R < 4; ++R)
      if (std::fabs(A[R][Col]) > std::fabs(A[Piv][Col]))
        Piv = R;
    if (std::fabs(A[Piv][Col]) < 1e-300)
      return false;
    std::swap(A[Piv], A[Col]);
    std::swap(B[Piv], B[Col]);
    for (int R = Col + 1; R < 4; ++R) {
      double F = A[R][Col] / A[Col][Col];
      for (int K = Col; K < 4; ++K)
        A[R][K] -= F * A[Col][K];
      B[R] -= F * B[Col];
    }
  }
  for (int R = 3; R >= 0; --R) {
    double S = B[R];
    for (int K = R + 1; K < 4; ++K)
      S -= A[R][K] * X[K];
    X[R] = S / A[R][R];
  }
  return true;
}

/// Levenberg-Marquardt from \p T (updated in place); the Jacobian by
/// central differences (the min() makes the model piecewise smooth).
unsigned levenbergMarquardt(const std::vector<Point> &Pts, Params &T,
                            double M) {
  double Lambda = 1e-3;
  double Cur = sse(Pts, T, M);
  unsigned It = 0;
  for (; It < 500; ++It) {
    std::vector<std::array<double, 4>> J(Pts.size());
    std::vector<double> R(Pts.size());
    rt::luo::CpdFit F = toFit(T, M);
    for (size_t I = 0; I < Pts.size(); ++I)
      R[I] = cpdModel(F, Pts[I].N, Pts[I].P) - Pts[I].Y;
    for (int K = 0; K < 4; ++K) {
      double H = 1e-6 * std::max(1.0, std::fabs(T[K]));
      Params Up = T, Down = T;
      Up[K] += H;
      Down[K] -= H;
      rt::luo::CpdFit FU = toFit(Up, M), FD = toFit(Down, M);
      for (size_t I = 0; I < Pts.size(); ++I)
        J[I][K] = (cpdModel(FU, Pts[I].N, Pts[I].P) -
                   cpdModel(FD, Pts[I].N, Pts[I].P)) /
                  (2 * H);
    }
    std::array<std::array<double, 4>, 4> JtJ{};
    std::array<double, 4> JtR{};
    for (size_t I = 0; I < Pts.size(); ++I)
      for (int A = 0; A < 4; ++A) {
        JtR[A] += J[I][A] * R[I];
        for (int B = 0; B < 4; ++B)
          JtJ[A][B] += J[I][A] * J[I][B];
      }
    bool Improved = false;
    while (Lambda < 1e12) {
      auto Sys = JtJ;
      std::array<double, 4> Rhs;
      for (int A = 0; A < 4; ++A) {
        Sys[A][A] += Lambda * std::max(JtJ[A][A], 1e-12);
        Rhs[A] = -JtR[A];
      }
      std::array<double, 4> Step{};
      if (!solve4(Sys, Rhs, Step)) {
        Lambda *= 10;
        continue;
      }
      Params Next = T;
      for (int A = 0; A < 4; ++A)
        Next[A] += Step[A];
      double S = sse(Pts, Next, M);
      if (std::isfinite(S) && S < Cur) {
        double Gain = Cur - S;
        T = Next;
        Cur = S;
        Lambda = std::max(Lambda / 10, 1e-12);
        Improved = true;
        if (Gain <= 1e-15 * std::max(Cur, 1e-30))
          return It + 1;
        break;
      }
      Lambda *= 10;
    }
    if (!Improved || Cur < 1e-24)
      return It + 1;
  }
  return It;
}

} // namespace

double cpdModel(const rt::luo::CpdFit &F, double N, double P) {
  // The printed (3.4)-(3.6); the sqrt argument is >= 0 for 1 <= N <= 2m-1.
  return std::min(rt::luo::cpd1(N, P, F), rt::luo::cpd2(N, P, F));
}

CpdFitResult fitCpd(const std::vector<CpdCurve> &Curves, double M) {
  CpdFitResult Res;
  Res.Fit.M = M;
  if (!(M > 1) || !std::isfinite(M)) {
    Res.Error = "m (warps per SM) must be > 1, got " + std::to_string(M);
    return Res;
  }
  std::vector<Point> Pts;
  for (const CpdCurve &C : Curves) {
    if (C.Warps.size() != C.Cpd.size()) {
      Res.Error = "a CPD curve has " + std::to_string(C.Warps.size()) +
                  " warp counts but " + std::to_string(C.Cpd.size()) +
                  " values";
      return Res;
    }
    for (size_t I = 0; I < C.Warps.size(); ++I) {
      if (!std::isfinite(C.Warps[I]) || !std::isfinite(C.Cpd[I]) ||
          !std::isfinite(C.P)) {
        Res.Error = "a CPD point is not a finite number";
        return Res;
      }
      if (C.Warps[I] < 1 || C.Warps[I] > M) {
        Res.Error = "a CPD point has " + std::to_string(C.Warps[I]) +
                    " warps, outside [1, m = " + std::to_string(M) + "]";
        return Res;
      }
      Pts.push_back({C.Warps[I], C.P, C.Cpd[I]});
    }
  }
  Res.Points = Pts.size();
  if (Pts.size() < 4) {
    Res.Error = "the CPD fit needs at least 4 points, got " +
                std::to_string(Pts.size());
    return Res;
  }

  // Starting points. a: the CPD of one warp. c: from each curve's initial
  // slope (c - P); b around where the line starts; d from the highest
  // point's rise over a, given c.
  double A0 = std::numeric_limits<double>::infinity(), YMax = -A0;
  double PMin = A0, PMax = -A0;
  for (const Point &Q : Pts) {
    if (Q.N <= 1.5)
      A0 = std::min(A0, Q.Y);
    YMax = std::max(YMax, Q.Y);
    PMin = std::min(PMin, Q.P);
    PMax = std::max(PMax, Q.P);
  }
  if (!std::isfinite(A0))
    A0 = Pts.front().Y;
  std::vector<double> CStarts;
  for (const CpdCurve &C : Curves) {
    if (C.Warps.size() < 2)
      continue;
    // Slope over the first quarter of the curve, where CPD1 is the lower
    // branch when the curve rises.
    size_t Last = std::max<size_t>(1, C.Warps.size() / 4);
    double DN = C.Warps[Last] - C.Warps[0];
    if (DN > 0)
      CStarts.push_back((C.Cpd[Last] - C.Cpd[0]) / DN + C.P);
  }
  CStarts.push_back(PMax + 0.5);
  CStarts.push_back(PMin - 0.5);
  CStarts.push_back(PMax + 2);
  const double BStarts[] = {0, 1, M / 8, M / 4, M / 2};
  const double DScales[] = {0.5, 1, 2};

  Params Best{A0, 1, PMax + 1, 1};
  double BestSse = std::numeric_limits<double>::infinity();
  unsigned BestIt = 0;
  for (double C0 : CStarts)
    for (double B0 : BStarts)
      for (double DS : DScales) {
        double Gap = 0;
        for (const Point &Q : Pts)
          Gap = std::max(Gap, (Q.P - C0) * (Q.P - C0));
        double D0 = Gap > 1e-9 ? DS * std::max(YMax - A0, 1e-3) / Gap : DS;
        Params T{A0, B0, C0, D0};
        unsigned It = levenbergMarquardt(Pts, T, M);
        double S = sse(Pts, T, M);
        if (std::isfinite(S) && S < BestSse) {
          BestSse = S;
          Best = T;
          BestIt = It;
        }
      }
  if (!std::isfinite(BestSse)) {
    Res.Error = "the CPD fit did not converge to finite parameters";
    return Res;
  }
  Res.Fit = toFit(Best, M);
  Res.Iterations = BestIt;
  Res.Rms = std::sqrt(BestSse / double(Pts.size()));
  double Mean = 0;
  for (const Point &Q : Pts)
    Mean += Q.Y;
  Mean /= double(Pts.size());
  double Tss = 0;
  for (const Point &Q : Pts)
    Tss += (Q.Y - Mean) * (Q.Y - Mean);
  Res.RSquared = Tss > 0 ? 1 - BestSse / Tss : 1;
  return Res;
}

} // namespace calibrate
} // namespace cleave
