//===- Transfers.cpp - What moves before a run ------------------------------===//
//
// Part of Cleave's runtime (no LLVM). See LaunchContext.h.
//
//===----------------------------------------------------------------------===//

#include "LaunchContext.h"

namespace cleave {
namespace rt {
namespace engine {

/// Pointer arguments translated to \p Dev's replicas.
Result LaunchContext::argsFor(RunState &R, Location Dev) {
  unsigned NumArgs = Info.Params.size();
  R.Values.assign(NumArgs, nullptr);
  R.ArgPtrs.assign(Req.Args, Req.Args + NumArgs);
  for (const PtrArg &P : Ptrs) {
    DeviceAddr A = 0;
    Result Res = Bufs.addressOn(*P.Buf, Dev, P.Offset, A);
    if (!Res.ok())
      return Res;
    R.Values[P.ArgNo] = reinterpret_cast<void *>(static_cast<uintptr_t>(A));
    R.ArgPtrs[P.ArgNo] = &R.Values[P.ArgNo];
  }
  // Buffer addresses inside by-value arguments: the buffers they point
  // into whole on Dev (nothing tells what the kernel reads of them), in a
  // copy of the argument.
  R.ByValue.clear();
  for (const ArgumentPointer &P : ArgPointers) {
    if (Result V = Bufs.makeValid(*P.Buf, Dev, ByteRange{0, P.Buf->size()});
        !V.ok())
      return V;
    auto [It, New] = R.ByValue.try_emplace(P.Param);
    if (New) {
      const char *From = static_cast<const char *>(Req.Args[P.Param]);
      It->second.assign(From, From + Info.Params[P.Param].Size);
    }
    if (Result T = translateArgumentPointer(Bufs, P, Dev, It->second.data());
        !T.ok())
      return T;
  }
  for (auto &[Param, Bytes] : R.ByValue)
    R.ArgPtrs[Param] = Bytes.data();
  // Combined outputs point into the scratch, placed so that the kernel's
  // offsets from the argument land on the same bytes of the range.
  if (R.Scratch)
    for (const CombineUse &C : Combines) {
      DeviceAddr A = R.Scratch->Dev + C.Offset + (C.P->Offset - C.Bytes.Lo);
      R.Values[C.P->ArgNo] =
          reinterpret_cast<void *>(static_cast<uintptr_t>(A));
    }
  return Result::success();
}

/// Everything a run needs before anything runs: its device's module,
/// functions and variables, its replicas and its inputs (plus, for M, the
/// write bounds; for a run that M merges, its partial buffers on M).
Result LaunchContext::prepare(RunState &R, bool IsMergeDevice) {
  Result Res = stage(R, IsMergeDevice);
  if (Res.ok()) {
    Res = moveIn(R, /*Concurrent=*/false);
    Plan.BytesMoved += R.PlanRun.BytesIn;
  }
  if (Res.ok())
    Res = finish(R);
  return Res;
}

Result LaunchContext::stage(RunState &R, bool IsMergeDevice) {
  LaunchPlan::Run &Run = R.PlanRun;
  Run = LaunchPlan::Run();
  R.MoveIn.clear();
  Run.Device = R.Dev;
  Run.DeviceName = name(R.Dev);
  Run.First = R.First;
  Run.Count = R.Count;
  if (isCpu(R.Dev))
    Run.Variant = "cpu";
  else
    Run.Variant = R.Count == Total ? "original" : "partition";
  if (isGpu(R.Dev)) {
    FunctionHandle F = nullptr;
    const std::string &Entry =
        R.Count == Total ? Info.variant(VariantKind::Original).Entry
                         : Info.variant(VariantKind::Partition).Entry;
    Result Res = gpuFunction(Bufs, Prog, R.Dev, Entry, F);
    if (Res.ok() && IsMergeDevice)
      Res = gpuFunction(Bufs, Prog, R.Dev,
                        Info.variant(VariantKind::Merge).Entry, F);
    if (!Res.ok())
      return Res;
  }
  for (const BundleVariableUse &U : Info.Variables) {
    Result Res = syncVariableTo(Bufs, Prog, U.Variable, R.Dev);
    if (!Res.ok())
      return Res;
  }
  for (auto &[Id, U] : R.Uses) {
    Buffer &B = *BufById[Id];
    DeviceAddr Ignored;
    Result Res = Bufs.addressOn(B, R.Dev, 0, Ignored); // the replica
    if (!Res.ok())
      return Res;
    RangeSet Need = U.Reads;
    auto MH = R.MustHold.find(Id);
    if (MH != R.MustHold.end())
      Need.insert(MH->second);
    for (ByteRange Rg : Need.ranges()) {
      std::vector<Transfer> Copies;
      Res = Bufs.planTransfers(B, R.Dev, Rg, Copies);
      if (!Res.ok())
        return Res;
      if (!Copies.empty())
        R.MoveIn.push_back({Id, std::move(Copies)});
    }
  }
  return Result::success();
}

/// Runs R's copies. With \p Written (the bytes, per buffer id, that the
/// launch's runs write; prepareAll on an issue worker), a copy into R's GPU
/// from another GPU that it reaches over a peer link, of bytes that no run
/// writes, is only queued on R's compute stream, ahead of its kernel
/// (R.Pulled): nothing on the host waits for a halo row. Its source keeps
/// the bytes until then, as no run writes them; nothing else reads them
/// on R's GPU before the launch waits for that stream (settlePulls).
Result LaunchContext::moveIn(RunState &R, bool Concurrent,
                             const std::map<uint64_t, RangeSet> *Written) {
  Device &D = Bufs.device(R.Dev);
  for (auto &[Id, Copies] : R.MoveIn) {
    Buffer &B = *BufById.at(Id);
    Result Res;
    if (!Written || !isGpu(R.Dev)) {
      Res = Concurrent ? Bufs.executeTransfersUnlocked(B, Copies)
                       : Bufs.executeTransfers(B, Copies);
    } else {
      std::vector<Transfer> Now, Pull;
      auto W = Written->find(Id);
      for (const Transfer &T : Copies) {
        bool Queue = T.Dst == R.Dev && T.Src != HostLocation &&
                     T.Src != R.Dev && isGpu(T.Src) &&
                     D.hasPeerLink(Bufs.device(T.Src)) &&
                     (W == Written->end() ||
                      !W->second.intersects(T.Offset, T.Offset + T.Bytes));
        (Queue ? Pull : Now).push_back(T);
      }
      Res = Bufs.executeTransfersUnlocked(B, Now);
      if (Res.ok() && !Pull.empty()) {
        // Recorded first: a copy that fails midway may have landed some.
        for (const Transfer &T : Pull)
          R.Pulled.push_back({Id, T});
        auto Start = std::chrono::steady_clock::now();
        Res = Bufs.executeTransfersUnlocked(B, Pull, D.internalStream(0));
        R.PullUs += std::chrono::duration<double, std::micro>(
                        std::chrono::steady_clock::now() - Start)
                        .count();
      }
    }
    if (!Res.ok())
      return Res;
    for (const Transfer &T : Copies) {
      R.PlanRun.Copies.push_back({Id, T, name(T.Src), name(T.Dst)});
      R.PlanRun.BytesIn += T.Bytes;
    }
  }
  R.MoveIn.clear();
  return Result::success();
}

void LaunchContext::settlePulls(RunState &R, bool Waited) {
  if (R.Pulled.empty())
    return;
  Result W = Result::success();
  if (!Waited) {
    Device &D = Bufs.device(R.Dev);
    W = D.synchronizeStream(D.internalStream(0));
  }
  // A stream that failed may not have brought them: only the source, which
  // no run wrote, still holds those bytes for certain.
  if (!W.ok())
    for (const auto &[Id, T] : R.Pulled)
      (void)Bufs.markWritten(*BufById.at(Id), T.Src,
                             ByteRange{T.Offset, T.Offset + T.Bytes});
  R.Pulled.clear();
}

/// The run's arguments on its device (a replay has the kept launch's, as
/// repeatRuns() set them), and its plan entry.
Result LaunchContext::finish(RunState &R, bool Replay) {
  if (!Replay) {
    Result Res = argsFor(R, R.Dev);
    if (!Res.ok())
      return Res;
  }
  R.PlanIndex = Plan.Runs.size();
  Plan.Runs.push_back(std::move(R.PlanRun));
  return Result::success();
}

/// Copies into several devices at once pay for the threads that run them
/// above this many bytes in all.
constexpr uint64_t ConcurrentMoveBytes = uint64_t(4) << 20;

/// With \p Staged (a replay), the runs' plan entries and copies are the
/// kept launch's: nothing is staged or planned again.
std::optional<Failure> LaunchContext::prepareAll(std::vector<RunState> &Runs,
                                                 bool Staged) {
  for (RunState &R : Runs) {
    if (Staged)
      break;
    Result Res = stage(R, M == Mode::Merge && R.Dev == MergeDev);
    if (!Res.ok())
      return Failure{R.Dev, Res};
  }
  // Several devices with inputs to move: one thread per device moves them
  // at once. Every run's copies were planned from validity before any of
  // them ran, so each one's sources hold their bytes, and nothing writes
  // them before the launches. Not when a device has two runs (they could
  // plan the same bytes) or a copy goes through the host (two devices
  // could land the same bytes there).
  std::set<Location> Devs, Moving;
  uint64_t Bytes = 0;
  bool Concurrent = true;
  for (RunState &R : Runs) {
    Concurrent &= Devs.insert(R.Dev).second;
    for (auto &[Id, Copies] : R.MoveIn)
      for (const Transfer &T : Copies) {
        Moving.insert(R.Dev);
        Bytes += T.Bytes;
        Concurrent &= Bufs.validityLocation(T.Dst) != HostLocation;
      }
  }
  // Below ConcurrentMoveBytes, starting threads costs more than it saves;
  // the issue workers, where the launch uses them, cost a post each (the
  // halo rows of a stencil split over four GPUs: six copies of 64 KB, one
  // after the other about 60 us of a 0.3 ms step on 4 H200s).
  bool ByWorkers = Concurrent && Moving.size() >= 2 &&
                   Bytes < ConcurrentMoveBytes &&
                   !FaultInjector::global().countsAcrossDevices() &&
                   Pool.usedFor(Moving.size());
  Concurrent &= Moving.size() >= 2 && (Bytes >= ConcurrentMoveBytes || ByWorkers);
  std::vector<Result> Moved(Runs.size(), Result::success());
  if (Concurrent && ByWorkers) {
    Plan.MovedAtOnce = unsigned(Moving.size());
    // Halo rows may be queued behind the runs' kernels (moveIn), not in a
    // merge (M reads every byte) or with combined outputs.
    std::map<uint64_t, RangeSet> Written;
    bool Pull = M != Mode::Merge && !Combining;
    if (Pull)
      for (RunState &R : Runs)
        for (auto &[Id, U] : usesOf(R))
          Written[Id].insert(U.Writes);
    const std::map<uint64_t, RangeSet> *W = Pull ? &Written : nullptr;
    // Every moving run but the last to its device's worker; the last, and
    // those whose worker sleeps, here while the workers copy.
    std::vector<size_t> Posted, Here;
    // CLEAVE_LOG=phases: when each device's copies began and ended.
    using Clock = std::chrono::steady_clock;
    std::vector<std::pair<Clock::time_point, Clock::time_point>> Span(
        Runs.size());
    bool Trace = Phases.On;
    auto Move = [this, W, Trace](RunState &R, Result &Out,
                                 std::pair<Clock::time_point,
                                           Clock::time_point> &T) {
      if (Trace)
        T.first = Clock::now();
      Out = moveIn(R, /*Concurrent=*/true, W);
      if (Trace)
        T.second = Clock::now();
    };
    Clock::time_point Handed = Trace ? Clock::now() : Clock::time_point();
    for (size_t I = 0; I < Runs.size(); ++I) {
      if (Runs[I].MoveIn.empty())
        continue;
      RunState *R = &Runs[I];
      Result *Out = &Moved[I];
      auto *T = &Span[I];
      bool Last = Posted.size() + Here.size() + 1 == Moving.size();
      if (!Last && Pool.tryPost(size_t(R->Dev),
                                [Move, R, Out, T] { Move(*R, *Out, *T); }))
        Posted.push_back(I);
      else
        Here.push_back(I);
    }
    for (size_t I : Here)
      Move(Runs[I], Moved[I], Span[I]);
    for (size_t I : Posted)
      Pool.wait(size_t(Runs[I].Dev));
    if (Trace) {
      Phases.mark("moved");
      auto Us = [](Clock::time_point A, Clock::time_point B) {
        return std::chrono::duration<double, std::micro>(B - A).count();
      };
      for (size_t I = 0; I < Runs.size(); ++I)
        if (Span[I].second != Clock::time_point()) {
          Phases.note("move", name(Runs[I].Dev), Us(Handed, Span[I].first),
                      Us(Span[I].first, Span[I].second));
          if (!Runs[I].Pulled.empty())
            Phases.note("pull", name(Runs[I].Dev),
                        double(Runs[I].Pulled.size()), Runs[I].PullUs);
        }
    }
    for (RunState &R : Runs)
      Plan.BytesMoved += R.PlanRun.BytesIn;
  } else if (Concurrent) {
    Plan.MovedAtOnce = unsigned(Moving.size());
    std::vector<std::thread> Threads;
    for (size_t I = 0; I < Runs.size(); ++I)
      if (!Runs[I].MoveIn.empty())
        Threads.emplace_back([this, &Runs, &Moved, I] {
          Moved[I] = moveIn(Runs[I], /*Concurrent=*/true);
        });
    for (std::thread &T : Threads)
      T.join();
    // What moved counts, whether or not another device failed.
    for (RunState &R : Runs)
      Plan.BytesMoved += R.PlanRun.BytesIn;
  }
  // Otherwise one run after the other, each planned again once an earlier
  // one has moved bytes (it may now take them from that device).
  bool Changed = false;
  for (size_t I = 0; I < Runs.size(); ++I) {
    RunState &R = Runs[I];
    Result Res = Moved[I];
    if (!Concurrent) {
      if (Changed && !Staged)
        Res = stage(R, M == Mode::Merge && R.Dev == MergeDev);
      Changed |= !R.MoveIn.empty();
      if (Res.ok()) {
        Res = moveIn(R, /*Concurrent=*/false);
        Plan.BytesMoved += R.PlanRun.BytesIn;
      }
    }
    if (Res.ok())
      Res = finish(R, Staged);
    if (!Res.ok()) {
      // The next attempt plans from what is valid: the queued copies first.
      for (RunState &X : Runs)
        settlePulls(X, false);
      return Failure{R.Dev, Res};
    }
  }
  return std::nullopt;
}

} // namespace engine
} // namespace rt
} // namespace cleave
