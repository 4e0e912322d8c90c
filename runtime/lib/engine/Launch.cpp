//===- Launch.cpp - Splitting a launch over CPU devices -------------------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/Launch.h.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Launch.h"

#include "LaunchSupport.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

namespace cleave {
namespace rt {

using namespace launch;

namespace {

/// The footprints of blocks [First, First + Count), per buffer.
Result evaluateRange(const CpuLaunchRequest &Req, LaunchConfig Config,
                     const std::vector<PtrArg> &Ptrs, uint64_t First,
                     uint64_t Count, RangeUse &Out) {
  Out.clear();
  Config.First = int64_t(First);
  Config.Count = int64_t(Count);
  FootprintResult FR;
  Status S = Req.Footprints->evaluate(Config, FR);
  if (!S)
    return invalid("footprint evaluation of " + blocksText(First, Count) +
                   ": " + S.Message);
  for (const PtrArg &P : Ptrs)
    addArgumentUse(P, FR.find(P.ArgNo), /*MayWrite=*/true, First, Count,
                   Out[P.Buf->id()]);
  return Result::success();
}

} // namespace

std::string LaunchPlan::describe() const {
  std::string S = "launch " + (KernelName.empty() ? "?" : KernelName) +
                  (Swapped ? " [x<->y]" : "") + ": ";
  size_t NumRuns = 0;
  for (const Run &R : Runs)
    NumRuns += !R.IsMerge;
  if (Split)
    S += "split over " + std::to_string(NumRuns) + " range(s)";
  else
    S += "not split (" + Reason + "); whole grid on one device";
  if (Reconcile == "merge")
    S += ", merged on " + MergeDevice;
  else if (!Reconcile.empty())
    S += ", " + Reconcile + " writes";
  if (!Combined.empty())
    S += ", combined on the host: " + Combined;
  S += ", " + std::to_string(BytesMoved) + " bytes moved";
  if (MovedAtOnce)
    S += " (into " + std::to_string(MovedAtOnce) + " devices at once)";
  if (Replayed)
    S += ", replayed";
  else if (Repeated)
    S += ", repeated";
  if (Deferred)
    S += ", completion deferred";
  S += "\n";
  for (const Run &R : Runs) {
    S += "  ";
    if (R.IsMerge)
      S += "merge on " + R.DeviceName + " of " + R.MergeFrom + " " +
           blocksText(R.First, R.Count) + ": " + std::to_string(R.BytesIn) +
           " bytes of partials";
    else
      S += R.DeviceName + " " + blocksText(R.First, R.Count) + ": " +
           std::to_string(R.BytesIn) + " bytes in";
    if (!R.Variant.empty())
      S += " [" + R.Variant + "]";
    for (const Run::Copy &C : R.Copies)
      S += "; buffer #" + std::to_string(C.BufferId) + " [" +
           std::to_string(C.T.Offset) + ", " +
           std::to_string(C.T.Offset + C.T.Bytes) + ") " + C.From + "->" +
           C.To;
    S += "\n";
  }
  for (const Recovery &R : Recoveries) {
    S += "  recovery: " + R.Device + " failed (" + R.Error + "); blocks";
    for (auto [F, E] : R.Blocks)
      S += " [" + std::to_string(F) + ", " + std::to_string(E) + ")";
    S += " re-run on " + R.To + "\n";
  }
  return S;
}

Result launchOnCpuDevices(BufferManager &Bufs, CpuExecutor &Exec,
                          const CpuLaunchRequest &Req, LaunchPlan &Plan) {
  Plan = LaunchPlan();
  // The request. ---------------------------------------------------------
  if (!Req.Kernel || !Req.Kernel->fn)
    return invalid("launch without a CPU variant");
  Plan.KernelName = Req.Kernel->name ? Req.Kernel->name : "";
  if (!Req.Footprints)
    return invalid("launch of " + Plan.KernelName + " without footprints");
  unsigned NumArgs = Req.Footprints->numArgs();
  if (Req.Kernel->num_params != NumArgs)
    return invalid("kernel " + Plan.KernelName + " takes " +
                   std::to_string(Req.Kernel->num_params) +
                   " parameters but its footprints describe " +
                   std::to_string(NumArgs));
  if (Req.ArgSizes.size() != NumArgs)
    return invalid("expected " + std::to_string(NumArgs) +
                   " argument sizes, got " +
                   std::to_string(Req.ArgSizes.size()));
  if (NumArgs && !Req.Args)
    return invalid("null argument array");
  for (unsigned I = 0; I < NumArgs; ++I)
    if (!Req.Args[I])
      return invalid("argument " + std::to_string(I) + " has no value");
  for (int D = 0; D < 3; ++D)
    if (Req.Grid[D] == 0 || Req.Block[D] == 0)
      return invalid("grid and block dimensions must be at least 1");
  uint64_t Total = uint64_t(Req.Grid[0]) * Req.Grid[1] * Req.Grid[2];

  // The partition: known CPU devices, covering [0, Total) exactly once.
  if (Req.Partition.empty())
    return invalid("empty partition");
  std::vector<PartitionRange> Sorted = Req.Partition;
  for (const PartitionRange &R : Sorted) {
    if (R.Device < 0 || size_t(R.Device) >= Bufs.numDevices())
      return Result::error(ErrorCode::InvalidDevice,
                           "partition names device " +
                               std::to_string(R.Device) + " of " +
                               std::to_string(Bufs.numDevices()));
    if (Bufs.device(R.Device).kind() != DeviceKind::Cpu)
      return Result::error(ErrorCode::NotSupported,
                           "launch on " + Bufs.device(R.Device).name() +
                               ": only CPU devices launch so far");
    if (R.Count == 0)
      return invalid("partition range on " + Bufs.device(R.Device).name() +
                     " is empty");
  }
  std::sort(Sorted.begin(), Sorted.end(),
            [](const PartitionRange &A, const PartitionRange &B) {
              return A.First < B.First;
            });
  uint64_t Next = 0;
  for (const PartitionRange &R : Sorted) {
    if (R.First != Next)
      return invalid("partition " +
                     std::string(R.First < Next ? "overlaps at block "
                                                : "leaves out blocks from ") +
                     std::to_string(std::min(R.First, Next)) + " (grid of " +
                     std::to_string(Total) + " blocks)");
    if (R.Count > Total - R.First)
      return invalid("partition range " + blocksText(R.First, R.Count) +
                     " goes past the grid's " + std::to_string(Total) +
                     " blocks");
    Next = R.First + R.Count;
  }
  if (Next != Total)
    return invalid("partition leaves out blocks from " +
                   std::to_string(Next) + " (grid of " +
                   std::to_string(Total) + " blocks)");

  // The arguments. -------------------------------------------------------
  LaunchConfig Config;
  for (int D = 0; D < 3; ++D) {
    Config.Grid[D] = Req.Grid[D];
    Config.Block[D] = Req.Block[D];
  }
  Config.Args.assign(NumArgs, 0);
  std::vector<PtrArg> Ptrs;
  for (unsigned I = 0; I < NumArgs; ++I) {
    if (Req.Footprints->isPointerArg(I)) {
      void *P = nullptr;
      std::memcpy(&P, Req.Args[I], sizeof(P));
      if (!P)
        continue;
      BufferManager::Resolved Res;
      Result R = Bufs.resolve(P, Res);
      if (!R.ok())
        return invalid("argument " + std::to_string(I) + ": " + R.message());
      Ptrs.push_back({I, Res.Buf, Res.Offset});
      continue;
    }
    int64_t V = 0;
    switch (Req.ArgSizes[I]) {
    case 1: { int8_t X; std::memcpy(&X, Req.Args[I], 1); V = X; break; }
    case 2: { int16_t X; std::memcpy(&X, Req.Args[I], 2); V = X; break; }
    case 4: { int32_t X; std::memcpy(&X, Req.Args[I], 4); V = X; break; }
    case 8: { int64_t X; std::memcpy(&X, Req.Args[I], 8); V = X; break; }
    default: break; // Not an integer: the evaluator ignores it.
    }
    Config.Args[I] = V;
  }
  std::map<uint64_t, std::shared_ptr<Buffer>> BufById;
  for (const PtrArg &P : Ptrs)
    BufById[P.Buf->id()] = P.Buf;

  // Footprints per range, and whether the split can be reconciled. -------
  std::vector<RangeUse> Uses(Req.Partition.size());
  for (size_t I = 0; I < Req.Partition.size(); ++I) {
    Result R = evaluateRange(Req, Config, Ptrs, Req.Partition[I].First,
                             Req.Partition[I].Count, Uses[I]);
    if (!R.ok())
      return R;
  }
  for (size_t I = 0; I < Uses.size() && Plan.Split; ++I)
    for (auto &[Id, U] : Uses[I])
      if (!U.WritesExact) {
        Plan.Split = false;
        Plan.Reason = "buffer #" + std::to_string(Id) + ": " + U.NotExact;
        break;
      }
  // Writes of different devices must be disjoint.
  for (size_t I = 0; I < Uses.size() && Plan.Split; ++I)
    for (size_t J = I + 1; J < Uses.size() && Plan.Split; ++J) {
      if (Req.Partition[I].Device == Req.Partition[J].Device)
        continue;
      for (auto &[Id, U] : Uses[I]) {
        auto It = Uses[J].find(Id);
        if (It == Uses[J].end() ||
            U.Writes.intersection(It->second.Writes).empty())
          continue;
        Plan.Split = false;
        Plan.Reason = "buffer #" + std::to_string(Id) + " is written by " +
                      Bufs.device(Req.Partition[I].Device).name() + " and " +
                      Bufs.device(Req.Partition[J].Device).name() +
                      " at the same bytes";
        break;
      }
    }

  std::vector<PartitionRange> Runs = Req.Partition;
  if (!Plan.Split) {
    // The whole grid on the first device. A write that is not Exact is
    // marked written over its whole bound, so the bound must hold current
    // data before the run.
    Runs = {{Req.Partition[0].Device, 0, Total}};
    Uses.assign(1, RangeUse());
    Result R = evaluateRange(Req, Config, Ptrs, 0, Total, Uses[0]);
    if (!R.ok())
      return R;
    for (auto &[Id, U] : Uses[0])
      if (!U.WritesExact)
        U.Reads.insert(U.Writes);
  }

  // Phase 1: every range's inputs. ---------------------------------------
  for (size_t I = 0; I < Runs.size(); ++I) {
    LaunchPlan::Run Run;
    Run.Device = Runs[I].Device;
    Run.DeviceName = Bufs.device(Run.Device).name();
    Run.First = Runs[I].First;
    Run.Count = Runs[I].Count;
    for (auto &[Id, U] : Uses[I]) {
      Buffer &B = *BufById[Id];
      DeviceAddr Ignored;
      Result R = Bufs.addressOn(B, Run.Device, 0, Ignored); // the replica
      if (!R.ok())
        return R;
      for (ByteRange Rg : U.Reads.ranges()) {
        std::vector<Transfer> Copies;
        R = Bufs.planTransfers(B, Run.Device, Rg, Copies);
        if (R.ok())
          R = Bufs.executeTransfers(B, Copies);
        if (!R.ok())
          return R;
        for (const Transfer &T : Copies) {
          Run.Copies.push_back(
              {Id, T, locationName(Bufs, T.Src), locationName(Bufs, T.Dst)});
          Run.BytesIn += T.Bytes;
        }
      }
    }
    Plan.BytesMoved += Run.BytesIn;
    Plan.Runs.push_back(std::move(Run));
  }

  // Phase 2: run. --------------------------------------------------------
  cleave_cpu_launch L;
  for (int D = 0; D < 3; ++D) {
    L.grid[D] = Req.Grid[D];
    L.block[D] = Req.Block[D];
  }
  L.dynamic_shared_bytes = Req.DynamicSharedBytes;
  for (const PartitionRange &Run : Runs) {
    std::vector<void *> Values(NumArgs, nullptr);
    std::vector<void *> ArgPtrs(Req.Args, Req.Args + NumArgs);
    for (const PtrArg &P : Ptrs) {
      DeviceAddr A = 0;
      Result R = Bufs.addressOn(*P.Buf, Run.Device, P.Offset, A);
      if (!R.ok())
        return R;
      Values[P.ArgNo] = reinterpret_cast<void *>(static_cast<uintptr_t>(A));
      ArgPtrs[P.ArgNo] = &Values[P.ArgNo];
    }
    Result F = Bufs.device(Run.Device).checkLaunchFault();
    if (!F.ok())
      return F;
    Result S = Exec.launch(*Req.Kernel, ArgPtrs.data(), L, Run.First,
                           Run.Count);
    if (!S.ok())
      return Result::error(S.code(), Plan.KernelName + " on " +
                                         Bufs.device(Run.Device).name() + " " +
                                         blocksText(Run.First, Run.Count) +
                                         ": " + S.message());
  }

  // Phase 3: writes. -----------------------------------------------------
  for (size_t I = 0; I < Runs.size(); ++I)
    for (auto &[Id, U] : Uses[I])
      for (ByteRange Rg : U.Writes.ranges()) {
        Result R = Bufs.markWritten(*BufById[Id], Runs[I].Device, Rg);
        if (!R.ok())
          return R;
      }
  return Result::success();
}

} // namespace rt
} // namespace cleave
