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
    AttemptState A;
    A.Decide = Decide;
    if (Result R = decideRuns(Ranges, Given, A); !R.ok())
      return R;
    // Plan transfers and issue. A failure while preparing has changed
    // nothing but validity-exact transfers, and one while issuing before
    // anything ran: drop the device and start again.
    A.PlanMark = Plan.Runs.size();
    // One GPU run whose inputs are on the host may run as chunks whose
    // copies overlap its kernels (Pipeline.cpp): it is then prepared,
    // issued and waited for there.
    bool Piped = false;
    if (!Req.Slice)
      if (Result R = pipeline(A, Piped); !R.ok())
        return R;
    if (!Piped)
      if (Result R = prepareRuns(A); !R.ok())
        return R;
    if (!A.Fail && !Piped) {
      // A caller's next launch is often queued while this one is planned
      // (the host thread pushes it right after this one): asked again
      // here, the first launch of a series defers too, instead of being
      // waited for while the next one waits in the queue.
      if (A.Ordered && !Defer && Req.QueuedBehind && Req.QueuedBehind())
        Defer = true;
      if (Result R = issueRuns(A); !R.ok())
        return R;
    }
    if (A.Fail) {
      Result Err;
      if (!failOver(*A.Fail, A.PlanMark, Ranges, Err))
        return Err;
      continue;
    }

    if (!Piped) {
      runCpuRanges(A);
      if (Defer && deferRuns(A.Runs, A.Failed.empty()))
        return finishDeferred(A, Given);
      waitRuns(A);
    }
    if (std::optional<Result> Done = settleFailures(A))
      return *Done;
    noteReads(A.Runs);

    // Combine or merge, then finish; failed runs of other devices re-run
    // (on M, in place, when merging).
    std::vector<RunState *> Redo;
    for (RunState &R : A.Runs)
      if (R.Failed)
        Redo.push_back(&R);
    if (M == Mode::Merge)
      return mergeRuns(A, Redo);
    if (Result Res = commitRuns(A); !Res.ok())
      return Res;
    landReceived(A);
    // A pipelined launch is not kept: a replay would make its copies
    // without its chunks.
    if (Redo.empty()) {
      if (Decide && !Piped)
        keepRuns(A.Runs, std::move(Given));
      return Result::success();
    }
    if (Result Res = reassignFailed(A, Redo, Ranges); !Res.ok())
      return Res;
    Decide = false; // the same reconciliation, on the remaining ranges
  }
}

Result LaunchContext::decideRuns(std::vector<PartitionRange> &Ranges,
                                 std::vector<PartitionRange> &Given,
                                 AttemptState &A) {
  wakeIssueWorkers(Ranges);
  // A repeat takes the kept launch's runs, footprints and plan; it has no
  // copies to make and nothing to mark (RepeatMemo).
  A.Repeat = A.Decide && repeats(Ranges);
  A.Replay = A.Repeat && Memo->Replay;
  // A repeat queues behind the deferred work of earlier launches (their
  // copies and runs were planned as if it were done); anything else
  // waits for it first. It returns before its own work is done only if
  // the caller said it may.
  bool Alone = !A.Repeat && A.Decide && mayChain() && chainsAlone(Ranges);
  bool Chain = (A.Repeat && mayChain()) || Alone;
  Defer = Chain && Req.MayDefer;
  if (!Chain)
    if (Result S = Bufs.settle(); !S.ok())
      return S;
  if (A.Repeat) {
    A.Runs = repeatRuns(Ranges);
    Phases.mark("repeat");
    // Queued behind the deferred work (or there was none to queue behind).
    A.Ordered = Chain && orderRuns(A.Runs);
    if (Chain && !A.Ordered)
      if (Result S = Bufs.settle(); !S.ok())
        return S;
    return Result::success();
  }
  if (A.Decide) {
    Given = Ranges;
    // The buffers as found, should the launch be kept for a replay.
    Before.clear();
    if (!Timed && !LogTime)
      for (auto &[Id, B] : BufById)
        Before.push_back({Id, B, B->state()});
  }
  Result R = makeRuns(Ranges, A.Decide, A.Runs, A.AllWrites, A.AllReads);
  if (!R.ok())
    return R;
  Phases.mark("decide");
  // Decided as one range on one GPU, with nothing else to order.
  A.Ordered = Alone && M != Mode::Merge && !Combining;
  if (Alone && !A.Ordered) {
    Defer = false;
    if (Result S = Bufs.settle(); !S.ok())
      return S;
  }
  return Result::success();
}

Result LaunchContext::prepareRuns(AttemptState &A) {
  // Combined outputs: the host copies hold the values before the launch
  // (the partials are combined into them), every run has its scratch.
  if (Combining) {
    for (const CombineUse &C : Combines) {
      Result Res = Bufs.makeValid(*C.P->Buf, HostLocation, C.Bytes);
      if (!Res.ok())
        return Res;
    }
    A.Fail = allocateScratch(A.Runs);
  }
  if (!A.Fail && (!A.Repeat || A.Replay)) {
    A.Fail = prepareAll(A.Runs, A.Replay);
    Phases.mark("prepare");
  }
  // Partial buffers on M, freed on every path (freeMergeTemps()).
  if (A.Fail || M != Mode::Merge)
    return Result::success();
  for (RunState &R : A.Runs) {
    if (R.Dev == MergeDev)
      continue;
    for (auto &[Id, U] : R.Uses) {
      ByteRange H = hull(U.Writes);
      DeviceAddr Tmp = 0;
      if (!H.empty()) {
        Result Res = Bufs.device(MergeDev).allocate(H.size(), Tmp);
        if (!Res.ok()) {
          A.Fail = Failure{MergeDev, Res};
          return Result::success();
        }
        MergeTemps.push_back(Tmp);
      }
      R.Partials[Id] = {Tmp, H};
    }
  }
  return Result::success();
}

Result LaunchContext::issueRuns(AttemptState &A) {
  // M's runs first. A run whose launch is refused has not started.
  EventsUsed.clear();
  std::vector<size_t> Order;
  for (size_t I = 0; I < A.Runs.size(); ++I)
    if (M == Mode::Merge && A.Runs[I].Dev == MergeDev)
      Order.push_back(I);
  for (size_t I = 0; I < A.Runs.size(); ++I)
    if (!(M == Mode::Merge && A.Runs[I].Dev == MergeDev))
      Order.push_back(I);
  bool AnyIssued = false;
  choosePooled(A.Runs);
  for (size_t I : Order) {
    RunState &R = A.Runs[I];
    if (A.Failed.count(R.Dev)) {
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
        R.Issued = true; // until its worker says otherwise (waitRuns())
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
          A.Fail = Failure{R.Dev, Res};
          return Result::success();
        }
        // M's earlier runs changed its replica: not recoverable here.
        (void)Bufs.device(R.Dev).synchronize();
        return mergeDeviceFailed(Res, A.Runs);
      }
      R.Failed = true;
      A.Failed[R.Dev] = Res;
      continue;
    }
    R.Issued = true;
    AnyIssued = true;
  }
  return Result::success();
}

void LaunchContext::runCpuRanges(AttemptState &A) {
  // One after the other, each on every core, while the GPUs run.
  for (RunState &R : A.Runs) {
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
      if (!A.Failed.count(R.Dev))
        A.Failed[R.Dev] = Res;
      dropUnproduced(R);
    }
  }
}

Result LaunchContext::finishDeferred(AttemptState &A,
                                     std::vector<PartitionRange> &Given) {
  Plan.Deferred = true;
  if (A.Repeat)
    return finishRepeat(A.Runs, A.Replay);
  // A launch alone on its GPU: its reads and writes as they will be.
  noteReads(A.Runs);
  for (RunState &R : A.Runs)
    if (Result Res = commitWrites(R); !Res.ok())
      return Res;
  Phases.mark("commit");
  if (A.Decide)
    keepRuns(A.Runs, std::move(Given));
  return Result::success();
}

void LaunchContext::waitRuns(AttemptState &A) {
  std::set<Location> Gpus;
  for (RunState &R : A.Runs)
    if (R.Issued && isGpu(R.Dev) && !R.Pooled)
      Gpus.insert(R.Dev);
  for (Location G : Gpus) {
    Device &D = Bufs.device(G);
    Result Res = waitStream(D, runStream(G));
    Phases.mark("wait", name(G));
    if (Res.ok()) {
      for (RunState &R : A.Runs) {
        float Ms = 0;
        if (R.Dev == G && R.Issued && R.TimeStart &&
            D.elapsedTime(R.TimeStart, R.TimeEnd, Ms).ok()) {
          recordTime(R, Ms);
          logTime(R, Ms);
        }
      }
      continue;
    }
    if (!A.Failed.count(G))
      A.Failed[G] = Res;
    for (RunState &R : A.Runs)
      if (R.Dev == G && R.Issued) {
        R.Failed = true;
        dropUnproduced(R);
      }
  }
  // The workers' GPUs: their ranges were issued and waited for there.
  for (RunState &R : A.Runs) {
    if (!R.Pooled)
      continue;
    Pool.wait(size_t(R.Dev));
    Phases.mark("wait", name(R.Dev));
    if (!R.PoolIssue.ok()) { // refused: it has not started
      R.Issued = false;
      R.Failed = true;
      A.Failed.emplace(R.Dev, R.PoolIssue);
      continue;
    }
    if (!R.PoolWait.ok()) {
      R.Failed = true;
      A.Failed.emplace(R.Dev, R.PoolWait);
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
  for (RunState &R : A.Runs)
    settlePulls(R, R.Issued && !R.Failed);
}

std::optional<Result> LaunchContext::settleFailures(AttemptState &A) {
  if (A.Repeat) {
    bool Clean = A.Failed.empty();
    for (const RunState &R : A.Runs)
      Clean &= R.Issued && !R.Failed;
    if (Clean)
      return finishRepeat(A.Runs, A.Replay);
    // Recovery as usual, with the footprints in the runs.
    for (RunState &R : A.Runs)
      if (R.Repeat && R.Uses.empty())
        R.Uses = *R.Repeat;
  }
  if (M == Mode::Merge && A.Failed.count(MergeDev))
    return mergeDeviceFailed(A.Failed[MergeDev], A.Runs);
  // A kernel's own illegal address or failed assertion is no device's
  // failure: re-run elsewhere it would fail again (on a GPU, corrupt
  // memory first). The launch fails as on CUDA; what it wrote is
  // undefined, and no location claims bytes that a run did not produce.
  for (auto &[D, Res] : A.Failed)
    if (isStickyKernelError(Res.code())) {
      for (RunState &R : A.Runs)
        dropUnproduced(R);
      freeMergeTemps();
      return Res;
    }
  return std::nullopt;
}

Result LaunchContext::commitRuns(AttemptState &A) {
  // Exact or whole: each successful run's writes (and partials).
  if (Result Res = combineRuns(A.Runs); !Res.ok())
    return Res;
  for (RunState &R : A.Runs)
    if (!R.Failed) {
      Result Res = commitWrites(R);
      if (!Res.ok())
        return Res;
      for (const BundleVariableUse &U : Info.Variables)
        if (U.Written)
          variableWritten(Bufs, Prog, U.Variable, R.Dev);
    }
  Phases.mark("commit");
  return Result::success();
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

Result LaunchContext::runWithArgumentPointers() {
  const BundleIssue *Why = nullptr;
  for (const BundleIssue &Iss : Info.Issues)
    if (!Why && Iss.Kind == "argument-pointer")
      Why = &Iss;
  Location On = -1;
  for (size_t L = 0; L < Bufs.numDevices() && On < 0; ++L)
    if (isGpu(Location(L)) && canRun(Location(L)))
      On = Location(L);
  // Without a GPU, the CPU dereferences the host addresses themselves.
  if (On < 0)
    return runOnHostMemory(*Why);
  ArgPointers = findArgumentPointers(Bufs, Info, Req.Args);
  Phases.mark("plan");
  Result R = attempt({{On, 0, Total}}, /*Decide=*/false);
  Location Ran = Plan.Runs.empty() ? On : Plan.Runs.back().Device;
  Plan.Split = false;
  Plan.Reason = "on " + name(Ran) + ", with the " +
                std::to_string(ArgPointers.size()) +
                " buffer address(es) of its by-value arguments made " +
                name(Ran) + "'s, each buffer whole there: it dereferences "
                "pointers its by-value arguments hold (" +
                Why->Detail +
                (Why->Location.empty() ? "" : " at " + Why->Location) + ")";
  if (R.ok())
    for (const ArgumentPointer &P : ArgPointers)
      if (Result W = Bufs.markWritten(*P.Buf, Ran, ByteRange{0, P.Buf->size()});
          !W.ok())
        return W;
  return R;
}

Result LaunchContext::run() {
  Result R = checkRequest();
  if (!R.ok())
    return R;
  if (Req.Slice)
    return runSlice();
  for (const BundleIssue &Iss : Info.Issues)
    if (Iss.Kind == "loaded-pointer")
      return runOnHostMemory(Iss);
  if (usesArgumentPointers(Info))
    return runWithArgumentPointers();
  std::vector<PartitionRange> Ranges;
  if (!Req.Partition.empty()) {
    Explicit = true;
    R = checkPartition(Req.Partition);
    if (!R.ok())
      return R;
    Ranges = Req.Partition;
  } else {
    ScheduleQuery Q;
    Q.Kernel = Info.Name;
    Q.Blocks = Total;
    Q.Weights = &Req.Weights;
    Q.NumLocations = Bufs.numDevices();
    Q.Launch = this;
    for (size_t L = 0; L < Bufs.numDevices(); ++L)
      if (canRun(Location(L)))
        Q.Devices.push_back(Location(L));
    if (Q.Devices.empty())
      return Result::error(
          ErrorCode::NoDevice,
          "no device can run " + Info.Name +
              (K.Cpu ? std::string()
                     : " (no GPU, and it has no CPU variant: " +
                           Info.variant(VariantKind::CPU).Reason + ")"));
    // One device that can run the kernel: nothing to decide, so no policy
    // (no search, no footprints of the whole grid, no timing events).
    if (Q.Devices.size() == 1) {
      Ranges = {{Q.Devices.front(), 0, Total}};
    } else {
      for (Location L : Q.Devices) {
        Q.Throughput.push_back(throughput(L));
        Q.IsGpu.push_back(isGpu(L));
      }
      if (R = schedulingPolicy(Policy).schedule(Q, Ranges); !R.ok())
        return R;
    }
  }
  Phases.mark("plan");
  auto Start = std::chrono::steady_clock::now();
  R = attempt(alignToSlabs(std::move(Ranges)), true);
  if (R.ok())
    noteModelOutcome(std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - Start)
                         .count());
  return R;
}

} // namespace engine
} // namespace rt
} // namespace cleave
