// Co-scheduling's benchmark (issue 28; docs/coschedule.md): an ordinary
// CUDA program that launches a mix of kernels on several streams of one
// process, built by nvcc and by `cleave compile`; bench/coschedule/run.sh
// runs it under the configurations it compares.
//
// Kernels (each instance a few milliseconds on an H200 at --scale 1):
//   compute-heavy: blackscholes (a grid of volatilities per option), nbody
//   (all pairs, tiled in shared memory), matmul (16 x 16 shared-memory
//   tiles), tea (a TEA-like cipher, 64 rounds);
//   memory-heavy: vecadd, transpose (32 x 32 tiles), stencil3d (7 points),
//   spmv (CSR, a row per thread).
// Mixes (Kernelet's, digest 003 §6.3): ci = blackscholes, nbody, matmul,
// tea; mi = vecadd, transpose, stencil3d, spmv; mix = blackscholes, tea,
// vecadd, spmv; all = the eight.
//
// A run launches --instances instances of every kernel of the mix, the
// j-th launch (kernels taken in turn) on stream j mod --streams, all
// back to back, then cudaDeviceSynchronize: one batch. --streams 1 puts
// everything on the legacy default stream (serial). Every stream has its
// own output buffers per kernel; inputs are shared and never written.
// After one untimed batch, --reps batches are timed with a steady clock;
// throughput is instances per second. Afterwards every output of the run
// is checked on a sample of elements against a host reference (ok).
//
// One JSON line on stdout; progress on stderr.
// Usage: coschedule --mix ci|mi|mix|all [--streams S] [--instances N]
//                   [--reps R] [--scale F] [--small] [--label L]
#include <cuda_runtime.h>

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
#include <vector>

#define CHECK(X)                                                               \
  do {                                                                         \
    cudaError_t E_ = (X);                                                      \
    if (E_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "coschedule: %s: %s (%s:%d)\n", #X,                 \
                   cudaGetErrorString(E_), __FILE__, __LINE__);                \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

// --- compute-heavy ---------------------------------------------------------

__host__ __device__ inline float cnd(float d) {
  const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f,
              A4 = -1.821255978f, A5 = 1.330274429f;
  float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
  float c = 0.3989422804f * expf(-0.5f * d * d) *
            (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
  return d > 0 ? 1.0f - c : c;
}

// The call price of each option summed over a grid of `vols` volatilities.
__host__ __device__ inline float bsPrice(float s, float x, float t, int vols) {
  float sum = 0;
  for (int v = 0; v < vols; ++v) {
    float sigma = 0.1f + 0.02f * v, r = 0.02f;
    float sq = sqrtf(t);
    float d1 = (logf(s / x) + (r + 0.5f * sigma * sigma) * t) / (sigma * sq);
    float d2 = d1 - sigma * sq;
    sum += s * cnd(d1) - x * expf(-r * t) * cnd(d2);
  }
  return sum;
}

__global__ void blackscholes(const float *s, const float *x, const float *t,
                             float *call, int n, int vols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    call[i] = bsPrice(s[i], x[i], t[i], vols);
}

__global__ void nbody(const float4 *pos, float4 *acc, int n) {
  __shared__ float4 tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 p = i < n ? pos[i] : make_float4(0, 0, 0, 0);
  float ax = 0, ay = 0, az = 0;
  for (int base = 0; base < n; base += 256) {
    int j = base + threadIdx.x;
    tile[threadIdx.x] = j < n ? pos[j] : make_float4(0, 0, 0, 0);
    __syncthreads();
    for (int k = 0; k < 256; ++k) {
      float4 q = tile[k];
      float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
      float inv = rsqrtf(dx * dx + dy * dy + dz * dz + 1e-3f);
      float f = q.w * inv * inv * inv;
      ax += dx * f;
      ay += dy * f;
      az += dz * f;
    }
    __syncthreads();
  }
  if (i < n)
    acc[i] = make_float4(ax, ay, az, 0);
}

__global__ void matmul(const float *a, const float *b, float *c, int n) {
  __shared__ float ta[16][16], tb[16][16];
  int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  float sum = 0;
  for (int k0 = 0; k0 < n; k0 += 16) {
    ta[threadIdx.y][threadIdx.x] = a[row * n + k0 + threadIdx.x];
    tb[threadIdx.y][threadIdx.x] = b[(k0 + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < 16; ++k)
      sum += ta[threadIdx.y][k] * tb[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = sum;
}

__host__ __device__ inline void teaEncrypt(unsigned &v0, unsigned &v1,
                                           int rounds) {
  const unsigned k0 = 0xA56BABCD, k1 = 0x0000F00D, k2 = 0x1234ABCD,
                 k3 = 0xDEADBEEF, delta = 0x9E3779B9;
  unsigned sum = 0;
  for (int r = 0; r < rounds; ++r) {
    sum += delta;
    v0 += ((v1 << 4) + k0) ^ (v1 + sum) ^ ((v1 >> 5) + k1);
    v1 += ((v0 << 4) + k2) ^ (v0 + sum) ^ ((v0 >> 5) + k3);
  }
}

__global__ void tea(const uint2 *in, uint2 *out, int n, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    uint2 v = in[i];
    teaEncrypt(v.x, v.y, rounds);
    out[i] = v;
  }
}

// --- memory-heavy ----------------------------------------------------------

__global__ void vecadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

__global__ void transpose(const float *in, float *out, int w, int h) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < w && y + j < h)
      tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < h && y + j < w)
      out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void stencil3d(const float *in, float *out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z;
  if (x < 1 || y < 1 || z < 1 || x >= n - 1 || y >= n - 1 || z >= n - 1)
    return;
  long c = (long(z) * n + y) * n + x;
  long p = long(n) * n;
  out[c] = 0.4f * in[c] + 0.1f * (in[c - 1] + in[c + 1] + in[c - n] +
                                  in[c + n] + in[c - p] + in[c + p]);
}

__global__ void spmv(const int *rowStart, const int *cols, const float *vals,
                     const float *x, float *y, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float sum = 0;
    for (int k = rowStart[r]; k < rowStart[r + 1]; ++k)
      sum += vals[k] * x[cols[k]];
    y[r] = sum;
  }
}

// --- the host program ------------------------------------------------------

struct Sizes {
  int bsN, bsVols, nbodyN, mmN, teaN, teaRounds, vecN, trN, stN, spRows,
      spPerRow;
};

Sizes sizesFor(double scale, bool small) {
  if (small)
    return {4096, 4, 1024, 64, 4096, 16, 8192, 128, 32, 4096, 8};
  auto s = [&](double v) { return std::max(1, int(v * scale)); };
  return {s(16 << 20), 16,          s(65536), s(2048) / 16 * 16,
          s(32 << 20), 64,          s(64 << 20), s(8192) / 32 * 32,
          s(384),      s(4 << 20),  16};
}

float frand(unsigned &state) {
  state = state * 1664525u + 1013904223u;
  return float(state >> 8) / float(1 << 24);
}

template <class T> T *upload(const std::vector<T> &v) {
  T *p;
  CHECK(cudaMalloc(&p, v.size() * sizeof(T)));
  CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}
template <class T> std::vector<T> download(const T *p, size_t n) {
  std::vector<T> v(n);
  CHECK(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}
template <class T> T *alloc(size_t n) {
  T *p;
  CHECK(cudaMalloc(&p, n * sizeof(T)));
  CHECK(cudaMemset(p, 0, n * sizeof(T)));
  return p;
}

/// A kernel of the benchmark: its inputs, one output per stream, how to
/// launch it and how to check an output.
struct Kernel {
  std::string name;
  std::vector<void *> out; // per stream
  std::function<void *()> allocOut;
  std::function<void(void *, cudaStream_t)> launch;
  std::function<bool(void *)> check;
};

bool near(double a, double b, double tol) {
  return std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b));
}

/// The eight kernels over their inputs (created here), checks sampling
/// 64 elements each.
std::map<std::string, Kernel> makeKernels(const Sizes &z) {
  std::map<std::string, Kernel> K;
  unsigned st = 12345;
  const int samples = 64;
  auto pick = [&](int n, int i) { return int((long(i) * 7919 + 13) % n); };

  { // blackscholes
    std::vector<float> s(z.bsN), x(z.bsN), t(z.bsN);
    for (int i = 0; i < z.bsN; ++i) {
      s[i] = 5 + 25 * frand(st);
      x[i] = 1 + 99 * frand(st);
      t[i] = 0.25f + 9.75f * frand(st);
    }
    float *ds = upload(s), *dx = upload(x), *dt = upload(t);
    Kernel &k = K["blackscholes"];
    k.allocOut = [=] { return (void *)alloc<float>(z.bsN); };
    k.launch = [=](void *o, cudaStream_t q) {
      blackscholes<<<(z.bsN + 127) / 128, 128, 0, q>>>(ds, dx, dt, (float *)o,
                                                        z.bsN, z.bsVols);
    };
    k.check = [=](void *o) {
      std::vector<float> c = download((float *)o, z.bsN);
      for (int i = 0; i < samples; ++i) {
        int j = pick(z.bsN, i);
        if (!near(c[j], bsPrice(s[j], x[j], t[j], z.bsVols), 1e-3))
          return false;
      }
      return true;
    };
  }
  { // nbody
    std::vector<float4> p(z.nbodyN);
    for (float4 &q : p)
      q = make_float4(frand(st), frand(st), frand(st), 0.5f + frand(st));
    float4 *dp = upload(p);
    Kernel &k = K["nbody"];
    k.allocOut = [=] { return (void *)alloc<float4>(z.nbodyN); };
    k.launch = [=](void *o, cudaStream_t q) {
      nbody<<<(z.nbodyN + 255) / 256, 256, 0, q>>>(dp, (float4 *)o, z.nbodyN);
    };
    k.check = [=](void *o) {
      std::vector<float4> a = download((float4 *)o, z.nbodyN);
      for (int i = 0; i < 8; ++i) {
        int j = pick(z.nbodyN, i);
        double ax = 0;
        for (int m = 0; m < z.nbodyN; ++m) {
          double dx = p[m].x - p[j].x, dy = p[m].y - p[j].y,
                 dz = p[m].z - p[j].z;
          double inv = 1 / std::sqrt(dx * dx + dy * dy + dz * dz + 1e-3);
          ax += dx * p[m].w * inv * inv * inv;
        }
        if (!near(a[j].x, ax, 1e-2))
          return false;
      }
      return true;
    };
  }
  { // matmul
    int n = z.mmN;
    std::vector<float> a(size_t(n) * n), b(size_t(n) * n);
    for (float &v : a)
      v = frand(st) - 0.5f;
    for (float &v : b)
      v = frand(st) - 0.5f;
    float *da = upload(a), *db = upload(b);
    Kernel &k = K["matmul"];
    k.allocOut = [=] { return (void *)alloc<float>(size_t(n) * n); };
    k.launch = [=](void *o, cudaStream_t q) {
      matmul<<<dim3(n / 16, n / 16), dim3(16, 16), 0, q>>>(da, db, (float *)o,
                                                           n);
    };
    k.check = [=](void *o) {
      std::vector<float> c = download((float *)o, size_t(n) * n);
      for (int i = 0; i < samples; ++i) {
        int r = pick(n, i), col = pick(n, i * 3 + 1);
        double sum = 0;
        for (int m = 0; m < n; ++m)
          sum += double(a[size_t(r) * n + m]) * b[size_t(m) * n + col];
        if (!near(c[size_t(r) * n + col], sum, 1e-3))
          return false;
      }
      return true;
    };
  }
  { // tea
    std::vector<uint2> in(z.teaN);
    for (uint2 &v : in)
      v = make_uint2(unsigned(frand(st) * 4e9), unsigned(frand(st) * 4e9));
    uint2 *din = upload(in);
    Kernel &k = K["tea"];
    k.allocOut = [=] { return (void *)alloc<uint2>(z.teaN); };
    k.launch = [=](void *o, cudaStream_t q) {
      tea<<<(z.teaN + 255) / 256, 256, 0, q>>>(din, (uint2 *)o, z.teaN,
                                                z.teaRounds);
    };
    k.check = [=](void *o) {
      std::vector<uint2> c = download((uint2 *)o, z.teaN);
      for (int i = 0; i < samples; ++i) {
        int j = pick(z.teaN, i);
        unsigned v0 = in[j].x, v1 = in[j].y;
        teaEncrypt(v0, v1, z.teaRounds);
        if (c[j].x != v0 || c[j].y != v1)
          return false;
      }
      return true;
    };
  }
  { // vecadd
    std::vector<float> a(z.vecN), b(z.vecN);
    for (int i = 0; i < z.vecN; ++i) {
      a[i] = frand(st);
      b[i] = frand(st);
    }
    float *da = upload(a), *db = upload(b);
    Kernel &k = K["vecadd"];
    k.allocOut = [=] { return (void *)alloc<float>(z.vecN); };
    k.launch = [=](void *o, cudaStream_t q) {
      vecadd<<<(z.vecN + 255) / 256, 256, 0, q>>>(da, db, (float *)o, z.vecN);
    };
    k.check = [=](void *o) {
      std::vector<float> c = download((float *)o, z.vecN);
      for (int i = 0; i < samples; ++i) {
        int j = pick(z.vecN, i);
        if (c[j] != a[j] + b[j])
          return false;
      }
      return true;
    };
  }
  { // transpose
    int n = z.trN;
    std::vector<float> in(size_t(n) * n);
    for (float &v : in)
      v = frand(st);
    float *din = upload(in);
    Kernel &k = K["transpose"];
    k.allocOut = [=] { return (void *)alloc<float>(size_t(n) * n); };
    k.launch = [=](void *o, cudaStream_t q) {
      transpose<<<dim3(n / 32, n / 32), dim3(32, 8), 0, q>>>(din, (float *)o,
                                                             n, n);
    };
    k.check = [=](void *o) {
      std::vector<float> c = download((float *)o, size_t(n) * n);
      for (int i = 0; i < samples; ++i) {
        int r = pick(n, i), col = pick(n, 5 * i + 2);
        if (c[size_t(col) * n + r] != in[size_t(r) * n + col])
          return false;
      }
      return true;
    };
  }
  { // stencil3d
    int n = z.stN;
    std::vector<float> in(size_t(n) * n * n);
    for (float &v : in)
      v = frand(st);
    float *din = upload(in);
    Kernel &k = K["stencil3d"];
    k.allocOut = [=] { return (void *)alloc<float>(size_t(n) * n * n); };
    k.launch = [=](void *o, cudaStream_t q) {
      stencil3d<<<dim3((n + 31) / 32, (n + 7) / 8, n), dim3(32, 8), 0, q>>>(
          din, (float *)o, n);
    };
    k.check = [=](void *o) {
      std::vector<float> c = download((float *)o, size_t(n) * n * n);
      long p = long(n) * n;
      for (int i = 0; i < samples; ++i) {
        long x = 1 + pick(n - 2, i), y = 1 + pick(n - 2, 3 * i + 1),
             zz = 1 + pick(n - 2, 7 * i + 2);
        long cc = (zz * n + y) * n + x;
        float want = 0.4f * in[cc] + 0.1f * (in[cc - 1] + in[cc + 1] +
                                             in[cc - n] + in[cc + n] +
                                             in[cc - p] + in[cc + p]);
        if (!near(c[cc], want, 1e-5))
          return false;
      }
      return true;
    };
  }
  { // spmv
    int rows = z.spRows, per = z.spPerRow;
    std::vector<int> start(rows + 1), cols(size_t(rows) * per);
    std::vector<float> vals(size_t(rows) * per), x(rows);
    for (int r = 0; r <= rows; ++r)
      start[r] = r * per;
    for (size_t k2 = 0; k2 < cols.size(); ++k2) {
      cols[k2] = int(frand(st) * (rows - 1));
      vals[k2] = frand(st) - 0.5f;
    }
    for (float &v : x)
      v = frand(st);
    int *ds = upload(start), *dc = upload(cols);
    float *dv = upload(vals), *dx = upload(x);
    Kernel &k = K["spmv"];
    k.allocOut = [=] { return (void *)alloc<float>(rows); };
    k.launch = [=](void *o, cudaStream_t q) {
      spmv<<<(rows + 255) / 256, 256, 0, q>>>(ds, dc, dv, dx, (float *)o,
                                              rows);
    };
    k.check = [=](void *o) {
      std::vector<float> y = download((float *)o, rows);
      for (int i = 0; i < samples; ++i) {
        int r = pick(rows, i);
        double sum = 0;
        for (int m = start[r]; m < start[r + 1]; ++m)
          sum += double(vals[m]) * x[cols[m]];
        if (!near(y[r], sum, 1e-4))
          return false;
      }
      return true;
    };
  }
  return K;
}

std::vector<std::string> mixOf(const std::string &m) {
  if (m == "ci")
    return {"blackscholes", "nbody", "matmul", "tea"};
  if (m == "mi")
    return {"vecadd", "transpose", "stencil3d", "spmv"};
  if (m == "mix")
    return {"blackscholes", "tea", "vecadd", "spmv"};
  if (m == "all")
    return {"blackscholes", "nbody", "matmul", "tea",
            "vecadd",       "transpose", "stencil3d", "spmv"};
  return {};
}

int main(int argc, char **argv) {
  std::string mix = "mix", label = "run";
  int streams = 2, instances = 4, reps = 3;
  double scale = 1;
  bool small = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "coschedule: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--mix")
      mix = next();
    else if (a == "--streams")
      streams = std::atoi(next());
    else if (a == "--instances")
      instances = std::atoi(next());
    else if (a == "--reps")
      reps = std::atoi(next());
    else if (a == "--scale")
      scale = std::atof(next());
    else if (a == "--small")
      small = true;
    else if (a == "--label")
      label = next();
    else {
      std::fprintf(stderr, "coschedule: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  std::vector<std::string> names = mixOf(mix);
  if (names.empty() || streams < 1 || instances < 1 || reps < 1) {
    std::fprintf(stderr, "coschedule: bad --mix, --streams, --instances or "
                         "--reps\n");
    return 2;
  }
  Sizes z = sizesFor(scale, small);
  std::map<std::string, Kernel> all = makeKernels(z);
  // One stream (the legacy default stream) is the serial baseline.
  std::vector<cudaStream_t> q(streams, nullptr);
  if (streams > 1)
    for (cudaStream_t &s : q)
      CHECK(cudaStreamCreate(&s));
  // Launch j: kernel j mod |mix|, stream j mod S.
  int launches = instances * int(names.size());
  std::map<std::pair<std::string, int>, void *> outs;
  for (int j = 0; j < launches; ++j) {
    auto key = std::make_pair(names[j % names.size()], j % streams);
    if (!outs.count(key))
      outs[key] = all[key.first].allocOut();
  }
  CHECK(cudaDeviceSynchronize());
  auto batch = [&] {
    for (int j = 0; j < launches; ++j) {
      const std::string &n = names[j % names.size()];
      all[n].launch(outs[{n, j % streams}], q[j % streams]);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
  };
  batch(); // warm-up: modules, replicas, first-launch costs
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    batch();
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - t0)
                     .count());
    std::fprintf(stderr, "coschedule %s %s streams=%d rep %d: %.3f ms\n",
                 label.c_str(), mix.c_str(), streams, r, ms.back());
  }
  bool ok = true;
  std::string bad;
  for (auto &[key, o] : outs)
    if (!all[key.first].check(o)) {
      ok = false;
      bad += key.first + "@" + std::to_string(key.second) + " ";
    }
  if (!ok)
    std::fprintf(stderr, "coschedule: wrong results: %s\n", bad.c_str());
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double med = sorted[sorted.size() / 2];
  std::printf("{\"label\": \"%s\", \"mix\": \"%s\", \"streams\": %d, "
              "\"launches\": %d, \"scale\": %g, \"ms\": [",
              label.c_str(), mix.c_str(), streams, launches, scale);
  for (size_t i = 0; i < ms.size(); ++i)
    std::printf("%s%.3f", i ? ", " : "", ms[i]);
  std::printf("], \"median_ms\": %.3f, \"launches_per_s\": %.2f, \"ok\": %s}\n",
              med, launches / (med / 1000), ok ? "true" : "false");
  return ok ? 0 : 1;
}
