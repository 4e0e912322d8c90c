//===- Attempt.cpp - A launch's phases in order -----------------------------===//
//
// Part of Cleave's runtime (no LLVM). See LaunchContext.h.
//
//===----------------------------------------------------------------------===//

#include "LaunchContext.h"

namespace cleave {
namespace rt {
namespace engine {

/// decide() (on the first attempt), then each run's footprints and what
/// must be valid on its device before it runs: its reads, coarse write
/// hulls that it does not hold, and on a merge device every range's bytes.
Result LaunchContext::makeRuns(std::vector<PartitionRange> &Ranges,
                               bool Decide, std::vector<RunState> &Runs,
                               std::map<uint64_t, RangeSet> &AllWrites,
                               std::map<uint64_t, RangeSet> &AllReads) {
  DecidedRanges.clear();
  DecidedUses.clear();
  if (Decide) {
    Result R = decide(Ranges);
    if (!R.ok())
      return R;
  }
  bool Decided = sameRanges(DecidedRanges, Ranges);
  // Footprints per run (decide()'s, when it evaluated these ranges);
  // what must be valid before each.
  Runs.resize(Ranges.size());
  for (size_t I = 0; I < Ranges.size(); ++I) {
    Runs[I].Dev = Ranges[I].Device;
    Runs[I].First = Ranges[I].First;
    Runs[I].Count = Ranges[I].Count;
    if (Decided) {
      Runs[I].Uses = std::move(DecidedUses[I]);
      continue;
    }
    // The whole grid on a device that alone holds every byte of every
    // buffer it is given: nothing to move in, no other copy to make stale,
    // so its footprints (which change with its arguments, and cost more
    // than the rest of a launch) are not needed.
    if (Ranges.size() == 1 && Runs[I].Count == Total && M != Mode::Merge &&
        Info.Combined.empty() &&
        std::all_of(Ptrs.begin(), Ptrs.end(), [&](const PtrArg &P) {
          return P.Buf->heldOnlyBy(Runs[I].Dev);
        }))
      continue;
    Result R = evaluate(Runs[I].First, Runs[I].Count, Runs[I].Uses);
    if (!R.ok())
      return R;
  }
  DecidedRanges.clear();
  DecidedUses.clear();
  // Coarse write hulls stand for the writes only where no other device
  // writes inside them, and once their device holds the bytes between
  // the rows: moved there before the run (once; the device holds them
  // from then on). A merge device needs every range's exact writes.
  {
    std::vector<RangeUse *> UsePtrs;
    for (RunState &R : Runs) {
      if (M == Mode::Merge)
        for (auto &[Id, U] : R.Uses)
          refineWrites(U, BufById.at(Id)->size());
      UsePtrs.push_back(&R.Uses);
    }
    resolveCoarse(Ranges, UsePtrs);
    for (RunState &R : Runs)
      for (auto &[Id, U] : R.Uses)
        if (U.WritesCoarse &&
            !BufById.at(Id)->holds(R.Dev, hull(U.Writes)))
          R.MustHold[Id].insert(hull(U.Writes));
  }
  for (RunState &R : Runs)
    for (auto &[Id, U] : R.Uses) {
      if (!U.WritesExact)
        R.MustHold[Id].insert(U.Writes);
      AllWrites[Id].insert(U.Writes);
      AllReads[Id].insert(U.Reads);
    }
  // M ends up holding every written byte, so it must hold their current
  // contents first; the merge kernels it runs for the other ranges
  // recompute those ranges' addresses and conditions, reading what the
  // ranges read.
  if (M == Mode::Merge)
    for (RunState &R : Runs)
      if (R.Dev == MergeDev) {
        for (auto &[Id, W] : AllWrites)
          R.MustHold[Id].insert(W);
        for (auto &[Id, Rd] : AllReads)
          R.MustHold[Id].insert(Rd);
      }
  return Result::success();
}

Result LaunchContext::attempt(std::vector<PartitionRange> Ranges,
                              bool Decide) {
  // The first attempt's ranges, for keepRuns().
  std::vector<PartitionRange> Given;
  for (;;) {
    wakeIssueWorkers(Ranges);
    // A repeat takes the kept launch's runs, footprints and plan; it has no
    // copies to make and nothing to mark (RepeatMemo).
    bool Repeat = Decide && repeats(Ranges);
    bool Replay = Repeat && Memo->Replay;
    // A repeat queues behind the deferred work of earlier launches (their
    // copies and runs were planned as if it were done); anything else
    // waits for it first. It returns before its own work is done only if
    // the caller said it may.
    bool Alone = !Repeat && Decide && mayChain() && chainsAlone(Ranges);
    bool Chain = (Repeat && mayChain()) || Alone;
    Defer = Chain && Req.MayDefer;
    if (!Chain)
      if (Result S = Bufs.settle(); !S.ok())
        return S;
    std::vector<RunState> Runs;
    std::map<uint64_t, RangeSet> AllWrites, AllReads;
    // Queued behind the deferred work (or there was none to queue behind).
    bool Ordered = false;
    if (Repeat) {
      Runs = repeatRuns(Ranges);
      Phases.mark("repeat");
      Ordered = Chain && orderRuns(Runs);
      if (Chain && !Ordered)
        if (Result S = Bufs.settle(); !S.ok())
          return S;
    } else {
      if (Decide) {
        Given = Ranges;
        // The buffers as found, should the launch be kept for a replay.
        Before.clear();
        if (!Timed && !LogTime)
          for (auto &[Id, B] : BufById)
            Before.push_back({Id, B, B->state()});
      }
      Result R = makeRuns(Ranges, Decide, Runs, AllWrites, AllReads);
      if (!R.ok())
        return R;
      Phases.mark("decide");
      // Decided as one range on one GPU, with nothing else to order.
      Ordered = Alone && M != Mode::Merge && !Combining;
      if (Alone && !Ordered) {
        Defer = false;
        if (Result S = Bufs.settle(); !S.ok())
          return S;
      }
    }

    size_t PlanMark = Plan.Runs.size();
    // Partial buffers on M, freed on every path.
    std::vector<DeviceAddr> Temps;
    auto FreeTemps = [&] {
      for (DeviceAddr A : Temps)
        (void)Bufs.device(MergeDev).free(A);
      Temps.clear();
    };

    // Combined outputs: the host copies hold the values before the launch
    // (the partials are combined into them), every run has its scratch.
    std::optional<Failure> Fail;
    if (Combining) {
      for (const CombineUse &C : Combines) {
        Result Res = Bufs.makeValid(*C.P->Buf, HostLocation, C.Bytes);
        if (!Res.ok())
          return Res;
      }
      Fail = allocateScratch(Runs);
    }

    // Phase 1: prepare. A failure here has changed nothing but validity-
    // exact transfers: drop the device and start again.
    if (!Fail && (!Repeat || Replay)) {
      Fail = prepareAll(Runs, Replay);
      Phases.mark("prepare");
    }
    if (!Fail && M == Mode::Merge)
      for (RunState &R : Runs) {
        if (R.Dev == MergeDev)
          continue;
        for (auto &[Id, U] : R.Uses) {
          ByteRange H = hull(U.Writes);
          DeviceAddr Tmp = 0;
          if (!H.empty()) {
            Result Res = Bufs.device(MergeDev).allocate(H.size(), Tmp);
            if (!Res.ok()) {
              Fail = Failure{MergeDev, Res};
              break;
            }
            Temps.push_back(Tmp);
          }
          R.Partials[Id] = {Tmp, H};
        }
        if (Fail)
          break;
      }
    if (Fail) {
      FreeTemps();
      Plan.Runs.resize(PlanMark); // BytesMoved keeps what did move
      Excluded.insert(Fail->Dev);
      Location To = fallbackFor(Fail->Dev, Ranges);
      if (To < 0)
        return Fail->Err;
      std::vector<std::pair<uint64_t, uint64_t>> Blocks;
      for (PartitionRange &R : Ranges)
        if (R.Device == Fail->Dev) {
          Blocks.push_back({R.First, R.First + R.Count});
          R.Device = To;
        }
      report(Fail->Dev, Fail->Err, Blocks, To);
      continue;
    }

    // A caller's next launch is often queued while this one is planned
    // (the host thread pushes it right after this one): asked again here,
    // the first launch of a series defers too, instead of being waited for
    // while the next one waits in the queue.
    if (Ordered && !Defer && Req.QueuedBehind && Req.QueuedBehind())
      Defer = true;

    // Phase 2: issue, M's runs first. A run whose launch is refused has not
    // started.
    EventsUsed.clear();
    std::vector<size_t> Order;
    for (size_t I = 0; I < Runs.size(); ++I)
      if (M == Mode::Merge && Runs[I].Dev == MergeDev)
        Order.push_back(I);
    for (size_t I = 0; I < Runs.size(); ++I)
      if (!(M == Mode::Merge && Runs[I].Dev == MergeDev))
        Order.push_back(I);
    std::map<Location, Result> Failed;
    bool AnyIssued = false;
    choosePooled(Runs);
    for (size_t I : Order) {
      RunState &R = Runs[I];
      if (Failed.count(R.Dev)) {
        R.Failed = true;
        continue;
      }
      R.Deferred = Defer && isGpu(R.Dev);
      Result Res;
      if (R.Pooled) {
        timeEvents(R);
        RunState *X = &R;
        if (Pool.tryPost(size_t(R.Dev), [this, X] {
              Device &D = Bufs.device(X->Dev);
              X->PoolIssue = issueLaunch(*X);
              if (!X->PoolIssue.ok() || X->Deferred)
                return;
              X->PoolWait = D.synchronizeStream(D.internalStream(0));
              float Ms = 0;
              if (X->PoolWait.ok() && X->TimeStart &&
                  D.elapsedTime(X->TimeStart, X->TimeEnd, Ms).ok())
                X->PoolMs = Ms;
            })) {
          Phases.mark("post", name(R.Dev));
          R.Issued = true; // until its worker says otherwise (phase 3)
          AnyIssued = true;
          continue;
        }
        R.Pooled = false; // its worker sleeps: issued here
        Res = issueLaunch(R);
      } else {
        Res = issue(R);
      }
      Phases.mark("issue", name(R.Dev));
      if (!Res.ok()) {
        if (M == Mode::Merge && R.Dev == MergeDev) {
          if (!AnyIssued) { // nothing ran: start again without M
            Fail = Failure{R.Dev, Res};
            break;
          }
          // M's earlier runs changed its replica: not recoverable here.
          (void)Bufs.device(R.Dev).synchronize();
          for (RunState &X : Runs)
            dropUnproduced(X);
          FreeTemps();
          return Result::error(Res.code(),
                               "the merge device failed: " + Res.message());
        }
        R.Failed = true;
        Failed[R.Dev] = Res;
        continue;
      }
      R.Issued = true;
      AnyIssued = true;
    }
    if (Fail) {
      FreeTemps();
      Plan.Runs.resize(PlanMark); // BytesMoved keeps what did move
      Excluded.insert(Fail->Dev);
      Location To = fallbackFor(Fail->Dev, Ranges);
      if (To < 0)
        return Fail->Err;
      std::vector<std::pair<uint64_t, uint64_t>> Blocks;
      for (PartitionRange &R : Ranges)
        if (R.Device == Fail->Dev) {
          Blocks.push_back({R.First, R.First + R.Count});
          R.Device = To;
        }
      report(Fail->Dev, Fail->Err, Blocks, To);
      continue;
    }

    // Phase 3: the CPU runs (one after the other, each on every core) while
    // the GPUs run, then wait for the GPUs.
    for (RunState &R : Runs) {
      if (!R.Issued || !isCpu(R.Dev))
        continue;
      auto Start = std::chrono::steady_clock::now();
      Result Res = runCpu(R);
      if (Res.ok()) {
        double Ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - Start)
                        .count();
        recordTime(R, Ms);
        logTime(R, Ms);
      }
      Phases.mark("run", name(R.Dev));
      if (!Res.ok()) {
        R.Failed = true;
        if (!Failed.count(R.Dev))
          Failed[R.Dev] = Res;
        dropUnproduced(R);
      }
    }
    if (Defer && deferRuns(Runs, Failed.empty())) {
      Plan.Deferred = true;
      if (Repeat)
        return finishRepeat(Runs, Replay);
      // A launch alone on its GPU: its reads and writes as they will be.
      noteReads(Runs);
      for (RunState &R : Runs)
        if (Result Res = commitWrites(R); !Res.ok())
          return Res;
      Phases.mark("commit");
      if (Decide)
        keepRuns(Runs, std::move(Given));
      return Result::success();
    }
    std::set<Location> Gpus;
    for (RunState &R : Runs)
      if (R.Issued && isGpu(R.Dev) && !R.Pooled)
        Gpus.insert(R.Dev);
    for (Location G : Gpus) {
      Device &D = Bufs.device(G);
      Result Res = D.synchronizeStream(D.internalStream(0));
      Phases.mark("wait", name(G));
      if (Res.ok()) {
        for (RunState &R : Runs) {
          float Ms = 0;
          if (R.Dev == G && R.Issued && R.TimeStart &&
              D.elapsedTime(R.TimeStart, R.TimeEnd, Ms).ok()) {
            recordTime(R, Ms);
            logTime(R, Ms);
          }
        }
        continue;
      }
      if (!Failed.count(G))
        Failed[G] = Res;
      for (RunState &R : Runs)
        if (R.Dev == G && R.Issued) {
          R.Failed = true;
          dropUnproduced(R);
        }
    }
    // The workers' GPUs: their ranges were issued and waited for there.
    for (RunState &R : Runs) {
      if (!R.Pooled)
        continue;
      Pool.wait(size_t(R.Dev));
      Phases.mark("wait", name(R.Dev));
      if (!R.PoolIssue.ok()) { // refused: it has not started
        R.Issued = false;
        R.Failed = true;
        Failed.emplace(R.Dev, R.PoolIssue);
        continue;
      }
      if (!R.PoolWait.ok()) {
        R.Failed = true;
        Failed.emplace(R.Dev, R.PoolWait);
        dropUnproduced(R);
        continue;
      }
      if (R.PoolMs >= 0) {
        recordTime(R, R.PoolMs);
        logTime(R, R.PoolMs);
      }
    }
    // Copies queued ahead of a kernel that was not waited for (refused, or
    // its device failed) land now, or are not claimed.
    for (RunState &R : Runs)
      settlePulls(R, R.Issued && !R.Failed);
    if (Repeat) {
      bool Clean = Failed.empty();
      for (const RunState &R : Runs)
        Clean &= R.Issued && !R.Failed;
      if (Clean)
        return finishRepeat(Runs, Replay);
      // Recovery as usual, with the footprints in the runs.
      for (RunState &R : Runs)
        if (R.Repeat && R.Uses.empty())
          R.Uses = *R.Repeat;
    }
    if (M == Mode::Merge && Failed.count(MergeDev)) {
      for (RunState &R : Runs)
        dropUnproduced(R);
      FreeTemps();
      return Result::error(Failed[MergeDev].code(),
                           "the merge device failed: " +
                               Failed[MergeDev].message());
    }

    // A kernel's own illegal address is no device's failure: re-run
    // elsewhere it would fault again (on a GPU, corrupt memory first). The
    // launch fails as on CUDA; what it wrote is undefined, and no location
    // claims bytes that a run did not produce.
    for (auto &[D, Res] : Failed)
      if (Res.code() == ErrorCode::IllegalAddress) {
        for (RunState &R : Runs)
          dropUnproduced(R);
        FreeTemps();
        return Res;
      }

    noteReads(Runs);

    // Failed runs of other devices: on M, in place, when merging.
    std::vector<RunState *> Redo;
    for (RunState &R : Runs)
      if (R.Failed)
        Redo.push_back(&R);
    if (M == Mode::Merge && !Redo.empty()) {
      std::map<Location, std::vector<std::pair<uint64_t, uint64_t>>> Blocks;
      for (RunState *R : Redo)
        Blocks[R->Dev].push_back({R->First, R->First + R->Count});
      for (auto &[D, B] : Blocks) {
        Excluded.insert(D);
        report(D, Failed[D], B, MergeDev);
      }
      for (RunState *R : Redo) {
        R->Dev = MergeDev;
        R->Partials.clear();
        R->Failed = false;
        Result Res = prepare(*R, true);
        if (Res.ok())
          Res = issue(*R);
        if (Res.ok() && isCpu(MergeDev))
          Res = runCpu(*R);
        if (Res.ok() && isGpu(MergeDev))
          Res = Bufs.device(MergeDev).synchronizeStream(
              Bufs.device(MergeDev).internalStream(0));
        if (!Res.ok()) {
          for (RunState &X : Runs)
            dropUnproduced(X);
          FreeTemps();
          return Result::error(Res.code(),
                               "the merge device failed: " + Res.message());
        }
      }
      Redo.clear();
    }

    // Phase 4: merges, then writes.
    if (M == Mode::Merge) {
      RunState *OnM = nullptr;
      for (RunState &R : Runs)
        if (R.Dev == MergeDev)
          OnM = &R;
      if (!OnM) {
        FreeTemps();
        return Result::error(ErrorCode::Unknown, "merge device has no run");
      }
      for (RunState &R : Runs) {
        if (R.Dev == MergeDev)
          continue;
        Result Res = merge(R, *OnM);
        if (Res.ok())
          continue;
        // The partial could not be copied or merged: re-run on M in place.
        Location D = R.Dev;
        Excluded.insert(D);
        report(D, Res, {{R.First, R.First + R.Count}}, MergeDev);
        R.Dev = MergeDev;
        R.Partials.clear();
        Res = prepare(R, true);
        if (Res.ok())
          Res = issue(R);
        if (Res.ok() && isCpu(MergeDev))
          Res = runCpu(R);
        if (Res.ok() && isGpu(MergeDev))
          Res = Bufs.device(MergeDev).synchronizeStream(
              Bufs.device(MergeDev).internalStream(0));
        if (!Res.ok()) {
          for (RunState &X : Runs)
            dropUnproduced(X);
          FreeTemps();
          return Result::error(Res.code(),
                               "the merge device failed: " + Res.message());
        }
      }
      FreeTemps();
      for (auto &[Id, W] : AllWrites)
        for (ByteRange Rg : W.ranges()) {
          Result Res = Bufs.markWritten(*BufById[Id], MergeDev, Rg);
          if (!Res.ok())
            return Res;
        }
      return Result::success();
    }

    // Exact or whole: each successful run's writes (and partials); failed
    // runs again on another device.
    if (Result Res = combineRuns(Runs); !Res.ok())
      return Res;
    for (RunState &R : Runs)
      if (!R.Failed) {
        Result Res = commitWrites(R);
        if (!Res.ok())
          return Res;
        for (const BundleVariableUse &U : Info.Variables)
          if (U.Written)
            variableWritten(Bufs, Prog, U.Variable, R.Dev);
      }
    Phases.mark("commit");
    if (Redo.empty()) {
      if (Decide)
        keepRuns(Runs, std::move(Given));
      return Result::success();
    }
    std::vector<PartitionRange> Again;
    std::map<Location, std::vector<std::pair<uint64_t, uint64_t>>> Blocks;
    for (RunState *R : Redo) {
      Excluded.insert(R->Dev);
      Blocks[R->Dev].push_back({R->First, R->First + R->Count});
    }
    for (auto &[D, B] : Blocks) {
      Location To = fallbackFor(D, Ranges);
      if (To < 0)
        return Failed[D];
      report(D, Failed[D], B, To);
      for (RunState *R : Redo)
        if (R->Dev == D)
          Again.push_back({To, R->First, R->Count});
    }
    Ranges = std::move(Again);
    Decide = false; // the same reconciliation, on the remaining ranges
  }
}

Result LaunchContext::runOnHostMemory(const BundleIssue &Why) {
  std::string What = "it dereferences a pointer loaded from memory (" +
                     Why.Detail +
                     (Why.Location.empty() ? "" : " at " + Why.Location) +
                     "), such as a pointer inside a struct argument";
  Location On = -1;
  for (size_t L = 0; L < Bufs.numDevices() && On < 0; ++L)
    if (canRun(Location(L)) &&
        Bufs.validityLocation(Location(L)) == HostLocation)
      On = Location(L);
  if (On < 0)
    return Result::error(
        ErrorCode::NotSupported,
        "kernel " + Info.Name + " cannot run on these devices: " + What +
            ", which Cleave translates only for a CPU device (" +
            (K.Cpu ? "add cpu to CLEAVE_DEVICES"
                   : "the kernel has no CPU variant: " +
                         Info.variant(VariantKind::CPU).Reason) +
            "); pass the pointers as kernel arguments instead");
  if (Result S = Bufs.syncAllToHost(); !S.ok())
    return S;
  Phases.mark("plan");
  Result R = attempt({{On, 0, Total}}, true);
  Plan.Split = false;
  Plan.Reason = "on " + name(On) + "'s host memory, every buffer synchronized: " + What;
  Bufs.markAllWrittenOnHost();
  return R;
}

Result LaunchContext::run() {
  Result R = checkRequest();
  if (!R.ok())
    return R;
  for (const BundleIssue &Iss : Info.Issues)
    if (Iss.Kind == "loaded-pointer")
      return runOnHostMemory(Iss);
  std::vector<PartitionRange> Ranges;
  if (!Req.Partition.empty()) {
    Explicit = true;
    R = checkPartition(Req.Partition);
    if (!R.ok())
      return R;
    Ranges = Req.Partition;
  } else {
    std::vector<Location> Devs;
    std::vector<double> W;
    for (size_t L = 0; L < Bufs.numDevices(); ++L)
      if (canRun(Location(L))) {
        Devs.push_back(Location(L));
        W.push_back(throughput(Location(L)));
      }
    if (Devs.empty())
      return Result::error(
          ErrorCode::NoDevice,
          "no device can run " + Info.Name +
              (K.Cpu ? std::string()
                     : " (no GPU, and it has no CPU variant: " +
                           Info.variant(VariantKind::CPU).Reason + ")"));
    PartitionPolicy P = Policy;
    // One device that can run the kernel: nothing to decide, so no search,
    // no footprints of the whole grid and no timing events, whatever the
    // policy.
    if (Devs.size() == 1) {
      Ranges = {{Devs.front(), 0, Total}};
      Phases.mark("plan");
      return attempt(alignToSlabs(std::move(Ranges)), true);
    }
    if (P == PartitionPolicy::Model) {
      R = planModel(Devs, Ranges);
      if (!R.ok())
        return R;
      Phases.mark("plan");
      return attempt(alignToSlabs(std::move(Ranges)), true);
    }
    if (P == PartitionPolicy::SingleDevice) {
      // The first GPU, else the first CPU device.
      Location Pick = Devs.front();
      for (Location L : Devs)
        if (isGpu(L)) {
          Pick = L;
          break;
        }
      Devs = {Pick};
      W = {1.0};
    }
    if (P == PartitionPolicy::Weights) {
      // The caller's weight of each device that can run the kernel.
      if (Req.Weights.size() != Bufs.numDevices())
        return invalid("the Weights policy needs one weight per device: " +
                       std::to_string(Req.Weights.size()) + " for " +
                       std::to_string(Bufs.numDevices()));
      for (size_t J = 0; J < Devs.size(); ++J)
        W[J] = Req.Weights[size_t(Devs[J])];
      R = makePolicyRanges(P, Total, Devs, W, Ranges);
      if (!R.ok())
        return Result::error(R.code(), Info.Name + ": " + R.message() +
                                           " (CLEAVE_SPLIT)");
    } else {
      R = makePolicyRanges(P, Total, Devs, W, Ranges);
    }
    if (!R.ok())
      return R;
  }
  Phases.mark("plan");
  return attempt(alignToSlabs(std::move(Ranges)), true);
}

} // namespace engine
} // namespace rt
} // namespace cleave
