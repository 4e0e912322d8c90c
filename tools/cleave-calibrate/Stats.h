//===- Stats.h - Summaries of repeated measurements -------------*- C++ -*-===//
//
// Part of cleave-calibrate (no LLVM). Every timed quantity in a profile is
// measured several times; the profile records the median and the spread, so
// a reader can tell a stable number from a noisy one.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_CALIBRATE_STATS_H
#define CLEAVE_CALIBRATE_STATS_H

#include <cstddef>
#include <vector>

namespace cleave {
namespace calibrate {

/// The median, extremes and mean of a set of repeated measurements.
struct Summary {
  double Median = 0;
  double Min = 0;
  double Max = 0;
  double Mean = 0;
  size_t Count = 0;

  /// (max - min) / median: 0 for a perfectly stable quantity; 0 when there
  /// is nothing to compare.
  double spread() const;
};

/// Summarizes \p Values (any order). An empty set gives Count == 0.
Summary summarize(std::vector<double> Values);

/// The median of \p Values (0 when empty).
double median(std::vector<double> Values);

/// The least-squares line Y = Intercept + Slope X through the points.
struct Line {
  double Intercept = 0;
  double Slope = 0;
};
/// Fits \p X, \p Y (the same length); a flat line through the mean when
/// the X do not vary, zero when there are no points.
Line fitLine(const std::vector<double> &X, const std::vector<double> &Y);

} // namespace calibrate
} // namespace cleave

#endif
