//===- Pipeline.cpp - One GPU run as chunks on three streams -------------===//
//
// Part of Cleave's runtime (no LLVM). See LaunchContext.h and
// docs/runtime.md, "Transfer pipelining".
//
// A run of a launch on one GPU whose inputs are in the host copy would
// upload all of them, then run its kernel, then leave its results for the
// program's copy back. Here it runs as consecutive chunks of its block
// range instead (sizes from planChunks(), scheduler/ChunkPlan.h: Luo's TPSM
// plan, asked in PipelineModel.cpp), on the GPU's three internal streams:
//
//   send     (stream 1, host-to-device copy engine): chunk i's inputs that
//            no earlier chunk sent, then event S[i];
//   kernel   (stream 0): waits for S[i], runs chunk i's blocks, event K[i];
//   receive  (stream 2, device-to-host copy engine): waits for K[i], then
//            sends chunk i's results back to the host copy.
//
// In a split whose other runs are on CPU devices, those compute their
// blocks on the host copies, where the chunks' inputs come from, while the
// chunks run (pipelinedRun(), runHostRuns()).
//
// Sends run ahead of the kernels; chunk i + 1's send overlaps chunk i's
// kernel and chunk i - 1's receive. This is an engine phase rather than a
// SchedulingPolicy: a policy answers which device runs which blocks, and
// one device's chunks on three chained streams are how its run is carried
// out (with its own transfers, events and validity), after that answer.
//
//===----------------------------------------------------------------------===//

#include "LaunchContext.h"

#include "../scheduler/ChunkPlan.h"

namespace cleave {
namespace rt {
namespace engine {

EventHandle PipelineState::event(BufferManager &Bufs, Location L,
                                 size_t Index) {
  std::vector<EventHandle> &E = Events[L];
  while (E.size() <= Index) {
    EventHandle H = nullptr;
    if (!Bufs.device(L).createOrderingEvent(H).ok())
      return nullptr;
    E.push_back(H);
  }
  return E[Index];
}

void PipelineState::release(BufferManager &Bufs) {
  for (auto &[L, E] : Events)
    for (EventHandle H : E)
      (void)Bufs.device(L).destroyEvent(H);
  Events.clear();
}

/// One chunk: its blocks, footprints, and the copies it sends and receives
/// (per buffer id).
struct LaunchContext::PipeChunk {
  uint64_t First = 0, Count = 0;
  RangeUse Uses;
  std::vector<std::pair<uint64_t, std::vector<Transfer>>> Send, Receive;
  uint64_t BytesSent = 0, BytesReceived = 0;
};

namespace {

/// The least predicted gain, as a share of the unpipelined time, that
/// pipelines a GPU's range beside other GPUs'.
constexpr double SharedMinGain = 0.1;

/// Copies of every range of \p Set from \p Src to \p Dst.
std::vector<Transfer> copiesOf(const RangeSet &Set, Location Src, Location Dst,
                               uint64_t &Bytes) {
  std::vector<Transfer> Out;
  for (ByteRange R : Set.ranges()) {
    Out.push_back({Src, Dst, R.Lo, R.size()});
    Bytes += R.size();
  }
  return Out;
}

} // namespace

/// Whether run \p R is worth pipelining, and if so its chunks with what
/// each sends. The rule (docs/runtime.md): the run would otherwise upload
/// at least PipelineOptions::MinBytes from the host copy before its kernel
/// starts, every byte it misses is in the host copy, and the kernel may
/// run as several launches over parts of its grid. A program that already
/// pipelines (its own copies on its own streams, each before the launch
/// that reads them) leaves its launches nothing to upload, so they run as
/// they did.
bool LaunchContext::pipelineChunks(RunState &R, std::vector<PipeChunk> &Chunks,
                                   const SharedLinks *Shared) {
  // Cheap tests first: a launch that reads less than MinBytes, or finds
  // all it reads on the GPU, is not staged twice.
  uint64_t Reads = 0;
  bool AllThere = true;
  for (auto &[Id, U] : R.Uses) {
    ByteRange H = hull(U.Reads);
    Reads += H.size();
    AllThere &= BufById.at(Id)->holds(R.Dev, H);
  }
  if (Reads < Pipe.Opt.MinBytes || AllThere)
    return false;
  if (!stage(R, false).ok())
    return false; // prepareRuns() stages it again and reports the failure
  std::map<uint64_t, RangeSet> Missing;
  uint64_t Upload = 0;
  for (auto &[Id, Copies] : R.MoveIn)
    for (const Transfer &T : Copies) {
      if (Bufs.validityLocation(T.Src) != HostLocation)
        return false;
      Missing[Id].insert(T.Offset, T.Offset + T.Bytes);
      Upload += T.Bytes;
    }
  if (Upload < Pipe.Opt.MinBytes)
    return false;
  // Bytes the run writes that are missing go with the first chunk: a
  // later chunk's send must not land on what an earlier chunk wrote.
  std::map<uint64_t, RangeSet> Sent;
  for (auto &[Id, Miss] : Missing) {
    RangeSet Written;
    if (auto U = R.Uses.find(Id); U != R.Uses.end())
      Written = U->second.Writes;
    if (auto MH = R.MustHold.find(Id); MH != R.MustHold.end())
      Written.insert(MH->second);
    Sent[Id] = Miss.intersection(Written);
  }
  ChunkQuery Q;
  Q.Blocks = R.Count;
  unsigned Dim = slabDim();
  if (Fp && Fp->rebasedVariant(Dim) && Opts.Tune.Rebase)
    Q.Align = slabBlocks(Dim);
  askChunkModel(R, Missing, Sent, Upload, Q, Shared);
  ChunkPlan CP = planChunks(Q);
  std::string Replanned;
  if (CP.Sizes.size() >= 2) {
    if (!buildChunks(R, CP.Sizes, Missing, Sent, Chunks))
      return false;
    bool Receives = false;
    for (const PipeChunk &Ch : Chunks)
      Receives |= !Ch.Receive.empty();
    // The plan counted results that no chunk can send back eagerly
    // (planReceives()' rules): it is made again without them, or the
    // receive it overlaps would never happen.
    if (!Receives && CP.FromModel && Q.Receive.total(Q.Blocks) > 0) {
      Q.Receive = tpsm::Bytes();
      Q.ReceiveCopies = 0;
      CP = planChunks(Q);
      Replanned = "; planned again without receiving: no chunk's results "
                  "can come back eagerly";
      Chunks.clear();
      if (CP.Sizes.size() >= 2 &&
          !buildChunks(R, CP.Sizes, Missing, Sent, Chunks))
        return false;
    }
  }
  LaunchPlan::Pipelined &PP = Plan.Pipelines.emplace_back();
  PP.Device = name(R.Dev);
  PP.Plan = CP.describe() + Replanned;
  if (CP.Model) {
    PP.SendMs = CP.Model->T.Send * 1e3;
    PP.KernelMs = CP.Model->T.Kernel * 1e3;
    PP.ReceiveMs = CP.Model->T.Receive * 1e3;
    PP.PredictedMs = CP.Model->seconds() * 1e3;
  }
  if (CP.Sizes.size() < 2)
    return false;
  if (Shared) {
    // Several GPUs' chunked sends ran slower than one move per GPU at
    // once (1.3-1.5x on the 2x H200, bench/results/linkstates): with
    // several GPUs only a predicted gain of SharedMinGain pipelines.
    if (!CP.FromModel) {
      PP.Plan += "; not pipelined beside other GPUs without the model's "
                 "prediction";
      return false;
    }
    if (CP.Model->seconds() > (1 - SharedMinGain) *
                                  CP.Model->UnpipelinedSeconds) {
      PP.Plan += "; not pipelined beside other GPUs: predicted to save "
                 "under " +
                 std::to_string(int(SharedMinGain * 100)) + " %";
      return false;
    }
  }
  R.MoveIn.clear();
  return true;
}

/// The chunks of \p Sizes from \p R's first block: each one's
/// footprint, what it sends of \p Missing (what \p Sent, the bytes that
/// go with the first chunk, leaves) and what it receives. False when a
/// footprint cannot be evaluated.
bool LaunchContext::buildChunks(RunState &R, const std::vector<uint64_t> &Sizes,
                                const std::map<uint64_t, RangeSet> &Missing,
                                std::map<uint64_t, RangeSet> Sent,
                                std::vector<PipeChunk> &Chunks) {
  Chunks.assign(Sizes.size(), PipeChunk());
  uint64_t First = R.First;
  for (size_t C = 0; C < Sizes.size(); ++C) {
    PipeChunk &Ch = Chunks[C];
    Ch.First = First;
    Ch.Count = Sizes[C];
    First += Sizes[C];
    if (!evaluate(Ch.First, Ch.Count, Ch.Uses).ok())
      return false;
    for (auto &[Id, Miss] : Missing) {
      RangeSet Need;
      if (C == 0)
        Need = Sent[Id];
      if (auto U = Ch.Uses.find(Id); U != Ch.Uses.end()) {
        RangeSet Reads = U->second.Reads.intersection(Miss);
        Reads.erase(Sent[Id]);
        Sent[Id].insert(Reads);
        Need.insert(Reads);
      }
      if (!Need.empty())
        Ch.Send.push_back(
            {Id, copiesOf(Need, HostLocation, R.Dev, Ch.BytesSent)});
    }
  }
  planReceives(R, Chunks);
  return true;
}

/// A chunk's results in one buffer come back in at most this many copies;
/// more (a transpose's columns) are not received eagerly: small copies
/// cost more than they overlap.
constexpr size_t MaxReceiveCopies = 64;

/// Results to send back chunk by chunk: of each buffer whose results the
/// program read back after its last write (Buffer::readBackBytes), when
/// every chunk's writes into it are exact and no two chunks write the same
/// byte. Bytes the run also reads stay out: the host copy keeps them for
/// a recovery that runs the blocks again elsewhere.
void LaunchContext::planReceives(RunState &R, std::vector<PipeChunk> &Chunks) {
  if (!Pipe.Opt.Receive)
    return;
  for (auto &[Id, Use] : R.Uses) {
    Buffer &B = *BufById.at(Id);
    if (Use.Writes.empty() || B.readBackBytes(hull(Use.Writes)) == 0)
      continue;
    RangeSet Seen;
    bool Disjoint = true;
    for (PipeChunk &Ch : Chunks) {
      auto U = Ch.Uses.find(Id);
      if (U == Ch.Uses.end())
        continue;
      if (U->second.WritesCoarse)
        refineWrites(U->second, B.size());
      for (ByteRange W : U->second.Writes.ranges())
        Disjoint &= !Seen.intersects(W.Lo, W.Hi);
      Disjoint &= U->second.WritesExact &&
                  U->second.Writes.numRanges() <= MaxReceiveCopies;
      Seen.insert(U->second.Writes);
    }
    if (!Disjoint)
      continue;
    for (PipeChunk &Ch : Chunks) {
      auto U = Ch.Uses.find(Id);
      if (U == Ch.Uses.end())
        continue;
      RangeSet Back = U->second.Writes;
      Back.erase(Use.Reads);
      if (auto MH = R.MustHold.find(Id); MH != R.MustHold.end())
        Back.erase(MH->second);
      if (!Back.empty())
        Ch.Receive.push_back(
            {Id, copiesOf(Back, R.Dev, HostLocation, Ch.BytesReceived)});
    }
  }
}

/// Queues every chunk: send i, kernel i, then receive i - 1, so that with
/// pageable host copies (whose copies the host drives) chunk i's send is
/// under way before the host waits for chunk i - 1's results. Stops at the
/// first error. \p Launched counts the chunks whose kernel was queued,
/// \p SendsDone those whose sends were all queued.
Result LaunchContext::issueChunks(RunState &R, std::vector<PipeChunk> &Chunks,
                                  size_t &Launched, size_t &SendsDone) {
  Device &D = Bufs.device(R.Dev);
  StreamHandle Kernel = D.internalStream(0), SendS = D.internalStream(1),
               RecvS = D.internalStream(2);
  const std::string &Entry = Info.variant(VariantKind::Partition).Entry;
  auto Queue = [&](std::vector<std::pair<uint64_t, std::vector<Transfer>>> &L,
                   StreamHandle S) {
    for (auto &[Id, Copies] : L)
      if (Result Res = Bufs.queueTransfers(*BufById.at(Id), Copies, S);
          !Res.ok())
        return Res;
    return Result::success();
  };
  auto Receive = [&](size_t C) {
    if (Chunks[C].Receive.empty())
      return Result::success();
    Result Res = D.waitForEvent(RecvS, D, Pipe.event(Bufs, R.Dev, 2 * C + 1));
    return Res.ok() ? Queue(Chunks[C].Receive, RecvS) : Res;
  };
  for (size_t C = 0; C < Chunks.size(); ++C) {
    PipeChunk &Ch = Chunks[C];
    EventHandle Sent = Pipe.event(Bufs, R.Dev, 2 * C),
                Ran = Pipe.event(Bufs, R.Dev, 2 * C + 1);
    Result Res = Queue(Ch.Send, SendS);
    if (Res.ok())
      Res = D.recordEvent(Sent, SendS);
    if (!Res.ok())
      return Res;
    SendsDone = C + 1;
    Res = D.waitForEvent(Kernel, D, Sent);
    // The chunk's kernel alone, timed for the performance table.
    EventHandle T0 = chunkTimer(R.Dev, 2 * C), T1 = chunkTimer(R.Dev, 2 * C + 1);
    if (Res.ok() && T0 && T1)
      Res = D.recordEvent(T0, Kernel);
    if (Res.ok())
      Res = launchOne(R.Dev, false, Entry, nullptr, Ch.First, Ch.Count,
                      R.ArgPtrs, R.PartParams);
    if (!Res.ok())
      return Res;
    Launched = C + 1;
    if (T0 && T1)
      if (Res = D.recordEvent(T1, Kernel); !Res.ok())
        return Res;
    if (Res = D.recordEvent(Ran, Kernel); !Res.ok())
      return Res;
    if (C > 0)
      if (Res = Receive(C - 1); !Res.ok())
        return Res;
  }
  return Receive(Chunks.size() - 1);
}

std::vector<RunState *> LaunchContext::pipelinedRuns(AttemptState &A) {
  // Each GPU's run; any other runs are on CPU devices, which work on the
  // buffers' host copies, where the GPUs' inputs come from.
  if (!Pipe.Opt.On || A.Repeat || M == Mode::Merge || Combining ||
      !whyNotSplit(true).empty())
    return {};
  std::vector<RunState *> Gpus;
  std::set<Location> Seen;
  for (RunState &R : A.Runs) {
    if (isGpu(R.Dev)) {
      if (!Seen.insert(R.Dev).second || R.Count < 2 ||
          Bufs.device(R.Dev).numInternalStreams() < 3)
        return {};
      Gpus.push_back(&R);
    } else if (!isCpu(R.Dev) ||
               Bufs.validityLocation(R.Dev) != HostLocation) {
      return {};
    }
  }
  return Gpus;
}

std::optional<LaunchContext::SharedLinks>
LaunchContext::sharedLinks(const std::vector<RunState *> &Gpus) {
  if (Gpus.size() < 2 || !Model.P || !Model.P->profile().FromFile)
    return std::nullopt;
  std::vector<int> Ordinals;
  for (const RunState *R : Gpus)
    Ordinals.push_back(Bufs.device(R->Dev).properties().Ordinal);
  auto [It, New] = Pipe.Groups.try_emplace(Ordinals);
  if (New)
    It->second = tpsm::symmetricGroup(Model.P->profile(), Ordinals);
  const tpsm::GpuGroup &G = It->second;
  SharedLinks L;
  L.Gpus = unsigned(Gpus.size());
  if (!G.PerGpu.Missing.empty()) {
    L.Note = "the profile lacks the host-link states of these " +
             std::to_string(Gpus.size()) + " GPUs (" + G.PerGpu.Missing +
             "): each GPU's own link rates, which overestimate a shared link";
    return L;
  }
  L.Rates = G.PerGpu;
  return L;
}

std::optional<Failure> LaunchContext::prepareHostRuns(AttemptState &A) {
  for (RunState &R : A.Runs) {
    if (!isCpu(R.Dev))
      continue;
    if (Result Res = prepare(R, false); !Res.ok())
      return Failure{R.Dev, Res};
  }
  return std::nullopt;
}

void LaunchContext::runHostRuns(AttemptState &A) {
  for (RunState &R : A.Runs) {
    if (!isCpu(R.Dev))
      continue;
    Result Res = issue(R);
    if (Res.ok()) {
      R.Issued = true;
      continue;
    }
    R.Failed = true;
    A.Failed.emplace(R.Dev, Res);
  }
  runCpuRanges(A);
}

/// What one GPU's pipeline did: its chunks, how far their issue got, its
/// streams' waits and its time.
struct LaunchContext::PipeRun {
  RunState *R = nullptr;
  std::vector<PipeChunk> Chunks;
  size_t Launched = 0, SendsDone = 0;
  Result Err, SendWait, KernelWait, RecvWait;
  double Ms = 0;
};

/// Queues \p P's chunks and waits for its three streams. Runs on a thread
/// of its own when several GPUs pipeline at once: the host copies into a
/// GPU's staging buffers (pageable host copies), so one thread would feed
/// one GPU after the other.
void LaunchContext::runPipe(PipeRun &P) {
  auto Start = std::chrono::steady_clock::now();
  P.Err = issueChunks(*P.R, P.Chunks, P.Launched, P.SendsDone);
  waitPipe(P, Start);
}

void LaunchContext::waitPipe(PipeRun &P,
                             std::chrono::steady_clock::time_point Start) {
  Device &D = Bufs.device(P.R->Dev);
  P.SendWait = D.synchronizeStream(D.internalStream(1));
  P.KernelWait = D.synchronizeStream(D.internalStream(0));
  P.RecvWait = D.synchronizeStream(D.internalStream(2));
  P.Ms = std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - Start)
             .count();
}

Result LaunchContext::pipeline(AttemptState &A, bool &Piped) {
  Piped = false;
  std::vector<RunState *> Gpus = pipelinedRuns(A);
  if (Gpus.empty())
    return Result::success();
  // Several GPUs pipelining at once share the host's links: each GPU's
  // chunks are planned on its rates among them (symmetric TPSM over n
  // GPUs, MultiGpuTpsm.h).
  std::optional<SharedLinks> Shared = sharedLinks(Gpus);
  std::vector<PipeRun> Pipes(Gpus.size());
  size_t PlanMark = Plan.Pipelines.size();
  for (size_t I = 0; I < Gpus.size(); ++I) {
    PipeRun &P = Pipes[I];
    P.R = Gpus[I];
    Location Dev = P.R->Dev;
    size_t Before = Plan.Pipelines.size();
    // Every GPU's or none: a GPU whose share is not worth it runs as the
    // launch's other ranges do. Its plan (if it got one) says why; the
    // others' are dropped, since they did not run.
    if (!pipelineChunks(*P.R, P.Chunks, Shared ? &*Shared : nullptr) ||
        !Pipe.event(Bufs, Dev, 2 * P.Chunks.size()) ||
        (chunkTimer(Dev, 0) && !chunkTimer(Dev, 2 * P.Chunks.size() - 1))) {
      std::optional<LaunchPlan::Pipelined> Why;
      if (Plan.Pipelines.size() > Before)
        Why = std::move(Plan.Pipelines.back());
      Plan.Pipelines.resize(PlanMark);
      if (Why) {
        if (Gpus.size() > 1)
          Why->Plan += " (so no GPU of this launch is pipelined)";
        Plan.Pipelines.push_back(std::move(*Why));
      }
      return Result::success(); // not worth it, or no events to chain with
    }
  }
  if (Shared)
    for (size_t I = PlanMark; I < Plan.Pipelines.size(); ++I)
      Plan.Pipelines[I].Plan +=
          Shared->Note.empty()
              ? "; host links shared by " + std::to_string(Shared->Gpus) +
                    " GPUs (each GPU's rates among them, from the link states)"
              : "; " + Shared->Note;
  Piped = true;
  Defer = false;
  // Earlier launches' GPU work done first: the copy streams are not
  // ordered behind it.
  if (Result S = Bufs.settle(); !S.ok())
    return S;
  if ((A.Fail = prepareHostRuns(A)))
    return Result::success();
  for (PipeRun &P : Pipes) {
    P.R->PlanRun.Variant = "chunks";
    if (Result Res = finish(*P.R); !Res.ok()) {
      A.Fail = Failure{P.R->Dev, Res};
      return Result::success();
    }
  }
  Phases.mark("chunks");
  // One thread per GPU but the last, which this thread feeds; then the
  // CPU's blocks, on the host copies, while the GPUs' chunks run.
  std::vector<std::thread> Threads;
  if (Pipes.size() > 1)
    Plan.MovedAtOnce = unsigned(Pipes.size());
  for (size_t I = 0; I + 1 < Pipes.size(); ++I)
    Threads.emplace_back([this, &P = Pipes[I]] { runPipe(P); });
  PipeRun &Last = Pipes.back();
  auto Start = std::chrono::steady_clock::now();
  Last.Err = issueChunks(*Last.R, Last.Chunks, Last.Launched, Last.SendsDone);
  Phases.mark("issue", name(Last.R->Dev));
  // The CPU's blocks, on the host copies, while the GPUs' chunks run
  // (unless nothing of this GPU's started: if no other GPU's did either,
  // the attempt starts again without it, below).
  bool HostRan = Last.Err.ok() || Last.Launched > 0;
  if (HostRan)
    runHostRuns(A);
  waitPipe(Last, Start);
  for (std::thread &T : Threads)
    T.join();
  Phases.mark("wait", name(Last.R->Dev));
  // Nothing ran anywhere: as a device that failed before anything ran,
  // the attempt starts again without the first that failed.
  const PipeRun *Failed = nullptr;
  for (const PipeRun &P : Pipes) {
    if (P.Launched > 0) {
      Failed = nullptr;
      break;
    }
    if (!Failed)
      Failed = &P;
  }
  if (Failed) {
    A.Fail = Failure{Failed->R->Dev, Failed->Err};
    return Result::success();
  }
  if (!HostRan)
    runHostRuns(A);
  for (size_t I = 0; I < Pipes.size(); ++I)
    landPipe(A, Pipes[I], Plan.Pipelines[PlanMark + I]);
  return Result::success();
}

/// Claims what \p P's sends brought, whatever failed after them, and
/// settles its run: done, or failed (its blocks run again elsewhere).
void LaunchContext::landPipe(AttemptState &A, PipeRun &P,
                             LaunchPlan::Pipelined &PP) {
  RunState &R = *P.R;
  PP.Ms = P.Ms;
  uint64_t SentBytes = 0;
  if (P.SendWait.ok())
    for (size_t C = 0; C < P.SendsDone; ++C) {
      for (auto &[Id, Copies] : P.Chunks[C].Send)
        Bufs.landTransfers(*BufById.at(Id), Copies);
      SentBytes += P.Chunks[C].BytesSent;
    }
  Plan.Runs[R.PlanIndex].BytesIn = SentBytes;
  Plan.BytesMoved += SentBytes;
  Result Err = P.Err;
  for (const Result *W : {&P.SendWait, &P.KernelWait, &P.RecvWait})
    if (Err.ok() && !W->ok())
      Err = *W;
  if (Err.ok()) {
    std::vector<uint64_t> Counts;
    for (const PipeChunk &Ch : P.Chunks)
      Counts.push_back(Ch.Count);
    PP.KernelMeasuredMs = recordChunkTimes(R, Counts);
    notePipeline(PP, P.Chunks);
    R.Issued = true;
    for (PipeChunk &Ch : P.Chunks)
      for (auto &Rc : Ch.Receive)
        R.Received.push_back(std::move(Rc));
    return;
  }
  // Failed once another GPU's chunks ran (or its own): its blocks run
  // again elsewhere, and nothing it received counts.
  notePipeline(PP, P.Chunks);
  R.Issued = true;
  R.Failed = true;
  A.Failed[R.Dev] = Err;
  dropUnproduced(R);
}

void LaunchContext::notePipeline(LaunchPlan::Pipelined &PP,
                                 const std::vector<PipeChunk> &Chunks) {
  for (const PipeChunk &Ch : Chunks)
    PP.Chunks.push_back({Ch.First, Ch.Count, Ch.BytesSent, Ch.BytesReceived});
}

void LaunchContext::landReceived(AttemptState &A) {
  for (RunState &R : A.Runs) {
    if (!R.Failed)
      for (auto &[Id, Copies] : R.Received)
        Bufs.landTransfers(*BufById.at(Id), Copies);
    R.Received.clear();
  }
}

} // namespace engine
} // namespace rt
} // namespace cleave
