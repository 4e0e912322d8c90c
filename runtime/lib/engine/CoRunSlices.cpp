//===- CoRunSlices.cpp - One slice of a co-scheduled launch ---------------===//
//
// Part of Cleave's runtime (no LLVM). A slice (KernelLaunchRequest::Slice,
// docs/coschedule.md) is a block range of a launch that the co-scheduler
// (CoRunGate.h) runs beside a slice of another launch. It goes through the
// launch's usual phases as one range on one device, with two differences:
// on a GPU it is issued on a co-run lane (a stream of its own) and, while
// its GPU work runs, the engine's lock is released so that the other
// launch's slice can be prepared and issued on its own lane. A slice with
// pieces (SliceRange::NextPiece) is planned once and issued piece by piece
// (issuePieces), the lock released while the next piece is asked for.
//
//===----------------------------------------------------------------------===//

#include "LaunchContext.h"

#include "cleave/rt/CubinInfo.h"

namespace cleave {
namespace rt {

using namespace engine;

namespace engine {

std::string splitRefusal(const Program &P, const KernelHandle &K,
                         bool GpuGetsPart) {
  const BundleKernel &Info = *K.Info;
  if (!Info.CanSplit) {
    std::string Why = "the kernel cannot be split";
    for (const BundleIssue &Iss : Info.Issues)
      if (Iss.ForbidsSplit) {
        Why += ": " + Iss.Kind + (Iss.Detail.empty() ? "" : " " + Iss.Detail) +
               (Iss.Location.empty() ? "" : " at " + Iss.Location);
        break;
      }
    return Why;
  }
  for (const BundleVariableUse &U : Info.Variables)
    if (U.Written)
      return "it writes the variable " + P.B.Variables[U.Variable].Name;
  size_t KI = &K - P.Kernels.data();
  if (!P.Footprints[KI])
    return "the kernel's footprints are unusable: " + P.FootprintErrors[KI];
  const BundleVariant &Part = Info.variant(VariantKind::Partition);
  if (GpuGetsPart && !Part.Present)
    return "no partition-ready variant: " + Part.Reason;
  return {};
}

StreamHandle LaunchContext::runStream(Location Dev) const {
  if (PieceStream && Req.Slice && Req.Slice->Device == Dev)
    return PieceStream;
  if (SliceLane && Req.Slice && Req.Slice->Device == Dev)
    return SliceLane;
  return Bufs.device(Dev).internalStream(0);
}

Result LaunchContext::waitStream(Device &D, StreamHandle S) {
  // Only a slice's lane is waited for without the lock: nothing else of
  // this launch runs meanwhile, and what other launches do to the buffers
  // is ordered with it by their streams, as on CUDA.
  if (!EngineLock || S != SliceLane)
    return D.synchronizeStream(S);
  EngineLock->unlock();
  Result R = D.synchronizeStream(S);
  EngineLock->lock();
  return R;
}

Result LaunchContext::runSlice() {
  const KernelLaunchRequest::SliceRange &S = *Req.Slice;
  if (S.Device < 0 || size_t(S.Device) >= Bufs.numDevices())
    return Result::error(ErrorCode::InvalidDevice,
                         "slice of " + Info.Name + " on device " +
                             std::to_string(S.Device) + ", which is not one");
  if (!canRun(S.Device))
    return Result::error(ErrorCode::NotSupported, "slice of " + Info.Name +
                                                      ": " + name(S.Device) +
                                                      " cannot run the kernel");
  if (!S.Count || S.First > Total || S.Count > Total - S.First)
    return invalid("slice of " + Info.Name + ": blocks " +
                   blocksText(S.First, S.Count) + " outside the grid of " +
                   std::to_string(Total));
  for (const BundleIssue &Iss : Info.Issues)
    if (Iss.Kind == "loaded-pointer" || Iss.Kind == "argument-pointer")
      return Result::error(ErrorCode::NotSupported,
                           "slice of " + Info.Name +
                               ": it dereferences pointers loaded from "
                               "memory, which the engine runs its own way");
  if (S.Count != Total)
    if (std::string Why = whyNotSplit(isGpu(S.Device)); !Why.empty())
      return Result::error(ErrorCode::NotSupported,
                           "slice of " + Info.Name + ": " + Why);
  Explicit = true;
  Phases.mark("plan");
  return attempt({{S.Device, S.First, S.Count}}, true);
}

Result LaunchContext::issuePieces(RunState &R) {
  const KernelLaunchRequest::SliceRange &S = *Req.Slice;
  StreamHandle Lane = isGpu(R.Dev) ? runStream(R.Dev) : nullptr;
  const cleave_cpu_kernel_desc *Cpu = isCpu(R.Dev) ? K.Cpu : nullptr;
  for (;;) {
    uint64_t First = 0, Count = 0;
    // The next piece may wait for another launch's piece to be issued,
    // which needs the engine's lock.
    if (EngineLock)
      EngineLock->unlock();
    StreamHandle On = Lane;
    Result Next = S.NextPiece(Lane, First, Count, On);
    if (EngineLock)
      EngineLock->lock();
    if (!Next.ok() || !Count)
      return Next;
    if (First < R.First || Count > R.First + R.Count - First)
      return invalid("piece " + blocksText(First, Count) + " of " + Info.Name +
                     " outside its slice " + blocksText(R.First, R.Count));
    if (Count != Total)
      if (std::string Why = whyNotSplit(isGpu(R.Dev)); !Why.empty())
        return Result::error(ErrorCode::NotSupported,
                             "piece of " + Info.Name + ": " + Why);
    const std::string &Entry =
        Count == Total ? Info.variant(VariantKind::Original).Entry
                       : Info.variant(VariantKind::Partition).Entry;
    PieceStream = Lane && On != Lane ? On : nullptr;
    Result L = launchOne(R.Dev, false, Cpu ? "" : Entry, Cpu, First, Count,
                         R.ArgPtrs, R.PartParams);
    PieceStream = nullptr;
    if (!L.ok())
      return L;
  }
}

} // namespace engine

Result Engine::launchSlice(const KernelLaunchRequest &Req, LaunchPlan &Plan,
                           std::unique_lock<std::mutex> &Lock) {
  const KernelLaunchRequest::SliceRange &S = *Req.Slice;
  StreamHandle Lane = nullptr;
  if (S.Device >= 0 && size_t(S.Device) < Bufs.numDevices() &&
      Bufs.device(S.Device).kind() == DeviceKind::Cuda) {
    Device &D = Bufs.device(S.Device);
    if (S.Lane == 0) {
      Lane = D.internalStream(0);
    } else {
      auto Key = std::make_tuple(S.Device, S.Lane, S.Priority);
      StreamHandle &L = I->Lanes[Key];
      if (!L)
        if (Result R = D.createPriorityStream(L, S.Priority); !R.ok()) {
          I->Lanes.erase(Key);
          return R;
        }
      Lane = L;
    }
  }
  Program &P = const_cast<Program &>(*Req.Kernel->Prog);
  // Not kept for a repeat: the engine's lock is released mid-launch, and a
  // slice's request is the co-scheduler's, not the program's.
  LaunchContext C(Bufs, Exec, P, *Req.Kernel, Req, Plan, Policy, I->Model,
                  I->Pool, I->Scratch, I->Pipe, nullptr, I->Opts);
  C.setSliceLane(Lane, &Lock);
  Result R = C.run();
  if (C.Phases.On)
    std::fputs(C.Phases.finish(Req.Kernel->Info->Name).c_str(), stderr);
  return R;
}

std::string Engine::sliceRefusal(const KernelHandle &K, bool OnGpu) const {
  // A program does not change once added: no lock, so that a launch
  // arriving at the co-scheduler does not wait for a running slice.
  return splitRefusal(*K.Prog, K, OnGpu);
}

unsigned Engine::cubinRegisters(const KernelHandle &K) const {
  const std::string &Entry = K.Info->variant(VariantKind::Original).Entry;
  CubinKernelResources Res;
  for (const BundleImage &I : K.Prog->B.Images)
    if (I.Kind == ImageKind::Cubin &&
        readCubinKernelResources(I.Data, Entry, Res))
      return Res.Registers;
  return 0;
}

uint64_t Engine::cachedSliceBlocks(Location Device, const std::string &Kernel) {
  std::lock_guard<std::mutex> Lock(I->Mutex);
  return I->Model.planner(Bufs).sliceBlocks(
      Bufs.device(Device).properties().Description, Kernel);
}

void Engine::recordSliceBlocks(Location Device, const std::string &Kernel,
                               uint64_t Blocks) {
  std::lock_guard<std::mutex> Lock(I->Mutex);
  I->Model.planner(Bufs).recordSliceBlocks(
      Bufs.device(Device).properties().Description, Kernel, Blocks);
}

bool Engine::gpuModel(Location Device, model::GpuParams &Out) {
  if (Bufs.device(Device).kind() != DeviceKind::Cuda)
    return false;
  std::lock_guard<std::mutex> Lock(I->Mutex);
  const DeviceProfile &P = I->Model.planner(Bufs).profile();
  const GpuProfile *G = P.gpu(Bufs.device(Device).properties().Ordinal);
  if (!G || !G->ModelMissing.empty())
    return false;
  Out = G->Model;
  return true;
}

} // namespace rt
} // namespace cleave
