//===- Stats.cpp - Summaries of repeated measurements ---------------------===//
//
// Part of cleave-calibrate (no LLVM). See Stats.h.
//
//===----------------------------------------------------------------------===//
#include "Stats.h"

#include <algorithm>
#include <cmath>

namespace cleave {
namespace calibrate {

double Summary::spread() const {
  if (Count < 2 || Median == 0)
    return 0;
  return (Max - Min) / std::fabs(Median);
}

double median(std::vector<double> Values) {
  if (Values.empty())
    return 0;
  std::sort(Values.begin(), Values.end());
  size_t N = Values.size();
  return N % 2 ? Values[N / 2] : 0.5 * (Values[N / 2 - 1] + Values[N / 2]);
}

Summary summarize(std::vector<double> Values) {
  Summary S;
  if (Values.empty())
    return S;
  std::sort(Values.begin(), Values.end());
  S.Count = Values.size();
  S.Min = Values.front();
  S.Max = Values.back();
  double Sum = 0;
  for (double V : Values)
    Sum += V;
  S.Mean = Sum / double(S.Count);
  S.Median = median(std::move(Values));
  return S;
}

Line fitLine(const std::vector<double> &X, const std::vector<double> &Y) {
  Line L;
  size_t N = std::min(X.size(), Y.size());
  if (!N)
    return L;
  double MX = 0, MY = 0;
  for (size_t I = 0; I < N; ++I) {
    MX += X[I];
    MY += Y[I];
  }
  MX /= double(N);
  MY /= double(N);
  double Sxx = 0, Sxy = 0;
  for (size_t I = 0; I < N; ++I) {
    Sxx += (X[I] - MX) * (X[I] - MX);
    Sxy += (X[I] - MX) * (Y[I] - MY);
  }
  L.Slope = Sxx > 0 ? Sxy / Sxx : 0;
  L.Intercept = MY - L.Slope * MX;
  return L;
}

} // namespace calibrate
} // namespace cleave
