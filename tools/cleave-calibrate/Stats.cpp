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

} // namespace calibrate
} // namespace cleave
