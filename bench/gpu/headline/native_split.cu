// What a hand-split CUDA program gets on this machine, without Cleave: the
// headline's vecadd (2^28 floats times --scale, data resident on every
// GPU) split in equal block ranges over 1, 2 and 4 GPUs, launched from one
// host thread (cudaSetDevice, launch; then every device synchronized),
// and timed the way bench/gpu/headline/headline.cu times a repetition
// (steady clock around the launches and the synchronization). Its ratios
// are the ceiling of the headline's short kernels: what one host thread
// and the GPUs themselves allow, before any runtime's own work.
//
// At 2^26 floats (the headline's earlier size) it reached only 3.09x on
// 4 H200s (2026-11-21, commit 0df30f0; raw files in git history): 78 us against
// 60 us of work per GPU, the rest the fixed cost of issuing and
// synchronizing the launches. At 2^28 (--scale 1) it reached 3.65-3.72x,
// at 2^29 (--scale 2) 3.82x
// (bench/results/headline/headline-2026-11-22-h200x4-d01d453-scale.md).
// The size follows the headline's vecadd; change both together.
//
// Built with nvcc on the GPU machine by bench/gpu/headline/run.sh (phase
// `native`); one JSON line per GPU count on stdout.
//   native_split [--reps N] [--scale S]   (S as headline's --scale, default 2)
#include "../common/CudaCheck.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

__global__ void vecadd(const float *a, const float *b, float *c, long first,
                       long n) {
  long i = first + long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

namespace {

double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Replica {
  float *A = nullptr, *B = nullptr, *C = nullptr;
};

} // namespace

int main(int argc, char **argv) {
  int Reps = 50;
  long Scale = 2;
  for (int I = 1; I < argc; ++I) {
    if (!std::strcmp(argv[I], "--reps") && I + 1 < argc)
      Reps = std::atoi(argv[++I]);
    else if (!std::strcmp(argv[I], "--scale") && I + 1 < argc)
      Scale = std::atol(argv[++I]);
    else {
      std::fprintf(stderr, "usage: %s [--reps N] [--scale 1|2|4]\n", argv[0]);
      return 2;
    }
  }
  if (Scale != 1 && Scale != 2 && Scale != 4) {
    std::fprintf(stderr, "%s: --scale must be 1, 2 or 4\n", argv[0]);
    return 2;
  }
  const long N = (1L << 28) * Scale; // headline.cu's vecadd at --scale
  const unsigned Threads = 256;
  const unsigned long Blocks = (N + Threads - 1) / Threads;
  int NumGpus = 0;
  CUDA_CHECK(cudaGetDeviceCount(&NumGpus));
  std::vector<float> Host(N);
  for (long I = 0; I < N; ++I)
    Host[I] = float(I % 1000) * 0.5f + 1.0f;
  std::vector<Replica> R(NumGpus);
  for (int G = 0; G < NumGpus; ++G) {
    CUDA_CHECK(cudaSetDevice(G));
    for (float **P : {&R[G].A, &R[G].B, &R[G].C}) {
      CUDA_CHECK(cudaMalloc(P, N * sizeof(float)));
      CUDA_CHECK(cudaMemcpy(*P, Host.data(), N * sizeof(float),
                            cudaMemcpyHostToDevice));
    }
  }
  for (int Gpus : {1, 2, 4}) {
    if (Gpus > NumGpus)
      break;
    auto Once = [&] {
      for (int G = 0; G < Gpus; ++G) {
        unsigned long First = Blocks * G / Gpus;
        unsigned long Last = Blocks * (G + 1) / Gpus;
        CUDA_CHECK(cudaSetDevice(G));
        vecadd<<<unsigned(Last - First), Threads>>>(
            R[G].A, R[G].B, R[G].C, long(First) * Threads, N);
      }
      for (int G = 0; G < Gpus; ++G) {
        CUDA_CHECK(cudaSetDevice(G));
        CUDA_CHECK(cudaDeviceSynchronize());
      }
    };
    Once(); // warm-up
    std::vector<double> Ms;
    for (int Rep = 0; Rep < Reps; ++Rep) {
      double T0 = nowMs();
      Once();
      Ms.push_back(nowMs() - T0);
    }
    // Every element of C is checked on each GPU's own range.
    std::vector<float> Out(N);
    for (int G = 0; G < Gpus; ++G) {
      unsigned long First = Blocks * G / Gpus * Threads;
      unsigned long Last = std::min<unsigned long>(
          Blocks * (G + 1) / Gpus * Threads, N);
      CUDA_CHECK(cudaSetDevice(G));
      CUDA_CHECK(cudaMemcpy(Out.data() + First, R[G].C + First,
                            (Last - First) * sizeof(float),
                            cudaMemcpyDeviceToHost));
    }
    bool Ok = true;
    for (long I = 0; I < N && Ok; ++I)
      Ok = Out[I] == Host[I] + Host[I];
    std::vector<double> Sorted = Ms;
    std::sort(Sorted.begin(), Sorted.end());
    std::printf("{\"bench\":\"native_split\",\"kernel\":\"vecadd\","
                "\"gpus\":%d,\"n\":%ld,\"status\":\"%s\",\"median_ms\":%.6f,"
                "\"min_ms\":%.6f,\"max_ms\":%.6f,\"times_ms\":[",
                Gpus, N, Ok ? "ok" : "wrong", Sorted[Sorted.size() / 2],
                Sorted.front(), Sorted.back());
    for (size_t I = 0; I < Ms.size(); ++I)
      std::printf("%s%.6f", I ? "," : "", Ms[I]);
    std::printf("]}\n");
    if (!Ok)
      return 1;
  }
  return 0;
}
