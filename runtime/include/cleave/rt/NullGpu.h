//===- NullGpu.h - A GPU that runs nothing ----------------------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). A device of kind Cuda whose replica
// memory is host memory (malloc), whose copies are memcpy and whose kernel
// launches return at once without running anything. The engine drives it
// like a GPU -- footprints, decisions, validity, transfers, the model
// policy's event timings -- so its host-side work can be measured
// (bench/engine) and its GPU-only decisions tested (unit tests) on a
// machine without one. Kernel outputs are never computed: only what the
// engine decides and moves is meaningful.
//
// Event timings: the blocks launched between the two events' records (else
// the device's last launch's) at BlocksPerMs, or what the Timing hook
// returns (given those blocks and the index of the call on this device,
// from 0).
//
// Every operation completes when its call returns, which is a valid order
// of any stream schedule; with Options::Trace, ops() records each copy,
// launch, event record and wait with its stream and event (each event a
// handle of its own), so a test can check the order that streams and
// events impose, not only the order the calls happened to run in.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_NULLGPU_H
#define CLEAVE_RT_NULLGPU_H

#include "cleave/rt/Device.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace cleave {
namespace rt {

class NullGpu final : public Device {
public:
  struct Options {
    int Ordinal = 0;
    /// The device's model: the model policy shares one performance table
    /// between GPUs of one description.
    std::string Description = "null GPU (runs nothing)";
    unsigned ComputeUnits = 132;
    double BlocksPerMs = 1e6;
    std::function<float(uint64_t Blocks, unsigned Call)> Timing;
    /// > 0: a copy to or from the host takes at least its bytes at this
    /// rate (GB/s), as over a link; 0: as long as the memcpy.
    double HostLinkGBps = 0;
    /// queryEvent answers "not done" this many times after each record of
    /// an event, as a GPU still at the work queued before it would.
    unsigned QueriesBeforeDone = 0;
    /// Keep trace().
    bool Trace = false;
    /// The SM partitions it offers (smPartitionGranularity; 0: none).
    unsigned SmGroup = 0;
    /// The answers of attribute() (CUdevice_attribute numbers); others
    /// are NotSupported.
    std::map<int, int> Attributes;
    /// Called by each launch with its grid, block and kernelParams (whose
    /// pointers are this device's addresses: malloc'ed memory), e.g. to do
    /// the kernel's work there.
    std::function<void(const uint32_t Grid[3], const uint32_t Block[3],
                       void **Params)>
        OnLaunch;
  };

  explicit NullGpu(Options O) : Device(props(O)), Opt(std::move(O)) {}
  explicit NullGpu(int Ordinal) : NullGpu(Options{Ordinal}) {}
  ~NullGpu() override {
    for (auto &[A, N] : Allocs)
      std::free(reinterpret_cast<void *>(A));
    for (auto &[Name, A] : Globals)
      std::free(reinterpret_cast<void *>(A));
  }

  /// Host memory "page-locked" through this device (nothing is locked:
  /// the engine's pinning decisions are what tests look at).
  const std::map<void *, uint64_t> &registered() const { return Registered; }
  Result registerHostMemory(void *P, uint64_t Bytes) override {
    Registered[P] = Bytes;
    return Result::success();
  }
  Result unregisterHostMemory(void *P) override {
    if (!Registered.erase(P))
      return Result::error(ErrorCode::InvalidValue,
                           "host memory not registered");
    return Result::success();
  }

  /// The copies pulled into this device (pullFromPeer): the stream each
  /// was queued on and its bytes.
  const std::vector<std::pair<StreamHandle, uint64_t>> &pulls() const {
    return Pulls;
  }

  /// What was queued on or waited for on this device, in order, when
  /// Options::Trace is set: "load" (a module), "launch", "pull", "record",
  /// "wait gpuN" (a
  /// stream waiting for gpuN's event) and "sync" (a stream or the device
  /// synchronized).
  std::vector<std::string> trace() const {
    std::lock_guard<std::mutex> Lock(TraceMutex);
    return Trace;
  }
  void clearTrace() {
    std::lock_guard<std::mutex> Lock(TraceMutex);
    Trace.clear();
    Ops.clear();
  }
  /// One operation as ops() records it.
  struct Op {
    enum Kind { CopyIn, CopyOut, Launch, Record, Wait, Sync } What = Launch;
    /// The stream it was queued on (null: blocking); for Wait, the
    /// stream that waits; for Sync, the stream the host waited for (null:
    /// the whole device).
    StreamHandle Stream = nullptr;
    /// Record, Wait: the event.
    EventHandle Event = nullptr;
    /// CopyIn, CopyOut: this device's address and the bytes.
    DeviceAddr Addr = 0;
    uint64_t Bytes = 0;
    /// Launch: the grid's blocks and the block's x size.
    uint64_t Blocks = 0;
    uint32_t BlockX = 0;
  };
  /// The operations queued on this device, in call order, when
  /// Options::Trace is set.
  std::vector<Op> ops() const {
    std::lock_guard<std::mutex> Lock(TraceMutex);
    return Ops;
  }

  /// The next synchronization of a stream or of the device returns \p R
  /// (an asynchronous error of work queued earlier).
  void failNextSync(Result R) {
    std::lock_guard<std::mutex> Lock(TraceMutex);
    SyncError = std::move(R);
  }

  Result attribute(int Attr, int &Out) override {
    auto It = Opt.Attributes.find(Attr);
    if (It == Opt.Attributes.end())
      return Device::attribute(Attr, Out);
    Out = It->second;
    return Result::success();
  }

  bool hasPeerLink(const Device &) const override { return true; }
  unsigned numInternalStreams() const override { return 3; }
  StreamHandle internalStream(unsigned I) override { return &Tag[I % 3]; }
  /// A stream of its own (a handle distinct from the internal ones), so
  /// that ops() tells streams apart.
  Result createStream(StreamHandle &Out) override {
    std::lock_guard<std::mutex> Lock(TraceMutex);
    StreamTags.push_back(std::make_unique<char>());
    Out = StreamTags.back().get();
    return Result::success();
  }
  Result createPriorityStream(StreamHandle &Out, int Priority) override {
    Result R = createStream(Out);
    std::lock_guard<std::mutex> Lock(TraceMutex);
    Priorities[Out] = Priority;
    return R;
  }
  /// The priority each stream was created with (createPriorityStream).
  std::map<StreamHandle, int> streamPriorities() const {
    std::lock_guard<std::mutex> Lock(TraceMutex);
    return Priorities;
  }
  unsigned smPartitionGranularity(std::string &Why) override {
    if (!Opt.SmGroup)
      return Device::smPartitionGranularity(Why);
    return Opt.SmGroup;
  }
  /// Two streams of their own per split size, traced as "partition N".
  Result smPartitionStreams(unsigned Sms, StreamHandle &First,
                            StreamHandle &Rest) override {
    if (!Opt.SmGroup)
      return Device::smPartitionStreams(Sms, First, Rest);
    if (!Sms || Sms % Opt.SmGroup || Sms + Opt.SmGroup > Opt.ComputeUnits)
      return Result::error(ErrorCode::InvalidValue,
                           "null GPU: no split of " + std::to_string(Sms) +
                               " SMs");
    std::pair<StreamHandle, StreamHandle> &P = Partitions[Sms];
    if (!P.first) {
      if (Result R = createStream(P.first); !R.ok())
        return R;
      if (Result R = createStream(P.second); !R.ok())
        return R;
      note("partition " + std::to_string(Sms));
    }
    First = P.first;
    Rest = P.second;
    return Result::success();
  }
  /// The splits made: first side's SMs -> its stream and the rest's.
  std::map<unsigned, std::pair<StreamHandle, StreamHandle>> partitions() const {
    std::lock_guard<std::mutex> Lock(TraceMutex);
    return Partitions;
  }
  Result destroyStream(StreamHandle) override { return Result::success(); }
  Result synchronizeStream(StreamHandle S) override { return sync(S); }
  Result createEvent(EventHandle &Out) override {
    std::lock_guard<std::mutex> Lock(TraceMutex);
    EventTags.push_back(std::make_unique<char>());
    Out = EventTags.back().get();
    return Result::success();
  }
  Result recordEvent(EventHandle E, StreamHandle S) override {
    note("record", {Op::Record, S, E});
    std::lock_guard<std::mutex> Lock(TraceMutex);
    RecordedAt[E] = Launched;
    QueriesLeft[E] = Opt.QueriesBeforeDone;
    return Result::success();
  }
  Result queryEvent(EventHandle E, bool &Done) override {
    std::lock_guard<std::mutex> Lock(TraceMutex);
    unsigned &Left = QueriesLeft[E];
    Done = Left == 0;
    if (Left)
      --Left;
    return Result::success();
  }
  Result waitForEvent(StreamHandle S, Device &Src, EventHandle E) override {
    note("wait " + Src.name(), {Op::Wait, S, E});
    return Result::success();
  }
  Result synchronizeEvent(EventHandle) override { return Result::success(); }
  Result elapsedTime(EventHandle Start, EventHandle End,
                     float &Ms) override {
    unsigned Call = Timings++;
    // The blocks launched between the two records when some were (the
    // chunks of a pipelined run, timed after all of them ran), else the
    // last launch's.
    uint64_t Blocks = LastBlocks;
    {
      std::lock_guard<std::mutex> Lock(TraceMutex);
      auto A = RecordedAt.find(Start), B = RecordedAt.find(End);
      if (A != RecordedAt.end() && B != RecordedAt.end() &&
          B->second > A->second)
        Blocks = B->second - A->second;
    }
    Ms = Opt.Timing ? Opt.Timing(Blocks, Call)
                    : float(double(Blocks) / Opt.BlocksPerMs);
    return Result::success();
  }
  Result destroyEvent(EventHandle) override { return Result::success(); }
  Result synchronize() override { return sync(nullptr); }
  Result loadModule(const Bundle &, ModuleHandle &Out) override {
    note("load");
    Out = &Tag[2];
    return Result::success();
  }
  Result unloadModule(ModuleHandle) override { return Result::success(); }
  Result getFunction(ModuleHandle, const std::string &Name,
                     FunctionHandle &Out) override {
    Out = &Tag[2];
    std::lock_guard<std::mutex> Lock(TraceMutex);
    Functions.push_back(Name);
    return Result::success();
  }
  /// A module variable: 64 KiB of this device's memory per name (as much
  /// as any variable of the tests), zeroed when first asked for.
  Result getGlobal(ModuleHandle, const std::string &Name, DeviceAddr &Addr,
                   uint64_t &Bytes) override {
    std::lock_guard<std::mutex> Lock(TraceMutex);
    DeviceAddr &A = Globals[Name];
    if (!A) {
      A = reinterpret_cast<DeviceAddr>(std::calloc(1, GlobalBytes));
      if (!A)
        return Result::error(ErrorCode::MemoryAllocation, "null GPU global");
    }
    Addr = A;
    Bytes = GlobalBytes;
    return Result::success();
  }
  /// The entry names getFunction() was asked for, in order.
  std::vector<std::string> functionsAsked() const {
    std::lock_guard<std::mutex> Lock(TraceMutex);
    return Functions;
  }

protected:
  Result launchKernelImpl(FunctionHandle, const uint32_t Grid[3],
                          const uint32_t Block[3], uint64_t, StreamHandle S,
                          void **Params) override {
    LastBlocks = uint64_t(Grid[0]) * Grid[1] * Grid[2];
    {
      std::lock_guard<std::mutex> Lock(TraceMutex);
      Launched += LastBlocks;
    }
    if (Opt.OnLaunch)
      Opt.OnLaunch(Grid, Block, Params);
    Op O{Op::Launch, S};
    O.Blocks = LastBlocks;
    O.BlockX = Block[0];
    note("launch", O);
    return Result::success();
  }
  Result allocateImpl(uint64_t Bytes, DeviceAddr &Out) override {
    void *P = std::malloc(Bytes ? Bytes : 1);
    if (!P)
      return Result::error(ErrorCode::MemoryAllocation, "null gpu: no memory");
    Out = reinterpret_cast<DeviceAddr>(P);
    Allocs[Out] = Bytes;
    return Result::success();
  }
  Result freeImpl(DeviceAddr A) override {
    std::free(reinterpret_cast<void *>(A));
    Allocs.erase(A);
    return Result::success();
  }
  Result copyHostToDeviceImpl(DeviceAddr Dst, const void *Src, uint64_t Bytes,
                              StreamHandle S) override {
    auto Start = std::chrono::steady_clock::now();
    std::memcpy(reinterpret_cast<void *>(Dst), Src, Bytes);
    overLink(Start, Bytes);
    noteOp({Op::CopyIn, S, nullptr, Dst, Bytes});
    return Result::success();
  }
  Result copyDeviceToHostImpl(void *Dst, DeviceAddr Src, uint64_t Bytes,
                              StreamHandle S) override {
    auto Start = std::chrono::steady_clock::now();
    std::memcpy(Dst, reinterpret_cast<const void *>(Src), Bytes);
    overLink(Start, Bytes);
    noteOp({Op::CopyOut, S, nullptr, Src, Bytes});
    return Result::success();
  }
  Result copyWithinImpl(DeviceAddr Dst, DeviceAddr Src, uint64_t Bytes,
                        StreamHandle) override {
    std::memmove(reinterpret_cast<void *>(Dst),
                 reinterpret_cast<const void *>(Src), Bytes);
    return Result::success();
  }
  Result copyPeerImpl(Device &, DeviceAddr Dst, DeviceAddr Src, uint64_t Bytes,
                      StreamHandle) override {
    std::memcpy(reinterpret_cast<void *>(Dst),
                reinterpret_cast<const void *>(Src), Bytes);
    return Result::success();
  }
  Result pullFromPeerImpl(Device &, DeviceAddr Dst, DeviceAddr Src,
                          uint64_t Bytes, StreamHandle S) override {
    Pulls.push_back({S, Bytes});
    note("pull");
    std::memcpy(reinterpret_cast<void *>(Dst),
                reinterpret_cast<const void *>(Src), Bytes);
    return Result::success();
  }
  Result memsetImpl(DeviceAddr Dst, uint8_t V, uint64_t Bytes,
                    StreamHandle) override {
    std::memset(reinterpret_cast<void *>(Dst), V, Bytes);
    return Result::success();
  }

private:
  void note(std::string What) {
    if (!Opt.Trace)
      return;
    std::lock_guard<std::mutex> Lock(TraceMutex);
    Trace.push_back(std::move(What));
  }
  void note(std::string What, Op O) {
    if (!Opt.Trace)
      return;
    std::lock_guard<std::mutex> Lock(TraceMutex);
    Trace.push_back(std::move(What));
    Ops.push_back(O);
  }
  void noteOp(Op O) {
    if (!Opt.Trace)
      return;
    std::lock_guard<std::mutex> Lock(TraceMutex);
    Ops.push_back(O);
  }
  Result sync(StreamHandle S) {
    note("sync", {Op::Sync, S});
    std::lock_guard<std::mutex> Lock(TraceMutex);
    return std::exchange(SyncError, Result::success());
  }
  /// Options::HostLinkGBps: waits out the rest of a copy's link time.
  void overLink(std::chrono::steady_clock::time_point Start,
                uint64_t Bytes) const {
    if (Opt.HostLinkGBps > 0)
      std::this_thread::sleep_until(
          Start + std::chrono::nanoseconds(
                      uint64_t(double(Bytes) / Opt.HostLinkGBps)));
  }

  static DeviceProperties props(const Options &O) {
    DeviceProperties P;
    P.Name = "gpu" + std::to_string(O.Ordinal);
    P.Description = O.Description;
    P.Kind = DeviceKind::Cuda;
    P.Ordinal = O.Ordinal;
    P.TotalMemory = uint64_t(1) << 40;
    P.ComputeUnits = O.ComputeUnits;
    return P;
  }
  Options Opt;
  std::map<DeviceAddr, uint64_t> Allocs;
  std::map<void *, uint64_t> Registered;
  std::vector<std::pair<StreamHandle, uint64_t>> Pulls;
  mutable std::mutex TraceMutex;
  std::vector<std::string> Trace;
  std::vector<std::string> Functions;
  static constexpr uint64_t GlobalBytes = 64 * 1024;
  std::map<std::string, DeviceAddr> Globals;
  std::vector<Op> Ops;
  std::vector<std::unique_ptr<char>> EventTags;
  std::vector<std::unique_ptr<char>> StreamTags;
  std::map<unsigned, std::pair<StreamHandle, StreamHandle>> Partitions;
  std::map<StreamHandle, int> Priorities;
  Result SyncError = Result::success();
  char Tag[3] = {};
  uint64_t LastBlocks = 0;
  /// Blocks launched so far, and their count when each event was recorded.
  uint64_t Launched = 0;
  std::map<EventHandle, uint64_t> RecordedAt;
  std::map<EventHandle, unsigned> QueriesLeft;
  unsigned Timings = 0;
};

} // namespace rt
} // namespace cleave

#endif
