// Transfer pipelining's benchmark (issue 27; docs/runtime.md, "Transfer
// pipelining"): an ordinary CUDA program in host mode -- inputs rewritten
// on the host before every repetition, copied in with cudaMemcpy, one
// launch, results copied back -- built by nvcc and by `cleave compile`;
// bench/pipeline/run.sh runs it under the configurations it compares.
//
// Kernels: vecadd (c = a + b), stencil1d (3 points), stencil2d (5 points
// on a W x H grid of 32 x 8 blocks), blackscholes (3 inputs, 2 outputs).
//
// Default mode, per repetition (after one untimed warm-up): the host
// rewrites the inputs (untimed), then the program times with a steady
// clock the copies in (upload_ms), the launch and cudaDeviceSynchronize
// (launch_ms) and the copies back (download_ms); total_ms is their sum.
// Under Cleave with CLEAVE_TUNE=pipeline=host the copies in only land in the
// runtime's host copies, and the launch sends, computes and receives in
// chunks, so the split between the three moves: total_ms is what compares.
//
// --bound (nvcc build): the host arrays come from cudaMallocHost, and
// cudaEvents time the copies in alone (send_ms), the kernel alone on
// resident inputs (kernel_ms) and the copies back alone (receive_ms): a
// pipeline of the three cannot beat bound_ms = max of them.
//
// Results are checked on a sample of elements against a host reference of
// the current inputs after the last repetition (ok). One JSON line per
// kernel on stdout; progress on stderr.
//
// Usage: pipeline [--kernels a,b,...] [--reps N] [--scale S] [--small]
//                 [--bound] [--label L]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
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
      std::fprintf(stderr, "pipeline: %s: %s (%s:%d)\n", #X,                   \
                   cudaGetErrorString(E_), __FILE__, __LINE__);                \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

__global__ void vecadd(const float *a, const float *b, float *c, long n) {
  long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

__global__ void stencil1d(const float *in, float *out, long n) {
  long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1)
    out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
}

__global__ void stencil2d(const float *in, float *out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && x < w - 1 && y > 0 && y < h - 1) {
    long c = long(y) * w + x;
    out[c] = 0.2f * (in[c] + in[c - 1] + in[c + 1] + in[c - w] + in[c + w]);
  }
}

__host__ __device__ inline float cnd(float d) {
  const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f,
              A4 = -1.821255978f, A5 = 1.330274429f;
  float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
  float c = 0.3989422804f * expf(-0.5f * d * d) *
            (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
  return d > 0 ? 1.0f - c : c;
}

__host__ __device__ inline void bsOne(float s, float x, float t, float &call,
                                      float &put) {
  const float R = 0.02f, V = 0.30f;
  float sq = sqrtf(t);
  float d1 = (logf(s / x) + (R + 0.5f * V * V) * t) / (V * sq);
  float d2 = d1 - V * sq;
  float e = expf(-R * t);
  call = s * cnd(d1) - x * e * cnd(d2);
  put = x * e * (1.0f - cnd(d2)) - s * (1.0f - cnd(d1));
}

__global__ void blackscholes(const float *s, const float *x, const float *t,
                             float *call, float *put, long n) {
  long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n)
    bsOne(s[i], x[i], t[i], call[i], put[i]);
}

namespace {

struct Options {
  std::string Kernels = "vecadd,stencil1d,stencil2d,blackscholes";
  int Reps = 5;
  long Scale = 1;
  bool Small = false, Bound = false;
  std::string Label = "run";
} Opt;

double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// F(lo, hi) over [0, N) on every hardware thread.
void parallelFor(long N, const std::function<void(long, long)> &F) {
  unsigned T = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> Ts;
  for (unsigned I = 0; I < T; ++I) {
    long Lo = N * I / T, Hi = N * (I + 1) / T;
    Ts.emplace_back([=] { F(Lo, Hi); });
  }
  for (std::thread &X : Ts)
    X.join();
}

float hashf(long I, int Salt) {
  unsigned long X = (unsigned long)I * 2654435761ul + (unsigned long)Salt * 40503ul;
  X ^= X >> 13;
  X *= 0x5bd1e995ul;
  X ^= X >> 15;
  return float(X % 10000) / 10000.0f;
}

/// A host array: pageable, or from cudaMallocHost with --bound.
struct HostArray {
  float *P = nullptr;
  long N = 0;
  explicit HostArray(long N) : N(N) {
    if (Opt.Bound)
      CHECK(cudaMallocHost(&P, N * sizeof(float)));
    else
      P = static_cast<float *>(std::malloc(N * sizeof(float)));
    if (!P) {
      std::fprintf(stderr, "pipeline: out of host memory\n");
      std::exit(1);
    }
  }
  ~HostArray() {
    if (Opt.Bound)
      cudaFreeHost(P);
    else
      std::free(P);
  }
};

/// One kernel's arrays, launch and check.
struct Bench {
  std::string Name, Sizes;
  std::vector<HostArray *> In, Out;
  std::vector<float *> DIn, DOut;
  std::function<void(int Rep)> Fill;   // the inputs of repetition Rep
  std::function<void()> Launch;        // on the legacy stream
  std::function<bool()> Check;         // sampled, against the inputs
};

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V.empty() ? 0 : V[V.size() / 2];
}

std::string list(const std::vector<double> &V) {
  std::string S = "[";
  for (size_t I = 0; I < V.size(); ++I) {
    char B[32];
    std::snprintf(B, sizeof(B), "%s%.3f", I ? ", " : "", V[I]);
    S += B;
  }
  return S + "]";
}

void copiesIn(Bench &B) {
  for (size_t I = 0; I < B.In.size(); ++I)
    CHECK(cudaMemcpy(B.DIn[I], B.In[I]->P, B.In[I]->N * sizeof(float),
                     cudaMemcpyHostToDevice));
}
void copiesOut(Bench &B) {
  for (size_t I = 0; I < B.Out.size(); ++I)
    CHECK(cudaMemcpy(B.Out[I]->P, B.DOut[I], B.Out[I]->N * sizeof(float),
                     cudaMemcpyDeviceToHost));
}

void runHostMode(Bench &B) {
  std::vector<double> Up, La, Down, Total;
  for (int Rep = -1; Rep < Opt.Reps; ++Rep) {
    B.Fill(Rep + 1);
    double T0 = nowMs();
    copiesIn(B);
    double T1 = nowMs();
    B.Launch();
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    double T2 = nowMs();
    copiesOut(B);
    double T3 = nowMs();
    if (Rep < 0)
      continue; // warm-up
    Up.push_back(T1 - T0);
    La.push_back(T2 - T1);
    Down.push_back(T3 - T2);
    Total.push_back(T3 - T0);
  }
  bool Ok = B.Check();
  std::printf("{\"kernel\": \"%s\", \"label\": \"%s\", \"sizes\": \"%s\", "
              "\"ok\": %s, \"upload_ms\": %s, \"launch_ms\": %s, "
              "\"download_ms\": %s, \"total_ms\": %s, "
              "\"median_total_ms\": %.3f}\n",
              B.Name.c_str(), Opt.Label.c_str(), B.Sizes.c_str(),
              Ok ? "true" : "false", list(Up).c_str(), list(La).c_str(),
              list(Down).c_str(), list(Total).c_str(), median(Total));
  std::fflush(stdout);
}

/// Elapsed time of F on the legacy stream, by events.
double eventMs(const std::function<void()> &F) {
  cudaEvent_t A, Z;
  CHECK(cudaEventCreate(&A));
  CHECK(cudaEventCreate(&Z));
  CHECK(cudaEventRecord(A));
  F();
  CHECK(cudaEventRecord(Z));
  CHECK(cudaEventSynchronize(Z));
  float Ms = 0;
  CHECK(cudaEventElapsedTime(&Ms, A, Z));
  CHECK(cudaEventDestroy(A));
  CHECK(cudaEventDestroy(Z));
  return Ms;
}

void runBound(Bench &B) {
  std::vector<double> S, K, R;
  B.Fill(0);
  for (int Rep = -1; Rep < Opt.Reps; ++Rep) {
    double Send = eventMs([&] {
      for (size_t I = 0; I < B.In.size(); ++I)
        CHECK(cudaMemcpyAsync(B.DIn[I], B.In[I]->P,
                              B.In[I]->N * sizeof(float),
                              cudaMemcpyHostToDevice));
    });
    double Kern = eventMs([&] { B.Launch(); });
    double Recv = eventMs([&] {
      for (size_t I = 0; I < B.Out.size(); ++I)
        CHECK(cudaMemcpyAsync(B.Out[I]->P, B.DOut[I],
                              B.Out[I]->N * sizeof(float),
                              cudaMemcpyDeviceToHost));
    });
    if (Rep < 0)
      continue;
    S.push_back(Send);
    K.push_back(Kern);
    R.push_back(Recv);
  }
  bool Ok = B.Check();
  double Bound = std::max(median(S), std::max(median(K), median(R)));
  std::printf("{\"kernel\": \"%s\", \"label\": \"%s\", \"sizes\": \"%s\", "
              "\"ok\": %s, \"send_ms\": %s, \"kernel_ms\": %s, "
              "\"receive_ms\": %s, \"bound_ms\": %.3f}\n",
              B.Name.c_str(), Opt.Label.c_str(), B.Sizes.c_str(),
              Ok ? "true" : "false", list(S).c_str(), list(K).c_str(),
              list(R).c_str(), Bound);
  std::fflush(stdout);
}

float *deviceArray(long N) {
  float *P = nullptr;
  CHECK(cudaMalloc(&P, N * sizeof(float)));
  return P;
}

bool close(float Got, float Want) {
  return std::fabs(Got - Want) <= 1e-4f * std::max(1.0f, std::fabs(Want));
}

bool sampled(const char *Name, long N, const std::function<bool(long)> &Ok) {
  for (long I = 1; I < N - 1; I += 4099)
    if (!Ok(I)) {
      std::fprintf(stderr, "pipeline: %s: wrong result at %ld\n", Name, I);
      return false;
    }
  return true;
}

void fill(HostArray &A, int Salt, float Lo, float Hi) {
  parallelFor(A.N, [&](long L, long H) {
    for (long I = L; I < H; ++I)
      A.P[I] = Lo + (Hi - Lo) * hashf(I, Salt);
  });
}

void run(Bench &B) {
  std::fprintf(stderr, "pipeline: %s (%s) %s\n", B.Name.c_str(),
               B.Sizes.c_str(), Opt.Label.c_str());
  if (Opt.Bound)
    runBound(B);
  else
    runHostMode(B);
  for (float *P : B.DIn)
    CHECK(cudaFree(P));
  for (float *P : B.DOut)
    CHECK(cudaFree(P));
  for (HostArray *A : B.In)
    delete A;
  for (HostArray *A : B.Out)
    delete A;
}

void benchVecadd() {
  long N = Opt.Small ? (1L << 20) + 77 : (1L << 28) * Opt.Scale;
  Bench B;
  B.Name = "vecadd";
  B.Sizes = "n=" + std::to_string(N);
  B.In = {new HostArray(N), new HostArray(N)};
  B.Out = {new HostArray(N)};
  B.DIn = {deviceArray(N), deviceArray(N)};
  B.DOut = {deviceArray(N)};
  B.Fill = [&B](int Rep) {
    fill(*B.In[0], 2 * Rep, -1, 1);
    fill(*B.In[1], 2 * Rep + 1, -1, 1);
  };
  B.Launch = [&B, N] {
    vecadd<<<unsigned((N + 255) / 256), 256>>>(B.DIn[0], B.DIn[1], B.DOut[0],
                                                N);
  };
  B.Check = [&B, N] {
    return sampled("vecadd", N, [&](long I) {
      return B.Out[0]->P[I] == B.In[0]->P[I] + B.In[1]->P[I];
    });
  };
  run(B);
}

void benchStencil1d() {
  long N = Opt.Small ? (1L << 20) + 77 : (1L << 28) * Opt.Scale;
  Bench B;
  B.Name = "stencil1d";
  B.Sizes = "n=" + std::to_string(N);
  B.In = {new HostArray(N)};
  B.Out = {new HostArray(N)};
  B.DIn = {deviceArray(N)};
  B.DOut = {deviceArray(N)};
  B.Fill = [&B](int Rep) { fill(*B.In[0], Rep, 0, 1); };
  B.Launch = [&B, N] {
    stencil1d<<<unsigned((N + 255) / 256), 256>>>(B.DIn[0], B.DOut[0], N);
  };
  B.Check = [&B, N] {
    const float *X = B.In[0]->P;
    return sampled("stencil1d", N, [&](long I) {
      return close(B.Out[0]->P[I],
                   0.25f * X[I - 1] + 0.5f * X[I] + 0.25f * X[I + 1]);
    });
  };
  run(B);
}

void benchStencil2d() {
  int W = Opt.Small ? 1024 : 16384;
  int H = Opt.Small ? 777 : int(16384 * Opt.Scale);
  long N = long(W) * H;
  Bench B;
  B.Name = "stencil2d";
  B.Sizes = std::to_string(W) + "x" + std::to_string(H);
  B.In = {new HostArray(N)};
  B.Out = {new HostArray(N)};
  B.DIn = {deviceArray(N)};
  B.DOut = {deviceArray(N)};
  B.Fill = [&B](int Rep) { fill(*B.In[0], Rep, 0, 1); };
  B.Launch = [&B, W, H] {
    dim3 Block(32, 8), Grid((W + 31) / 32, (H + 7) / 8);
    stencil2d<<<Grid, Block>>>(B.DIn[0], B.DOut[0], W, H);
  };
  B.Check = [&B, W, H, N] {
    const float *X = B.In[0]->P;
    return sampled("stencil2d", N, [&](long C) {
      long X0 = C % W, Y0 = C / W;
      if (X0 == 0 || X0 == W - 1 || Y0 == 0 || Y0 == H - 1)
        return true;
      return close(B.Out[0]->P[C], 0.2f * (X[C] + X[C - 1] + X[C + 1] +
                                           X[C - W] + X[C + W]));
    });
  };
  run(B);
}

void benchBlackScholes() {
  long N = Opt.Small ? (1L << 20) + 77 : (1L << 27) * Opt.Scale;
  Bench B;
  B.Name = "blackscholes";
  B.Sizes = "n=" + std::to_string(N);
  B.In = {new HostArray(N), new HostArray(N), new HostArray(N)};
  B.Out = {new HostArray(N), new HostArray(N)};
  B.DIn = {deviceArray(N), deviceArray(N), deviceArray(N)};
  B.DOut = {deviceArray(N), deviceArray(N)};
  B.Fill = [&B](int Rep) {
    fill(*B.In[0], 3 * Rep, 5, 30);
    fill(*B.In[1], 3 * Rep + 1, 1, 100);
    fill(*B.In[2], 3 * Rep + 2, 0.25f, 10);
  };
  B.Launch = [&B, N] {
    blackscholes<<<unsigned((N + 255) / 256), 256>>>(
        B.DIn[0], B.DIn[1], B.DIn[2], B.DOut[0], B.DOut[1], N);
  };
  B.Check = [&B, N] {
    return sampled("blackscholes", N, [&](long I) {
      float C, P;
      bsOne(B.In[0]->P[I], B.In[1]->P[I], B.In[2]->P[I], C, P);
      return std::fabs(B.Out[0]->P[I] - C) <= 1e-3f * std::max(1.0f, C) &&
             std::fabs(B.Out[1]->P[I] - P) <= 1e-3f * std::max(1.0f, P);
    });
  };
  run(B);
}

bool listed(const std::string &Kernel) {
  std::string L = "," + Opt.Kernels + ",";
  return L.find("," + Kernel + ",") != std::string::npos;
}

} // namespace

int main(int Argc, char **Argv) {
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    auto Next = [&] {
      if (I + 1 >= Argc) {
        std::fprintf(stderr, "pipeline: %s needs a value\n", A.c_str());
        std::exit(2);
      }
      return std::string(Argv[++I]);
    };
    if (A == "--kernels")
      Opt.Kernels = Next();
    else if (A == "--reps")
      Opt.Reps = std::max(1, std::atoi(Next().c_str()));
    else if (A == "--scale")
      Opt.Scale = std::max(1, std::atoi(Next().c_str()));
    else if (A == "--small")
      Opt.Small = true;
    else if (A == "--bound")
      Opt.Bound = true;
    else if (A == "--label")
      Opt.Label = Next();
    else {
      std::fprintf(stderr,
                   "usage: pipeline [--kernels a,b,...] [--reps N] "
                   "[--scale S] [--small] [--bound] [--label L]\n");
      return 2;
    }
  }
  if (listed("vecadd"))
    benchVecadd();
  if (listed("stencil1d"))
    benchStencil1d();
  if (listed("stencil2d"))
    benchStencil2d();
  if (listed("blackscholes"))
    benchBlackScholes();
  return 0;
}
