// Kernels of the benchmark suite (BENCHMARKS.md) that the other tests do not
// cover: triad, binomial options (shared memory, barriers in a loop), tiled
// matmul (2-D grid, sizes not multiples of the tile), 2-D Jacobi, n-body,
// sepia filter, bootstrap-like divergent loops, and a 3-D grid of 3-D blocks.
// Exact (bit for bit) except n-body (rsqrtf: within 4 ulp of the reference).
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe
#ifndef CLEAVE_HOST_DRIVER
extern "C" __global__ void triad(float *a, const float *b, const float *c, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = b[i] + s * c[i];
}
// One option per block; blockDim.x > steps.
extern "C" __global__ void binomial(const float *payoff, const float *pu, const float *pd,
                                    float *out, int steps) {
  __shared__ float v[257];
  int o = blockIdx.x, i = threadIdx.x;
  if (i <= steps) v[i] = payoff[o * (steps + 1) + i];
  __syncthreads();
  for (int s = steps; s > 0; --s) {
    float t = 0;
    if (i < s) t = pu[o] * v[i + 1] + pd[o] * v[i];
    __syncthreads();
    if (i < s) v[i] = t;
    __syncthreads();
  }
  if (i == 0) out[o] = v[0];
}
#define TILE 16
extern "C" __global__ void matmul_tiled(const float *A, const float *B, float *C, int M, int N, int K) {
  __shared__ float As[TILE][TILE], Bs[TILE][TILE];
  int r = blockIdx.y * TILE + threadIdx.y, c = blockIdx.x * TILE + threadIdx.x;
  float acc = 0;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[threadIdx.y][threadIdx.x] = r < M && k0 + threadIdx.x < K ? A[r * K + k0 + threadIdx.x] : 0.f;
    Bs[threadIdx.y][threadIdx.x] = c < N && k0 + threadIdx.y < K ? B[(k0 + threadIdx.y) * N + c] : 0.f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (r < M && c < N) C[r * N + c] = acc;
}
extern "C" __global__ void jacobi2d(const float *in, float *out, int nx, int ny) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x <= 0 || y <= 0 || x >= nx - 1 || y >= ny - 1) return;
  out[y * nx + x] = 0.25f * (in[y * nx + x - 1] + in[y * nx + x + 1] + in[(y - 1) * nx + x] + in[(y + 1) * nx + x]);
}
extern "C" __global__ void nbody(const float4 *p, float4 *acc, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 me = p[i];
  float ax = 0, ay = 0, az = 0;
  for (int j = 0; j < n; ++j) {
    float4 o = p[j];
    float dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
    float d2 = dx * dx + dy * dy + dz * dz + 0.01f;
    float inv = rsqrtf(d2);
    float f = o.w * inv * inv * inv;
    ax += dx * f; ay += dy * f; az += dz * f;
  }
  acc[i] = make_float4(ax, ay, az, 0.f);
}
extern "C" __global__ void sepia(const uchar4 *in, uchar4 *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uchar4 c = in[i];
  float r = c.x, g = c.y, b = c.z;
  float nr = r * 0.393f + g * 0.769f + b * 0.189f;
  float ng = r * 0.349f + g * 0.686f + b * 0.168f;
  float nb = r * 0.272f + g * 0.534f + b * 0.131f;
  out[i] = make_uchar4((unsigned char)fminf(nr, 255.f), (unsigned char)fminf(ng, 255.f),
                       (unsigned char)fminf(nb, 255.f), c.w);
}
// Stationary-bootstrap-like: each thread draws blocks of random length.
extern "C" __global__ void bootstrap(const int *data, const unsigned *seed, int *sum, int *len, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned s = seed[t];
  int acc = 0, l = 0, pos = s % n;
  while (l < 200) {
    s = s * 1664525u + 1013904223u;
    if ((s >> 29) == 0) pos = (s >> 3) % n; // start a new block
    else pos = (pos + 1) % n;
    acc += data[pos];
    ++l;
    if ((s & 0xff) < 6) break;
  }
  sum[t] = acc;
  len[t] = l;
}
// 3-D grid of 3-D blocks over a box that is not a multiple of the block,
// with a per-block shared sum along z (barrier).
extern "C" __global__ void box3d(int *out, int *blk, int nx, int ny, int nz) {
  __shared__ int cnt;
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y,
      z = blockIdx.z * blockDim.z + threadIdx.z;
  if (threadIdx.x + threadIdx.y + threadIdx.z == 0) cnt = 0;
  __syncthreads();
  bool in = x < nx && y < ny && z < nz;
  if (in) {
    out[(z * ny + y) * nx + x] = x * 10000 + y * 100 + z + 1000000 * (threadIdx.z * 100 + threadIdx.y * 10 + threadIdx.x);
    atomicAdd(&cnt, 1);
  }
  __syncthreads();
  if (threadIdx.x + threadIdx.y + threadIdx.z == 0)
    blk[(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x] = cnt;
}
#else
#include "harness.h"
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(4) uchar4 { unsigned char x, y, z, w; };
CLEAVE_CPU_KERNEL(triad);
CLEAVE_CPU_KERNEL(binomial);
CLEAVE_CPU_KERNEL(matmul_tiled);
CLEAVE_CPU_KERNEL(jacobi2d);
CLEAVE_CPU_KERNEL(nbody);
CLEAVE_CPU_KERNEL(sepia);
CLEAVE_CPU_KERNEL(bootstrap);
CLEAVE_CPU_KERNEL(box3d);
using harness::launch3;
using harness::runPlans;
using harness::equal;
#define FILLF(V, X) [&] { std::fill(V.begin(), V.end(), X); }

int main() {
  int F = 0;
  { // triad: fma(s, c, b), as nvcc contracts it
    int n = 10007; float s = 1.7f;
    std::vector<float> a(n), b(n), c(n), w(n);
    harness::fill(b, -10, 10); harness::fill(c, -10, 10);
    for (int i = 0; i < n; ++i) w[i] = std::fma(s, c[i], b[i]);
    float *pa = a.data(); const float *pb = b.data(), *pc = c.data();
    void *Args[] = {&pa, &pb, &pc, &s, &n};
    F += runPlans("triad", __cleave_cpu_triad_desc, Args, launch3((n + 255) / 256, 1, 1, 256, 1, 1),
                  FILLF(a, 0.f), [&] { return equal("a", a, w); });
  }
  { // binomial: v = fma(pu, v[i+1], pd * v[i])
    int opts = 20, steps = 100;
    std::vector<float> pay(opts * (steps + 1)), pu(opts), pd(opts), out(opts), w(opts);
    harness::fill(pay, 0, 30); harness::fill(pu, 0.4f, 0.6f);
    for (int o = 0; o < opts; ++o) pd[o] = 0.99f - pu[o];
    for (int o = 0; o < opts; ++o) {
      std::vector<float> v(pay.begin() + o * (steps + 1), pay.begin() + (o + 1) * (steps + 1));
      for (int s = steps; s > 0; --s)
        for (int i = 0; i < s; ++i) v[i] = std::fma(pu[o], v[i + 1], pd[o] * v[i]);
      w[o] = v[0];
    }
    const float *a = pay.data(), *b = pu.data(), *c = pd.data(); float *d = out.data();
    void *Args[] = {&a, &b, &c, &d, &steps};
    F += runPlans("binomial", __cleave_cpu_binomial_desc, Args, launch3(opts, 1, 1, 128, 1, 1),
                  FILLF(out, 0.f), [&] { return equal("out", out, w); });
  }
  { // tiled matmul, integer-valued: exact in any order
    int M = 37, N = 45, K = 29;
    std::vector<float> A(M * K), B(K * N), C(M * N), W(M * N);
    harness::fillInt(A, -8, 8); harness::fillInt(B, -8, 8);
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < N; ++c) {
        float s = 0;
        for (int k = 0; k < K; ++k) s += A[r * K + k] * B[k * N + c];
        W[r * N + c] = s;
      }
    const float *pa = A.data(), *pb = B.data(); float *pc = C.data();
    void *Args[] = {&pa, &pb, &pc, &M, &N, &K};
    F += runPlans("matmul_tiled", __cleave_cpu_matmul_tiled_desc, Args,
                  launch3((N + 15) / 16, (M + 15) / 16, 1, 16, 16, 1), FILLF(C, -1.f),
                  [&] { return equal("C", C, W); });
  }
  { // Jacobi, 5 iterations ping-pong; sums of integers times 0.25: exact
    int nx = 67, ny = 41;
    std::vector<float> a(nx * ny), b, w;
    harness::fillInt(a, -100, 100);
    b = a;
    std::vector<float> a0 = a;
    w = a;
    std::vector<float> w2 = a;
    for (int y = 1; y < ny - 1; ++y)
      for (int x = 1; x < nx - 1; ++x)
        w2[y * nx + x] = 0.25f * (w[y * nx + x - 1] + w[y * nx + x + 1] + w[(y - 1) * nx + x] + w[(y + 1) * nx + x]);
    const float *pa = a.data(); float *pb = b.data();
    void *Args[] = {&pa, &pb, &nx, &ny};
    F += runPlans("jacobi2d", __cleave_cpu_jacobi2d_desc, Args,
                  launch3((nx + 31) / 32, (ny + 7) / 8, 1, 32, 8, 1), [&] { b = a0; pb = b.data(); },
                  [&] { return equal("out", b, w2); });
  }
  { // n-body: rsqrt.approx on the GPU (2 ulp); compare within 4 ulp or 1e-4
    int n = 300;
    std::vector<float4> p(n), acc(n);
    std::vector<float> P(4 * n);
    harness::fill(P, -1, 1);
    for (int i = 0; i < n; ++i) p[i] = {P[4 * i], P[4 * i + 1], P[4 * i + 2], std::fabs(P[4 * i + 3])};
    std::vector<float> w(3 * n), g(3 * n);
    for (int i = 0; i < n; ++i) {
      double ax = 0, ay = 0, az = 0;
      for (int j = 0; j < n; ++j) {
        double dx = p[j].x - p[i].x, dy = p[j].y - p[i].y, dz = p[j].z - p[i].z;
        double d2 = dx * dx + dy * dy + dz * dz + 0.01;
        double f = p[j].w / (d2 * std::sqrt(d2));
        ax += dx * f; ay += dy * f; az += dz * f;
      }
      w[3 * i] = ax; w[3 * i + 1] = ay; w[3 * i + 2] = az;
    }
    const float4 *pp = p.data(); float4 *pa = acc.data();
    void *Args[] = {&pp, &pa, &n};
    F += runPlans("nbody", __cleave_cpu_nbody_desc, Args, launch3((n + 127) / 128, 1, 1, 128, 1, 1),
                  [&] { std::fill(acc.begin(), acc.end(), float4{0, 0, 0, 0}); },
                  [&] {
                    for (int i = 0; i < n; ++i) { g[3 * i] = acc[i].x; g[3 * i + 1] = acc[i].y; g[3 * i + 2] = acc[i].z; }
                    return harness::near("acc", g, w, 64, 2e-3f);
                  });
  }
  { // sepia: contractions as nvcc makes them
    int n = 5000;
    std::vector<uchar4> in(n), out(n), w(n);
    std::vector<int> R(4 * n);
    harness::fillInt(R, 0, 255);
    for (int i = 0; i < n; ++i) in[i] = {(unsigned char)R[4 * i], (unsigned char)R[4 * i + 1], (unsigned char)R[4 * i + 2], (unsigned char)R[4 * i + 3]};
    auto Mix = [](float r, float g, float b, float kr, float kg, float kb) {
      return std::fma(b, kb, std::fma(r, kr, g * kg));
    };
    for (int i = 0; i < n; ++i) {
      float r = in[i].x, g = in[i].y, b = in[i].z;
      w[i] = {(unsigned char)std::fmin(Mix(r, g, b, 0.393f, 0.769f, 0.189f), 255.f),
              (unsigned char)std::fmin(Mix(r, g, b, 0.349f, 0.686f, 0.168f), 255.f),
              (unsigned char)std::fmin(Mix(r, g, b, 0.272f, 0.534f, 0.131f), 255.f), in[i].w};
    }
    const uchar4 *pi = in.data(); uchar4 *po = out.data();
    void *Args[] = {&pi, &po, &n};
    F += runPlans("sepia", __cleave_cpu_sepia_desc, Args, launch3((n + 63) / 64, 1, 1, 64, 1, 1),
                  [&] { std::memset(out.data(), 0, 4 * n); },
                  [&] { return std::memcmp(out.data(), w.data(), 4 * n) == 0; });
  }
  { // bootstrap
    int n = 997, T = 3000;
    std::vector<int> data(n), sum(T), len(T), ws(T), wl(T);
    std::vector<unsigned> seed(T);
    harness::fillInt(data, -1000, 1000); harness::fillInt(seed, 0, 0xffffffffll);
    for (int t = 0; t < T; ++t) {
      unsigned s = seed[t]; int acc = 0, l = 0, pos = s % n;
      while (l < 200) {
        s = s * 1664525u + 1013904223u;
        if ((s >> 29) == 0) pos = (s >> 3) % n; else pos = (pos + 1) % n;
        acc += data[pos]; ++l;
        if ((s & 0xff) < 6) break;
      }
      ws[t] = acc; wl[t] = l;
    }
    const int *pd = data.data(); const unsigned *ps = seed.data(); int *pS = sum.data(), *pL = len.data();
    void *Args[] = {&pd, &ps, &pS, &pL, &n};
    F += runPlans("bootstrap", __cleave_cpu_bootstrap_desc, Args, launch3(T / 100, 1, 1, 100, 1, 1),
                  [&] { std::fill(sum.begin(), sum.end(), 0); std::fill(len.begin(), len.end(), 0); },
                  [&] { return equal("sum", sum, ws) && equal("len", len, wl); });
  }
  { // 3-D grid of 3-D blocks (5x3x2), box 13x7x5
    int nx = 13, ny = 7, nz = 5;
    unsigned BX = 5, BY = 3, BZ = 2, GX = 3, GY = 3, GZ = 3;
    std::vector<int> out(nx * ny * nz), blk(GX * GY * GZ), w(out.size()), wb(blk.size(), 0);
    for (int z = 0; z < nz; ++z)
      for (int y = 0; y < ny; ++y)
        for (int x = 0; x < nx; ++x) {
          w[(z * ny + y) * nx + x] = x * 10000 + y * 100 + z + 1000000 * ((z % BZ) * 100 + (y % BY) * 10 + x % BX);
          wb[((z / BZ) * GY + y / BY) * GX + x / BX]++;
        }
    int *po = out.data(), *pb = blk.data();
    void *Args[] = {&po, &pb, &nx, &ny, &nz};
    F += runPlans("box3d", __cleave_cpu_box3d_desc, Args, launch3(GX, GY, GZ, BX, BY, BZ),
                  [&] { std::fill(out.begin(), out.end(), -1); std::fill(blk.begin(), blk.end(), -1); },
                  [&] { return equal("out", out, w) && equal("blk", blk, wb); });
  }
  return F;
}
#endif
