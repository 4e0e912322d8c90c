//===- Runtime.cpp - The process-wide state behind the C and CUDA APIs ----===//
//
// Part of Cleave's runtime (no LLVM). See Runtime.h and docs/runtime-api.md.
//
//===----------------------------------------------------------------------===//
#include "Runtime.h"

#include "../cpu/Instrument.h"
#include "../serve/Client.h"
#include "cleave/rt/Bundle.h"
#include "cleave/rt/Fault.h"
#include "cleave/rt/MemCheck.h"
#include "cleave/rt/Spin.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace cleave {
namespace rt {
namespace api {
namespace {

//===----------------------------------------------------------------------===//
// Process-wide state that outlives any one Runtime
//===----------------------------------------------------------------------===//

struct RegisteredModule {
  cleave_module_desc Desc;
  std::map<std::string, void *> Symbols;
};

/// Never destroyed: static constructors register before main and static
/// destructors of user code may still call the API after main returns.
struct Global {
  std::mutex Mutex;
  std::atomic<Runtime *> Current{nullptr};
  /// Why the last start failed (returned until reset); success otherwise.
  Result StartError;
  bool StartFailed = false;
  bool ExitHookInstalled = false;

  std::vector<RegisteredModule> Modules;
  Runtime::DeviceSource TestDevices;
  std::optional<Options> TestOptions;
  std::map<const void *, std::string> Kernels;
  std::map<const void *, std::pair<std::string, uint64_t>> Variables;
};

Global &global() {
  static Global *G = new Global;
  return *G;
}

/// The options the next runtime starts with: the test's, else the
/// process's (parsed from the environment once). G.Mutex held.
const Options &optionsForStart(const Global &G) {
  return G.TestOptions ? *G.TestOptions : processOptions();
}

/// The log settings of the runtime, read by every API call without a lock.
struct AtomicLogOptions {
  std::atomic<bool> Plan{false}, Phases{false}, Devices{false}, Errors{false};
  std::atomic<bool> Set{false};
};
AtomicLogOptions &logState() {
  static AtomicLogOptions *L = new AtomicLogOptions;
  return *L;
}

void publishLogOptions(const LogOptions &From) {
  AtomicLogOptions &L = logState();
  L.Plan = From.Plan;
  L.Phases = From.Phases;
  L.Devices = From.Devices;
  L.Errors = From.Errors;
  L.Set = true;
}

/// The errors of the calling thread.
struct ThreadErrors {
  ErrorCode Last = ErrorCode::Success;
  std::string Message;
};
thread_local ThreadErrors TE;

/// The most shared memory per block a GPU of compute capability
/// Major.Minor lets a kernel opt in to (CUDA C Programming Guide, "Technical
/// Specifications per Compute Capability").
uint64_t sharedOptinFor(int Major, int Minor) {
  if (Major >= 9 && Major != 12)
    return 227 * 1024;
  if (Major == 8)
    return (Minor == 0 || Minor == 7) ? 163 * 1024 : 99 * 1024;
  if (Major == 12)
    return 99 * 1024;
  if (Major == 7)
    return Minor == 5 ? 64 * 1024 : 96 * 1024;
  return 48 * 1024;
}

} // namespace

//===----------------------------------------------------------------------===//
// Logging and errors
//===----------------------------------------------------------------------===//

const LogOptions &logOptions() {
  AtomicLogOptions &L = logState();
  if (!L.Set) { // a call before the runtime's first start
    Global &G = global();
    std::lock_guard<std::mutex> Lock(G.Mutex);
    publishLogOptions(optionsForStart(G).Log);
  }
  thread_local LogOptions Snapshot;
  Snapshot.Plan = L.Plan;
  Snapshot.Phases = L.Phases;
  Snapshot.Devices = L.Devices;
  Snapshot.Errors = L.Errors;
  return Snapshot;
}

void logLine(const std::string &Line) {
  static std::mutex *M = new std::mutex;
  std::lock_guard<std::mutex> Lock(*M);
  std::fputs(Line.c_str(), stderr);
  if (Line.empty() || Line.back() != '\n')
    std::fputc('\n', stderr);
  std::fflush(stderr);
}

std::string describeError(const Result &R) {
  std::string S = errorName(R.code());
  if (!R.message().empty())
    S += ": " + R.message();
  return S;
}

int finish(const Result &R) {
  if (!R.ok()) {
    TE.Last = R.code();
    TE.Message = R.message();
    if (logOptions().Errors)
      logLine("cleave: error: " + describeError(R));
  }
  return static_cast<int>(R.code());
}

ErrorCode lastError(bool Reset) {
  ErrorCode C = TE.Last;
  if (C != ErrorCode::Success) {
    if (Reset) {
      TE.Last = ErrorCode::Success;
      TE.Message.clear();
    }
    return C;
  }
  Runtime *RT = global().Current.load(std::memory_order_acquire);
  if (!RT)
    return ErrorCode::Success;
  return Reset ? RT->takeAsyncError().code() : RT->peekAsyncError().code();
}

std::string lastErrorMessage() {
  if (TE.Last != ErrorCode::Success)
    return TE.Message;
  Runtime *RT = global().Current.load(std::memory_order_acquire);
  return RT ? RT->peekAsyncError().message() : std::string();
}

//===----------------------------------------------------------------------===//
// Registrations
//===----------------------------------------------------------------------===//

namespace {
thread_local ModuleCapture *Capture = nullptr;
} // namespace

void setModuleCapture(ModuleCapture *C) { Capture = C; }

Result registerModule(const cleave_module_desc *M) {
  Result R;
  if (!M)
    R = Result::error(ErrorCode::InvalidValue,
                      "cleave_register_module: null module");
  else if (M->abi_version != CLEAVE_RT_ABI_VERSION)
    R = Result::error(ErrorCode::InvalidValue,
                      "cleave_register_module: the module was built for "
                      "runtime ABI version " +
                          std::to_string(M->abi_version) +
                          ", this runtime implements version " +
                          std::to_string(CLEAVE_RT_ABI_VERSION) +
                          " (rebuild the program with the matching cleave)");
  else if (!M->bundle || M->bundle_size == 0)
    R = Result::error(ErrorCode::InvalidValue,
                      "cleave_register_module: the module has no bundle");
  else if (M->num_symbols && !M->symbols)
    R = Result::error(
        ErrorCode::InvalidValue,
        "cleave_register_module: " + std::to_string(M->num_symbols) +
            " symbols announced, none given");
  if (!R.ok()) {
    // Called from a constructor that cannot report anything: say it here.
    logLine("cleave: " + describeError(R));
    return R;
  }
  RegisteredModule Mod;
  Mod.Desc = *M;
  for (uint32_t I = 0; I < M->num_symbols; ++I) {
    if (!M->symbols[I].name) {
      R = Result::error(ErrorCode::InvalidValue,
                        "cleave_register_module: symbol " + std::to_string(I) +
                            " has no name");
      logLine("cleave: " + describeError(R));
      return R;
    }
    Mod.Symbols[M->symbols[I].name] = M->symbols[I].address;
  }
  if (Capture) {
    (*Capture)(Mod.Desc, Mod.Symbols);
    return Result::success();
  }
  Global &G = global();
  std::lock_guard<std::mutex> Lock(G.Mutex);
  G.Modules.push_back(Mod);
  if (Runtime *RT = G.Current.load(std::memory_order_acquire))
    RT->addModule(Mod.Desc, Mod.Symbols);
  return Result::success();
}

Result registerKernel(const void *Stub, const char *Name) {
  if (!Stub || !Name || !*Name)
    return Result::error(ErrorCode::InvalidValue,
                         "cleave_register_kernel: null host stub or name");
  Global &G = global();
  std::lock_guard<std::mutex> Lock(G.Mutex);
  auto [It, New] = G.Kernels.emplace(Stub, Name);
  if (!New && It->second != Name) {
    Result R = Result::error(
        ErrorCode::InvalidValue,
        "cleave_register_kernel: host stub already registered as '" +
            It->second + "', now as '" + Name + "'");
    logLine("cleave: " + describeError(R));
    return R;
  }
  return Result::success();
}

Result registerVariable(const void *Shadow, const char *Name, uint64_t Size) {
  if (!Shadow || !Name || !*Name)
    return Result::error(ErrorCode::InvalidValue,
                         "cleave_register_variable: null host shadow or name");
  Global &G = global();
  std::lock_guard<std::mutex> Lock(G.Mutex);
  auto [It, New] = G.Variables.emplace(Shadow, std::make_pair(Name, Size));
  if (!New && It->second.first != Name) {
    Result R = Result::error(
        ErrorCode::InvalidValue,
        "cleave_register_variable: host shadow already registered as '" +
            It->second.first + "', now as '" + Name + "'");
    logLine("cleave: " + describeError(R));
    return R;
  }
  return Result::success();
}

bool kernelName(const void *Stub, std::string &Name) {
  Global &G = global();
  std::lock_guard<std::mutex> Lock(G.Mutex);
  auto It = G.Kernels.find(Stub);
  if (It == G.Kernels.end())
    return false;
  Name = It->second;
  return true;
}

bool variableName(const void *Shadow, std::string &Name, uint64_t &Size) {
  Global &G = global();
  std::lock_guard<std::mutex> Lock(G.Mutex);
  auto It = G.Variables.find(Shadow);
  if (It == G.Variables.end())
    return false;
  Name = It->second.first;
  Size = It->second.second;
  return true;
}

//===----------------------------------------------------------------------===//
// Streams
//===----------------------------------------------------------------------===//

Stream::~Stream() {
  retire();
  if (Worker.joinable())
    Worker.join();
}

void Stream::start(const std::shared_ptr<Stream> &Self) {
  Stream *S = Self.get();
  S->Worker = std::thread([S] { S->work(); });
}

template <class Pred> bool Stream::spinFor(Pred Ready) const {
  return spinUntil(Ready, RT.options().Tune.SpinUs);
}

uint64_t Stream::lastTicket() { return Queued.load(std::memory_order_acquire); }

bool Stream::done(uint64_t Ticket) {
  return Completed.load(std::memory_order_acquire) >= Ticket;
}

void Stream::wait(uint64_t Ticket) {
  if (done(Ticket))
    return;
  Waiters.fetch_add(1, std::memory_order_acq_rel);
  // Work under way: polled for longer than an idle worker polls for work.
  if (!spinUntil([&] { return done(Ticket); }, RT.busyWaitUs())) {
    std::unique_lock<std::mutex> Lock(Mutex);
    Cond.wait(Lock, [&] { return done(Ticket); });
  }
  Waiters.fetch_sub(1, std::memory_order_acq_rel);
}

bool Stream::launchQueued() {
  std::lock_guard<std::mutex> Lock(Mutex);
  return !Queue.empty() && Queue.front().Deferrable;
}

void Stream::retire() {
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    Retired = true;
  }
  Cond.notify_all();
}

uint64_t Stream::push(Op O) {
  uint64_t Ticket;
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    Queue.push_back(std::move(O));
    Ticket = Queued.fetch_add(1, std::memory_order_acq_rel) + 1;
  }
  Cond.notify_all();
  return Ticket;
}

void Stream::work() {
  // Work taken; launches run whose GPU work may still run (Op::Deferrable).
  uint64_t Taken = 0, Pending = 0;
  // Launches left running at most: their claims are kept until settled.
  constexpr uint64_t MaxPending = 64;
  auto Complete = [&](uint64_t N) {
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      Completed.fetch_add(N, std::memory_order_acq_rel);
    }
    Cond.notify_all();
  };
  while (true) {
    Op O;
    // Work queued while the last ran, or soon after, is taken without
    // sleeping (Queued counts pushes).
    spinFor([&] {
      return Queued.load(std::memory_order_acquire) > Taken ||
             (Pending && Waiters.load(std::memory_order_acquire));
    });
    if (Pending) {
      // The next launch is queued behind the deferred work; other work, or
      // none (a waiter ends the spin at once), waits for it first.
      bool Overlap = false;
      if (Pending < MaxPending) {
        std::lock_guard<std::mutex> Lock(Mutex);
        Overlap = !Queue.empty() && Queue.front().Deferrable;
      }
      if (!Overlap) {
        Result R = RT.buffers().settle();
        if (!R.ok())
          RT.postAsyncError(R, "a kernel launch", Errors);
        Complete(std::exchange(Pending, 0));
        continue;
      }
    }
    {
      std::unique_lock<std::mutex> Lock(Mutex);
      Cond.wait(Lock, [&] { return !Queue.empty() || Retired; });
      if (Queue.empty()) {
        Exited = true;
        return;
      }
      O = std::move(Queue.front());
      Queue.pop_front();
    }
    ++Taken;
    for (auto &W : O.Waits)
      W.first->wait(W.second);
    // Work left running on a GPU by direct launches (or by another stream's
    // deferred launches) comes first: only the engine's launches order
    // themselves behind it on the GPU.
    if (!O.Deferrable && RT.buffers().hasDeferred())
      RT.settleDeferred();
    Result R = O.Run ? O.Run() : Result::success();
    if (!R.ok())
      RT.postAsyncError(R, O.What, Errors);
    bool Deferred = O.Deferrable && RT.buffers().hasDeferred();
    // Captured state (argument copies, records) goes before completion is
    // announced.
    O = Op();
    if (Deferred) {
      ++Pending;
      continue;
    }
    // Whatever ran waited for the deferred work first.
    Complete(1 + std::exchange(Pending, 0));
  }
}

//===----------------------------------------------------------------------===//
// The runtime
//===----------------------------------------------------------------------===//

Result Runtime::get(Runtime *&Out) {
  // A client of cleave-serve owns no device: the calls the server serves
  // never get here, and the others are refused.
  if (serve::Client::get())
    return Result::error(ErrorCode::NotSupported,
                         "this call is not served by cleave-serve "
                         "(CLEAVE_SERVER is set; docs/serve.md lists the "
                         "calls it serves)");
  Global &G = global();
  Out = G.Current.load(std::memory_order_acquire);
  if (Out)
    return Result::success();
  std::lock_guard<std::mutex> Lock(G.Mutex);
  Out = G.Current.load(std::memory_order_acquire);
  if (Out)
    return Result::success();
  if (G.StartFailed)
    return G.StartError;
  std::unique_ptr<Runtime> RT(new Runtime());
  Result R = RT->start();
  if (!R.ok()) {
    G.StartFailed = true;
    G.StartError =
        Result::error(R.code(), "the runtime could not start: " + R.message());
    logLine("cleave: " + describeError(G.StartError));
    return G.StartError;
  }
  for (const RegisteredModule &M : G.Modules)
    RT->addModule(M.Desc, M.Symbols);
  RT->startPreloading();
  if (!G.ExitHookInstalled) {
    // Work still queued when the program ends completes first, so no worker
    // runs while static objects are destroyed. The runtime itself is never
    // destroyed at exit: static destructors may still call cudaFree.
    G.ExitHookInstalled = true;
    std::atexit([] {
      if (Runtime *RT = global().Current.load(std::memory_order_acquire)) {
        RT->stopPreparing();
        RT->drain();
      }
    });
  }
  Out = RT.release();
  G.Current.store(Out, std::memory_order_release);
  return Result::success();
}

bool Runtime::started() {
  return global().Current.load(std::memory_order_acquire) != nullptr;
}

void Runtime::reset() {
  Global &G = global();
  Runtime *RT;
  {
    std::lock_guard<std::mutex> Lock(G.Mutex);
    RT = G.Current.exchange(nullptr);
    G.StartFailed = false;
    G.StartError = Result::success();
  }
  delete RT;
}

void Runtime::setOptionsForTesting(std::optional<Options> O) {
  Global &G = global();
  std::lock_guard<std::mutex> Lock(G.Mutex);
  G.TestOptions = std::move(O);
}

void Runtime::setDeviceSourceForTesting(DeviceSource Make) {
  Global &G = global();
  std::lock_guard<std::mutex> Lock(G.Mutex);
  G.TestDevices = std::move(Make);
}

Result Runtime::start() {
  // get() holds the global lock.
  Opts = optionsForStart(global());
  BusyWaitUs = Opts.Tune.busyWaitUs(std::thread::hardware_concurrency());
  publishLogOptions(Opts.Log);
  // The process-wide parts of the CPU device: kernels run only after this.
  setMemoryChecks(Opts.MemoryChecks);
  configureInstrumentation(Opts.InstrumentOut, Opts.InstrumentBlocks);
  // Configured only when it changes, so that a reset does not restart the
  // rules' counts (a test may also have configured the injector itself).
  if (!Opts.Fault.empty() && FaultInjector::global().spec() != Opts.Fault)
    (void)FaultInjector::global().configure(Opts.Fault);

  const DeviceSource &Make = global().TestDevices;
  if (Make) {
    Registry = DeviceRegistry::fromDevices(Make());
  } else if (Result R = DeviceRegistry::create(Opts.Devices, Registry,
                                               registryOptions(Opts));
             !R.ok()) {
    return R;
  }
  if (Opts.Log.Devices)
    logLine("cleave: devices (CLEAVE_DEVICES):\n" + Registry->describe());

  Buffers = std::make_unique<BufferManager>(Registry->devices());
  // With one GPU, the program's copies land on it, as under nvcc
  // (BufferManager::setHomeDevice).
  Buffers->setHomeDevice(Buffers->soleDeviceWithOwnMemory());
  Buffers->setHostPinning(Opts.Tune.PinHost);
  Buffers->setDirectHostCopies(Opts.Tune.DirectHostCopies);
  Exec = std::make_unique<CpuExecutor>(Opts.CpuThreads);

  // The model policy by default (docs/partitioner.md): on the 4x H200
  // headline it is the best policy of every device set, and the static
  // ones give a CPU device work that costs more than it brings.
  PartitionPolicy Policy = Opts.Partition.value_or(PartitionPolicy::Model);
  PolicyFromEnv = Opts.Partition.has_value();
  // CLEAVE_SPLIT=w0,w1,...: one weight per selected device, the engine's
  // Weights policy (a benchmarking and diagnostic control; it wins over
  // CLEAVE_PARTITION). A value that does not parse stops the start: a
  // benchmark must not silently measure another split.
  std::vector<double> Split;
  if (!Opts.Split.empty()) {
    std::string Why;
    if (!parseSplitWeights(Opts.Split, Registry->devices().size(), Split, Why))
      return Result::error(ErrorCode::InvalidValue,
                           "CLEAVE_SPLIT=" + Opts.Split + ": " + Why);
    Policy = PartitionPolicy::Weights;
    PolicyFromEnv = true;
  }
  Eng = std::make_unique<Engine>(*Buffers, *Exec, Policy, Opts);
  // The model policy's profile and performance cache load while the
  // program allocates and copies (0.3-0.5 ms on one H200's host), not in
  // its first launch.
  if (Policy == PartitionPolicy::Model && Buffers->numDevices() > 1)
    Preparing = std::thread([E = Eng.get()] { E->prepare(); });
  if (Policy == PartitionPolicy::Weights)
    Eng->setSplitWeights(std::move(Split));
  // CLEAVE_TUNE=pipeline=host|host-serial: the program's copies into
  // buffers land in their host copies, so that launches on one GPU find
  // their inputs there (docs/runtime.md, "Transfer pipelining").
  if (Opts.Tune.Pipeline == PipelineMode::Host ||
      Opts.Tune.Pipeline == PipelineMode::HostSerial) {
    Buffers->setHomeDevice(-1);
    Buffers->setDirectHostCopies(false);
  }

  // The opt-in limit of shared memory is the smallest of the GPUs' (a
  // launch may run on any of them); CPU devices have none.
  int Major = 0, Minor = 0;
  for (Device *D : Registry->devices()) {
    const DeviceProperties &P = D->properties();
    if (P.Kind != DeviceKind::Cuda)
      continue;
    if (!Major || P.ComputeCapabilityMajor < Major ||
        (P.ComputeCapabilityMajor == Major &&
         P.ComputeCapabilityMinor < Minor)) {
      Major = P.ComputeCapabilityMajor;
      Minor = P.ComputeCapabilityMinor;
    }
  }
  SharedOptin = Major ? sharedOptinFor(Major, Minor) : sharedOptinFor(9, 0);

  // One GPU, alone or beside CPU devices: launches go straight to it
  // (docs/runtime.md, "Direct launches"; beside the CPU, per kernel, once
  // the model left the CPU out), unless faults are injected, which only
  // the engine's launches recover from, or CLEAVE_LOG asks for each
  // launch's `cleave time` line, which the engine's launches write.
  Location Gpu = -1;
  unsigned Gpus = 0, Cpus = 0;
  for (size_t L = 0; L < Buffers->numDevices(); ++L) {
    DeviceKind K = Buffers->device(Location(L)).kind();
    if (K == DeviceKind::Cuda) {
      Gpu = Location(L);
      ++Gpus;
    } else if (K == DeviceKind::Cpu) {
      ++Cpus;
    }
  }
  if (Gpus == 1 && Gpus + Cpus == Buffers->numDevices() &&
      Opts.Fault.empty() && !Opts.Log.Time) {
    DirectDev = Gpu;
    DirectPerKernel = Cpus > 0;
    DirectTimed = DirectPerKernel && Policy == PartitionPolicy::Model;
  }

  // Co-scheduling on one device: the GPU (the only one), else a lone CPU
  // device; several GPUs keep SKMD's splits.
  if (Opts.Tune.CoSchedule != CoScheduleMode::Off &&
      (Gpus == 1 || Buffers->numDevices() == 1)) {
    CoRunGateOptions G;
    G.LogPlan = Opts.Log.Plan;
    G.Scheduler.PairUnmodeled = true;
    bool Always = Opts.Tune.CoSchedule == CoScheduleMode::Always;
    G.SliceAlone = Always ? CoRunGateOptions::AloneRule::Always
                          : CoRunGateOptions::AloneRule::AfterOverlap;
    // `on` holds only the launches the model predicts a gain for; the
    // others take the plain path.
    G.Hold = Always ? CoRunGateOptions::HoldRule::All
                    : CoRunGateOptions::HoldRule::Predicted;
    // `on` measures each kernel's minimum slice once (kept in the
    // performance cache); `always` slices every launch at once, as asked.
    G.MeasureSlices = !Always;
    G.Scheduler.Partition =
        Opts.Tune.Green == GreenMode::Off
            ? CoScheduleOptions::PartitionRule::Never
        : Opts.Tune.Green == GreenMode::Always
            ? CoScheduleOptions::PartitionRule::Always
            : CoScheduleOptions::PartitionRule::Better;
    G.Scheduler.Pair.Forced[0] = Opts.Tune.CoRatio[0];
    G.Scheduler.Pair.Forced[1] = Opts.Tune.CoRatio[1];
    if (!Opts.KernelProfilePath.empty()) {
      // What `cleave analyze` measured: the model's inputs where it has
      // the kernel (docs/coschedule.md, "Model inputs at run time").
      auto P = std::make_shared<KernelProfile>();
      if (Result R = loadKernelProfile(Opts.KernelProfilePath, *P); R.ok())
        G.Measured = std::move(P);
      else
        std::fprintf(stderr,
                     "cleave: CLEAVE_KERNEL_PROFILE: %s; the co-scheduler "
                     "uses the bundle's estimate\n",
                     R.message().c_str());
    }
    Gate = std::make_unique<CoRunGate>(*Eng, std::move(G));
  }

  Legacy = std::make_shared<Stream>(*this, Stream::Kind::Legacy, 0);
  Stream::start(Legacy);
  return Result::success();
}

void Runtime::startPreloading() {
  if (DirectDev >= 0 && !Preparing.joinable())
    Preparing = std::thread(
        [this] { Eng->preloadDirect(DirectDev, StopPreparing); });
}

void Runtime::stopPreparing() {
  StopPreparing.store(true, std::memory_order_relaxed);
  if (Preparing.joinable())
    Preparing.join();
}

Runtime::~Runtime() {
  stopPreparing();
  if (!Eng) // never started
    return;
  drain();
  std::vector<std::shared_ptr<Stream>> All;
  {
    std::lock_guard<std::mutex> Lock(StreamsMutex);
    All.push_back(Legacy);
    for (auto &S : Streams)
      All.push_back(S.second);
    for (auto &S : PerThread)
      All.push_back(S.second);
    for (auto &S : Retiring)
      All.push_back(S);
  }
  for (auto &S : All)
    S->retire();
  for (auto &S : All)
    if (S->Worker.joinable())
      S->Worker.join();
  All.clear();
  if (DirectDev >= 0) {
    Device &D = Buffers->device(DirectDev);
    for (StreamHandle G : GpuStreams)
      (void)D.destroyStream(G);
    for (auto &[K, G] : Gates)
      for (EventHandle E : {G.Probe.Start, G.Probe.Stop})
        if (E)
          (void)D.destroyEvent(E);
  }
  Events.clear();
  Streams.clear();
  PerThread.clear();
  Gate.reset();
  Retiring.clear();
  Legacy.reset();
  {
    std::lock_guard<std::mutex> Lock(PinnedMutex);
    for (auto &[Start, Block] : Pinned) {
      void *Ptr = reinterpret_cast<void *>(Start);
      if (!Block.Registered)
        (void)Block.Owner->freeHost(Ptr);
      else if (Block.Owner)
        (void)Block.Owner->unregisterHostMemory(Ptr);
    }
    Pinned.clear();
  }
  Eng.reset();
  Buffers.reset();
  Exec.reset();
  Registry.reset();
}

std::string Runtime::moduleErrors() {
  std::lock_guard<std::mutex> Lock(ModulesMutex);
  std::string S;
  for (const std::string &E : ModuleErrors)
    S += (S.empty() ? "" : "; ") + E;
  return S;
}

bool Runtime::singleDeviceKernel(const std::string &Name) {
  std::lock_guard<std::mutex> Lock(ModulesMutex);
  return SingleDeviceKernels.count(Name) != 0;
}

void Runtime::addModule(const cleave_module_desc &M,
                        const std::map<std::string, void *> &Symbols) {
  Bundle B;
  BundleStatus Parsed = Bundle::parse(M.bundle, M.bundle_size, B);
  Result R;
  {
    std::lock_guard<std::mutex> Lock(EngineMutex);
    R = Eng->addProgram(M.bundle, M.bundle_size, Symbols);
  }
  std::lock_guard<std::mutex> Lock(ModulesMutex);
  if (!R.ok()) {
    std::string What = Parsed ? "the kernel bundle of " + B.Source
                              : "a registered kernel bundle";
    ModuleErrors.push_back(What + ": " + R.message());
    logLine("cleave: cannot load " + What + ": " + describeError(R) +
            " (its kernels fail to launch)");
    return;
  }
  if ((M.flags & CLEAVE_MODULE_SINGLE_DEVICE) && Parsed)
    for (const BundleKernel &K : B.Kernels)
      SingleDeviceKernels.insert(K.Name);
}

Result Runtime::stream(void *Handle, std::shared_ptr<Stream> &Out) {
  uintptr_t H = reinterpret_cast<uintptr_t>(Handle);
  std::lock_guard<std::mutex> Lock(StreamsMutex);
  if (H == 0 || H == 1) { // null, cudaStreamLegacy
    Out = Legacy;
    return Result::success();
  }
  if (H == 2) { // cudaStreamPerThread
    std::shared_ptr<Stream> &S = PerThread[std::this_thread::get_id()];
    if (!S) {
      S = std::make_shared<Stream>(*this, Stream::Kind::Blocking, 0);
      Stream::start(S);
      ++OtherStreams;
    }
    Out = S;
    return Result::success();
  }
  auto It = Streams.find(Handle);
  if (It == Streams.end())
    return Result::error(ErrorCode::InvalidResourceHandle,
                         "not a stream (never created, or destroyed)");
  Out = It->second;
  return Result::success();
}

void Runtime::reapLocked() {
  std::vector<std::shared_ptr<Stream>> Keep;
  for (auto &S : Retiring) {
    bool Exited;
    {
      std::lock_guard<std::mutex> Lock(S->Mutex);
      Exited = S->Exited;
    }
    if (!Exited)
      Keep.push_back(S);
  }
  Retiring.swap(Keep);
}

void *Runtime::newHandle() {
  // Process-wide, so that a handle from before a reset stays invalid too;
  // 16-byte steps from 64 KiB keep clear of the reserved stream handles
  // (0, cudaStreamLegacy, cudaStreamPerThread).
  static std::atomic<uintptr_t> Next{0x10000};
  return reinterpret_cast<void *>(Next.fetch_add(16));
}

Result Runtime::createStream(unsigned Flags, void *&Handle, int Priority) {
  Priority = std::min(LeastStreamPriority,
                      std::max(GreatestStreamPriority, Priority));
  auto S = std::make_shared<Stream>(
      *this, (Flags & 1u) ? Stream::Kind::NonBlocking : Stream::Kind::Blocking,
      Flags, Priority);
  Stream::start(S);
  std::lock_guard<std::mutex> Lock(StreamsMutex);
  reapLocked();
  Handle = newHandle();
  Streams[Handle] = S;
  ++OtherStreams;
  return Result::success();
}

CoRunGate *Runtime::coScheduler() {
  return Gate && OtherStreams.load(std::memory_order_relaxed) >= 2
             ? Gate.get()
             : nullptr;
}

Result Runtime::destroyStream(void *Handle) {
  uintptr_t H = reinterpret_cast<uintptr_t>(Handle);
  if (H <= 2)
    return Result::error(ErrorCode::InvalidResourceHandle,
                         "cudaStreamDestroy: the default streams cannot be "
                         "destroyed");
  std::lock_guard<std::mutex> Lock(StreamsMutex);
  auto It = Streams.find(Handle);
  if (It == Streams.end())
    return Result::error(ErrorCode::InvalidResourceHandle,
                         "cudaStreamDestroy: not a stream (never created, or "
                         "destroyed already)");
  // Work still queued completes; the worker then exits. Its GPU stream
  // goes to the next stream of its priority (what the worker still
  // queues makes a new one).
  {
    std::lock_guard<std::mutex> DLock(DirectMutex);
    Stream &S = *It->second;
    if (S.Gpu)
      FreeGpuStreams[S.priority()].push_back(S.Gpu);
    S.Gpu = nullptr;
  }
  It->second->retire();
  Retiring.push_back(It->second);
  Streams.erase(It);
  --OtherStreams;
  reapLocked();
  return Result::success();
}

/// Calls \p Fn with each stream whose queued work what is queued on \p S
/// waits for implicitly (CUDA's legacy default stream semantics; the
/// file comment of Runtime.h).
template <class F>
static void forEachImplicitWait(
    const std::shared_ptr<Stream> &S, const std::shared_ptr<Stream> &Legacy,
    const std::map<void *, std::shared_ptr<Stream>> &Streams,
    const std::map<std::thread::id, std::shared_ptr<Stream>> &PerThread,
    const std::vector<std::shared_ptr<Stream>> &Retiring, F Fn) {
  if (S->kind() == Stream::Kind::Legacy) {
    for (auto &Other : Streams)
      if (Other.second->kind() == Stream::Kind::Blocking)
        Fn(Other.second);
    for (auto &Other : PerThread)
      Fn(Other.second);
    for (auto &Other : Retiring)
      if (Other->kind() == Stream::Kind::Blocking)
        Fn(Other);
  } else if (S->kind() == Stream::Kind::Blocking) {
    Fn(Legacy);
  }
}

uint64_t Runtime::enqueue(const std::shared_ptr<Stream> &S, Op O) {
  std::lock_guard<std::mutex> Lock(StreamsMutex);
  forEachImplicitWait(S, Legacy, Streams, PerThread, Retiring,
                      [&](const std::shared_ptr<Stream> &Other) {
                        if (Other == S)
                          return;
                        uint64_t T = Other->lastTicket();
                        if (T && !Other->done(T))
                          O.Waits.emplace_back(Other, T);
                      });
  return S->push(std::move(O));
}

bool Runtime::idleFor(const std::shared_ptr<Stream> &S) {
  if (!S->done(S->lastTicket()))
    return false;
  std::lock_guard<std::mutex> Lock(StreamsMutex);
  bool Idle = true;
  forEachImplicitWait(S, Legacy, Streams, PerThread, Retiring,
                      [&](const std::shared_ptr<Stream> &Other) {
                        Idle = Idle && Other->done(Other->lastTicket());
                      });
  return Idle;
}

void Runtime::settleDeferred() {
  if (Result R = Buffers->settle(); !R.ok())
    postAsyncError(R, "a kernel launch");
}

Result Runtime::runSync(const std::shared_ptr<Stream> &S,
                        std::function<Result()> Fn, std::string What) {
  // Nothing queued to wait for: run here rather than hand it to the
  // stream's worker and wait for that (a thread hand-off each way).
  if (idleFor(S)) {
    if (Buffers->hasDeferred())
      settleDeferred();
    if (Result R = Fn(); !R.ok())
      return R;
    return takeAsyncError();
  }
  auto Slot = std::make_shared<Result>();
  Op O;
  O.What = std::move(What);
  O.Run = [Slot, Fn = std::move(Fn)] {
    *Slot = Fn();
    return Result::success();
  };
  uint64_t T = enqueue(S, std::move(O));
  S->wait(T);
  if (!Slot->ok())
    return *Slot;
  return takeAsyncError();
}

Result Runtime::synchronize(const std::shared_ptr<Stream> &S) {
  uint64_t T;
  if (S->kind() == Stream::Kind::Legacy)
    T = enqueue(S, Op()); // waits for what blocking streams queued before
  else
    T = S->lastTicket();
  S->wait(T);
  // Direct launches' work, ordered on the GPU, not in the queue.
  if (Buffers->hasDeferred())
    settleDeferred();
  return takeAsyncError();
}

Result Runtime::synchronizeAll() {
  drain();
  if (Buffers->hasDeferred())
    settleDeferred();
  return takeAsyncError();
}

bool Runtime::idle() {
  {
    std::lock_guard<std::mutex> Lock(StreamsMutex);
    auto Done = [](const std::shared_ptr<Stream> &S) {
      return S->done(S->lastTicket());
    };
    if (Legacy && !Done(Legacy))
      return false;
    for (auto &S : Streams)
      if (!Done(S.second))
        return false;
    for (auto &S : PerThread)
      if (!Done(S.second))
        return false;
    for (auto &S : Retiring)
      if (!Done(S))
        return false;
  }
  // Work a GPU was left running (direct launches) counts once it is done,
  // waited for or not (a query found it done).
  if (!Buffers->hasDeferred())
    return true;
  bool Done = false;
  return Buffers->queryDeferred(Done).ok() && Done;
}

Result Runtime::managedForDevices() {
  if (!Buffers->hasManaged())
    return Result::success();
  return Buffers->managedToDevices();
}

Result Runtime::managedForHost() {
  if (!Buffers->hasManaged() || !idle())
    return Result::success();
  return Buffers->managedToHost();
}

void Runtime::drain() {
  std::vector<std::pair<std::shared_ptr<Stream>, uint64_t>> All;
  {
    std::lock_guard<std::mutex> Lock(StreamsMutex);
    if (Legacy)
      All.emplace_back(Legacy, Legacy->lastTicket());
    for (auto &S : Streams)
      All.emplace_back(S.second, S.second->lastTicket());
    for (auto &S : PerThread)
      All.emplace_back(S.second, S.second->lastTicket());
    for (auto &S : Retiring)
      All.emplace_back(S, S->lastTicket());
  }
  for (auto &W : All)
    W.first->wait(W.second);
}

//===----------------------------------------------------------------------===//
// Events
//===----------------------------------------------------------------------===//

Event::~Event() {
  if (OnGpu)
    (void)Gpu->destroyEvent(OnGpu);
}

Result Runtime::directStream(const std::shared_ptr<Stream> &S,
                             StreamHandle &Out) {
  Device &D = Buffers->device(DirectDev);
  StreamHandle Compute = D.internalStream(0);
  if (S->kind() == Stream::Kind::Legacy) {
    Out = Compute;
    if (!Buffers->hasDeferred())
      return Result::success();
    std::vector<StreamHandle> After;
    {
      std::lock_guard<std::mutex> Lock(StreamsMutex);
      std::lock_guard<std::mutex> DLock(DirectMutex);
      forEachImplicitWait(S, Legacy, Streams, PerThread, Retiring,
                          [&](const std::shared_ptr<Stream> &Other) {
                            if (Other->Gpu)
                              After.push_back(Other->Gpu);
                          });
    }
    for (StreamHandle G : After) {
      EventHandle E = nullptr;
      if (Result R = Buffers->deferredTail(DirectDev, G, E); !R.ok())
        return R;
      if (E)
        if (Result R = D.waitForEvent(Compute, D, E); !R.ok())
          return R;
    }
    return Result::success();
  }
  {
    std::lock_guard<std::mutex> DLock(DirectMutex);
    if (!S->Gpu) {
      std::vector<StreamHandle> &Free = FreeGpuStreams[S->priority()];
      if (!Free.empty()) {
        S->Gpu = Free.back();
        Free.pop_back();
      } else {
        StreamHandle G = nullptr;
        Result R = S->priority() ? D.createPriorityStream(G, S->priority())
                                 : D.createStream(G);
        if (!R.ok())
          return R;
        GpuStreams.push_back(G);
        S->Gpu = G;
      }
    }
    Out = S->Gpu;
  }
  EventHandle E = nullptr;
  if (Result R = Buffers->deferredTail(DirectDev, nullptr, E); !R.ok())
    return R;
  return E ? D.waitForEvent(Out, D, E) : Result::success();
}

Result Runtime::gpuEvent(Event &E, EventHandle &Out) {
  // E.Mutex held by the caller.
  Out = E.OnGpu;
  if (Out)
    return Result::success();
  Device &D = Buffers->device(DirectDev);
  Result R = (E.Flags & EventDisableTiming) ? D.createOrderingEvent(Out)
                                                : D.createEvent(Out);
  if (!R.ok())
    return R;
  E.Gpu = &D;
  E.OnGpu = Out;
  return Result::success();
}

std::string Runtime::DirectWhy::text() const {
  char Buf[160];
  switch (What) {
  case Alone:
    return "the only device";
  case First:
    return "the kernel's first launch";
  case Unread:
    return "its first launch's GPU time not known yet";
  case TooShort:
    std::snprintf(Buf, sizeof(Buf),
                  "timed at %.4f ms for %llu block(s), shorter than the "
                  "model's shortest split, %.3f ms",
                  Ms, static_cast<unsigned long long>(Blocks), BelowMs);
    return Buf;
  case Streak:
    return "the engine ran its last launches whole on this GPU";
  }
  return "";
}

bool Runtime::mayLaunchDirect(const KernelHandle *K, uint64_t Blocks,
                              DirectProbe *&Probe, DirectWhy &Why) {
  Probe = nullptr;
  Why = DirectWhy{};
  if (!DirectPerKernel)
    return true;
  std::lock_guard<std::mutex> Lock(GatesMutex);
  DirectGate &G = Gates[K];
  if (!G.Seen) {
    G.Seen = true;
    Why.What = DirectWhy::First;
  } else {
    readProbe(G);
    // The GPU time of this launch, from the last timed one: no less for
    // fewer blocks (a wave takes as long as a full one), in proportion for
    // more.
    double Predicted =
        G.ProbeMs < 0 ? -1
                      : G.ProbeMs * std::max(1.0, double(Blocks) /
                                                      double(G.MeasuredBlocks));
    bool TooShort =
        DirectTimed && Predicted >= 0 && Predicted < Eng->minSplitMs();
    // The first timing not read yet (the GPU has not reached it: launches
    // in a loop outrun it): the launches go direct, as the first did, until
    // it is, rather than each paying the model's first search.
    bool Unread = DirectTimed && G.ProbeMs < 0 && G.Pending;
    if (TooShort) {
      Why.What = DirectWhy::TooShort;
      Why.Ms = float(G.ProbeMs);
      Why.Blocks = G.MeasuredBlocks;
      Why.BelowMs = float(Eng->minSplitMs());
    } else {
      if ((G.Streak < DirectStreak && !Unread) || G.Launched >= DirectRecheck)
        return false;
      ++G.Launched;
      Why.What = G.Streak >= DirectStreak ? DirectWhy::Streak
                                          : DirectWhy::Unread;
    }
  }
  // Time the first direct launch, then one in DirectRecheck + 1, so that a
  // kernel whose launches grow long goes back to the engine.
  if (DirectTimed && !G.Pending &&
      (G.ProbeMs < 0 || ++G.SinceProbe > DirectRecheck)) {
    Device &D = Buffers->device(DirectDev);
    if (!G.Probe.Start && !D.createEvent(G.Probe.Start).ok())
      G.Probe.Start = nullptr;
    if (G.Probe.Start && !G.Probe.Stop && !D.createEvent(G.Probe.Stop).ok())
      G.Probe.Stop = nullptr;
    if (G.Probe.Start && G.Probe.Stop) {
      Probe = &G.Probe;
      G.Pending = true;
      G.SinceProbe = 0;
    }
  }
  return true;
}

void Runtime::noteProbe(const KernelHandle *K, uint64_t Blocks,
                        bool Recorded) {
  std::lock_guard<std::mutex> Lock(GatesMutex);
  DirectGate &G = Gates[K];
  G.Pending = Recorded;
  G.ProbeBlocks = Blocks;
}

void Runtime::readProbe(DirectGate &G) {
  if (!G.Pending)
    return;
  Device &D = Buffers->device(DirectDev);
  bool Done = false;
  if (!D.queryEvent(G.Probe.Stop, Done).ok()) {
    G.Pending = false;
    return;
  }
  if (!Done) // the GPU is still at it: the last reading stands
    return;
  G.Pending = false;
  float Ms = 0;
  if (D.elapsedTime(G.Probe.Start, G.Probe.Stop, Ms).ok() && Ms >= 0 &&
      G.ProbeBlocks) {
    G.ProbeMs = Ms;
    G.MeasuredBlocks = G.ProbeBlocks;
  }
}

void Runtime::noteEngineLaunch(const KernelHandle *K, const LaunchPlan &Plan) {
  if (!DirectPerKernel)
    return;
  bool OnGpu = !Plan.Runs.empty();
  for (const LaunchPlan::Run &R : Plan.Runs)
    OnGpu &= R.Device == DirectDev;
  std::lock_guard<std::mutex> Lock(GatesMutex);
  DirectGate &G = Gates[K];
  G.Streak = OnGpu ? G.Streak + 1 : 0;
  G.Launched = 0;
}

FunctionHandle Runtime::cachedDirectFunction(const KernelHandle *K) {
  std::lock_guard<std::mutex> Lock(AttrMutex);
  auto It = DirectFunctions.find(K);
  return It == DirectFunctions.end() ? nullptr : It->second;
}

void Runtime::cacheDirectFunction(const KernelHandle *K, FunctionHandle F) {
  std::lock_guard<std::mutex> Lock(AttrMutex);
  DirectFunctions[K] = F;
}

Result Runtime::createEvent(unsigned Flags, void *&Handle) {
  auto E = std::make_shared<Event>();
  E->Flags = Flags;
  std::lock_guard<std::mutex> Lock(StreamsMutex);
  Handle = newHandle();
  Events[Handle] = E;
  return Result::success();
}

Result Runtime::destroyEvent(void *Handle) {
  std::lock_guard<std::mutex> Lock(StreamsMutex);
  // A record still queued keeps its EventRecord alive; the event goes now.
  if (!Events.erase(Handle))
    return Result::error(ErrorCode::InvalidResourceHandle,
                         "cudaEventDestroy: not an event (never created, or "
                         "destroyed already)");
  return Result::success();
}

Result Runtime::event(void *Handle, std::shared_ptr<Event> &Out) {
  std::lock_guard<std::mutex> Lock(StreamsMutex);
  auto It = Events.find(Handle);
  if (It == Events.end())
    return Result::error(ErrorCode::InvalidResourceHandle,
                         "not an event (never created, or destroyed)");
  Out = It->second;
  return Result::success();
}

//===----------------------------------------------------------------------===//
// Asynchronous errors
//===----------------------------------------------------------------------===//

namespace {
thread_local AsyncErrorDomain *CurrentDomain = nullptr;
} // namespace

void setAsyncErrorDomain(AsyncErrorDomain *D) { CurrentDomain = D; }

Stream::Stream(Runtime &RT, Kind K, unsigned Flags, int Priority)
    : RT(RT), K(K), Flags(Flags), Priority(Priority), Errors(CurrentDomain) {}

void Runtime::postAsyncError(const Result &R, const std::string &What) {
  postAsyncError(R, What, CurrentDomain);
}

void Runtime::postAsyncError(const Result &R, const std::string &What,
                             AsyncErrorDomain *D) {
  Result E = Result::error(R.code(), What.empty() ? R.message()
                                                  : What + ": " + R.message());
  logLine("cleave: " + describeError(E));
  std::lock_guard<std::mutex> Lock(D ? D->Mutex : AsyncMutex);
  Result &Pending = D ? D->Error : AsyncError;
  if (Pending.ok())
    Pending = E;
}

Result Runtime::takeAsyncError() {
  AsyncErrorDomain *D = CurrentDomain;
  std::lock_guard<std::mutex> Lock(D ? D->Mutex : AsyncMutex);
  Result &Pending = D ? D->Error : AsyncError;
  Result R = Pending;
  // A kernel's illegal address or failed assertion is sticky, as CUDA's
  // is for its context: every later report gives it again, until a reset.
  if (!isStickyKernelError(R.code()))
    Pending = Result::success();
  return R;
}

Result Runtime::peekAsyncError() {
  AsyncErrorDomain *D = CurrentDomain;
  std::lock_guard<std::mutex> Lock(D ? D->Mutex : AsyncMutex);
  return D ? D->Error : AsyncError;
}

//===----------------------------------------------------------------------===//
// Pinned host memory and kernel attributes
//===----------------------------------------------------------------------===//

Result Runtime::allocatePinned(uint64_t Bytes, void *&Out) {
  Out = nullptr;
  if (Bytes == 0)
    return Result::success();
  // A GPU's pinned memory (portable to every context) when there is a GPU,
  // else ordinary host memory.
  Device *Owner = &Registry->device(0);
  for (Device *D : Registry->devices())
    if (D->kind() == DeviceKind::Cuda) {
      Owner = D;
      break;
    }
  Result R = Owner->allocateHost(Bytes, Out);
  if (!R.ok())
    return R;
  std::lock_guard<std::mutex> Lock(PinnedMutex);
  Pinned[reinterpret_cast<uintptr_t>(Out)] = {Bytes, Owner, false};
  return Result::success();
}

Result Runtime::freePinned(void *Ptr) {
  if (!Ptr)
    return Result::success();
  Device *Owner;
  {
    std::lock_guard<std::mutex> Lock(PinnedMutex);
    auto It = Pinned.find(reinterpret_cast<uintptr_t>(Ptr));
    if (It == Pinned.end() || It->second.Registered)
      return Result::error(ErrorCode::InvalidValue,
                           "cudaFreeHost: not the start of memory from "
                           "cudaMallocHost or cudaHostAlloc (or freed "
                           "already)");
    Owner = It->second.Owner;
    Pinned.erase(It);
  }
  // Copies queued from or to it finish first, those left running on a GPU
  // (direct copies) included.
  drain();
  settleDeferred();
  return Owner->freeHost(Ptr);
}

bool Runtime::isPinned(const void *P, uint64_t Bytes) {
  uintptr_t A = reinterpret_cast<uintptr_t>(P);
  std::lock_guard<std::mutex> Lock(PinnedMutex);
  auto It = Pinned.upper_bound(A);
  if (It == Pinned.begin())
    return false;
  --It;
  return A - It->first <= It->second.Bytes &&
         Bytes <= It->second.Bytes - (A - It->first);
}

Result Runtime::registerHost(void *Ptr, uint64_t Bytes) {
  uintptr_t A = reinterpret_cast<uintptr_t>(Ptr);
  if (!Ptr || Bytes == 0 || A + Bytes < A)
    return Result::error(ErrorCode::InvalidValue,
                         "cudaHostRegister: null pointer or no bytes");
  std::lock_guard<std::mutex> Lock(PinnedMutex);
  // No overlap with pinned or registered memory (CUDA refuses it too).
  auto Next = Pinned.lower_bound(A);
  bool Overlaps = Next != Pinned.end() && Next->first < A + Bytes;
  if (Next != Pinned.begin()) {
    auto Prev = std::prev(Next);
    Overlaps |= Prev->first + Prev->second.Bytes > A;
  }
  if (Overlaps)
    return Result::error(ErrorCode::HostMemoryAlreadyRegistered,
                         "cudaHostRegister: [" + std::to_string(A) + ", +" +
                             std::to_string(Bytes) +
                             ") overlaps memory already registered or "
                             "allocated pinned");
  // Page-locked through the first GPU (portable to every context); without
  // a GPU only recorded, which is what makes *Async copies asynchronous.
  Device *Owner = nullptr;
  for (Device *D : Registry->devices())
    if (D->kind() == DeviceKind::Cuda) {
      if (Result R = D->registerHostMemory(Ptr, Bytes); !R.ok())
        return R;
      Owner = D;
      break;
    }
  Pinned[A] = {Bytes, Owner, true};
  return Result::success();
}

Result Runtime::unregisterHost(void *Ptr) {
  Device *Owner;
  {
    std::lock_guard<std::mutex> Lock(PinnedMutex);
    auto It = Pinned.find(reinterpret_cast<uintptr_t>(Ptr));
    if (!Ptr || It == Pinned.end() || !It->second.Registered)
      return Result::error(ErrorCode::HostMemoryNotRegistered,
                           "cudaHostUnregister: not the start of memory "
                           "registered with cudaHostRegister (or "
                           "unregistered already)");
    Owner = It->second.Owner;
    Pinned.erase(It);
  }
  // Copies queued from or to it finish first, those left running on a GPU
  // (direct copies) included.
  drain();
  settleDeferred();
  return Owner ? Owner->unregisterHostMemory(Ptr) : Result::success();
}

const KernelHandle *Runtime::cachedKernel(const std::string &Name) {
  std::lock_guard<std::mutex> Lock(AttrMutex);
  auto It = Kernels.find(Name);
  return It == Kernels.end() ? nullptr : It->second;
}

void Runtime::cacheKernel(const std::string &Name, const KernelHandle *K) {
  std::lock_guard<std::mutex> Lock(AttrMutex);
  Kernels[Name] = K;
}

bool Runtime::cachedSymbolSize(const std::string &Name, uint64_t &Bytes) {
  std::lock_guard<std::mutex> Lock(AttrMutex);
  auto It = SymbolSizes.find(Name);
  if (It == SymbolSizes.end())
    return false;
  Bytes = It->second;
  return true;
}

void Runtime::cacheSymbolSize(const std::string &Name, uint64_t Bytes) {
  std::lock_guard<std::mutex> Lock(AttrMutex);
  SymbolSizes[Name] = Bytes;
}

uint64_t Runtime::maxDynamicShared(const std::string &Name,
                                   uint64_t StaticBytes) {
  std::lock_guard<std::mutex> Lock(AttrMutex);
  auto It = MaxDynShared.find(Name);
  if (It != MaxDynShared.end())
    return It->second;
  return StaticBytes >= StaticSharedLimit ? 0 : StaticSharedLimit - StaticBytes;
}

void Runtime::setMaxDynamicShared(const std::string &Name, uint64_t Bytes) {
  std::lock_guard<std::mutex> Lock(AttrMutex);
  MaxDynShared[Name] = Bytes;
}

} // namespace api
} // namespace rt
} // namespace cleave
