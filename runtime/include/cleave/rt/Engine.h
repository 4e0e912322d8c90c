//===- Engine.h - Registered programs and split launches --------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). The engine is what the API layer
// (cleave_rt.h and the CUDA-runtime subset) drives: it owns the registered
// programs (bundles + their CPU symbols), loads each program's GPU image into
// a device the first time a kernel of it runs there (once per device,
// cached), and launches a kernel over a partition of its blocks across the
// CPU and the GPUs at the same time (issue 4, section 4):
//
//   * each range's footprints are evaluated and its missing inputs moved;
//   * GPUs run the partition-ready variant (PartitionParams.h) on their
//     compute stream, CPU devices the CPU variant, concurrently;
//   * outputs are reconciled: exact, disjoint write footprints only update
//     validity; anything else runs merge kernels (on a GPU, or the CPU merge
//     variant) so the buffer equals what one device alone would produce;
//   * a kernel that cannot be split runs whole on one device;
//   * a range whose device fails (launch, allocation, transfer; CLEAVE_FAULT
//     too) is re-run on the remaining devices, reported once on stderr, and
//     no data is lost.
//
// Engine::launch is synchronous: it returns when the launch's results are
// in place (valid on some device). Asynchrony and stream order are the API
// layer's (one worker per stream). One lock serializes launches and symbol
// copies inside the engine; a slice (KernelLaunchRequest::Slice) releases it
// while its GPU work runs, so that the co-scheduler's slices of two launches
// overlap (docs/coschedule.md). docs/runtime.md ("The launch engine") describes
// the phases, the reconciliation choice and recovery.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_ENGINE_H
#define CLEAVE_RT_ENGINE_H

#include "cleave/rt/Buffers.h"
#include "cleave/rt/Bundle.h"
#include "cleave/rt/CpuExecutor.h"
#include "cleave/rt/CpuKernelABI.h"
#include "cleave/rt/Device.h"
#include "cleave/rt/Error.h"
#include "cleave/rt/HopperModel.h"
#include "cleave/rt/Launch.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cleave {
namespace rt {

class Engine;
class Program;
struct LogOptions;
struct Options;

/// A kernel of a registered program, ready to launch.
struct KernelHandle {
  const Program *Prog = nullptr;
  const BundleKernel *Info = nullptr;
  /// The CPU variant's descriptor, null when the kernel is GPU-only (or the
  /// program's CPU object lacks it).
  const cleave_cpu_kernel_desc *Cpu = nullptr;
  /// The CPU merge variant, when the bundle has one.
  const cleave_cpu_kernel_desc *CpuMerge = nullptr;
  /// The kernel's twin with the block index x and y swapped
  /// (`__cleave_sw_<name>`, cleave-swap-grid), when the program has one.
  const KernelHandle *Swapped = nullptr;
};

/// How the blocks of a launch are spread when the caller gives no
/// partition.
enum class PartitionPolicy {
  /// Every device that can run the kernel gets an equal share of blocks.
  Even,
  /// Shares proportional to each device's throughput estimate (SMs x clock
  /// for GPUs, worker threads for the CPU).
  Proportional,
  /// The whole grid on the best device (the first GPU, else the CPU).
  SingleDevice,
  /// SKMD's partitioner over per-kernel performance tables (seeded from the
  /// device profile, refined from measured launches, persisted), transfer
  /// costs from footprints and residency, and merge costs (ModelPartitioner.h,
  /// docs/partitioner.md). One device when splitting does not pay.
  Model,
  /// Shares proportional to weights the caller gives, one per engine device
  /// (KernelLaunchRequest::Weights; the API layer's CLEAVE_SPLIT): a
  /// benchmarking and diagnostic control. Devices of weight 0, and devices
  /// that cannot run the kernel, get nothing.
  Weights,
};

/// "even", "proportional", "single", "model"; false for anything else.
bool parsePartitionPolicy(std::string_view Text, PartitionPolicy &Out);

/// Parses CLEAVE_SPLIT's value, \p NumDevices comma-separated weights (one
/// per selected device, in order: finite, >= 0, not all 0). False with the
/// reason in \p Why otherwise.
bool parseSplitWeights(std::string_view Text, size_t NumDevices,
                       std::vector<double> &Out, std::string &Why);

/// The split a policy makes of \p Blocks blocks over \p Devices (in that
/// order, each with its throughput estimate in \p Weights): contiguous
/// ranges in device order, devices whose share is 0 left out (a grid
/// smaller than the number of devices gives fewer ranges). SingleDevice
/// gives everything to Devices[0]; Even ignores the weights; Proportional
/// and Weights use them. Remainders go to the largest weights.
Result computePolicyPartition(PartitionPolicy P, uint64_t Blocks,
                              const std::vector<Location> &Devices,
                              const std::vector<double> &Weights,
                              std::vector<PartitionRange> &Out);

/// Transfer pipelining (docs/runtime.md, "Transfer pipelining"): a launch
/// on one GPU that would first upload at least MinBytes from the host copy
/// runs its blocks as chunks whose sends, kernels and receives overlap on
/// three streams of the GPU.
struct PipelineOptions {
  bool On = true;
  /// The least the launch must upload from the host copy to be pipelined.
  uint64_t MinBytes = uint64_t(8) << 20;
  /// Results the program read back after the buffer's last write go back
  /// to the host copy chunk by chunk (a guess from the program's pattern:
  /// a wrong one costs bandwidth, never correctness).
  bool Receive = true;
};

/// A word of a by-value argument that holds the address of a buffer
/// (docs/runtime.md, "Pointers the engine cannot see"): a kernel with the
/// argument-pointer issue dereferences such fields, which hold the
/// program's virtual pointers; a GPU needs its replica's address there.
struct ArgumentPointer {
  size_t Param = 0;  ///< the argument
  size_t Offset = 0; ///< the word's offset in it (a multiple of 8)
  /// The buffer and the offset into it the word points at (its size for
  /// a pointer one past the end).
  std::shared_ptr<Buffer> Buf;
  uint64_t At = 0;
};

/// Whether \p Info dereferences pointers from its by-value arguments and
/// from nowhere else the runtime cannot see (argument-pointer issues, no
/// loaded-pointer one).
bool usesArgumentPointers(const BundleKernel &Info);

/// Every 8-byte word of \p Info's by-value arguments (\p Args, as a
/// launch's kernelParams) that points into a buffer of \p Bufs, or one
/// past its end. An integer field that happens to equal such an address is
/// taken as one: buffer addresses are not values a program computes
/// otherwise.
std::vector<ArgumentPointer> findArgumentPointers(const BufferManager &Bufs,
                                                  const BundleKernel &Info,
                                                  void *const *Args);

/// \p P's word in its argument's bytes \p Bytes, set to the address
/// \p Dev's replica has for it.
Result translateArgumentPointer(BufferManager &Bufs, const ArgumentPointer &P,
                                Location Dev, char *Bytes);

struct KernelLaunchRequest {
  const KernelHandle *Kernel = nullptr;
  uint32_t Grid[3] = {1, 1, 1};
  uint32_t Block[3] = {1, 1, 1};
  uint64_t DynamicSharedBytes = 0;
  /// kernelParams-style, one entry per parameter of the original kernel.
  /// Pointer arguments are virtual pointers (BufferManager) or null.
  void **Args = nullptr;
  /// Explicit block ranges (device = index in the engine's device list),
  /// covering the grid once; empty: the engine's policy decides.
  std::vector<PartitionRange> Partition;
  /// The Weights policy's weights, one per engine device (index = device);
  /// ignored under the other policies and with an explicit Partition.
  std::vector<double> Weights;
  /// The caller waits for the launch's work later (BufferManager::settle(),
  /// which every operation that reads device memory calls first): a
  /// repeated launch may return once its GPU work is queued
  /// (docs/runtime.md, "Deferred completion"). A CUDA stream sets it when
  /// another launch is queued behind this one.
  bool MayDefer = false;
  /// Asked once a repeated launch is planned, just before its GPU work is
  /// issued, when MayDefer is false: whether it may defer after all (a
  /// CUDA stream: whether a launch is queued behind it by now). May be
  /// empty.
  std::function<bool()> QueuedBehind;
  /// A slice of the launch (docs/coschedule.md): only the blocks
  /// [First, First + Count) of the grid, on engine device Device, through
  /// the partition-ready or rebased variant (the original when it is the
  /// whole grid). On a GPU it is issued on the device's co-run lane Lane (0:
  /// the compute stream; others are streams the engine creates, one per
  /// lane and priority), and the
  /// engine's lock is released while it runs, so that a slice of another
  /// launch can be issued beside it. A slice is never split, pipelined,
  /// deferred, timed or repeated. NotSupported, with the reason, for a
  /// kernel whose blocks cannot run as slices (sliceRefusal).
  struct SliceRange {
    Location Device = -1;
    uint64_t First = 0, Count = 0;
    unsigned Lane = 0;
    /// The lane's stream priority on the GPU (CUDA's convention): the
    /// block scheduler favours the blocks of more urgent lanes.
    int Priority = 0;
    /// Pieces: when set, [First, First + Count) is what the launch plans
    /// for (footprints, transfers) once, and its blocks are issued as the
    /// pieces this returns, in order, back to back on the lane, until it
    /// returns Count 0; the lane is waited for once, after the last.
    /// Called with the engine's lock released, with the lane (null on a
    /// CPU device), before each piece: it may make the lane wait for
    /// events. A piece must lie within [First, First + Count). On a GPU
    /// the piece is issued on \p On, which is the lane unless the callee
    /// names another stream of the device (an SM partition's): the callee
    /// then orders that stream after the lane's work and the lane after
    /// the piece.
    std::function<Result(StreamHandle Lane, uint64_t &First, uint64_t &Count,
                         StreamHandle &On)>
        NextPiece;
  };
  std::optional<SliceRange> Slice;
};

class Engine {
public:
  /// Devices, buffers and the CPU executor are not owned; they outlive the
  /// engine. Devices are the BufferManager's (same indices). The engine
  /// keeps a copy of \p Opts (logs, the model policy's profile and cache,
  /// CLEAVE_TUNE's switches); without it, Options' defaults.
  Engine(BufferManager &Bufs, CpuExecutor &Exec,
         PartitionPolicy Policy = PartitionPolicy::Proportional);
  Engine(BufferManager &Bufs, CpuExecutor &Exec, PartitionPolicy Policy,
         const Options &Opts);
  ~Engine();
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;

  /// Registers a program: the bundle's bytes (copied) and the CPU symbols
  /// (name -> address) its CPU entries and variable copies resolve to.
  /// InvalidKernelImage with the loader's message for a bad bundle.
  /// \p Added, when given, is set to the program (cleave-serve looks its
  /// clients' kernels and variables up in their own programs alone).
  Result addProgram(const void *BundleData, size_t BundleSize,
                    std::map<std::string, void *> CpuSymbols,
                    const Program **Added = nullptr);

  /// The kernel whose symbol is \p Name in any registered program (in
  /// program \p In alone when given), or null.
  const KernelHandle *findKernel(std::string_view Name,
                                 const Program *In = nullptr) const;

  /// Runs a launch; see the file comment. Fills \p Plan.
  Result launch(const KernelLaunchRequest &Req, LaunchPlan &Plan);

  /// cudaMemcpyToSymbol / FromSymbol on the variable called \p Name (its
  /// device symbol): the host value is kept, and every device that runs a
  /// kernel of the program gets it before that kernel runs (replicated).
  /// With \p In, the variable of that program alone.
  Result copyToSymbol(std::string_view Name, uint64_t Offset, const void *Src,
                      uint64_t Bytes, const Program *In = nullptr);
  Result copyFromSymbol(std::string_view Name, uint64_t Offset, void *Dst,
                        uint64_t Bytes, const Program *In = nullptr);
  /// The size of a variable, or NotSupported-free InvalidValue if unknown.
  Result symbolSize(std::string_view Name, uint64_t &Bytes,
                    const Program *In = nullptr) const;

  /// The function of \p K's original variant on the GPU of engine device
  /// \p Device, its module loaded there first: what the driver's function
  /// queries (cudaFuncGetAttributes, occupancy) take.
  Result originalFunction(const KernelHandle &K, size_t Device,
                          FunctionHandle &Out);
  /// What a launch of \p K's original variant over the whole grid on GPU
  /// \p Device needs from the engine when the caller queues it there
  /// itself (the API layer's direct launches, docs/runtime.md): the
  /// function, and the kernel's variables current there (a stale one's
  /// copy queued on the GPU's compute stream and deferred, so a launch
  /// ordered after that stream's deferred work reads it; one the kernel
  /// writes is marked held there alone). Each launch of a
  /// kernel that uses variables asks again: the program's symbol copies
  /// change them in between.
  Result prepareDirect(const KernelHandle &K, Location Device,
                       FunctionHandle &Out);
  /// Why \p K's blocks cannot run as slices (KernelLaunchRequest::Slice)
  /// on a device of kind GPU (\p OnGpu) or CPU: the split-refusal rules
  /// (grid-wide sync, a written variable, unusable footprints, no
  /// partition-ready variant for a GPU, ...); empty when they can.
  std::string sliceRefusal(const KernelHandle &K, bool OnGpu) const;
  /// Registers per thread of \p K's original variant from its bundle's
  /// cubin; 0 without one. Without the engine's lock, as sliceRefusal.
  unsigned cubinRegisters(const KernelHandle &K) const;
  /// The minimum slice (docs/coschedule.md, digest 003 §3.4) the
  /// performance cache keeps for \p Kernel on engine device \p Device, 0
  /// when it keeps none; and keeping one (persisted with the cache). Take
  /// the engine's lock: not while a launch of the caller holds it.
  uint64_t cachedSliceBlocks(Location Device, const std::string &Kernel);
  void recordSliceBlocks(Location Device, const std::string &Kernel,
                         uint64_t Blocks);
  /// The GPU models' parameters (model::GpuParams) of engine device
  /// \p Device from the device profile (CLEAVE_PROFILE); false when the
  /// profile has no complete entry for it. Takes the engine's lock.
  bool gpuModel(Location Device, model::GpuParams &Out);
  /// Whether a launch of \p K of \p Grid blocks of \p Block threads on
  /// \p Device has nothing to decide about the reorganization step
  /// (docs/reorganize.md): the kernel has no variants, the step is off, it
  /// cannot apply to the launch's shape, or the model's verdict for the
  /// kernel, device and size is to run the original. The API layer's
  /// direct launches take only such launches.
  bool reorganizeSettled(const KernelHandle &K, Location Device,
                         const uint32_t Grid[3], const uint32_t Block[3]);
  /// The bundle of the program that holds \p K (alive as long as the
  /// engine), or null when \p K is not this engine's.
  const Bundle *bundleOf(const KernelHandle &K) const;

  /// Writes the model policy's measured performance tables to the cache
  /// (also done every few seconds, at destruction and at exit).
  Result flushPerformanceCache();

  const Options &options() const;
  /// Replaces the logs the engine prints (Options::Log) for the launches
  /// after this one: tests look at the plans of a few launches.
  void setLog(const LogOptions &L);
  PartitionPolicy policy() const { return Policy; }
  void setPolicy(PartitionPolicy P) { Policy = P; }
  /// The weights the API layer gives every launch under the Weights policy
  /// (CLEAVE_SPLIT); the engine itself reads KernelLaunchRequest::Weights.
  void setSplitWeights(std::vector<double> W) { SplitWeights = std::move(W); }
  const std::vector<double> &splitWeights() const { return SplitWeights; }
  BufferManager &buffers() { return Bufs; }
  /// Loads what the model policy needs before its first decision (the
  /// device profile, the performance cache), which the first launch would
  /// otherwise wait for; a runtime calls it on a thread of its own at
  /// start.
  void prepare();
  /// Resolves every registered kernel's function on \p Device, one
  /// kernel at a time (the engine's lock is taken per kernel), until done
  /// or \p Stop is set: a runtime whose
  /// launches go direct to one GPU calls it on a thread of its own at
  /// start, so that a kernel's first launch does not pay for loading its
  /// code (CUDA loads a module's kernels lazily, 50-120 us each on one
  /// H200, bench/results/programs/*-a1f31ba-phases.log.gz), as the first
  /// launch of an nvcc build that warmed up does not.
  void preloadDirect(Location Device, const std::atomic<bool> &Stop);
  /// The model policy's ModelPartitioner::setMinSplitMs (tests of the policy's
  /// mechanics on null GPUs, whose launches take nanoseconds, set 0).
  void setMinSplitMs(double Ms);
  /// The model policy's shortest launch it splits: one predicted shorter on
  /// its best device runs there whole, unsearched. Read without the
  /// engine's lock (the direct launches' gate, Runtime::mayLaunchDirect).
  double minSplitMs() const { return MinSplitMs.load(std::memory_order_relaxed); }
  /// Transfer pipelining's switches (on by default).
  void setPipelining(const PipelineOptions &O);

private:
  /// launch() of a slice (CoRunSlices.cpp), \p Lock held.
  Result launchSlice(const KernelLaunchRequest &Req, LaunchPlan &Plan,
                     std::unique_lock<std::mutex> &Lock);
  struct Impl;
  BufferManager &Bufs;
  CpuExecutor &Exec;
  PartitionPolicy Policy;
  std::vector<double> SplitWeights;
  std::atomic<double> MinSplitMs;
  std::unique_ptr<Impl> I;
};

} // namespace rt
} // namespace cleave

#endif
