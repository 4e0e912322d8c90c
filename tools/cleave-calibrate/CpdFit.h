//===- CpdFit.h - Least-squares fit of Luo's CPD curve ----------*- C++ -*-===//
//
// Part of cleave-calibrate (no LLVM). Luo's compute parallel degree (digest
// 000 §1.5) is an empirical curve in the active warps per SM, N:
//
//   (3.4) CPD1 = (c - P)(N - b) + a
//   (3.5) CPD2 = (n / (m - 1)) sqrt((m - 1)^2 - (N - m)^2) + a
//   (3.6) n    = d (P - c)^2,   CPD = min{CPD1, CPD2}
//
// with P the kernel's compute fraction (3.3) and m the most warps an SM
// runs. The thesis fits a, b, c and d per GPU "with a microbenchmark" and
// gives no procedure. Here: curves measured at several P (one P alone
// cannot separate c from the slope (c - P) and d from the height
// d (P - c)^2), m fixed to the GPU's warps per SM, and a, b, c, d chosen by
// Levenberg-Marquardt least squares over all points at once, from several
// starting points (the min of two branches has local minima). The curve
// itself is evaluated by cleave-rt-model (the printed form, no clamping:
// the fit describes the measured points; clamping belongs to the model).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_CALIBRATE_CPDFIT_H
#define CLEAVE_CALIBRATE_CPDFIT_H

#include "cleave/rt/LuoModel.h"

#include <string>
#include <vector>

namespace cleave {
namespace calibrate {

/// CPD measured at one compute fraction P for several warp counts.
struct CpdCurve {
  double P = 1;
  std::vector<double> Warps; ///< N_act, 1 <= N <= m
  std::vector<double> Cpd;   ///< measured CPD at each N
};

struct CpdFitResult {
  rt::luo::CpdFit Fit;  ///< a, b, c, d and the m it was fitted with
  double Rms = 0;       ///< root mean square residual, in CPD units
  double RSquared = 0;  ///< 1 - SSE / total sum of squares
  size_t Points = 0;
  unsigned Iterations = 0; ///< of the winning start
  std::string Error;       ///< empty on success
  bool ok() const { return Error.empty(); }
};

/// The model's CPD (min of (3.4) and (3.5)) at \p N, \p P.
double cpdModel(const rt::luo::CpdFit &F, double N, double P);

/// Fits a, b, c, d to \p Curves with m = \p M. Fails (Error set) with fewer
/// than 4 points, points outside [1, M], non-finite values, or when no
/// start converges to a finite fit.
CpdFitResult fitCpd(const std::vector<CpdCurve> &Curves, double M);

} // namespace calibrate
} // namespace cleave

#endif
