//===- GpuCalibrate.cpp - The GPUs' and host links' profile ---------------===//
//
// Part of cleave-calibrate (no LLVM). See GpuCalibrate.h and
// docs/calibrate.md. Every driver call is checked; a failure ends only the
// measurement it belongs to, which the profile records as {"error": ...}
// (a fault that poisons the context shows up as errors in the measurements
// after it, each saying what failed).
//
// Timing: kernels' own cycles come from %clock64 inside the kernel (SM
// clocks, immune to launch overhead); bandwidths from CUDA events around the
// work on its stream; host-side costs (launch, synchronization, pageable
// copies) from the host's steady clock. Each is repeated and summarized
// (median, min, max, spread).
//
//===----------------------------------------------------------------------===//
#include "GpuCalibrate.h"
#include "HostLinkJson.h"
#include "LinkStates.h"
#include "PtxKernels.h"

#include "CudaDriver.h"

#include <algorithm>
#include <cstdarg>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

namespace cleave {
namespace calibrate {

namespace {

using rt::CudaDriver;

const CudaDriver *Drv = nullptr;

/// A failed driver call or a measurement that cannot go on.
struct MeasureError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(CUresult R, const char *What) {
  if (R != CUDA_SUCCESS)
    throw MeasureError(std::string(What) + ": " + Drv->errorString(R));
}

double hostNow() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void progress(int Gpu, const char *Fmt, ...) __attribute__((format(printf, 2, 3)));
void progress(int Gpu, const char *Fmt, ...) {
  char Buf[4096];
  va_list Ap;
  va_start(Ap, Fmt);
  std::vsnprintf(Buf, sizeof(Buf), Fmt, Ap);
  va_end(Ap);
  if (Gpu >= 0)
    std::fprintf(stderr, "[gpu%d] %s\n", Gpu, Buf);
  else
    std::fprintf(stderr, "[links] %s\n", Buf);
}

struct DeviceBuffer {
  CUdeviceptr Ptr = 0;
  size_t Bytes = 0;
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t N) : Bytes(N) {
    check(Drv->cuMemAlloc(&Ptr, N),
          ("cuMemAlloc(" + std::to_string(N >> 20) + " MiB)").c_str());
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() {
    if (Ptr)
      Drv->cuMemFree(Ptr);
  }
};

struct PinnedBuffer {
  void *Ptr = nullptr;
  explicit PinnedBuffer(size_t N) {
    check(Drv->cuMemHostAlloc(&Ptr, N, CU_MEMHOSTALLOC_PORTABLE),
          ("cuMemHostAlloc(" + std::to_string(N >> 20) + " MiB)").c_str());
    std::memset(Ptr, 1, N);
  }
  PinnedBuffer(const PinnedBuffer &) = delete;
  PinnedBuffer &operator=(const PinnedBuffer &) = delete;
  ~PinnedBuffer() {
    if (Ptr)
      Drv->cuMemFreeHost(Ptr);
  }
};

struct Event {
  CUevent E = nullptr;
  Event() { check(Drv->cuEventCreate(&E, CU_EVENT_DEFAULT), "cuEventCreate"); }
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;
  ~Event() {
    if (E)
      Drv->cuEventDestroy(E);
  }
};

float elapsedMs(const Event &A, const Event &B) {
  check(Drv->cuEventSynchronize(B.E), "cuEventSynchronize");
  float Ms = 0;
  check(Drv->cuEventElapsedTime(&Ms, A.E, B.E), "cuEventElapsedTime");
  return Ms;
}

struct Module {
  CUmodule M = nullptr;
  Module(const std::string &Ptx, const std::string &What) {
    char ErrLog[8192] = "", InfoLog[4096] = "";
    CUjit_option Opts[] = {CU_JIT_ERROR_LOG_BUFFER,
                           CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                           CU_JIT_INFO_LOG_BUFFER,
                           CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void *Vals[] = {ErrLog, reinterpret_cast<void *>(uintptr_t(sizeof(ErrLog))),
                    InfoLog,
                    reinterpret_cast<void *>(uintptr_t(sizeof(InfoLog)))};
    CUresult R = Drv->cuModuleLoadDataEx(&M, Ptx.c_str(), 4, Opts, Vals);
    if (R != CUDA_SUCCESS) {
      M = nullptr;
      throw MeasureError("JIT of the " + What + " kernels failed: " +
                         Drv->errorString(R) +
                         (*ErrLog ? std::string(": ") + ErrLog : ""));
    }
  }
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;
  ~Module() {
    if (M)
      Drv->cuModuleUnload(M);
  }
  CUfunction get(const char *Name) const {
    CUfunction F = nullptr;
    check(Drv->cuModuleGetFunction(&F, M, Name),
          (std::string("cuModuleGetFunction(") + Name + ")").c_str());
    return F;
  }
};

struct Gpu {
  int Ordinal = 0;
  CUdevice Dev = 0;
  CUcontext Ctx = nullptr;
  CUstream Streams[3] = {nullptr, nullptr, nullptr};
  std::string Name;
  int Sms = 0, MaxThreadsPerSm = 0, WarpSize = 32, L2Bytes = 0;
  int SharedPerSm = 0, SharedOptin = 0;
  size_t MemoryBytes = 0;
  double ClockMHz = 0; ///< measured; 0 when unknown
  std::unique_ptr<Module> Util;

  int attr(CUdevice_attribute A) const {
    int V = 0;
    if (Drv->cuDeviceGetAttribute(&V, A, Dev) != CUDA_SUCCESS)
      return -1;
    return V;
  }
  void makeCurrent() const { check(Drv->cuCtxSetCurrent(Ctx), "cuCtxSetCurrent"); }
  CUstream stream(int I = 0) const { return Streams[I]; }
  int maxWarpsPerSm() const { return MaxThreadsPerSm / std::max(1, WarpSize); }
};

void launch(CUfunction F, unsigned Grid, unsigned Block, unsigned Shared,
            CUstream S, void **Args, const char *What) {
  check(Drv->cuLaunchKernel(F, Grid, 1, 1, Block, 1, 1, Shared, S, Args,
                            nullptr),
        What);
}

void sync(CUstream S) { check(Drv->cuStreamSynchronize(S), "cuStreamSynchronize"); }

template <typename T> T readBack(CUdeviceptr P, CUstream S) {
  T V{};
  check(Drv->cuMemcpyDtoHAsync(&V, P, sizeof(T), S), "cuMemcpyDtoHAsync");
  sync(S);
  return V;
}

/// Runs \p F, turning a MeasureError into {"error": ...}.
template <typename Fn> Json measured(int GpuIdx, const char *What, Fn &&F) {
  try {
    return F();
  } catch (const MeasureError &E) {
    progress(GpuIdx, "%s: FAILED: %s", What, E.what());
    return errorJson(std::string(What) + ": " + E.what());
  } catch (const std::bad_alloc &) {
    progress(GpuIdx, "%s: FAILED: out of host memory", What);
    return errorJson(std::string(What) + ": out of host memory");
  } catch (const std::exception &E) {
    progress(GpuIdx, "%s: FAILED: %s", What, E.what());
    return errorJson(std::string(What) + ": " + E.what());
  }
}

// Device description. -----------------------------------------------------

Json describe(Gpu &G) {
  Json J;
  J["index"] = G.Ordinal;
  J["name"] = G.Name;
  char Bus[32];
  std::snprintf(Bus, sizeof(Bus), "%04x:%02x:%02x.0",
                std::max(0, G.attr(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)),
                std::max(0, G.attr(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)),
                std::max(0, G.attr(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)));
  J["pci_bus_id"] = Bus;
  J["compute_capability"] =
      std::to_string(G.attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)) +
      "." + std::to_string(G.attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  J["sm_count"] = G.Sms;
  J["memory_bytes"] = G.MemoryBytes;
  J["l2_bytes"] = G.L2Bytes;
  int Clock = G.attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  int MemClock = G.attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  int Bus_ = G.attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  J["sm_clock_mhz"] = Clock > 0 ? Json(Clock / 1000.0) : Json();
  J["memory_clock_mhz"] = MemClock > 0 ? Json(MemClock / 1000.0) : Json();
  J["memory_bus_bits"] = Bus_ > 0 ? Json(Bus_) : Json();
  // Double data rate: two transfers per memory clock.
  if (MemClock > 0 && Bus_ > 0)
    J["dram_peak_gbps"] = 2.0 * MemClock * 1e3 * (Bus_ / 8.0) / 1e9;
  J["warp_size"] = G.WarpSize;
  J["max_threads_per_sm"] = G.MaxThreadsPerSm;
  J["max_warps_per_sm"] = G.maxWarpsPerSm();
  J["max_blocks_per_sm"] = G.attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  J["max_threads_per_block"] = G.attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  J["registers_per_sm"] = G.attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  J["registers_per_block"] = G.attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  J["shared_bytes_per_sm"] = G.SharedPerSm;
  J["shared_bytes_per_block"] = G.attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  J["shared_bytes_per_block_optin"] = G.SharedOptin;
  J["shared_bytes_reserved_per_block"] =
      G.attr(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
  J["async_engines"] = G.attr(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT);
  J["ecc"] = G.attr(CU_DEVICE_ATTRIBUTE_ECC_ENABLED) == 1;
  J["persisting_l2_max_bytes"] = G.attr(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE);
  return J;
}

// Measured SM clock. -------------------------------------------------------

Json measureClock(Gpu &G, bool Quick) {
  CUfunction Spin = G.Util->get("spin");
  DeviceBuffer Out(64);
  Event A, B;
  unsigned long long Cycles = Quick ? 10'000'000ull : 40'000'000ull;
  std::vector<double> MHz;
  for (int R = 0; R < 4; ++R) {
    void *Args[] = {&Cycles, &Out.Ptr};
    check(Drv->cuEventRecord(A.E, G.stream()), "cuEventRecord");
    launch(Spin, 1, 1, 0, G.stream(), Args, "launch spin");
    check(Drv->cuEventRecord(B.E, G.stream()), "cuEventRecord");
    float Ms = elapsedMs(A, B);
    auto Done = readBack<unsigned long long>(Out.Ptr, G.stream());
    if (R) // the first run warms the clock up
      MHz.push_back(double(Done) / (Ms * 1e3));
  }
  Summary S = summarize(MHz);
  G.ClockMHz = S.Median;
  Json J;
  J["method"] = "a one-thread kernel spins for a fixed count of %clock64 "
                "cycles, timed with events";
  J["mhz"] = toJson(S);
  progress(G.Ordinal, "SM clock under load: %.0f MHz", S.Median);
  return J;
}

// Instruction costs (Luo's paired kernels). ---------------------------------

Json measureInstructions(Gpu &G, bool Quick) {
  const unsigned Iters = Quick ? 256 : 1024;
  const int Reps = Quick ? 5 : 9;
  ChainInputs In = chainInputs();
  DeviceBuffer Out(InstructionOutBytes);
  check(Drv->cuMemsetD8Async(Out.Ptr, 0, InstructionOutBytes, G.stream()),
        "cuMemsetD8Async");
  Json Classes = Json::array();
  std::string Line;
  for (const InstrClass &C : instructionClasses()) {
    Json E = measured(G.Ordinal, C.Name, [&]() -> Json {
      Module M(instructionPairPtx(C), std::string("'") + C.Name + "'");
      CUfunction Base = M.get("base"), Test = M.get("test");
      auto Run = [&](CUfunction F) {
        unsigned It = Iters;
        void *Args[] = {&Out.Ptr,       &It,
                        &In.Int[0],     &In.Int[1],
                        &In.Int[2],     &In.Int[3],
                        &In.Float[0],   &In.Float[1],
                        &In.Float[2],   &In.Float[3]};
        launch(F, 1, 32, 0, G.stream(), Args, "launch instruction kernel");
        return double(readBack<unsigned long long>(Out.Ptr, G.stream()));
      };
      Run(Base); // warm-up: instruction cache, first-launch costs
      Run(Test);
      std::vector<double> BaseC, TestC, Diff;
      const double Added = double(Iters) * C.Unroll * C.PerStep;
      for (int R = 0; R < Reps; ++R) {
        double B = Run(Base), T = Run(Test);
        BaseC.push_back(B);
        TestC.push_back(T);
        Diff.push_back((T - B) / Added);
      }
      double Cost = (median(TestC) - median(BaseC)) / Added;
      Json J;
      J["name"] = C.Name;
      J["group"] = C.Group;
      J["clocks"] = Cost;
      if (G.ClockMHz > 0)
        J["ns"] = Cost / G.ClockMHz * 1e3;
      J["per_rep"] = toJson(summarize(Diff));
      J["base_clocks"] = median(BaseC);
      J["test_clocks"] = median(TestC);
      J["instructions_added"] = Added;
      J["note"] = C.Note;
      char Buf[64];
      std::snprintf(Buf, sizeof(Buf), " %s=%.1f", C.Name, Cost);
      Line += Buf;
      return J;
    });
    if (E.contains("error"))
      E["name"] = C.Name;
    Classes.push_back(E);
  }
  progress(G.Ordinal, "instruction costs (clocks):%s", Line.c_str());
  Json J;
  J["method"] = "paired kernels (digest 000 1.2): one warp, a loop of a "
                "dependent chain with and without the instruction; cost = "
                "(test - base) clocks / instructions added";
  J["iterations"] = Iters;
  J["classes"] = Classes;
  return J;
}

// Memory latency (pointer chase). -------------------------------------------

/// Builds a random cyclic chain over Lines lines of Stride bytes at Base
/// (Sattolo's algorithm: one cycle through every line) and uploads it.
void buildChain(const Gpu &G, const DeviceBuffer &Buf, size_t Lines,
                size_t Stride, unsigned Seed) {
  std::vector<uint64_t> Host(Lines * Stride / sizeof(uint64_t), 0);
  std::vector<uint32_t> Perm(Lines);
  std::iota(Perm.begin(), Perm.end(), 0);
  std::mt19937_64 Rng(Seed);
  for (size_t I = Lines - 1; I > 0; --I) {
    std::uniform_int_distribution<size_t> D(0, I - 1);
    std::swap(Perm[I], Perm[D(Rng)]);
  }
  // Perm is a single cycle: line i points to line Perm[i].
  for (size_t I = 0; I < Lines; ++I)
    Host[I * Stride / sizeof(uint64_t)] = Buf.Ptr + uint64_t(Perm[I]) * Stride;
  check(Drv->cuMemcpyHtoDAsync(Buf.Ptr, Host.data(), Host.size() * 8,
                               G.stream()),
        "cuMemcpyHtoDAsync (pointer chain)");
  sync(G.stream());
}

struct ChaseOut {
  unsigned long long Clocks, Last;
};

Json chase(Gpu &G, const char *Kernel, size_t Footprint, size_t Stride,
           unsigned Steps, unsigned WarmSteps, int Reps, bool FlushL2,
           bool Quick) {
  (void)Quick;
  size_t Lines = Footprint / Stride;
  DeviceBuffer Buf(Lines * Stride);
  buildChain(G, Buf, Lines, Stride, 12345);
  std::unique_ptr<DeviceBuffer> Flush;
  if (FlushL2)
    Flush.reset(new DeviceBuffer(size_t(std::max(G.L2Bytes, 1 << 20)) * 2));
  DeviceBuffer Out(64);
  CUfunction F = G.Util->get(Kernel);
  uint64_t Pos = Buf.Ptr;
  auto Run = [&](unsigned N) {
    void *Args[] = {&Pos, &N, &Out.Ptr};
    launch(F, 1, 1, 0, G.stream(), Args, "launch chase");
    ChaseOut R = readBack<ChaseOut>(Out.Ptr, G.stream());
    Pos = R.Last; // continue where the chain stopped
    return double(R.Clocks) / N;
  };
  if (WarmSteps)
    Run((WarmSteps + 7) / 8 * 8);
  std::vector<double> Clk;
  for (int R = 0; R < Reps; ++R) {
    if (Flush) {
      check(Drv->cuMemsetD8Async(Flush->Ptr, uint8_t(R), Flush->Bytes,
                                 G.stream()),
            "cuMemsetD8Async (L2 flush)");
    }
    Clk.push_back(Run(Steps));
  }
  Summary S = summarize(Clk);
  Json J;
  J["kernel"] = Kernel;
  J["footprint_bytes"] = Lines * Stride;
  J["stride_bytes"] = Stride;
  J["steps"] = Steps;
  J["clocks"] = toJson(S);
  if (G.ClockMHz > 0)
    J["ns"] = S.Median / G.ClockMHz * 1e3;
  return J;
}

Json measureLatency(Gpu &G, bool Quick) {
  const int Reps = Quick ? 3 : 7;
  Json J;
  J["method"] = "one thread follows a random cyclic pointer chain "
                "(dependent loads); clocks per load";
  J["l1"] = measured(G.Ordinal, "L1 latency", [&] {
    return chase(G, "chase_ca", 16 << 10, 128, 4096, 1024, Reps, false, Quick);
  });
  size_t L2Set = std::max(G.L2Bytes / 4, 1 << 20);
  J["l2"] = measured(G.Ordinal, "L2 latency", [&] {
    return chase(G, "chase_cg", L2Set, 256, 8192, unsigned(L2Set / 256), Reps,
                 false, Quick);
  });
  size_t DramSet = std::max<size_t>(size_t(G.L2Bytes) * 8, 512ull << 20);
  DramSet = std::min(DramSet, G.MemoryBytes / 8);
  J["dram"] = measured(G.Ordinal, "DRAM latency", [&] {
    return chase(G, "chase_cg", DramSet, 512, Quick ? 2048 : 8192, 0, Reps,
                 true, Quick);
  });
  auto Clk = [&](const char *K) -> double {
    const Json &E = J[K];
    return E.contains("clocks") ? E["clocks"]["median"].get<double>() : -1;
  };
  progress(G.Ordinal, "latency (clocks): L1 %.0f, L2 %.0f, DRAM %.0f",
           Clk("l1"), Clk("l2"), Clk("dram"));
  return J;
}

// Bandwidth. -------------------------------------------------------------

struct Geometry {
  unsigned Grid, Block;
  uint64_t Threads() const { return uint64_t(Grid) * Block; }
};

/// 256-thread blocks filling \p Fraction of each SM's threads.
Geometry streamingGeometry(const Gpu &G, double Fraction) {
  unsigned Block = 256;
  unsigned PerSm =
      std::max(1u, unsigned(Fraction * G.MaxThreadsPerSm / int(Block)));
  return {unsigned(G.Sms) * PerSm, Block};
}

Json measureBandwidth(Gpu &G, bool Quick) {
  const int Reps = Quick ? 5 : 9;
  Geometry Geo = streamingGeometry(G, 1.0);
  uint64_t Quantum = 16ull * 4 * Geo.Threads(); // bytes: n16 % (4 threads)
  // The L2 working set must stay well under L2 (on H100 each half of L2
  // serves its own SMs first): half the threads, so the set's quantum is
  // small enough to round to about a quarter of L2.
  Geometry L2Geo = streamingGeometry(G, 0.5);
  uint64_t L2Quantum = 16ull * 4 * L2Geo.Threads();
  CUfunction Read = G.Util->get("read_v4"), Copy = G.Util->get("copy_v4");
  Json J;
  // DRAM: >= 4x L2 per buffer.
  uint64_t Dram = std::max<uint64_t>(uint64_t(G.L2Bytes) * 4,
                                     Quick ? 256ull << 20 : 1ull << 30);
  Dram = std::min<uint64_t>(Dram, G.MemoryBytes / 8);
  Dram = Dram / Quantum * Quantum;
  J["dram"] = measured(G.Ordinal, "DRAM bandwidth", [&] {
    DeviceBuffer Src(Dram), Dst(Dram), Out(64);
    check(Drv->cuMemsetD8Async(Src.Ptr, 0, Dram, G.stream()), "cuMemsetD8Async");
    check(Drv->cuMemsetD8Async(Dst.Ptr, 0, Dram, G.stream()), "cuMemsetD8Async");
    Event A, B;
    uint64_t N16 = Dram / 16;
    unsigned One = 1;
    std::vector<double> ReadG, CopyG;
    for (int R = 0; R < Reps + 1; ++R) {
      void *RArgs[] = {&Src.Ptr, &N16, &One, &Out.Ptr};
      check(Drv->cuEventRecord(A.E, G.stream()), "cuEventRecord");
      launch(Read, Geo.Grid, Geo.Block, 0, G.stream(), RArgs, "launch read_v4");
      check(Drv->cuEventRecord(B.E, G.stream()), "cuEventRecord");
      float RMs = elapsedMs(A, B);
      void *CArgs[] = {&Dst.Ptr, &Src.Ptr, &N16};
      check(Drv->cuEventRecord(A.E, G.stream()), "cuEventRecord");
      launch(Copy, Geo.Grid, Geo.Block, 0, G.stream(), CArgs, "launch copy_v4");
      check(Drv->cuEventRecord(B.E, G.stream()), "cuEventRecord");
      float CMs = elapsedMs(A, B);
      if (R) {
        ReadG.push_back(double(Dram) / (RMs * 1e-3) / 1e9);
        CopyG.push_back(2.0 * double(Dram) / (CMs * 1e-3) / 1e9);
      }
    }
    Json E;
    E["bytes_per_buffer"] = Dram;
    E["read_gbps"] = toJson(summarize(ReadG));
    E["copy_gbps"] = toJson(summarize(CopyG));
    E["copy_counts"] = "bytes read + bytes written";
    progress(G.Ordinal, "DRAM bandwidth: read %.0f GB/s, copy %.0f GB/s",
             median(ReadG), median(CopyG));
    return E;
  });
  // L2: a quarter of L2, read over and over.
  uint64_t Set = std::max<uint64_t>(uint64_t(G.L2Bytes) / 4, L2Quantum);
  Set = Set / L2Quantum * L2Quantum;
  J["l2"] = measured(G.Ordinal, "L2 bandwidth", [&] {
    DeviceBuffer Buf(Set), Out(64);
    check(Drv->cuMemsetD8Async(Buf.Ptr, 0, Set, G.stream()), "cuMemsetD8Async");
    uint64_t Total = Quick ? 8ull << 30 : 32ull << 30;
    unsigned Passes = unsigned(std::max<uint64_t>(1, Total / Set));
    uint64_t N16 = Set / 16;
    Event A, B;
    std::vector<double> GBps;
    for (int R = 0; R < Reps + 1; ++R) {
      void *Args[] = {&Buf.Ptr, &N16, &Passes, &Out.Ptr};
      check(Drv->cuEventRecord(A.E, G.stream()), "cuEventRecord");
      launch(Read, L2Geo.Grid, L2Geo.Block, 0, G.stream(), Args,
             "launch read_v4");
      check(Drv->cuEventRecord(B.E, G.stream()), "cuEventRecord");
      float Ms = elapsedMs(A, B);
      if (R)
        GBps.push_back(double(Set) * Passes / (Ms * 1e-3) / 1e9);
    }
    Json E;
    E["working_set_bytes"] = Set;
    E["passes"] = Passes;
    E["geometry"] = {{"grid", L2Geo.Grid}, {"block", L2Geo.Block}};
    E["read_gbps"] = toJson(summarize(GBps));
    progress(G.Ordinal, "L2 bandwidth: read %.0f GB/s", median(GBps));
    return E;
  });
  J["geometry"] = {{"grid", Geo.Grid}, {"block", Geo.Block}};
  return J;
}

// Launch and synchronization costs. ------------------------------------------

Json measureLaunch(Gpu &G, bool Quick) {
  CUfunction Empty = G.Util->get("empty");
  const int Rounds = Quick ? 100 : 400;
  const int Burst = Quick ? 1000 : 4000;
  CUstream S = G.stream();
  for (int I = 0; I < 20; ++I)
    launch(Empty, 1, 32, 0, S, nullptr, "launch empty");
  sync(S);
  Json J;
  std::vector<double> Rt;
  for (int I = 0; I < Rounds; ++I) {
    double T0 = hostNow();
    launch(Empty, 1, 32, 0, S, nullptr, "launch empty");
    sync(S);
    Rt.push_back((hostNow() - T0) * 1e6);
  }
  J["roundtrip_us"] = toJson(summarize(Rt));
  J["roundtrip_note"] = "host: launch an empty kernel, then "
                        "cuStreamSynchronize";
  std::vector<double> Submit, Total, Device;
  Event A, B;
  for (int R = 0; R < 3; ++R) {
    check(Drv->cuEventRecord(A.E, S), "cuEventRecord");
    double T0 = hostNow();
    for (int I = 0; I < Burst; ++I)
      launch(Empty, 1, 32, 0, S, nullptr, "launch empty");
    double T1 = hostNow();
    check(Drv->cuEventRecord(B.E, S), "cuEventRecord");
    sync(S);
    double T2 = hostNow();
    Submit.push_back((T1 - T0) * 1e6 / Burst);
    Total.push_back((T2 - T0) * 1e6 / Burst);
    Device.push_back(double(elapsedMs(A, B)) * 1e3 / Burst);
  }
  Json T;
  T["launches"] = Burst;
  T["host_submit_us"] = toJson(summarize(Submit));
  T["wall_us"] = toJson(summarize(Total));
  T["device_us"] = toJson(summarize(Device));
  T["note"] = "back-to-back empty kernels on one stream, per launch: the "
              "host's cuLaunchKernel cost, the wall time until all finished, "
              "and the events' time on the GPU";
  J["throughput"] = T;
  progress(G.Ordinal,
           "launch: round trip %.1f us, %.2f us/launch back to back (host "
           "%.2f us)",
           median(Rt), median(Total), median(Submit));
  return J;
}

Json measureSync(Gpu &G, bool Quick) {
  const int Rounds = Quick ? 200 : 1000;
  Json J;
  SyncSamples Samples;
  std::vector<double> &Stream = Samples.Stream, &Ctx = Samples.Ctx,
                      &Ev = Samples.Event, &Step = Samples.Step;
  Event E;
  Event Es[3];
  for (int I = 0; I < Rounds; ++I) {
    double T0 = hostNow();
    sync(G.stream());
    double T1 = hostNow();
    check(Drv->cuCtxSynchronize(), "cuCtxSynchronize");
    double T2 = hostNow();
    check(Drv->cuEventRecord(E.E, G.stream()), "cuEventRecord");
    check(Drv->cuEventSynchronize(E.E), "cuEventSynchronize");
    double T3 = hostNow();
    // One step of Luo's 3-stream pipeline: an event on each stream, then
    // wait for all three (t_str, digest 000 §3.2).
    for (int K = 0; K < 3; ++K)
      check(Drv->cuEventRecord(Es[K].E, G.stream(K)), "cuEventRecord");
    for (int K = 0; K < 3; ++K)
      check(Drv->cuEventSynchronize(Es[K].E), "cuEventSynchronize");
    double T4 = hostNow();
    Stream.push_back((T1 - T0) * 1e6);
    Ctx.push_back((T2 - T1) * 1e6);
    Ev.push_back((T3 - T2) * 1e6);
    Step.push_back((T4 - T3) * 1e6);
  }
  J = syncJson(Samples);
  progress(G.Ordinal,
           "sync: stream %.1f us, context %.1f us, event %.1f us, 3-stream "
           "step %.1f us",
           median(Stream), median(Ctx), median(Ev), median(Step));
  return J;
}

// The CPD curve. -------------------------------------------------------------

struct CpdRun {
  double Clocks = 0; ///< median over SMs of the span of their warps
  unsigned Sms = 0;  ///< SMs that had exactly the requested warps
};

/// Runs \p F with \p Warps warps on every SM (1 block per SM up to 32 warps,
/// else 2; dynamic shared memory makes a third block impossible) and returns
/// the median per-SM time.
CpdRun runCpd(Gpu &G, CUfunction F, unsigned Warps, unsigned Iters,
              const DeviceBuffer &Cell, int Reps) {
  unsigned BlocksPerSm = Warps <= 32 ? 1 : 2;
  unsigned WarpsPerBlock = Warps / BlocksPerSm;
  unsigned Grid = unsigned(G.Sms) * BlocksPerSm;
  unsigned Shared =
      unsigned(G.SharedPerSm) / (BlocksPerSm == 1 ? 2 : 3) + 4096;
  if (Shared > unsigned(G.SharedOptin))
    throw MeasureError("cannot force " + std::to_string(BlocksPerSm) +
                       " block(s) per SM: " + std::to_string(Shared) +
                       " bytes of shared memory exceed the per-block limit");
  size_t OutBytes = size_t(Grid) * WarpsPerBlock * 24;
  DeviceBuffer Out(OutBytes);
  float Y = 0.9999999f, Z = 0.5f;
  unsigned Mask = 0;
  std::vector<double> Medians;
  unsigned Sms = 0;
  for (int R = 0; R < Reps; ++R) {
    void *Args[] = {&Out.Ptr, const_cast<CUdeviceptr *>(&Cell.Ptr), &Iters,
                    &Y, &Z, &Mask};
    launch(F, Grid, WarpsPerBlock * 32, Shared, G.stream(), Args,
           "launch cpd");
    std::vector<uint64_t> Host(OutBytes / 8);
    check(Drv->cuMemcpyDtoHAsync(Host.data(), Out.Ptr, OutBytes, G.stream()),
          "cuMemcpyDtoHAsync");
    sync(G.stream());
    struct Span {
      unsigned Warps = 0;
      uint64_t Start = ~0ull, End = 0;
    };
    std::map<uint64_t, Span> BySm;
    for (size_t W = 0; W < size_t(Grid) * WarpsPerBlock; ++W) {
      Span &S = BySm[Host[3 * W]];
      ++S.Warps;
      S.Start = std::min(S.Start, Host[3 * W + 1]);
      S.End = std::max(S.End, Host[3 * W + 2]);
    }
    std::vector<double> Spans;
    for (auto &KV : BySm)
      if (KV.second.Warps == Warps)
        Spans.push_back(double(KV.second.End - KV.second.Start));
    if (Spans.empty())
      throw MeasureError("no SM ran exactly " + std::to_string(Warps) +
                         " warps");
    Medians.push_back(median(Spans));
    Sms = unsigned(Spans.size());
  }
  return {median(Medians), Sms};
}

Json measureCpd(Gpu &G, bool Quick) {
  const unsigned M = unsigned(G.maxWarpsPerSm());
  std::vector<unsigned> Ns;
  if (Quick) {
    for (unsigned N : {1u, 2u, 3u, 4u, 6u, 8u, 10u, 12u, 16u, 20u, 24u, 28u,
                       32u, 40u, 48u, 56u, 64u})
      if (N <= M)
        Ns.push_back(N);
  } else {
    for (unsigned N = 1; N <= M; ++N)
      if (N <= 32 || N % 2 == 0)
        Ns.push_back(N);
  }
  const int Reps = Quick ? 1 : 3;
  // (compute steps, memory steps): a pure FMA chain, then mixes whose
  // compute fraction P falls as the loads weigh more.
  const std::pair<unsigned, unsigned> Mixes[] = {{64, 0}, {64, 1}, {16, 1}, {4, 1}};
  DeviceBuffer Cell(256);
  float Y = 0.9999999f;
  check(Drv->cuMemcpyHtoDAsync(Cell.Ptr, &Y, sizeof(Y), G.stream()),
        "cuMemcpyHtoDAsync");
  sync(G.stream());
  std::vector<CpdCurve> Curves;
  Json JCurves = Json::array();
  for (auto [Kc, Km] : Mixes) {
    std::string What = "CPD curve (" + std::to_string(Kc) + " FMA, " +
                       std::to_string(Km) + " load)";
    Json C = measured(G.Ordinal, What.c_str(), [&]() -> Json {
      // About 60k (quick) or 200k clocks for one warp alone.
      double PerIter = Kc * 4.0 + Km * 60.0;
      unsigned Iters = unsigned(std::max(16.0, (Quick ? 6e4 : 2e5) / PerIter));
      auto Prepare = [&](Module &Mod) {
        CUfunction F = Mod.get("cpd");
        check(Drv->cuFuncSetAttribute(
                  F, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                  G.SharedOptin),
              "cuFuncSetAttribute(max dynamic shared)");
        check(Drv->cuFuncSetAttribute(
                  F, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100),
              "cuFuncSetAttribute(carveout)");
        return F;
      };
      Module Full(cpdPtx(Kc, Km), "CPD");
      CUfunction F = Prepare(Full);
      runCpd(G, F, 1, Iters, Cell, 1); // warm-up
      // T_cmp: the same chain without its loads, one warp (Luo's (3.3)
      // with measured times instead of table sums).
      double TFull1 = runCpd(G, F, 1, Iters, Cell, 3).Clocks;
      double TCmp1 = TFull1;
      if (Km) {
        Module Twin(cpdPtx(Kc, 0), "CPD");
        TCmp1 = runCpd(G, Prepare(Twin), 1, Iters, Cell, 3).Clocks;
      }
      CpdCurve Curve;
      Curve.P = std::min(1.0, TCmp1 / TFull1);
      Json Pts = Json::array();
      for (unsigned N : Ns) {
        // A point that cannot be placed (e.g. two blocks that do not fit
        // one SM) is recorded and left out of the fit.
        try {
          CpdRun R = runCpd(G, F, N, Iters, Cell, Reps);
          double Cpd = N * TCmp1 / R.Clocks;
          Curve.Warps.push_back(N);
          Curve.Cpd.push_back(Cpd);
          Pts.push_back({{"warps", N}, {"clocks", R.Clocks}, {"cpd", Cpd},
                         {"sms", R.Sms}});
        } catch (const MeasureError &E) {
          progress(G.Ordinal, "CPD point N=%u: FAILED: %s", N, E.what());
          Pts.push_back({{"warps", N}, {"error", E.what()}});
        }
      }
      if (Curve.Warps.empty())
        throw MeasureError("no point of the curve could be measured");
      Curves.push_back(Curve);
      Json J;
      J["compute_steps"] = Kc;
      J["memory_steps"] = Km;
      J["iterations"] = Iters;
      J["p"] = Curve.P;
      J["compute_clocks_1warp"] = TCmp1;
      J["total_clocks_1warp"] = TFull1;
      J["points"] = Pts;
      progress(G.Ordinal, "CPD curve P=%.2f: CPD(1)=%.2f CPD(%.0f)=%.2f",
               Curve.P, Curve.Cpd.front(), Curve.Warps.back(),
               Curve.Cpd.back());
      return J;
    });
    JCurves.push_back(C);
  }
  Json J;
  J["definition"] =
      "CPD(N) = N * T_cmp(1) / T(N): T(N) the SM clocks for N warps per SM "
      "to finish the chain (median over SMs), T_cmp(1) one warp's time for "
      "the chain without its loads; P = T_cmp(1) / T(1) (digest 000 3.3)";
  J["m"] = M;
  J["curves"] = JCurves;
  CpdFitResult Fit = fitCpd(Curves, double(M));
  J["fit"] = toJson(Fit);
  if (Fit.ok())
    progress(G.Ordinal, "CPD fit: a=%.3f b=%.3f c=%.3f d=%.3f m=%u (rms %.3f)",
             Fit.Fit.A, Fit.Fit.B, Fit.Fit.C, Fit.Fit.D, M, Fit.Rms);
  else
    progress(G.Ordinal, "CPD fit failed: %s", Fit.Error.c_str());
  return J;
}

// Host links. ------------------------------------------------------------------

/// Per-GPU transfer buffers for the link measurements.
struct LinkBuffers {
  size_t Chunk;
  std::unique_ptr<DeviceBuffer> DIn, DOut;
  std::unique_ptr<PinnedBuffer> HSrc, HDst;
};

struct Transfer {
  size_t Gpu;
  bool ToDevice;
  double GBpsAlone;
};

/// Runs the copies of one system state at once; returns each active
/// (gpu, direction)'s GB/s and the ratio of the shortest to the longest
/// transfer (1 when all overlapped fully). Each transfer is a number of
/// Chunk copies on its own stream, sized so that all last about Target
/// seconds: first from the bandwidth alone, then refined once from what
/// this state measured, so the rates are those of the concurrent phase.
struct StateResult {
  std::vector<double> GBps;
  double Overlap = 0;
};

StateResult runState(std::vector<Gpu> &Gpus, std::vector<LinkBuffers> &Bufs,
                     const std::vector<Transfer> &Active, double Target,
                     int Reps) {
  size_t K = Active.size();
  std::vector<unsigned> Count(K);
  std::vector<double> Rate(K);
  for (size_t I = 0; I < K; ++I)
    Rate[I] = Active[I].GBpsAlone > 0 ? Active[I].GBpsAlone : 10;
  std::vector<std::unique_ptr<Event>> A(K), B(K);
  for (size_t I = 0; I < K; ++I) {
    Gpus[Active[I].Gpu].makeCurrent();
    A[I].reset(new Event());
    B[I].reset(new Event());
  }
  StateResult Res;
  std::vector<std::vector<double>> Samples(K);
  std::vector<double> Overlaps;
  for (int Pass = 0; Pass < 2 + Reps; ++Pass) {
    if (Pass < 2)
      for (size_t I = 0; I < K; ++I) {
        size_t Chunk = Bufs[Active[I].Gpu].Chunk;
        Count[I] = unsigned(std::max(1.0, Rate[I] * 1e9 * Target / Chunk + 0.5));
      }
    for (size_t I = 0; I < K; ++I) {
      const Gpu &G = Gpus[Active[I].Gpu];
      G.makeCurrent();
      check(Drv->cuEventRecord(A[I]->E, G.stream(Active[I].ToDevice ? 0 : 1)),
            "cuEventRecord");
    }
    unsigned Most = *std::max_element(Count.begin(), Count.end());
    for (unsigned C = 0; C < Most; ++C)
      for (size_t I = 0; I < K; ++I) {
        if (C >= Count[I])
          continue;
        const Gpu &G = Gpus[Active[I].Gpu];
        LinkBuffers &LB = Bufs[Active[I].Gpu];
        G.makeCurrent();
        if (Active[I].ToDevice)
          check(Drv->cuMemcpyHtoDAsync(LB.DIn->Ptr, LB.HSrc->Ptr, LB.Chunk,
                                       G.stream(0)),
                "cuMemcpyHtoDAsync");
        else
          check(Drv->cuMemcpyDtoHAsync(LB.HDst->Ptr, LB.DOut->Ptr, LB.Chunk,
                                       G.stream(1)),
                "cuMemcpyDtoHAsync");
      }
    for (size_t I = 0; I < K; ++I) {
      const Gpu &G = Gpus[Active[I].Gpu];
      G.makeCurrent();
      check(Drv->cuEventRecord(B[I]->E, G.stream(Active[I].ToDevice ? 0 : 1)),
            "cuEventRecord");
    }
    double Shortest = 1e30, Longest = 0;
    for (size_t I = 0; I < K; ++I) {
      Gpus[Active[I].Gpu].makeCurrent();
      double Sec = elapsedMs(*A[I], *B[I]) * 1e-3;
      double Bytes = double(Count[I]) * Bufs[Active[I].Gpu].Chunk;
      Rate[I] = Bytes / Sec / 1e9;
      Shortest = std::min(Shortest, Sec);
      Longest = std::max(Longest, Sec);
      if (Pass >= 2)
        Samples[I].push_back(Rate[I]);
    }
    if (Pass >= 2)
      Overlaps.push_back(Longest > 0 ? Shortest / Longest : 0);
  }
  for (size_t I = 0; I < K; ++I)
    Res.GBps.push_back(median(Samples[I]));
  Res.Overlap = median(Overlaps);
  return Res;
}

/// One copy of \p Bytes on \p S, between \p Host and the GPU's input
/// buffer (to the GPU) or output buffer (from it).
void copyOnce(const LinkBuffers &B, bool ToDevice, void *Host, size_t Bytes,
              CUstream S) {
  if (ToDevice)
    check(Drv->cuMemcpyHtoDAsync(B.DIn->Ptr, Host, Bytes, S),
          "cuMemcpyHtoDAsync");
  else
    check(Drv->cuMemcpyDtoHAsync(Host, B.DOut->Ptr, Bytes, S),
          "cuMemcpyDtoHAsync");
}

/// The fixed cost of one copy, which a pipeline of many small copies pays
/// once per copy (digest 000 §3.2): copies of a few sizes back to back on
/// each direction's stream, pinned timed by events, pageable by the host
/// clock around each copy and its synchronization (a pageable copy holds
/// the host); per repetition, the intercept of seconds per copy against
/// bytes (at least 0).
Json measureCopyLatency(const Gpu &G, LinkBuffers &B, int Reps) {
  const size_t Sizes[] = {4u << 10, 64u << 10, 1u << 20, 4u << 20};
  const unsigned Count = 16;
  G.makeCurrent();
  Event Start, Stop;
  std::vector<char> Host(Sizes[3], 5);
  TwoWays Us[2]; // pinned, pageable
  for (int R = 0; R < Reps + 1; ++R) {
    std::vector<double> X, T[2][2];
    for (size_t Bytes : Sizes) {
      X.push_back(double(Bytes));
      for (int Dir = 0; Dir < 2; ++Dir) {
        bool ToDevice = Dir == 0;
        CUstream S = G.stream(Dir);
        void *Pinned = ToDevice ? B.HSrc->Ptr : B.HDst->Ptr;
        check(Drv->cuEventRecord(Start.E, S), "cuEventRecord");
        for (unsigned C = 0; C < Count; ++C)
          copyOnce(B, ToDevice, Pinned, Bytes, S);
        check(Drv->cuEventRecord(Stop.E, S), "cuEventRecord");
        T[0][Dir].push_back(elapsedMs(Start, Stop) * 1e-3 / Count);
        double T0 = hostNow();
        for (unsigned C = 0; C < Count; ++C) {
          copyOnce(B, ToDevice, Host.data(), Bytes, S);
          sync(S);
        }
        T[1][Dir].push_back((hostNow() - T0) / Count);
      }
    }
    if (R) // the first repetition warms up
      for (int K = 0; K < 2; ++K) {
        Us[K].H2D.push_back(copyLatencyUs(X, T[K][0]));
        Us[K].D2H.push_back(copyLatencyUs(X, T[K][1]));
      }
  }
  progress(G.Ordinal,
           "copy latency: pinned H2D %.1f us, D2H %.1f us; pageable H2D "
           "%.1f us, D2H %.1f us",
           median(Us[0].H2D), median(Us[0].D2H), median(Us[1].H2D),
           median(Us[1].D2H));
  return copyLatencyJson("16 copies of 4 KiB, 64 KiB, 1 MiB and 4 MiB each "
                         "way; intercept of the time per copy against its "
                         "bytes",
                         Us[0], Us[1]);
}

/// Pageable copies both ways at once (S_SR and R_SR for pageable memory):
/// the copy to the GPU from this thread, the one from the GPU from another
/// (each holds its host thread), on their own streams, timed by the host
/// clock. The slower direction (by \p InAlone and \p OutAlone, GB/s)
/// moves proportionally fewer bytes so that both last about as long.
Json measurePageableBoth(const Gpu &G, LinkBuffers &B, double InAlone,
                         double OutAlone, int Reps) {
  size_t InBytes = B.Chunk, OutBytes = B.Chunk;
  if (InAlone > 0 && OutAlone > 0) {
    if (InAlone < OutAlone)
      InBytes = size_t(double(B.Chunk) * InAlone / OutAlone);
    else
      OutBytes = size_t(double(B.Chunk) * OutAlone / InAlone);
  }
  G.makeCurrent();
  std::vector<char> In(InBytes, 3), Out(OutBytes);
  TwoWays Rates;
  std::vector<double> &H2D = Rates.H2D, &D2H = Rates.D2H, Overlap;
  for (int R = 0; R < Reps + 1; ++R) {
    double TOut = 0;
    CUresult OutRes = CUDA_SUCCESS;
    std::thread Receiver([&] {
      OutRes = Drv->cuCtxSetCurrent(G.Ctx);
      double T0 = hostNow();
      if (OutRes == CUDA_SUCCESS)
        OutRes = Drv->cuMemcpyDtoHAsync(Out.data(), B.DOut->Ptr, OutBytes,
                                        G.stream(1));
      if (OutRes == CUDA_SUCCESS)
        OutRes = Drv->cuStreamSynchronize(G.stream(1));
      TOut = hostNow() - T0;
    });
    double T0 = hostNow();
    CUresult InRes =
        Drv->cuMemcpyHtoDAsync(B.DIn->Ptr, In.data(), InBytes, G.stream(0));
    if (InRes == CUDA_SUCCESS)
      InRes = Drv->cuStreamSynchronize(G.stream(0));
    double TIn = hostNow() - T0;
    Receiver.join();
    check(InRes, "cuMemcpyHtoDAsync (pageable, both ways)");
    check(OutRes, "cuMemcpyDtoHAsync (pageable, both ways)");
    if (R) {
      H2D.push_back(double(InBytes) / TIn / 1e9);
      D2H.push_back(double(OutBytes) / TOut / 1e9);
      Overlap.push_back(std::min(TIn, TOut) / std::max(TIn, TOut));
    }
  }
  progress(G.Ordinal,
           "pageable both ways: H2D %.1f GB/s, D2H %.1f GB/s (overlap %.2f)",
           median(H2D), median(D2H), median(Overlap));
  return pageableBothJson(InBytes, OutBytes, Rates, median(Overlap));
}

Json measureHostLinks(std::vector<Gpu> &Gpus, bool Quick) {
  Json J;
  const size_t Chunk = Quick ? 32ull << 20 : 64ull << 20;
  const int Reps = Quick ? 3 : 5;
  const double Target = Quick ? 0.03 : 0.1;
  std::vector<LinkBuffers> Bufs(Gpus.size());
  for (size_t I = 0; I < Gpus.size(); ++I) {
    Gpus[I].makeCurrent();
    Bufs[I].Chunk = Chunk;
    Bufs[I].DIn.reset(new DeviceBuffer(Chunk));
    Bufs[I].DOut.reset(new DeviceBuffer(Chunk));
    Bufs[I].HSrc.reset(new PinnedBuffer(Chunk));
    Bufs[I].HDst.reset(new PinnedBuffer(Chunk));
    check(Drv->cuMemsetD8Async(Bufs[I].DOut->Ptr, 2, Chunk, Gpus[I].stream()),
          "cuMemsetD8Async");
    sync(Gpus[I].stream());
  }
  // Each GPU alone, pinned and pageable.
  Json Alone = Json::array();
  std::vector<double> H2D(Gpus.size(), 0), D2H(Gpus.size(), 0);
  for (size_t I = 0; I < Gpus.size(); ++I) {
    Json E;
    E["gpu"] = Gpus[I].Ordinal;
    E["pinned"] = measured(Gpus[I].Ordinal, "pinned copies", [&] {
      StateResult S = runState(Gpus, Bufs, {{I, true, 0}}, Target, Reps);
      H2D[I] = S.GBps[0];
      S = runState(Gpus, Bufs, {{I, false, 0}}, Target, Reps);
      D2H[I] = S.GBps[0];
      progress(Gpus[I].Ordinal, "pinned: H2D %.1f GB/s, D2H %.1f GB/s",
               H2D[I], D2H[I]);
      return pinnedAloneJson(H2D[I], D2H[I]);
    });
    E["pageable"] = measured(Gpus[I].Ordinal, "pageable copies", [&] {
      const Gpu &G = Gpus[I];
      G.makeCurrent();
      std::vector<char> Host(Chunk, 3);
      TwoWays Rates;
      std::vector<double> &In = Rates.H2D, &Out = Rates.D2H;
      for (int R = 0; R < Reps + 1; ++R) {
        double T0 = hostNow();
        check(Drv->cuMemcpyHtoDAsync(Bufs[I].DIn->Ptr, Host.data(), Chunk,
                                     G.stream()),
              "cuMemcpyHtoDAsync (pageable)");
        sync(G.stream());
        double T1 = hostNow();
        check(Drv->cuMemcpyDtoHAsync(Host.data(), Bufs[I].DOut->Ptr, Chunk,
                                     G.stream()),
              "cuMemcpyDtoHAsync (pageable)");
        sync(G.stream());
        double T2 = hostNow();
        if (R) {
          In.push_back(double(Chunk) / (T1 - T0) / 1e9);
          Out.push_back(double(Chunk) / (T2 - T1) / 1e9);
        }
      }
      Json P = pageableAloneJson(Chunk, Rates);
      progress(G.Ordinal, "pageable: H2D %.1f GB/s, D2H %.1f GB/s",
               median(In), median(Out));
      P["both"] = measured(G.Ordinal, "pageable copies both ways", [&] {
        return measurePageableBoth(G, Bufs[I], median(In), median(Out), Reps);
      });
      return P;
    });
    E["latency"] = measured(Gpus[I].Ordinal, "copy latency", [&] {
      return measureCopyLatency(Gpus[I], Bufs[I], Reps);
    });
    Alone.push_back(E);
  }
  J["alone"] = Alone;

  // System states (digest 000 §3.4).
  Json States = Json::array();
  for (const SystemState &S : statesToMeasure(unsigned(Gpus.size()), Quick)) {
    std::string Name = systemStateName(S);
    Json E = measured(-1, ("state " + Name).c_str(), [&] {
      std::vector<Transfer> Active;
      for (size_t I = 0; I < S.size(); ++I) {
        if (sends(S[I]))
          Active.push_back({I, true, H2D[I]});
        if (receives(S[I]))
          Active.push_back({I, false, D2H[I]});
      }
      StateResult R = runState(Gpus, Bufs, Active, Target, Reps);
      Json St;
      St["name"] = Name;
      Json PerGpu = Json::array();
      double TotS = 0, TotR = 0;
      for (size_t I = 0; I < S.size(); ++I) {
        std::optional<double> Send, Receive;
        for (size_t K = 0; K < Active.size(); ++K)
          if (Active[K].Gpu == I) {
            (Active[K].ToDevice ? Send : Receive) = R.GBps[K];
            (Active[K].ToDevice ? TotS : TotR) += R.GBps[K];
          }
        PerGpu.push_back(stateGpuJson(Gpus[I].Ordinal, linkStateName(S[I]),
                                      Send, Receive));
      }
      St["gpus"] = PerGpu;
      St["total_send_gbps"] = TotS;
      St["total_receive_gbps"] = TotR;
      St["overlap"] = R.Overlap;
      progress(-1, "state %-16s send %7.1f GB/s, receive %7.1f GB/s "
                   "(overlap %.2f)",
               Name.c_str(), TotS, TotR, R.Overlap);
      return St;
    });
    if (E.contains("error"))
      E["name"] = Name;
    States.push_back(E);
  }
  J["states"] = States;
  J["states_note"] =
      "S = host to device (the GPU receives data the host sends), R = device "
      "to host; per-GPU GB/s while every listed link is busy at once; overlap "
      "= shortest / longest transfer of the state (1: fully concurrent)";

  // Peer to peer.
  Json Peers = Json::array();
  for (size_t I = 0; I < Gpus.size(); ++I)
    for (size_t K = 0; K < Gpus.size(); ++K) {
      if (I == K)
        continue;
      std::string What = "peer gpu" + std::to_string(Gpus[I].Ordinal) +
                         " -> gpu" + std::to_string(Gpus[K].Ordinal);
      Json E = measured(-1, What.c_str(), [&] {
        int Can = 0;
        check(Drv->cuDeviceCanAccessPeer(&Can, Gpus[I].Dev, Gpus[K].Dev),
              "cuDeviceCanAccessPeer");
        Json P;
        P["src"] = Gpus[I].Ordinal;
        P["dst"] = Gpus[K].Ordinal;
        P["peer_access"] = Can != 0;
        Gpus[I].makeCurrent();
        if (Can) {
          // The copy runs on the source's stream; both contexts may read
          // each other's memory.
          CUresult R = Drv->cuCtxEnablePeerAccess(Gpus[K].Ctx, 0);
          if (R != CUDA_SUCCESS && R != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
            check(R, "cuCtxEnablePeerAccess");
          Gpus[K].makeCurrent();
          R = Drv->cuCtxEnablePeerAccess(Gpus[I].Ctx, 0);
          if (R != CUDA_SUCCESS && R != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
            check(R, "cuCtxEnablePeerAccess");
          Gpus[I].makeCurrent();
        }
        Event A, B;
        unsigned Count = Quick ? 4 : 16;
        std::vector<double> GBps;
        for (int R = 0; R < Reps + 1; ++R) {
          check(Drv->cuEventRecord(A.E, Gpus[I].stream()), "cuEventRecord");
          for (unsigned C = 0; C < Count; ++C)
            check(Drv->cuMemcpyPeerAsync(Bufs[K].DIn->Ptr, Gpus[K].Ctx,
                                         Bufs[I].DOut->Ptr, Gpus[I].Ctx, Chunk,
                                         Gpus[I].stream()),
                  "cuMemcpyPeerAsync");
          check(Drv->cuEventRecord(B.E, Gpus[I].stream()), "cuEventRecord");
          float Ms = elapsedMs(A, B);
          if (R)
            GBps.push_back(double(Chunk) * Count / (Ms * 1e-3) / 1e9);
        }
        P["gbps"] = toJson(summarize(GBps));
        progress(-1, "%s: %.1f GB/s (peer access %s)", What.c_str(),
                 median(GBps), Can ? "yes" : "no");
        return P;
      });
      if (E.contains("error")) {
        E["src"] = Gpus[I].Ordinal;
        E["dst"] = Gpus[K].Ordinal;
      }
      Peers.push_back(E);
    }
  J["peer"] = Peers;
  return J;
}

// Driver and devices. -----------------------------------------------------

bool loadDriver(const std::string &Library, std::string &Why) {
  if (Drv)
    return true;
  Drv = rt::loadCudaDriver(Library, Why);
  if (!Drv)
    return false;
  CUresult R = Drv->cuInit(0);
  if (R != CUDA_SUCCESS) {
    Why = "cuInit: " + Drv->errorString(R);
    Drv = nullptr;
    return false;
  }
  return true;
}

void openGpu(Gpu &G) {
  check(Drv->cuDeviceGet(&G.Dev, G.Ordinal), "cuDeviceGet");
  char Name[256] = "";
  check(Drv->cuDeviceGetName(Name, sizeof(Name), G.Dev), "cuDeviceGetName");
  G.Name = Name;
  check(Drv->cuDeviceTotalMem(&G.MemoryBytes, G.Dev), "cuDeviceTotalMem");
  G.Sms = G.attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  G.MaxThreadsPerSm = G.attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  G.WarpSize = G.attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  G.L2Bytes = G.attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  G.SharedPerSm = G.attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  G.SharedOptin = G.attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  if (G.Sms <= 0 || G.MaxThreadsPerSm <= 0 || G.WarpSize <= 0 || G.L2Bytes < 0)
    throw MeasureError("cuDeviceGetAttribute gave no SM count, threads per "
                       "SM, warp size or L2 size");
  check(Drv->cuDevicePrimaryCtxRetain(&G.Ctx, G.Dev),
        "cuDevicePrimaryCtxRetain");
  G.makeCurrent();
  for (CUstream &S : G.Streams)
    check(Drv->cuStreamCreate(&S, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  G.Util.reset(new Module(utilityPtx(), "utility"));
}

void closeGpu(Gpu &G) {
  if (!G.Ctx)
    return;
  Drv->cuCtxSetCurrent(G.Ctx);
  G.Util.reset();
  for (CUstream &S : G.Streams)
    if (S)
      Drv->cuStreamDestroy(S);
  Drv->cuDevicePrimaryCtxRelease(G.Dev);
  G.Ctx = nullptr;
}

} // namespace

int countGpus(const std::string &Library, std::string &Why) {
  if (!loadDriver(Library, Why))
    return -1;
  int N = 0;
  CUresult R = Drv->cuDeviceGetCount(&N);
  if (R != CUDA_SUCCESS) {
    Why = "cuDeviceGetCount: " + Drv->errorString(R);
    return -1;
  }
  return N;
}

Json calibrateGpus(const GpuOptions &O) {
  Json Out;
  Json Cuda;
  Cuda["library"] = O.Library;
  std::string Why;
  int Count = countGpus(O.Library, Why);
  if (Count < 0) {
    Cuda["available"] = false;
    Cuda["error"] = Why;
    Out["cuda"] = Cuda;
    std::fprintf(stderr, "cleave-calibrate: no CUDA driver: %s; profiling "
                         "no GPU\n",
                 Why.c_str());
    return Out;
  }
  Cuda["available"] = Count > 0;
  Cuda["driver_version"] = Drv->Version;
  Cuda["driver_version_string"] = std::to_string(Drv->Version / 1000) + "." +
                                  std::to_string(Drv->Version % 1000 / 10);
  Cuda["gpu_count"] = Count;
  Out["cuda"] = Cuda;
  if (Count == 0) {
    std::fprintf(stderr, "cleave-calibrate: the CUDA driver reports no GPU\n");
    return Out;
  }
  std::vector<int> Ordinals = O.Gpus;
  if (O.AllGpus) {
    Ordinals.clear();
    for (int I = 0; I < Count; ++I)
      Ordinals.push_back(I);
  }
  std::vector<Gpu> Gpus;
  Json GpuList = Json::array();
  for (int Ord : Ordinals) {
    Gpu G;
    G.Ordinal = Ord;
    try {
      openGpu(G);
    } catch (const MeasureError &E) {
      progress(Ord, "cannot be used: %s", E.what());
      Json J = errorJson(std::string("opening the GPU: ") + E.what());
      J["index"] = Ord;
      GpuList.push_back(J);
      closeGpu(G);
      continue;
    }
    progress(Ord, "%s, %d SMs, %.1f GiB, L2 %d MiB", G.Name.c_str(), G.Sms,
             double(G.MemoryBytes) / (1 << 30), G.L2Bytes >> 20);
    Json J = describe(G);
    G.makeCurrent();
    J["clock"] = measured(Ord, "SM clock", [&] { return measureClock(G, O.Quick); });
    J["instructions"] =
        measured(Ord, "instruction costs", [&] { return measureInstructions(G, O.Quick); });
    J["memory_latency"] =
        measured(Ord, "memory latency", [&] { return measureLatency(G, O.Quick); });
    J["bandwidth"] =
        measured(Ord, "bandwidth", [&] { return measureBandwidth(G, O.Quick); });
    J["launch"] = measured(Ord, "launch cost", [&] { return measureLaunch(G, O.Quick); });
    J["sync"] = measured(Ord, "synchronization cost", [&] { return measureSync(G, O.Quick); });
    J["cpd"] = measured(Ord, "CPD curve", [&] { return measureCpd(G, O.Quick); });
    GpuList.push_back(J);
    Gpus.push_back(std::move(G));
  }
  Out["gpus"] = GpuList;
  if (!Gpus.empty())
    Out["host_links"] = measured(-1, "host links", [&] {
      return measureHostLinks(Gpus, O.Quick);
    });
  for (Gpu &G : Gpus)
    closeGpu(G);
  return Out;
}

} // namespace calibrate
} // namespace cleave
