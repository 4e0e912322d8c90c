//===- partition_search.cpp - The partitioner's search, timed ---------------===//
//
// Part of Cleave (bench/README.md). Times partition() on synthetic problems
// like the headline's: 262 144 blocks over 2 or 4 GPUs of one model, with
// and without a host CPU, flat tables at GPU-like and CPU-like throughputs,
// each GPU's launch cost as fixed cost. Each problem is solved with the
// head start (the default) and with SKMD's one-granule search alone
// (PartitionProblem::HeadStart = false), in the same run; one JSON line per
// problem and search: steps, predicted ms, median microseconds per call.
//
//   cleave-partition-search [--reps=N]
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Partitioner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace cleave::rt;

namespace {

PerfTable flat(double BlocksPerMs, uint64_t N, uint64_t Wave) {
  PerfTable T;
  for (uint64_t B = Wave; B < N; B *= 2)
    T.set(B, BlocksPerMs);
  T.set(N, BlocksPerMs);
  return T;
}

PartitionProblem problem(unsigned Gpus, bool Cpu, double MinDeviceGain) {
  PartitionProblem P;
  P.TotalBlocks = 262144;
  P.MinDeviceGain = MinDeviceGain;
  if (Cpu) {
    DeviceCost C;
    C.Name = "cpu0";
    C.Perf = flat(60000, P.TotalBlocks, 64); // about a 64-thread host
    C.FixedMs = 0.02;
    C.H2DGBps = C.D2HGBps = 8;
    P.Devices.push_back(C);
  }
  for (unsigned G = 0; G < Gpus; ++G) {
    DeviceCost C;
    C.Name = "gpu" + std::to_string(G);
    C.Perf = flat(1.0e6, P.TotalBlocks, 1056); // 0.26 ms for the grid
    C.FixedMs = 0.02;
    C.H2DGBps = C.D2HGBps = 50;
    P.Devices.push_back(C);
  }
  return P;
}

} // namespace

int main(int Argc, char **Argv) {
  int Reps = 50;
  for (int I = 1; I < Argc; ++I) {
    if (!std::strncmp(Argv[I], "--reps=", 7)) {
      Reps = std::max(1, std::atoi(Argv[I] + 7));
    } else {
      std::fprintf(stderr, "usage: cleave-partition-search [--reps=N]\n");
      return 2;
    }
  }
  for (unsigned Gpus : {2u, 4u})
    for (bool Cpu : {false, true})
      for (double Gain : {0.0, 0.10})
        for (bool Head : {true, false}) {
          PartitionProblem P = problem(Gpus, Cpu, Gain);
          P.HeadStart = Head;
          PartitionDecision D;
          std::vector<double> Us;
          for (int R = 0; R < Reps; ++R) {
            auto T0 = std::chrono::steady_clock::now();
            D = partition(P);
            Us.push_back(std::chrono::duration<double, std::micro>(
                             std::chrono::steady_clock::now() - T0)
                             .count());
          }
          std::sort(Us.begin(), Us.end());
          std::printf("{\"gpus\":%u,\"cpu\":%s,\"min_device_gain\":%.2f,"
                      "\"search\":\"%s\",\"steps\":%u,\"predicted_ms\":%.5f,"
                      "\"reps\":%d,\"median_us\":%.1f,\"blocks\":[",
                      Gpus, Cpu ? "true" : "false", Gain,
                      Head ? "head-start" : "skmd", D.Steps, D.PredictedMs,
                      Reps, Us[Us.size() / 2]);
          for (size_t I = 0; I < D.Blocks.size(); ++I)
            std::printf("%s%llu", I ? "," : "",
                        static_cast<unsigned long long>(D.Blocks[I]));
          std::printf("]}\n");
        }
  return 0;
}
