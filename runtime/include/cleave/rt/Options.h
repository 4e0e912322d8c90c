//===- Options.h - The runtime's settings, parsed once ----------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). Everything the environment can change
// in the runtime is one typed Options value, parsed once from the `CLEAVE_*`
// variables when the runtime starts (docs/runtime-api.md, "Environment")
// and handed down: the API layer's Runtime owns it and gives the engine,
// the devices, the buffer manager and the CPU executor what each needs.
// Nothing else in the runtime reads the environment, so a test sets
// options by building an Options value, and the parser itself is tested on
// a given environment (parseOptions) rather than the process's.
//
// User-facing settings have a variable each. Switches that exist to compare
// two implementations (A/B experiments) are keys of one variable,
// CLEAVE_TUNE=key=value,... (TuneOptions). A value the parser does not
// understand is reported once on stderr and the default is used; only the
// values that must not silently change a measurement or hide a typo
// (CLEAVE_SPLIT, CLEAVE_DEVICES, a named CLEAVE_CUDA_LIBRARY) stop the
// runtime's start instead, where they are checked against the devices.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_OPTIONS_H
#define CLEAVE_RT_OPTIONS_H

#include "cleave/rt/Buffers.h"
#include "cleave/rt/Engine.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cleave {
namespace rt {

/// CLEAVE_LOG: what the runtime prints on stderr.
struct LogOptions {
  /// Each launch's plan.
  bool Plan = false;
  /// Each range's measured time.
  bool Time = false;
  /// Each launch's host time per step (and its wait in the stream's queue).
  bool Phases = false;
  /// The device registry when the runtime starts.
  bool Devices = false;
  /// Every error an API call returns.
  bool Errors = false;
};

/// Who issues the GPU ranges of a split launch (IssuePool).
enum class IssueMode {
  /// Workers from three GPU ranges, when the host has cores for them.
  Auto,
  /// A worker thread per GPU, always.
  Parallel,
  /// The launching thread, one GPU after the other.
  Serial,
};

/// The co-scheduler (docs/coschedule.md).
enum class CoScheduleMode { Off, On, Always };

/// The co-scheduler's SM splits (green contexts, docs/coschedule.md): the
/// model chooses between a split and interleaved slices (Auto), never
/// splits (Off), or splits every modeled pair (Always, a measurement
/// control).
enum class GreenMode { Auto, Off, Always };

/// Transfer pipelining (docs/runtime.md, "Transfer pipelining").
enum class PipelineMode {
  /// Launches on one GPU that would upload their inputs whole first are
  /// pipelined.
  On,
  /// Never.
  Off,
  /// Measurement controls: the program's copies into buffers land in their
  /// host copies (no home device, no direct copies), so launches on one
  /// GPU find their inputs there, then pipelined (Host) or uploaded whole
  /// (HostSerial).
  Host,
  HostSerial,
};

/// The reorganization step (docs/reorganize.md): the model decides (On),
/// never (Off), or always for a kernel that has the variants (Force, a
/// measurement control).
enum class ReorganizeMode { On, Off, Force };

/// Routing a reorganized launch's sorted items over several devices
/// (docs/reorganize.md, "Routing"): the model decides (On), never (Off), or
/// over every eligible device (Force, a measurement and test control).
enum class RouteMode { On, Off, Force };

/// Which split the model policy keeps for a kernel of irregular work
/// (docs/reorganize.md): the faster prediction (Auto), or always SKMD's
/// greedy search's or the balancer's (measurement controls).
enum class BalanceMode { Auto, Greedy, Balancer };

/// CLEAVE_TUNE: the runtime's A/B switches, each measured against its
/// alternative (docs/runtime-api.md lists the keys and the measurements).
struct TuneOptions {
  /// spin_us: microseconds a thread polls before it sleeps at a hand-off
  /// (Spin.h); 0 sleeps at once.
  unsigned SpinUs = DefaultSpinUs;
  /// Whether spin_us was given; otherwise a wait for work already under
  /// way polls longer on a large host (busyWaitUs()).
  bool SpinUsGiven = false;
  /// issue: auto, parallel or serial.
  IssueMode Issue = IssueMode::Auto;
  /// defer: a repeated launch with work queued behind it returns once its
  /// GPU work is queued (docs/runtime.md, "Deferred completion").
  bool Defer = true;
  /// swap: a 2-D launch may run as its kernel's twin with x and y swapped.
  bool Swap = true;
  /// rebase: GPU ranges use the rebased variant when the kernel has one.
  bool Rebase = true;
  /// peer_copy: kernel (copies between GPUs up to 4 MiB by a copy kernel
  /// over the peer link) or dma (always the copy engines).
  bool PeerCopyKernels = true;
  /// host_copies: direct (large cudaMemcpy straight to and from the GPUs
  /// holding the bytes) or shadow (through the buffer's host copy).
  bool DirectHostCopies = true;
  /// pin_host: off, reused or always (BufferManager::setHostPinning).
  HostPinning PinHost = HostPinning::Reused;
  /// pipeline: on, off, host or host-serial.
  PipelineMode Pipeline = PipelineMode::On;
  /// coschedule: on, launches pending at once on several streams of a
  /// program run as slices paired by the co-scheduler (docs/coschedule.md),
  /// a launch alone only once launches of different streams have met;
  /// always, a launch alone is sliced too; off, each launch runs whole as
  /// it comes. Off by default: on the H200 (fde4062) co-scheduled slices
  /// ran 0.47-1.01x of the plain streams' throughput on every mix
  /// (bench/results/coschedule), with no co-run model inputs at run time.
  CoScheduleMode CoSchedule = CoScheduleMode::Off;
  /// green: auto, off or always (GreenMode).
  GreenMode Green = GreenMode::Auto;
  /// coratio=A:B: every modeled pair runs interleaved at the per-SM block
  /// ratio nearest A:B (the kernel first in name order gets A), whatever
  /// its predicted profit: a measurement control (bench/coschedule's
  /// oracle). 0:0, the model's ratio.
  unsigned CoRatio[2] = {0, 0};
  /// reorganize: on, off or force. Off by default: on the H200 (52a0fe4,
  /// bench/results/reorganize) `on` took option pricing's gain in a program
  /// of 100 launches (0.62x of off's time); launches of short kernels it
  /// left alone summed to 1.0-1.3x off's, all of it in each process's first
  /// launch, where the default (off's settings) was as slow
  /// (docs/reorganize.md).
  ReorganizeMode Reorganize = ReorganizeMode::Off;
  /// route: on, off or force. Acts only where the reorganization step
  /// runs.
  RouteMode Route = RouteMode::Off;
  /// balance: auto, greedy or balancer.
  BalanceMode Balance = BalanceMode::Auto;

  static constexpr unsigned DefaultSpinUs = 200;
  static constexpr unsigned MaxSpinUs = 100000;
  /// How long a wait for work already under way polls: spin_us when
  /// given; otherwise 20000 on a host of \p Cores >= 8, SpinUs below that.
  unsigned busyWaitUs(unsigned Cores) const;
};

/// Every setting of the runtime. A default-constructed Options is the
/// runtime's behaviour with no variable set (except CacheDir, which the
/// parser resolves from the home directory: empty here, no cache).
struct Options {
  /// CLEAVE_DEVICES, in DeviceRegistry::create's syntax ("": all).
  std::string Devices;
  /// CLEAVE_PARTITION, when set to a policy's name.
  std::optional<PartitionPolicy> Partition;
  /// CLEAVE_SPLIT's weights as given ("": unset); checked against the
  /// number of devices when the runtime starts (parseSplitWeights).
  std::string Split;
  LogOptions Log;
  /// CLEAVE_CPU_THREADS (0: the cores the process may use).
  unsigned CpuThreads = 0;
  /// CLEAVE_CUDA_LIBRARY ("": libcuda.so.1, and a machine without it runs
  /// on its CPU; a library named here must load).
  std::string CudaLibrary;
  /// CLEAVE_PROFILE: the device profile of the model policy ("": defaults).
  std::string ProfilePath;
  /// CLEAVE_KERNEL_PROFILE: a `cleave analyze --json` report whose
  /// measured counts are the co-scheduler's model inputs ("": the
  /// bundle's static estimate).
  std::string KernelProfilePath;
  /// The performance cache's folder: CLEAVE_CACHE_DIR, else
  /// $XDG_CACHE_HOME/cleave, else $HOME/.cache/cleave; "" (or
  /// CLEAVE_CACHE_DIR=off) for no cache.
  std::string CacheDir;
  /// CLEAVE_FAULT: fault injection rules (Fault.h), "" for none.
  std::string Fault;
  /// CLEAVE_CHECK=memory: CPU devices run checked variants (MemCheck.h).
  bool MemoryChecks = false;
  /// CLEAVE_ANALYZE_SM_COUNT (0: unset): the SM count reported to the
  /// program, set by `cleave analyze`.
  unsigned AnalyzeSmCount = 0;
  /// CLEAVE_INSTRUMENT_OUT, CLEAVE_INSTRUMENT_BLOCKS: the CPU recorder's
  /// record file ("": off) and blocks sampled per launch (Instrument.h).
  std::string InstrumentOut;
  unsigned InstrumentBlocks = 3;
  TuneOptions Tune;
};

/// What the device registry takes from \p O: its CUDA library (which must
/// load when named), the CPU devices' threads, how peers copy.
RegistryOptions registryOptions(const Options &O);

/// The environment as the parser sees it: the value of a variable, or null
/// when it is unset.
using EnvLookup = std::function<const char *(const char *Name)>;

/// Parses the runtime's variables from \p Env. Each value it cannot use
/// adds one line to \p Warnings (`cleave: warning: CLEAVE_LOG: unknown word
/// 'foo' (known: ...)`; a word repeated is reported once) and leaves that
/// setting at its default. \p Cores is the default of CLEAVE_CPU_THREADS,
/// named in its message.
Options parseOptions(const EnvLookup &Env, std::vector<std::string> &Warnings,
                     unsigned Cores);

/// The process's options: parseOptions over the process environment, run
/// once, its warnings printed on stderr then.
const Options &processOptions();

} // namespace rt
} // namespace cleave

#endif // CLEAVE_RT_OPTIONS_H
