//===- PipelineModel.cpp - The chunk plan's inputs and the chunks' times --===//
//
// Part of Cleave's runtime (no LLVM). See LaunchContext.h and
// docs/runtime.md, "Transfer pipelining". What Luo's TPSM model
// (cleave/rt/Tpsm.h, asked through scheduler/ChunkPlan.h) needs to size a
// pipelined run's chunks, from what the engine has:
//
//   link rates   the GPU's entry of the device profile, pinned or pageable
//                as the host copies of the bytes to send are; a profile that
//                lacks a rate leaves the provisional rule to answer;
//   bytes        Fixed + PerBlock n each way, fitted to the footprints of
//                the run's first wave and of the whole run;
//   kernel time  the model policy's performance table of this kernel on
//                this GPU: rows measured (by any launch, pipelined chunks
//                included) when there are, else the profile's roofline seed.
//
//===----------------------------------------------------------------------===//

#include "LaunchContext.h"

#include "../scheduler/ChunkPlan.h"

namespace cleave {
namespace rt {
namespace engine {

namespace {

/// Fixed + PerBlock n through (n1, B1) and (N, Total), neither part
/// negative: a range's bytes grow with its blocks.
tpsm::Bytes fitBytes(uint64_t N1, double B1, uint64_t N, double Total) {
  tpsm::Bytes B;
  if (N == 0)
    return B;
  if (N1 == 0 || N1 >= N) {
    B.PerBlock = Total / double(N);
    return B;
  }
  B.PerBlock = std::max(0.0, (Total - B1) / double(N - N1));
  B.Fixed = B1 - B.PerBlock * double(N1);
  if (B.Fixed < 0) {
    B.Fixed = 0;
    B.PerBlock = Total / double(N);
  }
  return B;
}

/// The bytes of \p Use's writes that a pipelined run sends back: those
/// the run does not read (planReceives()).
uint64_t receivedBytes(const BufferUse &Use, const RangeSet &RunReads) {
  RangeSet Back = Use.Writes;
  Back.erase(RunReads);
  return Back.totalBytes();
}

} // namespace

/// The host link rates of the chunks' copies: the pinned ones, whether or
/// not the host copy is page-locked. The engine copies a pageable host copy
/// through its own page-locked staging buffers, the host's memcpy into
/// them overlapping the link; the profile's pageable rates are a plain
/// cudaMemcpy from pageable memory, through the driver's staging. On the
/// H200 the engine sent 2 GiB from a pageable host copy in 45.4 ms
/// (47 GB/s; pinned 55 GB/s, pageable cudaMemcpy 6.4 GB/s), and with the
/// pageable rates the plan cut vecadd into 142 chunks for a send it
/// predicted 7x too long (bench/results/pipeline/
/// pipeline-2026-11-29-h200-796cac3-plans.log.gz).
static tpsm::HostMemory chunkCopyMemory() {
  return tpsm::HostMemory::Pinned;
}

void LaunchContext::askChunkModel(RunState &R,
                                  const std::map<uint64_t, RangeSet> &Missing,
                                  const std::map<uint64_t, RangeSet> &First,
                                  uint64_t Upload, ChunkQuery &Q,
                                  const SharedLinks *Shared) {
  ModelPartitioner &Pl = Model.planner(Bufs);
  const DeviceProperties &Props = Bufs.device(R.Dev).properties();
  unsigned Threads = Req.Block[0] * Req.Block[1] * Req.Block[2];
  SplitDevice SD = planDevice(R.Dev, Threads);
  SplitDevs[R.Dev] = SD; // for recordChunkTimes()
  Q.WaveBlocks = std::max<uint64_t>(1, SD.Wave);

  Q.Memory = chunkCopyMemory();
  const GpuProfile *G = Pl.profile().gpu(Props.Ordinal);
  if (Shared && Shared->Rates)
    Q.Links = *Shared->Rates;
  else if (G && Pl.profile().FromFile)
    Q.Links = tpsm::linkRates(*G, Q.Memory);

  // Bytes each way: the whole run, and its first wave (whole slabs).
  uint64_t N = R.Count;
  uint64_t Align = std::max<uint64_t>(Q.Align, 1);
  uint64_t N1 = std::min(N, (Q.WaveBlocks + Align - 1) / Align * Align);
  RangeUse FirstUses;
  bool Fit = N1 < N && evaluate(R.First, N1, FirstUses).ok();
  double Send1 = 0, Recv = 0, Recv1 = 0;
  Q.SendCopies = unsigned(Missing.size());
  Q.ReceiveCopies = 0;
  for (auto &[Id, Miss] : Missing) {
    RangeSet Need = First.count(Id) ? First.at(Id) : RangeSet();
    if (auto U = FirstUses.find(Id); U != FirstUses.end())
      Need.insert(U->second.Reads.intersection(Miss));
    Send1 += double(Need.totalBytes());
  }
  if (Pipe.Opt.Receive)
    for (auto &[Id, U] : R.Uses) {
      if (U.Writes.empty() || !BufById.at(Id)->readBackBytes(hull(U.Writes)))
        continue;
      ++Q.ReceiveCopies;
      Recv += double(receivedBytes(U, U.Reads));
      if (auto F = FirstUses.find(Id); F != FirstUses.end())
        Recv1 += double(receivedBytes(F->second, U.Reads));
    }
  Q.Send = fitBytes(Fit ? N1 : 0, Send1, N, double(Upload));
  Q.Receive = fitBytes(Fit ? N1 : 0, Recv1, N, Recv);

  // The kernel's time: its performance table on this GPU.
  setModelKey();
  SplitRequest SR;
  SR.Key = Key;
  SR.TotalBlocks = N;
  SR.Devices = {SD};
  double Bytes = 0;
  for (auto &[Id, U] : R.Uses)
    Bytes += double(U.Reads.totalBytes() + U.Writes.totalBytes());
  SR.BytesPerBlock = Bytes / double(std::max<uint64_t>(N, 1));
  SplitDeviceReport Rep;
  PerfTable T = Pl.table(SR, 0, &Rep);
  if (T.empty())
    return;
  double LaunchS = G && G->Model.LaunchUs > 0 ? G->Model.LaunchUs * 1e-6 : 0;
  Q.Kernel = [T, LaunchS](uint64_t Blocks) {
    return Blocks ? T.timeMs(Blocks) / 1e3 + LaunchS : 0.0;
  };
  Q.KernelSource =
      Rep.MeasuredRows
          ? "measured (" + std::to_string(Rep.MeasuredRows) +
                " rows of this kernel's table on " + name(R.Dev) + ")"
          : "the profile's roofline seed (" + name(R.Dev) +
                "'s DRAM rate over the footprint's bytes; not measured yet)";
}

std::optional<tpsm::LinkRates> LaunchContext::pipelineLinks(Location L) {
  if (!Pipe.Opt.On || !Model.P || !isGpu(L) ||
      Bufs.device(L).numInternalStreams() < 3 || !whyNotSplit(true).empty())
    return std::nullopt;
  const DeviceProfile &Prof = Model.P->profile();
  const GpuProfile *G = Prof.gpu(Bufs.device(L).properties().Ordinal);
  if (!G || !Prof.FromFile)
    return std::nullopt;
  tpsm::LinkRates Links = tpsm::linkRates(*G, chunkCopyMemory());
  if (!Links.Missing.empty())
    return std::nullopt;
  return Links;
}

EventHandle LaunchContext::chunkTimer(Location L, size_t Index) {
  return Model.P ? Model.event(Bufs, L, Index) : nullptr;
}

double LaunchContext::recordChunkTimes(const RunState &R,
                                       const std::vector<uint64_t> &Counts) {
  if (!Model.P)
    return 0;
  auto SD = SplitDevs.find(R.Dev);
  if (SD == SplitDevs.end())
    return 0;
  Device &D = Bufs.device(R.Dev);
  // The first range of a kernel on a GPU pays for loading its code
  // (ModelState::Warm): not a measurement of the kernel.
  bool Cold = Model.Warm.insert({R.Dev, Key.text()}).second;
  double Sum = 0;
  for (size_t C = 0; C < Counts.size(); ++C) {
    EventHandle T0 = chunkTimer(R.Dev, 2 * C), T1 = chunkTimer(R.Dev, 2 * C + 1);
    float Ms = 0;
    if (!T0 || !T1 || !D.elapsedTime(T0, T1, Ms).ok())
      return 0;
    Sum += Ms;
    if (!(Cold && C == 0))
      Model.P->record(SD->second, Key, Counts[C], Ms);
  }
  Model.P->maybeFlush();
  return Sum;
}

} // namespace engine
} // namespace rt
} // namespace cleave
