//===- Launches.cpp - Kernel launches through the C and CUDA APIs ---------===//
//
// Part of Cleave's runtime (no LLVM). What cudaLaunchKernel and
// cleave_launch share: the kernel is looked up in the engine, the launch
// configuration is checked the way CUDA checks it (errors returned at the
// call, not sticky), the argument values are copied (the caller may change
// them as soon as the call returns, as with CUDA), and the launch is queued
// on its stream; the engine runs it on the stream's worker.
//
//===----------------------------------------------------------------------===//
#include "Runtime.h"

#include "../serve/Client.h"

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cleave {
namespace rt {
namespace api {
namespace {

/// A launch's argument values, copied with max_align_t alignment at the
/// offsets their sizes and alignments give (the bundle's), and the
/// kernelParams array pointing at them.
struct ArgumentCopy {
  std::vector<std::max_align_t> Storage;
  std::vector<void *> Params;

  void fill(const BundleKernel &Info, void **Args) {
    size_t N = Info.Params.size();
    std::vector<size_t> Offsets(N);
    size_t Total = 0;
    for (size_t I = 0; I < N; ++I) {
      const BundleParam &P = Info.Params[I];
      size_t Align = P.Align ? P.Align : 1;
      if (Align > alignof(std::max_align_t))
        Align = alignof(std::max_align_t);
      Total = (Total + Align - 1) / Align * Align;
      Offsets[I] = Total;
      Total += P.Size;
    }
    Storage.resize((Total + sizeof(std::max_align_t) - 1) /
                       sizeof(std::max_align_t) +
                   1);
    char *Base = reinterpret_cast<char *>(Storage.data());
    Params.resize(N);
    for (size_t I = 0; I < N; ++I) {
      std::memcpy(Base + Offsets[I], Args[I], Info.Params[I].Size);
      Params[I] = Base + Offsets[I];
    }
  }
};

/// What a queued launch owns.
struct QueuedLaunch {
  const KernelHandle *Kernel = nullptr;
  std::string What;
  uint32_t Grid[3] = {1, 1, 1};
  uint32_t Block[3] = {1, 1, 1};
  uint64_t SharedBytes = 0;
  ArgumentCopy Args;
  std::vector<PartitionRange> Partition;
};

/// The plan of one launch, filled by the worker that ran it.
struct PlanSlot {
  std::shared_ptr<Stream> S;
  uint64_t Ticket = 0;
  /// Described only when cleave_last_plan asks: the text costs
  /// microseconds that every launch would otherwise pay.
  LaunchPlan Plan;
  /// A direct launch's plan is made from these when asked (directPlan()),
  /// not at each launch.
  const BundleKernel *Direct = nullptr;
  Device *DirectDevice = nullptr;
  Location DirectLocation = -1;
  uint64_t DirectBlocks = 0;
  Runtime::DirectWhy DirectWhy;
};

/// The plan of the direct launch \p Slot records.
LaunchPlan directPlan(const PlanSlot &Slot) {
  LaunchPlan Plan;
  Plan.KernelName = Slot.Direct->Name;
  Plan.Direct = true;
  Plan.Deferred = true;
  Plan.DirectWhy = Slot.DirectWhy.text();
  LaunchPlan::Run Run;
  Run.Device = Slot.DirectLocation;
  Run.DeviceName = Slot.DirectDevice->name();
  Run.Count = Slot.DirectBlocks;
  Run.Variant = "original";
  Plan.Runs.push_back(std::move(Run));
  return Plan;
}

/// CLEAVE_LOG=phases: how long each launch waited in its stream's queue
/// (the engine prints the rest of the launch's steps).
bool logQueueTime() { return logOptions().Phases; }

Result configError(const std::string &Msg) {
  return Result::error(ErrInvalidConfiguration, Msg);
}

std::string dims(const uint32_t D[3]) {
  return "(" + std::to_string(D[0]) + ", " + std::to_string(D[1]) + ", " +
         std::to_string(D[2]) + ")";
}

thread_local std::shared_ptr<PlanSlot> LastPlan;

/// The launch of \p K on the direct device's stream of \p S
/// (Runtime::directStream) from the calling thread (docs/runtime-api.md,
/// "Direct launches"), when nothing stands
/// in the way: \p S and the streams it waits for have nothing queued, the
/// kernel reads no pointer it loads from memory (but those its by-value
/// arguments hold, translated: ArgumentPointer), and every buffer its
/// arguments point into is whole on the device (so nothing moves; where
/// another copy exists, one that the kernel may write goes stale), and the
/// kernel has no reorganization step to decide (docs/reorganize.md: no
/// variants, the step off, or the model's verdict "the original"). False
/// (and nothing done) otherwise: the launch is queued for the engine.
/// True with \p Out the launch's own error (the configuration, the
/// driver's refusal).
bool tryDirectLaunch(Runtime &RT, const KernelHandle *K, const uint32_t Grid[3],
                     const uint32_t Block[3], void **Args,
                     uint64_t SharedBytes, const std::shared_ptr<Stream> &S,
                     Result &Out) {
  Location Dev = RT.directDevice();
  uint64_t Blocks = uint64_t(Grid[0]) * Grid[1] * Grid[2];
  // A launch the gate asks to time: its events are recorded around the
  // kernel, and the gate hears whether they were, whatever path it takes.
  struct TimedLaunch {
    Runtime &RT;
    const KernelHandle *K;
    uint64_t Blocks;
    Runtime::DirectProbe *Probe = nullptr;
    bool Recorded = false;
    ~TimedLaunch() {
      if (Probe)
        RT.noteProbe(K, Blocks, Recorded);
    }
  } Timing{RT, K, Blocks};
  Runtime::DirectWhy Why;
  if (Dev < 0 || !RT.idleFor(S) ||
      !RT.mayLaunchDirect(K, Blocks, Timing.Probe, Why))
    return false;
  // Launches of several streams go to the co-scheduler, which must see
  // them to pair them, unless it would pass this one through unheld.
  if (CoRunGate *G = RT.coScheduler()) {
    KernelLaunchRequest Req;
    Req.Kernel = K;
    std::memcpy(Req.Grid, Grid, sizeof(Req.Grid));
    std::memcpy(Req.Block, Block, sizeof(Req.Block));
    Req.DynamicSharedBytes = SharedBytes;
    if (!G->passesThrough(Req, reinterpret_cast<uintptr_t>(S.get())))
      return false;
  }
  // CLEAVE_LOG=phases: the steps' ends (arguments, prepare, launch).
  using Clock = std::chrono::steady_clock;
  bool Timed = logQueueTime();
  Clock::time_point T[4];
  if (Timed)
    T[0] = Clock::now();
  const BundleKernel &Info = *K->Info;
  for (const BundleIssue &Iss : Info.Issues)
    if (Iss.Kind == "loaded-pointer")
      return false;
  if (!Info.Inspector.empty() &&
      !RT.engine().reorganizeSettled(*K, Dev, Grid, Block))
    return false;
  BufferManager &Bufs = RT.buffers();
  ArgumentCopy A;
  A.fill(Info, Args);
  std::vector<std::shared_ptr<Buffer>> Written;
  for (size_t I = 0; I < Info.Params.size(); ++I) {
    const BundleParam &P = Info.Params[I];
    if (P.Kind != ParamKind::Pointer || P.Size != sizeof(void *))
      continue;
    void *V;
    std::memcpy(&V, A.Params[I], sizeof(V));
    if (!V)
      continue;
    BufferManager::Resolved Res;
    if (!Bufs.resolve(V, Res).ok() ||
        !Res.Buf->holds(Dev, ByteRange{0, Res.Buf->size()}))
      return false;
    DeviceAddr Addr;
    if (!Bufs.addressOn(*Res.Buf, Dev, Res.Offset, Addr).ok())
      return false;
    std::memcpy(A.Params[I], &Addr, sizeof(Addr));
    if (P.mayWrite() && !Res.Buf->heldOnlyBy(Dev))
      Written.push_back(Res.Buf);
  }
  // Buffer addresses inside by-value arguments the kernel dereferences:
  // their buffers whole on the device, their words made its addresses;
  // nothing says what the kernel writes through them.
  if (usesArgumentPointers(Info))
    for (const ArgumentPointer &P :
         findArgumentPointers(Bufs, Info, A.Params.data())) {
      if (!P.Buf->holds(Dev, ByteRange{0, P.Buf->size()}) ||
          !translateArgumentPointer(Bufs, P, Dev,
                                    static_cast<char *>(A.Params[P.Param]))
               .ok())
        return false;
      if (!P.Buf->heldOnlyBy(Dev))
        Written.push_back(P.Buf);
    }
  if (Timed)
    T[1] = Clock::now();
  FunctionHandle F = Info.Variables.empty() ? RT.cachedDirectFunction(K)
                                            : nullptr;
  if (!F) {
    if (!RT.engine().prepareDirect(*K, Dev, F).ok())
      return false; // the engine's launch reports it
    if (Info.Variables.empty())
      RT.cacheDirectFunction(K, F);
  }
  if (Timed)
    T[2] = Clock::now();
  StreamHandle On = nullptr;
  if (!RT.directStream(S, On).ok())
    return false; // the engine's launch waits for what it must
  for (const std::shared_ptr<Buffer> &B : Written)
    (void)Bufs.markWritten(*B, Dev, ByteRange{0, B->size()});
  Device &D = Bufs.device(Dev);
  Timing.Recorded = Timing.Probe && D.recordEvent(Timing.Probe->Start, On).ok();
  Out = D.launchKernel(F, Grid, Block, SharedBytes, On, A.Params.data());
  Timing.Recorded = Timing.Recorded && Out.ok() &&
                    D.recordEvent(Timing.Probe->Stop, On).ok();
  if (Out.ok())
    Out = Bufs.defer(Dev, {}, {}, On, true);
  if (Timed)
    T[3] = Clock::now();

  // The thread's last direct slot is reused when nothing else holds it.
  if (!LastPlan || !LastPlan->Direct || LastPlan.use_count() != 1)
    LastPlan = std::make_shared<PlanSlot>();
  PlanSlot &Slot = *LastPlan;
  Slot.S = S;
  Slot.Ticket = 0;
  Slot.Direct = &Info;
  Slot.DirectDevice = &D;
  Slot.DirectLocation = Dev;
  Slot.DirectBlocks = Blocks;
  Slot.DirectWhy = Why;
  if (logOptions().Plan)
    logLine(directPlan(Slot).describe() +
            (Out.ok() ? std::string() : "  error: " + Out.toString()));
  if (Timed) {
    auto Us = [](Clock::time_point A, Clock::time_point B) {
      return std::chrono::duration<double, std::micro>(B - A).count();
    };
    std::fprintf(stderr,
                 "cleave phases %s: direct=%.1f us (arguments=%.1f "
                 "prepare=%.1f launch=%.1f)\n",
                 Info.Name.c_str(), Us(T[0], Clock::now()), Us(T[0], T[1]),
                 Us(T[1], T[2]), Us(T[2], T[3]));
  }
  return true;
}

/// The shared memory of a launch of \p Info (\p Name, \p Display in
/// messages) with \p SharedBytes of dynamic shared memory, against CUDA's
/// limits: the static limit (ptxas refuses a kernel above it, so no GPU
/// could run this one; its CPU variant must not either) and the dynamic
/// limit cudaFuncSetAttribute set.
Result checkSharedMemory(Runtime &RT, const std::string &Name,
                         const std::string &Display, const BundleKernel &Info,
                         uint64_t SharedBytes) {
  if (Info.StaticSharedBytes > StaticSharedLimit)
    return Result::error(
        ErrorCode::InvalidValue,
        "kernel " + Display + ": " + std::to_string(Info.StaticSharedBytes) +
            " bytes of static shared memory exceed CUDA's limit of " +
            std::to_string(StaticSharedLimit) +
            " (ptxas refuses such a kernel; larger blocks of shared memory "
            "must be extern __shared__, with cudaFuncSetAttribute)");
  if (!SharedBytes)
    return Result::success();
  uint64_t MaxShared = RT.maxDynamicShared(Name, Info.StaticSharedBytes);
  if (SharedBytes > MaxShared)
    return Result::error(
        ErrorCode::InvalidValue,
        "kernel " + Display + ": " + std::to_string(SharedBytes) +
            " bytes of dynamic shared memory exceed its limit of " +
            std::to_string(MaxShared) +
            " (raise it with cudaFuncSetAttribute("
            "cudaFuncAttributeMaxDynamicSharedMemorySize), up to " +
            std::to_string(RT.sharedOptinLimit()) +
            " bytes per block including static shared memory)");
  return Result::success();
}

} // namespace

Result findKernel(Runtime &RT, const std::string &Name,
                  const KernelHandle *&Out) {
  Out = RT.cachedKernel(Name);
  if (Out)
    return Result::success();
  {
    std::lock_guard<std::mutex> Lock(RT.engineMutex());
    Out = RT.engine().findKernel(Name);
  }
  if (Out) {
    RT.cacheKernel(Name, Out);
    return Result::success();
  }
  std::string Failed = RT.moduleErrors();
  if (!Failed.empty())
    return Result::error(ErrorCode::InvalidKernelImage,
                         "kernel '" + Name +
                             "' is in no loaded kernel bundle, and some "
                             "failed to load: " +
                             Failed);
  return Result::error(ErrInvalidDeviceFunction,
                       "kernel '" + Name +
                           "' is in no registered kernel bundle");
}

Result launchKernel(const std::string &Name, const uint32_t Grid[3],
                    const uint32_t Block[3], void **Args, uint64_t SharedBytes,
                    void *StreamHandle) {
  if (serve::Client *C = serve::Client::get())
    return C->launch(Name, Grid, Block, Args, SharedBytes, StreamHandle);
  Runtime *RT;
  Result R = Runtime::get(RT);
  if (!R.ok())
    return R;
  // After a kernel's illegal address or failed assertion the context is
  // unusable, as on CUDA: the launch returns that error and runs nowhere.
  if (Result E = RT->peekAsyncError(); isStickyKernelError(E.code()))
    return E;
  const KernelHandle *K;
  R = findKernel(*RT, Name, K);
  if (!R.ok())
    return R;
  return launchKernel(*RT, K, Grid, Block, Args, SharedBytes, StreamHandle);
}

Result launchKernel(Runtime &Rt, const KernelHandle *K, const uint32_t Grid[3],
                    const uint32_t Block[3], void **Args, uint64_t SharedBytes,
                    void *StreamHandle) {
  Runtime *RT = &Rt;
  Result R;
  const std::string &Name = K->Info->Name;
  const BundleKernel &Info = *K->Info;
  // Messages name the kernel as the program wrote it (made only for them).
  const std::string &Display =
      Info.DisplayName.empty() ? Name : Info.DisplayName;

  // The limits of every CUDA GPU since compute capability 3.0.
  if (!Grid[0] || !Grid[1] || !Grid[2] || !Block[0] || !Block[1] || !Block[2])
    return configError("kernel " + Display + ": grid " + dims(Grid) +
                       " and block " + dims(Block) +
                       " must have no zero dimension");
  uint64_t Threads = uint64_t(Block[0]) * Block[1] * Block[2];
  if (Threads > 1024 || Block[2] > 64)
    return configError("kernel " + Display + ": block " + dims(Block) +
                       " exceeds 1024 threads per block or 64 in z");
  if (Grid[0] > 0x7fffffffu || Grid[1] > 65535 || Grid[2] > 65535)
    return configError("kernel " + Display + ": grid " + dims(Grid) +
                       " exceeds (2147483647, 65535, 65535)");
  if (Result E = checkSharedMemory(*RT, Name, Display, Info, SharedBytes);
      !E.ok())
    return E;

  std::shared_ptr<Stream> S;
  R = RT->stream(StreamHandle, S);
  if (!R.ok())
    return Result::error(R.code(), "kernel " + Display + ": " + R.message());

  // The argument values (their sizes are the bundle's) are copied.
  size_t N = Info.Params.size();
  if (N && !Args)
    return Result::error(ErrorCode::InvalidValue,
                         "kernel " + Display + " takes " + std::to_string(N) +
                             " arguments, and the argument array is null");
  for (size_t I = 0; I < N; ++I)
    if (!Args[I])
      return Result::error(ErrorCode::InvalidValue,
                           "kernel " + Display + ": argument " +
                               std::to_string(I) + " is a null pointer");
  // The host's writes to managed memory are in the buffers' validity
  // before anything decides where the kernel's inputs are.
  if (Result M = RT->managedForDevices(); !M.ok())
    return Result::error(M.code(), "kernel " + Display + ": " + M.message());
  if (Result Direct;
      tryDirectLaunch(*RT, K, Grid, Block, Args, SharedBytes, S, Direct))
    return Direct.ok() ? Direct
                       : Result::error(Direct.code(), "kernel " + Display +
                                                          ": " +
                                                          Direct.message());
  auto L = std::make_shared<QueuedLaunch>();
  L->Kernel = K;
  L->What = "kernel " + Display;
  std::memcpy(L->Grid, Grid, sizeof(L->Grid));
  std::memcpy(L->Block, Block, sizeof(L->Block));
  L->SharedBytes = SharedBytes;
  L->Args.fill(Info, Args);

  // A module built with --single-device runs each launch whole on the best
  // device unless CLEAVE_PARTITION says otherwise.
  if (!RT->partitionFromEnvironment() && RT->singleDeviceKernel(Name)) {
    BufferManager &Bufs = RT->buffers();
    Location Best = -1;
    for (size_t I = 0; I < Bufs.numDevices() && Best < 0; ++I)
      if (Bufs.device(static_cast<Location>(I)).kind() == DeviceKind::Cuda)
        Best = static_cast<Location>(I);
    for (size_t I = 0; I < Bufs.numDevices() && Best < 0; ++I)
      if (K->Cpu)
        Best = static_cast<Location>(I);
    uint64_t Blocks = uint64_t(Grid[0]) * Grid[1] * Grid[2];
    L->Partition.push_back({Best < 0 ? 0 : Best, 0, Blocks});
  }

  auto Slot = std::make_shared<PlanSlot>();
  Slot->S = S;
  Op O;
  O.What = L->What;
  auto Queued = logQueueTime() ? std::chrono::steady_clock::now()
                                : std::chrono::steady_clock::time_point();
  O.Run = [RT, L, Slot, Queued]() {
    if (logQueueTime())
      std::fprintf(stderr, "cleave phases %s: queued=%.1f us\n",
                   L->Kernel->Info->Name.c_str(),
                   std::chrono::duration<double, std::micro>(
                       std::chrono::steady_clock::now() - Queued)
                       .count());
    KernelLaunchRequest Req;
    Req.Kernel = L->Kernel;
    std::memcpy(Req.Grid, L->Grid, sizeof(Req.Grid));
    std::memcpy(Req.Block, L->Block, sizeof(Req.Block));
    Req.DynamicSharedBytes = L->SharedBytes;
    Req.Args = L->Args.Params.data();
    Req.Partition = L->Partition;
    // The stream waits for it later (Op::Deferrable), when another launch
    // is queued behind it to overlap with.
    Req.MayDefer = Slot->S->launchQueued();
    Req.QueuedBehind = [S = Slot->S] { return S->launchQueued(); };
    if (RT->engine().policy() == PartitionPolicy::Weights)
      Req.Weights = RT->engine().splitWeights();
    Result LR;
    if (CoRunGate *G = Req.Partition.empty() ? RT->coScheduler() : nullptr) {
      // Launches of other streams are pending beside this one in the
      // co-scheduler, which runs them as slices; the stream's order is
      // kept by its worker, which is here only once the stream's earlier
      // work and its waits are done.
      Req.MayDefer = false;
      Req.QueuedBehind = nullptr;
      LR = G->run(Req, reinterpret_cast<uintptr_t>(Slot->S.get()),
                  Slot->S->priority(), Slot->Plan);
      // The engine printed the plans of launches the gate passed on whole.
      if (logOptions().Plan && !Slot->Plan.CoSchedule.empty())
        logLine(Slot->Plan.describe() +
                (LR.ok() ? std::string() : "  error: " + LR.toString()));
    } else {
      std::lock_guard<std::mutex> Lock(RT->engineMutex());
      LR = RT->engine().launch(Req, Slot->Plan);
      if (LR.ok())
        RT->noteEngineLaunch(L->Kernel, Slot->Plan);
    }
    // CLEAVE_LOG=plan is printed by the engine itself.
    return LR;
  };
  O.Deferrable = true;
  Slot->Ticket = RT->enqueue(S, std::move(O));
  LastPlan = Slot;
  return Result::success();
}

Result lastPlan(std::string &Out) {
  Out.clear();
  std::shared_ptr<PlanSlot> Slot = LastPlan;
  if (!Slot)
    return Result::error(ErrorCode::InvalidValue,
                         "cleave_last_plan: this thread launched no kernel");
  Slot->S->wait(Slot->Ticket);
  Out = Slot->Direct ? directPlan(*Slot).describe() : Slot->Plan.describe();
  return Result::success();
}

} // namespace api
} // namespace rt
} // namespace cleave
