//===- CpuCalibrate.cpp - The host CPU's profile --------------------------===//
//
// Part of cleave-calibrate (no LLVM). Memory bandwidth is the STREAM triad
// (A = B + s C, 24 bytes per element, write-allocate not counted) over
// arrays of at least twice the last-level cache each (the three together at
// least 6x), with each thread first touching its own slice (so NUMA pages
// land near it). FMA throughput is a loop of 96 independent fp32 FMA
// chains, compiled for x86-64-v3. Threads are pinned, in the order of the
// process's CPU set (on Linux SMT siblings are usually numbered last, so
// "half" is one thread per core).
//
//===----------------------------------------------------------------------===//
#include "CpuCalibrate.h"
#include "CpuKernels.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace cleave {
namespace calibrate {

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string readFile(const std::string &Path) {
  std::ifstream In(Path);
  std::stringstream S;
  S << In.rdbuf();
  std::string T = S.str();
  while (!T.empty() && (T.back() == '\n' || T.back() == ' '))
    T.pop_back();
  return T;
}

/// "32768K" -> bytes.
uint64_t parseSize(const std::string &S) {
  if (S.empty())
    return 0;
  uint64_t V = std::strtoull(S.c_str(), nullptr, 10);
  switch (S.back()) {
  case 'K':
    return V << 10;
  case 'M':
    return V << 20;
  case 'G':
    return V << 30;
  default:
    return V;
  }
}

std::vector<int> allowedCpus() {
  std::vector<int> Cpus;
  cpu_set_t Set;
  CPU_ZERO(&Set);
  if (sched_getaffinity(0, sizeof(Set), &Set) == 0)
    for (int C = 0; C < CPU_SETSIZE; ++C)
      if (CPU_ISSET(C, &Set))
        Cpus.push_back(C);
  if (Cpus.empty())
    for (unsigned C = 0; C < std::max(1u, std::thread::hardware_concurrency());
         ++C)
      Cpus.push_back(int(C));
  return Cpus;
}

struct CpuInfo {
  std::string Model;
  unsigned Sockets = 0, Cores = 0, Threads = 0, NumaNodes = 0;
  uint64_t LlcBytesPerInstance = 0, LlcBytesTotal = 0, LlcInstances = 0;
  uint64_t L1dBytes = 0, L2Bytes = 0;
  uint64_t MemoryBytes = 0;
};

CpuInfo readCpuInfo(const std::vector<int> &Cpus) {
  CpuInfo I;
  std::ifstream In("/proc/cpuinfo");
  std::string Line;
  std::set<std::pair<int, int>> CoreIds;
  std::set<int> Packages;
  int Phys = -1;
  while (std::getline(In, Line)) {
    auto Colon = Line.find(':');
    if (Colon == std::string::npos)
      continue;
    std::string Key = Line.substr(0, Line.find_last_not_of(" \t", Colon - 1) + 1);
    std::string Val = Colon + 2 <= Line.size() ? Line.substr(Colon + 2) : "";
    if (Key == "model name" && I.Model.empty())
      I.Model = Val;
    else if (Key == "physical id")
      Phys = std::atoi(Val.c_str()), Packages.insert(Phys);
    else if (Key == "core id")
      CoreIds.insert({Phys, std::atoi(Val.c_str())});
  }
  I.Threads = unsigned(Cpus.size());
  I.Sockets = unsigned(std::max<size_t>(1, Packages.size()));
  I.Cores = CoreIds.empty() ? I.Threads : unsigned(CoreIds.size());
  // Caches of the first allowed CPU; LLC instances from distinct sharing
  // sets over all CPUs (one per socket, or per CCX on AMD).
  std::set<std::string> LlcSets;
  for (int C : Cpus) {
    std::string Base = "/sys/devices/system/cpu/cpu" + std::to_string(C) +
                       "/cache/";
    int MaxLevel = 0;
    std::string LlcShared;
    uint64_t LlcSize = 0;
    for (int Idx = 0; Idx < 8; ++Idx) {
      std::string D = Base + "index" + std::to_string(Idx) + "/";
      std::string Level = readFile(D + "level");
      if (Level.empty())
        break;
      int L = std::atoi(Level.c_str());
      std::string Type = readFile(D + "type");
      uint64_t Size = parseSize(readFile(D + "size"));
      if (C == Cpus.front()) {
        if (L == 1 && Type == "Data")
          I.L1dBytes = Size;
        if (L == 2)
          I.L2Bytes = Size;
      }
      if (L >= MaxLevel && Type != "Instruction") {
        MaxLevel = L;
        LlcSize = Size;
        LlcShared = readFile(D + "shared_cpu_list");
      }
    }
    if (LlcSize && LlcSets.insert(LlcShared).second) {
      I.LlcBytesPerInstance = LlcSize;
      I.LlcBytesTotal += LlcSize;
    }
  }
  I.LlcInstances = LlcSets.size();
  for (int N = 0; N < 1024; ++N)
    if (!readFile("/sys/devices/system/node/node" + std::to_string(N) +
                  "/cpulist")
             .empty())
      ++I.NumaNodes;
  std::ifstream Mem("/proc/meminfo");
  while (std::getline(Mem, Line))
    if (Line.rfind("MemTotal:", 0) == 0)
      I.MemoryBytes = std::strtoull(Line.c_str() + 9, nullptr, 10) << 10;
  return I;
}

/// A pool of pinned threads that run one function together; run() returns
/// the wall time from the moment all started to the moment all finished.
class Team {
public:
  Team(const std::vector<int> &Cpus, unsigned N) : Size(N) {
    for (unsigned T = 0; T < N; ++T)
      Workers.emplace_back([this, T, Cpu = Cpus[T % Cpus.size()]] {
        cpu_set_t Set;
        CPU_ZERO(&Set);
        CPU_SET(Cpu, &Set);
        pthread_setaffinity_np(pthread_self(), sizeof(Set), &Set);
        loop(T);
      });
  }
  ~Team() {
    {
      std::lock_guard<std::mutex> L(M);
      Quit = true;
      ++Generation;
    }
    Cv.notify_all();
    for (auto &W : Workers)
      W.join();
  }
  double run(const std::function<void(unsigned)> &F) {
    std::unique_lock<std::mutex> L(M);
    Job = &F;
    Done = 0;
    Ready = 0;
    ++Generation;
    Cv.notify_all();
    DoneCv.wait(L, [&] { return Done == Size; });
    return End - Start;
  }

private:
  void loop(unsigned T) {
    uint64_t Seen = 0;
    for (;;) {
      const std::function<void(unsigned)> *F;
      {
        std::unique_lock<std::mutex> L(M);
        Cv.wait(L, [&] { return Generation != Seen; });
        Seen = Generation;
        if (Quit)
          return;
        F = Job;
      }
      // Start together: a spin barrier, then the first thread takes time.
      if (Ready.fetch_add(1) + 1 == Size)
        Start = now();
      while (Ready.load() < Size)
        ;
      (*F)(T);
      std::lock_guard<std::mutex> L(M);
      if (++Done == Size) {
        End = now();
        DoneCv.notify_all();
      }
    }
  }

  unsigned Size;
  std::vector<std::thread> Workers;
  std::mutex M;
  std::condition_variable Cv, DoneCv;
  const std::function<void(unsigned)> *Job = nullptr;
  uint64_t Generation = 0;
  unsigned Done = 0;
  std::atomic<unsigned> Ready{0};
  bool Quit = false;
  double Start = 0, End = 0;
};

/// Core clock from a chain of dependent integer adds (one cycle each on
/// every x86 core since the P6), GHz; 0 where not x86.
double estimateClockGHz() {
#if defined(__x86_64__)
  const uint64_t Iters = 20'000'000;
  std::vector<double> Samples;
  for (int Rep = 0; Rep < 5; ++Rep) {
    uint64_t X = 1, N = Iters;
    double T0 = now();
    asm volatile("1:\n\t"
                 ".rept 50\n\t"
                 "add %0, %0\n\t"
                 ".endr\n\t"
                 "dec %1\n\t"
                 "jnz 1b\n\t"
                 : "+r"(X), "+r"(N)
                 :
                 : "cc");
    double T = now() - T0;
    Samples.push_back(double(Iters) * 50 / T / 1e9);
  }
  return median(Samples);
#else
  return 0;
#endif
}

} // namespace

Json calibrateCpu(bool Quick) {
  std::vector<int> Cpus = allowedCpus();
  CpuInfo Info = readCpuInfo(Cpus);
  CpuKernels K = selectCpuKernels();
  Json J;
  J["model"] = Info.Model;
  J["sockets"] = Info.Sockets;
  J["cores"] = Info.Cores;
  J["threads"] = Info.Threads;
  J["numa_nodes"] = Info.NumaNodes;
  J["l1d_bytes"] = Info.L1dBytes;
  J["l2_bytes"] = Info.L2Bytes;
  J["llc_bytes"] = Info.LlcBytesPerInstance;
  J["llc_instances"] = Info.LlcInstances;
  J["llc_bytes_total"] = Info.LlcBytesTotal;
  J["memory_bytes"] = Info.MemoryBytes;
  J["isa"] = K.Isa;
  std::fprintf(stderr, "[cpu] %s: %u threads, %u cores, LLC %llu MiB total\n",
               Info.Model.c_str(), Info.Threads, Info.Cores,
               (unsigned long long)(Info.LlcBytesTotal >> 20));

  double GHz = estimateClockGHz();
  if (GHz > 0)
    J["clock_ghz_estimate"] = GHz;

  std::vector<unsigned> Counts = {1};
  if (Info.Threads / 2 > 1)
    Counts.push_back(Info.Threads / 2);
  if (Info.Threads > 1)
    Counts.push_back(Info.Threads);
  const int Reps = Quick ? 3 : 7;

  // Triad arrays: each >= 2x the LLC (>= 64 MiB), so the three are >= 6x.
  uint64_t PerArray = std::max<uint64_t>(2 * Info.LlcBytesTotal, 64ull << 20);
  // Leave room: at most a quarter of memory in all.
  if (Info.MemoryBytes)
    PerArray = std::min<uint64_t>(PerArray, Info.MemoryBytes / 12);
  size_t N = PerArray / sizeof(double);
  std::unique_ptr<double[]> A(new (std::nothrow) double[N]),
      B(new (std::nothrow) double[N]), C(new (std::nothrow) double[N]);
  Json Bw = Json::array();
  Json Fma = Json::array();
  if (!A || !B || !C) {
    J["memory_bandwidth"] = errorJson("cannot allocate 3 x " +
                                      std::to_string(PerArray >> 20) + " MiB");
  }
  for (unsigned T : Counts) {
    Team Tm(Cpus, T);
    auto Slice = [&](unsigned Id, size_t &Begin, size_t &End) {
      Begin = N * Id / T;
      End = N * (Id + 1) / T;
    };
    if (A && B && C) {
      std::fprintf(stderr, "[cpu] triad over 3 x %llu MiB, %u thread(s)\n",
                   (unsigned long long)(PerArray >> 20), T);
      // First touch by the thread that will stream the slice.
      Tm.run([&](unsigned Id) {
        size_t Bg, En;
        Slice(Id, Bg, En);
        for (size_t I = Bg; I < En; ++I)
          A[I] = 0, B[I] = 1, C[I] = 2;
      });
      std::vector<double> GBps;
      for (int R = 0; R < Reps + 1; ++R) {
        double Sec = Tm.run([&](unsigned Id) {
          size_t Bg, En;
          Slice(Id, Bg, En);
          K.Triad(A.get() + Bg, B.get() + Bg, C.get() + Bg, 3.0, En - Bg);
        });
        if (R) // the first is a warm-up
          GBps.push_back(3.0 * sizeof(double) * double(N) / Sec / 1e9);
      }
      Json E;
      E["threads"] = T;
      E["gbps"] = toJson(summarize(GBps));
      Bw.push_back(E);
    }
    // FMA: each thread runs its own accumulators for a fixed count.
    const uint64_t Iters = Quick ? 2'000'000 : 8'000'000;
    std::vector<std::vector<float>> Acc(T, std::vector<float>(FmaLanes + 2));
    for (auto &V : Acc) {
      for (int L = 0; L < FmaLanes; ++L)
        V[L] = 1.0f + float(L) * 1e-3f;
      V[FmaLanes] = 0.999999f;
      V[FmaLanes + 1] = 1e-3f;
    }
    std::fprintf(stderr, "[cpu] fp32 FMA loop, %u thread(s)\n", T);
    std::vector<double> Gflops;
    uint64_t Flops = 0;
    for (int R = 0; R < Reps + 1; ++R) {
      double Sec = Tm.run([&](unsigned Id) {
        uint64_t F = K.Fma(Iters, Acc[Id].data());
        if (Id == 0)
          Flops = F;
      });
      if (R)
        Gflops.push_back(double(Flops) * T / Sec / 1e9);
    }
    Json E;
    E["threads"] = T;
    E["gflops"] = toJson(summarize(Gflops));
    double PerThread = median(Gflops) / T;
    E["gflops_per_thread"] = PerThread;
    if (GHz > 0)
      E["flops_per_cycle_per_thread"] = PerThread / GHz;
    Fma.push_back(E);
  }
  if (!Bw.empty()) {
    Json M;
    M["kernel"] = "triad";
    M["bytes_per_array"] = uint64_t(N * sizeof(double));
    M["by_threads"] = Bw;
    J["memory_bandwidth"] = M;
  }
  Json F;
  F["kernel"] = "96 independent fp32 FMA chains per thread";
  F["by_threads"] = Fma;
  J["fma"] = F;
  return J;
}

} // namespace calibrate
} // namespace cleave
