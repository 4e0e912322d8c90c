// On the GPU machine (built there with nvcc): what a stencil step's halo
// exchange costs over 4 (or 2) GPUs, by method, around a kernel of about
// the size of jacobi2d's quarter (bench/gpu/headline/headline.cu).
//
// Each device d receives one 64 KB halo row from d-1 and one from d+1 (the
// ends one), as Cleave's engine moves them for a row split of jacobi2d.
// One step is: the halos move, then every device runs its kernel, then the
// host waits for every device. Methods:
//   none      no halo copies (the kernel alone: the floor);
//   src-sync  what the engine does now: per device, a thread makes each
//             copy on the source's stream with cudaMemcpyPeerAsync and
//             waits for it; after all threads are done, per device a
//             thread launches the kernel and waits;
//   dst-fused per device, a thread queues its copies on its own stream
//             with cudaMemcpyPeerAsync, then the kernel on that stream, and
//             waits once;
//   dst-dtod  as dst-fused with cudaMemcpyAsync (peer access enabled,
//             unified addresses) instead of cudaMemcpyPeerAsync;
//   dst-kernel as dst-fused with one copy kernel that reads the peers'
//             rows directly (peer access) instead of the copies.
// Also the host time of one call of each copy API (median).
//
// Prints one JSON line per method: median and 10th percentile of the step
// in microseconds over --steps steps, after warm-up steps.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#define CHECK(X)                                                               \
  do {                                                                         \
    cudaError_t E_ = (X);                                                      \
    if (E_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #X,          \
                   cudaGetErrorString(E_));                                    \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

namespace {

double nowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// About as much memory traffic per element as jacobi's step.
__global__ void work(const float *In, float *Out, long N, int Nx) {
  long I = blockIdx.x * long(blockDim.x) + threadIdx.x;
  if (I >= Nx && I < N - Nx)
    Out[I] = 0.2f * (In[I] + In[I - 1] + In[I + 1] + In[I - Nx] + In[I + Nx]);
}

struct CopyList {
  const float *Src[2];
  float *Dst[2];
  int N;
  long Elems;
};

__global__ void copyKernel(CopyList L) {
  long I = blockIdx.x * long(blockDim.x) + threadIdx.x;
  for (int C = 0; C < L.N; ++C)
    if (I < L.Elems)
      L.Dst[C][I] = L.Src[C][I];
}

/// A worker per device that spins for posted work, like the engine's issue
/// workers (CLEAVE_TUNE spin_us).
class Worker {
public:
  Worker() : T([this] { loop(); }) {}
  ~Worker() {
    Stop = true;
    T.join();
  }
  void post(std::function<void()> F) {
    Job = std::move(F);
    Busy.store(true, std::memory_order_release);
  }
  void wait() {
    while (Busy.load(std::memory_order_acquire))
      ;
  }

private:
  void loop() {
    while (!Stop) {
      if (!Busy.load(std::memory_order_acquire))
        continue;
      Job();
      Busy.store(false, std::memory_order_release);
    }
  }
  std::function<void()> Job;
  std::atomic<bool> Busy{false};
  std::atomic<bool> Stop{false};
  std::thread T;
};

struct Dev {
  float *In = nullptr, *Out = nullptr;
  cudaStream_t Compute = nullptr, Copy = nullptr;
  // Halo sources: (source device, source address, destination address).
  std::vector<int> From;
  std::vector<const float *> Src;
  std::vector<float *> Dst;
};

} // namespace

int main(int argc, char **argv) {
  int Gpus = 0;
  CHECK(cudaGetDeviceCount(&Gpus));
  int Want = argc > 1 ? std::atoi(argv[1]) : 4;
  int Steps = argc > 2 ? std::atoi(argv[2]) : 300;
  Gpus = std::min(Gpus, Want);
  if (Gpus < 2) {
    std::fprintf(stderr, "halo_copy_cost: needs 2 GPUs\n");
    return 1;
  }
  const int Nx = 16384;
  const long Rows = 16384 / Gpus + 2;
  const long N = Rows * Nx;
  const long HaloElems = Nx;
  std::vector<Dev> D(Gpus);
  for (int G = 0; G < Gpus; ++G) {
    CHECK(cudaSetDevice(G));
    for (int P = 0; P < Gpus; ++P)
      if (P != G) {
        cudaError_t E = cudaDeviceEnablePeerAccess(P, 0);
        if (E != cudaSuccess && E != cudaErrorPeerAccessAlreadyEnabled)
          CHECK(E);
        (void)cudaGetLastError();
      }
    CHECK(cudaMalloc(&D[G].In, N * sizeof(float)));
    CHECK(cudaMalloc(&D[G].Out, N * sizeof(float)));
    CHECK(cudaMemset(D[G].In, 0, N * sizeof(float)));
    CHECK(cudaStreamCreateWithFlags(&D[G].Compute, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&D[G].Copy, cudaStreamNonBlocking));
  }
  for (int G = 0; G < Gpus; ++G) {
    if (G > 0) { // last interior row of G-1 into row 0 of G
      D[G].From.push_back(G - 1);
      D[G].Src.push_back(D[G - 1].In + (Rows - 2) * Nx);
      D[G].Dst.push_back(D[G].In);
    }
    if (G + 1 < Gpus) { // first interior row of G+1 into the last row of G
      D[G].From.push_back(G + 1);
      D[G].Src.push_back(D[G + 1].In + Nx);
      D[G].Dst.push_back(D[G].In + (Rows - 1) * Nx);
    }
  }
  const size_t HaloBytes = HaloElems * sizeof(float);
  const unsigned Blocks = unsigned((N + 255) / 256);

  std::vector<Worker> W(Gpus);
  auto launchAndWait = [&](int G) {
    CHECK(cudaSetDevice(G));
    work<<<Blocks, 256, 0, D[G].Compute>>>(D[G].In, D[G].Out, N, Nx);
    CHECK(cudaStreamSynchronize(D[G].Compute));
  };
  using Step = std::function<void()>;
  // Runs F on every device's worker but the last, the last here, and waits.
  auto onAll = [&](const std::function<void(int)> &F) {
    for (int G = 0; G + 1 < Gpus; ++G)
      W[G].post([&F, G] { F(G); });
    F(Gpus - 1);
    for (int G = 0; G + 1 < Gpus; ++G)
      W[G].wait();
  };
  Step None = [&] { onAll(launchAndWait); };
  Step SrcSync = [&] {
    onAll([&](int G) {
      for (size_t C = 0; C < D[G].Src.size(); ++C) {
        int S = D[G].From[C];
        CHECK(cudaSetDevice(S));
        CHECK(cudaMemcpyPeerAsync(D[G].Dst[C], G, D[G].Src[C], S, HaloBytes,
                                  D[S].Copy));
        CHECK(cudaStreamSynchronize(D[S].Copy));
      }
    });
    onAll(launchAndWait);
  };
  Step DstFused = [&] {
    onAll([&](int G) {
      CHECK(cudaSetDevice(G));
      for (size_t C = 0; C < D[G].Src.size(); ++C)
        CHECK(cudaMemcpyPeerAsync(D[G].Dst[C], G, D[G].Src[C], D[G].From[C],
                                  HaloBytes, D[G].Compute));
      launchAndWait(G);
    });
  };
  Step DstDtoD = [&] {
    onAll([&](int G) {
      CHECK(cudaSetDevice(G));
      for (size_t C = 0; C < D[G].Src.size(); ++C)
        CHECK(cudaMemcpyAsync(D[G].Dst[C], D[G].Src[C], HaloBytes,
                              cudaMemcpyDefault, D[G].Compute));
      launchAndWait(G);
    });
  };
  Step DstKernel = [&] {
    onAll([&](int G) {
      CHECK(cudaSetDevice(G));
      CopyList L{};
      L.N = int(D[G].Src.size());
      L.Elems = HaloElems;
      for (int C = 0; C < L.N; ++C) {
        L.Src[C] = D[G].Src[C];
        L.Dst[C] = D[G].Dst[C];
      }
      copyKernel<<<unsigned((HaloElems + 255) / 256), 256, 0,
                   D[G].Compute>>>(L);
      launchAndWait(G);
    });
  };
  struct Method {
    const char *Name;
    Step *F;
  } Methods[] = {{"none", &None},
                 {"src-sync", &SrcSync},
                 {"dst-fused", &DstFused},
                 {"dst-dtod", &DstDtoD},
                 {"dst-kernel", &DstKernel}};
  // Interleaved rounds, so that drift affects every method alike.
  std::vector<std::vector<double>> Times(std::size(Methods));
  for (auto &M : Methods)
    for (int I = 0; I < 20; ++I)
      (*M.F)();
  for (int S = 0; S < Steps; ++S)
    for (size_t M = 0; M < std::size(Methods); ++M) {
      double T0 = nowUs();
      (*Methods[M].F)();
      Times[M].push_back(nowUs() - T0);
    }
  for (size_t M = 0; M < std::size(Methods); ++M) {
    std::vector<double> &T = Times[M];
    std::sort(T.begin(), T.end());
    std::printf("{\"probe\":\"halo_copy_cost\",\"gpus\":%d,\"method\":\"%s\","
                "\"steps\":%d,\"median_us\":%.1f,\"p10_us\":%.1f}\n",
                Gpus, Methods[M].Name, Steps, T[T.size() / 2],
                T[T.size() / 10]);
  }
  // Host time of one call of each copy API, gpu1 <- gpu0, nothing queued.
  auto callCost = [&](const char *Name, const std::function<void()> &F) {
    std::vector<double> T;
    for (int I = 0; I < 200; ++I) {
      double T0 = nowUs();
      F();
      T.push_back(nowUs() - T0);
      CHECK(cudaDeviceSynchronize());
    }
    std::sort(T.begin(), T.end());
    std::printf("{\"probe\":\"halo_copy_cost\",\"call\":\"%s\","
                "\"median_us\":%.2f,\"p10_us\":%.2f}\n",
                Name, T[T.size() / 2], T[T.size() / 10]);
  };
  CHECK(cudaSetDevice(1));
  callCost("cudaMemcpyPeerAsync", [&] {
    CHECK(cudaMemcpyPeerAsync(D[1].Dst[0], 1, D[1].Src[0], 0, HaloBytes,
                              D[1].Compute));
  });
  callCost("cudaMemcpyAsync(default)", [&] {
    CHECK(cudaMemcpyAsync(D[1].Dst[0], D[1].Src[0], HaloBytes,
                          cudaMemcpyDefault, D[1].Compute));
  });
  callCost("copyKernel<<<>>>", [&] {
    CopyList L{};
    L.N = 1;
    L.Elems = HaloElems;
    L.Src[0] = D[1].Src[0];
    L.Dst[0] = D[1].Dst[0];
    copyKernel<<<unsigned((HaloElems + 255) / 256), 256, 0, D[1].Compute>>>(L);
  });
  callCost("work<<<>>>", [&] {
    work<<<Blocks, 256, 0, D[1].Compute>>>(D[1].In, D[1].Out, N, Nx);
  });
  callCost("cudaMemcpyPeerAsync+sync", [&] {
    CHECK(cudaMemcpyPeerAsync(D[1].Dst[0], 1, D[1].Src[0], 0, HaloBytes,
                              D[1].Compute));
    CHECK(cudaStreamSynchronize(D[1].Compute));
  });
  return 0;
}
