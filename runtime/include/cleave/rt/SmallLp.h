//===- SmallLp.h - A dense simplex for the planner's small LPs --*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). The multi-GPU transfer planner
// (LinkStates.h) solves linear programs with a handful of rows (two per GPU,
// a few more for a load split) and up to 4^n columns (one per host-link
// state): small enough for a dense two-phase tableau simplex. No LP library
// is a dependency of the runtime, and none is needed at this size.
//
// Dantzig's rule picks the entering column; after a run of degenerate
// pivots the solver switches to Bland's rule, which cannot cycle.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_SMALLLP_H
#define CLEAVE_RT_SMALLLP_H

#include <cstddef>
#include <vector>

namespace cleave {
namespace rt {
namespace lp {

enum class Sense { LessEqual, GreaterEqual, Equal };

/// One constraint: sum_j A[j] x_j (Sense) B. A may be shorter than the
/// variables (missing coefficients are 0).
struct Row {
  std::vector<double> A;
  Sense S = Sense::LessEqual;
  double B = 0;
};

/// Minimize Cost . x subject to Rows and x >= 0.
struct Problem {
  std::vector<double> Cost;
  std::vector<Row> Rows;
};

enum class Status { Optimal, Infeasible, Unbounded };

struct Solution {
  Status St = Status::Infeasible;
  double Objective = 0;
  std::vector<double> X; ///< one value per variable, when Optimal
};

/// Solves \p P exactly up to rounding (a tolerance of 1e-9 relative to the
/// largest coefficient decides signs).
Solution minimize(const Problem &P);

} // namespace lp
} // namespace rt
} // namespace cleave

#endif
