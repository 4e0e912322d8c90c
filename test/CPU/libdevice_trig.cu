// sinf, cosf, tanf, sin, cos and tan run on the CPU. libdevice reduces large
// arguments (Payne-Hanek) with inline PTX carry chains (mad.lo.cc.u32,
// madc.hi.u32, add.cc/addc, sub.cc/subc) and converts with d2i/lohi/f2i
// intrinsics; the CPU variant lowers both exactly. Compared with the host's
// libm within CUDA's documented error (sinf/cosf/sin/cos/tan 2 ulp, tanf 4)
// plus libm's own ulp, on small, medium and huge arguments (up to 1e38 and
// 1e300, where a wrong carry gives a wrong quadrant).
//
// RUN: %cleave compile -O3 %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// REQUIRES: cleave-rt-api
// CHECK-NOT: MISMATCH
// CHECK: PASS
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

__global__ void trigf(const float *x, int n, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = sinf(x[i]);
    out[n + i] = cosf(x[i]);
    out[2 * n + i] = tanf(x[i]);
  }
}

__global__ void trig(const double *x, int n, double *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = sin(x[i]);
    out[n + i] = cos(x[i]);
    out[2 * n + i] = tan(x[i]);
  }
}

// Distance in units in the last place (ordered patterns); NaN equals NaN.
template <typename F, typename I> static long long ulps(F a, F b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) ? 0 : 1LL << 62;
  I ia, ib;
  memcpy(&ia, &a, sizeof a);
  memcpy(&ib, &b, sizeof b);
  const I Sign = I(1) << (8 * sizeof(I) - 1);
  long long oa = ia < 0 ? (long long)(Sign - ia) : (long long)ia;
  long long ob = ib < 0 ? (long long)(Sign - ib) : (long long)ib;
  return oa > ob ? oa - ob : ob - oa;
}

static int failures = 0;
template <typename F, typename I>
static void check(const char *name, const std::vector<F> &x, const F *dev,
                  F (*ref)(F), long long tolerance) {
  int bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    F r = ref(x[i]);
    if (ulps<F, I>(dev[i], r) > tolerance && bad++ < 3)
      printf("MISMATCH %s(%.17g): device %.17g host %.17g\n", name,
             double(x[i]), double(dev[i]), double(r));
  }
  if (bad)
    printf("MISMATCH %s: %d of %zu\n", name, bad, x.size());
  failures += bad;
}

template <typename F> static std::vector<F> inputs(F huge) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<F> x = {0, -0.0, 1, -1, F(M_PI), F(M_PI / 2), 1e5, 105615,
                      105616, 1e10, huge, -huge, INFINITY, NAN};
  for (int i = 0; i < 20000; ++i) {
    double scale = std::pow(10.0, double(i % 40) * std::log10(double(huge)) / 40);
    x.push_back(F(u(rng) * scale));
  }
  return x;
}

int main() {
  std::vector<float> xf = inputs<float>(1e38f);
  std::vector<double> xd = inputs<double>(1e300);
  int nf = int(xf.size()), nd = int(xd.size());
  float *dxf, *dof;
  double *dxd, *dod;
  cudaMalloc(&dxf, nf * sizeof(float));
  cudaMalloc(&dof, 3 * nf * sizeof(float));
  cudaMalloc(&dxd, nd * sizeof(double));
  cudaMalloc(&dod, 3 * nd * sizeof(double));
  cudaMemcpy(dxf, xf.data(), nf * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dxd, xd.data(), nd * sizeof(double), cudaMemcpyHostToDevice);
  trigf<<<(nf + 255) / 256, 256>>>(dxf, nf, dof);
  trig<<<(nd + 255) / 256, 256>>>(dxd, nd, dod);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    printf("MISMATCH launch: %s\n", cudaGetErrorString(e));
    return 1;
  }
  std::vector<float> of(3 * nf);
  std::vector<double> od(3 * nd);
  cudaMemcpy(of.data(), dof, of.size() * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(od.data(), dod, od.size() * sizeof(double), cudaMemcpyDeviceToHost);
  check<float, int32_t>("sinf", xf, &of[0], sinf, 3);
  check<float, int32_t>("cosf", xf, &of[nf], cosf, 3);
  check<float, int32_t>("tanf", xf, &of[2 * nf], tanf, 5);
  check<double, int64_t>("sin", xd, &od[0], sin, 3);
  check<double, int64_t>("cos", xd, &od[nd], cos, 3);
  check<double, int64_t>("tan", xd, &od[2 * nd], tan, 3);
  printf(failures ? "FAIL\n" : "PASS\n");
  return failures != 0;
}
