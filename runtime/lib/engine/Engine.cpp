//===- Engine.cpp - Registered programs and split launches ----------------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/Engine.h and
// docs/runtime.md ("The launch engine").
//
// A launch goes through these steps, under the engine's lock:
//
//   1. the request is checked and its pointer arguments resolved;
//   2. the block ranges are chosen (the request's, else the policy's);
//   3. decide(): split with exact writes, split with merges on one device M,
//      or the whole grid on one device (and why);
//   4. attempt(): prepare every run (GPU module, functions, variables,
//      replicas, input transfers, partial buffers on M), issue every run
//      (M's first), run the CPU ranges, wait for the GPUs, merge, and mark
//      what was written.
//
// A device that fails while being prepared is dropped and the attempt starts
// again with its ranges on another device (nothing was written yet). One that
// fails when its launch is issued or while it runs has its ranges re-run: on
// M in place when merging, else on another device after the rest committed.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Engine.h"

#include "IssuePool.h"
#include "LaunchSupport.h"

#include "cleave/rt/Fault.h"
#include "cleave/rt/Footprint.h"
#include "cleave/rt/PartitionParams.h"
#include "cleave/rt/Planner.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <thread>

namespace cleave {
namespace rt {

//===----------------------------------------------------------------------===//
// Programs
//===----------------------------------------------------------------------===//

class Program {
public:
  Bundle B;
  std::map<std::string, void *> Syms;
  /// One per B.Kernels entry; never resized after addProgram.
  std::vector<KernelHandle> Kernels;
  std::vector<std::unique_ptr<FootprintProgram>> Footprints;
  std::vector<std::string> FootprintErrors;

  /// A `__device__`/`__constant__` variable: the host value the API wrote
  /// or read, the CPU copy (shared by every CPU device), and which copies
  /// hold the current value. At first every device copy holds its
  /// initializer, which is current.
  struct Var {
    std::vector<char> Host;
    bool HostValid = false;
    void *Cpu = nullptr;
    bool CpuValid = true;
    std::vector<bool> DevValid; ///< per device index (GPUs)
  };
  std::vector<Var> Vars;

  /// The program's module on one GPU, loaded on first use.
  struct Gpu {
    bool Loaded = false;
    ModuleHandle M = nullptr;
    std::map<std::string, FunctionHandle> Fns;
  };
  std::map<Location, Gpu> Gpus;
};

using namespace launch;

namespace {

/// The hull [lo, hi) of a set, empty for an empty set.
ByteRange hull(const RangeSet &S) {
  std::vector<ByteRange> R = S.ranges();
  if (R.empty())
    return {};
  return {R.front().Lo, R.back().Hi};
}

/// CLEAVE_DEFER=off: every launch waits for its GPUs before it returns.
bool deferralOff() {
  static const bool Off = [] {
    const char *V = std::getenv("CLEAVE_DEFER");
    return V && (std::strcmp(V, "off") == 0 || std::strcmp(V, "0") == 0);
  }();
  return Off;
}

bool envHas(const char *Var, const char *Word) {
  const char *V = std::getenv(Var);
  if (!V)
    return false;
  std::string S = V;
  size_t N = std::strlen(Word);
  for (size_t P = S.find(Word); P != std::string::npos; P = S.find(Word, P + 1))
    if ((P == 0 || S[P - 1] == ',') && (P + N == S.size() || S[P + N] == ','))
      return true;
  return S == "all";
}

/// The launch's arguments as the footprint evaluator takes them: integer
/// parameters sign-extended, 0 for the others.
std::vector<int64_t> integerArgs(const BundleKernel &Info, void *const *Args) {
  std::vector<int64_t> Out(Info.Params.size(), 0);
  for (size_t A = 0; A < Out.size(); ++A) {
    const BundleParam &BP = Info.Params[A];
    if (BP.Kind != ParamKind::Scalar || !Args || !Args[A])
      continue;
    switch (BP.Size) {
    case 1: { int8_t X; std::memcpy(&X, Args[A], 1); Out[A] = X; break; }
    case 2: { int16_t X; std::memcpy(&X, Args[A], 2); Out[A] = X; break; }
    case 4: { int32_t X; std::memcpy(&X, Args[A], 4); Out[A] = X; break; }
    case 8: { int64_t X; std::memcpy(&X, Args[A], 8); Out[A] = X; break; }
    default: break;
    }
  }
  return Out;
}

} // namespace

bool parsePartitionPolicy(std::string_view Text, PartitionPolicy &Out) {
  if (Text == "even")
    Out = PartitionPolicy::Even;
  else if (Text == "proportional")
    Out = PartitionPolicy::Proportional;
  else if (Text == "single")
    Out = PartitionPolicy::SingleDevice;
  else if (Text == "model")
    Out = PartitionPolicy::Model;
  else
    return false;
  return true;
}

bool parseSplitWeights(std::string_view Text, size_t NumDevices,
                       std::vector<double> &Out, std::string &Why) {
  Out.clear();
  std::string S(Text);
  size_t Pos = 0;
  while (true) {
    size_t End = S.find(',', Pos);
    std::string Item =
        S.substr(Pos, End == std::string::npos ? std::string::npos : End - Pos);
    size_t B = Item.find_first_not_of(" \t"), E = Item.find_last_not_of(" \t");
    Item = B == std::string::npos ? std::string() : Item.substr(B, E - B + 1);
    char *Stop = nullptr;
    double W = Item.empty() ? 0 : std::strtod(Item.c_str(), &Stop);
    if (Item.empty() || *Stop || !std::isfinite(W) || W < 0) {
      Why = "weight " + std::to_string(Out.size()) + " ('" + Item +
            "') is not a finite number >= 0";
      return false;
    }
    Out.push_back(W);
    if (End == std::string::npos)
      break;
    Pos = End + 1;
  }
  if (Out.size() != NumDevices) {
    Why = std::to_string(Out.size()) + " weight(s) for " +
          std::to_string(NumDevices) +
          " selected device(s) (CLEAVE_DEVICES): one per device expected";
    return false;
  }
  bool Any = false;
  for (double W : Out)
    Any |= W > 0;
  if (!Any) {
    Why = "every weight is 0";
    return false;
  }
  return true;
}

namespace {

/// The model policy's state: the planner (made at the first launch that
/// uses it, with the device profile of CLEAVE_PROFILE and the cache file of
/// this profile and device set) and the events that time GPU ranges.
struct ModelState {
  std::unique_ptr<Planner> P;
  /// Per GPU, events reused by every launch (two per range).
  std::map<Location, std::vector<EventHandle>> Events;
  /// (device, table key) pairs timed once: the first range of a kernel on
  /// a GPU pays for loading its code (lazy module loading happens inside
  /// the first launch, between the events), so it is not recorded.
  std::set<std::pair<Location, std::string>> Warm;
  /// The split's host bookkeeping estimate (PlanRequest::SplitMs) per
  /// table key, grid and scalar arguments: evaluated once.
  std::map<std::string, double> SplitMs;
  /// Per kernel: its table name (a hash of the program's source and the
  /// kernel's footprints).
  std::map<const void *, std::string> TableNames;
  /// The last decision per launch shape (table key, which has the grid's
  /// size class; buffers; device set; LaunchContext::planModel), run again
  /// without a new decision until NextPlan launches (docs/partitioner.md,
  /// "Cached decisions").
  struct CachedPlan {
    std::vector<PartitionRange> Ranges;
    /// The grid's blocks when Ranges were decided.
    uint64_t Total = 0;
    std::map<Location, PlanDevice> Devs;
    uint64_t Launches = 0;
    uint64_t NextPlan = 0;
    /// The launch (1, 2, ...) whose search made Ranges.
    uint64_t PlannedAt = 0;
    /// A search found inputs staged in the host copy (Buffer::stagedBytes):
    /// from the next one on, they are uploads that recur and are charged.
    bool SawStaged = false;
    /// The launches before the last search, and its buffers' counts of
    /// the program's copies into and out of them then (per pointer
    /// argument, Buffer::programWrites, programReads).
    uint64_t LaunchesAtSearch = 0;
    std::vector<uint64_t> WritesAtSearch, ReadsAtSearch;
    /// Launches per upload and per read-back of the key's buffers, as
    /// counted between its last two searches that saw any: the program's
    /// copies are charged once per as many launches (1 until counted).
    double InPeriod = 1, OutPeriod = 1;
    /// The last search counted at least QuietLaunches launches since the
    /// one before without any of the program's copies into or out of the
    /// key's buffers. Kept launches then watch for copies (CopiesSeen, the
    /// buffers' count at the last launch; CopiedBefore, the last launch
    /// that copies preceded): copies before two launches in a row end the
    /// quiet stretch, and the second searches at once.
    bool Quiet = false;
    uint64_t CopiesSeen = 0;
    uint64_t CopiedBefore = ~uint64_t(0);
  };
  std::map<std::string, CachedPlan> Plans;
  static constexpr size_t MaxCachedPlans = 4096;

  Planner &planner(BufferManager &Bufs);
  /// Says which profile and cache the model uses (CLEAVE_LOG=plan), once,
  /// at the first decision.
  void announce();
  bool Announced = false;
  /// Event \p Index of GPU \p L, created on first use; null if that fails.
  EventHandle event(BufferManager &Bufs, Location L, size_t Index);
  void release(BufferManager &Bufs);
};

Planner &ModelState::planner(BufferManager &Bufs) {
  if (P)
    return *P;
  DeviceProfile Profile;
  std::string Note;
  if (const char *Path = std::getenv("CLEAVE_PROFILE"); Path && *Path) {
    Result R = loadDeviceProfile(Path, Profile);
    if (!R.ok()) {
      std::fprintf(stderr, "cleave: CLEAVE_PROFILE: %s; using defaults\n",
                   R.message().c_str());
      Profile = DeviceProfile();
    }
  }
  std::vector<std::string> Ids;
  for (size_t L = 0; L < Bufs.numDevices(); ++L)
    Ids.push_back(Bufs.device(Location(L)).name() + " " +
                  Bufs.device(Location(L)).properties().Description);
  std::string File = perfCacheFile(perfCacheDirectory(), Profile, Ids);
  P = std::make_unique<Planner>(std::move(Profile), std::move(File));
  return *P;
}

void ModelState::announce() {
  if (Announced || !P)
    return;
  Announced = true;
  if (envHas("CLEAVE_LOG", "plan")) {
    std::string S = "cleave: model policy: device profile " +
                    P->profile().Source;
    if (!P->profile().FromFile)
      S += " (no CLEAVE_PROFILE: conservative defaults from the device "
           "attributes, docs/partitioner.md)";
    S += "; performance cache " +
         (P->cacheFile().empty() ? std::string("off") : P->cacheFile()) +
         "\n";
    std::fputs(S.c_str(), stderr);
  }
}

EventHandle ModelState::event(BufferManager &Bufs, Location L, size_t Index) {
  std::vector<EventHandle> &E = Events[L];
  while (E.size() <= Index) {
    EventHandle H = nullptr;
    if (!Bufs.device(L).createEvent(H).ok())
      return nullptr;
    E.push_back(H);
  }
  return E[Index];
}

void ModelState::release(BufferManager &Bufs) {
  for (auto &[L, E] : Events)
    for (EventHandle H : E)
      (void)Bufs.device(L).destroyEvent(H);
  Events.clear();
  P.reset();
}

/// Memory for the partial results of combined outputs (docs/runtime.md,
/// "Combined outputs"), per device: an area of device memory that the
/// device's blocks update instead of the buffer, and host memory (pinned on
/// a GPU) that the partial comes back to. Kept between launches, grown as
/// needed: allocating either costs more than a histogram's whole launch.
struct CombineScratch {
  struct Slot {
    DeviceAddr Dev = 0;
    uint64_t DevBytes = 0;
    void *Host = nullptr;
    uint64_t HostBytes = 0;
  };
  /// Per device, one slot per run it has in a launch.
  std::map<std::pair<Location, unsigned>, Slot> Slots;

  /// Slot \p Index of location \p L with at least \p Bytes of each.
  Result get(BufferManager &Bufs, Location L, unsigned Index, uint64_t Bytes,
             Slot *&Out) {
    Slot &S = Slots[{L, Index}];
    Device &D = Bufs.device(L);
    if (S.DevBytes < Bytes) {
      if (S.DevBytes)
        (void)D.free(S.Dev);
      S.Dev = 0;
      S.DevBytes = 0;
      Result R = D.allocate(Bytes, S.Dev);
      if (!R.ok())
        return R;
      S.DevBytes = Bytes;
    }
    if (S.HostBytes < Bytes) {
      if (S.Host)
        (void)D.freeHost(S.Host);
      S.Host = nullptr;
      S.HostBytes = 0;
      Result R = D.allocateHost(Bytes, S.Host);
      if (!R.ok())
        return R;
      S.HostBytes = Bytes;
    }
    Out = &S;
    return Result::success();
  }

  void release(BufferManager &Bufs) {
    for (auto &[Key, S] : Slots) {
      if (S.DevBytes)
        (void)Bufs.device(Key.first).free(S.Dev);
      if (S.Host)
        (void)Bufs.device(Key.first).freeHost(S.Host);
    }
    Slots.clear();
  }
};

/// The byte whose repetition is \p Op's identity.
uint8_t identityByte(CombineOp Op) {
  return Op == CombineOp::And || Op == CombineOp::UMin ? 0xff : 0x00;
}

template <class T> T combineValues(CombineOp Op, T A, T B) {
  switch (Op) {
  case CombineOp::Add:
    return T(A + B); // wraps, as the device's atomics do
  case CombineOp::And:
    return A & B;
  case CombineOp::Or:
    return A | B;
  case CombineOp::Xor:
    return A ^ B;
  case CombineOp::UMin:
    return std::min(A, B);
  case CombineOp::UMax:
    return std::max(A, B);
  }
  return A;
}

/// Dst[i] = Dst[i] op Src[i] over \p Bytes bytes of elements of type T.
template <class T>
void combineInto(CombineOp Op, char *Dst, const char *Src, uint64_t Bytes) {
  for (uint64_t I = 0; I + sizeof(T) <= Bytes; I += sizeof(T)) {
    T A, B;
    std::memcpy(&A, Dst + I, sizeof(T));
    std::memcpy(&B, Src + I, sizeof(T));
    A = combineValues(Op, A, B);
    std::memcpy(Dst + I, &A, sizeof(T));
  }
}

} // namespace

namespace {

/// The last launch of a kernel, kept when it changed no buffer's state
/// (docs/runtime.md, "Repeated launches"): the same request, finding the
/// buffers as that launch left them (BufferManager::stateChanges()) and
/// given the same ranges, moves nothing and changes nothing either, so it
/// runs the kept runs without evaluating footprints, planning copies or
/// marking writes again.
struct RepeatMemo {
  /// The request: everything the launch's decisions depend on.
  uint32_t Grid[3] = {0, 0, 0}, Block[3] = {0, 0, 0};
  uint64_t SharedBytes = 0;
  std::vector<char> Args;
  std::vector<PartitionRange> Partition;
  std::vector<double> Weights;
  PartitionPolicy Policy = PartitionPolicy::Proportional;
  bool SwapOff = false;
  /// The kernel it ran as (the request's, or its twin).
  const KernelHandle *Ran = nullptr;
  /// stateChanges() after it.
  uint64_t Changes = 0;
  /// The ranges the policy gave, and the runs decide() made of them.
  std::vector<PartitionRange> Given;
  struct Run {
    Location Dev = 0;
    uint64_t First = 0, Count = 0;
    size_t PlanIndex = 0;
    /// Per parameter: the device address of a pointer argument, else null.
    std::vector<void *> Values;
    RangeUse Uses;
  };
  std::vector<Run> Runs;
  bool Whole = false; ///< decide() refused the split (Mode::Whole)
  LaunchPlan Plan;
  /// A launch that changed its buffers' state, kept to be replayed: the
  /// state of each of its buffers (by id) as it found them. A launch that
  /// finds them so again decides the same runs and copies, and makes the
  /// copies in Plan without planning them (LaunchContext::attempt).
  bool Replay = false;
  struct Found {
    uint64_t Id = 0;
    std::weak_ptr<Buffer> Buf;
    Buffer::State State;
  };
  std::vector<Found> Before;

  /// Whether every buffer of the kept launch is live and as it found it.
  bool buffersAsFound() const {
    for (const Found &F : Before) {
      std::shared_ptr<Buffer> B = F.Buf.lock();
      if (!B || !B->inState(F.State))
        return false;
    }
    return true;
  }
  bool sameStart(const RepeatMemo &O) const {
    if (Before.size() != O.Before.size())
      return false;
    for (size_t I = 0; I < Before.size(); ++I)
      if (Before[I].Id != O.Before[I].Id ||
          !(Before[I].State == O.Before[I].State))
        return false;
    return true;
  }
};

/// The bytes of the request's arguments (pointers as their value).
std::vector<char> argumentBytes(const BundleKernel &Info, void *const *Args) {
  std::vector<char> Out;
  if (!Args)
    return Out;
  for (size_t A = 0; A < Info.Params.size(); ++A) {
    size_t N = Info.Params[A].Kind == ParamKind::Pointer
                   ? sizeof(void *)
                   : Info.Params[A].Size;
    if (!Args[A])
      return {};
    const char *P = static_cast<const char *>(Args[A]);
    Out.insert(Out.end(), P, P + N);
  }
  return Out;
}

bool sameRanges(const std::vector<PartitionRange> &A,
                const std::vector<PartitionRange> &B) {
  if (A.size() != B.size())
    return false;
  for (size_t I = 0; I < A.size(); ++I)
    if (A[I].Device != B[I].Device || A[I].First != B[I].First ||
        A[I].Count != B[I].Count)
      return false;
  return true;
}

bool sameRequest(const RepeatMemo &M, const KernelLaunchRequest &Req,
                 const std::vector<char> &Args, PartitionPolicy Policy,
                 bool SwapOff) {
  for (int D = 0; D < 3; ++D)
    if (M.Grid[D] != Req.Grid[D] || M.Block[D] != Req.Block[D])
      return false;
  return M.SharedBytes == Req.DynamicSharedBytes && M.Args == Args &&
         M.Policy == Policy && M.SwapOff == SwapOff &&
         M.Weights == Req.Weights && sameRanges(M.Partition, Req.Partition);
}

} // namespace

struct Engine::Impl {
  std::mutex Mutex;
  std::vector<std::unique_ptr<Program>> Programs;
  /// Per requested kernel, its last launch if that changed nothing.
  std::map<const KernelHandle *, RepeatMemo> Repeats;
  /// Per requested kernel, its last launches (one per request and state
  /// found, the most recent last, at most MaxReplays) that changed their
  /// buffers' state, to replay from the same state (RepeatMemo::Replay):
  /// the steps of an iteration that swaps its buffers, for instance.
  std::map<const KernelHandle *, std::vector<RepeatMemo>> Replays;
  static constexpr size_t MaxReplays = 8;
  ModelState Model;
  CombineScratch Scratch;
  /// Last, so its threads stop before anything they could touch goes.
  IssuePool Pool;
};

Engine::Engine(BufferManager &Bufs, CpuExecutor &Exec, PartitionPolicy Policy)
    : Bufs(Bufs), Exec(Exec), Policy(Policy), I(std::make_unique<Impl>()) {}

void Engine::prepare() {
  std::lock_guard<std::mutex> Lock(I->Mutex);
  if (Policy == PartitionPolicy::Model)
    (void)I->Model.planner(Bufs);
}

void Engine::setMinSplitMs(double Ms) {
  std::lock_guard<std::mutex> Lock(I->Mutex);
  I->Model.planner(Bufs).setMinSplitMs(Ms);
}

Result Engine::flushPerformanceCache() {
  std::lock_guard<std::mutex> Lock(I->Mutex);
  return I->Model.P ? I->Model.P->flush() : Result::success();
}

Engine::~Engine() {
  I->Model.release(Bufs);
  I->Scratch.release(Bufs);
  for (auto &P : I->Programs)
    for (auto &[L, G] : P->Gpus)
      if (G.Loaded && G.M)
        (void)Bufs.device(L).unloadModule(G.M);
}

namespace {
Result gpuModule(BufferManager &Bufs, Program &P, Location L,
                 Program::Gpu *&Out);
} // namespace

Result Engine::addProgram(const void *BundleData, size_t BundleSize,
                          std::map<std::string, void *> CpuSymbols) {
  auto P = std::make_unique<Program>();
  BundleStatus S = Bundle::parse(BundleData, BundleSize, P->B);
  if (!S)
    return Result::error(ErrorCode::InvalidKernelImage,
                         "bundle refused (" +
                             std::string(getBundleErrcName(S.Code)) +
                             "): " + S.Message);
  P->Syms = std::move(CpuSymbols);
  auto Sym = [&](const std::string &Name) -> void * {
    auto It = P->Syms.find(Name);
    return It == P->Syms.end() ? nullptr : It->second;
  };
  P->Kernels.resize(P->B.Kernels.size());
  P->Footprints.resize(P->B.Kernels.size());
  P->FootprintErrors.resize(P->B.Kernels.size());
  for (size_t K = 0; K < P->B.Kernels.size(); ++K) {
    const BundleKernel &BK = P->B.Kernels[K];
    KernelHandle &H = P->Kernels[K];
    H.Prog = P.get();
    H.Info = &BK;
    const BundleVariant &Cpu = BK.variant(VariantKind::CPU);
    if (Cpu.Present)
      if (void *D = Sym(Cpu.Entry + "_desc")) {
        auto *Desc = static_cast<const cleave_cpu_kernel_desc *>(D);
        if (Desc->fn && Desc->num_params == BK.Params.size())
          H.Cpu = Desc;
      }
    const BundleVariant &Merge = BK.variant(VariantKind::Merge);
    if (Merge.Present)
      if (void *D = Sym("__cleave_cpu_" + Merge.Entry + "_desc")) {
        auto *Desc = static_cast<const cleave_cpu_kernel_desc *>(D);
        if (Desc->fn && Desc->num_params == BK.Params.size() +
                                                BK.MergeOutputs.size() +
                                                NumPartitionParams)
          H.CpuMerge = Desc;
      }
    auto F = std::make_unique<FootprintProgram>();
    Status FS = FootprintProgram::parse(BK.Footprints, *F);
    if (FS && F->numArgs() == BK.Params.size())
      P->Footprints[K] = std::move(F);
    else
      P->FootprintErrors[K] =
          FS ? "its footprints describe another parameter count"
             : "its footprints do not parse: " + FS.Message;
  }
  // Twins with x and y swapped, by name (lib/Transforms/SwapGrid.cpp).
  for (KernelHandle &H : P->Kernels)
    for (const KernelHandle &T : P->Kernels)
      if (T.Info->Name == "__cleave_sw_" + H.Info->Name)
        H.Swapped = &T;
  for (const BundleVariable &V : P->B.Variables) {
    Program::Var PV;
    PV.Host.assign(V.Size, 0);
    PV.DevValid.assign(Bufs.numDevices(), true);
    if (!V.CpuSymbol.empty())
      PV.Cpu = Sym(V.CpuSymbol);
    P->Vars.push_back(std::move(PV));
  }
  std::lock_guard<std::mutex> Lock(I->Mutex);
  // The GPUs' modules now, at registration, not in a program's first
  // launch of each kernel (0.2-0.4 ms of host time on one H200, most of a
  // short program's timed work; bench/results/programs/). A module that
  // does not load is loaded, and its error reported, at the launch.
  for (size_t L = 0; L < Bufs.numDevices(); ++L)
    if (!Bufs.device(Location(L)).properties().SharesHostMemory) {
      Program::Gpu *G = nullptr;
      (void)gpuModule(Bufs, *P, Location(L), G);
    }
  I->Programs.push_back(std::move(P));
  return Result::success();
}

const KernelHandle *Engine::findKernel(std::string_view Name) const {
  std::lock_guard<std::mutex> Lock(I->Mutex);
  for (auto &P : I->Programs)
    for (const KernelHandle &H : P->Kernels)
      if (H.Info->Name == Name)
        return &H;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Variables
//===----------------------------------------------------------------------===//

namespace {

/// The module of \p P on GPU \p L, loaded on first use.
Result gpuModule(BufferManager &Bufs, Program &P, Location L,
                 Program::Gpu *&Out) {
  // Issue workers look modules up at once for different GPUs: the map
  // changes only on a GPU's first use, which the launching thread makes
  // before it hands a range to a worker (attempt(), phase 2).
  auto Found = P.Gpus.find(L);
  Program::Gpu &G = Found != P.Gpus.end() ? Found->second : P.Gpus[L];
  if (!G.Loaded) {
    Result R = Bufs.device(L).loadModule(P.B, G.M);
    if (!R.ok())
      return R;
    G.Loaded = true;
  }
  Out = &G;
  return Result::success();
}

Result gpuFunction(BufferManager &Bufs, Program &P, Location L,
                   const std::string &Entry, FunctionHandle &Out) {
  Program::Gpu *G = nullptr;
  Result R = gpuModule(Bufs, P, L, G);
  if (!R.ok())
    return R;
  auto It = G->Fns.find(Entry);
  if (It != G->Fns.end()) {
    Out = It->second;
    return Result::success();
  }
  R = Bufs.device(L).getFunction(G->M, Entry, Out);
  if (R.ok())
    G->Fns[Entry] = Out;
  return R;
}

Result gpuGlobal(BufferManager &Bufs, Program &P, Location L, size_t V,
                 DeviceAddr &Addr) {
  Program::Gpu *G = nullptr;
  Result R = gpuModule(Bufs, P, L, G);
  if (!R.ok())
    return R;
  uint64_t Bytes = 0;
  R = Bufs.device(L).getGlobal(G->M, P.B.Variables[V].Name, Addr, Bytes);
  if (R.ok() && Bytes < P.B.Variables[V].Size)
    return Result::error(ErrorCode::InvalidKernelImage,
                         "variable " + P.B.Variables[V].Name + " has " +
                             std::to_string(Bytes) + " bytes on " +
                             Bufs.device(L).name() + ", the bundle says " +
                             std::to_string(P.B.Variables[V].Size));
  return R;
}

/// Makes the host value of variable \p V current.
Result fetchVariable(BufferManager &Bufs, Program &P, size_t V) {
  Program::Var &Var = P.Vars[V];
  if (Var.HostValid || Var.Host.empty())
    return Result::success();
  // A deferred launch may still read the device copy it comes from.
  if (Result S = Bufs.settle(); !S.ok())
    return S;
  if (Var.Cpu && Var.CpuValid) {
    std::memcpy(Var.Host.data(), Var.Cpu, Var.Host.size());
    Var.HostValid = true;
    return Result::success();
  }
  Result Last = Result::error(ErrorCode::InvalidValue,
                              "no device holds variable " +
                                  P.B.Variables[V].Name);
  for (size_t L = 0; L < Bufs.numDevices(); ++L) {
    if (!Var.DevValid[L] || Bufs.device(L).kind() != DeviceKind::Cuda)
      continue;
    DeviceAddr A = 0;
    Result R = gpuGlobal(Bufs, P, Location(L), V, A);
    if (R.ok())
      R = Bufs.device(L).copyDeviceToHost(Var.Host.data(), A,
                                          Var.Host.size());
    if (R.ok()) {
      Var.HostValid = true;
      return R;
    }
    Last = R;
  }
  return Last;
}

/// Makes variable \p V current on device \p L before a kernel runs there.
Result syncVariableTo(BufferManager &Bufs, Program &P, size_t V, Location L) {
  Program::Var &Var = P.Vars[V];
  Device &D = Bufs.device(L);
  if (D.kind() == DeviceKind::Cpu) {
    if (Var.CpuValid)
      return Result::success();
    if (!Var.Cpu)
      return Result::error(ErrorCode::NotSupported,
                           "variable " + P.B.Variables[V].Name +
                               " has no CPU copy");
    Result R = fetchVariable(Bufs, P, V);
    if (!R.ok())
      return R;
    std::memcpy(Var.Cpu, Var.Host.data(), Var.Host.size());
    Var.CpuValid = true;
    return Result::success();
  }
  if (Var.DevValid[L])
    return Result::success();
  Result R = fetchVariable(Bufs, P, V);
  DeviceAddr A = 0;
  if (R.ok())
    R = gpuGlobal(Bufs, P, L, V, A);
  if (R.ok())
    R = D.copyHostToDevice(A, Var.Host.data(), Var.Host.size());
  if (R.ok())
    Var.DevValid[L] = true;
  return R;
}

/// Variable \p V was written by a kernel on \p L: that copy alone is
/// current.
void variableWritten(BufferManager &Bufs, Program &P, size_t V, Location L) {
  Program::Var &Var = P.Vars[V];
  bool OnCpu = Bufs.device(L).kind() == DeviceKind::Cpu;
  Var.HostValid = false;
  Var.CpuValid = OnCpu;
  for (size_t D = 0; D < Var.DevValid.size(); ++D)
    Var.DevValid[D] = !OnCpu && Location(D) == L;
}

} // namespace

Result Engine::originalFunction(const KernelHandle &K, size_t Device,
                                FunctionHandle &Out) {
  std::lock_guard<std::mutex> Lock(I->Mutex);
  for (auto &P : I->Programs)
    if (P.get() == K.Prog)
      return gpuFunction(Bufs, *P, Location(Device),
                         K.Info->variant(VariantKind::Original).Entry, Out);
  return invalid("the kernel is not one of this engine's programs");
}

const Bundle *Engine::bundleOf(const KernelHandle &K) const {
  std::lock_guard<std::mutex> Lock(I->Mutex);
  for (auto &P : I->Programs)
    if (P.get() == K.Prog)
      return &P->B;
  return nullptr;
}

namespace {

Result noSuchSymbol(std::string_view Name) {
  return invalid("no __device__ or __constant__ variable " +
                 std::string(Name) + " in any registered program");
}

/// The variable called \p Name and whether [Offset, Offset + Bytes) lies in
/// it; \p What names the copy for messages ("to symbol", "from symbol").
Result findVariable(std::vector<std::unique_ptr<Program>> &Programs,
                    std::string_view Name, uint64_t Offset, uint64_t Bytes,
                    const char *What, Program *&P, size_t &V) {
  for (auto &Prog : Programs)
    for (size_t I = 0; I < Prog->B.Variables.size(); ++I) {
      if (Prog->B.Variables[I].Name != Name)
        continue;
      uint64_t Size = Prog->B.Variables[I].Size;
      if (Offset > Size || Bytes > Size - Offset)
        return invalid("copy of " + std::to_string(Bytes) +
                       " bytes at offset " + std::to_string(Offset) + " " +
                       What + " " + std::string(Name) + " of " +
                       std::to_string(Size) + " bytes");
      P = Prog.get();
      V = I;
      return Result::success();
    }
  return noSuchSymbol(Name);
}

} // namespace

Result Engine::copyToSymbol(std::string_view Name, uint64_t Offset,
                            const void *Src, uint64_t Bytes) {
  std::lock_guard<std::mutex> Lock(I->Mutex);
  Program *P = nullptr;
  size_t V = 0;
  Result R = findVariable(I->Programs, Name, Offset, Bytes, "to symbol", P, V);
  if (!R.ok() || Bytes == 0)
    return R;
  if (!Src)
    return invalid("null source for symbol " + std::string(Name));
  Program::Var &Var = P->Vars[V];
  if (Bytes != P->B.Variables[V].Size) { // the rest must be current
    R = fetchVariable(Bufs, *P, V);
    if (!R.ok())
      return R;
  }
  std::memcpy(Var.Host.data() + Offset, Src, Bytes);
  Var.HostValid = true;
  Var.CpuValid = false;
  std::fill(Var.DevValid.begin(), Var.DevValid.end(), false);
  return Result::success();
}

Result Engine::copyFromSymbol(std::string_view Name, uint64_t Offset,
                              void *Dst, uint64_t Bytes) {
  std::lock_guard<std::mutex> Lock(I->Mutex);
  Program *P = nullptr;
  size_t V = 0;
  Result R =
      findVariable(I->Programs, Name, Offset, Bytes, "from symbol", P, V);
  if (!R.ok() || Bytes == 0)
    return R;
  if (!Dst)
    return invalid("null destination for symbol " + std::string(Name));
  R = fetchVariable(Bufs, *P, V);
  if (!R.ok())
    return R;
  std::memcpy(Dst, P->Vars[V].Host.data() + Offset, Bytes);
  return Result::success();
}

Result Engine::symbolSize(std::string_view Name, uint64_t &Bytes) const {
  std::lock_guard<std::mutex> Lock(I->Mutex);
  for (auto &P : I->Programs)
    for (const BundleVariable &V : P->B.Variables)
      if (V.Name == Name) {
        Bytes = V.Size;
        return Result::success();
      }
  Bytes = 0;
  return noSuchSymbol(Name);
}

//===----------------------------------------------------------------------===//
// Launch
//===----------------------------------------------------------------------===//

namespace {

enum class Mode { Whole, Exact, Merge };

/// One range of blocks on one device, with its footprints.
struct RunState {
  Location Dev = 0;
  uint64_t First = 0;
  uint64_t Count = 0;
  RangeUse Uses;
  /// Ranges (per buffer) that must be valid on Dev before the run besides
  /// its reads: non-exact write bounds, and everything written on M.
  std::map<uint64_t, RangeSet> MustHold;
  bool Failed = false;
  bool Issued = false;
  size_t PlanIndex = 0;
  /// Argument storage for an asynchronous GPU launch.
  std::vector<void *> Values;
  std::vector<void *> ArgPtrs;
  std::vector<uint32_t> PartParams;
  /// Partial buffers on M (merge mode, non-M runs): buffer id -> (M's
  /// allocation, hull of this run's writes).
  std::map<uint64_t, std::pair<DeviceAddr, ByteRange>> Partials;
  /// The model policy's timing of a GPU range: events recorded around its
  /// launch on the compute stream.
  EventHandle TimeStart = nullptr, TimeEnd = nullptr;
  /// Issued and waited for by an IssuePool worker: the two results and the
  /// range's time (negative: not timed).
  bool Pooled = false;
  /// Issued without being waited for (LaunchContext::Defer).
  bool Deferred = false;
  Result PoolIssue, PoolWait;
  float PoolMs = -1;
  /// Between stage() and finish(): the run's entry of the plan, and the
  /// copies (per buffer id) that make its inputs valid, not yet run.
  LaunchPlan::Run PlanRun;
  std::vector<std::pair<uint64_t, std::vector<Transfer>>> MoveIn;
  /// Copies from other GPUs queued on Dev's compute stream ahead of its
  /// kernel (moveIn), per buffer id, until settlePulls() sees them land.
  std::vector<std::pair<uint64_t, Transfer>> Pulled;
  /// CLEAVE_LOG=phases: the time spent queueing them.
  double PullUs = 0;
  /// Combined outputs: the device's scratch, which its blocks update
  /// instead of the buffers (LaunchContext::Combines gives the layout).
  CombineScratch::Slot *Scratch = nullptr;
  /// A run of a repeated launch: its footprints are the kept launch's,
  /// taken into Uses only if something fails (usesOf()).
  const RangeUse *Repeat = nullptr;
};

/// The footprints of \p R.
const RangeUse &usesOf(const RunState &R) {
  return R.Repeat && R.Uses.empty() ? *R.Repeat : R.Uses;
}

/// A device failure to recover from.
struct Failure {
  Location Dev = 0;
  Result Err;
};

class LaunchContext {
public:
  LaunchContext(BufferManager &Bufs, CpuExecutor &Exec, Program &Prog,
                const KernelHandle &K, const KernelLaunchRequest &Req,
                LaunchPlan &Plan, PartitionPolicy Policy, ModelState &Model,
                IssuePool &Pool, CombineScratch &Scratch,
                const RepeatMemo *Memo)
      : Bufs(Bufs), Exec(Exec), Prog(Prog), K(K), Info(*K.Info), Req(Req),
        Plan(Plan), Policy(Policy), Model(Model), Pool(Pool),
        Scratch(Scratch), Memo(Memo) {}

  Result run();
  /// After run(): whether it repeated Memo's runs, and the launch to keep
  /// for the next one when it may be repeated (its runs, without the
  /// request and the count, which Engine::launch fills in).
  bool repeated() const { return Repeated; }
  std::optional<RepeatMemo> &kept() { return Kept; }

private:
  BufferManager &Bufs;
  CpuExecutor &Exec;
  Program &Prog;
  const KernelHandle &K;
  const BundleKernel &Info;
  const KernelLaunchRequest &Req;
  LaunchPlan &Plan;
  PartitionPolicy Policy;
  ModelState &Model;
  IssuePool &Pool;
  CombineScratch &Scratch;
  /// The request's last launch, when it changed nothing and the buffers
  /// are as it left them (else null); see RepeatMemo.
  const RepeatMemo *Memo;
  bool Repeated = false;
  /// This attempt leaves its GPU work running when it returns
  /// (mayDefer(), docs/runtime.md, "Deferred completion").
  bool Defer = false;
  std::optional<RepeatMemo> Kept;
  /// The launch's buffers' states before its first attempt, for a kept
  /// launch that changes them (RepeatMemo::Before).
  std::vector<RepeatMemo::Found> Before;

  /// The model policy: the table key and the devices as the planner saw
  /// them (ranges on these are timed and recorded), events used per GPU.
  bool Timed = false;
  PerfKey Key;
  std::map<Location, PlanDevice> PlanDevs;
  std::map<Location, size_t> EventsUsed;
  /// CLEAVE_LOG=time: every range's time on stderr (GPU ranges timed with
  /// the model policy's events).
  bool LogTime = envHas("CLEAVE_LOG", "time");

public:
  /// CLEAVE_LOG=phases: the host time between the steps of the launch, one
  /// stderr line per launch (docs/runtime.md). Off, mark() is one test.
  struct PhaseTrace {
    bool On = envHas("CLEAVE_LOG", "phases");
    std::chrono::steady_clock::time_point Start =
        On ? std::chrono::steady_clock::now()
           : std::chrono::steady_clock::time_point();
    std::chrono::steady_clock::time_point Last = Start;
    std::string Line;
    void mark(std::string_view Step, std::string_view Dev = {}) {
      if (!On)
        return;
      auto Now = std::chrono::steady_clock::now();
      char Us[32];
      std::snprintf(Us, sizeof(Us), "=%.1f",
                    std::chrono::duration<double, std::micro>(Now - Last)
                        .count());
      Line += ' ';
      Line += Step;
      if (!Dev.empty()) {
        Line += ':';
        Line += Dev;
      }
      Line += Us;
      Last = Now;
    }
    /// Work another thread did: \p Step on \p Dev began \p Wait us after
    /// it was handed over and took \p Took us ("Step:Dev=Wait+Took").
    void note(std::string_view Step, std::string_view Dev, double Wait,
              double Took) {
      if (!On)
        return;
      char Us[48];
      std::snprintf(Us, sizeof(Us), "=%.1f+%.1f", Wait, Took);
      Line += ' ';
      Line += Step;
      Line += ':';
      Line += Dev;
      Line += Us;
    }
    /// The line, with the whole launch's time; empty when off.
    std::string finish(std::string_view Kernel) const {
      if (!On)
        return {};
      char Us[48];
      std::snprintf(Us, sizeof(Us), " total=%.1f us\n",
                    std::chrono::duration<double, std::micro>(
                        std::chrono::steady_clock::now() - Start)
                        .count());
      return "cleave phases " + std::string(Kernel) + ":" + Line + Us;
    }
  };
  PhaseTrace Phases;

private:

  const FootprintProgram *Fp = nullptr;
  uint64_t Total = 0;
  LaunchConfig Config;
  std::vector<PtrArg> Ptrs;
  std::map<uint64_t, std::shared_ptr<Buffer>> BufById;
  std::set<Location> Excluded;
  bool Explicit = false;

  /// The decision for the current ranges.
  Mode M = Mode::Whole;
  Location MergeDev = -1;
  /// Combined outputs (docs/runtime.md): set when the ranges are on more
  /// than one device and the kernel has combined parameters. evaluate()
  /// then leaves those parameters out; each run updates its device's
  /// scratch at Offset, and the partials are combined into the host copy.
  struct CombineUse {
    const BundleCombined *C = nullptr;
    const PtrArg *P = nullptr;
    ByteRange Bytes; ///< of the buffer: every byte the kernel may touch
    uint64_t Offset = 0; ///< in the scratch
  };
  bool Combining = false;
  std::vector<CombineUse> Combines;
  uint64_t CombineBytes = 0;
  /// The footprints decide() evaluated (coarse sets resolved) for the
  /// ranges it kept, for attempt() to take instead of evaluating again.
  std::vector<PartitionRange> DecidedRanges;
  std::vector<RangeUse> DecidedUses;

  // Steps.
  Result checkRequest();
  bool canRun(Location L) const;
  bool canMergeOn(Location L) const;
  double throughput(Location L) const;
  Location bestDevice(const std::vector<PartitionRange> &Ranges) const;
  Result checkPartition(const std::vector<PartitionRange> &P) const;
  /// Footprints of a range; write and read sets of more rows than this are
  /// coarse (LaunchSupport.h, BufferUse).
  static constexpr uint64_t CoarseRows = 64;
  Result evaluate(uint64_t First, uint64_t Count, RangeUse &Out) const;
  void resolveCoarse(const std::vector<PartitionRange> &Ranges,
                     std::vector<RangeUse *> &Uses) const;
  Result decide(std::vector<PartitionRange> &Ranges);
  /// Fills Combines for the launch, or says why the kernel's combined
  /// parameters cannot be combined.
  std::string setUpCombines();
  bool isCombined(unsigned ArgNo) const;
  std::optional<Failure> allocateScratch(std::vector<RunState> &Runs);
  Result fillScratch(RunState &R, StreamHandle S);
  Result readScratch(RunState &R, StreamHandle S);
  Result combineRuns(const std::vector<RunState> &Runs);
  Result planModel(const std::vector<Location> &Devs,
                   std::vector<PartitionRange> &Out);
  PlanDevice planDevice(Location L, unsigned BlockThreads);
  void recordTime(const RunState &R, double Ms);
  void logTime(const RunState &R, double Ms) const;
  Result attempt(std::vector<PartitionRange> Ranges, bool Decide);
  Result makeRuns(std::vector<PartitionRange> &Ranges, bool Decide,
                  std::vector<RunState> &Runs,
                  std::map<uint64_t, RangeSet> &AllWrites,
                  std::map<uint64_t, RangeSet> &AllReads);
  /// Whether the first attempt with \p Given repeats Memo, and the runs
  /// that do; keeps a launch that may be repeated.
  bool repeats(const std::vector<PartitionRange> &Given) const;
  /// Deferred completion (docs/runtime.md): whether this launch may queue
  /// behind earlier deferred work (a repeat) rather than wait for it;
  /// orderRuns() queues the runs' GPUs so; deferRuns() records the
  /// launch's own work as deferred, or waits for the workers' GPUs when a
  /// run failed.
  bool mayChain() const;
  /// A kernel that dereferences pointers it loads from memory (a pointer
  /// inside a struct argument, a table of pointers): the engine can neither
  /// translate them for a device nor see what they touch. It runs whole on
  /// a device that works on the buffers' host copies, where the program's
  /// pointers are valid, with every buffer current there before and
  /// written there after; where no such device can run it, the launch
  /// fails and says why. Never a run on a GPU, which would dereference host
  /// copies' addresses.
  Result runOnHostMemory(const BundleIssue &Why);
  /// Whether a launch that is not a repeat may chain too: every range on
  /// one GPU, which alone has deferred work, and every variable the
  /// kernel reads current there.
  bool chainsAlone(const std::vector<PartitionRange> &Ranges) const;
  /// A repeat whose runs all ran: a replay marks the kept launch's reads
  /// and writes, as that launch did; a plain repeat changed nothing.
  Result finishRepeat(std::vector<RunState> &Runs, bool Replay);
  bool orderRuns(const std::vector<RunState> &Runs);
  bool deferRuns(std::vector<RunState> &Runs, bool NoneFailed);
  std::vector<RunState> repeatRuns(std::vector<PartitionRange> &Ranges);
  void keepRuns(std::vector<RunState> &Runs,
                std::vector<PartitionRange> Given);
  /// Before a run: stage() (the variant's code, variables, replicas, the
  /// copies to make), moveIn() (run those copies), finish() (arguments,
  /// the plan's entry). prepareAll() does the three for every run, the
  /// copies of different devices at once.
  Result prepare(RunState &R, bool IsMergeDevice);
  Result stage(RunState &R, bool IsMergeDevice);
  Result moveIn(RunState &R, bool Concurrent,
                const std::map<uint64_t, RangeSet> *Written = nullptr);
  void settlePulls(RunState &R, bool Waited);
  Result finish(RunState &R, bool Replay = false);
  std::optional<Failure> prepareAll(std::vector<RunState> &Runs,
                                    bool Staged = false);
  /// issue() is timeEvents() (the launching thread's: the events are the
  /// engine's) then issueLaunch() (an issue worker may run it).
  Result issue(RunState &R);
  void timeEvents(RunState &R);
  Result issueLaunch(RunState &R);
  /// Which GPU runs phase 2 hands to issue workers (RunState::Pooled).
  void choosePooled(std::vector<RunState> &Runs);
  /// Wakes the issue workers that choosePooled() would pick for \p Ranges,
  /// before the launch plans and moves its inputs (IssuePool::wake).
  void wakeIssueWorkers(const std::vector<PartitionRange> &Ranges);
  Result runCpu(RunState &R);
  unsigned slabDim() const;
  uint64_t slabBlocks(unsigned Dim) const;
  std::vector<PartitionRange> alignToSlabs(std::vector<PartitionRange> R) const;
  Result launchRebased(Location Dev, uint64_t First, uint64_t Count,
                       const std::vector<void *> &ArgPtrs, bool &Used);
  Result launchOne(Location Dev, bool GpuMerge, const std::string &Entry,
                   const cleave_cpu_kernel_desc *CpuDesc, uint64_t First,
                   uint64_t Count, std::vector<void *> &ArgPtrs,
                   std::vector<uint32_t> &PartParams);
  Result merge(RunState &R, RunState &OnM);
  Result argsFor(RunState &R, Location Dev);
  Result commitWrites(const RunState &R);
  /// What the runs that ran read, per buffer and device, for where the
  /// next direct host copy sends its bytes, which pushed bytes are pending
  /// and which results a later launch reads where
  /// (BufferManager::noteLaunchReads).
  void noteReads(const std::vector<RunState> &Runs);
  void dropUnproduced(const RunState &R);
  Location fallbackFor(Location Failed,
                       const std::vector<PartitionRange> &Ranges) const;
  void report(Location Failed, const Result &Err,
              const std::vector<std::pair<uint64_t, uint64_t>> &Blocks,
              Location To);
  std::string name(Location L) const { return locationName(Bufs, L); }
  bool isGpu(Location L) const {
    return Bufs.device(L).kind() == DeviceKind::Cuda;
  }
  bool isCpu(Location L) const {
    return Bufs.device(L).kind() == DeviceKind::Cpu;
  }
};

Result LaunchContext::checkRequest() {
  Plan.KernelName = Info.Name;
  unsigned NumArgs = Info.Params.size();
  if (NumArgs && !Req.Args)
    return invalid("launch of " + Info.Name + " without arguments");
  for (unsigned A = 0; A < NumArgs; ++A)
    if (!Req.Args[A])
      return invalid("launch of " + Info.Name + ": argument " +
                     std::to_string(A) + " has no value");
  for (int D = 0; D < 3; ++D)
    if (Req.Grid[D] == 0 || Req.Block[D] == 0)
      return invalid("launch of " + Info.Name +
                     ": grid and block dimensions must be at least 1");
  if (Req.Grid[0] > 0x7FFFFFFFu || Req.Grid[1] > 0xFFFFu ||
      Req.Grid[2] > 0xFFFFu)
    return invalid("launch of " + Info.Name + ": grid " +
                   std::to_string(Req.Grid[0]) + "x" +
                   std::to_string(Req.Grid[1]) + "x" +
                   std::to_string(Req.Grid[2]) + " exceeds CUDA's limits");
  if (uint64_t(Req.Block[0]) * Req.Block[1] * Req.Block[2] > 1024)
    return invalid("launch of " + Info.Name + ": more than 1024 threads per "
                                              "block");
  Total = uint64_t(Req.Grid[0]) * Req.Grid[1] * Req.Grid[2];
  for (int D = 0; D < 3; ++D) {
    Config.Grid[D] = Req.Grid[D];
    Config.Block[D] = Req.Block[D];
  }
  Config.Args = integerArgs(Info, Req.Args);
  for (unsigned A = 0; A < NumArgs; ++A) {
    if (Info.Params[A].Kind != ParamKind::Pointer)
      continue;
    void *P = nullptr;
    std::memcpy(&P, Req.Args[A], sizeof(P));
    if (!P)
      continue;
    BufferManager::Resolved Res;
    Result R = Bufs.resolve(P, Res);
    if (!R.ok())
      return invalid("launch of " + Info.Name + ": argument " +
                     std::to_string(A) + ": " + R.message());
    Ptrs.push_back({A, Res.Buf, Res.Offset});
    BufById[Res.Buf->id()] = Res.Buf;
  }
  size_t KI = &K - Prog.Kernels.data();
  Fp = Prog.Footprints[KI].get();
  return Result::success();
}

bool LaunchContext::canRun(Location L) const {
  if (Excluded.count(L))
    return false;
  if (isCpu(L))
    return K.Cpu != nullptr;
  return isGpu(L); // the original variant is always in the image
}

bool LaunchContext::canMergeOn(Location L) const {
  if (!canRun(L))
    return false;
  if (isCpu(L))
    return K.CpuMerge != nullptr;
  return Info.variant(VariantKind::Merge).Present;
}

double LaunchContext::throughput(Location L) const {
  const DeviceProperties &P = Bufs.device(L).properties();
  if (isGpu(L))
    return double(std::max(1u, P.ComputeUnits)) * 64.0 *
           double(P.ClockKHz ? P.ClockKHz : 1500000u);
  if (isCpu(L))
    return double(std::max(1u, Exec.numThreads())) * 8.0 * 3.0e6;
  return 0;
}

/// The device to run the whole grid on: the one with the largest share of
/// an explicit partition, else the fastest that can run the kernel.
Location
LaunchContext::bestDevice(const std::vector<PartitionRange> &Ranges) const {
  if (Explicit) {
    std::map<Location, uint64_t> Share;
    for (const PartitionRange &R : Ranges)
      if (canRun(R.Device))
        Share[R.Device] += R.Count;
    Location Best = -1;
    for (const PartitionRange &R : Ranges)
      if (Share.count(R.Device) && (Best < 0 || Share[R.Device] > Share[Best]))
        Best = R.Device;
    if (Best >= 0)
      return Best;
  }
  Location Best = -1;
  for (size_t L = 0; L < Bufs.numDevices(); ++L)
    if (canRun(Location(L)) &&
        (Best < 0 || throughput(Location(L)) > throughput(Best)))
      Best = Location(L);
  return Best;
}

Result LaunchContext::checkPartition(
    const std::vector<PartitionRange> &Part) const {
  std::vector<PartitionRange> Sorted = Part;
  for (const PartitionRange &R : Sorted) {
    if (R.Device < 0 || size_t(R.Device) >= Bufs.numDevices())
      return Result::error(ErrorCode::InvalidDevice,
                           "partition names device " +
                               std::to_string(R.Device) + " of " +
                               std::to_string(Bufs.numDevices()));
    if (R.Count == 0)
      return invalid("partition range on " + name(R.Device) + " is empty");
    if (!isCpu(R.Device) && !isGpu(R.Device))
      return Result::error(ErrorCode::NotSupported,
                           Bufs.device(R.Device).name() +
                               " cannot run kernels");
    if (isCpu(R.Device) && !K.Cpu)
      return Result::error(ErrorCode::NotSupported,
                           "partition gives " + name(R.Device) + " " +
                               blocksText(R.First, R.Count) + " of " +
                               Info.Name + ", which has no CPU variant (" +
                               Info.variant(VariantKind::CPU).Reason + ")");
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
  return Result::success();
}

Result LaunchContext::evaluate(uint64_t First, uint64_t Count,
                               RangeUse &Out) const {
  Out.clear();
  FootprintResult FR;
  if (Fp) {
    LaunchConfig C = Config;
    C.First = int64_t(First);
    C.Count = int64_t(Count);
    Status S = Fp->evaluate(C, FR);
    if (!S)
      return invalid("footprint evaluation of " + Info.Name + " " +
                     blocksText(First, Count) + ": " + S.Message);
  }
  for (const PtrArg &P : Ptrs) {
    if (Combining && isCombined(P.ArgNo))
      continue;
    const BundleParam &BP = Info.Params[P.ArgNo];
    bool MayWrite = BP.Role == ParamRole::Write ||
                    BP.Role == ParamRole::ReadWrite || BP.RoleIsGuess;
    addArgumentUse(P, Fp ? FR.find(P.ArgNo) : nullptr, MayWrite, First, Count,
                   Out[P.Buf->id()], CoarseRows);
  }
  return Result::success();
}

/// Makes exact every coarse write set of \p Uses[I] that overlaps the
/// writes of a range on another device (see BufferUse): a hull that no
/// other device writes into may stand for the writes once its own device
/// holds the bytes between the rows, which attempt() sees to.
void LaunchContext::resolveCoarse(const std::vector<PartitionRange> &Ranges,
                                  std::vector<RangeUse *> &Uses) const {
  std::vector<std::pair<size_t, uint64_t>> Refine;
  for (size_t I = 0; I < Uses.size(); ++I)
    for (auto &[Id, U] : *Uses[I]) {
      if (!U.WritesCoarse)
        continue;
      bool Keep = true;
      for (size_t J = 0; J < Uses.size() && Keep; ++J) {
        if (Ranges[J].Device == Ranges[I].Device)
          continue;
        auto It = Uses[J]->find(Id);
        if (It == Uses[J]->end())
          continue;
        ByteRange H = hull(U.Writes);
        Keep = !It->second.Writes.intersects(H.Lo, H.Hi);
        // Another coarse hull that overlaps: both become exact.
        if (!Keep && It->second.WritesCoarse)
          Refine.push_back({J, Id});
      }
      if (!Keep)
        Refine.push_back({I, Id});
    }
  for (auto [I, Id] : Refine)
    refineWrites((*Uses[I])[Id], BufById.at(Id)->size());
}

/// Splits [0, Total) over the devices that can run the kernel, by policy.
Result makePolicyRanges(PartitionPolicy P, uint64_t Total,
                        const std::vector<Location> &Devs,
                        const std::vector<double> &Weights,
                        std::vector<PartitionRange> &Out) {
  Out.clear();
  if (Devs.empty())
    return Result::error(ErrorCode::NoDevice, "no device can run the kernel");
  std::vector<uint64_t> Share(Devs.size(), 0);
  if (P == PartitionPolicy::SingleDevice) {
    Share[0] = Total;
  } else {
    std::vector<double> W(Devs.size(), 1.0);
    if (P == PartitionPolicy::Proportional || P == PartitionPolicy::Weights)
      W = Weights;
    double Sum = 0;
    for (double X : W)
      Sum += X;
    if (Sum <= 0 && P == PartitionPolicy::Weights)
      return invalid("the split weights give no device that can run the "
                     "kernel a share");
    if (Sum <= 0) {
      W.assign(Devs.size(), 1.0);
      Sum = double(Devs.size());
    }
    uint64_t Given = 0;
    for (size_t I = 0; I < Devs.size(); ++I) {
      Share[I] = uint64_t(double(Total) * (W[I] / Sum));
      Share[I] = std::min(Share[I], Total - Given);
      Given += Share[I];
    }
    // The remainder, one block at a time, to the largest weights first
    // (ties: the first device).
    std::vector<size_t> Order(Devs.size());
    for (size_t I = 0; I < Order.size(); ++I)
      Order[I] = I;
    std::stable_sort(Order.begin(), Order.end(),
                     [&](size_t A, size_t B) { return W[A] > W[B]; });
    for (size_t J = 0; Given < Total; J = (J + 1) % Order.size(), ++Given)
      ++Share[Order[J]];
  }
  uint64_t First = 0;
  for (size_t I = 0; I < Devs.size(); ++I)
    if (Share[I]) {
      Out.push_back({Devs[I], First, Share[I]});
      First += Share[I];
    }
  return Result::success();
}

} // namespace

// The policy split, exposed for the tests (see Engine.h).
Result computePolicyPartition(PartitionPolicy P, uint64_t Blocks,
                              const std::vector<Location> &Devices,
                              const std::vector<double> &Weights,
                              std::vector<PartitionRange> &Out) {
  if (Weights.size() != Devices.size())
    return invalid("one weight per device expected");
  return makePolicyRanges(P, Blocks, Devices, Weights, Out);
}

namespace {

/// Coalesces the ranges of one device that touch.
void normalize(std::vector<PartitionRange> &Ranges) {
  std::sort(Ranges.begin(), Ranges.end(),
            [](const PartitionRange &A, const PartitionRange &B) {
              return A.First < B.First;
            });
  std::vector<PartitionRange> Out;
  for (const PartitionRange &R : Ranges) {
    if (!Out.empty() && Out.back().Device == R.Device &&
        Out.back().First + Out.back().Count == R.First)
      Out.back().Count += R.Count;
    else
      Out.push_back(R);
  }
  Ranges = std::move(Out);
}

} // namespace

Result LaunchContext::decide(std::vector<PartitionRange> &Ranges) {
  M = Mode::Exact;
  MergeDev = -1;
  Plan.Split = true;
  Plan.Reason.clear();
  Plan.Reconcile.clear();
  Plan.MergeDevice.clear();
  Plan.Combined.clear();
  Combining = false;
  Combines.clear();
  CombineBytes = 0;
  normalize(Ranges);
  std::set<Location> Devs;
  for (const PartitionRange &R : Ranges)
    Devs.insert(R.Device);
  if (Devs.size() <= 1)
    return Result::success(); // one device: nothing to reconcile

  auto Whole = [&](std::string Why) {
    M = Mode::Whole;
    Combining = false; // the original kernel, on the buffer itself
    Combines.clear();
    Plan.Combined.clear();
    Plan.Split = false;
    Plan.Reason = std::move(Why);
    Location D = bestDevice(Ranges);
    Ranges = {{D, 0, Total}};
    return D < 0 ? Result::error(ErrorCode::NoDevice,
                                 "no device can run " + Info.Name)
                 : Result::success();
  };

  if (!Info.CanSplit) {
    std::string Why = "the kernel cannot be split";
    for (const BundleIssue &Iss : Info.Issues)
      if (Iss.ForbidsSplit) {
        Why += ": " + Iss.Kind + (Iss.Detail.empty() ? "" : " " + Iss.Detail) +
               (Iss.Location.empty() ? "" : " at " + Iss.Location);
        break;
      }
    return Whole(Why);
  }
  for (const BundleVariableUse &U : Info.Variables)
    if (U.Written)
      return Whole("it writes the variable " +
                   Prog.B.Variables[U.Variable].Name);
  if (!Fp)
    return Whole("the kernel's footprints are unusable: " +
                 Prog.FootprintErrors[&K - Prog.Kernels.data()]);
  const BundleVariant &Part = Info.variant(VariantKind::Partition);
  for (const PartitionRange &R : Ranges)
    if (isGpu(R.Device) && R.Count != Total && !Part.Present)
      return Whole("no partition-ready variant: " + Part.Reason);
  if (!Info.Combined.empty()) {
    std::string Why = setUpCombines();
    if (!Why.empty())
      return Whole(Why);
    Combining = !Combines.empty();
    for (const CombineUse &C : Combines)
      Plan.Combined += std::string(Plan.Combined.empty() ? "" : ", ") +
                       "argument " + std::to_string(C.C->Arg) + " (" +
                       getCombineOpName(C.C->Op) + " i" +
                       std::to_string(C.C->Bytes * 8) + ", " +
                       std::to_string(C.Bytes.size()) + " bytes)";
  }

  // Exact and disjoint?
  std::vector<RangeUse> Uses(Ranges.size());
  std::vector<RangeUse *> UsePtrs;
  for (size_t I = 0; I < Ranges.size(); ++I) {
    Result R = evaluate(Ranges[I].First, Ranges[I].Count, Uses[I]);
    if (!R.ok())
      return R;
    UsePtrs.push_back(&Uses[I]);
  }
  resolveCoarse(Ranges, UsePtrs);
  std::string WhyNot;
  for (size_t I = 0; I < Uses.size() && WhyNot.empty(); ++I)
    for (auto &[Id, U] : Uses[I])
      if (!U.WritesExact) {
        WhyNot = "buffer #" + std::to_string(Id) + ": " + U.NotExact;
        break;
      }
  for (size_t I = 0; I < Uses.size() && WhyNot.empty(); ++I)
    for (size_t J = I + 1; J < Uses.size() && WhyNot.empty(); ++J) {
      if (Ranges[I].Device == Ranges[J].Device)
        continue;
      for (auto &[Id, U] : Uses[I]) {
        auto It = Uses[J].find(Id);
        if (It == Uses[J].end() ||
            U.Writes.intersection(It->second.Writes).empty())
          continue;
        WhyNot = "buffer #" + std::to_string(Id) + " is written by " +
                 name(Ranges[I].Device) + " and " + name(Ranges[J].Device) +
                 " at the same bytes";
        break;
      }
    }
  auto Keep = [&] {
    DecidedRanges = Ranges;
    DecidedUses = std::move(Uses);
  };
  if (WhyNot.empty()) {
    Plan.Reconcile = "exact";
    Keep();
    return Result::success();
  }

  if (Combining)
    return Whole(WhyNot + ", and a kernel with combined outputs is not "
                          "merged with a merge kernel");
  // Merges: every written buffer must be reached through merge outputs.
  const BundleVariant &Merge = Info.variant(VariantKind::Merge);
  if (!Merge.Present)
    return Whole(WhyNot + ", and there is no merge kernel (" + Merge.Reason +
                 ")");
  std::set<unsigned> Outputs(Info.MergeOutputs.begin(),
                             Info.MergeOutputs.end());
  for (const PtrArg &P : Ptrs) {
    if (Outputs.count(P.ArgNo))
      continue;
    for (const RangeUse &U : Uses) {
      auto It = U.find(P.Buf->id());
      if (It != U.end() && !It->second.Writes.empty()) {
        // Written through another argument that is an output?
        bool Covered = false;
        for (const PtrArg &Q : Ptrs)
          Covered |= Q.Buf == P.Buf && Outputs.count(Q.ArgNo);
        if (!Covered)
          return Whole(WhyNot + ", and argument " +
                       std::to_string(P.ArgNo) +
                       " may be written but is no merge output");
      }
    }
  }
  std::map<Location, uint64_t> Share;
  for (const PartitionRange &R : Ranges)
    Share[R.Device] += R.Count;
  Location Best = -1;
  for (const PartitionRange &R : Ranges)
    if (canMergeOn(R.Device) && (Best < 0 || Share[R.Device] > Share[Best]))
      Best = R.Device;
  if (Best < 0)
    return Whole(WhyNot + ", and no device of the partition can run the "
                          "merge kernel (CPU merge variant: " +
                 std::string(K.CpuMerge ? "present" : "absent") + ")");
  M = Mode::Merge;
  MergeDev = Best;
  Plan.Reconcile = "merge";
  Plan.MergeDevice = name(Best);
  Keep();
  return Result::success();
}

bool LaunchContext::isCombined(unsigned ArgNo) const {
  for (const BundleCombined &C : Info.Combined)
    if (C.Arg == ArgNo)
      return true;
  return false;
}

std::string LaunchContext::setUpCombines() {
  Combines.clear();
  CombineBytes = 0;
  FootprintResult FR;
  if (Fp) {
    LaunchConfig C = Config;
    C.First = 0;
    C.Count = int64_t(Total);
    if (Status S = Fp->evaluate(C, FR); !S)
      return "the footprints of the combined outputs: " + S.Message;
  }
  for (const BundleCombined &C : Info.Combined) {
    const PtrArg *P = nullptr;
    for (const PtrArg &Q : Ptrs)
      if (Q.ArgNo == C.Arg)
        P = &Q;
    if (!P)
      continue; // a null pointer: nothing to combine
    for (const PtrArg &Q : Ptrs)
      if (&Q != P && Q.Buf == P->Buf)
        return "argument " + std::to_string(C.Arg) +
               ", whose atomics would be combined, shares its buffer with "
               "argument " +
               std::to_string(Q.ArgNo);
    // Every byte the whole grid may touch through it.
    BufferUse U;
    addArgumentUse(*P, Fp ? FR.find(P->ArgNo) : nullptr, true, 0, Total, U);
    U.Reads.insert(U.Writes);
    ByteRange Rg = hull(U.Reads);
    if (Rg.empty())
      continue;
    if (Rg.Lo % C.Bytes || P->Offset % C.Bytes)
      return "argument " + std::to_string(C.Arg) +
             " is not aligned to its atomics' " + std::to_string(C.Bytes) +
             " bytes";
    CombineUse CU;
    CU.C = &C;
    CU.P = P;
    CU.Bytes = Rg;
    CU.Offset = CombineBytes;
    Combines.push_back(CU);
    CombineBytes += (Rg.size() + 255) / 256 * 256;
  }
  return {};
}

/// Scratch for every run of a combining launch; a device that cannot
/// allocate it fails as in prepareAll().
std::optional<Failure>
LaunchContext::allocateScratch(std::vector<RunState> &Runs) {
  std::map<Location, unsigned> PerDevice;
  for (RunState &R : Runs) {
    R.Scratch = nullptr;
    if (!Combining)
      continue;
    Result Res =
        Scratch.get(Bufs, R.Dev, PerDevice[R.Dev]++, CombineBytes, R.Scratch);
    if (!Res.ok())
      return Failure{R.Dev, Res};
  }
  return std::nullopt;
}

/// Sets the run's scratch to the identities, on stream \p S of its device
/// (before the kernel).
Result LaunchContext::fillScratch(RunState &R, StreamHandle S) {
  if (!R.Scratch)
    return Result::success();
  Device &D = Bufs.device(R.Dev);
  for (const CombineUse &C : Combines) {
    Result Res = D.memset(R.Scratch->Dev + C.Offset, identityByte(C.C->Op),
                          C.Bytes.size(), S);
    if (!Res.ok())
      return Res;
  }
  return Result::success();
}

/// Copies the run's partials to its host scratch, on stream \p S (after
/// the kernel).
Result LaunchContext::readScratch(RunState &R, StreamHandle S) {
  if (!R.Scratch)
    return Result::success();
  Device &D = Bufs.device(R.Dev);
  return D.copyDeviceToHost(static_cast<char *>(R.Scratch->Host),
                            R.Scratch->Dev, CombineBytes, S);
}

/// The partials of the successful runs, combined into the host copies,
/// which then alone hold those bytes. The host copies held the buffers'
/// values before the launch (attempt() makes them valid first), and no run
/// touched the buffers, so a failed run's blocks may simply run again.
Result LaunchContext::combineRuns(const std::vector<RunState> &Runs) {
  if (!Combining)
    return Result::success();
  for (const CombineUse &C : Combines) {
    Buffer &B = *C.P->Buf;
    char *Dst = static_cast<char *>(B.base()) + C.Bytes.Lo;
    for (const RunState &R : Runs) {
      if (R.Failed || !R.Issued || !R.Scratch)
        continue;
      const char *Src = static_cast<const char *>(R.Scratch->Host) + C.Offset;
      if (C.C->Bytes == 8)
        combineInto<uint64_t>(C.C->Op, Dst, Src, C.Bytes.size());
      else
        combineInto<uint32_t>(C.C->Op, Dst, Src, C.Bytes.size());
    }
    Result Res = Bufs.markWritten(B, HostLocation, C.Bytes);
    if (!Res.ok())
      return Res;
  }
  return Result::success();
}

Location
LaunchContext::fallbackFor(Location Failed,
                           const std::vector<PartitionRange> &Ranges) const {
  if (M == Mode::Merge && MergeDev != Failed && canRun(MergeDev))
    return MergeDev;
  std::map<Location, uint64_t> Share;
  for (const PartitionRange &R : Ranges)
    if (R.Device != Failed && canRun(R.Device))
      Share[R.Device] += R.Count;
  Location Best = -1;
  for (const PartitionRange &R : Ranges)
    if (Share.count(R.Device) && (Best < 0 || Share[R.Device] > Share[Best]))
      Best = R.Device;
  if (Best >= 0)
    return Best;
  for (size_t L = 0; L < Bufs.numDevices(); ++L)
    if (Location(L) != Failed && canRun(Location(L)) &&
        (Best < 0 || throughput(Location(L)) > throughput(Best)))
      Best = Location(L);
  return Best;
}

void LaunchContext::report(
    Location Failed, const Result &Err,
    const std::vector<std::pair<uint64_t, uint64_t>> &Blocks, Location To) {
  std::string Msg = "cleave: " + name(Failed) + " failed (" + Err.message() +
                    "); re-running blocks";
  for (size_t B = 0; B < Blocks.size(); ++B)
    Msg += (B ? ", [" : " [") + std::to_string(Blocks[B].first) + ", " +
           std::to_string(Blocks[B].second) + ")";
  Msg += " on " + name(To) + "\n";
  std::fputs(Msg.c_str(), stderr);
  Plan.Recoveries.push_back({name(Failed), Err.message(), Blocks, name(To)});
}

/// Pointer arguments translated to \p Dev's replicas.
Result LaunchContext::argsFor(RunState &R, Location Dev) {
  unsigned NumArgs = Info.Params.size();
  R.Values.assign(NumArgs, nullptr);
  R.ArgPtrs.assign(Req.Args, Req.Args + NumArgs);
  for (const PtrArg &P : Ptrs) {
    DeviceAddr A = 0;
    Result Res = Bufs.addressOn(*P.Buf, Dev, P.Offset, A);
    if (!Res.ok())
      return Res;
    R.Values[P.ArgNo] = reinterpret_cast<void *>(static_cast<uintptr_t>(A));
    R.ArgPtrs[P.ArgNo] = &R.Values[P.ArgNo];
  }
  // Combined outputs point into the scratch, placed so that the kernel's
  // offsets from the argument land on the same bytes of the range.
  if (R.Scratch)
    for (const CombineUse &C : Combines) {
      DeviceAddr A = R.Scratch->Dev + C.Offset + (C.P->Offset - C.Bytes.Lo);
      R.Values[C.P->ArgNo] =
          reinterpret_cast<void *>(static_cast<uintptr_t>(A));
    }
  return Result::success();
}

/// Everything a run needs before anything runs: its device's module,
/// functions and variables, its replicas and its inputs (plus, for M, the
/// write bounds; for a run that M merges, its partial buffers on M).
Result LaunchContext::prepare(RunState &R, bool IsMergeDevice) {
  Result Res = stage(R, IsMergeDevice);
  if (Res.ok()) {
    Res = moveIn(R, /*Concurrent=*/false);
    Plan.BytesMoved += R.PlanRun.BytesIn;
  }
  if (Res.ok())
    Res = finish(R);
  return Res;
}

Result LaunchContext::stage(RunState &R, bool IsMergeDevice) {
  LaunchPlan::Run &Run = R.PlanRun;
  Run = LaunchPlan::Run();
  R.MoveIn.clear();
  Run.Device = R.Dev;
  Run.DeviceName = name(R.Dev);
  Run.First = R.First;
  Run.Count = R.Count;
  if (isCpu(R.Dev))
    Run.Variant = "cpu";
  else
    Run.Variant = R.Count == Total ? "original" : "partition";
  if (isGpu(R.Dev)) {
    FunctionHandle F = nullptr;
    const std::string &Entry =
        R.Count == Total ? Info.variant(VariantKind::Original).Entry
                         : Info.variant(VariantKind::Partition).Entry;
    Result Res = gpuFunction(Bufs, Prog, R.Dev, Entry, F);
    if (Res.ok() && IsMergeDevice)
      Res = gpuFunction(Bufs, Prog, R.Dev,
                        Info.variant(VariantKind::Merge).Entry, F);
    if (!Res.ok())
      return Res;
  }
  for (const BundleVariableUse &U : Info.Variables) {
    Result Res = syncVariableTo(Bufs, Prog, U.Variable, R.Dev);
    if (!Res.ok())
      return Res;
  }
  for (auto &[Id, U] : R.Uses) {
    Buffer &B = *BufById[Id];
    DeviceAddr Ignored;
    Result Res = Bufs.addressOn(B, R.Dev, 0, Ignored); // the replica
    if (!Res.ok())
      return Res;
    RangeSet Need = U.Reads;
    auto MH = R.MustHold.find(Id);
    if (MH != R.MustHold.end())
      Need.insert(MH->second);
    for (ByteRange Rg : Need.ranges()) {
      std::vector<Transfer> Copies;
      Res = Bufs.planTransfers(B, R.Dev, Rg, Copies);
      if (!Res.ok())
        return Res;
      if (!Copies.empty())
        R.MoveIn.push_back({Id, std::move(Copies)});
    }
  }
  return Result::success();
}

/// Runs R's copies. With \p Written (the bytes, per buffer id, that the
/// launch's runs write; prepareAll on an issue worker), a copy into R's GPU
/// from another GPU that it reaches over a peer link, of bytes that no run
/// writes, is only queued on R's compute stream, ahead of its kernel
/// (R.Pulled): nothing on the host waits for a halo row. Its source keeps
/// the bytes until then, as no run writes them; nothing else reads them
/// on R's GPU before the launch waits for that stream (settlePulls).
Result LaunchContext::moveIn(RunState &R, bool Concurrent,
                             const std::map<uint64_t, RangeSet> *Written) {
  Device &D = Bufs.device(R.Dev);
  for (auto &[Id, Copies] : R.MoveIn) {
    Buffer &B = *BufById.at(Id);
    Result Res;
    if (!Written || !isGpu(R.Dev)) {
      Res = Concurrent ? Bufs.executeTransfersUnlocked(B, Copies)
                       : Bufs.executeTransfers(B, Copies);
    } else {
      std::vector<Transfer> Now, Pull;
      auto W = Written->find(Id);
      for (const Transfer &T : Copies) {
        bool Queue = T.Dst == R.Dev && T.Src != HostLocation &&
                     T.Src != R.Dev && isGpu(T.Src) &&
                     D.hasPeerLink(Bufs.device(T.Src)) &&
                     (W == Written->end() ||
                      !W->second.intersects(T.Offset, T.Offset + T.Bytes));
        (Queue ? Pull : Now).push_back(T);
      }
      Res = Bufs.executeTransfersUnlocked(B, Now);
      if (Res.ok() && !Pull.empty()) {
        // Recorded first: a copy that fails midway may have landed some.
        for (const Transfer &T : Pull)
          R.Pulled.push_back({Id, T});
        auto Start = std::chrono::steady_clock::now();
        Res = Bufs.executeTransfersUnlocked(B, Pull, D.internalStream(0));
        R.PullUs += std::chrono::duration<double, std::micro>(
                        std::chrono::steady_clock::now() - Start)
                        .count();
      }
    }
    if (!Res.ok())
      return Res;
    for (const Transfer &T : Copies) {
      R.PlanRun.Copies.push_back({Id, T, name(T.Src), name(T.Dst)});
      R.PlanRun.BytesIn += T.Bytes;
    }
  }
  R.MoveIn.clear();
  return Result::success();
}

void LaunchContext::settlePulls(RunState &R, bool Waited) {
  if (R.Pulled.empty())
    return;
  Result W = Result::success();
  if (!Waited) {
    Device &D = Bufs.device(R.Dev);
    W = D.synchronizeStream(D.internalStream(0));
  }
  // A stream that failed may not have brought them: only the source, which
  // no run wrote, still holds those bytes for certain.
  if (!W.ok())
    for (const auto &[Id, T] : R.Pulled)
      (void)Bufs.markWritten(*BufById.at(Id), T.Src,
                             ByteRange{T.Offset, T.Offset + T.Bytes});
  R.Pulled.clear();
}

/// The run's arguments on its device (a replay has the kept launch's, as
/// repeatRuns() set them), and its plan entry.
Result LaunchContext::finish(RunState &R, bool Replay) {
  if (!Replay) {
    Result Res = argsFor(R, R.Dev);
    if (!Res.ok())
      return Res;
  }
  R.PlanIndex = Plan.Runs.size();
  Plan.Runs.push_back(std::move(R.PlanRun));
  return Result::success();
}

/// Copies into several devices at once pay for the threads that run them
/// above this many bytes in all.
constexpr uint64_t ConcurrentMoveBytes = uint64_t(4) << 20;

/// With \p Staged (a replay), the runs' plan entries and copies are the
/// kept launch's: nothing is staged or planned again.
std::optional<Failure> LaunchContext::prepareAll(std::vector<RunState> &Runs,
                                                 bool Staged) {
  for (RunState &R : Runs) {
    if (Staged)
      break;
    Result Res = stage(R, M == Mode::Merge && R.Dev == MergeDev);
    if (!Res.ok())
      return Failure{R.Dev, Res};
  }
  // Several devices with inputs to move: one thread per device moves them
  // at once. Every run's copies were planned from validity before any of
  // them ran, so each one's sources hold their bytes, and nothing writes
  // them before the launches. Not when a device has two runs (they could
  // plan the same bytes) or a copy goes through the host (two devices
  // could land the same bytes there).
  std::set<Location> Devs, Moving;
  uint64_t Bytes = 0;
  bool Concurrent = true;
  for (RunState &R : Runs) {
    Concurrent &= Devs.insert(R.Dev).second;
    for (auto &[Id, Copies] : R.MoveIn)
      for (const Transfer &T : Copies) {
        Moving.insert(R.Dev);
        Bytes += T.Bytes;
        Concurrent &= Bufs.validityLocation(T.Dst) != HostLocation;
      }
  }
  // Below ConcurrentMoveBytes, starting threads costs more than it saves;
  // the issue workers, where the launch uses them, cost a post each (the
  // halo rows of a stencil split over four GPUs: six copies of 64 KB, one
  // after the other about 60 us of a 0.3 ms step on 4 H200s).
  bool ByWorkers = Concurrent && Moving.size() >= 2 &&
                   Bytes < ConcurrentMoveBytes &&
                   !FaultInjector::global().countsAcrossDevices() &&
                   IssuePool::usedFor(Moving.size());
  Concurrent &= Moving.size() >= 2 && (Bytes >= ConcurrentMoveBytes || ByWorkers);
  std::vector<Result> Moved(Runs.size(), Result::success());
  if (Concurrent && ByWorkers) {
    Plan.MovedAtOnce = unsigned(Moving.size());
    // Halo rows may be queued behind the runs' kernels (moveIn), not in a
    // merge (M reads every byte) or with combined outputs.
    std::map<uint64_t, RangeSet> Written;
    bool Pull = M != Mode::Merge && !Combining;
    if (Pull)
      for (RunState &R : Runs)
        for (auto &[Id, U] : usesOf(R))
          Written[Id].insert(U.Writes);
    const std::map<uint64_t, RangeSet> *W = Pull ? &Written : nullptr;
    // Every moving run but the last to its device's worker; the last, and
    // those whose worker sleeps, here while the workers copy.
    std::vector<size_t> Posted, Here;
    // CLEAVE_LOG=phases: when each device's copies began and ended.
    using Clock = std::chrono::steady_clock;
    std::vector<std::pair<Clock::time_point, Clock::time_point>> Span(
        Runs.size());
    bool Trace = Phases.On;
    auto Move = [this, W, Trace](RunState &R, Result &Out,
                                 std::pair<Clock::time_point,
                                           Clock::time_point> &T) {
      if (Trace)
        T.first = Clock::now();
      Out = moveIn(R, /*Concurrent=*/true, W);
      if (Trace)
        T.second = Clock::now();
    };
    Clock::time_point Handed = Trace ? Clock::now() : Clock::time_point();
    for (size_t I = 0; I < Runs.size(); ++I) {
      if (Runs[I].MoveIn.empty())
        continue;
      RunState *R = &Runs[I];
      Result *Out = &Moved[I];
      auto *T = &Span[I];
      bool Last = Posted.size() + Here.size() + 1 == Moving.size();
      if (!Last && Pool.tryPost(size_t(R->Dev),
                                [Move, R, Out, T] { Move(*R, *Out, *T); }))
        Posted.push_back(I);
      else
        Here.push_back(I);
    }
    for (size_t I : Here)
      Move(Runs[I], Moved[I], Span[I]);
    for (size_t I : Posted)
      Pool.wait(size_t(Runs[I].Dev));
    if (Trace) {
      Phases.mark("moved");
      auto Us = [](Clock::time_point A, Clock::time_point B) {
        return std::chrono::duration<double, std::micro>(B - A).count();
      };
      for (size_t I = 0; I < Runs.size(); ++I)
        if (Span[I].second != Clock::time_point()) {
          Phases.note("move", name(Runs[I].Dev), Us(Handed, Span[I].first),
                      Us(Span[I].first, Span[I].second));
          if (!Runs[I].Pulled.empty())
            Phases.note("pull", name(Runs[I].Dev),
                        double(Runs[I].Pulled.size()), Runs[I].PullUs);
        }
    }
    for (RunState &R : Runs)
      Plan.BytesMoved += R.PlanRun.BytesIn;
  } else if (Concurrent) {
    Plan.MovedAtOnce = unsigned(Moving.size());
    std::vector<std::thread> Threads;
    for (size_t I = 0; I < Runs.size(); ++I)
      if (!Runs[I].MoveIn.empty())
        Threads.emplace_back([this, &Runs, &Moved, I] {
          Moved[I] = moveIn(Runs[I], /*Concurrent=*/true);
        });
    for (std::thread &T : Threads)
      T.join();
    // What moved counts, whether or not another device failed.
    for (RunState &R : Runs)
      Plan.BytesMoved += R.PlanRun.BytesIn;
  }
  // Otherwise one run after the other, each planned again once an earlier
  // one has moved bytes (it may now take them from that device).
  bool Changed = false;
  for (size_t I = 0; I < Runs.size(); ++I) {
    RunState &R = Runs[I];
    Result Res = Moved[I];
    if (!Concurrent) {
      if (Changed && !Staged)
        Res = stage(R, M == Mode::Merge && R.Dev == MergeDev);
      Changed |= !R.MoveIn.empty();
      if (Res.ok()) {
        Res = moveIn(R, /*Concurrent=*/false);
        Plan.BytesMoved += R.PlanRun.BytesIn;
      }
    }
    if (Res.ok())
      Res = finish(R, Staged);
    if (!Res.ok()) {
      // The next attempt plans from what is valid: the queued copies first.
      for (RunState &X : Runs)
        settlePulls(X, false);
      return Failure{R.Dev, Res};
    }
  }
  return std::nullopt;
}

/// Launches a kernel over blocks [First, First + Count) of the request's
/// grid on \p Dev: a GPU variant (asynchronously, on the device's compute
/// stream) or a CPU descriptor (now). \p ArgPtrs holds the original
/// parameters (and, for merges, the partial pointers); the partition
/// parameters are appended for the partition-ready and merge variants.
Result LaunchContext::launchOne(Location Dev, bool GpuMerge,
                                const std::string &Entry,
                                const cleave_cpu_kernel_desc *CpuDesc,
                                uint64_t First, uint64_t Count,
                                std::vector<void *> &ArgPtrs,
                                std::vector<uint32_t> &PartParams) {
  Device &D = Bufs.device(Dev);
  bool Whole = First == 0 && Count == Total && !GpuMerge && !CpuDesc;
  if (isCpu(Dev) && CpuDesc == K.Cpu) {
    // The CPU variant takes the block range natively.
    cleave_cpu_launch L;
    for (int X = 0; X < 3; ++X) {
      L.grid[X] = Req.Grid[X];
      L.block[X] = Req.Block[X];
    }
    L.dynamic_shared_bytes = Req.DynamicSharedBytes;
    Result S = Exec.launch(*CpuDesc, ArgPtrs.data(), L, First, Count);
    if (!S.ok())
      return Result::error(S.code(), Info.Name + " on " + D.name() + " " +
                                         blocksText(First, Count) + ": " +
                                         S.message());
    return Result::success();
  }
  FunctionHandle F = nullptr;
  if (!CpuDesc) {
    Result R = gpuFunction(Bufs, Prog, Dev, Entry, F);
    if (!R.ok())
      return R;
  }
  if (Whole) {
    uint32_t Grid[3] = {Req.Grid[0], Req.Grid[1], Req.Grid[2]};
    uint32_t Block[3] = {Req.Block[0], Req.Block[1], Req.Block[2]};
    return D.launchKernel(F, Grid, Block, Req.DynamicSharedBytes,
                          D.internalStream(0), ArgPtrs.data());
  }
  if (!GpuMerge && !CpuDesc) {
    bool Used = false;
    Result R = launchRebased(Dev, First, Count, ArgPtrs, Used);
    if (Used || !R.ok())
      return R;
  }
  // Partition-ready or merge variant: chunks of at most 2^31 - 1 blocks.
  size_t Base = ArgPtrs.size();
  uint64_t Chunks = (Count + 0x7FFFFFFEu) / 0x7FFFFFFFu;
  PartParams.assign(Chunks * NumPartitionParams, 0);
  std::vector<void *> All = ArgPtrs;
  All.resize(Base + NumPartitionParams);
  for (uint64_t C = 0, Done = 0; C < Chunks; ++C) {
    uint64_t N = std::min<uint64_t>(Count - Done, 0x7FFFFFFFu);
    uint32_t *Vals = &PartParams[C * NumPartitionParams];
    if (!computePartitionParams(First + Done, Req.Grid[0], Req.Grid[1],
                                Req.Grid[2], Vals) ||
        !isValidPartitionLaunch(First + Done, N, Req.Grid[0], Req.Grid[1],
                                Req.Grid[2]))
      return invalid("blocks [" + std::to_string(First + Done) + ", " +
                     std::to_string(First + Done + N) +
                     ") cannot be launched as a partition");
    for (unsigned P = 0; P < NumPartitionParams; ++P)
      All[Base + P] = &Vals[P];
    uint32_t Grid[3] = {uint32_t(N), 1, 1};
    uint32_t Block[3] = {Req.Block[0], Req.Block[1], Req.Block[2]};
    Result R;
    if (CpuDesc) {
      cleave_cpu_launch L;
      for (int X = 0; X < 3; ++X) {
        L.grid[X] = Grid[X];
        L.block[X] = Block[X];
      }
      L.dynamic_shared_bytes = Req.DynamicSharedBytes;
      Result S = Exec.launch(*CpuDesc, All.data(), L, 0, N);
      if (!S.ok())
        R = Result::error(S.code(),
                          std::string(CpuDesc->name ? CpuDesc->name : "?") +
                              " on " + D.name() + ": " + S.message());
    } else {
      // The launch reads the parameter values when it is issued.
      R = D.launchKernel(F, Grid, Block, Req.DynamicSharedBytes,
                         D.internalStream(0), All.data());
    }
    if (!R.ok())
      return R;
    Done += N;
  }
  return Result::success();
}

/// The dimension a rebased variant would cut: the highest one with more
/// than one block (x for a single block).
unsigned LaunchContext::slabDim() const {
  return Req.Grid[2] > 1 ? 2 : Req.Grid[1] > 1 ? 1 : 0;
}

/// Blocks in one slab of index along \p Dim (every block of the lower
/// dimensions): ranges that start and end at multiples of it are boxes.
uint64_t LaunchContext::slabBlocks(unsigned Dim) const {
  uint64_t S = 1;
  for (unsigned D = 0; D < Dim; ++D)
    S *= Req.Grid[D];
  return S;
}

/// A range on a GPU that is a whole number of slabs runs the rebased
/// variant (the kernel's own code, docs/transforms.md) instead of the
/// partition-ready one. Policy and model partitions are cut at slab
/// boundaries when the kernel has one; a range that would become empty goes
/// to its neighbour. Explicit partitions are kept as given.
std::vector<PartitionRange>
LaunchContext::alignToSlabs(std::vector<PartitionRange> Ranges) const {
  unsigned Dim = slabDim();
  uint64_t Slab = slabBlocks(Dim);
  if (Explicit || Slab <= 1 || Ranges.size() < 2 || !Fp ||
      !Fp->rebasedVariant(Dim) || envHas("CLEAVE_REBASE", "off"))
    return Ranges;
  std::sort(Ranges.begin(), Ranges.end(),
            [](const PartitionRange &A, const PartitionRange &B) {
              return A.First < B.First;
            });
  std::vector<PartitionRange> Out;
  uint64_t Start = 0;
  for (size_t I = 0; I < Ranges.size(); ++I) {
    uint64_t End = Ranges[I].First + Ranges[I].Count;
    if (I + 1 < Ranges.size())
      End = std::min(Total, (End + Slab / 2) / Slab * Slab);
    else
      End = Total;
    if (End <= Start)
      continue;
    Out.push_back({Ranges[I].Device, Start, End - Start});
    Start = End;
  }
  return Out;
}

Result LaunchContext::launchRebased(Location Dev, uint64_t First,
                                    uint64_t Count,
                                    const std::vector<void *> &ArgPtrs,
                                    bool &Used) {
  Used = false;
  unsigned Dim = slabDim();
  uint64_t Slab = slabBlocks(Dim);
  const RebasedVariant *V = Fp ? Fp->rebasedVariant(Dim) : nullptr;
  if (!V || First % Slab || Count % Slab || Count / Slab > 0x7FFFFFFFu ||
      envHas("CLEAVE_REBASE", "off"))
    return Result::success();
  std::vector<RebaseValue> Vals;
  std::string Why;
  LaunchPlan::Run *Run = nullptr;
  for (LaunchPlan::Run &X : Plan.Runs)
    if (X.Device == Dev && X.First == First && X.Count == Count && !X.IsMerge)
      Run = &X;
  if (!Fp->rebase(Config, Dim, int64_t(First / Slab), Vals, Why)) {
    if (Run)
      Run->Variant = "partition (not rebased: " + Why + ")";
    return Result::success();
  }
  FunctionHandle F = nullptr;
  Result R = gpuFunction(Bufs, Prog, Dev, V->Entry, F);
  if (!R.ok())
    return R;
  // The extra parameters come before the kernel's own; cuLaunchKernel
  // copies the values when the launch is issued.
  std::vector<uint64_t> Storage(Vals.size());
  std::vector<void *> All;
  for (size_t I = 0; I < Vals.size(); ++I) {
    const RebaseValue &X = Vals[I];
    if (X.IsPointer) {
      uint64_t P = 0;
      std::memcpy(&P, ArgPtrs[X.ArgNo], sizeof(P));
      Storage[I] = P + uint64_t(X.Value);
    } else if (X.Bits == 32) {
      int32_t V32 = int32_t(X.Value);
      std::memcpy(&Storage[I], &V32, sizeof(V32));
    } else {
      std::memcpy(&Storage[I], &X.Value, sizeof(X.Value));
    }
    All.push_back(&Storage[I]);
  }
  All.insert(All.end(), ArgPtrs.begin(), ArgPtrs.end());
  uint32_t Grid[3] = {Req.Grid[0], Req.Grid[1], Req.Grid[2]};
  Grid[Dim] = uint32_t(Count / Slab);
  uint32_t Block[3] = {Req.Block[0], Req.Block[1], Req.Block[2]};
  Used = true;
  if (Run)
    Run->Variant = "rebased";
  Device &D = Bufs.device(Dev);
  return D.launchKernel(F, Grid, Block, Req.DynamicSharedBytes,
                        D.internalStream(0), All.data());
}

/// Issues a run: a GPU launch (asynchronous) or, for a CPU device, the
/// launch's fault check (the CPU variant runs in runCpu).
Result LaunchContext::issue(RunState &R) {
  if (isCpu(R.Dev))
    return Bufs.device(R.Dev).checkLaunchFault();
  timeEvents(R);
  return issueLaunch(R);
}

void LaunchContext::timeEvents(RunState &R) {
  // The model policy (and CLEAVE_LOG=time) times the range with events
  // around its launch(es) on the compute stream (read after the stream is
  // synchronized).
  R.TimeStart = R.TimeEnd = nullptr;
  if ((Timed && PlanDevs.count(R.Dev)) || LogTime) {
    size_t &Used = EventsUsed[R.Dev];
    R.TimeStart = Model.event(Bufs, R.Dev, Used);
    R.TimeEnd = Model.event(Bufs, R.Dev, Used + 1);
    Used += 2;
    if (!R.TimeStart || !R.TimeEnd)
      R.TimeStart = R.TimeEnd = nullptr;
  }
}

Result LaunchContext::issueLaunch(RunState &R) {
  Device &D = Bufs.device(R.Dev);
  const std::string &Entry =
      R.Count == Total ? Info.variant(VariantKind::Original).Entry
                       : Info.variant(VariantKind::Partition).Entry;
  Result Res = fillScratch(R, D.internalStream(0));
  if (!Res.ok())
    return Res;
  if (R.TimeStart && !D.recordEvent(R.TimeStart, D.internalStream(0)).ok())
    R.TimeStart = R.TimeEnd = nullptr;
  Res = launchOne(R.Dev, false, Entry, nullptr, R.First, R.Count, R.ArgPtrs,
                  R.PartParams);
  if (R.TimeEnd &&
      (!Res.ok() || !D.recordEvent(R.TimeEnd, D.internalStream(0)).ok()))
    R.TimeStart = R.TimeEnd = nullptr;
  // Behind the kernel on its stream: the wait for the kernel covers it.
  if (Res.ok())
    Res = readScratch(R, D.internalStream(0));
  return Res;
}

void LaunchContext::choosePooled(std::vector<RunState> &Runs) {
  if (M == Mode::Merge || FaultInjector::global().countsAcrossDevices())
    return;
  std::map<Location, unsigned> PerGpu;
  for (const RunState &R : Runs)
    if (isGpu(R.Dev))
      ++PerGpu[R.Dev];
  if (!IssuePool::usedFor(PerGpu.size()))
    return;
  for (const auto &[L, N] : PerGpu) {
    if (N != 1)
      return;
    // Loaded here, so that the workers only look modules up.
    Program::Gpu *G = nullptr;
    if (!gpuModule(Bufs, Prog, L, G).ok())
      return;
  }
  // Every GPU's range but the last goes to a worker; the launching thread
  // issues the last one while the others start.
  RunState *Last = nullptr;
  for (RunState &R : Runs)
    if (isGpu(R.Dev)) {
      R.Pooled = true;
      Last = &R;
    }
  Last->Pooled = false;
}

void LaunchContext::wakeIssueWorkers(
    const std::vector<PartitionRange> &Ranges) {
  if (FaultInjector::global().countsAcrossDevices())
    return;
  std::vector<Location> Gpus;
  for (const PartitionRange &R : Ranges)
    if (isGpu(R.Device) &&
        std::find(Gpus.begin(), Gpus.end(), R.Device) == Gpus.end())
      Gpus.push_back(R.Device);
  if (!IssuePool::usedFor(Gpus.size()))
    return;
  Gpus.pop_back(); // the launching thread issues the last one
  for (Location L : Gpus)
    Pool.wake(size_t(L));
}

Result LaunchContext::runCpu(RunState &R) {
  Result Res = fillScratch(R, nullptr);
  if (Res.ok())
    Res = launchOne(R.Dev, false, "", K.Cpu, R.First, R.Count, R.ArgPtrs,
                    R.PartParams);
  if (Res.ok())
    Res = readScratch(R, nullptr);
  return Res;
}

/// Merges run \p R (not on M) into M: copies R's write hulls into the
/// partial buffers and runs the merge kernel on M over R's blocks.
Result LaunchContext::merge(RunState &R, RunState &OnM) {
  LaunchPlan::Run Run;
  Run.Device = MergeDev;
  Run.DeviceName = name(MergeDev);
  Run.First = R.First;
  Run.Count = R.Count;
  Run.IsMerge = true;
  Run.MergeFrom = name(R.Dev);
  Run.Variant = isCpu(MergeDev) ? "cpu-merge" : "merge";
  Device &Src = Bufs.device(R.Dev);
  Device &Dst = Bufs.device(MergeDev);
  for (auto &[Id, P] : R.Partials) {
    auto [Tmp, H] = P;
    if (H.empty())
      continue;
    DeviceAddr From = 0;
    Result Res = Bufs.addressOn(*BufById[Id], R.Dev, H.Lo, From);
    if (Res.ok())
      Res = Src.copyDeviceToDevice(Dst, Tmp, From, H.size());
    if (!Res.ok())
      return Res;
    Transfer T{R.Dev, MergeDev, H.Lo, H.size()};
    Run.Copies.push_back({Id, T, name(R.Dev), name(MergeDev)});
    Run.BytesIn += H.size();
  }
  // Original parameters on M, then one partial pointer per merge output.
  std::vector<void *> ArgPtrs = OnM.ArgPtrs;
  std::vector<void *> PartialVals(Info.MergeOutputs.size(), nullptr);
  for (size_t O = 0; O < Info.MergeOutputs.size(); ++O) {
    unsigned ArgNo = Info.MergeOutputs[O];
    for (const PtrArg &P : Ptrs) {
      if (P.ArgNo != ArgNo)
        continue;
      auto It = R.Partials.find(P.Buf->id());
      if (It != R.Partials.end() && !It->second.second.empty())
        // Same offsets as the buffer: partial + (offset - hull start).
        PartialVals[O] = reinterpret_cast<void *>(static_cast<uintptr_t>(
            It->second.first + (P.Offset - It->second.second.Lo)));
      else // nothing written through it: never read
        PartialVals[O] = OnM.Values[ArgNo];
    }
  }
  for (void *&V : PartialVals)
    ArgPtrs.push_back(&V);
  std::vector<uint32_t> PartParams;
  Result Res;
  if (isCpu(MergeDev)) {
    Res = Dst.checkLaunchFault();
    if (Res.ok())
      Res = launchOne(MergeDev, false, "", K.CpuMerge, R.First, R.Count,
                      ArgPtrs, PartParams);
  } else {
    Res = launchOne(MergeDev, true, Info.variant(VariantKind::Merge).Entry,
                    nullptr, R.First, R.Count, ArgPtrs, PartParams);
    if (Res.ok())
      Res = Dst.synchronizeStream(Dst.internalStream(0));
  }
  Plan.BytesMoved += Run.BytesIn;
  Plan.Runs.push_back(std::move(Run));
  return Res;
}

Result LaunchContext::commitWrites(const RunState &R) {
  for (auto &[Id, U] : usesOf(R)) {
    Result Res = Bufs.markAllWritten(*BufById[Id], R.Dev, U.Writes);
    if (!Res.ok())
      return Res;
  }
  return Result::success();
}

void LaunchContext::noteReads(const std::vector<RunState> &Runs) {
  for (auto &[Id, B] : BufById) {
    std::vector<std::pair<Location, const RangeSet *>> Reads;
    RangeSet OnHost;
    for (const RunState &R : Runs) {
      if (!R.Issued || R.Failed)
        continue;
      const RangeUse &Uses = usesOf(R);
      auto It = Uses.find(Id);
      if (It == Uses.end())
        continue;
      Reads.push_back({R.Dev, &It->second.Reads});
      if (Bufs.validityLocation(R.Dev) == HostLocation)
        OnHost.insert(It->second.Reads);
    }
    Bufs.noteLaunchReads(*B, Reads, std::move(OnHost));
  }
}

/// A run that failed after it may have started: its device's replica no
/// longer holds what validity says over the run's writes. Where another
/// location holds those bytes, that one becomes their only holder.
void LaunchContext::dropUnproduced(const RunState &R) {
  for (auto &[Id, U] : usesOf(R)) {
    Buffer &B = *BufById[Id];
    Location VL = Bufs.validityLocation(R.Dev);
    for (ByteRange Rg : U.Writes.ranges())
      for (ByteRange Piece : B.validRanges(VL).intersection(Rg.Lo, Rg.Hi)) {
        for (Location L = HostLocation; L < Location(Bufs.numDevices()); ++L) {
          if (L == R.Dev || Bufs.validityLocation(L) == VL)
            continue;
          if (B.validRanges(L).contains(Piece.Lo, Piece.Hi)) {
            (void)Bufs.markWritten(B, L, Piece);
            break;
          }
        }
      }
  }
}

bool LaunchContext::repeats(const std::vector<PartitionRange> &Given) const {
  // A timed range records events the kept launch did not; CLEAVE_LOG=time
  // times every range.
  if (!Memo || Timed || LogTime || !Excluded.empty() ||
      !sameRanges(Memo->Given, Given))
    return false;
  // The variables it reads are still current where it runs (a
  // cudaMemcpyToSymbol since then, or a kernel writing one, makes stage()
  // copy them again).
  for (const BundleVariableUse &U : Info.Variables)
    for (const RepeatMemo::Run &R : Memo->Runs) {
      const Program::Var &Var = Prog.Vars[U.Variable];
      if (isCpu(R.Dev) ? !Var.CpuValid : !Var.DevValid[size_t(R.Dev)])
        return false;
    }
  // A replay: the same buffers (Engine::launch found them as the kept
  // launch did).
  if (Memo->Replay) {
    if (Memo->Before.size() != BufById.size())
      return false;
    for (const RepeatMemo::Found &F : Memo->Before)
      if (!BufById.count(F.Id))
        return false;
  }
  return true;
}

Result LaunchContext::finishRepeat(std::vector<RunState> &Runs, bool Replay) {
  Repeated = true;
  if (!Replay)
    return Result::success();
  noteReads(Runs);
  for (RunState &R : Runs)
    if (Result Res = commitWrites(R); !Res.ok())
      return Res;
  Phases.mark("commit");
  return Result::success();
}

bool LaunchContext::mayChain() const {
  return !deferralOff() && !FaultInjector::global().active() && !Timed &&
         !LogTime && Excluded.empty();
}

bool LaunchContext::chainsAlone(
    const std::vector<PartitionRange> &Ranges) const {
  // Its copies into the GPU (inputs not held there, from the host copy)
  // and its kernel need no order beyond the GPU's own stream: no queued
  // kernel reads bytes the GPU does not hold, since only the host (which
  // settles first) or another device (a launch that does not chain) can
  // take them away. A variable staged again would overwrite what a queued
  // kernel may still read: then the launch waits.
  if (Ranges.empty() || !isGpu(Ranges.front().Device) ||
      !Info.Combined.empty())
    return false;
  Location G = Ranges.front().Device;
  for (const PartitionRange &R : Ranges)
    if (R.Device != G)
      return false;
  for (const BundleVariableUse &U : Info.Variables)
    if (U.Written || !Prog.Vars[U.Variable].DevValid[size_t(G)])
      return false;
  return Bufs.deferredOnlyOn(G);
}

/// False, with Defer cleared, when a GPU's wait could not be queued (the
/// caller then waits for the deferred work).
bool LaunchContext::orderRuns(const std::vector<RunState> &Runs) {
  // Per GPU, the GPUs its copies read from.
  std::map<Location, std::set<Location>> Sources;
  for (const RunState &R : Runs) {
    if (!isGpu(R.Dev))
      continue;
    std::set<Location> &S = Sources[R.Dev];
    for (const auto &[Id, Copies] : R.MoveIn)
      for (const Transfer &T : Copies)
        if (isGpu(T.Src))
          S.insert(T.Src);
  }
  for (const auto &[Gpu, S] : Sources)
    if (!Bufs.orderAfterDeferred(Gpu, S).ok()) {
      Defer = false;
      return false;
    }
  return true;
}

/// Once every run was issued (the workers' too): each GPU's completion is
/// recorded behind its runs with what they claim (their writes and the
/// rows they pulled), and true. Otherwise, or when a record fails, the
/// workers' GPUs are waited for here, as their workers would have, and
/// phase 3 goes on as usual.
bool LaunchContext::deferRuns(std::vector<RunState> &Runs, bool NoneFailed) {
  bool Clean = NoneFailed;
  for (RunState &R : Runs) {
    if (R.Pooled) {
      Pool.wait(size_t(R.Dev));
      Clean &= R.PoolIssue.ok();
    }
    Clean &= R.Issued && !R.Failed;
  }
  if (Clean) {
    std::map<Location, std::vector<BufferManager::DeferredClaim>> Claims;
    std::map<Location, std::set<Location>> PulledFrom;
    for (RunState &R : Runs) {
      if (!isGpu(R.Dev))
        continue;
      for (const auto &[Id, T] : R.Pulled)
        PulledFrom[R.Dev].insert(T.Src);
      std::vector<BufferManager::DeferredClaim> &C = Claims[R.Dev];
      for (auto &[Id, U] : usesOf(R))
        if (!U.Writes.empty())
          C.push_back({BufById.at(Id), U.Writes});
      for (auto &[Id, T] : R.Pulled)
        C.push_back({BufById.at(Id), RangeSet(T.Offset, T.Offset + T.Bytes)});
    }
    for (auto &[G, C] : Claims)
      if (!Bufs.defer(G, std::move(C), PulledFrom[G]).ok()) {
        Clean = false;
        break;
      }
    Phases.mark("deferred");
  }
  if (Clean) {
    for (RunState &R : Runs)
      R.Pulled.clear();
    return true;
  }
  for (RunState &R : Runs)
    if (R.Pooled && R.Deferred && R.PoolIssue.ok()) {
      Device &D = Bufs.device(R.Dev);
      R.PoolWait = D.synchronizeStream(D.internalStream(0));
    }
  Defer = false;
  return false;
}

std::vector<RunState>
LaunchContext::repeatRuns(std::vector<PartitionRange> &Ranges) {
  M = Memo->Whole ? Mode::Whole : Mode::Exact;
  MergeDev = -1;
  Combining = false;
  Combines.clear();
  CombineBytes = 0;
  std::string Name = std::move(Plan.KernelName);
  Plan = Memo->Plan;
  Plan.KernelName = std::move(Name);
  Plan.Repeated = true;
  Plan.Replayed = Memo->Replay;
  if (Memo->Replay) { // prepareAll() fills these again as the copies go
    Plan.Runs.clear();
    Plan.BytesMoved = 0;
    Plan.MovedAtOnce = 0;
  }
  Ranges.clear();
  std::vector<RunState> Runs(Memo->Runs.size());
  for (size_t I = 0; I < Runs.size(); ++I) {
    const RepeatMemo::Run &From = Memo->Runs[I];
    RunState &R = Runs[I];
    R.Dev = From.Dev;
    R.First = From.First;
    R.Count = From.Count;
    R.PlanIndex = From.PlanIndex;
    if (Memo->Replay) {
      // The run's entry of the kept plan, and its copies, in their order.
      R.PlanRun = Memo->Plan.Runs[From.PlanIndex];
      R.PlanRun.Copies.clear();
      R.PlanRun.BytesIn = 0;
      for (const LaunchPlan::Run::Copy &C :
           Memo->Plan.Runs[From.PlanIndex].Copies) {
        if (R.MoveIn.empty() || R.MoveIn.back().first != C.BufferId)
          R.MoveIn.push_back({C.BufferId, {}});
        R.MoveIn.back().second.push_back(C.T);
      }
    }
    R.Values = From.Values;
    R.ArgPtrs.assign(Req.Args, Req.Args + Info.Params.size());
    for (const PtrArg &P : Ptrs)
      R.ArgPtrs[P.ArgNo] = &R.Values[P.ArgNo];
    R.Repeat = &From.Uses;
    Ranges.push_back({R.Dev, R.First, R.Count});
  }
  return Runs;
}

/// Keeps a launch that ran as decided: no device failed, nothing moved, no
/// merge, no combined outputs, no variable written. Engine::launch keeps
/// it only if it changed no buffer's state either.
void LaunchContext::keepRuns(std::vector<RunState> &Runs,
                             std::vector<PartitionRange> Given) {
  if (M == Mode::Merge || Combining || !Excluded.empty() ||
      !Plan.Recoveries.empty())
    return;
  // Bytes moved: kept for a replay, when they went between GPUs (a copy
  // through the host also depends on its pinning and staging).
  if (Plan.BytesMoved) {
    if (Before.empty())
      return;
    for (const LaunchPlan::Run &R : Plan.Runs)
      for (const LaunchPlan::Run::Copy &C : R.Copies)
        if (Bufs.validityLocation(C.T.Src) == HostLocation ||
            Bufs.validityLocation(C.T.Dst) == HostLocation)
          return;
  }
  for (const BundleVariableUse &U : Info.Variables)
    if (U.Written)
      return;
  for (const RunState &R : Runs)
    if (!R.Issued || R.Failed || R.Scratch || !R.Partials.empty())
      return;
  RepeatMemo &Out = Kept.emplace();
  Out.Before = std::move(Before);
  Out.Given = std::move(Given);
  Out.Whole = M == Mode::Whole;
  Out.Plan = Plan;
  Out.Plan.Repeated = false;
  for (RunState &R : Runs) {
    RepeatMemo::Run &To = Out.Runs.emplace_back();
    To.Dev = R.Dev;
    To.First = R.First;
    To.Count = R.Count;
    To.PlanIndex = R.PlanIndex;
    To.Values = std::move(R.Values);
    To.Uses = std::move(R.Uses);
  }
}

/// decide() (on the first attempt), then each run's footprints and what
/// must be valid on its device before it runs: its reads, coarse write
/// hulls that it does not hold, and on a merge device every range's bytes.
Result LaunchContext::makeRuns(std::vector<PartitionRange> &Ranges,
                               bool Decide, std::vector<RunState> &Runs,
                               std::map<uint64_t, RangeSet> &AllWrites,
                               std::map<uint64_t, RangeSet> &AllReads) {
  DecidedRanges.clear();
  DecidedUses.clear();
  if (Decide) {
    Result R = decide(Ranges);
    if (!R.ok())
      return R;
  }
  bool Decided = sameRanges(DecidedRanges, Ranges);
  // Footprints per run (decide()'s, when it evaluated these ranges);
  // what must be valid before each.
  Runs.resize(Ranges.size());
  for (size_t I = 0; I < Ranges.size(); ++I) {
    Runs[I].Dev = Ranges[I].Device;
    Runs[I].First = Ranges[I].First;
    Runs[I].Count = Ranges[I].Count;
    if (Decided) {
      Runs[I].Uses = std::move(DecidedUses[I]);
      continue;
    }
    // The whole grid on a device that alone holds every byte of every
    // buffer it is given: nothing to move in, no other copy to make stale,
    // so its footprints (which change with its arguments, and cost more
    // than the rest of a launch) are not needed.
    if (Ranges.size() == 1 && Runs[I].Count == Total && M != Mode::Merge &&
        Info.Combined.empty() &&
        std::all_of(Ptrs.begin(), Ptrs.end(), [&](const PtrArg &P) {
          return P.Buf->heldOnlyBy(Runs[I].Dev);
        }))
      continue;
    Result R = evaluate(Runs[I].First, Runs[I].Count, Runs[I].Uses);
    if (!R.ok())
      return R;
  }
  DecidedRanges.clear();
  DecidedUses.clear();
  // Coarse write hulls stand for the writes only where no other device
  // writes inside them, and once their device holds the bytes between
  // the rows: moved there before the run (once; the device holds them
  // from then on). A merge device needs every range's exact writes.
  {
    std::vector<RangeUse *> UsePtrs;
    for (RunState &R : Runs) {
      if (M == Mode::Merge)
        for (auto &[Id, U] : R.Uses)
          refineWrites(U, BufById.at(Id)->size());
      UsePtrs.push_back(&R.Uses);
    }
    resolveCoarse(Ranges, UsePtrs);
    for (RunState &R : Runs)
      for (auto &[Id, U] : R.Uses)
        if (U.WritesCoarse &&
            !BufById.at(Id)->holds(R.Dev, hull(U.Writes)))
          R.MustHold[Id].insert(hull(U.Writes));
  }
  for (RunState &R : Runs)
    for (auto &[Id, U] : R.Uses) {
      if (!U.WritesExact)
        R.MustHold[Id].insert(U.Writes);
      AllWrites[Id].insert(U.Writes);
      AllReads[Id].insert(U.Reads);
    }
  // M ends up holding every written byte, so it must hold their current
  // contents first; the merge kernels it runs for the other ranges
  // recompute those ranges' addresses and conditions, reading what the
  // ranges read.
  if (M == Mode::Merge)
    for (RunState &R : Runs)
      if (R.Dev == MergeDev) {
        for (auto &[Id, W] : AllWrites)
          R.MustHold[Id].insert(W);
        for (auto &[Id, Rd] : AllReads)
          R.MustHold[Id].insert(Rd);
      }
  return Result::success();
}

Result LaunchContext::attempt(std::vector<PartitionRange> Ranges,
                              bool Decide) {
  // The first attempt's ranges, for keepRuns().
  std::vector<PartitionRange> Given;
  for (;;) {
    wakeIssueWorkers(Ranges);
    // A repeat takes the kept launch's runs, footprints and plan; it has no
    // copies to make and nothing to mark (RepeatMemo).
    bool Repeat = Decide && repeats(Ranges);
    bool Replay = Repeat && Memo->Replay;
    // A repeat queues behind the deferred work of earlier launches (their
    // copies and runs were planned as if it were done); anything else
    // waits for it first. It returns before its own work is done only if
    // the caller said it may.
    bool Alone = !Repeat && Decide && mayChain() && chainsAlone(Ranges);
    bool Chain = (Repeat && mayChain()) || Alone;
    Defer = Chain && Req.MayDefer;
    if (!Chain)
      if (Result S = Bufs.settle(); !S.ok())
        return S;
    std::vector<RunState> Runs;
    std::map<uint64_t, RangeSet> AllWrites, AllReads;
    // Queued behind the deferred work (or there was none to queue behind).
    bool Ordered = false;
    if (Repeat) {
      Runs = repeatRuns(Ranges);
      Phases.mark("repeat");
      Ordered = Chain && orderRuns(Runs);
      if (Chain && !Ordered)
        if (Result S = Bufs.settle(); !S.ok())
          return S;
    } else {
      if (Decide) {
        Given = Ranges;
        // The buffers as found, should the launch be kept for a replay.
        Before.clear();
        if (!Timed && !LogTime)
          for (auto &[Id, B] : BufById)
            Before.push_back({Id, B, B->state()});
      }
      Result R = makeRuns(Ranges, Decide, Runs, AllWrites, AllReads);
      if (!R.ok())
        return R;
      Phases.mark("decide");
      // Decided as one range on one GPU, with nothing else to order.
      Ordered = Alone && M != Mode::Merge && !Combining;
      if (Alone && !Ordered) {
        Defer = false;
        if (Result S = Bufs.settle(); !S.ok())
          return S;
      }
    }

    size_t PlanMark = Plan.Runs.size();
    // Partial buffers on M, freed on every path.
    std::vector<DeviceAddr> Temps;
    auto FreeTemps = [&] {
      for (DeviceAddr A : Temps)
        (void)Bufs.device(MergeDev).free(A);
      Temps.clear();
    };

    // Combined outputs: the host copies hold the values before the launch
    // (the partials are combined into them), every run has its scratch.
    std::optional<Failure> Fail;
    if (Combining) {
      for (const CombineUse &C : Combines) {
        Result Res = Bufs.makeValid(*C.P->Buf, HostLocation, C.Bytes);
        if (!Res.ok())
          return Res;
      }
      Fail = allocateScratch(Runs);
    }

    // Phase 1: prepare. A failure here has changed nothing but validity-
    // exact transfers: drop the device and start again.
    if (!Fail && (!Repeat || Replay)) {
      Fail = prepareAll(Runs, Replay);
      Phases.mark("prepare");
    }
    if (!Fail && M == Mode::Merge)
      for (RunState &R : Runs) {
        if (R.Dev == MergeDev)
          continue;
        for (auto &[Id, U] : R.Uses) {
          ByteRange H = hull(U.Writes);
          DeviceAddr Tmp = 0;
          if (!H.empty()) {
            Result Res = Bufs.device(MergeDev).allocate(H.size(), Tmp);
            if (!Res.ok()) {
              Fail = Failure{MergeDev, Res};
              break;
            }
            Temps.push_back(Tmp);
          }
          R.Partials[Id] = {Tmp, H};
        }
        if (Fail)
          break;
      }
    if (Fail) {
      FreeTemps();
      Plan.Runs.resize(PlanMark); // BytesMoved keeps what did move
      Excluded.insert(Fail->Dev);
      Location To = fallbackFor(Fail->Dev, Ranges);
      if (To < 0)
        return Fail->Err;
      std::vector<std::pair<uint64_t, uint64_t>> Blocks;
      for (PartitionRange &R : Ranges)
        if (R.Device == Fail->Dev) {
          Blocks.push_back({R.First, R.First + R.Count});
          R.Device = To;
        }
      report(Fail->Dev, Fail->Err, Blocks, To);
      continue;
    }

    // A caller's next launch is often queued while this one is planned
    // (the host thread pushes it right after this one): asked again here,
    // the first launch of a series defers too, instead of being waited for
    // while the next one waits in the queue.
    if (Ordered && !Defer && Req.QueuedBehind && Req.QueuedBehind())
      Defer = true;

    // Phase 2: issue, M's runs first. A run whose launch is refused has not
    // started.
    EventsUsed.clear();
    std::vector<size_t> Order;
    for (size_t I = 0; I < Runs.size(); ++I)
      if (M == Mode::Merge && Runs[I].Dev == MergeDev)
        Order.push_back(I);
    for (size_t I = 0; I < Runs.size(); ++I)
      if (!(M == Mode::Merge && Runs[I].Dev == MergeDev))
        Order.push_back(I);
    std::map<Location, Result> Failed;
    bool AnyIssued = false;
    choosePooled(Runs);
    for (size_t I : Order) {
      RunState &R = Runs[I];
      if (Failed.count(R.Dev)) {
        R.Failed = true;
        continue;
      }
      R.Deferred = Defer && isGpu(R.Dev);
      Result Res;
      if (R.Pooled) {
        timeEvents(R);
        RunState *X = &R;
        if (Pool.tryPost(size_t(R.Dev), [this, X] {
              Device &D = Bufs.device(X->Dev);
              X->PoolIssue = issueLaunch(*X);
              if (!X->PoolIssue.ok() || X->Deferred)
                return;
              X->PoolWait = D.synchronizeStream(D.internalStream(0));
              float Ms = 0;
              if (X->PoolWait.ok() && X->TimeStart &&
                  D.elapsedTime(X->TimeStart, X->TimeEnd, Ms).ok())
                X->PoolMs = Ms;
            })) {
          Phases.mark("post", name(R.Dev));
          R.Issued = true; // until its worker says otherwise (phase 3)
          AnyIssued = true;
          continue;
        }
        R.Pooled = false; // its worker sleeps: issued here
        Res = issueLaunch(R);
      } else {
        Res = issue(R);
      }
      Phases.mark("issue", name(R.Dev));
      if (!Res.ok()) {
        if (M == Mode::Merge && R.Dev == MergeDev) {
          if (!AnyIssued) { // nothing ran: start again without M
            Fail = Failure{R.Dev, Res};
            break;
          }
          // M's earlier runs changed its replica: not recoverable here.
          (void)Bufs.device(R.Dev).synchronize();
          for (RunState &X : Runs)
            dropUnproduced(X);
          FreeTemps();
          return Result::error(Res.code(),
                               "the merge device failed: " + Res.message());
        }
        R.Failed = true;
        Failed[R.Dev] = Res;
        continue;
      }
      R.Issued = true;
      AnyIssued = true;
    }
    if (Fail) {
      FreeTemps();
      Plan.Runs.resize(PlanMark); // BytesMoved keeps what did move
      Excluded.insert(Fail->Dev);
      Location To = fallbackFor(Fail->Dev, Ranges);
      if (To < 0)
        return Fail->Err;
      std::vector<std::pair<uint64_t, uint64_t>> Blocks;
      for (PartitionRange &R : Ranges)
        if (R.Device == Fail->Dev) {
          Blocks.push_back({R.First, R.First + R.Count});
          R.Device = To;
        }
      report(Fail->Dev, Fail->Err, Blocks, To);
      continue;
    }

    // Phase 3: the CPU runs (one after the other, each on every core) while
    // the GPUs run, then wait for the GPUs.
    for (RunState &R : Runs) {
      if (!R.Issued || !isCpu(R.Dev))
        continue;
      auto Start = std::chrono::steady_clock::now();
      Result Res = runCpu(R);
      if (Res.ok()) {
        double Ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - Start)
                        .count();
        recordTime(R, Ms);
        logTime(R, Ms);
      }
      Phases.mark("run", name(R.Dev));
      if (!Res.ok()) {
        R.Failed = true;
        if (!Failed.count(R.Dev))
          Failed[R.Dev] = Res;
        dropUnproduced(R);
      }
    }
    if (Defer && deferRuns(Runs, Failed.empty())) {
      Plan.Deferred = true;
      if (Repeat)
        return finishRepeat(Runs, Replay);
      // A launch alone on its GPU: its reads and writes as they will be.
      noteReads(Runs);
      for (RunState &R : Runs)
        if (Result Res = commitWrites(R); !Res.ok())
          return Res;
      Phases.mark("commit");
      if (Decide)
        keepRuns(Runs, std::move(Given));
      return Result::success();
    }
    std::set<Location> Gpus;
    for (RunState &R : Runs)
      if (R.Issued && isGpu(R.Dev) && !R.Pooled)
        Gpus.insert(R.Dev);
    for (Location G : Gpus) {
      Device &D = Bufs.device(G);
      Result Res = D.synchronizeStream(D.internalStream(0));
      Phases.mark("wait", name(G));
      if (Res.ok()) {
        for (RunState &R : Runs) {
          float Ms = 0;
          if (R.Dev == G && R.Issued && R.TimeStart &&
              D.elapsedTime(R.TimeStart, R.TimeEnd, Ms).ok()) {
            recordTime(R, Ms);
            logTime(R, Ms);
          }
        }
        continue;
      }
      if (!Failed.count(G))
        Failed[G] = Res;
      for (RunState &R : Runs)
        if (R.Dev == G && R.Issued) {
          R.Failed = true;
          dropUnproduced(R);
        }
    }
    // The workers' GPUs: their ranges were issued and waited for there.
    for (RunState &R : Runs) {
      if (!R.Pooled)
        continue;
      Pool.wait(size_t(R.Dev));
      Phases.mark("wait", name(R.Dev));
      if (!R.PoolIssue.ok()) { // refused: it has not started
        R.Issued = false;
        R.Failed = true;
        Failed.emplace(R.Dev, R.PoolIssue);
        continue;
      }
      if (!R.PoolWait.ok()) {
        R.Failed = true;
        Failed.emplace(R.Dev, R.PoolWait);
        dropUnproduced(R);
        continue;
      }
      if (R.PoolMs >= 0) {
        recordTime(R, R.PoolMs);
        logTime(R, R.PoolMs);
      }
    }
    // Copies queued ahead of a kernel that was not waited for (refused, or
    // its device failed) land now, or are not claimed.
    for (RunState &R : Runs)
      settlePulls(R, R.Issued && !R.Failed);
    if (Repeat) {
      bool Clean = Failed.empty();
      for (const RunState &R : Runs)
        Clean &= R.Issued && !R.Failed;
      if (Clean)
        return finishRepeat(Runs, Replay);
      // Recovery as usual, with the footprints in the runs.
      for (RunState &R : Runs)
        if (R.Repeat && R.Uses.empty())
          R.Uses = *R.Repeat;
    }
    if (M == Mode::Merge && Failed.count(MergeDev)) {
      for (RunState &R : Runs)
        dropUnproduced(R);
      FreeTemps();
      return Result::error(Failed[MergeDev].code(),
                           "the merge device failed: " +
                               Failed[MergeDev].message());
    }

    // A kernel's own illegal address is no device's failure: re-run
    // elsewhere it would fault again (on a GPU, corrupt memory first). The
    // launch fails as on CUDA; what it wrote is undefined, and no location
    // claims bytes that a run did not produce.
    for (auto &[D, Res] : Failed)
      if (Res.code() == ErrorCode::IllegalAddress) {
        for (RunState &R : Runs)
          dropUnproduced(R);
        FreeTemps();
        return Res;
      }

    noteReads(Runs);

    // Failed runs of other devices: on M, in place, when merging.
    std::vector<RunState *> Redo;
    for (RunState &R : Runs)
      if (R.Failed)
        Redo.push_back(&R);
    if (M == Mode::Merge && !Redo.empty()) {
      std::map<Location, std::vector<std::pair<uint64_t, uint64_t>>> Blocks;
      for (RunState *R : Redo)
        Blocks[R->Dev].push_back({R->First, R->First + R->Count});
      for (auto &[D, B] : Blocks) {
        Excluded.insert(D);
        report(D, Failed[D], B, MergeDev);
      }
      for (RunState *R : Redo) {
        R->Dev = MergeDev;
        R->Partials.clear();
        R->Failed = false;
        Result Res = prepare(*R, true);
        if (Res.ok())
          Res = issue(*R);
        if (Res.ok() && isCpu(MergeDev))
          Res = runCpu(*R);
        if (Res.ok() && isGpu(MergeDev))
          Res = Bufs.device(MergeDev).synchronizeStream(
              Bufs.device(MergeDev).internalStream(0));
        if (!Res.ok()) {
          for (RunState &X : Runs)
            dropUnproduced(X);
          FreeTemps();
          return Result::error(Res.code(),
                               "the merge device failed: " + Res.message());
        }
      }
      Redo.clear();
    }

    // Phase 4: merges, then writes.
    if (M == Mode::Merge) {
      RunState *OnM = nullptr;
      for (RunState &R : Runs)
        if (R.Dev == MergeDev)
          OnM = &R;
      if (!OnM) {
        FreeTemps();
        return Result::error(ErrorCode::Unknown, "merge device has no run");
      }
      for (RunState &R : Runs) {
        if (R.Dev == MergeDev)
          continue;
        Result Res = merge(R, *OnM);
        if (Res.ok())
          continue;
        // The partial could not be copied or merged: re-run on M in place.
        Location D = R.Dev;
        Excluded.insert(D);
        report(D, Res, {{R.First, R.First + R.Count}}, MergeDev);
        R.Dev = MergeDev;
        R.Partials.clear();
        Res = prepare(R, true);
        if (Res.ok())
          Res = issue(R);
        if (Res.ok() && isCpu(MergeDev))
          Res = runCpu(R);
        if (Res.ok() && isGpu(MergeDev))
          Res = Bufs.device(MergeDev).synchronizeStream(
              Bufs.device(MergeDev).internalStream(0));
        if (!Res.ok()) {
          for (RunState &X : Runs)
            dropUnproduced(X);
          FreeTemps();
          return Result::error(Res.code(),
                               "the merge device failed: " + Res.message());
        }
      }
      FreeTemps();
      for (auto &[Id, W] : AllWrites)
        for (ByteRange Rg : W.ranges()) {
          Result Res = Bufs.markWritten(*BufById[Id], MergeDev, Rg);
          if (!Res.ok())
            return Res;
        }
      return Result::success();
    }

    // Exact or whole: each successful run's writes (and partials); failed
    // runs again on another device.
    if (Result Res = combineRuns(Runs); !Res.ok())
      return Res;
    for (RunState &R : Runs)
      if (!R.Failed) {
        Result Res = commitWrites(R);
        if (!Res.ok())
          return Res;
        for (const BundleVariableUse &U : Info.Variables)
          if (U.Written)
            variableWritten(Bufs, Prog, U.Variable, R.Dev);
      }
    Phases.mark("commit");
    if (Redo.empty()) {
      if (Decide)
        keepRuns(Runs, std::move(Given));
      return Result::success();
    }
    std::vector<PartitionRange> Again;
    std::map<Location, std::vector<std::pair<uint64_t, uint64_t>>> Blocks;
    for (RunState *R : Redo) {
      Excluded.insert(R->Dev);
      Blocks[R->Dev].push_back({R->First, R->First + R->Count});
    }
    for (auto &[D, B] : Blocks) {
      Location To = fallbackFor(D, Ranges);
      if (To < 0)
        return Failed[D];
      report(D, Failed[D], B, To);
      for (RunState *R : Redo)
        if (R->Dev == D)
          Again.push_back({To, R->First, R->Count});
    }
    Ranges = std::move(Again);
    Decide = false; // the same reconciliation, on the remaining ranges
  }
}

//===----------------------------------------------------------------------===//
// The model policy (Planner.h, docs/partitioner.md)
//===----------------------------------------------------------------------===//

namespace {

/// What a range costs the engine besides the device's own launch: footprint
/// evaluation, transfer planning, argument translation. bench/engine
/// measures 3-9 us per range on null GPUs on the 2-core build VM
/// (bench/results/engine-overhead-vm-2026-11-21-s3.md); charged at about
/// twice that. A GPU adds the profile's launch and synchronization; a CPU
/// range its executor's dispatch.
constexpr double EngineRangeMs = 0.01;
constexpr double CpuRangeMs = 0.02;
/// The engine's host time per row of an exact write set in a split launch
/// (validity updates of every location, the rows' expansion): 0.06 us over
/// 2 null GPUs and 0.11 us over 4 for a transpose's column bands on the
/// build VM (the same results); the larger one.
constexpr double EngineRowUs = 0.1;

/// The seed's floor: a GPU wave takes at least 2 us, a CPU block 1 ns per
/// thread (the seed has no compute term; measurements correct it).
constexpr double GpuSeedMinWaveMs = 0.002;
constexpr double CpuSeedNsPerThread = 1.0;

/// The program's copies into and out of the host copy move about 0.7 bytes
/// per byte of the CPU's triad bandwidth: on 4x H200's host, vecadd from
/// the host on the CPU alone spent 37 ms more than with its data resident,
/// copying 3.2 GB (87 GB/s), against a triad of 121 GB/s
/// (bench/results/headline-h200x4-2026-11-22-s16.md).
constexpr double HostCopyPerTriad = 0.7;
/// Launches without any of the program's copies, counted at one search,
/// after which copies before two launches in a row search again at once
/// (ModelState::CachedPlan::Quiet): more than a search's first gaps (1 to
/// 4 launches), which say nothing of a pattern.
constexpr uint64_t QuietLaunches = 4;

} // namespace

PlanDevice LaunchContext::planDevice(Location L, unsigned BlockThreads) {
  const DeviceProperties &Props = Bufs.device(L).properties();
  const DeviceProfile &Prof = Model.P->profile();
  PlanDevice D;
  D.Name = Props.Name;
  // GPUs of one model share a table (SKMD profiles device types): their
  // ranges pool their measurements, and equal GPUs get equal shares
  // rather than shares that follow each table's noise.
  D.Identity = Props.Description;
  if (isGpu(L)) {
    D.Gpu = true;
    const GpuProfile *G = Prof.gpu(Props.Ordinal);
    unsigned SMs = std::max(1u, Props.ComputeUnits);
    // Resident blocks per SM of the function that runs shares (the
    // partition-ready variant when there is one), from the driver; the
    // thread and block limits when the query fails.
    const BundleVariant &Part = Info.variant(VariantKind::Partition);
    const std::string &Entry =
        Part.Present ? Part.Entry : Info.variant(VariantKind::Original).Entry;
    unsigned PerSM = 0;
    FunctionHandle F = nullptr;
    if (gpuFunction(Bufs, Prog, L, Entry, F).ok())
      (void)Bufs.device(L).maxActiveBlocksPerSM(F, BlockThreads,
                                                Req.DynamicSharedBytes, PerSM);
    if (!PerSM) {
      unsigned Threads = G && G->MaxThreadsPerSM ? G->MaxThreadsPerSM : 2048;
      unsigned Blocks = G && G->MaxBlocksPerSM ? G->MaxBlocksPerSM : 32;
      PerSM = std::max(1u, std::min(Blocks, Threads / std::max(1u,
                                                               BlockThreads)));
    }
    D.Wave = uint64_t(SMs) * PerSM;
    D.SeedGBps = G && G->DramGBps > 0
                     ? G->DramGBps
                     : SMs * profile_defaults::GpuDramGBpsPerSM;
    D.SeedMinWaveMs = GpuSeedMinWaveMs;
    double Us = G && G->LaunchUs > 0 ? G->LaunchUs + G->SyncUs
                                     : profile_defaults::GpuLaunchUs;
    D.FixedMs = Us / 1000.0 + EngineRangeMs;
    // A copy is issued and waited for like a launch.
    D.CopyLatencyMs = Us / 1000.0;
    D.LinkGBps = G && G->PageableH2DGBps > 0
                     ? G->PageableH2DGBps
                     : profile_defaults::GpuHostLinkGBps;
  } else {
    unsigned Threads = std::max(1u, Exec.numThreads());
    D.Wave = Threads;
    D.SeedGBps = Prof.Cpu.TriadGBps > 0
                     ? Prof.Cpu.TriadGBps
                     : Threads * profile_defaults::CpuTriadGBpsPerThread;
    D.SeedMinWaveMs = BlockThreads * CpuSeedNsPerThread * 1e-6;
    D.FixedMs = CpuRangeMs;
    // Its inputs come from GPUs: a copy there, issued and waited for.
    const GpuProfile *G = Prof.gpu(0);
    D.CopyLatencyMs = (G && G->LaunchUs > 0 ? G->LaunchUs + G->SyncUs
                                            : profile_defaults::GpuLaunchUs) /
                      1000.0;
    D.LinkGBps = Prof.Cpu.TriadOneThreadGBps > 0
                     ? Prof.Cpu.TriadOneThreadGBps
                     : profile_defaults::CpuOneThreadGBps;
    D.SerialGroup = 0; // every CPU device runs on the same executor
    // ... on the same cores: one table for all of them, so what cpu0
    // measured holds for cpu1 too.
    D.Identity = "cpu executor (" + std::to_string(Threads) + " threads)";
  }
  return D;
}

Result LaunchContext::planModel(const std::vector<Location> &Devs,
                                std::vector<PartitionRange> &Out) {
  Planner &Pl = Model.planner(Bufs);
  Model.announce();
  const DeviceProfile &Prof = Pl.profile();
  Timed = true;
  unsigned BlockThreads = Req.Block[0] * Req.Block[1] * Req.Block[2];
  auto Name = Model.TableNames.find(&Info);
  if (Name == Model.TableNames.end())
    Name = Model.TableNames
               .emplace(&Info, tableKernelName(Info.Name,
                                               Prog.B.Source + "\n" +
                                                   Info.Footprints))
               .first;
  Key.Kernel = Name->second;
  for (int X = 0; X < 3; ++X)
    Key.Block[X] = Req.Block[X];
  Key.SharedBytes = Req.DynamicSharedBytes;
  Key.GridClass = gridClass(Total);

  // A cached decision for the same launch shape (key, grid size class,
  // buffers and devices) runs again until its next planned search: launches 1-4 each
  // search (the tables and the data's place settle), then launches 9, 19,
  // 39, ... (the gap doubles, at most 64). Only where to run is cached:
  // every launch still goes through decide() and attempt(), so correctness
  // never depends on it. Scalar arguments and offsets into the buffers are
  // not part of the shape: a loop whose launches differ only in a time
  // step or a row index (a dynamic program, an elimination) would
  // otherwise search at every launch, for a decision that the tables,
  // which do not see arguments either, make the same. Past MaxCachedPlans
  // shapes the cache starts over. Built at every launch, so without
  // temporaries.
  std::string PlanKey = Key.text();
  PlanKey.reserve(PlanKey.size() + 24 + 24 * (2 * Ptrs.size() + Devs.size()));
  auto Append = [&PlanKey](char Sep, int64_t V) {
    char Digits[24];
    PlanKey += Sep;
    PlanKey.append(Digits,
                   std::to_chars(Digits, Digits + sizeof(Digits), V).ptr);
  };
  for (const PtrArg &P : Ptrs) {
    Append(';', P.ArgNo);
    Append(':', int64_t(P.Buf->id()));
  }
  for (Location L : Devs)
    Append('@', L);
  if (Model.Plans.size() >= ModelState::MaxCachedPlans &&
      !Model.Plans.count(PlanKey))
    Model.Plans.clear();
  ModelState::CachedPlan &Cached = Model.Plans[PlanKey];
  uint64_t Prior = Cached.Launches++;
  // The key has the grid's size class (PerfKey::GridClass), not its block
  // count: a grid that shrinks by a block per launch (an elimination) keeps
  // a decision to run whole on one device, which holds for any count; a
  // split holds for the count it was made for only.
  bool Kept = Prior > 0 && Prior < Cached.NextPlan &&
              (Cached.Total == Total || Cached.Ranges.size() == 1);
  // A kept decision of a quiet key searches again when the program's
  // copies precede two launches in a row: a phase of launches on resident
  // data has ended, and uploads (or read-backs) now come with every launch.
  // The decision was made without them, and the next planned search may
  // be up to 64 launches away; spread over the quiet launches before them,
  // the copies would count for a fraction of what they cost. Copies before
  // one launch only (an iteration's upload every few steps) change
  // nothing.
  bool CopiesResumed = false;
  if (Kept && Cached.Quiet) {
    uint64_t Copies = 0;
    for (const PtrArg &P : Ptrs)
      Copies += P.Buf->programWrites() + P.Buf->programReads();
    if (Copies != Cached.CopiesSeen) {
      CopiesResumed = Cached.CopiedBefore + 1 == Prior;
      Cached.CopiedBefore = Prior;
      Cached.CopiesSeen = Copies;
    }
  }
  if (Kept && !CopiesResumed) {
    // A kept decision's ranges are timed only on the launch before the
    // next search, which then sees a fresh measurement: events around
    // every range cost each GPU a few microseconds per launch (two records,
    // an elapsed-time query), as much as a short kernel's split gains.
    Timed = Prior + 1 == Cached.NextPlan;
    Out = Cached.Ranges;
    if (Out.size() == 1) // whole on one device, at this launch's count
      Out.front() = {Out.front().Device, 0, Total};
    if (Timed) // only timings read them
      PlanDevs = Cached.Devs;
    if (envHas("CLEAVE_LOG", "plan"))
      std::fprintf(stderr,
                   "plan %s (model): the decision of launch %llu, kept "
                   "until launch %llu\n",
                   Key.text().c_str(),
                   static_cast<unsigned long long>(Cached.PlannedAt),
                   static_cast<unsigned long long>(Cached.NextPlan + 1));
    return Result::success();
  }

  // The search's host time, for CLEAVE_LOG=plan: footprints, the bytes
  // each device misses, the planner.
  auto SearchStart = std::chrono::steady_clock::now();
  PlanRequest PR;
  PR.Key = Key;
  PR.TotalBlocks = Total;
  PR.PriorLaunches = Prior;
  for (Location L : Devs) {
    PlanDevs[L] = planDevice(L, BlockThreads);
    PR.Devices.push_back(PlanDevs[L]);
  }

  // The whole grid's footprint: the seed's bytes per block, whether the
  // writes are exact, the bytes a merge would handle.
  // Combined outputs are left out of the footprints the search weighs, as
  // a split leaves them out of transfers and validity (their scratch,
  // memset and combine are a region's bytes, small next to the data).
  // decide() sets Combining again for the ranges chosen.
  Combining = !Info.Combined.empty();
  RangeUse Whole;
  Result Ev = evaluate(0, Total, Whole);
  if (!Ev.ok())
    return Ev;
  double Bytes = 0, Written = 0;
  bool Exact = true;
  for (auto &[Id, U] : Whole) {
    Bytes += double(U.Reads.totalBytes() + U.Writes.totalBytes());
    Written += double(U.Writes.totalBytes());
    Exact &= U.WritesExact;
  }
  PR.BytesPerBlock = Bytes / double(std::max<uint64_t>(1, Total));

  // The host's bookkeeping of a split: write sets whose hulls overlap
  // between ranges stay exact, row by row (a transpose's column bands), and
  // cost about EngineRowUs per row per launch (bench/engine). Estimated on
  // halves of the grid.
  std::string SplitKey = Key.text() + "|" + std::to_string(Total);
  for (int64_t A : Config.Args)
    SplitKey += "," + std::to_string(A);
  auto Known = Model.SplitMs.find(SplitKey);
  if (Known != Model.SplitMs.end()) {
    PR.SplitMs = Known->second;
  } else if (Total >= 2 && Devs.size() >= 2) {
    std::vector<PartitionRange> Halves = {{Devs[0], 0, Total / 2},
                                          {Devs[1], Total / 2,
                                           Total - Total / 2}};
    std::vector<RangeUse> HalfUses(2);
    std::vector<RangeUse *> HalfPtrs = {&HalfUses[0], &HalfUses[1]};
    if (evaluate(0, Total / 2, HalfUses[0]).ok() &&
        evaluate(Total / 2, Total - Total / 2, HalfUses[1]).ok()) {
      resolveCoarse(Halves, HalfPtrs);
      double Rows = 0;
      for (const RangeUse &U : HalfUses)
        for (auto &[Id, BU] : U)
          Rows += double(BU.Writes.numRanges());
      PR.SplitMs = Rows * EngineRowUs / 1000.0;
    }
    Model.SplitMs[SplitKey] = PR.SplitMs;
  }

  // What decide() would refuse: the planner then only picks the device.
  const BundleVariant &Part = Info.variant(VariantKind::Partition);
  const BundleVariant &Merge = Info.variant(VariantKind::Merge);
  std::string Why;
  if (!Info.CanSplit)
    Why = "the kernel cannot be split";
  for (const BundleVariableUse &U : Info.Variables)
    if (Why.empty() && U.Written)
      Why = "it writes the variable " + Prog.B.Variables[U.Variable].Name;
  if (Why.empty() && !Fp)
    Why = "its footprints are unusable";
  // Combined outputs (docs/runtime.md): split by the model policy only
  // when the grid fills a wave of every GPU. The one-wave histogram of an
  // earlier headline, split over 2 and 4 H200s, measured 0.92x and 0.93x of
  // one (bench/results/headline-h200x4-2026-11-22-s5): a partial wave of a
  // latency-bound kernel takes about a whole wave's time, and the tables,
  // whose rows are whole waves, read a partial wave's time as a whole
  // wave's throughput. Explicit partitions and the static policies always
  // combine.
  if (Why.empty() && !Info.Combined.empty()) {
    uint64_t Waves = 0;
    for (const PlanDevice &D : PR.Devices)
      Waves += D.Gpu ? D.Wave : 0;
    if (Total < Waves)
      Why = "its combined outputs are split by the model policy only when "
            "the grid fills a wave of every GPU (" +
            std::to_string(Total) + " blocks, " + std::to_string(Waves) +
            " needed)";
  }
  if (Why.empty() && !Part.Present)
    for (Location L : Devs)
      if (isGpu(L)) {
        Why = "no partition-ready variant: " + Part.Reason;
        break;
      }
  if (Why.empty() && !Exact) {
    bool CanMerge = false;
    for (Location L : Devs)
      CanMerge |= canMergeOn(L);
    if (!Merge.Present)
      Why = "its writes are not exact and there is no merge kernel";
    else if (!CanMerge)
      Why = "its writes are not exact and no device can run the merge "
            "kernel";
  }
  PR.Splittable = Why.empty();
  PR.WhyWhole = Why;
  PR.NeedsMerge = !Exact;
  PR.AggregateH2DGBps = Prof.AggregateH2DGBps;
  PR.AggregateD2HGBps = Prof.AggregateD2HGBps;

  // Bandwidth of a copy from Src to Dst as the buffer layer makes it.
  auto GpuLink = [&](Location L, bool ToDevice) {
    const GpuProfile *G = Prof.gpu(Bufs.device(L).properties().Ordinal);
    double V = !G ? 0 : ToDevice ? G->PageableH2DGBps : G->PageableD2HGBps;
    return V > 0 ? V : profile_defaults::GpuHostLinkGBps;
  };
  double Memcpy = Prof.Cpu.TriadOneThreadGBps > 0
                      ? Prof.Cpu.TriadOneThreadGBps
                      : profile_defaults::CpuOneThreadGBps;
  auto PathGBps = [&](Location Src, Location Dst) {
    bool SG = Src != HostLocation && isGpu(Src);
    bool DG = Dst != HostLocation && isGpu(Dst);
    if (SG && DG) {
      if (Bufs.device(Src).hasPeerLink(Bufs.device(Dst))) {
        const GpuProfile *G =
            Prof.gpu(Bufs.device(Src).properties().Ordinal);
        auto It = G ? G->PeerGBps.find(Bufs.device(Dst).properties().Ordinal)
                    : std::map<int, double>::const_iterator();
        return G && It != G->PeerGBps.end() ? It->second
                                            : profile_defaults::GpuPeerGBps;
      }
      return 1.0 / (1.0 / GpuLink(Src, false) + 1.0 / GpuLink(Dst, true));
    }
    if (SG)
      return GpuLink(Src, false);
    if (DG)
      return GpuLink(Dst, true);
    return Memcpy;
  };
  double SlowestLink = std::numeric_limits<double>::infinity();
  double FastestMemory = 0;
  for (const PlanDevice &D : PR.Devices) {
    SlowestLink = std::min(SlowestLink, D.LinkGBps);
    FastestMemory = std::max(FastestMemory, D.SeedGBps);
  }
  // A merge moves what the other devices wrote to the merge device and
  // reads it there once more: charged for every written byte (an upper
  // bound: the merge device's own share does not move).
  if (PR.NeedsMerge && Written > 0 && SlowestLink > 0 && FastestMemory > 0)
    PR.MergeMs = Written / (SlowestLink * 1e6) + Written / (FastestMemory * 1e6);

  // Inputs a cudaMemcpy to the device left in the host copy would be on a
  // device already in CUDA: the first search that meets them charges no
  // device for fetching them (so a program that uploads once and launches
  // many times does not keep its data on the CPU). If a later search meets
  // staged inputs again, the host uploads before every launch: they are
  // then the program's own copies (ShareBytes::HostIn), charged to the
  // share that reads them, whichever device runs it (a GPU at the rate of
  // the program's copies to it, the CPU at that of its copies into the
  // host copy), in the steady state as well.
  bool ChargeStaged = Cached.SawStaged;
  bool AnyStaged = false;
  // A program may upload once and launch several times before it uploads
  // again (the steps of an iteration): its copies then recur once per as
  // many launches of this key as it ran between its last search and this
  // one, over the uploads of the busiest buffer in that time (kept when
  // there were none); so for read-backs. The gaps between searches grow
  // (docs/partitioner.md, "Cached decisions"), and so does the count.
  {
    std::vector<uint64_t> Writes, Reads;
    for (const PtrArg &P : Ptrs) {
      Writes.push_back(P.Buf->programWrites());
      Reads.push_back(P.Buf->programReads());
    }
    // Copies that resumed are counted from the launch before the first
    // of them: the buffers' counts then were those of the last search.
    if (CopiesResumed)
      Cached.LaunchesAtSearch = Prior - 2;
    Cached.Quiet = false;
    if (Cached.WritesAtSearch.size() == Writes.size() &&
        Prior > Cached.LaunchesAtSearch) {
      double Launches = double(Prior - Cached.LaunchesAtSearch);
      uint64_t MaxIn = 0, MaxOut = 0;
      for (size_t I = 0; I < Writes.size(); ++I) {
        MaxIn = std::max(MaxIn, Writes[I] - Cached.WritesAtSearch[I]);
        MaxOut = std::max(MaxOut, Reads[I] - Cached.ReadsAtSearch[I]);
      }
      if (MaxIn)
        Cached.InPeriod = std::max(1.0, Launches / double(MaxIn));
      if (MaxOut)
        Cached.OutPeriod = std::max(1.0, Launches / double(MaxOut));
      Cached.Quiet = !MaxIn && !MaxOut && Launches >= QuietLaunches;
    }
    Cached.CopiesSeen = 0;
    for (size_t I = 0; I < Writes.size(); ++I)
      Cached.CopiesSeen += Writes[I] + Reads[I];
    Cached.CopiedBefore = ~uint64_t(0);
    Cached.LaunchesAtSearch = Prior;
    Cached.WritesAtSearch = std::move(Writes);
    Cached.ReadsAtSearch = std::move(Reads);
  }
  // Inputs a direct host copy sent straight to a GPU (Buffer::pushedBytes)
  // recur the same way, and once charged count the same way: as the
  // program's copies into whichever device's share reads them (a CPU
  // range's reads stay in the host copy at the next upload,
  // BufferManager::memcpy). Uncharged, they are where they are, and the
  // CPU would have to fetch them: a split that puts them on one GPU would
  // never be undone.
  double RecurringMax = 0;
  // Results the host read back after the last launch are expected to go
  // back again: the program's copies out of the share that writes them
  // (ShareBytes::HostOut), from a GPU or from the host copy.
  double ReadBackMax = 0;
  for (bool In : {true, false}) {
    // The rates of those copies, as the program's last ones ran
    // (BufferManager::programCopyGBps), averaged over the GPUs of one model
    // as their tables are (a rate timed while other copies ran is noisy,
    // and a GPU timed a little slower would get a smaller share of every
    // launch); a GPU whose model was never copied to takes the other GPUs'
    // average, else its pinned link from the profile. The host
    // copy's is at least HostCopyPerTriad of the CPU's triad bandwidth: the
    // program's first copy into it, often the only one timed before the
    // data stays on a GPU, pays a page fault per page of fresh memory.
    double Sum = 0;
    unsigned Measured = 0;
    for (Location L : Devs)
      if (isGpu(L) && Bufs.programCopyGBps(L, In) > 0) {
        Sum += Bufs.programCopyGBps(L, In);
        ++Measured;
      }
    for (size_t D = 0; D < Devs.size(); ++D) {
      Location L = Devs[D];
      double V = Bufs.programCopyGBps(L, In);
      if (isGpu(L)) {
        double Same = 0;
        unsigned Timed = 0;
        for (size_t E = 0; E < Devs.size(); ++E)
          if (isGpu(Devs[E]) &&
              PR.Devices[E].Identity == PR.Devices[D].Identity &&
              Bufs.programCopyGBps(Devs[E], In) > 0) {
            Same += Bufs.programCopyGBps(Devs[E], In);
            ++Timed;
          }
        V = Timed ? Same / Timed : 0;
      }
      if (!(V > 0) && isGpu(L)) {
        const GpuProfile *G = Prof.gpu(Bufs.device(L).properties().Ordinal);
        double Pinned = !G ? 0 : In ? G->PinnedH2DGBps : G->PinnedD2HGBps;
        V = Measured         ? Sum / Measured
            : Pinned > 0     ? Pinned
                             : profile_defaults::GpuHostLinkGBps;
      } else if (!isGpu(L)) {
        double Floor = Prof.Cpu.TriadGBps > 0
                           ? HostCopyPerTriad * Prof.Cpu.TriadGBps
                           : profile_defaults::CpuOneThreadGBps;
        V = std::max(V, Floor);
      }
      (In ? PR.Devices[D].HostInGBps : PR.Devices[D].HostOutGBps) = V;
    }
  }
  std::vector<Location> ValidityLocations{HostLocation};
  for (size_t L = 0; L < Bufs.numDevices(); ++L)
    if (Bufs.validityLocation(Location(L)) == Location(L))
      ValidityLocations.push_back(Location(L));
  PR.MissingBytes = [&](size_t D, uint64_t First, uint64_t Count,
                        ShareBytes &Out) {
    Location Dst = Devs[D];
    RangeUse U;
    if (!evaluate(First, Count, U).ok())
      return;
    for (auto &[Id, BU] : U) {
      Buffer &B = *BufById[Id];
      RangeSet Need = BU.Reads;
      if (!BU.WritesExact) // made valid before the run (prepare)
        Need.insert(BU.Writes);
      double Recurring = 0;
      for (ByteRange Rg : Need.ranges()) {
        uint64_t Staged = B.stagedBytes(Rg), Pushed = B.pushedBytes(Rg);
        AnyStaged |= Staged > 0 || Pushed > 0;
        if (ChargeStaged)
          Recurring += double(Staged + Pushed);
        std::vector<Transfer> Copies;
        if (!Bufs.planTransfers(B, Dst, Rg, Copies).ok()) {
          Out.Raw += double(Rg.size());
          Out.Effective += double(Rg.size());
          continue;
        }
        for (const Transfer &T : Copies) {
          double Bytes = double(T.Bytes);
          if (T.Src == HostLocation && !ChargeStaged)
            Bytes -= double(B.stagedBytes({T.Offset, T.Offset + T.Bytes}));
          Out.Raw += Bytes;
          Out.Effective +=
              Bytes * PR.Devices[D].LinkGBps / PathGBps(T.Src, T.Dst);
        }
      }
      Out.HostIn += Recurring / Cached.InPeriod;
      RecurringMax = std::max(RecurringMax, Recurring);
      double Back = 0;
      for (ByteRange Rg : BU.Writes.ranges())
        Back += double(B.readBackBytes(Rg));
      Out.HostOut += Back / Cached.OutPeriod;
      ReadBackMax = std::max(ReadBackMax, Back);
      // Results the last launch to read them read on another device: that
      // launch, if it runs again where it ran, fetches them from this
      // share (docs/partitioner.md, "Results the next launch reads
      // elsewhere"). Not for a share that reads the buffer itself: its
      // own next launch reads it too, and follows this split.
      if (BU.Reads.empty() && !BU.Writes.empty())
        for (Location E : ValidityLocations) {
          if (E == Bufs.validityLocation(Dst))
            continue;
          double Bytes = 0;
          for (ByteRange Rg : BU.Writes.ranges())
            Bytes += double(B.lastReadBytes(Rg, E));
          if (Bytes <= 0)
            continue;
          // After every launch, as the program's read-backs: at this
          // path's rate, as bytes at the share's rate of those.
          Out.Out += Bytes;
          Out.HostOut += Bytes * PR.Devices[D].HostOutGBps / PathGBps(Dst, E);
        }
    }
  };

  PlanResult Res = Pl.plan(PR);
  if (envHas("CLEAVE_LOG", "plan")) {
    std::fputs(Res.describe(PR).c_str(), stderr);
    if (AnyStaged && !ChargeStaged)
      std::fputs("  inputs a cudaMemcpy or cudaMemset left in the host copy "
                 "or sent to a device not charged (first search that meets "
                 "them)\n",
                 stderr);
    if (RecurringMax > 0)
      std::fprintf(stderr,
                   "  inputs the host rewrote before this launch charged as "
                   "the program's copies into each share (up to %.0f B per "
                   "range and buffer, once every %.1f launches)\n",
                   RecurringMax, Cached.InPeriod);
    if (ReadBackMax > 0)
      std::fprintf(stderr,
                   "  results the host read back after the last launch "
                   "charged as the program's copies out of each share (up "
                   "to %.0f B per range and buffer, once every %.1f "
                   "launches)\n",
                   ReadBackMax, Cached.OutPeriod);
    std::fprintf(stderr, "  search: %.3f ms of host time\n",
                 std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - SearchStart)
                     .count());
  }
  Out.clear();
  uint64_t First = 0;
  for (size_t D = 0; D < Devs.size(); ++D)
    if (Res.Blocks[D]) {
      Out.push_back({Devs[D], First, Res.Blocks[D]});
      First += Res.Blocks[D];
    }
  if (First != Total) // cannot happen: the planner's shares sum to the grid
    return Result::error(ErrorCode::Unknown,
                         "the model policy's shares of " + Info.Name +
                             " do not cover the grid");
  Cached.Ranges = Out;
  Cached.Total = Total;
  Cached.Devs = PlanDevs;
  Cached.SawStaged |= AnyStaged;
  uint64_t Done = Prior + 1; // launches including this one
  Cached.PlannedAt = Done;
  Cached.NextPlan = Done < 4 ? Done : std::min(Done * 2, Done + 64);
  return Result::success();
}

void LaunchContext::recordTime(const RunState &R, double Ms) {
  if (!Timed || !Model.P)
    return;
  auto It = PlanDevs.find(R.Dev);
  if (It == PlanDevs.end())
    return;
  if (isGpu(R.Dev) && Model.Warm.insert({R.Dev, Key.text()}).second)
    return;
  Model.P->record(It->second, Key, R.Count, Ms);
}

/// CLEAVE_LOG=time: one stderr line per range (docs/runtime.md); a range
/// that is not the whole grid names its blocks.
void LaunchContext::logTime(const RunState &R, double Ms) const {
  if (!LogTime)
    return;
  char Line[512];
  int N = std::snprintf(
      Line, sizeof(Line),
      "cleave time %s grid=(%u,%u,%u) block=(%u,%u,%u) device=%s ms=%.6f",
      Info.Name.c_str(), Req.Grid[0], Req.Grid[1], Req.Grid[2], Req.Block[0],
      Req.Block[1], Req.Block[2], name(R.Dev).c_str(), Ms);
  std::string S = N > 0 && size_t(N) < sizeof(Line)
                      ? std::string(Line)
                      : "cleave time " + Info.Name + " ms=" +
                            std::to_string(Ms);
  if (R.Count != Total)
    S += " blocks=" + std::to_string(R.First) + "+" + std::to_string(R.Count);
  S += "\n";
  std::fputs(S.c_str(), stderr);
}

Result LaunchContext::runOnHostMemory(const BundleIssue &Why) {
  std::string What = "it dereferences a pointer loaded from memory (" +
                     Why.Detail +
                     (Why.Location.empty() ? "" : " at " + Why.Location) +
                     "), such as a pointer inside a struct argument";
  Location On = -1;
  for (size_t L = 0; L < Bufs.numDevices() && On < 0; ++L)
    if (canRun(Location(L)) &&
        Bufs.validityLocation(Location(L)) == HostLocation)
      On = Location(L);
  if (On < 0)
    return Result::error(
        ErrorCode::NotSupported,
        "kernel " + Info.Name + " cannot run on these devices: " + What +
            ", which Cleave translates only for a CPU device (" +
            (K.Cpu ? "add cpu to CLEAVE_DEVICES"
                   : "the kernel has no CPU variant: " +
                         Info.variant(VariantKind::CPU).Reason) +
            "); pass the pointers as kernel arguments instead");
  if (Result S = Bufs.syncAllToHost(); !S.ok())
    return S;
  Phases.mark("plan");
  Result R = attempt({{On, 0, Total}}, true);
  Plan.Split = false;
  Plan.Reason = "on " + name(On) + "'s host memory, every buffer synchronized: " + What;
  Bufs.markAllWrittenOnHost();
  return R;
}

Result LaunchContext::run() {
  Result R = checkRequest();
  if (!R.ok())
    return R;
  for (const BundleIssue &Iss : Info.Issues)
    if (Iss.Kind == "loaded-pointer")
      return runOnHostMemory(Iss);
  std::vector<PartitionRange> Ranges;
  if (!Req.Partition.empty()) {
    Explicit = true;
    R = checkPartition(Req.Partition);
    if (!R.ok())
      return R;
    Ranges = Req.Partition;
  } else {
    std::vector<Location> Devs;
    std::vector<double> W;
    for (size_t L = 0; L < Bufs.numDevices(); ++L)
      if (canRun(Location(L))) {
        Devs.push_back(Location(L));
        W.push_back(throughput(Location(L)));
      }
    if (Devs.empty())
      return Result::error(
          ErrorCode::NoDevice,
          "no device can run " + Info.Name +
              (K.Cpu ? std::string()
                     : " (no GPU, and it has no CPU variant: " +
                           Info.variant(VariantKind::CPU).Reason + ")"));
    PartitionPolicy P = Policy;
    // One device that can run the kernel: nothing to decide, so no search,
    // no footprints of the whole grid and no timing events, whatever the
    // policy.
    if (Devs.size() == 1) {
      Ranges = {{Devs.front(), 0, Total}};
      Phases.mark("plan");
      return attempt(alignToSlabs(std::move(Ranges)), true);
    }
    if (P == PartitionPolicy::Model) {
      R = planModel(Devs, Ranges);
      if (!R.ok())
        return R;
      Phases.mark("plan");
      return attempt(alignToSlabs(std::move(Ranges)), true);
    }
    if (P == PartitionPolicy::SingleDevice) {
      // The first GPU, else the first CPU device.
      Location Pick = Devs.front();
      for (Location L : Devs)
        if (isGpu(L)) {
          Pick = L;
          break;
        }
      Devs = {Pick};
      W = {1.0};
    }
    if (P == PartitionPolicy::Weights) {
      // The caller's weight of each device that can run the kernel.
      if (Req.Weights.size() != Bufs.numDevices())
        return invalid("the Weights policy needs one weight per device: " +
                       std::to_string(Req.Weights.size()) + " for " +
                       std::to_string(Bufs.numDevices()));
      for (size_t J = 0; J < Devs.size(); ++J)
        W[J] = Req.Weights[size_t(Devs[J])];
      R = makePolicyRanges(P, Total, Devs, W, Ranges);
      if (!R.ok())
        return Result::error(R.code(), Info.Name + ": " + R.message() +
                                           " (CLEAVE_SPLIT)");
    } else {
      R = makePolicyRanges(P, Total, Devs, W, Ranges);
    }
    if (!R.ok())
      return R;
  }
  Phases.mark("plan");
  return attempt(alignToSlabs(std::move(Ranges)), true);
}


namespace {

/// The rows of bytes that the blocks [L.First, L.First + L.Count) write,
/// over every output: what the engine's bookkeeping of a range's writes
/// costs. UINT64_MAX when a write set is not exact (the range would need a
/// merge) or the footprints cannot be evaluated.
uint64_t writtenRows(const FootprintProgram &Fp, const LaunchConfig &L) {
  FootprintResult F;
  if (!Fp.evaluate(L, F))
    return UINT64_MAX;
  uint64_t Rows = 0;
  for (const ParamFootprint &P : F.Params) {
    if (P.WriteClass != FootprintClass::Exact)
      return UINT64_MAX;
    for (const ByteRegion &W : P.Writes)
      Rows += uint64_t(W.Rows) * uint64_t(W.Planes);
  }
  return Rows;
}

/// The twin (x and y swapped) that \p Req should run as, or null: when
/// the engine has several devices, a policy that may split decides the
/// split (not an explicit partition, not SingleDevice), the grid
/// is 2-D and fits the twin's (gx <= 65535), the twin runs wherever the
/// kernel does, and the first half of the grid cut into the twin's row
/// bands writes fewer rows of bytes than cut into the kernel's (a tiled
/// transpose: whole output rows against thousands of short ones).
/// CLEAVE_SWAP=off never swaps (docs/runtime.md, "Swapped grids").
const KernelHandle *twinFor(const KernelLaunchRequest &Req,
                            size_t NumDevices, PartitionPolicy Policy) {
  const KernelHandle &K = *Req.Kernel;
  const KernelHandle *T = K.Swapped;
  if (!T || NumDevices < 2 || Policy == PartitionPolicy::SingleDevice ||
      !Req.Partition.empty() || Req.Grid[2] != 1 ||
      Req.Grid[1] < 2 || Req.Grid[0] > 0xFFFFu || (K.Cpu && !T->Cpu) ||
      envHas("CLEAVE_SWAP", "off"))
    return nullptr;
  const Program &P = *K.Prog;
  const FootprintProgram *Fk = P.Footprints[&K - P.Kernels.data()].get();
  const FootprintProgram *Ft = P.Footprints[T - P.Kernels.data()].get();
  if (!Fk || !Ft || T->Info->Params.size() != K.Info->Params.size())
    return nullptr;
  LaunchConfig L;
  L.Args = integerArgs(*K.Info, Req.Args);
  for (int D = 0; D < 3; ++D)
    L.Block[D] = Req.Block[D];
  int64_t GX = Req.Grid[0], GY = Req.Grid[1];
  L.Grid[0] = GX;
  L.Grid[1] = GY;
  L.Count = GX * ((GY + 1) / 2);
  uint64_t Mine = writtenRows(*Fk, L);
  L.Grid[0] = GY;
  L.Grid[1] = GX;
  L.Count = GY * ((GX + 1) / 2);
  uint64_t Twin = writtenRows(*Ft, L);
  return Twin < Mine ? T : nullptr;
}

} // namespace

Result Engine::launch(const KernelLaunchRequest &Req, LaunchPlan &Plan) {
  Plan = LaunchPlan();
  if (!Req.Kernel || !Req.Kernel->Info || !Req.Kernel->Prog)
    return invalid("launch without a kernel");
  std::lock_guard<std::mutex> Lock(I->Mutex);
  Program &P = const_cast<Program &>(*Req.Kernel->Prog);
  // The last launch of this request, if it changed nothing and nothing
  // changed since (RepeatMemo).
  uint64_t Before = Bufs.stateChanges();
  std::vector<char> Args = argumentBytes(*Req.Kernel->Info, Req.Args);
  bool SwapOff = envHas("CLEAVE_SWAP", "off");
  const RepeatMemo *Memo = nullptr;
  if (auto It = I->Repeats.find(Req.Kernel);
      It != I->Repeats.end() && It->second.Changes == Before &&
      sameRequest(It->second, Req, Args, Policy, SwapOff))
    Memo = &It->second;
  std::vector<RepeatMemo> &Replays = I->Replays[Req.Kernel];
  if (!Memo)
    for (const RepeatMemo &M : Replays)
      if (sameRequest(M, Req, Args, Policy, SwapOff) && M.buffersAsFound()) {
        Memo = &M;
        break;
      }
  // A 2-D launch may run as the kernel's twin on the transposed grid: the
  // same blocks, split along the other dimension.
  KernelLaunchRequest Swapped;
  const KernelLaunchRequest *Use = &Req;
  if (const KernelHandle *T =
          Memo ? (Memo->Ran != Req.Kernel ? Memo->Ran : nullptr)
               : twinFor(Req, Bufs.numDevices(), Policy)) {
    Swapped = Req;
    Swapped.Kernel = T;
    std::swap(Swapped.Grid[0], Swapped.Grid[1]);
    Use = &Swapped;
  }
  LaunchContext C(Bufs, Exec, P, *Use->Kernel, *Use, Plan, Policy, I->Model,
                  I->Pool, I->Scratch, Memo);
  Result R = C.run();
  // Keep it for the next launch if it changed nothing; a launch that did,
  // or that could not be kept, forgets the last one.
  if (!C.repeated()) {
    std::optional<RepeatMemo> &Kept = C.kept();
    auto Request = [&](RepeatMemo &M) {
      for (int D = 0; D < 3; ++D) {
        M.Grid[D] = Req.Grid[D];
        M.Block[D] = Req.Block[D];
      }
      M.SharedBytes = Req.DynamicSharedBytes;
      M.Args = std::move(Args);
      M.Partition = Req.Partition;
      M.Weights = Req.Weights;
      M.Policy = Policy;
      M.SwapOff = SwapOff;
      M.Ran = Use->Kernel;
      M.Changes = Before;
    };
    // The replay chosen, if any, did not apply (or failed): forgotten, or
    // replaced below.
    if (Memo && Memo->Replay)
      Replays.erase(Replays.begin() + (Memo - Replays.data()));
    if (R.ok() && Kept && Bufs.stateChanges() == Before) {
      Request(*Kept);
      I->Repeats[Req.Kernel] = std::move(*Kept);
    } else {
      I->Repeats.erase(Req.Kernel);
      if (R.ok() && Kept && !Kept->Before.empty()) {
        Request(*Kept);
        Kept->Replay = true;
        // One per request and state found: an older one is replaced.
        Replays.erase(std::remove_if(Replays.begin(), Replays.end(),
                                     [&](const RepeatMemo &M) {
                                       return sameRequest(M, Req, Kept->Args,
                                                          Policy, SwapOff) &&
                                              M.sameStart(*Kept);
                                     }),
                      Replays.end());
        if (Replays.size() == Impl::MaxReplays)
          Replays.erase(Replays.begin());
        Replays.push_back(std::move(*Kept));
      }
    }
  }
  if (Use != &Req) {
    Plan.KernelName = Req.Kernel->Info->Name;
    Plan.Swapped = true;
  }
  if (I->Model.P)
    I->Model.P->maybeFlush();
  if (C.Phases.On)
    std::fputs(C.Phases.finish(Req.Kernel->Info->Name).c_str(), stderr);
  if (envHas("CLEAVE_LOG", "plan"))
    std::fputs((Plan.describe() + (R.ok() ? "" : "  error: " + R.toString() +
                                                     "\n"))
                   .c_str(),
               stderr);
  return R;
}

} // namespace rt
} // namespace cleave
