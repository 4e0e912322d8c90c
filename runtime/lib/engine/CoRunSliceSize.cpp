//===- CoRunSliceSize.cpp - A kernel's minimum slice, measured once -------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/CoRunGate.h and
// docs/coschedule.md ("Slice sizes"): a kernel's minimum slice (digest 003
// §3.4) comes from the performance cache; a kernel that has none there has
// it measured on the launches that run alone in the gate, which run once
// each as the program asked (first unsliced, then sliced at each candidate
// size), and the result is kept in the cache for later launches and runs.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/CoRunGate.h"

#include <algorithm>
#include <cstdio>

namespace cleave {
namespace rt {

uint64_t CoRunGate::defaultSlice(uint64_t Blocks) const {
  // About DefaultSlices slices, each whole waves of the device's SMs: the
  // fewer slices, the less their launches cost; the more, the sooner a
  // pair forms and a more urgent launch gets its turn.
  uint64_t Sms = Opts.Sm.Sms;
  uint64_t N =
      (Blocks + Opts.DefaultSlices - 1) / std::max(1u, Opts.DefaultSlices);
  N = std::max<uint64_t>(1, (N + Sms - 1) / Sms) * Sms;
  return std::min(N, Blocks);
}

std::string CoRunGate::sliceName(const KernelLaunchRequest &Req) {
  return Req.Kernel->Info->Name + " " + std::to_string(Req.Block[0]) + "x" +
         std::to_string(Req.Block[1]) + "x" + std::to_string(Req.Block[2]);
}

void CoRunGate::startPredictorLocked() {
  if (!Predictor.joinable())
    Predictor = std::thread([this] { predictorLoop(); });
  JobCond.notify_one();
}

void CoRunGate::lookUpSliceLocked(const std::string &Name) {
  SliceSize &S = SliceSizes[Name];
  if (!Opts.ReadSliceCache || S.Asking || S.Asked)
    return;
  S.Asking = true;
  SliceJobs.push_back({Name, 0});
  startPredictorLocked();
}

void CoRunGate::sliceJob(const std::string &Name, uint64_t Record) {
  if (Record) {
    E.recordSliceBlocks(Dev, Name, Record);
    return;
  }
  uint64_t Kept = E.cachedSliceBlocks(Dev, Name);
  std::lock_guard<std::mutex> Lock(Mutex);
  SliceSize &S = SliceSizes[Name];
  S.Asked = true;
  if (Kept && !S.Blocks) {
    S.Blocks = Kept;
    S.From = "cache";
  }
}

void CoRunGate::chooseSliceLocked(
    Waiting &W, uint64_t Blocks, bool Alone,
    const std::optional<corun::KernelModelInput> &Model) {
  W.MinSlice = defaultSlice(Blocks);
  W.SliceFrom = "default";
  SliceSize &S = SliceSizes[W.SliceName];
  if (S.Blocks) {
    W.MinSlice = std::min(S.Blocks, Blocks);
    W.SliceFrom = S.From;
    return;
  }
  // Measured only once the cache said it has none.
  if (!Opts.MeasureSlices || !S.Asked)
    return;
  // Measured only alone: beside another launch, the time is not the
  // kernel's own. One grid size throughout, so that the sliced and the
  // unsliced times compare.
  if (!Alone || (S.Search && S.Grid != Blocks))
    return;
  if (!S.Search) {
    unsigned PerSm =
        Model ? corun::blocksPerSm(*Model, Opts.Sm) : Opts.Sm.MaxBlocks;
    S.Search.emplace(Opts.Sm.Sms, std::max(1u, PerSm), Blocks);
    S.Grid = Blocks;
    if (S.Search->done()) {
      // A grid of one SM row or less: nothing smaller to measure, and
      // nothing to keep for the kernel's larger grids.
      S.Search.reset();
      return;
    }
  }
  if (!(S.WholeMs > 0)) {
    W.Measuring = Waiting::Measure::Whole;
    W.MinSlice = Blocks;
    W.SliceFrom = "measuring: unsliced";
    return;
  }
  W.Measuring = Waiting::Measure::Candidate;
  W.MinSlice = S.Search->candidate();
  W.SliceFrom = "measuring";
}

uint64_t CoRunGate::measuredLocked(Waiting &W, double HostMs) {
  Device *D = OnGpu ? &E.buffers().device(Dev) : nullptr;
  double Ms = HostMs;
  if (D && W.TimeStart && W.TimeEnd) {
    float GpuMs = 0;
    Ms = D->elapsedTime(W.TimeStart, W.TimeEnd, GpuMs).ok() ? GpuMs : -1;
  }
  for (EventHandle *Ev : {&W.TimeStart, &W.TimeEnd})
    if (*Ev) {
      (void)D->destroyEvent(*Ev);
      *Ev = nullptr;
    }
  auto It = SliceSizes.find(W.SliceName);
  if (W.Measuring == Waiting::Measure::None || W.Disturbed || Ms < 0 ||
      It == SliceSizes.end() || !It->second.Search)
    return 0;
  SliceSize &S = It->second;
  uint64_t Blocks = S.Grid;
  if (Opts.MeasuredMs)
    Ms = Opts.MeasuredMs(Blocks, W.Slices, Ms);
  if (!(Ms > 0))
    return 0;
  std::string Line = "cleave co-schedule: " + W.Name + ": minimum slice: ";
  char Buf[160];
  if (W.Measuring == Waiting::Measure::Whole) {
    S.WholeMs = Ms;
    std::snprintf(Buf, sizeof(Buf), "unsliced %llu blocks in %.3f ms",
                  (unsigned long long)Blocks, Ms);
  } else {
    double Overhead = Ms / S.WholeMs - 1;
    std::snprintf(Buf, sizeof(Buf),
                  "slices of %llu blocks: %.3f ms, overhead %.3f",
                  (unsigned long long)W.MinSlice, Ms, Overhead);
    S.Search->report(Overhead);
  }
  Line += Buf;
  uint64_t Found = 0;
  if (S.Search->done()) {
    Found = S.Search->result();
    S.Blocks = Found;
    S.From = "measured now";
    S.Search.reset();
    Line += "; the minimum slice is " + std::to_string(Found) + " blocks";
  }
  if (Opts.LogPlan)
    std::fprintf(stderr, "%s\n", Line.c_str());
  return Found;
}

} // namespace rt
} // namespace cleave
