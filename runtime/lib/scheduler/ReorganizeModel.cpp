//===- ReorganizeModel.cpp - When sorting items by trip count pays -------===//
//
// Part of Cleave's runtime (no LLVM). See ReorganizeModel.h.
//
//===----------------------------------------------------------------------===//
#include "ReorganizeModel.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

namespace cleave {
namespace rt {

namespace {

std::atomic<uint64_t> Integrations{0};

double integrateNormalMax(unsigned W) {
  ++Integrations;
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

} // namespace

double expectedNormalMax(unsigned W) {
  if (W <= 1)
    return 0;
  static std::mutex Mutex;
  static std::map<unsigned, double> Known;
  std::lock_guard<std::mutex> Lock(Mutex);
  auto [It, New] = Known.try_emplace(W, 0.0);
  if (New)
    It->second = integrateNormalMax(W);
  return It->second;
}

uint64_t expectedNormalMaxIntegrations() { return Integrations; }

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
  S.ExpectedWarpMax =
      std::min<double>(Max, S.Mean + expectedNormalMax(S.Lanes) * S.StdDev);
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
    F.PerWarpIterMs = S.WarpMaxOriginal > 0
                          ? std::max(0.0, H.OriginalMs) / S.WarpMaxOriginal
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

namespace {

/// The access's width and the thread coefficient of an `at (affine ...)`
/// form, and whether it names a loop variable.
struct AffineAt {
  long long ThreadCoef = 0;
  bool InLoop = false;
};

AffineAt parseAt(const std::string &Line) {
  AffineAt A;
  size_t P = Line.find("(tid.x ");
  if (P != std::string::npos)
    A.ThreadCoef = std::atoll(Line.c_str() + P + 7);
  for (size_t L = Line.find("(L"); L != std::string::npos;
       L = Line.find("(L", L + 2))
    if (L + 2 < Line.size() && std::isdigit((unsigned char)Line[L + 2]))
      A.InLoop = true;
  return A;
}

/// Whether the reason of an `unknown` access names an add-recurrence whose
/// step is a constant of at most MaxStreamStep bytes: `{start,+,4}<loop>`.
bool isStreamReason(const std::string &Line) {
  for (size_t P = Line.find(",+,"); P != std::string::npos;
       P = Line.find(",+,", P + 3)) {
    const char *S = Line.c_str() + P + 3;
    char *End = nullptr;
    long long Step = std::strtoll(S, &End, 10);
    if (End != S && *End == '}' && Step != 0 &&
        std::llabs(Step) <= MaxStreamStep)
      return true;
  }
  return false;
}

} // namespace

std::vector<std::string> itemStreamParams(const std::string &Footprints) {
  std::map<long, std::string> Names;
  std::vector<std::string> Out;
  auto Add = [&](long Param) {
    auto It = Names.find(Param);
    std::string N =
        It != Names.end() ? It->second : "param " + std::to_string(Param);
    if (std::find(Out.begin(), Out.end(), N) == Out.end())
      Out.push_back(N);
  };
  long Access = -1, Width = 0;
  size_t Pos = 0;
  while (Pos < Footprints.size()) {
    size_t End = Footprints.find('\n', Pos);
    if (End == std::string::npos)
      End = Footprints.size();
    std::string Line = Footprints.substr(Pos, End - Pos);
    Pos = End + 1;
    Line.erase(0, Line.find_first_not_of(' '));
    char Name[128];
    long Param = 0;
    if (std::sscanf(Line.c_str(), "arg %ld ptr %127s", &Param, Name) == 2) {
      Names[Param] = Name;
    } else if (std::sscanf(Line.c_str(), "unknown %ld read", &Param) == 1) {
      if (isStreamReason(Line))
        Add(Param);
    } else if (std::sscanf(Line.c_str(), "access %ld read %ld", &Param,
                           &Width) == 2) {
      Access = Param;
    } else if (Line.rfind("access ", 0) == 0 || Line == "end") {
      Access = -1;
    } else if (Access >= 0 && Line.rfind("at (affine", 0) == 0) {
      AffineAt A = parseAt(Line);
      if (A.InLoop && Width > 0 && std::llabs(A.ThreadCoef) == Width)
        Add(Access);
    }
  }
  return Out;
}

uint64_t reorganizeSampleBlocks(uint64_t Blocks, uint64_t BlockThreads) {
  uint64_t Want = std::max<uint64_t>(
      (Blocks + ReorganizeSampleDivisor - 1) / ReorganizeSampleDivisor,
      (ReorganizeSampleThreads + BlockThreads - 1) /
          std::max<uint64_t>(1, BlockThreads));
  return std::min(Blocks, Want);
}

double predictedSortMs(uint64_t Threads, unsigned KeyBits) {
  unsigned Passes = KeyBits > 8 ? 2 : 1;
  return ReorganizeSortFixedMs +
         ReorganizeSortMsPerThreadPass * double(Threads) * Passes;
}

double explorationCostMs(const ReorganizeHistory &H, uint64_t Blocks,
                         uint64_t Threads, double LoadMs) {
  uint64_t Block =
      std::max<uint64_t>(1, Threads / std::max<uint64_t>(1, Blocks));
  uint64_t Sample = reorganizeSampleBlocks(Blocks, Block) * Block;
  double Share = Threads ? double(Sample) / double(Threads) : 1;
  return ReorganizeInspectorShare * std::max(0.0, H.OriginalMs) * Share +
         predictedSortMs(Sample, H.KeyBits) + ReorganizeExploreFixedMs + LoadMs;
}

bool explorationPays(const ReorganizeHistory &H, uint64_t Blocks,
                     uint64_t Threads, const ReorganizeBudget &B,
                     std::string *Why) {
  double Cost = explorationCostMs(H, Blocks, Threads, B.LoadMs);
  // The launches so far are the launches to come: the program's length,
  // as far as it is known.
  double Gain = double(std::max<uint64_t>(1, H.Launches)) * ReorganizeMaxGain *
                std::max(0.0, H.OriginalMs);
  char Text[256];
  if (Gain <= (1 + ReorganizeMargin) * Cost) {
    std::snprintf(Text, sizeof(Text),
                  "exploring does not pay yet: at most %.3f ms to gain over "
                  "%llu launches against %.3f ms to explore",
                  Gain, (unsigned long long)H.Launches, Cost);
  } else if (B.SpentMs + Cost > ReorganizeLearnShare * B.ElapsedMs) {
    std::snprintf(Text, sizeof(Text),
                  "exploring (%.3f ms) does not fit the model's budget yet "
                  "(%.1f %% of %.3f ms so far, %.3f ms spent)",
                  Cost, 100 * ReorganizeLearnShare, B.ElapsedMs, B.SpentMs);
  } else {
    return true;
  }
  if (Why)
    *Why = Text;
  return false;
}

TripStats scaleTripStats(const TripStats &S, uint64_t Threads) {
  TripStats T = S;
  if (!S.Threads || Threads == S.Threads)
    return T;
  double F = double(Threads) / double(S.Threads);
  T.Threads = Threads;
  T.WarpMaxOriginal *= F;
  T.WarpMaxSorted *= F;
  return T;
}

ReorganizeAction chooseReorganizeAction(ReorganizeMode Mode,
                                        const ReorganizeHistory &H,
                                        uint64_t Threads, unsigned Lanes,
                                        uint64_t Blocks,
                                        const ReorganizeBudget &B) {
  if (Mode == ReorganizeMode::Off || Threads <= ReorganizeWarpThreads)
    return ReorganizeAction::Original;
  if (Mode == ReorganizeMode::Force)
    return ReorganizeAction::Step;
  // Lanes that run alone wait for nobody: nothing to even out.
  if (H.Off || Lanes <= 1 || !H.Refused.empty())
    return ReorganizeAction::Original;
  // Nothing predicts a gain at a kernel's first launch: it never pays for
  // a trial there.
  if (H.Launches == 0)
    return ReorganizeAction::Original;
  if (H.OriginalMs < 0)
    return B.SpentMs + ReorganizeMeasureMs <= ReorganizeLearnShare * B.ElapsedMs
               ? ReorganizeAction::MeasureOriginal
               : ReorganizeAction::Original;
  if (!H.Explored)
    return explorationPays(H, Blocks, Threads, B) ? ReorganizeAction::Step
                                                  : ReorganizeAction::Original;
  if (H.Pays)
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
