// Dynamic shared memory in kernel templates through the SharedMemory<T>
// struct (an `extern __shared__` array declared inside a conversion
// operator, specialized for double so that its alignment is right): a
// double-buffered block scan (Hillis-Steele) instantiated for int, float and
// double, the block totals scanned on the host, and a second kernel template
// adding them back. Integers: exact; floats: tolerance.
//
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: time_ms:
// CHECK: PASS
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t e = call;                                                      \
    if (e != cudaSuccess) {                                                    \
      printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e));        \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

template <class T> struct SharedMemory {
  __device__ inline operator T *() {
    extern __shared__ int __smem[];
    return (T *)__smem;
  }
  __device__ inline operator const T *() const {
    extern __shared__ int __smem[];
    return (T *)__smem;
  }
};

template <> struct SharedMemory<double> {
  __device__ inline operator double *() {
    extern __shared__ double __smem_d[];
    return (double *)__smem_d;
  }
  __device__ inline operator const double *() const {
    extern __shared__ double __smem_d[];
    return (double *)__smem_d;
  }
};

// Inclusive scan of each block's slice; blockSums[b] = the slice's total.
template <class T>
__global__ void scanBlocks(const T *in, T *out, T *blockSums, int n) {
  T *temp = SharedMemory<T>(); // 2 * blockDim.x elements
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  int pout = 0, pin = 1;
  temp[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  for (int offset = 1; offset < blockDim.x; offset *= 2) {
    pout = 1 - pout;
    pin = 1 - pout;
    T v = temp[pin * blockDim.x + tid];
    if (tid >= offset)
      v += temp[pin * blockDim.x + tid - offset];
    temp[pout * blockDim.x + tid] = v;
    __syncthreads();
  }
  if (i < n)
    out[i] = temp[pout * blockDim.x + tid];
  if (tid == blockDim.x - 1)
    blockSums[blockIdx.x] = temp[pout * blockDim.x + tid];
}

template <class T>
__global__ void addOffsets(T *data, const T *offsets, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && blockIdx.x > 0)
    data[i] += offsets[blockIdx.x - 1];
}

template <class T>
bool runScan(int n, int threads, float &ms) {
  int blocks = (n + threads - 1) / threads;
  std::vector<T> h(n), out(n), sums(blocks);
  for (int i = 0; i < n; ++i)
    h[i] = std::is_integral<T>::value ? T(rand() % 201 - 100)
                                      : T(rand() / (double)RAND_MAX - 0.5);
  T *dIn, *dOut, *dSums;
  CUDA_CHECK(cudaMalloc(&dIn, n * sizeof(T)));
  CUDA_CHECK(cudaMalloc(&dOut, n * sizeof(T)));
  CUDA_CHECK(cudaMalloc(&dSums, blocks * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(dIn, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a);
  scanBlocks<T><<<blocks, threads, 2 * threads * sizeof(T)>>>(dIn, dOut, dSums,
                                                              n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(sums.data(), dSums, blocks * sizeof(T),
                        cudaMemcpyDeviceToHost));
  for (int k = 1; k < blocks; ++k)
    sums[k] += sums[k - 1];
  CUDA_CHECK(cudaMemcpy(dSums, sums.data(), blocks * sizeof(T),
                        cudaMemcpyHostToDevice));
  addOffsets<T><<<blocks, threads>>>(dOut, dSums, n);
  cudaEventRecord(b);
  CUDA_CHECK(cudaEventSynchronize(b));
  float t;
  cudaEventElapsedTime(&t, a, b);
  ms += t;
  CUDA_CHECK(cudaMemcpy(out.data(), dOut, n * sizeof(T),
                        cudaMemcpyDeviceToHost));
  cudaFree(dIn);
  cudaFree(dOut);
  cudaFree(dSums);
  double run = 0;
  for (int i = 0; i < n; ++i) {
    run += (double)h[i];
    double tol = std::is_integral<T>::value ? 0.0
                 : sizeof(T) == 4           ? 1e-3 * (1.0 + fabs(run))
                                            : 1e-9 * (1.0 + fabs(run));
    if (fabs((double)out[i] - run) > tol) {
      printf("FAIL: %s scan[%d] = %g, expected %g\n",
             std::is_integral<T>::value ? "int"
             : sizeof(T) == 4           ? "float"
                                        : "double",
             i, (double)out[i], run);
      return false;
    }
  }
  return true;
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 300000 * scale + 123;
  srand(8);
  float ms = 0;
  if (!runScan<int>(n, 256, ms) || !runScan<float>(n, 512, ms) ||
      !runScan<double>(n, 128, ms))
    return 1;
  printf("time_ms: %.3f\n", ms);
  printf("PASS\n");
  return 0;
}
