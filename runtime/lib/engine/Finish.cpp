//===- Finish.cpp - Writes, reads, repeated and deferred launches -----------===//
//
// Part of Cleave's runtime (no LLVM). See LaunchContext.h.
//
//===----------------------------------------------------------------------===//

#include "LaunchContext.h"

namespace cleave {
namespace rt {
namespace engine {

Result LaunchContext::commitWrites(const RunState &R) {
  for (auto &[Id, U] : usesOf(R)) {
    Result Res = Bufs.markAllWritten(*BufById[Id], R.Dev, U.Writes);
    if (!Res.ok())
      return Res;
  }
  return Result::success();
}

void LaunchContext::noteReads(const std::vector<RunState> &Runs) {
  for (auto &[Id, B] : BufById) {
    std::vector<std::pair<Location, const RangeSet *>> Reads;
    RangeSet OnHost;
    for (const RunState &R : Runs) {
      if (!R.Issued || R.Failed)
        continue;
      const RangeUse &Uses = usesOf(R);
      auto It = Uses.find(Id);
      if (It == Uses.end())
        continue;
      Reads.push_back({R.Dev, &It->second.Reads});
      if (Bufs.validityLocation(R.Dev) == HostLocation)
        OnHost.insert(It->second.Reads);
    }
    Bufs.noteLaunchReads(*B, Reads, std::move(OnHost));
  }
}

/// A run that failed after it may have started: its device's replica no
/// longer holds what validity says over the run's writes. Where another
/// location holds those bytes, that one becomes their only holder.
void LaunchContext::dropUnproduced(const RunState &R) {
  for (auto &[Id, U] : usesOf(R)) {
    Buffer &B = *BufById[Id];
    Location VL = Bufs.validityLocation(R.Dev);
    for (ByteRange Rg : U.Writes.ranges())
      for (ByteRange Piece : B.validRanges(VL).intersection(Rg.Lo, Rg.Hi)) {
        for (Location L = HostLocation; L < Location(Bufs.numDevices()); ++L) {
          if (L == R.Dev || Bufs.validityLocation(L) == VL)
            continue;
          if (B.validRanges(L).contains(Piece.Lo, Piece.Hi)) {
            (void)Bufs.markWritten(B, L, Piece);
            break;
          }
        }
      }
  }
}

bool LaunchContext::repeats(const std::vector<PartitionRange> &Given) const {
  // A timed range records events the kept launch did not; CLEAVE_LOG=time
  // times every range.
  if (!Memo || Timed || LogTime || !Excluded.empty() ||
      !sameRanges(Memo->Given, Given))
    return false;
  // The variables it reads are still current where it runs (a
  // cudaMemcpyToSymbol since then, or a kernel writing one, makes stage()
  // copy them again).
  for (const BundleVariableUse &U : Info.Variables)
    for (const RepeatMemo::Run &R : Memo->Runs) {
      const Program::Var &Var = Prog.Vars[U.Variable];
      if (isCpu(R.Dev) ? !Var.CpuValid : !Var.DevValid[size_t(R.Dev)])
        return false;
    }
  // A replay: the same buffers (Engine::launch found them as the kept
  // launch did).
  if (Memo->Replay) {
    if (Memo->Before.size() != BufById.size())
      return false;
    for (const RepeatMemo::Found &F : Memo->Before)
      if (!BufById.count(F.Id))
        return false;
  }
  return true;
}

Result LaunchContext::finishRepeat(std::vector<RunState> &Runs, bool Replay) {
  Repeated = true;
  if (!Replay)
    return Result::success();
  noteReads(Runs);
  for (RunState &R : Runs)
    if (Result Res = commitWrites(R); !Res.ok())
      return Res;
  Phases.mark("commit");
  return Result::success();
}

bool LaunchContext::mayChain() const {
  // A slice is waited for on its lane, which deferred work does not order.
  return Opts.Tune.Defer && !FaultInjector::global().active() && !Timed &&
         !LogTime && Excluded.empty() && !Req.Slice;
}

bool LaunchContext::chainsAlone(
    const std::vector<PartitionRange> &Ranges) const {
  // Its copies into the GPU (inputs not held there, from the host copy)
  // and its kernel need no order beyond the GPU's own stream: no queued
  // kernel reads bytes the GPU does not hold, since only the host (which
  // settles first) or another device (a launch that does not chain) can
  // take them away. A variable staged again would overwrite what a queued
  // kernel may still read: then the launch waits.
  if (Ranges.empty() || !isGpu(Ranges.front().Device) ||
      !Info.Combined.empty())
    return false;
  Location G = Ranges.front().Device;
  for (const PartitionRange &R : Ranges)
    if (R.Device != G)
      return false;
  for (const BundleVariableUse &U : Info.Variables)
    if (U.Written || !Prog.Vars[U.Variable].DevValid[size_t(G)])
      return false;
  return Bufs.deferredOnlyOn(G);
}

/// False, with Defer cleared, when a GPU's wait could not be queued (the
/// caller then waits for the deferred work).
bool LaunchContext::orderRuns(const std::vector<RunState> &Runs) {
  // Per GPU, the GPUs its copies read from.
  std::map<Location, std::set<Location>> Sources;
  for (const RunState &R : Runs) {
    if (!isGpu(R.Dev))
      continue;
    std::set<Location> &S = Sources[R.Dev];
    for (const auto &[Id, Copies] : R.MoveIn)
      for (const Transfer &T : Copies)
        if (isGpu(T.Src))
          S.insert(T.Src);
  }
  for (const auto &[Gpu, S] : Sources)
    if (!Bufs.orderAfterDeferred(Gpu, S).ok()) {
      Defer = false;
      return false;
    }
  return true;
}

/// Once every run was issued (the workers' too): each GPU's completion is
/// recorded behind its runs with what they claim (their writes and the
/// rows they pulled), and true. Otherwise, or when a record fails, the
/// workers' GPUs are waited for here, as their workers would have, and
/// phase 3 goes on as usual.
bool LaunchContext::deferRuns(std::vector<RunState> &Runs, bool NoneFailed) {
  bool Clean = NoneFailed;
  for (RunState &R : Runs) {
    if (R.Pooled) {
      Pool.wait(size_t(R.Dev));
      Clean &= R.PoolIssue.ok();
    }
    Clean &= R.Issued && !R.Failed;
  }
  if (Clean) {
    std::map<Location, std::vector<BufferManager::DeferredClaim>> Claims;
    std::map<Location, std::set<Location>> PulledFrom;
    for (RunState &R : Runs) {
      if (!isGpu(R.Dev))
        continue;
      for (const auto &[Id, T] : R.Pulled)
        PulledFrom[R.Dev].insert(T.Src);
      std::vector<BufferManager::DeferredClaim> &C = Claims[R.Dev];
      for (auto &[Id, U] : usesOf(R))
        if (!U.Writes.empty())
          C.push_back({BufById.at(Id), U.Writes});
      for (auto &[Id, T] : R.Pulled)
        C.push_back({BufById.at(Id), RangeSet(T.Offset, T.Offset + T.Bytes)});
    }
    for (auto &[G, C] : Claims)
      if (!Bufs.defer(G, std::move(C), PulledFrom[G]).ok()) {
        Clean = false;
        break;
      }
    Phases.mark("deferred");
  }
  if (Clean) {
    for (RunState &R : Runs)
      R.Pulled.clear();
    return true;
  }
  for (RunState &R : Runs)
    if (R.Pooled && R.Deferred && R.PoolIssue.ok()) {
      Device &D = Bufs.device(R.Dev);
      R.PoolWait = D.synchronizeStream(D.internalStream(0));
    }
  Defer = false;
  return false;
}

std::vector<RunState>
LaunchContext::repeatRuns(std::vector<PartitionRange> &Ranges) {
  M = Memo->Whole ? Mode::Whole : Mode::Exact;
  MergeDev = -1;
  Combining = false;
  Combines.clear();
  CombineBytes = 0;
  std::string Name = std::move(Plan.KernelName);
  Plan = Memo->Plan;
  Plan.KernelName = std::move(Name);
  Plan.Repeated = true;
  Plan.Replayed = Memo->Replay;
  if (Memo->Replay) { // prepareAll() fills these again as the copies go
    Plan.Runs.clear();
    Plan.BytesMoved = 0;
    Plan.MovedAtOnce = 0;
  }
  Ranges.clear();
  std::vector<RunState> Runs(Memo->Runs.size());
  for (size_t I = 0; I < Runs.size(); ++I) {
    const RepeatMemo::Run &From = Memo->Runs[I];
    RunState &R = Runs[I];
    R.Dev = From.Dev;
    R.First = From.First;
    R.Count = From.Count;
    R.PlanIndex = From.PlanIndex;
    if (Memo->Replay) {
      // The run's entry of the kept plan, and its copies, in their order.
      R.PlanRun = Memo->Plan.Runs[From.PlanIndex];
      R.PlanRun.Copies.clear();
      R.PlanRun.BytesIn = 0;
      for (const LaunchPlan::Run::Copy &C :
           Memo->Plan.Runs[From.PlanIndex].Copies) {
        if (R.MoveIn.empty() || R.MoveIn.back().first != C.BufferId)
          R.MoveIn.push_back({C.BufferId, {}});
        R.MoveIn.back().second.push_back(C.T);
      }
    }
    R.Values = From.Values;
    R.ArgPtrs.assign(Req.Args, Req.Args + Info.Params.size());
    for (const PtrArg &P : Ptrs)
      R.ArgPtrs[P.ArgNo] = &R.Values[P.ArgNo];
    R.Repeat = &From.Uses;
    Ranges.push_back({R.Dev, R.First, R.Count});
  }
  return Runs;
}

/// Keeps a launch that ran as decided: no device failed, nothing moved, no
/// merge, no combined outputs, no variable written. Engine::launch keeps
/// it only if it changed no buffer's state either.
void LaunchContext::keepRuns(std::vector<RunState> &Runs,
                             std::vector<PartitionRange> Given) {
  if (M == Mode::Merge || Combining || !Excluded.empty() ||
      !Plan.Recoveries.empty())
    return;
  // Bytes moved: kept for a replay, when they went between GPUs (a copy
  // through the host also depends on its pinning and staging).
  if (Plan.BytesMoved) {
    if (Before.empty())
      return;
    for (const LaunchPlan::Run &R : Plan.Runs)
      for (const LaunchPlan::Run::Copy &C : R.Copies)
        if (Bufs.validityLocation(C.T.Src) == HostLocation ||
            Bufs.validityLocation(C.T.Dst) == HostLocation)
          return;
  }
  for (const BundleVariableUse &U : Info.Variables)
    if (U.Written)
      return;
  for (const RunState &R : Runs)
    if (!R.Issued || R.Failed || R.Scratch || !R.Partials.empty())
      return;
  RepeatMemo &Out = Kept.emplace();
  Out.Before = std::move(Before);
  Out.Given = std::move(Given);
  Out.Whole = M == Mode::Whole;
  Out.Plan = Plan;
  Out.Plan.Repeated = false;
  for (RunState &R : Runs) {
    RepeatMemo::Run &To = Out.Runs.emplace_back();
    To.Dev = R.Dev;
    To.First = R.First;
    To.Count = R.Count;
    To.PlanIndex = R.PlanIndex;
    To.Values = std::move(R.Values);
    To.Uses = std::move(R.Uses);
  }
}

} // namespace engine
} // namespace rt
} // namespace cleave
