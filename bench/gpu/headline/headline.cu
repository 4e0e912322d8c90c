// The headline multi-device benchmark (issue 6 §5): the suite's kernels,
// an ordinary CUDA program built by `cleave compile`, timed through Cleave's
// runtime over whatever devices CLEAVE_DEVICES selects, split the way
// CLEAVE_PARTITION (even, model, ...) or CLEAVE_SPLIT (explicit weights, the
// sweep for the best static split) says. bench/gpu/headline/run.sh runs it
// over the device sets and policies; report.py makes the table and the plot.
//
// Two modes per kernel, in the same process:
//
//   resident  inputs already valid on the devices (a warm-up repetition
//             moved them); only the launches are timed, outputs stay where
//             they were computed;
//   host      inputs rewritten on the host before every repetition (stale
//             on every device), then the launches and the copy of the
//             outputs back: the transfers are included.
//
// A repetition is timed with a steady clock around the launches and
// cudaDeviceSynchronize. At most --reps repetitions, fewer (never below 3)
// once a kernel and mode has used --budget-ms (the CPU alone is slow on the
// GPU-sized inputs). Outputs are checked against a CPU reference (sampled
// where the reference is slow) after each mode; where the kernel is linear,
// the host mode negates the inputs before every repetition, so stale data
// shows. The plan of the last launch of each mode (cleave_last_plan, what
// CLEAVE_LOG=plan prints) gives the blocks per device.
//
// One JSON line per kernel and mode on stdout; progress on stderr.
//
// Sizes (without --small). Each GPU's share of a 4-way split must itself
// take well past the runtime's fixed cost per launch (about 20 us). At
// the earlier sizes the memory-bound kernels took 0.2-0.4 ms on one H200,
// about 60 us per GPU on 4, and even vecadd split by hand without Cleave
// (2^26 floats, native_split.cu) reached only 3.09x on 4 H200s (2026-11-21,
// commit 0df30f0; raw files in git history). Those kernels now have
// 4 times the data, so that one resident launch on one H200 takes roughly
// 1 ms (extrapolated from the earlier timings, not yet measured):
//
//   vecadd, triad   2^28 floats per array        (was 2^26)
//   blackscholes    2^27 options                 (was 2^25)
//   transpose       16384 x 16384 floats         (was 8192 x 8192)
//   reduction       2^29 floats                  (was 2^27)
//   histogram       2^30 bytes                   (was 2^28)
//   jacobi2d        16384 x 16384, 10 steps      (was 8192 x 8192)
//   stencil3d       608^3 floats                 (was 384^3)
//
// matmul (n = 4096) already takes 15 ms on one H200 and keeps its size.
// nbody has 262144 bodies (was 131072) and 4 threads per body (8192
// blocks of 128 threads; 1 before -s25): a GPU's quarter of the grid then
// holds about 62 warps per SM, where with one thread per body it held 16
// and left the SMs short of warps (see the kernel). One launch takes about
// 47 ms on one H200 and seconds on the CPU, whose runs the repetition
// budget cuts to 3. The histogram's grid follows its data, one
// block of 256 threads per 2^17 bytes (8192 blocks), so that splitting its
// blocks over devices divides its work; with a grid of one fixed wave, as
// before, every block did the same work on any number of devices. A
// kernel holds at most 3 GiB of buffers (vecadd, triad, jacobi2d), on the
// host and on each GPU, and frees them before the next kernel starts.
//
// --scale S (1, 2 or 4; default 2) multiplies the data of the seven kernels
// above that take about 1 ms on one H200 by S: the 1-D sizes, the rows of
// transpose and jacobi2d, the z-planes of stencil3d. A kernel then holds up
// to 3S GiB. The per-launch fixed cost of a split (about 20 us over 4
// GPUs, by hand as through Cleave) weighs S times less against each GPU's
// share. At S = 1 a GPU's share over 4 H200s is 0.19-0.4 ms, and vecadd
// split by hand without Cleave (native_split.cu, one host thread) reached
// 3.65x in one run and 3.72x in another: the suite measured that fixed
// cost more than the split. At S = 2 the hand split reaches 3.82x
// (bench/results/headline/headline-2026-11-22-h200x4-d01d453-scale.md),
// hence the default.
//
// The host work on these inputs (filling them, the references, the host
// mode's negation) runs on up to 64 threads (parallelFor): on one thread
// it took seconds per kernel. The inputs are hashes of their index, the
// same for any number of threads.
//
//   pinned    host mode with the host arrays page-locked (cudaMallocHost;
//             --pinned-host, one process of its own).
//
// Usage: headline [--small] [--scale 1|2|4] [--reps N] [--budget-ms MS]
//                 [--kernels a,b,...] [--modes resident,host] [--set LABEL]
//                 [--policy LABEL] [--pinned-host]
#include "../common/CudaCheck.h"
#include "cleave_rt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>
#include <cuda_runtime.h>

// --- Kernels -----------------------------------------------------------------

__global__ void vecadd(const float *a, const float *b, float *c, long n) {
  long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

__global__ void triad(float *a, const float *b, const float *c, float s,
                      long n) {
  long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n)
    a[i] = b[i] + s * c[i];
}

__device__ inline float cndf(float d) {
  const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f,
              A4 = -1.821255978f, A5 = 1.330274429f;
  const float RSQRT2PI = 0.39894228040143267793994605993438f;
  float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
  float c = RSQRT2PI * __expf(-0.5f * d * d) *
            (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
  return d > 0 ? 1.0f - c : c;
}

__global__ void blackscholes(float *call, float *put, const float *s,
                             const float *x, const float *t, float r, float v,
                             long n) {
  long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float sq = sqrtf(t[i]);
  float d1 = (__logf(s[i] / x[i]) + (r + 0.5f * v * v) * t[i]) / (v * sq);
  float d2 = d1 - v * sq;
  float e = __expf(-r * t[i]);
  call[i] = s[i] * cndf(d1) - x[i] * e * cndf(d2);
  put[i] = x[i] * e * (1.0f - cndf(d2)) - s[i] * (1.0f - cndf(d1));
}

constexpr int Tile = 32;
__global__ void matmul(const float *a, const float *b, float *c, int n) {
  __shared__ float as[Tile][Tile];
  __shared__ float bs[Tile][Tile + 1];
  int row = blockIdx.y * Tile + threadIdx.y;
  int col = blockIdx.x * Tile + threadIdx.x;
  float acc = 0;
  for (int k0 = 0; k0 < n; k0 += Tile) {
    as[threadIdx.y][threadIdx.x] = a[size_t(row) * n + k0 + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = b[size_t(k0 + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < Tile; ++k)
      acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
    __syncthreads();
  }
  c[size_t(row) * n + col] = acc;
}

constexpr int TransposeRows = 8;
__global__ void transpose(float *out, const float *in, int rows, int cols) {
  __shared__ float tile[Tile][Tile + 1];
  int x = blockIdx.x * Tile + threadIdx.x;
  int y = blockIdx.y * Tile + threadIdx.y;
  for (int j = 0; j < Tile; j += TransposeRows)
    if (x < cols && y + j < rows)
      tile[threadIdx.y + j][threadIdx.x] = in[size_t(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * Tile + threadIdx.x;
  y = blockIdx.x * Tile + threadIdx.y;
  for (int j = 0; j < Tile; j += TransposeRows)
    if (x < rows && y + j < cols)
      out[size_t(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

constexpr unsigned ReduceBlock = 512;
__global__ void reduction(const float *in, float *out, unsigned n) {
  __shared__ float partial[ReduceBlock];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * (2 * ReduceBlock) + tid;
  float sum = 0;
  if (i < n)
    sum = in[i];
  if (i + ReduceBlock < n)
    sum += in[i + ReduceBlock];
  partial[tid] = sum;
  __syncthreads();
  for (unsigned s = ReduceBlock / 2; s > 32; s >>= 1) {
    if (tid < s)
      partial[tid] = sum = sum + partial[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    sum += partial[tid + 32];
    for (int offset = 16; offset > 0; offset >>= 1)
      sum += __shfl_down_sync(0xffffffffu, sum, offset);
  }
  if (tid == 0)
    out[blockIdx.x] = sum;
}

// Each block counts one contiguous chunk of Items * HistThreads bytes, its
// threads reading it in coalesced rows (blockDim.x must be HistThreads), so
// a range of blocks reads a range of the data: a split over devices moves
// each device its own part only. With a grid-stride loop, as before, every
// block's reads spread over the whole array, every device needed all of
// it, and with the data starting on the host two H200s were no faster
// than one (bench/results/headline/headline-2026-11-22-h200x2-9a503e5.md).
constexpr int Bins = 256, HistThreads = 256;
template <int Items>
__global__ void histogram(const unsigned char *data, unsigned *bins, long n) {
  __shared__ unsigned local[Bins];
  for (int b = threadIdx.x; b < Bins; b += blockDim.x)
    local[b] = 0;
  __syncthreads();
  long base = long(blockIdx.x) * (HistThreads * Items) + threadIdx.x;
  for (int k = 0; k < Items; ++k) {
    long i = base + long(k) * HistThreads;
    if (i < n)
      atomicAdd(&local[data[i]], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < Bins; b += blockDim.x)
    if (local[b] != 0)
      atomicAdd(&bins[b], local[b]);
}

constexpr float JacobiC0 = 0.2f, JacobiC1 = 0.2f;
__global__ void jacobi(const float *in, float *out, int nx, int ny) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1)
    return;
  size_t i = size_t(y) * nx + x;
  out[i] = JacobiC0 * in[i] +
           JacobiC1 * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
}

constexpr float Softening2 = 0.01f;
// nbody: NbodyLanes threads per body, NbodyBodies bodies per block (block
// (NbodyLanes, NbodyBodies), the lanes of a body adjacent in one warp),
// tiles of NbodyTile bodies in shared memory. Each lane sums every
// NbodyLanes-th body of a tile, then the lanes combine by shuffles. With
// one thread per body, a quarter grid (each GPU's share over 4 GPUs) held
// about 16 warps per SM and took 13.30 ms on one H200 against 47.61 ms for
// the whole grid (3.58x); with 4 lanes per body, 12.46 against 47.15 ms
// (3.78x; 4x H200, 2026-11-22; raw file in git history). The
// constant trip count lets the inner loop be unrolled.
constexpr int NbodyLanes = 4, NbodyBodies = 32, NbodyTile = 512;
__global__ void nbody(const float4 *pos, const float4 *vel, float4 *posNext,
                      float4 *velNext, int n, float dt) {
  __shared__ float4 tileP[NbodyTile];
  int i = blockIdx.x * NbodyBodies + threadIdx.y;
  int t = threadIdx.y * NbodyLanes + threadIdx.x;
  float4 p = i < n ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int base = 0; base < n; base += NbodyTile) {
    for (int k = t; k < NbodyTile; k += NbodyLanes * NbodyBodies) {
      int j = base + k;
      tileP[k] = j < n ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    __syncthreads();
#pragma unroll 8
    for (int m = 0; m < NbodyTile / NbodyLanes; ++m) {
      float4 q = tileP[m * NbodyLanes + threadIdx.x];
      float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
      float inv = rsqrtf(dx * dx + dy * dy + dz * dz + Softening2);
      float s = q.w * inv * inv * inv;
      ax += dx * s;
      ay += dy * s;
      az += dz * s;
    }
    __syncthreads();
  }
  for (int o = NbodyLanes / 2; o > 0; o >>= 1) {
    ax += __shfl_xor_sync(0xffffffffu, ax, o);
    ay += __shfl_xor_sync(0xffffffffu, ay, o);
    az += __shfl_xor_sync(0xffffffffu, az, o);
  }
  if (threadIdx.x == 0 && i < n) {
    float4 v = vel[i];
    v.x += ax * dt;
    v.y += ay * dt;
    v.z += az * dt;
    velNext[i] = v;
    posNext[i] = make_float4(p.x + v.x * dt, p.y + v.y * dt, p.z + v.z * dt,
                             p.w);
  }
}

__global__ void stencil3d(const float *in, float *out, int nx, int ny,
                          int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < 1 || y < 1 || z < 1 || x >= nx - 1 || y >= ny - 1 || z >= nz - 1)
    return;
  long idx = (long(z) * ny + y) * nx + x;
  long sy = nx, sz = long(nx) * ny;
  out[idx] = 0.4f * in[idx] + 0.1f * (in[idx - 1] + in[idx + 1] + in[idx - sy] +
                                      in[idx + sy] + in[idx - sz] + in[idx + sz]);
}

// --- Harness -----------------------------------------------------------------

namespace {

struct Options {
  bool Small = false;
  // --scale: the data of the kernels that take about 1 ms on one H200
  // (all but matmul and nbody), times 1, 2 or 4.
  int Scale = 2;
  int Reps = 10;
  double BudgetMs = 1500;
  std::string Kernels = "all";
  std::string Modes = "resident,host";
  std::string Set, Policy;
  // --pinned-host: the host arrays come from cudaMallocHost (page-locked),
  // and the host mode is reported as mode "pinned".
  bool PinnedHost = false;
};
Options Opt;

bool listed(const std::string &List, const std::string &Item) {
  if (List == "all")
    return true;
  size_t P = 0;
  while (P <= List.size()) {
    size_t E = List.find(',', P);
    if (E == std::string::npos)
      E = List.size();
    if (List.compare(P, E - P, Item) == 0)
      return true;
    P = E + 1;
  }
  return false;
}

// A fast deterministic fill (splitmix64 of the index): the inputs are large
// and a process fills them once per kernel.
uint64_t mix(uint64_t X) {
  X += 0x9e3779b97f4a7c15ull;
  X = (X ^ (X >> 30)) * 0xbf58476d1ce4e5b9ull;
  X = (X ^ (X >> 27)) * 0x94d049bb133111ebull;
  return X ^ (X >> 31);
}
float unit(uint64_t Seed, size_t I) {
  return float(mix(Seed * 0x100000001b3ull + I) >> 40) * (1.0f / 16777216.0f);
}

// Host work over the inputs (GBs at the default sizes) on up to
// MaxHostThreads threads. parallelFor calls Body(Begin, End, Chunk) once
// for each of at most hostThreads() contiguous chunks of [0, N), each at
// least Grain long (one chunk, on the calling thread, when N < 2 * Grain),
// Chunk numbering them from 0, and returns when all are done. A chunk whose
// thread cannot be started runs on the calling thread.
constexpr unsigned MaxHostThreads = 64;
unsigned hostThreads() {
  return std::clamp(std::thread::hardware_concurrency(), 1u, MaxHostThreads);
}
template <class F>
void parallelFor(size_t N, F &&Body, size_t Grain = size_t(1) << 16) {
  if (N == 0)
    return;
  size_t Chunks = std::min<size_t>(
      hostThreads(), std::max<size_t>(N / std::max<size_t>(Grain, 1), 1));
  std::vector<std::thread> Threads;
  Threads.reserve(Chunks);
  for (size_t C = 1; C < Chunks; ++C) {
    size_t Begin = N * C / Chunks, End = N * (C + 1) / Chunks;
    try {
      Threads.emplace_back(
          [&Body, Begin, End, C] { Body(Begin, End, unsigned(C)); });
    } catch (const std::system_error &) {
      Body(Begin, End, unsigned(C));
    }
  }
  Body(size_t(0), N / Chunks, 0u);
  for (std::thread &T : Threads)
    T.join();
}

// The first I in [0, N) for which Wrong(I) holds, or N. Each chunk stops at
// its own first; the smallest of those is the first of all, whatever the
// number of threads.
template <class F>
size_t firstWrong(size_t N, F &&Wrong, size_t Grain = size_t(1) << 16) {
  std::vector<size_t> First(MaxHostThreads, N);
  parallelFor(
      N,
      [&](size_t Begin, size_t End, unsigned Chunk) {
        for (size_t I = Begin; I < End; ++I)
          if (Wrong(I)) {
            First[Chunk] = I;
            return;
          }
      },
      Grain);
  return *std::min_element(First.begin(), First.end());
}

// The host arrays of the inputs and outputs. Their elements are left
// uninitialized: each is written whole (by fill, or by the download of an
// output) before it is read, and zeroing GBs on one thread first would
// cost a pass of its own; fill touches the pages on all the threads. With
// --pinned-host they are page-locked (cudaMallocHost), as a CUDA program
// that cares for its transfers allocates them.
template <class T> struct NoInit : std::allocator<T> {
  template <class U> struct rebind { using other = NoInit<U>; };
  NoInit() = default;
  template <class U> NoInit(const NoInit<U> &) noexcept {}
  T *allocate(size_t N) {
    if (!Opt.PinnedHost)
      return std::allocator<T>::allocate(N);
    void *P = nullptr;
    if (cudaMallocHost(&P, N * sizeof(T)) != cudaSuccess) {
      std::fprintf(stderr, "headline: cudaMallocHost of %zu bytes failed\n",
                   N * sizeof(T));
      std::exit(1);
    }
    return static_cast<T *>(P);
  }
  void deallocate(T *P, size_t N) {
    if (Opt.PinnedHost)
      cudaFreeHost(P);
    else
      std::allocator<T>::deallocate(P, N);
  }
  template <class U, class... Args> void construct(U *P, Args &&...A) {
    if constexpr (sizeof...(Args) == 0)
      ::new (static_cast<void *>(P)) U;
    else
      ::new (static_cast<void *>(P)) U(std::forward<Args>(A)...);
  }
};
template <class T> using HostVec = std::vector<T, NoInit<T>>;

void fill(HostVec<float> &V, float Lo, float Hi, uint64_t Seed) {
  parallelFor(V.size(), [&](size_t Begin, size_t End, unsigned) {
    for (size_t I = Begin; I < End; ++I)
      V[I] = Lo + (Hi - Lo) * unit(Seed, I);
  });
}
void negate(HostVec<float> &V) {
  parallelFor(V.size(), [&](size_t Begin, size_t End, unsigned) {
    for (size_t I = Begin; I < End; ++I)
      V[I] = -V[I];
  });
}
size_t pick(uint64_t &State, size_t N) { return mix(State++) % N; }

double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string jsonText(const std::string &S) {
  std::string O;
  for (char C : S) {
    if (C == '"' || C == '\\')
      O += '\\', O += C;
    else if (C == '\n')
      O += "\\n";
    else if (static_cast<unsigned char>(C) < 0x20)
      O += ' ';
    else
      O += C;
  }
  return O;
}

const char *env(const char *Name) {
  const char *V = std::getenv(Name);
  return V ? V : "";
}

// The last launch's plan: its first line, the blocks each device ran
// (merges and recoveries not counted), the bytes moved and the variants.
std::string planJson() {
  std::vector<char> Buf(1 << 16);
  if (cleave_last_plan(Buf.data(), Buf.size()) != 0)
    return "null";
  std::string Text(Buf.data());
  std::string First = Text.substr(0, Text.find('\n'));
  std::map<std::string, unsigned long long> Blocks;
  std::map<std::string, int> Variants;
  size_t P = Text.find('\n');
  while (P != std::string::npos && P + 1 < Text.size()) {
    size_t E = Text.find('\n', P + 1);
    std::string Line = Text.substr(P + 1, E == std::string::npos
                                              ? std::string::npos
                                              : E - P - 1);
    P = E;
    unsigned long long A = 0, B = 0;
    char Dev[64];
    if (Line.rfind("  merge", 0) == 0 || Line.rfind("  recovery", 0) == 0)
      continue;
    if (std::sscanf(Line.c_str(), " %63s blocks [%llu, %llu)", Dev, &A, &B) ==
        3) {
      Blocks[Dev] += B - A;
      const char *Tag = "bytes in [";
      size_t V0 = Line.find(Tag);
      size_t V1 = V0 == std::string::npos ? V0 : Line.find(']', V0);
      if (V1 != std::string::npos) {
        V0 += std::strlen(Tag);
        ++Variants[Line.substr(V0, V1 - V0)];
      }
    }
  }
  // "..., 393168 bytes moved (into 4 devices at once), replayed": the
  // number after the ", " before " bytes moved".
  unsigned long long Moved = 0;
  size_t E = First.find(" bytes moved");
  size_t M = E == std::string::npos ? E : First.rfind(", ", E);
  if (M != std::string::npos)
    Moved = std::strtoull(First.c_str() + M + 2, nullptr, 10);
  std::string O = "{\"summary\":\"" + jsonText(First) + "\",\"blocks\":{";
  bool Sep = false;
  for (auto &[D, N] : Blocks) {
    O += std::string(Sep ? "," : "") + "\"" + jsonText(D) +
         "\":" + std::to_string(N);
    Sep = true;
  }
  O += "},\"variants\":{";
  Sep = false;
  for (auto &[V, N] : Variants) {
    O += std::string(Sep ? "," : "") + "\"" + jsonText(V) +
         "\":" + std::to_string(N);
    Sep = true;
  }
  O += "},\"bytes_moved\":" + std::to_string(Moved) + "}";
  return O;
}

std::string deviceNames() {
  int N = 0;
  std::string O = "[";
  if (cleave_device_count(&N) == 0)
    for (int I = 0; I < N; ++I) {
      char Buf[256];
      if (cleave_device_describe(I, Buf, sizeof(Buf)) == 0)
        O += std::string(I ? "," : "") + "\"" + jsonText(Buf) + "\"";
    }
  return O + "]";
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  size_t M = V.size() / 2;
  return V.size() % 2 ? V[M] : 0.5 * (V[M - 1] + V[M]);
}

void report(const std::string &Kernel, const std::string &Mode,
            const std::string &Sizes, const std::vector<double> &Ms, bool Ok,
            const std::string &Plan) {
  std::string O = "{\"kernel\":\"" + Kernel + "\",\"mode\":\"" + Mode +
                  "\",\"sizes\":\"" + Sizes + "\",\"set\":\"" +
                  jsonText(Opt.Set) + "\",\"policy\":\"" +
                  jsonText(Opt.Policy) + "\",\"devices\":\"" +
                  jsonText(env("CLEAVE_DEVICES")) + "\",\"partition\":\"" +
                  jsonText(env("CLEAVE_PARTITION")) + "\",\"split\":\"" +
                  jsonText(env("CLEAVE_SPLIT")) +
                  "\",\"device_names\":" + deviceNames() + ",\"small\":" +
                  (Opt.Small ? "true" : "false") + ",\"status\":\"" +
                  (Ok ? "ok" : "wrong") + "\"";
  if (Ok && !Ms.empty()) {
    char Buf[128];
    std::snprintf(Buf, sizeof(Buf),
                  ",\"median_ms\":%.4f,\"min_ms\":%.4f,\"max_ms\":%.4f", median(Ms),
                  *std::min_element(Ms.begin(), Ms.end()),
                  *std::max_element(Ms.begin(), Ms.end()));
    O += Buf;
    O += ",\"reps\":" + std::to_string(Ms.size()) + ",\"times_ms\":[";
    for (size_t I = 0; I < Ms.size(); ++I) {
      std::snprintf(Buf, sizeof(Buf), "%s%.4f", I ? "," : "", Ms[I]);
      O += Buf;
    }
    O += "]";
  }
  O += ",\"plan\":" + Plan + "}";
  std::printf("%s\n", O.c_str());
  std::fflush(stdout);
}

// One kernel: Upload rewrites the inputs on the device from the host
// copies; Mutate changes the host inputs (untimed; may do nothing); Launch
// issues the kernel(s) of one repetition; Download copies the outputs back;
// Check compares them with the reference of the current host inputs.
struct Bench {
  std::string Name, Sizes;
  std::function<void()> Upload, Mutate, Launch, Download;
  std::function<bool()> Check;
};

bool run(const Bench &B) {
  bool AllOk = true;
  for (const char *Listed : {"resident", "host"}) {
    if (!listed(Opt.Modes, Listed))
      continue;
    bool Host = std::strcmp(Listed, "host") == 0;
    const char *Mode = Host && Opt.PinnedHost ? "pinned" : Listed;
    std::fprintf(stderr, "headline: %s %s on %s (%s)\n", B.Name.c_str(), Mode,
                 Opt.Set.c_str(), Opt.Policy.c_str());
    // Warm-up: modules loaded, inputs moved (and, with the model policy,
    // a measured launch in the tables).
    B.Upload();
    B.Launch();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> Ms;
    double Spent = 0;
    for (int R = 0; R < Opt.Reps; ++R) {
      if (R >= 3 && Spent > Opt.BudgetMs)
        break;
      if (Host && B.Mutate)
        B.Mutate();
      CUDA_CHECK(cudaDeviceSynchronize());
      double T0 = nowMs();
      if (Host)
        B.Upload();
      B.Launch();
      if (Host)
        B.Download();
      CUDA_CHECK(cudaDeviceSynchronize());
      double T = nowMs() - T0;
      CUDA_CHECK(cudaGetLastError());
      Ms.push_back(T);
      Spent += T;
    }
    std::string Plan = planJson();
    if (!Host)
      B.Download();
    bool Ok = B.Check();
    AllOk &= Ok;
    report(B.Name, Mode, B.Sizes, Ms, Ok, Plan);
  }
  return AllOk;
}

template <class T> T *deviceAlloc(size_t N) {
  T *P = nullptr;
  CUDA_CHECK(cudaMalloc(&P, N * sizeof(T)));
  return P;
}
template <class T, class A> void toDevice(T *D, const std::vector<T, A> &H) {
  CUDA_CHECK(cudaMemcpy(D, H.data(), H.size() * sizeof(T),
                        cudaMemcpyHostToDevice));
}
template <class T, class A> void toHost(std::vector<T, A> &H, const T *D) {
  CUDA_CHECK(cudaMemcpy(H.data(), D, H.size() * sizeof(T),
                        cudaMemcpyDeviceToHost));
}

bool failed(const char *Kernel, const char *Fmt, double A, double B,
            double C) {
  std::fprintf(stderr, "headline: %s: wrong result: ", Kernel);
  std::fprintf(stderr, Fmt, A, B, C);
  std::fprintf(stderr, "\n");
  return false;
}

// --- The suite ---------------------------------------------------------------

bool benchVecadd(bool Triad) {
  long N = Opt.Small ? (1L << 16) + 77 : (1L << 28) * Opt.Scale;
  HostVec<float> A(N), B(N), C(N);
  fill(A, -1, 1, Triad ? 11 : 1);
  fill(B, -1, 1, Triad ? 12 : 2);
  float *DA = deviceAlloc<float>(N), *DB = deviceAlloc<float>(N),
        *DC = deviceAlloc<float>(N);
  const float S = 1.75f;
  unsigned Blocks = unsigned((N + 255) / 256);
  Bench X;
  X.Name = Triad ? "triad" : "vecadd";
  X.Sizes = "n=" + std::to_string(N);
  X.Upload = [&] {
    toDevice(DA, A);
    toDevice(DB, B);
  };
  X.Mutate = [&] {
    negate(A);
    negate(B);
  };
  X.Launch = [&] {
    if (Triad)
      triad<<<Blocks, 256>>>(DC, DA, DB, S, N);
    else
      vecadd<<<Blocks, 256>>>(DA, DB, DC, N);
  };
  X.Download = [&] { toHost(C, DC); };
  X.Check = [&] {
    // Every element, on the host threads: the reference is cheap. fmaf or
    // not, one rounding.
    auto Ref = [&](size_t I) { return Triad ? A[I] + S * B[I] : A[I] + B[I]; };
    size_t Bad = firstWrong(N, [&](size_t I) {
      float Tol = Triad ? 1e-6f * (std::fabs(A[I]) + std::fabs(S * B[I])) : 0;
      return std::fabs(C[I] - Ref(I)) > Tol;
    });
    if (Bad < size_t(N))
      return failed(X.Name.c_str(), "element %g: %g, expected %g", double(Bad),
                    C[Bad], Ref(Bad));
    return true;
  };
  bool Ok = run(X);
  for (float *P : {DA, DB, DC})
    CUDA_CHECK(cudaFree(P));
  return Ok;
}

bool benchBlackScholes() {
  long N = Opt.Small ? (1L << 15) + 5 : (1L << 27) * Opt.Scale;
  HostVec<float> S(N), Xs(N), T(N), Call(N), Put(N);
  fill(S, 5, 30, 3);
  fill(Xs, 1, 100, 4);
  fill(T, 0.25f, 10, 5);
  const float R = 0.02f, V = 0.30f;
  float *DS = deviceAlloc<float>(N), *DX = deviceAlloc<float>(N),
        *DT = deviceAlloc<float>(N), *DC = deviceAlloc<float>(N),
        *DP = deviceAlloc<float>(N);
  Bench X;
  X.Name = "blackscholes";
  X.Sizes = "n=" + std::to_string(N);
  X.Upload = [&] {
    toDevice(DS, S);
    toDevice(DX, Xs);
    toDevice(DT, T);
  };
  X.Launch = [&] {
    blackscholes<<<unsigned((N + 127) / 128), 128>>>(DC, DP, DS, DX, DT, R, V,
                                                     N);
  };
  X.Download = [&] {
    toHost(Call, DC);
    toHost(Put, DP);
  };
  X.Check = [&] {
    // Double reference; the fast-math intrinsics are within a few ULP:
    // 1e-3 absolute plus 1e-4 relative. Sampled.
    uint64_t St = 99;
    for (int Q = 0; Q < 200000; ++Q) {
      size_t I = pick(St, N);
      double Sq = std::sqrt(double(T[I]));
      double D1 = (std::log(double(S[I]) / Xs[I]) + (R + 0.5 * V * V) * T[I]) /
                  (V * Sq);
      double D2 = D1 - V * Sq;
      auto Cnd = [](double D) { return 0.5 * std::erfc(-D / std::sqrt(2.0)); };
      double E = std::exp(-R * double(T[I]));
      double Cr = S[I] * Cnd(D1) - Xs[I] * E * Cnd(D2);
      double Pr = Xs[I] * E * (1 - Cnd(D2)) - S[I] * (1 - Cnd(D1));
      if (std::fabs(Call[I] - Cr) > 1e-3 + 1e-4 * std::fabs(Cr) ||
          std::fabs(Put[I] - Pr) > 1e-3 + 1e-4 * std::fabs(Pr))
        return failed("blackscholes", "option %g: call %g, expected %g",
                      double(I), Call[I], Cr);
    }
    return true;
  };
  bool Ok = run(X);
  for (float *P : {DS, DX, DT, DC, DP})
    CUDA_CHECK(cudaFree(P));
  return Ok;
}

bool benchMatmul() {
  int N = Opt.Small ? 128 : 4096;
  size_t NN = size_t(N) * N;
  HostVec<float> A(NN), B(NN), C(NN);
  fill(A, -1, 1, 6);
  fill(B, -1, 1, 7);
  float *DA = deviceAlloc<float>(NN), *DB = deviceAlloc<float>(NN),
        *DC = deviceAlloc<float>(NN);
  Bench X;
  X.Name = "matmul";
  X.Sizes = "n=" + std::to_string(N);
  X.Upload = [&] {
    toDevice(DA, A);
    toDevice(DB, B);
  };
  X.Mutate = [&] { negate(A); };
  X.Launch = [&] {
    matmul<<<dim3(N / Tile, N / Tile), dim3(Tile, Tile)>>>(DA, DB, DC, N);
  };
  X.Download = [&] { toHost(C, DC); };
  X.Check = [&] {
    // Sampled elements against a double dot product; float accumulation of
    // n products in [-1, 1]: 1e-3 sqrt(n).
    uint64_t St = 5;
    for (int Q = 0; Q < 256; ++Q) {
      size_t I = pick(St, N), J = pick(St, N);
      double Ref = 0;
      for (int K = 0; K < N; ++K)
        Ref += double(A[I * N + K]) * B[size_t(K) * N + J];
      if (std::fabs(C[I * N + J] - Ref) > 1e-3 * std::sqrt(double(N)))
        return failed("matmul", "c[%g]: %g, expected %g", double(I * N + J),
                      C[I * N + J], Ref);
    }
    return true;
  };
  bool Ok = run(X);
  for (float *P : {DA, DB, DC})
    CUDA_CHECK(cudaFree(P));
  return Ok;
}

bool benchTranspose() {
  int Rows = Opt.Small ? 200 : 16384 * Opt.Scale,
      Cols = Opt.Small ? 328 : 16384;
  size_t NN = size_t(Rows) * Cols;
  HostVec<float> In(NN), Out(NN);
  fill(In, -1, 1, 8);
  float *DI = deviceAlloc<float>(NN), *DO = deviceAlloc<float>(NN);
  Bench X;
  X.Name = "transpose";
  X.Sizes = std::to_string(Rows) + "x" + std::to_string(Cols);
  X.Upload = [&] { toDevice(DI, In); };
  X.Mutate = [&] { negate(In); };
  X.Launch = [&] {
    transpose<<<dim3((Cols + Tile - 1) / Tile, (Rows + Tile - 1) / Tile),
                dim3(Tile, TransposeRows)>>>(DO, DI, Rows, Cols);
  };
  X.Download = [&] { toHost(Out, DO); };
  X.Check = [&] {
    // Whole rows of the input (every column of the output they land in):
    // 512 sampled rows, or all of them when there are fewer. The rows are
    // picked first and checked on the host threads: each reads a column of
    // the output, one cache line per element.
    uint64_t St = 31;
    std::vector<size_t> Picked;
    for (int Q = 0; Q < std::min(Rows, 512); ++Q)
      Picked.push_back(Rows <= 512 ? size_t(Q) : pick(St, Rows));
    auto BadColumn = [&](size_t R) {
      size_t C = 0;
      while (C < size_t(Cols) && Out[C * Rows + R] == In[R * Cols + C])
        ++C;
      return C;
    };
    size_t Bad = firstWrong(
        Picked.size(),
        [&](size_t Q) { return BadColumn(Picked[Q]) < size_t(Cols); }, 1);
    if (Bad < Picked.size()) {
      size_t R = Picked[Bad], C = BadColumn(R);
      return failed("transpose", "out[%g]: %g, expected %g",
                    double(C * Rows + R), Out[C * Rows + R], In[R * Cols + C]);
    }
    return true;
  };
  bool Ok = run(X);
  for (float *P : {DI, DO})
    CUDA_CHECK(cudaFree(P));
  return Ok;
}

bool benchReduction() {
  // Every index in the kernel and the check is unsigned and below
  // Blocks * 2 * ReduceBlock = 2^29 * --scale <= 2^31 (2^19 blocks of 1024
  // elements per unit of scale).
  unsigned N = Opt.Small ? (1u << 17) + 999 : (1u << 29) * Opt.Scale;
  unsigned Blocks = (N + 2 * ReduceBlock - 1) / (2 * ReduceBlock);
  HostVec<float> In(N), Out(Blocks);
  fill(In, -1, 1, 9);
  float *DI = deviceAlloc<float>(N), *DO = deviceAlloc<float>(Blocks);
  Bench X;
  X.Name = "reduction";
  X.Sizes = "n=" + std::to_string(N);
  X.Upload = [&] { toDevice(DI, In); };
  X.Mutate = [&] { negate(In); };
  X.Launch = [&] { reduction<<<Blocks, ReduceBlock>>>(DI, DO, N); };
  X.Download = [&] { toHost(Out, DO); };
  X.Check = [&] {
    // Every block's partial sum against double: 1e-5 of the sum of
    // magnitudes. Blocks checked on the host threads.
    auto Sum = [&](unsigned B, double &Ref, double &Mag) {
      Ref = Mag = 0;
      for (unsigned I = B * 2 * ReduceBlock;
           I < std::min(N, (B + 1) * 2 * ReduceBlock); ++I) {
        Ref += In[I];
        Mag += std::fabs(In[I]);
      }
    };
    size_t Bad = firstWrong(
        Blocks,
        [&](size_t B) {
          double Ref, Mag;
          Sum(unsigned(B), Ref, Mag);
          return std::fabs(Out[B] - Ref) > 1e-5 * Mag + 1e-6;
        },
        64);
    if (Bad < Blocks) {
      double Ref, Mag;
      Sum(unsigned(Bad), Ref, Mag);
      return failed("reduction", "block %g: %g, expected %g", double(Bad),
                    Out[Bad], Ref);
    }
    return true;
  };
  bool Ok = run(X);
  CUDA_CHECK(cudaFree(DI));
  CUDA_CHECK(cudaFree(DO));
  return Ok;
}

bool benchHistogram() {
  long N = Opt.Small ? (1L << 18) + 3 : (1L << 30) * Opt.Scale;
  HostVec<unsigned char> Data(N);
  // Half uniform, half on five bins: contended atomics.
  parallelFor(N, [&](size_t Begin, size_t End, unsigned) {
    for (size_t I = Begin; I < End; ++I)
      Data[I] = static_cast<unsigned char>(
          mix(uint64_t(I)) & 1 ? mix(uint64_t(I) ^ 0x5555) & 0xff
                               : 7 * (I % 5));
  });
  // Counted per chunk of the host threads, then summed. A bin holds about
  // N / 10 + N / 512 < 2^32 (N <= 2^32 with --scale 4).
  std::vector<unsigned> Counts(size_t(MaxHostThreads) * Bins, 0);
  parallelFor(N, [&](size_t Begin, size_t End, unsigned Chunk) {
    unsigned Local[Bins] = {};
    for (size_t I = Begin; I < End; ++I)
      ++Local[Data[I]];
    std::copy(Local, Local + Bins, Counts.begin() + size_t(Chunk) * Bins);
  });
  std::vector<unsigned> Ref(Bins, 0), Out(Bins);
  for (unsigned C = 0; C < MaxHostThreads; ++C)
    for (int B = 0; B < Bins; ++B)
      Ref[B] += Counts[size_t(C) * Bins + B];
  unsigned char *DD = deviceAlloc<unsigned char>(N);
  unsigned *DB = deviceAlloc<unsigned>(Bins);
  // The grid follows the data: each block's share is fixed (2^17 bytes,
  // 512 for each of its 256 threads), so the blocks a device runs are the
  // work it does, and a split over devices divides the work. 8192 blocks
  // give each of 4 H200s about two waves (1056 blocks of 256 threads): the
  // model policy splits combined outputs only over whole waves. With
  // --small, 64 bytes a thread: 17 blocks, enough to give each of 5
  // devices some.
  const unsigned Threads = HistThreads;
  const long PerBlock = long(Threads) * (Opt.Small ? 64 : 512);
  unsigned Blocks = unsigned(std::max((N + PerBlock - 1) / PerBlock, 2L));
  Bench X;
  X.Name = "histogram";
  X.Sizes = "n=" + std::to_string(N);
  X.Upload = [&] { toDevice(DD, Data); };
  X.Launch = [&] {
    CUDA_CHECK(cudaMemset(DB, 0, Bins * sizeof(unsigned)));
    if (Opt.Small)
      histogram<64><<<Blocks, Threads>>>(DD, DB, N);
    else
      histogram<512><<<Blocks, Threads>>>(DD, DB, N);
  };
  X.Download = [&] { toHost(Out, DB); };
  X.Check = [&] {
    for (int B = 0; B < Bins; ++B)
      if (Out[B] != Ref[B])
        return failed("histogram", "bin %g: %g, expected %g", double(B),
                      double(Out[B]), double(Ref[B]));
    return true;
  };
  bool Ok = run(X);
  CUDA_CHECK(cudaFree(DD));
  CUDA_CHECK(cudaFree(DB));
  return Ok;
}

bool benchJacobi() {
  // x and y are ints in the kernel and the check; the flat index is size_t.
  int NX = Opt.Small ? 150 : 16384,
      NY = Opt.Small ? 130 : 16384 * Opt.Scale;
  const int Steps = 10;
  size_t NN = size_t(NX) * NY;
  HostVec<float> U(NN), Out(NN);
  fill(U, 0, 1, 10);
  float *D0 = deviceAlloc<float>(NN), *DA = deviceAlloc<float>(NN),
        *DB = deviceAlloc<float>(NN);
  // The boundary stays fixed: both work grids start as the input.
  toDevice(DA, U);
  toDevice(DB, U);
  dim3 Block(32, 8), Grid((NX + 31) / 32, (NY + 7) / 8);
  Bench X;
  X.Name = "jacobi2d";
  X.Sizes = std::to_string(NX) + "x" + std::to_string(NY) + "x" +
            std::to_string(Steps);
  X.Upload = [&] { toDevice(D0, U); };
  X.Launch = [&] {
    // D0 -> A, then A <-> B; Steps even: the result is in B.
    jacobi<<<Grid, Block>>>(D0, DA, NX, NY);
    for (int S = 1; S < Steps; ++S)
      if (S % 2)
        jacobi<<<Grid, Block>>>(DA, DB, NX, NY);
      else
        jacobi<<<Grid, Block>>>(DB, DA, NX, NY);
  };
  X.Download = [&] { toHost(Out, DB); };
  X.Check = [&] {
    // Sampled points: Steps iterations on the point's window (the cone it
    // depends on), then the centre. Float, same expression; 1e-5.
    uint64_t St = 17;
    const int W = 2 * Steps + 1;
    std::vector<float> Win(W * W), Nxt(W * W);
    for (int Q = 0; Q < 2000; ++Q) {
      int Y = int(pick(St, NY)), Xc = int(pick(St, NX));
      auto Global = [&](int I, int J, int &GY, int &GX) {
        GY = Y - Steps + I;
        GX = Xc - Steps + J;
        return GY >= 0 && GX >= 0 && GY < NY && GX < NX;
      };
      for (int I = 0; I < W; ++I)
        for (int J = 0; J < W; ++J) {
          int GY, GX;
          Win[I * W + J] = Global(I, J, GY, GX) ? U[size_t(GY) * NX + GX] : 0;
        }
      for (int S = 0; S < Steps; ++S) {
        Nxt = Win;
        for (int I = 1; I < W - 1; ++I)
          for (int J = 1; J < W - 1; ++J) {
            int GY, GX;
            if (!Global(I, J, GY, GX) || GY < 1 || GX < 1 || GY >= NY - 1 ||
                GX >= NX - 1)
              continue;
            int K = I * W + J;
            Nxt[K] = JacobiC0 * Win[K] + JacobiC1 * (Win[K - 1] + Win[K + 1] +
                                                     Win[K - W] + Win[K + W]);
          }
        std::swap(Win, Nxt);
      }
      float Ref = Win[Steps * W + Steps], Got = Out[size_t(Y) * NX + Xc];
      if (std::fabs(Got - Ref) > 1e-5f)
        return failed("jacobi2d", "point %g: %g, expected %g",
                      double(size_t(Y) * NX + Xc), Got, Ref);
    }
    return true;
  };
  bool Ok = run(X);
  for (float *P : {D0, DA, DB})
    CUDA_CHECK(cudaFree(P));
  return Ok;
}

bool benchNbody() {
  int N = Opt.Small ? 2000 : 262144;
  const float Dt = 0.01f;
  HostVec<float4> Pos(N), Vel(N), PosN(N), VelN(N);
  for (int I = 0; I < N; ++I) {
    Pos[I] = make_float4(unit(20, 4 * I) * 2 - 1, unit(20, 4 * I + 1) * 2 - 1,
                         unit(20, 4 * I + 2) * 2 - 1,
                         0.5f + unit(20, 4 * I + 3));
    Vel[I] = make_float4(unit(21, 3 * I) - 0.5f, unit(21, 3 * I + 1) - 0.5f,
                         unit(21, 3 * I + 2) - 0.5f, 0);
  }
  float4 *DP = deviceAlloc<float4>(N), *DV = deviceAlloc<float4>(N),
         *DPN = deviceAlloc<float4>(N), *DVN = deviceAlloc<float4>(N);
  Bench X;
  X.Name = "nbody";
  X.Sizes = "n=" + std::to_string(N);
  X.Upload = [&] {
    toDevice(DP, Pos);
    toDevice(DV, Vel);
  };
  X.Launch = [&] {
    nbody<<<(N + NbodyBodies - 1) / NbodyBodies,
            dim3(NbodyLanes, NbodyBodies)>>>(DP, DV, DPN, DVN, N, Dt);
  };
  X.Download = [&] {
    toHost(PosN, DPN);
    toHost(VelN, DVN);
  };
  X.Check = [&] {
    // Sampled bodies against double: the velocity change to 1e-4 of the
    // sum of the magnitudes of the contributions.
    uint64_t St = 23;
    for (int Q = 0; Q < 64; ++Q) {
      size_t I = pick(St, N);
      double A[3] = {0, 0, 0}, Mag = 0;
      for (int J = 0; J < N; ++J) {
        double D[3] = {double(Pos[J].x) - Pos[I].x, double(Pos[J].y) - Pos[I].y,
                       double(Pos[J].z) - Pos[I].z};
        double Inv = 1 / std::sqrt(D[0] * D[0] + D[1] * D[1] + D[2] * D[2] +
                                   Softening2);
        double S = Pos[J].w * Inv * Inv * Inv;
        for (int K = 0; K < 3; ++K) {
          A[K] += D[K] * S;
          Mag += std::fabs(D[K] * S);
        }
      }
      double Got[3] = {VelN[I].x, VelN[I].y, VelN[I].z};
      double V0[3] = {Vel[I].x, Vel[I].y, Vel[I].z};
      for (int K = 0; K < 3; ++K) {
        double Ref = V0[K] + A[K] * Dt;
        if (std::fabs(Got[K] - Ref) > 1e-4 * Mag * Dt + 1e-6)
          return failed("nbody", "body %g: v %g, expected %g", double(I),
                        Got[K], Ref);
      }
      double P0 = Pos[I].x + VelN[I].x * Dt;
      if (std::fabs(PosN[I].x - P0) > 1e-5 + 1e-6 * std::fabs(P0) ||
          PosN[I].w != Pos[I].w)
        return failed("nbody", "body %g: x %g, expected %g", double(I),
                      PosN[I].x, P0);
    }
    return true;
  };
  bool Ok = run(X);
  for (float4 *P : {DP, DV, DPN, DVN})
    CUDA_CHECK(cudaFree(P));
  return Ok;
}

bool benchStencil3d() {
  // 608 = 19 * 32 = 76 * 8: whole blocks of 32 x 8. The flat index is long
  // in the kernel and the check (608^3 * 4 < 2^31).
  int NX = Opt.Small ? 40 : 608, NY = Opt.Small ? 36 : 608,
      NZ = Opt.Small ? 30 : 608 * Opt.Scale;
  size_t NN = size_t(NX) * NY * NZ;
  HostVec<float> In(NN), Out(NN);
  fill(In, -1, 1, 12);
  float *DI = deviceAlloc<float>(NN), *DO = deviceAlloc<float>(NN);
  // The boundary of the output is never written: zero, once.
  CUDA_CHECK(cudaMemset(DO, 0, NN * sizeof(float)));
  dim3 Block(32, 8, 1), Grid((NX + 31) / 32, (NY + 7) / 8, NZ);
  Bench X;
  X.Name = "stencil3d";
  X.Sizes = std::to_string(NX) + "x" + std::to_string(NY) + "x" +
            std::to_string(NZ);
  X.Upload = [&] { toDevice(DI, In); };
  X.Mutate = [&] { negate(In); };
  X.Launch = [&] { stencil3d<<<Grid, Block>>>(DI, DO, NX, NY, NZ); };
  X.Download = [&] { toHost(Out, DO); };
  X.Check = [&] {
    uint64_t St = 29;
    long SY = NX, SZ = long(NX) * NY;
    for (int Q = 0; Q < 200000; ++Q) {
      long Idx = long(pick(St, NN));
      int Xc = int(Idx % NX), Y = int(Idx / NX % NY), Z = int(Idx / SZ);
      float Ref = 0;
      if (Xc >= 1 && Y >= 1 && Z >= 1 && Xc < NX - 1 && Y < NY - 1 &&
          Z < NZ - 1)
        Ref = 0.4f * In[Idx] +
              0.1f * (In[Idx - 1] + In[Idx + 1] + In[Idx - SY] +
                      In[Idx + SY] + In[Idx - SZ] + In[Idx + SZ]);
      if (std::fabs(Out[Idx] - Ref) > 1e-6f)
        return failed("stencil3d", "element %g: %g, expected %g", double(Idx),
                      Out[Idx], Ref);
    }
    return true;
  };
  bool Ok = run(X);
  CUDA_CHECK(cudaFree(DI));
  CUDA_CHECK(cudaFree(DO));
  return Ok;
}

} // namespace

int main(int argc, char **argv) {
  for (int I = 1; I < argc; ++I) {
    std::string A = argv[I];
    auto Value = [&]() -> std::string {
      if (I + 1 >= argc) {
        std::fprintf(stderr, "%s: %s needs a value\n", argv[0], A.c_str());
        std::exit(2);
      }
      return argv[++I];
    };
    if (A == "--small")
      Opt.Small = true;
    else if (A == "--scale")
      Opt.Scale = std::atoi(Value().c_str());
    else if (A == "--reps")
      Opt.Reps = std::atoi(Value().c_str());
    else if (A == "--budget-ms")
      Opt.BudgetMs = std::atof(Value().c_str());
    else if (A == "--kernels")
      Opt.Kernels = Value();
    else if (A == "--modes")
      Opt.Modes = Value();
    else if (A == "--set")
      Opt.Set = Value();
    else if (A == "--policy")
      Opt.Policy = Value();
    else if (A == "--pinned-host")
      Opt.PinnedHost = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--small] [--scale 1|2|4] [--reps N] "
                   "[--budget-ms MS] "
                   "[--kernels a,b,...] [--modes resident,host] [--set LABEL] "
                   "[--policy LABEL] [--pinned-host]\n",
                   argv[0]);
      return 2;
    }
  }
  if (Opt.Scale != 1 && Opt.Scale != 2 && Opt.Scale != 4) {
    std::fprintf(stderr, "%s: --scale must be 1, 2 or 4\n", argv[0]);
    return 2;
  }
  if (Opt.Reps < 1) {
    std::fprintf(stderr, "%s: --reps must be at least 1\n", argv[0]);
    return 2;
  }
  if (Opt.Set.empty())
    Opt.Set = env("CLEAVE_DEVICES");
  if (Opt.Policy.empty())
    Opt.Policy = *env("CLEAVE_SPLIT") ? std::string("split:") + env("CLEAVE_SPLIT")
                                      : std::string(env("CLEAVE_PARTITION"));
  struct Entry {
    const char *Name;
    std::function<bool()> Run;
  };
  const Entry Suite[] = {
      {"vecadd", [] { return benchVecadd(false); }},
      {"triad", [] { return benchVecadd(true); }},
      {"blackscholes", benchBlackScholes},
      {"matmul", benchMatmul},
      {"transpose", benchTranspose},
      {"reduction", benchReduction},
      {"histogram", benchHistogram},
      {"jacobi2d", benchJacobi},
      {"nbody", benchNbody},
      {"stencil3d", benchStencil3d},
  };
  int Failures = 0, Ran = 0;
  for (const Entry &E : Suite)
    if (listed(Opt.Kernels, E.Name)) {
      ++Ran;
      if (!E.Run())
        ++Failures;
    }
  if (!Ran) {
    std::fprintf(stderr, "%s: no kernel matches --kernels %s\n", argv[0],
                 Opt.Kernels.c_str());
    return 2;
  }
  std::fprintf(stderr, "headline: %d kernel(s), %d with wrong results\n", Ran,
               Failures);
  return Failures ? 1 : 0;
}
