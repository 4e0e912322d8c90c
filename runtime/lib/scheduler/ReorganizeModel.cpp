//===- ReorganizeModel.cpp - When sorting items by trip count pays -------===//
//
// Part of Cleave's runtime (no LLVM). See ReorganizeModel.h.
//
//===----------------------------------------------------------------------===//
#include "ReorganizeModel.h"

#include <algorithm>
#include <cmath>

namespace cleave {
namespace rt {

double expectedNormalMax(unsigned W) {
  if (W <= 1)
    return 0;
  // E[max] = integral of x W phi(x) Phi(x)^(W-1) dx; the integrand is
  // negligible outside [-9, 9] for the warp widths used here.
  const double Step = 1e-3;
  double Sum = 0;
  for (double X = -9; X <= 9; X += Step) {
    double Phi = 0.5 * std::erfc(-X / std::sqrt(2.0));
    double Pdf = std::exp(-0.5 * X * X) / std::sqrt(2 * M_PI);
    Sum += X * W * Pdf * std::pow(Phi, double(W - 1)) * Step;
  }
  return Sum;
}

unsigned tripCountKeyBits(uint32_t Max) {
  unsigned B = 0;
  while (B < 32 && (uint64_t(1) << B) <= Max)
    ++B;
  return B;
}

namespace {

uint32_t clampCount(int32_t C) { return C < 0 ? 0u : uint32_t(C); }


/// One stable counting pass over Src by Digit(thread), into Dst.
template <class DigitFn>
void countingPass(const std::vector<int32_t> &Src, std::vector<int32_t> &Dst,
                  uint32_t Buckets, DigitFn Digit) {
  std::vector<uint64_t> Start(Buckets + 1, 0);
  for (int32_t T : Src)
    ++Start[Digit(T) + 1];
  for (uint32_t B = 0; B < Buckets; ++B)
    Start[B + 1] += Start[B];
  Dst.resize(Src.size());
  for (int32_t T : Src)
    Dst[Start[Digit(T)]++] = T;
}

} // namespace

void sortByTripCount(const int32_t *Counts, uint64_t N,
                     std::vector<int32_t> &Perm, unsigned &KeyBits) {
  uint32_t Max = 0;
  for (uint64_t I = 0; I < N; ++I)
    Max = std::max(Max, clampCount(Counts[I]));
  KeyBits = tripCountKeyBits(Max);
  std::vector<int32_t> Src(N);
  for (uint64_t I = 0; I < N; ++I)
    Src[I] = int32_t(I);
  // Descending: the key is Max - count, sorted ascending and stably.
  auto Key = [&](int32_t T) { return Max - clampCount(Counts[T]); };
  if (KeyBits <= 16) {
    // One pass: a bucket per count.
    countingPass(Src, Perm, Max + 1, Key);
    return;
  }
  // Least significant digit first, 11 bits a pass, over the key bits only.
  constexpr unsigned DigitBits = 11;
  for (unsigned Shift = 0; Shift < KeyBits; Shift += DigitBits) {
    countingPass(Src, Perm, 1u << DigitBits, [&](int32_t T) {
      return (Key(T) >> Shift) & ((1u << DigitBits) - 1);
    });
    Src.swap(Perm);
  }
  Perm.swap(Src);
}

TripStats tripStatsFromSums(uint64_t N, unsigned Lanes, double Sum,
                            double SumSq, uint32_t Max, double WarpMaxOriginal,
                            double WarpMaxSorted) {
  TripStats S;
  S.Threads = N;
  S.Lanes = std::max(1u, Lanes);
  if (!N)
    return S;
  S.Max = Max;
  S.KeyBits = tripCountKeyBits(Max);
  S.Mean = Sum / double(N);
  S.StdDev = std::sqrt(std::max(0.0, SumSq / double(N) - S.Mean * S.Mean));
  S.Cv = S.Mean > 0 ? S.StdDev / S.Mean : 0;
  // The normal approximation's expected warp maximum, never above the
  // largest count.
  S.ExpectedWarpMax = std::min<double>(
      Max, S.Mean + expectedNormalMax(S.Lanes) * S.StdDev);
  S.PredictedWee = S.ExpectedWarpMax > 0 ? S.Mean / S.ExpectedWarpMax : 1;
  S.WarpMaxOriginal = WarpMaxOriginal;
  S.WarpMaxSorted = WarpMaxSorted;
  S.WeeOriginal = WarpMaxOriginal > 0 ? Sum / (S.Lanes * WarpMaxOriginal) : 1;
  S.WeeSorted = WarpMaxSorted > 0 ? Sum / (S.Lanes * WarpMaxSorted) : 1;
  return S;
}

TripStats tripStats(const int32_t *Counts, uint64_t N, const int32_t *Perm,
                    unsigned Lanes, unsigned BlockThreads) {
  Lanes = std::max(1u, Lanes);
  double Sum = 0, Sq = 0;
  uint32_t Max = 0;
  for (uint64_t I = 0; I < N; ++I) {
    double C = clampCount(Counts[I]);
    Sum += C;
    Sq += C * C;
    Max = std::max(Max, clampCount(Counts[I]));
  }
  // Warps are Lanes consecutive threads of a block.
  uint64_t Block = BlockThreads ? BlockThreads : std::max<uint64_t>(N, 1);
  auto WarpMaxSum = [&](auto Item) {
    double W = 0;
    for (uint64_t B0 = 0; B0 < N; B0 += Block)
      for (uint64_t W0 = B0; W0 < std::min(N, B0 + Block); W0 += Lanes) {
        uint32_t M = 0;
        for (uint64_t I = W0; I < std::min({N, B0 + Block, W0 + Lanes}); ++I)
          M = std::max(M, clampCount(Counts[Item(I)]));
        W += M;
      }
    return W;
  };
  double Original = WarpMaxSum([](uint64_t I) { return I; });
  double Sorted =
      Perm ? WarpMaxSum([&](uint64_t I) { return Perm[I]; }) : Original;
  return tripStatsFromSums(N, Lanes, Sum, Sq, Max, Original, Sorted);
}

ReorganizeForecast forecastReorganize(const TripStats &S,
                                      const ReorganizeHistory &H,
                                      double CostMs) {
  ReorganizeForecast F;
  F.OriginalMs = H.OriginalMs;
  F.CostMs = CostMs;
  // Two points (the original and the reorganized kernel of one launch
  // shape) fit t = F + c S; the reorganized time came with its own S.
  double DS = H.WarpMaxOriginal - H.WarpMaxSorted;
  if (H.OriginalMs > 0 && H.ReorganizedMs > 0 && DS > 0 &&
      H.OriginalMs > H.ReorganizedMs) {
    F.PerWarpIterMs = (H.OriginalMs - H.ReorganizedMs) / DS;
    F.FixedMs = H.OriginalMs - F.PerWarpIterMs * H.WarpMaxOriginal;
    F.TwoPoint = F.FixedMs >= 0;
  }
  if (!F.TwoPoint) {
    // The loop is all of the kernel: the gain's upper bound.
    F.FixedMs = 0;
    F.PerWarpIterMs =
        S.WarpMaxOriginal > 0 ? std::max(0.0, H.OriginalMs) / S.WarpMaxOriginal
                              : 0;
  }
  // The original's time at this launch's counts, and the reorganized one's.
  double Orig = F.FixedMs + F.PerWarpIterMs * S.WarpMaxOriginal;
  F.ReorganizedMs = F.FixedMs + F.PerWarpIterMs * S.WarpMaxSorted;
  F.OriginalMs = Orig;
  F.GainMs = Orig - F.ReorganizedMs;
  F.Pays = H.OriginalMs > 0 && F.GainMs > (1 + ReorganizeMargin) * CostMs &&
           F.GainMs > ReorganizeMinGain * Orig;
  return F;
}

ReorganizeAction chooseReorganizeAction(ReorganizeMode Mode,
                                        const ReorganizeHistory &H,
                                        uint64_t Threads, unsigned Lanes) {
  if (Mode == ReorganizeMode::Off || Threads <= ReorganizeWarpThreads)
    return ReorganizeAction::Original;
  if (Mode == ReorganizeMode::Force)
    return ReorganizeAction::Step;
  // Lanes that run alone wait for nobody: nothing to even out.
  if (H.Off || Lanes <= 1)
    return ReorganizeAction::Original;
  if (H.OriginalMs < 0)
    return ReorganizeAction::MeasureOriginal;
  if (!H.Explored || H.Pays)
    return ReorganizeAction::Step;
  return ReorganizeAction::Original;
}

double noteReorganizeStep(ReorganizeHistory &H, const TripStats &S,
                          double InspectorMs, double SortMs,
                          double ReorganizedMs, bool Force) {
  H.InspectorMs = InspectorMs;
  H.SortMs = SortMs;
  H.ReorganizedMs = ReorganizedMs;
  H.WarpMaxOriginal = S.WarpMaxOriginal;
  H.WarpMaxSorted = S.WarpMaxSorted;
  ++H.Steps;
  if (H.OriginalMs < 0)
    return 0;
  double Gain = H.OriginalMs - (InspectorMs + SortMs + ReorganizedMs);
  // The measured kernel gain replaces the lane-max prediction: a
  // reorganized kernel that loses (its accesses no longer contiguous per
  // warp, as sorted SpMV rows are) or the whole step losing turns the step
  // off; a gain that does not cover the step's cost by the margin leaves
  // it to the original.
  double KernelGain = H.OriginalMs - ReorganizedMs;
  H.Pays = KernelGain > (1 + ReorganizeMargin) * (InspectorMs + SortMs) &&
           KernelGain > ReorganizeMinGain * H.OriginalMs;
  if ((Gain < 0 || KernelGain <= 0) && !Force)
    H.Off = true;
  return Gain;
}

} // namespace rt
} // namespace cleave
