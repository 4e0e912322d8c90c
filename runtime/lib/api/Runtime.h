//===- Runtime.h - The state behind the C and CUDA APIs ---------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). Internal to the API layer
// (docs/runtime-api.md). One Runtime per process, created on the first API
// call that needs devices: the device registry (CLEAVE_DEVICES), the buffer
// manager over its devices, the CPU executor and the launch engine, plus
// what the CUDA-runtime subset adds on top: streams with one worker thread
// each, events, pinned host allocations and per-kernel attributes.
//
// Registrations (cleave_register_*) come from static constructors, before
// or after the runtime exists, in any order; they are stored here for the
// whole life of the process and handed to every engine the runtime creates.
//
// Stream order. Every stream (the legacy default stream included) has a
// worker thread running its queue in order. An operation waits, before it
// runs, for the (stream, ticket) pairs it was queued with: work queued on
// the legacy stream waits for what every blocking stream had queued at that
// moment, and work queued on a blocking stream waits for what the legacy
// stream had queued (CUDA's implicit synchronization; non-blocking streams
// take part in neither). Tickets only name earlier work, so waits never form
// a cycle.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_API_RUNTIME_H
#define CLEAVE_RT_API_RUNTIME_H

#include "cleave/rt/Buffers.h"
#include "cleave/rt/CoRunGate.h"
#include "cleave/rt/CpuExecutor.h"
#include "cleave/rt/Device.h"
#include "cleave/rt/Engine.h"
#include "cleave/rt/Error.h"
#include "cleave/rt/Options.h"
#include "cleave_rt.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <unordered_map>
#include <vector>

namespace cleave {
namespace rt {
namespace api {

class Runtime;
class Stream;

/// Short names for the launch and symbol errors; the CUDA translation unit
/// checks their values against driver_types.h.
constexpr ErrorCode ErrInvalidConfiguration = ErrorCode::InvalidConfiguration;
constexpr ErrorCode ErrInvalidPitchValue = ErrorCode::InvalidPitchValue;
constexpr ErrorCode ErrInvalidSymbol = ErrorCode::InvalidSymbol;
constexpr ErrorCode ErrInvalidDeviceFunction = ErrorCode::InvalidDeviceFunction;

/// The most static shared memory a kernel may have, and the default limit
/// of static plus dynamic shared memory per block (48 KiB, every GPU since
/// compute capability 2.0).
constexpr uint64_t StaticSharedLimit = 48 * 1024;

/// The priorities streams may have (cudaDeviceGetStreamPriorityRange):
/// CUDA's range on every GPU since compute capability 7.0.
constexpr int LeastStreamPriority = 0, GreatestStreamPriority = -5;

/// cudaEventDisableTiming (the CUDA translation unit checks the value).
constexpr unsigned EventDisableTiming = 0x02;

/// "cudaErrorInvalidValue", ... for every cudaError_t value the runtime
/// returns (and CUDA's other values; defined with the CUDA subset).
const char *errorName(ErrorCode C);
/// "cudaErrorX: message".
std::string describeError(const Result &R);

//===----------------------------------------------------------------------===//
// Logging and errors of the calling thread
//===----------------------------------------------------------------------===//

/// The runtime's CLEAVE_LOG settings (Options::Log), set when it starts;
/// before the first start, those it will start with.
const LogOptions &logOptions();

/// Writes one line to stderr (a trailing newline is added when missing);
/// lines from different threads do not interleave.
void logLine(const std::string &Line);

/// Records \p R as the calling thread's last error when it is an error
/// (cudaGetLastError), prints it under CLEAVE_LOG=errors, and returns its
/// code as an int (a cudaError_t value).
int finish(const Result &R);

/// cudaGetLastError (Reset) / cudaPeekAtLastError: the calling thread's last
/// error, else an error that asynchronous work reported since.
ErrorCode lastError(bool Reset);
/// The message of what lastError(false) would return; empty for success.
std::string lastErrorMessage();

//===----------------------------------------------------------------------===//
// Registrations
//===----------------------------------------------------------------------===//

/// Stores what cleave_register_* pass (kept for the life of the process).
Result registerModule(const cleave_module_desc *Module);
Result registerKernel(const void *Stub, const char *Name);
Result registerVariable(const void *Shadow, const char *Name, uint64_t Size);
/// cleave-serve: while \p Capture is set on a thread, the modules that
/// thread registers (a client's CPU image's constructors, run by dlopen)
/// go to it instead of the process's registrations. Null ends it.
using ModuleCapture = std::function<void(
    const cleave_module_desc &, const std::map<std::string, void *> &)>;
void setModuleCapture(ModuleCapture *Capture);
/// The device name registered for a kernel stub; false when there is none.
bool kernelName(const void *Stub, std::string &Name);
/// The device name and size registered for a variable's host shadow.
bool variableName(const void *Shadow, std::string &Name, uint64_t &Size);

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

/// A piece of work queued on a stream.
struct Op {
  /// Runs on the stream's worker. An error is posted as an asynchronous
  /// error (reported by the next synchronizing call and cudaGetLastError).
  std::function<Result()> Run;
  /// What the work is, for the message of an asynchronous error.
  std::string What;
  /// Earlier work of other streams that must be complete first.
  std::vector<std::pair<std::shared_ptr<Stream>, uint64_t>> Waits;
  /// A kernel launch, which may leave its GPU work running when it
  /// returns (KernelLaunchRequest::MayDefer): the stream counts it done
  /// once that work is, which it waits for (BufferManager::settle()) when
  /// the next work is not such a launch, when someone waits for the
  /// stream, or when no work comes for spin_us (CLEAVE_TUNE). The launch defers
  /// only if another one is queued behind it (Stream::launchQueued()): one
  /// waited for alone waits on each GPU's own issue worker, sooner.
  bool Deferrable = false;
};

/// Where asynchronous errors are kept: the runtime's own, or those of one
/// cleave-serve client (docs/serve.md), so that one client's failed work is
/// reported to it alone.
struct AsyncErrorDomain {
  std::mutex Mutex;
  Result Error;
};

/// cleave-serve: while \p D is set on a thread, the asynchronous errors that
/// thread takes or peeks, and those of the streams it creates, are D's
/// (null: the runtime's own).
void setAsyncErrorDomain(AsyncErrorDomain *D);

class Stream {
public:
  enum class Kind { Legacy, Blocking, NonBlocking };

  Stream(Runtime &RT, Kind K, unsigned Flags, int Priority = 0);
  ~Stream();
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;

  /// Starts the worker; it holds \p Self until the stream is retired and its
  /// queue has drained.
  static void start(const std::shared_ptr<Stream> &Self);

  Kind kind() const { return K; }
  unsigned flags() const { return Flags; }
  /// cudaStreamCreateWithPriority's priority (lower is more urgent), within
  /// [GreatestStreamPriority, LeastStreamPriority].
  int priority() const { return Priority; }
  /// The ticket of the last work queued (0: none yet).
  uint64_t lastTicket();
  /// Whether the work of \p Ticket (and everything before it) is done.
  bool done(uint64_t Ticket);
  /// Blocks until \p Ticket is done.
  void wait(uint64_t Ticket);
  /// Lets the worker exit once the queue is empty (cudaStreamDestroy).
  void retire();
  /// Whether the next work queued (after the work the worker runs) is a
  /// kernel launch (Op::Deferrable).
  bool launchQueued();

private:
  friend class Runtime;
  /// Queues \p O (Runtime::enqueue, under its enqueue lock); its ticket.
  uint64_t push(Op O);
  void work();

  Runtime &RT;
  const Kind K;
  const unsigned Flags;
  const int Priority;
  /// Spins up to spin_us (CLEAVE_TUNE, default 200) for \p Ready
  /// before the caller blocks on Cond: waking a thread that sleeps costs
  /// 5-50 us on a server, per hand-off, twice per launch (the worker
  /// picking it up, the host thread seeing it done), as much as a short
  /// kernel's split gains. True when \p Ready held.
  template <class Pred> bool spinFor(Pred Ready) const;

  std::mutex Mutex;
  std::condition_variable Cond;
  std::deque<Op> Queue;
  /// Queued and Completed change under Mutex; atomics so that spinning
  /// readers need not take it.
  std::atomic<uint64_t> Queued{0};
  std::atomic<uint64_t> Completed{0};
  /// Threads in wait(): with no more work queued, the worker settles
  /// deferred work at once for them rather than after its spin.
  std::atomic<unsigned> Waiters{0};
  /// The direct device's stream this stream's direct work goes to
  /// (Runtime::directStream; under the runtime's DirectMutex), null until
  /// first used. The legacy stream's is the GPU's compute stream.
  StreamHandle Gpu = nullptr;
  bool Retired = false;
  bool Exited = false;
  std::thread Worker;
  /// Where the failures of its work go (the creating thread's domain).
  AsyncErrorDomain *Errors = nullptr;
};

/// One cudaEventRecord: where it was queued, and when it completed.
struct EventRecord {
  std::shared_ptr<Stream> S;
  uint64_t Ticket = 0;
  std::mutex Mutex;
  bool Done = false;
  std::chrono::steady_clock::time_point When;
  /// Recorded on the direct device's compute stream too (Event::OnGpu):
  /// its completion and time are that GPU event's.
  bool OnGpu = false;
};

struct Event {
  Event() = default;
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;
  ~Event();
  unsigned Flags = 0;
  std::mutex Mutex;
  /// The latest record; null until the event is first recorded.
  std::shared_ptr<EventRecord> Last;
  /// With a direct device (Runtime::directDevice), the GPU event every
  /// record of this event also records on that device's compute stream,
  /// behind the work queued before it: cudaEventElapsedTime is then the
  /// GPU's time between two records, as under CUDA, not the host's.
  Device *Gpu = nullptr;
  EventHandle OnGpu = nullptr;
};

//===----------------------------------------------------------------------===//
// The runtime
//===----------------------------------------------------------------------===//

class Runtime {
public:
  /// The process's runtime, created on the first call. A failed start
  /// (CLEAVE_DEVICES names no usable device, ...) is reported once on
  /// stderr and returned by every call until reset().
  static Result get(Runtime *&Out);
  /// cleave_reset / cudaDeviceReset: waits for all queued work, destroys
  /// streams, events, buffers, pinned memory, the engine and the devices;
  /// the next call starts afresh (with the same options: the environment
  /// is parsed once per process) and hands the registered modules to the
  /// new engine. No other thread may use the
  /// runtime meanwhile (as CUDA requires of cudaDeviceReset).
  static void reset();
  /// Whether a runtime exists (started or not), without starting one.
  static bool started();
  /// Tests: the devices the next runtimes start with instead of
  /// CLEAVE_DEVICES' (null: CLEAVE_DEVICES again).
  using DeviceSource = std::function<std::vector<std::unique_ptr<Device>>()>;
  static void setDeviceSourceForTesting(DeviceSource Make);
  /// Tests: the options the next runtimes start with instead of the
  /// process's (nullopt: the process's again).
  static void setOptionsForTesting(std::optional<Options> O);

  ~Runtime();

  /// The options this runtime started with.
  const Options &options() const { return Opts; }
  /// How long a wait for work already under way polls (TuneOptions).
  unsigned busyWaitUs() const { return BusyWaitUs; }
  DeviceRegistry &registry() { return *Registry; }
  BufferManager &buffers() { return *Buffers; }
  Engine &engine() { return *Eng; }
  /// Serializes the engine's entry points: launches of different streams
  /// take turns (each spreads over every device anyway).
  std::mutex &engineMutex() { return EngineMutex; }
  /// The partition policy CLEAVE_PARTITION set, if it was set.
  bool partitionFromEnvironment() const { return PolicyFromEnv; }
  /// The module load failures, for cudaErrorInvalidKernelImage messages.
  std::string moduleErrors();
  /// Whether the kernel named \p Name comes from a module registered with
  /// CLEAVE_MODULE_SINGLE_DEVICE.
  bool singleDeviceKernel(const std::string &Name);
  /// With a direct device, starts resolving the registered kernels'
  /// functions there in the background (Engine::preloadDirect).
  void startPreloading();
  /// Stops that and waits for it (at exit: no thread may be in the
  /// driver while it shuts down).
  void stopPreparing();
  /// Adds a module registered after the runtime started.
  void addModule(const cleave_module_desc &Module,
                 const std::map<std::string, void *> &Symbols);

  // Streams. ---------------------------------------------------------------
  /// The stream a cudaStream_t names: null/cudaStreamLegacy (0x1) the
  /// legacy default stream, cudaStreamPerThread (0x2) the calling thread's
  /// own, else one that cudaStreamCreate returned and that is still alive
  /// (cudaErrorInvalidResourceHandle otherwise).
  Result stream(void *Handle, std::shared_ptr<Stream> &Out);
  /// cudaStreamCreateWithPriority (\p Priority clamped to the range, as
  /// CUDA does).
  Result createStream(unsigned Flags, void *&Handle, int Priority = 0);
  /// The co-scheduler (docs/coschedule.md) when launches should go through
  /// it: CLEAVE_TUNE=coschedule is on, the runtime has at most one GPU
  /// (and, without one, a single device), and the program holds two
  /// streams or more besides the legacy one, whose launches may be pending
  /// at once; null otherwise.
  CoRunGate *coScheduler();
  Result destroyStream(void *Handle);
  /// Queues \p O on \p S after the implicit legacy-stream dependencies;
  /// returns its ticket.
  uint64_t enqueue(const std::shared_ptr<Stream> &S, Op O);
  /// Queues \p Fn on \p S, waits for it, and returns its result, or else an
  /// asynchronous error that earlier work reported (a synchronizing call).
  Result runSync(const std::shared_ptr<Stream> &S, std::function<Result()> Fn,
                 std::string What);
  /// Waits for the work queued on \p S so far (the legacy stream: and for
  /// what blocking streams queued before), then reports asynchronous errors.
  Result synchronize(const std::shared_ptr<Stream> &S);
  /// Waits for all work of all streams, then reports asynchronous errors.
  Result synchronizeAll();
  /// Waits for all work of all streams.
  void drain();
  /// Whether work queued on \p S now would wait for nothing: the work
  /// queued on S is done, and so is that of the streams S synchronizes with
  /// implicitly (enqueue()). Work left running on a GPU (deferred) counts
  /// as done: it is ordered on the GPU's compute stream.
  bool idleFor(const std::shared_ptr<Stream> &S);
  /// Waits for the GPUs' deferred work (BufferManager::settle), posting a
  /// failure as an asynchronous error.
  void settleDeferred();
  /// Whether no work is outstanding: every stream's queued work is done,
  /// and so is the work GPUs were left running (deferred).
  bool idle();

  // Managed memory (docs/runtime.md, "Managed memory"). ---------------------
  /// Called before work that may use buffers is queued or run (launches,
  /// copies, fills, prefetches): the host's writes to managed memory are
  /// recorded in the buffers' validity and the host copies opened to the
  /// runtime (BufferManager::managedToDevices). Nothing without managed
  /// buffers.
  Result managedForDevices();
  /// Called at synchronization points (cudaDeviceSynchronize, a stream or
  /// event synchronized or queried done, synchronous copies and fills,
  /// cudaFree): when no work is outstanding, every managed buffer is made
  /// current in its host copy and write-protected
  /// (BufferManager::managedToHost). Nothing without managed buffers.
  Result managedForHost();

  // Direct launches (docs/runtime.md, "Direct launches"). ------------------
  /// The runtime's only GPU when every other device is a CPU device, -1
  /// otherwise: a launch there has nothing to decide or move, and work on
  /// an idle stream goes straight to that GPU's compute stream from the
  /// calling thread. Beside CPU devices, a kernel's launches go straight
  /// there only once the engine ran its last launches whole on the GPU
  /// (mayLaunchDirect()).
  Location directDevice() const { return DirectDev; }
  /// The GPU events that time one direct launch of a kernel.
  struct DirectProbe {
    EventHandle Start = nullptr, Stop = nullptr;
  };
  /// Why mayLaunchDirect() let a launch go direct (the plan's reason).
  struct DirectWhy {
    enum Kind : uint8_t {
      Alone,    ///< the GPU is the only device
      First,    ///< the kernel's first launch
      Unread,   ///< its first timing not read yet
      TooShort, ///< timed shorter than the model's shortest split
      Streak,   ///< the engine ran its last launches whole on the GPU
    } What = Alone;
    /// TooShort: the timing the launch was predicted from, and the bound.
    float Ms = 0, BelowMs = 0;
    uint64_t Blocks = 0;
    std::string text() const;
  };
  /// Whether a launch of \p K over \p Blocks blocks may go straight to the
  /// direct device: with the GPU alone, always. Beside CPU devices, K's
  /// first launch (the model's first search of a key costs 0.2-1 ms of
  /// host time, which a program that launches a kernel once pays whole);
  /// under the model policy, every launch that K's last timed direct launch
  /// says is shorter on the GPU than the model's shortest split
  /// (Engine::minSplitMs(): the engine would run it there whole,
  /// unsearched); otherwise once the engine ran DirectStreak launches of K
  /// in a row whole on the GPU, and then for DirectRecheck launches before
  /// one goes to the engine again, so that a CPU share that starts to pay
  /// is found. \p Probe is set when this direct launch is to be timed
  /// (the first, then every DirectRecheck + 1): record \p Probe's events
  /// around it and call noteProbe().
  bool mayLaunchDirect(const KernelHandle *K, uint64_t Blocks,
                       DirectProbe *&Probe, DirectWhy &Why);
  /// \p Probe's events were recorded around a direct launch of \p K over
  /// \p Blocks blocks (\p Recorded false: they were not; no time is read).
  void noteProbe(const KernelHandle *K, uint64_t Blocks, bool Recorded);
  /// The engine ran a launch of \p K as \p Plan says (mayLaunchDirect()).
  void noteEngineLaunch(const KernelHandle *K, const LaunchPlan &Plan);
  static constexpr unsigned DirectStreak = 2, DirectRecheck = 63;
  /// The function of a direct launch of \p K, cached for kernels without
  /// variables (null when not cached).
  FunctionHandle cachedDirectFunction(const KernelHandle *K);
  void cacheDirectFunction(const KernelHandle *K, FunctionHandle F);
  /// The event's GPU event on the direct device, created on first use.
  Result gpuEvent(Event &E, EventHandle &Out);
  /// The direct device's stream where \p S's direct work goes (launches,
  /// copies, event records and waits): for the legacy stream the GPU's
  /// compute stream, for every other stream one of its own (created on
  /// first use, with its priority), so that the work of different streams
  /// overlaps on the GPU as under CUDA. \p Out is ordered first after the
  /// deferred work \p S must follow there: a blocking stream's after the
  /// compute stream's, the legacy stream's after the blocking streams'
  /// (CUDA's implicit synchronization); a non-blocking stream's after the
  /// compute stream's too, where the engine's launches left work running
  /// that may be S's own.
  Result directStream(const std::shared_ptr<Stream> &S, StreamHandle &Out);

  // Events. ----------------------------------------------------------------
  Result createEvent(unsigned Flags, void *&Handle);
  Result destroyEvent(void *Handle);
  Result event(void *Handle, std::shared_ptr<Event> &Out);

  // Asynchronous errors. ---------------------------------------------------
  /// Records the failure of queued work (the first one pending is kept) and
  /// prints it once on stderr.
  void postAsyncError(const Result &R, const std::string &What);
  /// The same into \p D (null: the runtime's own).
  void postAsyncError(const Result &R, const std::string &What,
                      AsyncErrorDomain *D);
  /// Takes the pending asynchronous error (success when none); an
  /// IllegalAddress stays pending (sticky).
  Result takeAsyncError();
  /// The pending asynchronous error, left pending.
  Result peekAsyncError();

  // Pinned host memory (cudaMallocHost / cudaHostAlloc). --------------------
  Result allocatePinned(uint64_t Bytes, void *&Out);
  Result freePinned(void *Ptr);
  /// cudaHostRegister / cudaHostUnregister: [Ptr, Ptr + Bytes) of the
  /// program's memory counts as pinned (isPinned) and is page-locked
  /// through the first GPU when there is one.
  /// HostMemoryAlreadyRegistered when it overlaps pinned memory.
  Result registerHost(void *Ptr, uint64_t Bytes);
  Result unregisterHost(void *Ptr);
  /// Whether [P, P + Bytes) lies inside one pinned allocation or
  /// registration.
  bool isPinned(const void *P, uint64_t Bytes);

  // Device-wide settings (cudaDeviceSetCacheConfig, cudaSetDeviceFlags):
  // kept and reported back; each is a hint the devices are free to ignore,
  // as CUDA's are.
  std::atomic<int> CacheConfig{0};
  std::atomic<unsigned> DeviceFlags{0};

  // Lookups cached outside the engine. -------------------------------------
  // The engine holds its lock for the whole of a launch; a host thread that
  // queues the next launch or an asynchronous symbol copy must not wait for
  // that, so what it needs to know is looked up once and kept (handles stay
  // valid until the engine goes, with the runtime).
  const KernelHandle *cachedKernel(const std::string &Name);
  void cacheKernel(const std::string &Name, const KernelHandle *K);
  bool cachedSymbolSize(const std::string &Name, uint64_t &Bytes);
  void cacheSymbolSize(const std::string &Name, uint64_t Bytes);

  // Kernel attributes (cudaFuncSetAttribute). -------------------------------
  /// The dynamic shared memory a launch of \p Name may use (48 KiB minus
  /// its static shared memory unless raised).
  uint64_t maxDynamicShared(const std::string &Name, uint64_t StaticBytes);
  void setMaxDynamicShared(const std::string &Name, uint64_t Bytes);
  /// The most shared memory one block may opt in to (bytes).
  uint64_t sharedOptinLimit() const { return SharedOptin; }

private:
  Runtime() = default;
  Result start();
  /// A stream or event handle never given out before in this process, so
  /// that a destroyed handle stays invalid even when its memory is reused.
  static void *newHandle();
  /// Forgets retired streams whose worker has exited (StreamsMutex held).
  void reapLocked();

  Options Opts;
  unsigned BusyWaitUs = 0;
  std::unique_ptr<DeviceRegistry> Registry;
  std::unique_ptr<BufferManager> Buffers;
  std::unique_ptr<CpuExecutor> Exec;
  std::unique_ptr<Engine> Eng;
  /// Engine::prepare() at start (several devices), or
  /// Engine::preloadDirect() once the registered modules are added (a
  /// direct device), off the program's thread; StopPreparing ends the
  /// latter early (at exit or reset).
  std::thread Preparing;
  std::atomic<bool> StopPreparing{false};
  std::mutex EngineMutex;
  bool PolicyFromEnv = false;
  Location DirectDev = -1;
  /// DirectDev sits beside CPU devices: launches go there per kernel.
  bool DirectPerKernel = false;
  /// Under the model policy: direct launches of a kernel measured too short
  /// to split go direct (mayLaunchDirect()).
  bool DirectTimed = false;
  struct DirectGate {
    bool Seen = false;     ///< a launch of the kernel was asked about
    unsigned Streak = 0;   ///< engine launches in a row whole on the GPU
    unsigned Launched = 0; ///< direct launches since the engine's last
    /// The timed direct launch: its events (made on first use), whether
    /// they wait to be read, its blocks, and the direct launches since.
    DirectProbe Probe;
    bool Pending = false;
    uint64_t ProbeBlocks = 0;
    unsigned SinceProbe = 0;
    /// The last timed launch's GPU time (negative: none read yet).
    double ProbeMs = -1;
    uint64_t MeasuredBlocks = 0;
  };
  /// Reads \p G's pending probe when the GPU is done with it (G's lock
  /// held).
  void readProbe(DirectGate &G);
  std::mutex GatesMutex;
  std::unordered_map<const KernelHandle *, DirectGate> Gates;
  uint64_t SharedOptin = 0;

  std::mutex ModulesMutex;
  std::vector<std::string> ModuleErrors;
  std::set<std::string> SingleDeviceKernels;

  /// Held while queueing, so that the implicit dependencies of every queued
  /// operation are read consistently.
  std::mutex StreamsMutex;
  std::shared_ptr<Stream> Legacy;
  std::map<void *, std::shared_ptr<Stream>> Streams;
  std::map<std::thread::id, std::shared_ptr<Stream>> PerThread;
  /// Streams and PerThread's sizes together (coScheduler() reads it
  /// without StreamsMutex).
  std::atomic<size_t> OtherStreams{0};
  std::unique_ptr<CoRunGate> Gate;
  /// Destroyed streams whose queued work has not finished yet.
  std::vector<std::shared_ptr<Stream>> Retiring;
  std::map<void *, std::shared_ptr<Event>> Events;
  /// directStream(): the GPU streams made for program streams (destroyed
  /// with the runtime), and those of destroyed streams, by priority, for
  /// the next streams to reuse.
  std::mutex DirectMutex;
  std::vector<StreamHandle> GpuStreams;
  std::map<int, std::vector<StreamHandle>> FreeGpuStreams;

  std::mutex AsyncMutex;
  Result AsyncError;

  std::mutex PinnedMutex;
  struct PinnedBlock {
    uint64_t Bytes = 0;
    /// The device that allocated or page-locked it; null for a
    /// registration without a GPU.
    Device *Owner = nullptr;
    /// cudaHostRegister'ed (the program's memory) rather than allocated.
    bool Registered = false;
  };
  /// Start -> block.
  std::map<uintptr_t, PinnedBlock> Pinned;

  std::mutex AttrMutex;
  std::map<std::string, uint64_t> MaxDynShared;
  std::map<std::string, const KernelHandle *> Kernels;
  std::map<std::string, uint64_t> SymbolSizes;
  std::map<const KernelHandle *, FunctionHandle> DirectFunctions;
};

//===----------------------------------------------------------------------===//
// Launches (Launches.cpp)
//===----------------------------------------------------------------------===//

/// The kernel called \p Name in the engine of \p RT:
/// cudaErrorInvalidKernelImage when it is in no loaded module and some
/// module failed to load, cudaErrorInvalidDeviceFunction otherwise.
Result findKernel(Runtime &RT, const std::string &Name,
                  const KernelHandle *&Out);

/// cudaLaunchKernel / cleave_launch of the kernel called \p Name: checks
/// the configuration, copies the arguments and queues the launch on the
/// stream \p StreamHandle (asynchronous: a failure of the launch itself is
/// an asynchronous error).
Result launchKernel(const std::string &Name, const uint32_t Grid[3],
                    const uint32_t Block[3], void **Args, uint64_t SharedBytes,
                    void *StreamHandle);

/// The same for a kernel already found (cleave-serve: a client's kernel,
/// found among its own programs, docs/serve.md).
Result launchKernel(Runtime &RT, const KernelHandle *K, const uint32_t Grid[3],
                    const uint32_t Block[3], void **Args, uint64_t SharedBytes,
                    void *StreamHandle);

/// The plan of the calling thread's last launch (LaunchPlan::describe()),
/// once that launch has run; InvalidValue when the thread launched nothing
/// since the runtime started.
Result lastPlan(std::string &Out);

} // namespace api
} // namespace rt
} // namespace cleave

#endif
