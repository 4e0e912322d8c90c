// Where a split stencil's steps lose time over several GPUs, without
// Cleave: the headline's jacobi2d (16384 x 16384 floats, 10 steps) split
// by hand in equal row bands over every GPU, each GPU holding both grids
// whole, its halo rows pulled from its neighbours by a small kernel that
// reads them over the peer link (as Cleave's runtime does), the steps
// ordered on the GPUs, all of a repetition issued from one host thread
// before it waits. Variants:
//
//   alone       no halo, no ordering between GPUs: the ceiling (results
//               are wrong, not checked)
//   ev-timed    each step waits (cuStreamWaitEvent) for its neighbours'
//               last step through events created with timing on, then
//               pulls its halo, then runs: Cleave's deferred completion
//   ev-notime   the same with events created with timing off
//   ev-phased   ev-notime with each step's waits issued on every GPU
//               first, then the pulls and kernels, then the records
//   ev-reuse    ev-phased with one event per GPU, recorded again every
//               step (Cleave's deferral keeps one event per GPU)
//   edges       each GPU runs the block rows its neighbours read first (a
//               launch of two block rows), records an event, then the rest;
//               the next step waits for the neighbours' edge events only
//   edges-side  as edges, with the pull on a second stream of the reading
//               GPU, so that it overlaps the reader's own last step
//
// Every variant but `alone` is checked element by element against the
// same steps on one GPU. One JSON line per variant and GPU count.
//   probe_chain [--reps N] [--variants a,b,...]
#include "../common/CudaCheck.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <cuda_runtime.h>

namespace {

constexpr int NX = 16384, NY = 16384, Steps = 10, BX = 32, BY = 8;
constexpr float C0 = 0.2f, C1 = 0.2f;

// Rows [y0, y0 + gridDim.y * BY) of one step; with `edges`, only the first
// and the last block row of [y0, y1).
__global__ void jacobiRows(const float *in, float *out, int nx, int ny,
                           int y0, int y1, int edges) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = edges ? (blockIdx.y == 0 ? y0 : y1 - BY) + int(threadIdx.y)
                : y0 + int(blockIdx.y * blockDim.y + threadIdx.y);
  if (y >= y1 || x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1)
    return;
  size_t i = size_t(y) * nx + x;
  out[i] = C0 * in[i] + C1 * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
}

// Two copies of n float4 each (blockIdx.y picks one); either side may be a
// peer GPU's memory.
__global__ void copyRows(float4 *d0, const float4 *s0, float4 *d1,
                         const float4 *s1, long n) {
  float4 *d = blockIdx.y ? d1 : d0;
  const float4 *s = blockIdx.y ? s1 : s0;
  if (!d)
    return;
  for (long i = long(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += long(gridDim.x) * blockDim.x)
    d[i] = s[i];
}

double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Gpu {
  float *Grid[2] = {};
  cudaStream_t Main = nullptr, Side = nullptr;
  // Per step: the whole step, the edge rows, the pull.
  cudaEvent_t Done[Steps] = {}, Edge[Steps] = {}, Pulled[Steps] = {};
  int Y0 = 0, Y1 = 0;
};

enum class Variant {
  Alone,
  EvTimed,
  EvNoTime,
  EvPhased,
  EvReuse,
  Edges,
  EdgesSide
};
const char *name(Variant V) {
  switch (V) {
  case Variant::Alone: return "alone";
  case Variant::EvTimed: return "ev-timed";
  case Variant::EvNoTime: return "ev-notime";
  case Variant::EvPhased: return "ev-phased";
  case Variant::EvReuse: return "ev-reuse";
  case Variant::Edges: return "edges";
  case Variant::EdgesSide: return "edges-side";
  }
  return "?";
}

void makeEvents(std::vector<Gpu> &G, bool Timed) {
  for (size_t I = 0; I < G.size(); ++I) {
    CUDA_CHECK(cudaSetDevice(int(I)));
    for (int S = 0; S < Steps; ++S)
      for (cudaEvent_t *E : {&G[I].Done[S], &G[I].Edge[S], &G[I].Pulled[S]}) {
        if (*E)
          CUDA_CHECK(cudaEventDestroy(*E));
        CUDA_CHECK(cudaEventCreateWithFlags(
            E, Timed ? cudaEventDefault : cudaEventDisableTiming));
      }
  }
}

// The halo of GPU g for step s: row Y0-1 from g-1 and row Y1 from g+1, out
// of the grid step s reads.
void pull(std::vector<Gpu> &G, int N, int g, int s, cudaStream_t St) {
  int In = s % 2;
  const long Row = NX / 4; // float4 per row
  float4 *D0 = nullptr, *D1 = nullptr;
  const float4 *S0 = nullptr, *S1 = nullptr;
  if (g > 0) {
    D0 = reinterpret_cast<float4 *>(G[g].Grid[In] + size_t(G[g].Y0 - 1) * NX);
    S0 = reinterpret_cast<const float4 *>(G[g - 1].Grid[In] +
                                          size_t(G[g].Y0 - 1) * NX);
  }
  if (g + 1 < N) {
    D1 = reinterpret_cast<float4 *>(G[g].Grid[In] + size_t(G[g].Y1) * NX);
    S1 = reinterpret_cast<const float4 *>(G[g + 1].Grid[In] +
                                          size_t(G[g].Y1) * NX);
  }
  copyRows<<<dim3(unsigned((Row + 255) / 256), 2), 256, 0, St>>>(D0, S0, D1, S1,
                                                                 Row);
}

void rows(Gpu &P, int s, int y0, int y1, bool Edges, cudaStream_t St) {
  int In = s % 2;
  dim3 Block(BX, BY);
  dim3 Grid(NX / BX, Edges ? 2 : unsigned((y1 - y0 + BY - 1) / BY));
  jacobiRows<<<Grid, Block, 0, St>>>(P.Grid[In], P.Grid[1 - In], NX, NY, y0, y1,
                                     Edges ? 1 : 0);
}

// ev-phased's and ev-reuse's repetition: per step, every GPU's waits
// first, then every GPU's pull and kernel, then every GPU's record, as
// Cleave's deferral orders them; with Reuse, one event per GPU (the waits
// still find the last step's records in them).
void oncePhased(std::vector<Gpu> &G, int N, bool Reuse) {
  for (int s = 0; s < Steps; ++s) {
    for (int g = 0; g < N && s > 0; ++g) {
      CUDA_CHECK(cudaSetDevice(g));
      for (int h : {g - 1, g + 1})
        if (h >= 0 && h < N)
          CUDA_CHECK(cudaStreamWaitEvent(G[g].Main,
                                         G[h].Done[Reuse ? 0 : s - 1], 0));
    }
    for (int g = 0; g < N; ++g) {
      CUDA_CHECK(cudaSetDevice(g));
      if (s > 0)
        pull(G, N, g, s, G[g].Main);
      rows(G[g], s, G[g].Y0, G[g].Y1, false, G[g].Main);
    }
    for (int g = 0; g < N; ++g) {
      CUDA_CHECK(cudaSetDevice(g));
      CUDA_CHECK(cudaEventRecord(G[g].Done[Reuse ? 0 : s], G[g].Main));
    }
  }
  for (int g = 0; g < N; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
}

// One repetition: every step of every GPU issued, then every GPU waited for.
void once(std::vector<Gpu> &G, int N, Variant V) {
  if (V == Variant::EvPhased || V == Variant::EvReuse)
    return oncePhased(G, N, V == Variant::EvReuse);
  for (int s = 0; s < Steps; ++s)
    for (int g = 0; g < N; ++g) {
      Gpu &P = G[g];
      CUDA_CHECK(cudaSetDevice(g));
      bool Split = V == Variant::Edges || V == Variant::EdgesSide;
      if (V != Variant::Alone && s > 0) {
        // What the neighbours wrote last step, and what they pulled from
        // this GPU (their pull precedes their Done/Edge record).
        cudaStream_t WaitOn = V == Variant::EdgesSide ? P.Side : P.Main;
        for (int h : {g - 1, g + 1})
          if (h >= 0 && h < N)
            CUDA_CHECK(cudaStreamWaitEvent(
                WaitOn, Split ? G[h].Edge[s - 1] : G[h].Done[s - 1], 0));
        if (V == Variant::EdgesSide) {
          // The halo rows of this step's input were read by this GPU two
          // steps ago (same grid): that step is done before the last one.
          if (s > 1)
            CUDA_CHECK(cudaStreamWaitEvent(P.Side, P.Done[s - 2], 0));
          pull(G, N, g, s, P.Side);
          CUDA_CHECK(cudaEventRecord(P.Pulled[s], P.Side));
          CUDA_CHECK(cudaStreamWaitEvent(P.Main, P.Pulled[s], 0));
        } else {
          pull(G, N, g, s, P.Main);
        }
      }
      if (Split && P.Y1 - P.Y0 > 2 * BY) {
        rows(P, s, P.Y0, P.Y1, true, P.Main);
        CUDA_CHECK(cudaEventRecord(P.Edge[s], P.Main));
        rows(P, s, P.Y0 + BY, P.Y1 - BY, false, P.Main);
      } else {
        rows(P, s, P.Y0, P.Y1, false, P.Main);
        CUDA_CHECK(cudaEventRecord(P.Edge[s], P.Main));
      }
      CUDA_CHECK(cudaEventRecord(P.Done[s], P.Main));
    }
  for (int g = 0; g < N; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
}

} // namespace

int main(int argc, char **argv) {
  int Reps = 30;
  std::string Only; // ",a,b," or empty: every variant
  for (int I = 1; I < argc; ++I) {
    if (!std::strcmp(argv[I], "--reps") && I + 1 < argc)
      Reps = std::atoi(argv[++I]);
    else if (!std::strcmp(argv[I], "--variants") && I + 1 < argc)
      Only = std::string(",") + argv[++I] + ",";
    else {
      std::fprintf(stderr, "usage: %s [--reps N] [--variants a,b,...]\n",
                   argv[0]);
      return 2;
    }
  }
  int NumGpus = 0;
  CUDA_CHECK(cudaGetDeviceCount(&NumGpus));
  const size_t NN = size_t(NX) * NY;
  std::vector<float> Init(NN);
  for (size_t I = 0; I < NN; ++I)
    Init[I] = float((I * 2654435761u) % 1000) * 0.01f;
  std::vector<Gpu> G(NumGpus);
  for (int g = 0; g < NumGpus; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    for (int h = 0; h < NumGpus; ++h)
      if (h != g) {
        int Can = 0;
        CUDA_CHECK(cudaDeviceCanAccessPeer(&Can, g, h));
        if (Can)
          CUDA_CHECK(cudaDeviceEnablePeerAccess(h, 0));
      }
    for (float *&P : G[g].Grid)
      CUDA_CHECK(cudaMalloc(&P, NN * sizeof(float)));
    CUDA_CHECK(cudaStreamCreateWithFlags(&G[g].Main, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&G[g].Side, cudaStreamNonBlocking));
  }
  auto Reset = [&](int N) {
    for (int g = 0; g < N; ++g) {
      CUDA_CHECK(cudaSetDevice(g));
      for (float *P : G[g].Grid)
        CUDA_CHECK(cudaMemcpy(P, Init.data(), NN * sizeof(float),
                              cudaMemcpyHostToDevice));
    }
  };
  // The reference: the steps on GPU 0 alone.
  std::vector<float> Ref(NN), Out(NN);
  {
    G[0].Y0 = 0;
    G[0].Y1 = NY;
    makeEvents(G, false);
    Reset(1);
    once(G, 1, Variant::EvNoTime);
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaMemcpy(Ref.data(), G[0].Grid[Steps % 2], NN * sizeof(float),
                          cudaMemcpyDeviceToHost));
  }
  for (int N : {1, 2, 4}) {
    if (N > NumGpus)
      break;
    for (int g = 0; g < N; ++g) {
      G[g].Y0 = NY * g / N;
      G[g].Y1 = NY * (g + 1) / N;
    }
    for (Variant V : {Variant::Alone, Variant::EvTimed, Variant::EvNoTime,
                      Variant::EvPhased, Variant::EvReuse, Variant::Edges,
                      Variant::EdgesSide}) {
      if (N == 1 && V != Variant::EvNoTime)
        continue;
      if (!Only.empty() && Only.find(std::string(",") + name(V) + ",") ==
                               std::string::npos)
        continue;
      makeEvents(G, V == Variant::EvTimed);
      once(G, N, V); // warm-up
      std::vector<double> Ms;
      for (int R = 0; R < Reps; ++R) {
        double T0 = nowMs();
        once(G, N, V);
        Ms.push_back(nowMs() - T0);
      }
      // A fresh run from the initial grids for the check.
      Reset(N);
      once(G, N, V);
      bool Ok = true;
      if (V != Variant::Alone) {
        for (int g = 0; g < N; ++g) {
          CUDA_CHECK(cudaSetDevice(g));
          size_t First = size_t(G[g].Y0) * NX, Last = size_t(G[g].Y1) * NX;
          CUDA_CHECK(cudaMemcpy(Out.data() + First,
                                G[g].Grid[Steps % 2] + First,
                                (Last - First) * sizeof(float),
                                cudaMemcpyDeviceToHost));
        }
        Ok = std::memcmp(Out.data(), Ref.data(), NN * sizeof(float)) == 0;
      }
      std::vector<double> Sorted = Ms;
      std::sort(Sorted.begin(), Sorted.end());
      std::printf("{\"bench\":\"probe_chain\",\"variant\":\"%s\",\"gpus\":%d,"
                  "\"sizes\":\"%dx%dx%d\",\"status\":\"%s\",\"median_ms\":%.6f,"
                  "\"min_ms\":%.6f,\"max_ms\":%.6f,\"times_ms\":[",
                  name(V), N, NX, NY, Steps,
                  V == Variant::Alone ? "unchecked" : Ok ? "ok" : "wrong",
                  Sorted[Sorted.size() / 2], Sorted.front(), Sorted.back());
      for (size_t I = 0; I < Ms.size(); ++I)
        std::printf("%s%.4f", I ? "," : "", Ms[I]);
      std::printf("]}\n");
      std::fflush(stdout);
    }
  }
  return 0;
}
