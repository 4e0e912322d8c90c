//===- SmallLp.cpp - A dense simplex for the planner's small LPs ----------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/SmallLp.h. The tableau
// holds one row per constraint and one column per variable, slack or
// surplus, and artificial; phase 1 minimizes the artificials' sum from the
// basis of slacks and artificials, phase 2 the cost with the artificials
// barred from entering.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/SmallLp.h"

#include <algorithm>
#include <cmath>

namespace cleave {
namespace rt {
namespace lp {

namespace {

/// After this many pivots that do not move the objective, Bland's rule.
constexpr unsigned DegenerateRun = 50;
/// A safety net: the simplex visits at most this many bases.
constexpr unsigned MaxPivots = 100000;

class Tableau {
public:
  Tableau(size_t Rows, size_t Cols)
      : M(Rows), Cols(Cols), T(Rows * (Cols + 1), 0.0), Basis(Rows, 0),
        Reduced(Cols + 1, 0.0) {}

  double &at(size_t R, size_t C) { return T[R * (Cols + 1) + C]; }
  double &rhs(size_t R) { return at(R, Cols); }

  /// Reduced costs of \p Cost (one per column) for the current basis; the
  /// last entry is minus the objective.
  void price(const std::vector<double> &Cost) {
    for (size_t C = 0; C < Cols; ++C)
      Reduced[C] = Cost[C];
    Reduced[Cols] = 0;
    for (size_t R = 0; R < M; ++R) {
      double CB = Cost[Basis[R]];
      if (CB == 0)
        continue;
      for (size_t C = 0; C <= Cols; ++C)
        Reduced[C] -= CB * at(R, C);
    }
  }

  void pivot(size_t PR, size_t PC) {
    double P = at(PR, PC);
    for (size_t C = 0; C <= Cols; ++C)
      at(PR, C) /= P;
    for (size_t R = 0; R < M; ++R) {
      if (R == PR)
        continue;
      double F = at(R, PC);
      if (F == 0)
        continue;
      for (size_t C = 0; C <= Cols; ++C)
        at(R, C) -= F * at(PR, C);
      at(R, PC) = 0;
    }
    double F = Reduced[PC];
    if (F != 0) {
      for (size_t C = 0; C <= Cols; ++C)
        Reduced[C] -= F * at(PR, C);
      Reduced[PC] = 0;
    }
    Basis[PR] = PC;
  }

  /// Runs the simplex on the priced reduced costs over the columns below
  /// \p Enterable. False when unbounded.
  bool run(size_t Enterable, double Eps) {
    unsigned Degenerate = 0;
    for (unsigned It = 0; It < MaxPivots; ++It) {
      bool Bland = Degenerate >= DegenerateRun;
      size_t In = Cols;
      double Best = -Eps;
      for (size_t C = 0; C < Enterable; ++C)
        if (Reduced[C] < Best) {
          In = C;
          if (Bland)
            break;
          Best = Reduced[C];
        }
      if (In == Cols)
        return true;
      size_t Out = M;
      double Ratio = HUGE_VAL;
      for (size_t R = 0; R < M; ++R) {
        double A = at(R, In);
        if (A <= Eps)
          continue;
        double Q = rhs(R) / A;
        if (Q < Ratio - Eps ||
            (Q <= Ratio + Eps && Out != M && Basis[R] < Basis[Out])) {
          Ratio = std::min(Q, Ratio);
          Out = R;
        }
      }
      if (Out == M)
        return false;
      Degenerate = Ratio <= Eps ? Degenerate + 1 : 0;
      pivot(Out, In);
    }
    return true;
  }

  size_t M, Cols;
  std::vector<double> T;
  std::vector<size_t> Basis;
  std::vector<double> Reduced;
};

} // namespace

Solution minimize(const Problem &P) {
  size_t N = P.Cost.size(), M = P.Rows.size();
  // Rows with a negative right-hand side are negated, so every B >= 0 and
  // the slacks and artificials form a feasible starting basis.
  std::vector<Row> Rows = P.Rows;
  double Scale = 1;
  for (Row &R : Rows) {
    R.A.resize(N, 0.0);
    if (R.B < 0) {
      R.B = -R.B;
      for (double &A : R.A)
        A = -A;
      if (R.S != Sense::Equal)
        R.S = R.S == Sense::LessEqual ? Sense::GreaterEqual : Sense::LessEqual;
    }
    for (double A : R.A)
      Scale = std::max(Scale, std::fabs(A));
  }
  const double Eps = 1e-9 * Scale;
  size_t Slacks = 0, Artificials = 0;
  for (const Row &R : Rows) {
    Slacks += R.S != Sense::Equal;
    Artificials += R.S != Sense::LessEqual;
  }
  size_t FirstSlack = N, FirstArt = N + Slacks, Cols = FirstArt + Artificials;
  Tableau T(M, Cols);
  size_t S = FirstSlack, A = FirstArt;
  for (size_t I = 0; I < M; ++I) {
    const Row &R = Rows[I];
    for (size_t J = 0; J < N; ++J)
      T.at(I, J) = R.A[J];
    T.rhs(I) = R.B;
    if (R.S == Sense::LessEqual) {
      T.at(I, S) = 1;
      T.Basis[I] = S++;
      continue;
    }
    if (R.S == Sense::GreaterEqual)
      T.at(I, S++) = -1;
    T.at(I, A) = 1;
    T.Basis[I] = A++;
  }

  Solution Out;
  if (Artificials) {
    std::vector<double> Phase1(Cols, 0.0);
    std::fill(Phase1.begin() + FirstArt, Phase1.end(), 1.0);
    T.price(Phase1);
    T.run(Cols, Eps);
    double RhsScale = 1;
    for (const Row &R : Rows)
      RhsScale = std::max(RhsScale, R.B);
    if (-T.Reduced[Cols] > 1e-9 * RhsScale) {
      Out.St = Status::Infeasible;
      return Out;
    }
    // An artificial left in the basis (at 0) leaves it for any other column
    // of its row; a row with none is redundant and keeps it at 0.
    for (size_t R = 0; R < M; ++R) {
      if (T.Basis[R] < FirstArt)
        continue;
      for (size_t C = 0; C < FirstArt; ++C)
        if (std::fabs(T.at(R, C)) > Eps) {
          T.pivot(R, C);
          break;
        }
    }
  }
  std::vector<double> Cost(Cols, 0.0);
  std::copy(P.Cost.begin(), P.Cost.end(), Cost.begin());
  T.price(Cost);
  if (!T.run(FirstArt, Eps)) {
    Out.St = Status::Unbounded;
    return Out;
  }
  Out.St = Status::Optimal;
  Out.X.assign(N, 0.0);
  for (size_t R = 0; R < M; ++R)
    if (T.Basis[R] < N)
      Out.X[T.Basis[R]] = std::max(T.rhs(R), 0.0);
  Out.Objective = 0;
  for (size_t J = 0; J < N; ++J)
    Out.Objective += P.Cost[J] * Out.X[J];
  return Out;
}

} // namespace lp
} // namespace rt
} // namespace cleave
