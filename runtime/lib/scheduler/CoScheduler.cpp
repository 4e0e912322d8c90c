//===- CoScheduler.cpp - Kernelet's slice co-scheduling decisions ---------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/CoScheduler.h and
// docs/coschedule.md.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/CoScheduler.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace cleave {
namespace rt {

SliceSizeSearch::SliceSizeSearch(unsigned Sms, unsigned MaxBlocksPerSm,
                                 uint64_t GridBlocks, double MaxOverhead)
    : Sms(std::max(1u, Sms)), MaxBlocksPerSm(MaxBlocksPerSm),
      GridBlocks(GridBlocks), MaxOverhead(MaxOverhead) {
  settle();
}

void SliceSizeSearch::settle() {
  // Past the occupancy limit, or a candidate that is the whole grid: the
  // kernel runs unsliced.
  if (K > MaxBlocksPerSm || uint64_t(K) * Sms >= GridBlocks) {
    Done = true;
    Size = GridBlocks;
  }
}

void SliceSizeSearch::report(double Overhead) {
  if (Done)
    return;
  if (Overhead <= MaxOverhead) {
    Done = true;
    Size = uint64_t(K) * Sms;
    return;
  }
  ++K;
  settle();
}

Result findSliceSize(unsigned Sms, unsigned MaxBlocksPerSm, uint64_t GridBlocks,
                     const SliceOverheadFn &Measure, uint64_t &Out,
                     double MaxOverhead) {
  if (!Sms || !GridBlocks)
    return Result::error(ErrorCode::InvalidValue,
                         "slice size: no SMs or no blocks");
  SliceSizeSearch S(Sms, MaxBlocksPerSm, GridBlocks, MaxOverhead);
  while (!S.done()) {
    double Overhead = 0;
    if (Result R = Measure(S.candidate(), Overhead); !R.ok())
      return R;
    S.report(Overhead);
  }
  Out = S.result();
  return Result::success();
}

CoScheduler::CoScheduler(const corun::SmLimits &Sm, const CoScheduleOptions &O)
    : Sm(Sm), Opts(O) {}

Result CoScheduler::submit(const PendingLaunch &L) {
  auto Bad = [&](const std::string &Why) {
    return Result::error(ErrorCode::InvalidValue, "co-scheduler: launch " +
                                                      std::to_string(L.Id) +
                                                      ": " + Why);
  };
  if (Launches.count(L.Id) || Completed.count(L.Id))
    return Bad("submitted twice");
  if (!L.Blocks)
    return Bad("no blocks");
  for (uint64_t W : L.WaitsFor)
    if (!Launches.count(W) && !Completed.count(W))
      return Bad("waits for unknown launch " + std::to_string(W));
  Entry E;
  E.L = L;
  if (L.Model) {
    // A kernel's solo prediction is made once (a kernel is its name and
    // launch configuration, whose inputs do not change).
    auto It = Solos.find(L.Kernel);
    if (It == Solos.end()) {
      corun::SoloPrediction S;
      if (Result R = corun::predictSolo(*L.Model, Sm, S); !R.ok())
        return Bad(R.message());
      It = Solos.emplace(L.Kernel, S).first;
    }
    E.Solo = It->second;
  }
  Launches.emplace(L.Id, std::move(E));
  PlannedFor.clear(); // an arrival: re-plan (Alg. 1)
  return Result::success();
}

Result CoScheduler::finished(uint64_t Id, uint64_t Blocks) {
  auto It = Launches.find(Id);
  if (It == Launches.end() || It->second.Finished + Blocks > It->second.Issued)
    return Result::error(ErrorCode::InvalidValue,
                         "co-scheduler: launch " + std::to_string(Id) +
                             " finished blocks it was not issued");
  Entry &E = It->second;
  E.Finished += Blocks;
  if (E.Finished == E.L.Blocks) {
    Completed.insert(Id);
    Launches.erase(It);
    PlannedFor.clear(); // a completion: re-plan (Alg. 1)
  }
  return Result::success();
}

bool CoScheduler::unissue(const Slice &S) {
  auto It = Launches.find(S.Launch);
  if (It == Launches.end() || It->second.Issued != S.End ||
      S.Begin < It->second.Finished || S.Begin > S.End)
    return false;
  It->second.Issued = S.Begin;
  PlannedFor.clear(); // the ready set may grow back
  return true;
}

void CoScheduler::abandon(uint64_t Id) {
  if (Launches.erase(Id)) {
    Completed.insert(Id);
    PlannedFor.clear();
  }
}

bool CoScheduler::done() const { return Launches.empty(); }

bool CoScheduler::complete(uint64_t Id) const { return Completed.count(Id); }

bool CoScheduler::ready(const Entry &E) const {
  if (E.Issued == E.L.Blocks)
    return false;
  // Completed launches leave the map, so any earlier launch of the stream
  // still there has blocks to finish.
  for (auto &[Id, O] : Launches) {
    if (Id >= E.L.Id)
      break;
    if (O.L.Stream == E.L.Stream)
      return false;
  }
  return std::all_of(E.L.WaitsFor.begin(), E.L.WaitsFor.end(),
                     [&](uint64_t W) { return Completed.count(W) != 0; });
}

std::vector<uint64_t> CoScheduler::readySet() const {
  std::vector<uint64_t> Ready;
  int Best = 0;
  for (auto &[Id, E] : Launches) {
    if (!ready(E))
      continue;
    if (!Ready.empty() && E.L.Priority > Best)
      continue;
    if (Ready.empty() || E.L.Priority < Best)
      Ready.clear();
    Best = E.L.Priority;
    Ready.push_back(Id);
  }
  return Ready;
}

bool CoScheduler::pruned(const Entry &A, const Entry &B) const {
  return std::fabs(A.Solo->Pur - B.Solo->Pur) < Opts.PurThreshold &&
         std::fabs(A.Solo->Mur - B.Solo->Mur) < Opts.MurThreshold;
}

namespace {
corun::PairPrediction swapped(corun::PairPrediction P) {
  std::swap(P.Blocks[0], P.Blocks[1]);
  std::swap(P.CoIpc[0], P.CoIpc[1]);
  std::swap(P.SoloIpc[0], P.SoloIpc[1]);
  return P;
}
} // namespace

void CoScheduler::knownSolo(const std::string &K,
                            const corun::SoloPrediction &S) {
  Solos.emplace(K, S);
}

void CoScheduler::knownPair(const std::string &A, const std::string &B,
                            const corun::PairPrediction &P) {
  if (B < A)
    Pairs.emplace(std::make_pair(B, A), swapped(P));
  else
    Pairs.emplace(std::make_pair(A, B), P);
}

Result CoScheduler::pairOf(const Entry &A, const Entry &B,
                           corun::PairPrediction &P) {
  bool Swap = B.L.Kernel < A.L.Kernel;
  const Entry &X = Swap ? B : A, &Y = Swap ? A : B;
  auto Key = std::make_pair(X.L.Kernel, Y.L.Kernel);
  auto It = Pairs.find(Key);
  if (It == Pairs.end()) {
    corun::PairPrediction New;
    if (Result R = corun::predictPair(*X.L.Model, *Y.L.Model, *X.Solo, *Y.Solo,
                                      Sm, New, Opts.Pair);
        !R.ok()) {
      // Kernels that cannot share an SM never profit from pairing.
      if (R.code() != ErrorCode::NotSupported)
        return R;
      New = {};
    }
    It = Pairs.emplace(Key, New).first;
  }
  P = Swap ? swapped(It->second) : It->second;
  return Result::success();
}

bool CoScheduler::weigh(const Entry &A, const Entry &B,
                        const corun::PairPrediction &P, CoSchedulePlan &Times,
                        double &Score) const {
  const uint64_t Left[2] = {A.L.Blocks - A.Issued, B.L.Blocks - B.Issued};
  Times.InterleaveCycles = corun::interleaveCycles(
      *A.L.Model, *B.L.Model, *A.Solo, *B.Solo, P, Left, Sm.Sms);
  Times.SerialCycles = corun::soloCycles(*A.L.Model, *A.Solo, Left[0], Sm.Sms) +
                       corun::soloCycles(*B.L.Model, *B.Solo, Left[1], Sm.Sms);
  Times.Split = {};
  Score = P.Profit;
  using Rule = CoScheduleOptions::PartitionRule;
  if (Opts.Partition == Rule::Never ||
      !corun::predictPartition(*A.L.Model, *B.L.Model, *A.Solo, *B.Solo, Left,
                               Sm.Sms, Opts.PartitionGranularity, Times.Split)
           .ok())
    return false;
  bool Take = Opts.Partition == Rule::Always ||
              !(Times.InterleaveCycles > 0) ||
              Times.Split.PairCycles < Times.InterleaveCycles;
  if (Take && Times.SerialCycles > 0)
    Score = 1 - Times.Split.PairCycles / Times.SerialCycles;
  return Take;
}

Result CoScheduler::replan(const std::vector<uint64_t> &Ready) {
  PlannedFor = Ready;
  Plan = {};
  std::vector<std::pair<uint64_t, uint64_t>> Candidates, All;
  for (size_t I = 0; I < Ready.size(); ++I)
    for (size_t J = I + 1; J < Ready.size(); ++J) {
      const Entry &A = Launches.at(Ready[I]), &B = Launches.at(Ready[J]);
      if (!A.Solo || !B.Solo)
        continue;
      All.push_back({Ready[I], Ready[J]});
      if (pruned(A, B))
        ++Plan.Pruned;
      else
        Candidates.push_back({Ready[I], Ready[J]});
    }
  if (Candidates.empty())
    Candidates = All; // pruning must not leave nothing to weigh (§5.1)
  std::optional<std::pair<uint64_t, uint64_t>> Best;
  double BestScore = 0;
  // A forced split or ratio runs whatever its profit (a benchmark's
  // comparison).
  bool ForcedRatio = Opts.Pair.Forced[0] && Opts.Pair.Forced[1];
  bool Forced = Opts.Partition == CoScheduleOptions::PartitionRule::Always;
  for (auto [A, B] : Candidates) {
    corun::PairPrediction P;
    const Entry &EA = Launches.at(A), &EB = Launches.at(B);
    if (Result R = pairOf(EA, EB, P); !R.ok())
      return R;
    ++Plan.Evaluated;
    CoSchedulePlan Times;
    double Score = 0;
    bool Split = weigh(EA, EB, P, Times, Score);
    if ((Score >= Opts.MinProfit || (Forced && Split) ||
         (ForcedRatio && !Split && P.Blocks[0])) &&
        (!Best || Score > BestScore)) {
      Best = {A, B};
      BestScore = Score;
      Plan.Pair = P;
      Plan.InterleaveCycles = Times.InterleaveCycles;
      Plan.SerialCycles = Times.SerialCycles;
      Plan.Split = Times.Split;
      Plan.Partitioned = Split;
    }
  }
  if (Best) {
    Plan.Launches = {Best->first, Best->second};
    return Result::success();
  }
  Plan.Launches = {Ready.front()}; // oldest first
  if (!Opts.PairUnmodeled || Plan.Evaluated)
    return Result::success();
  // Nothing could be weighed: the two oldest unmodelled launches side by
  // side.
  for (uint64_t Id : Ready)
    if (Id != Ready.front() && !Launches.at(Id).Solo &&
        !Launches.at(Ready.front()).Solo) {
      Plan.Launches.push_back(Id);
      Plan.Modeled = false;
      break;
    }
  return Result::success();
}

uint64_t CoScheduler::take(Entry &E, uint64_t Blocks, unsigned PerSm,
                           std::vector<Slice> &Out) {
  uint64_t N = std::min(Blocks, E.L.Blocks - E.Issued);
  Out.push_back({E.L.Id, E.Issued, E.Issued + N, PerSm});
  E.Issued += N;
  return N;
}

Result CoScheduler::next(std::vector<Slice> &Out) {
  Out.clear();
  std::vector<uint64_t> Ready = readySet();
  if (Ready.empty())
    return Result::success();
  if (Ready != PlannedFor)
    if (Result R = replan(Ready); !R.ok())
      return R;
  if (Plan.Launches.size() == 1 || !Plan.Modeled) {
    for (uint64_t Id : Plan.Launches) {
      Entry &E = Launches.at(Id);
      if (E.Issued < E.L.Blocks)
        take(E, E.L.MinSliceBlocks ? E.L.MinSliceBlocks : E.L.Blocks, 0, Out);
    }
    return Result::success();
  }
  if (Plan.Partitioned) {
    // Each launch's remaining blocks at once, on its side of the split.
    for (unsigned I = 0; I < 2; ++I) {
      Entry &E = Launches.at(Plan.Launches[I]);
      if (E.Issued < E.L.Blocks) {
        take(E, E.L.Blocks - E.Issued, 0, Out);
        Out.back().SplitSms = Plan.Split.Sms[0];
        Out.back().Side = I + 1;
      }
    }
    return Result::success();
  }
  // P_i x SMs blocks each, k rounds so that neither is below its minimum.
  uint64_t Rounds = 1;
  for (int I = 0; I < 2; ++I) {
    uint64_t Per = uint64_t(Plan.Pair.Blocks[I]) * Sm.Sms;
    uint64_t Min = Launches.at(Plan.Launches[I]).L.MinSliceBlocks;
    Rounds = std::max(Rounds, (Min + Per - 1) / Per);
  }
  for (int I = 0; I < 2; ++I)
    take(Launches.at(Plan.Launches[I]), Rounds * Plan.Pair.Blocks[I] * Sm.Sms,
         Plan.Pair.Blocks[I], Out);
  return Result::success();
}

} // namespace rt
} // namespace cleave
