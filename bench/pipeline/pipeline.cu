// Transfer pipelining's benchmark (issue 27; docs/runtime.md, "Transfer
// pipelining"): an ordinary CUDA program in host mode -- inputs rewritten
// on the host before every repetition, copied in with cudaMemcpy, one
// launch, results copied back -- built by nvcc and by `cleave compile`;
// bench/pipeline/run.sh runs it under the configurations it compares.
//
// Kernels: vecadd (c = a + b), stencil1d (3 points), stencil2d (5 points
// on a W x H grid of 32 x 8 blocks), blackscholes (3 inputs, 2 outputs),
// and Luo's TPSM cases (digest 000 §3.1): sepia and filter (a 5 x 5 linear
// filter, weights in __constant__ memory) on an interleaved RGB image of
// bytes, 16 x 16 blocks; matmul_sh and matmul_rh, the naive matrix product
// C = A B (A is M x K, one thread per element of C, 16 x 16 blocks) in
// Luo's send-heavy shape M x K x N = 358400 x 512 x 14 and his
// receive-heavy one 16384 x 4 x 7168.
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
// --streams (vecadd and blackscholes): the program pipelines by hand, as a
// CUDA user writes it: pinned host arrays (cudaMallocHost), 4 streams, the
// elements cut into C chunks, chunk c's copies in, kernel and copies back
// queued on stream c % 4 with cudaMemcpyAsync; total_ms from the first
// copy queued to cudaDeviceSynchronize. One line per C in 8, 16, 32.
//
// Results are checked on a sample of elements against a host reference of
// the current inputs after the last repetition (ok; PASS or FAIL on
// stderr). One JSON line per kernel on stdout; progress on stderr.
//
// Usage: pipeline [--kernels a,b,...] [--reps N] [--scale S] [--small]
//                 [--bound | --streams] [--label L]
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

__host__ __device__ inline unsigned char toByte(float v) {
  return (unsigned char)fminf(255.0f, fmaxf(0.0f, v));
}

/// Sepia tone of one RGB pixel.
__host__ __device__ inline void sepiaPixel(const unsigned char *in,
                                           unsigned char *out) {
  float r = in[0], g = in[1], b = in[2];
  out[0] = toByte(0.393f * r + 0.769f * g + 0.189f * b);
  out[1] = toByte(0.349f * r + 0.686f * g + 0.168f * b);
  out[2] = toByte(0.272f * r + 0.534f * g + 0.131f * b);
}

__global__ void sepia(const unsigned char *in, unsigned char *out, int w,
                      int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    long p = long(y) * w + x;
    sepiaPixel(in + 3 * p, out + 3 * p);
  }
}

__constant__ float c_weights[25];

/// Pixel (x, y) of the W x H RGB image \p in through the 5 x 5 filter, each
/// channel, into \p out (3 bytes); border pixels keep their value.
__host__ __device__ inline void filterPixel(const unsigned char *in, int w,
                                            int h, int x, int y,
                                            const float *wts,
                                            unsigned char *out) {
  long p = long(y) * w + x;
  if (x < 2 || y < 2 || x >= w - 2 || y >= h - 2) {
    for (int c = 0; c < 3; ++c)
      out[c] = in[3 * p + c];
    return;
  }
  for (int c = 0; c < 3; ++c) {
    float acc = 0.0f;
    for (int dy = -2; dy <= 2; ++dy)
      for (int dx = -2; dx <= 2; ++dx)
        acc += wts[(dy + 2) * 5 + dx + 2] * in[3 * (p + long(dy) * w + dx) + c];
    out[c] = toByte(acc);
  }
}

__global__ void filter(const unsigned char *in, unsigned char *out, int w,
                       int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h)
    filterPixel(in, w, h, x, y, c_weights, out + 3 * (long(y) * w + x));
}

__global__ void matmul(const float *a, const float *b, float *c, int m, int k,
                       int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) {
    float acc = 0.0f;
    for (int i = 0; i < k; ++i)
      acc += a[long(row) * k + i] * b[long(i) * n + col];
    c[long(row) * n + col] = acc;
  }
}

namespace {

struct Options {
  std::string Kernels = "vecadd,stencil1d,stencil2d,blackscholes,sepia,"
                        "filter,matmul_sh,matmul_rh";
  int Reps = 5;
  long Scale = 1;
  bool Small = false, Bound = false, Streams = false;
  std::string Label = "run";
  /// Whether host arrays are page-locked (cudaMallocHost).
  bool pinned() const { return Bound || Streams; }
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
  unsigned long X =
      (unsigned long)I * 2654435761ul + (unsigned long)Salt * 40503ul;
  X ^= X >> 13;
  X *= 0x5bd1e995ul;
  X ^= X >> 15;
  return float(X % 10000) / 10000.0f;
}

/// A host array of N elements of Elem bytes (floats unless said): pageable,
/// or from cudaMallocHost with --bound and --streams.
struct HostArray {
  void *Raw = nullptr;
  float *P = nullptr;         // as floats
  unsigned char *U = nullptr; // as bytes
  long N = 0;
  size_t Bytes = 0;
  explicit HostArray(long N, size_t Elem = sizeof(float))
      : N(N), Bytes(N * Elem) {
    if (Opt.pinned())
      CHECK(cudaMallocHost(&Raw, Bytes));
    else
      Raw = std::malloc(Bytes);
    if (!Raw) {
      std::fprintf(stderr, "pipeline: out of host memory\n");
      std::exit(1);
    }
    P = static_cast<float *>(Raw);
    U = static_cast<unsigned char *>(Raw);
  }
  ~HostArray() {
    if (Opt.pinned())
      cudaFreeHost(Raw);
    else
      std::free(Raw);
  }
};

/// One kernel's arrays, launch and check.
struct Bench {
  std::string Name, Sizes;
  std::vector<HostArray *> In, Out;
  std::vector<void *> DIn, DOut;
  std::function<void(int Rep)> Fill; // the inputs of repetition Rep
  std::function<void()> Launch;      // on the legacy stream
  std::function<bool()> Check;       // sampled, against the inputs
  /// Element-wise kernels (--streams): elements [Lo, Hi) on stream S,
  /// every array offset by Lo.
  std::function<void(long Lo, long Hi, cudaStream_t S)> LaunchRange;
  /// The launch's blocks and threads per block.
  long Blocks = 0;
  int Threads = 256;
};

/// One wave of the GPU for blocks of \p Threads threads: its SMs times the
/// blocks one SM holds by the thread and block limits.
long waveBlocks(int Threads) {
  cudaDeviceProp P;
  CHECK(cudaGetDeviceProperties(&P, 0));
  return long(P.multiProcessorCount) *
         std::min(P.maxBlocksPerMultiProcessor,
                  P.maxThreadsPerMultiProcessor / Threads);
}

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
    CHECK(cudaMemcpy(B.DIn[I], B.In[I]->Raw, B.In[I]->Bytes,
                     cudaMemcpyHostToDevice));
}
void copiesOut(Bench &B) {
  for (size_t I = 0; I < B.Out.size(); ++I)
    CHECK(cudaMemcpy(B.Out[I]->Raw, B.DOut[I], B.Out[I]->Bytes,
                     cudaMemcpyDeviceToHost));
}

/// PASS or FAIL on stderr, for the log.
bool verdict(const Bench &B, bool Ok) {
  std::fprintf(stderr, "pipeline: %s %s: %s\n", B.Name.c_str(),
               Opt.Label.c_str(), Ok ? "PASS" : "FAIL");
  return Ok;
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
  bool Ok = verdict(B, B.Check());
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
        CHECK(cudaMemcpyAsync(B.DIn[I], B.In[I]->Raw, B.In[I]->Bytes,
                              cudaMemcpyHostToDevice));
    });
    double Kern = eventMs([&] { B.Launch(); });
    double Recv = eventMs([&] {
      for (size_t I = 0; I < B.Out.size(); ++I)
        CHECK(cudaMemcpyAsync(B.Out[I]->Raw, B.DOut[I], B.Out[I]->Bytes,
                              cudaMemcpyDeviceToHost));
    });
    if (Rep < 0)
      continue;
    S.push_back(Send);
    K.push_back(Kern);
    R.push_back(Recv);
  }
  bool Ok = verdict(B, B.Check());
  double Bound = std::max(median(S), std::max(median(K), median(R)));
  // The bytes each way: bench/linkstates computes the link bound of
  // several GPUs from them.
  double SendBytes = 0, ReceiveBytes = 0;
  for (auto &X : B.In)
    SendBytes += double(X->Bytes);
  for (auto &X : B.Out)
    ReceiveBytes += double(X->Bytes);
  std::printf("{\"kernel\": \"%s\", \"label\": \"%s\", \"sizes\": \"%s\", "
              "\"ok\": %s, \"send_ms\": %s, \"kernel_ms\": %s, "
              "\"receive_ms\": %s, \"bound_ms\": %.3f, \"blocks\": %ld, "
              "\"wave_blocks\": %ld, \"send_bytes\": %.0f, "
              "\"receive_bytes\": %.0f}\n",
              B.Name.c_str(), Opt.Label.c_str(), B.Sizes.c_str(),
              Ok ? "true" : "false", list(S).c_str(), list(K).c_str(),
              list(R).c_str(), Bound, B.Blocks, waveBlocks(B.Threads),
              SendBytes, ReceiveBytes);
  std::fflush(stdout);
}

/// The hand-written pipeline of --streams: per chunk, on stream c % 4,
/// its slice of every input in, the kernel on it, its slice of every
/// output back. All arrays have one element per thread.
void runStreams(Bench &B) {
  const int NumStreams = 4;
  cudaStream_t S[NumStreams];
  for (cudaStream_t &X : S)
    CHECK(cudaStreamCreate(&X));
  long N = B.In[0]->N;
  for (int Chunks : {8, 16, 32}) {
    std::vector<double> Total;
    for (int Rep = -1; Rep < Opt.Reps; ++Rep) {
      B.Fill(Rep + 1);
      double T0 = nowMs();
      for (int C = 0; C < Chunks; ++C) {
        long Lo = N * C / Chunks, Hi = N * (C + 1) / Chunks;
        size_t Off = Lo * sizeof(float), Len = (Hi - Lo) * sizeof(float);
        cudaStream_t St = S[C % NumStreams];
        for (size_t I = 0; I < B.In.size(); ++I)
          CHECK(cudaMemcpyAsync(static_cast<char *>(B.DIn[I]) + Off,
                                B.In[I]->U + Off, Len, cudaMemcpyHostToDevice,
                                St));
        B.LaunchRange(Lo, Hi, St);
        for (size_t I = 0; I < B.Out.size(); ++I)
          CHECK(cudaMemcpyAsync(B.Out[I]->U + Off,
                                static_cast<char *>(B.DOut[I]) + Off, Len,
                                cudaMemcpyDeviceToHost, St));
      }
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      if (Rep >= 0)
        Total.push_back(nowMs() - T0);
    }
    bool Ok = verdict(B, B.Check());
    std::printf("{\"kernel\": \"%s\", \"label\": \"%s\", \"sizes\": "
                "\"%s\", \"ok\": %s, \"streams\": %d, \"chunks\": %d, "
                "\"total_ms\": %s, \"median_total_ms\": %.3f}\n",
                B.Name.c_str(), Opt.Label.c_str(), B.Sizes.c_str(),
                Ok ? "true" : "false", NumStreams, Chunks, list(Total).c_str(),
                median(Total));
    std::fflush(stdout);
  }
  for (cudaStream_t X : S)
    CHECK(cudaStreamDestroy(X));
}

void *deviceBytes(size_t Bytes) {
  void *P = nullptr;
  CHECK(cudaMalloc(&P, Bytes));
  return P;
}

float *deviceArray(long N) {
  return static_cast<float *>(deviceBytes(N * sizeof(float)));
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
  else if (Opt.Streams)
    runStreams(B);
  else
    runHostMode(B);
  for (void *P : B.DIn)
    CHECK(cudaFree(P));
  for (void *P : B.DOut)
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
  B.Blocks = (N + 255) / 256;
  B.In = {new HostArray(N), new HostArray(N)};
  B.Out = {new HostArray(N)};
  B.DIn = {deviceArray(N), deviceArray(N)};
  B.DOut = {deviceArray(N)};
  B.Fill = [&B](int Rep) {
    fill(*B.In[0], 2 * Rep, -1, 1);
    fill(*B.In[1], 2 * Rep + 1, -1, 1);
  };
  B.Launch = [&B, N] {
    vecadd<<<unsigned((N + 255) / 256), 256>>>(
        static_cast<float *>(B.DIn[0]), static_cast<float *>(B.DIn[1]),
        static_cast<float *>(B.DOut[0]), N);
  };
  B.LaunchRange = [&B](long Lo, long Hi, cudaStream_t S) {
    long M = Hi - Lo;
    vecadd<<<unsigned((M + 255) / 256), 256, 0, S>>>(
        static_cast<float *>(B.DIn[0]) + Lo,
        static_cast<float *>(B.DIn[1]) + Lo,
        static_cast<float *>(B.DOut[0]) + Lo, M);
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
  B.Blocks = (N + 255) / 256;
  B.In = {new HostArray(N)};
  B.Out = {new HostArray(N)};
  B.DIn = {deviceArray(N)};
  B.DOut = {deviceArray(N)};
  B.Fill = [&B](int Rep) { fill(*B.In[0], Rep, 0, 1); };
  B.Launch = [&B, N] {
    stencil1d<<<unsigned((N + 255) / 256), 256>>>(
        static_cast<float *>(B.DIn[0]), static_cast<float *>(B.DOut[0]), N);
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
  B.Blocks = long((W + 31) / 32) * ((H + 7) / 8);
  B.In = {new HostArray(N)};
  B.Out = {new HostArray(N)};
  B.DIn = {deviceArray(N)};
  B.DOut = {deviceArray(N)};
  B.Fill = [&B](int Rep) { fill(*B.In[0], Rep, 0, 1); };
  B.Launch = [&B, W, H] {
    dim3 Block(32, 8), Grid((W + 31) / 32, (H + 7) / 8);
    stencil2d<<<Grid, Block>>>(static_cast<float *>(B.DIn[0]),
                               static_cast<float *>(B.DOut[0]), W, H);
  };
  B.Check = [&B, W, H, N] {
    const float *X = B.In[0]->P;
    return sampled("stencil2d", N, [&](long C) {
      long X0 = C % W, Y0 = C / W;
      if (X0 == 0 || X0 == W - 1 || Y0 == 0 || Y0 == H - 1)
        return true;
      return close(B.Out[0]->P[C],
                   0.2f * (X[C] + X[C - 1] + X[C + 1] + X[C - W] + X[C + W]));
    });
  };
  run(B);
}

void benchBlackScholes() {
  long N = Opt.Small ? (1L << 20) + 77 : (1L << 27) * Opt.Scale;
  Bench B;
  B.Name = "blackscholes";
  B.Sizes = "n=" + std::to_string(N);
  B.Blocks = (N + 255) / 256;
  B.In = {new HostArray(N), new HostArray(N), new HostArray(N)};
  B.Out = {new HostArray(N), new HostArray(N)};
  B.DIn = {deviceArray(N), deviceArray(N), deviceArray(N)};
  B.DOut = {deviceArray(N), deviceArray(N)};
  B.Fill = [&B](int Rep) {
    fill(*B.In[0], 3 * Rep, 5, 30);
    fill(*B.In[1], 3 * Rep + 1, 1, 100);
    fill(*B.In[2], 3 * Rep + 2, 0.25f, 10);
  };
  auto F = [&B](int I, long Lo) { return static_cast<float *>(B.DIn[I]) + Lo; };
  auto G = [&B](int I, long Lo) {
    return static_cast<float *>(B.DOut[I]) + Lo;
  };
  B.Launch = [F, G, N] {
    blackscholes<<<unsigned((N + 255) / 256), 256>>>(F(0, 0), F(1, 0), F(2, 0),
                                                     G(0, 0), G(1, 0), N);
  };
  B.LaunchRange = [F, G](long Lo, long Hi, cudaStream_t S) {
    long M = Hi - Lo;
    blackscholes<<<unsigned((M + 255) / 256), 256, 0, S>>>(
        F(0, Lo), F(1, Lo), F(2, Lo), G(0, Lo), G(1, Lo), M);
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

void fillBytes(HostArray &A, int Salt) {
  parallelFor(long(A.Bytes), [&](long L, long H) {
    for (long I = L; I < H; ++I)
      A.U[I] = (unsigned char)(hashf(I, Salt) * 256.0f);
  });
}

/// An RGB image of W x H pixels in, one out, 16 x 16 blocks.
void imageBench(Bench &B, int W, int H) {
  long Px = long(W) * H;
  B.Sizes = std::to_string(W) + "x" + std::to_string(H) + " RGB";
  B.Blocks = long((W + 15) / 16) * ((H + 15) / 16);
  B.In = {new HostArray(Px, 3)};
  B.Out = {new HostArray(Px, 3)};
  B.DIn = {deviceBytes(Px * 3)};
  B.DOut = {deviceBytes(Px * 3)};
  B.Fill = [&B](int Rep) { fillBytes(*B.In[0], Rep); };
}

/// A pixel's channels within 1 of the reference (the GPU may fuse the
/// products into FMAs before the conversion to a byte truncates).
bool nearBytes(const unsigned char *Got, const unsigned char *Want) {
  for (int C = 0; C < 3; ++C)
    if (std::abs(int(Got[C]) - int(Want[C])) > 1)
      return false;
  return true;
}

void benchSepia() {
  int W = Opt.Small ? 1024 : 16384,
      H = Opt.Small ? 777 : int(16384 * Opt.Scale);
  Bench B;
  B.Name = "sepia";
  imageBench(B, W, H);
  B.Launch = [&B, W, H] {
    dim3 Block(16, 16), Grid((W + 15) / 16, (H + 15) / 16);
    sepia<<<Grid, Block>>>(static_cast<unsigned char *>(B.DIn[0]),
                           static_cast<unsigned char *>(B.DOut[0]), W, H);
  };
  B.Check = [&B, W, H] {
    return sampled("sepia", long(W) * H, [&](long P) {
      unsigned char Want[3];
      sepiaPixel(B.In[0]->U + 3 * P, Want);
      return nearBytes(B.Out[0]->U + 3 * P, Want);
    });
  };
  run(B);
}

void benchFilter() {
  int W = Opt.Small ? 1024 : 16384,
      H = Opt.Small ? 777 : int(16384 * Opt.Scale);
  // A 5 x 5 binomial (Gaussian-like) kernel, normalised.
  float Wts[25];
  const float Row[5] = {1, 4, 6, 4, 1};
  for (int Y = 0; Y < 5; ++Y)
    for (int X = 0; X < 5; ++X)
      Wts[Y * 5 + X] = Row[Y] * Row[X] / 256.0f;
  CHECK(cudaMemcpyToSymbol(c_weights, Wts, sizeof(Wts)));
  Bench B;
  B.Name = "filter";
  imageBench(B, W, H);
  B.Launch = [&B, W, H] {
    dim3 Block(16, 16), Grid((W + 15) / 16, (H + 15) / 16);
    filter<<<Grid, Block>>>(static_cast<unsigned char *>(B.DIn[0]),
                            static_cast<unsigned char *>(B.DOut[0]), W, H);
  };
  B.Check = [&B, W, H, &Wts] {
    return sampled("filter", long(W) * H, [&](long P) {
      unsigned char Want[3];
      filterPixel(B.In[0]->U, W, H, int(P % W), int(P / W), Wts, Want);
      return nearBytes(B.Out[0]->U + 3 * P, Want);
    });
  };
  run(B);
}

/// C = A B, A M x K, B K x N, one thread per element of C.
void benchMatmul(const char *Name, int M, int K, int N) {
  Bench B;
  B.Name = Name;
  B.Sizes =
      std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N);
  B.Blocks = long((N + 15) / 16) * ((M + 15) / 16);
  B.In = {new HostArray(long(M) * K), new HostArray(long(K) * N)};
  B.Out = {new HostArray(long(M) * N)};
  B.DIn = {deviceArray(long(M) * K), deviceArray(long(K) * N)};
  B.DOut = {deviceArray(long(M) * N)};
  B.Fill = [&B](int Rep) {
    fill(*B.In[0], 2 * Rep, -1, 1);
    fill(*B.In[1], 2 * Rep + 1, -1, 1);
  };
  B.Launch = [&B, M, K, N] {
    dim3 Block(16, 16), Grid((N + 15) / 16, (M + 15) / 16);
    matmul<<<Grid, Block>>>(static_cast<float *>(B.DIn[0]),
                            static_cast<float *>(B.DIn[1]),
                            static_cast<float *>(B.DOut[0]), M, K, N);
  };
  B.Check = [&B, Name, M, K, N] {
    const float *A = B.In[0]->P, *Bm = B.In[1]->P;
    return sampled(Name, long(M) * N, [&](long E) {
      long R = E / N, C = E % N;
      // Float sums of K products are within K u sum|a b| of the exact one
      // (u = 2^-24), in any order, fused or not; twice that is allowed.
      double Want = 0, Abs = 0;
      for (int I = 0; I < K; ++I) {
        double T = double(A[R * K + I]) * Bm[long(I) * N + C];
        Want += T;
        Abs += std::fabs(T);
      }
      return std::fabs(B.Out[0]->P[E] - Want) <= 1.2e-7 * K * Abs + 1e-6;
    });
  };
  run(B);
}

/// Whether to run \p Kernel: named by --kernels and, with --streams, one
/// of the element-wise kernels that have a hand-written pipeline.
bool listed(const std::string &Kernel) {
  auto In = [&](const std::string &List) {
    return ("," + List + ",").find("," + Kernel + ",") != std::string::npos;
  };
  return In(Opt.Kernels) && (!Opt.Streams || In("vecadd,blackscholes"));
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
    else if (A == "--streams")
      Opt.Streams = true;
    else if (A == "--label")
      Opt.Label = Next();
    else {
      std::fprintf(stderr, "usage: pipeline [--kernels a,b,...] [--reps N] "
                           "[--scale S] [--small] [--bound | --streams] "
                           "[--label L]\n");
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
  if (listed("sepia"))
    benchSepia();
  if (listed("filter"))
    benchFilter();
  // Luo's shapes (Table 4.1); --scale multiplies M.
  if (listed("matmul_sh"))
    benchMatmul("matmul_sh", Opt.Small ? 4096 : 358400 * int(Opt.Scale),
                Opt.Small ? 64 : 512, 14);
  if (listed("matmul_rh"))
    benchMatmul("matmul_rh", Opt.Small ? 512 : 16384 * int(Opt.Scale), 4,
                Opt.Small ? 1024 : 7168);
  return 0;
}
