// A discrete Fourier transform written with a small complex class template:
// `__host__ __device__` constructors, members and operator overloads (+, *,
// +=, conj, a friend scalar product), used as Complex<float> in the kernels
// and as Complex<double> in the host reference. The host side is C++17:
// std::array of sizes, structured bindings, lambdas, std::optional,
// std::chrono timing beside the events, and a std::vector<std::pair<...>> of
// spectral peaks sorted to find the tones planted in the signal (exact
// check), plus the spectrum against the reference (tolerance).
//
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: time_ms:
// CHECK: PASS
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

#define CUDA_CHECK(expr)                                                       \
  do {                                                                         \
    cudaError_t status = (expr);                                               \
    if (status != cudaSuccess) {                                               \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr,    \
              cudaGetErrorString(status));                                     \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

template <typename T> class Complex {
public:
  __host__ __device__ Complex() : re_(0), im_(0) {}
  __host__ __device__ Complex(T re, T im = 0) : re_(re), im_(im) {}
  __host__ __device__ T re() const { return re_; }
  __host__ __device__ T im() const { return im_; }
  __host__ __device__ T abs2() const { return re_ * re_ + im_ * im_; }
  __host__ __device__ Complex conj() const { return Complex(re_, -im_); }
  __host__ __device__ Complex operator+(const Complex &o) const {
    return Complex(re_ + o.re_, im_ + o.im_);
  }
  __host__ __device__ Complex operator*(const Complex &o) const {
    return Complex(re_ * o.re_ - im_ * o.im_, re_ * o.im_ + im_ * o.re_);
  }
  __host__ __device__ Complex &operator+=(const Complex &o) {
    re_ += o.re_;
    im_ += o.im_;
    return *this;
  }
  friend __host__ __device__ Complex operator*(T s, const Complex &c) {
    return Complex(s * c.re_, s * c.im_);
  }

private:
  T re_, im_;
};

using cfloat = Complex<float>;

// Each thread computes one frequency bin: X[k] = sum_j x[j] e^{-2 pi i jk/n}.
__global__ void dft(const cfloat *x, cfloat *X, int n) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n)
    return;
  cfloat acc;
  const float w = -6.28318530717958647692f / n;
  for (int j = 0; j < n; ++j) {
    // (j * k) mod n keeps the angle small, so sincosf stays accurate.
    int m = (int)(((long long)j * k) % n);
    float s, c;
    sincosf(w * m, &s, &c);
    acc += x[j] * cfloat(c, s);
  }
  X[k] = acc;
}

// Power spectrum scaled by 1/n, through the conjugate product.
__global__ void power(const cfloat *X, float *P, int n) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n)
    P[k] = ((1.0f / n) * (X[k] * X[k].conj())).re();
}

struct Result {
  double maxErr;
  std::vector<std::pair<int, float>> peaks;
};

static std::optional<Result> runSize(int n, const std::array<int, 3> &tones,
                                     float &gpuMs) {
  std::vector<cfloat> x(n);
  std::vector<Complex<double>> xd(n);
  for (int j = 0; j < n; ++j) {
    double re = 0.05 * (rand() / (double)RAND_MAX - 0.5);
    double im = 0.05 * (rand() / (double)RAND_MAX - 0.5);
    for (auto [t, amp] = std::pair{0, 1.0}; t < 3; ++t, amp *= 0.7) {
      double a = 2.0 * M_PI * tones[t] * j / n;
      re += amp * cos(a);
      im += amp * sin(a);
    }
    x[j] = cfloat((float)re, (float)im);
    xd[j] = Complex<double>(x[j].re(), x[j].im());
  }
  cfloat *dx, *dX;
  float *dP;
  CUDA_CHECK(cudaMalloc(&dx, n * sizeof(cfloat)));
  CUDA_CHECK(cudaMalloc(&dX, n * sizeof(cfloat)));
  CUDA_CHECK(cudaMalloc(&dP, n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(cfloat),
                        cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  int threads = 128, blocks = (n + threads - 1) / threads;
  CUDA_CHECK(cudaEventRecord(start));
  dft<<<blocks, threads>>>(dx, dX, n);
  power<<<blocks, threads>>>(dX, dP, n);
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  gpuMs += ms;
  std::vector<cfloat> X(n);
  std::vector<float> P(n);
  CUDA_CHECK(cudaMemcpy(X.data(), dX, n * sizeof(cfloat),
                        cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(P.data(), dP, n * sizeof(float),
                        cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(dx));
  CUDA_CHECK(cudaFree(dX));
  CUDA_CHECK(cudaFree(dP));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));

  // Reference in double with a twiddle table.
  std::vector<Complex<double>> tw(n);
  for (int m = 0; m < n; ++m)
    tw[m] = Complex<double>(cos(-2.0 * M_PI * m / n), sin(-2.0 * M_PI * m / n));
  Result r{0.0, {}};
  for (int k = 0; k < n; ++k) {
    Complex<double> acc;
    for (int j = 0; j < n; ++j)
      acc += xd[j] * tw[(int)(((long long)j * k) % n)];
    double err = sqrt((Complex<double>(X[k].re(), X[k].im()) +
                       (-1.0) * acc).abs2());
    r.maxErr = std::max(r.maxErr, err);
    double p = (1.0 / n) * acc.abs2();
    if (fabs(P[k] - p) > 1e-3 * (1.0 + p)) {
      printf("FAIL: n=%d power[%d] = %g, expected %g\n", n, k, P[k], p);
      return std::nullopt;
    }
    r.peaks.emplace_back(k, P[k]);
  }
  std::sort(r.peaks.begin(), r.peaks.end(),
            [](const auto &a, const auto &b) { return a.second > b.second; });
  r.peaks.resize(3);
  return r;
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int base = 200 * scale;
  const std::array<int, 3> sizes{base, 2 * base + 24, 3 * base + 7};
  srand(90210);
  float gpuMs = 0;
  auto wall0 = std::chrono::steady_clock::now();
  for (int n : sizes) {
    std::array<int, 3> tones{n / 7, n / 3 + 1, n - 5};
    auto result = runSize(n, tones, gpuMs);
    if (!result)
      return 1;
    auto &[maxErr, peaks] = *result;
    if (maxErr > 2e-4 * n) {
      printf("FAIL: n=%d spectrum error %g\n", n, maxErr);
      return 1;
    }
    for (int t = 0; t < 3; ++t)
      if (peaks[t].first != tones[t]) {
        printf("FAIL: n=%d peak %d at bin %d, expected %d\n", n, t,
               peaks[t].first, tones[t]);
        return 1;
      }
  }
  auto wall = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - wall0)
                  .count();
  printf("time_ms: %.3f\n", gpuMs);
  printf("wall_ms: %.1f\n", wall);
  printf("PASS\n");
  return 0;
}
