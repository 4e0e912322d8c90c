// A program as `cleave compile` builds it, by hand: the host side of
// api_kernels.cu the way the host rewriter writes it (kernel stubs that pop
// the call configuration and call cudaLaunchKernel, a host shadow of the
// __constant__ variable), a static constructor that registers the module
// (the bundle read from $CLEAVE_TEST_BUNDLE, the CPU variants' descriptors
// and the variable's CPU copy from the CPU object) as the device object's
// constructor does, and a main that uses only the CUDA-runtime subset.
// Linked with libcleave_rt.so. Prints "<step>: ok" per checked step, FAIL
// lines otherwise.
//
//   api_harness run       launches, symbols, streams, events, errors
//   api_harness corrupt   the bundle is corrupted before it is registered
#include "cleave_rt.h"
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" {
extern const cleave_cpu_kernel_desc __cleave_cpu__Z6vecaddPKfS0_Pfi_desc;
extern const cleave_cpu_kernel_desc __cleave_cpu__Z4polyPKfPfi_desc;
extern const cleave_cpu_kernel_desc __cleave_cpu__Z14count_positivePKfPii_desc;
extern float __cleave_cpu_var_coef[3];
}

// The host side. --------------------------------------------------------------

float coef[3]; // the host shadow of __constant__ float coef[3]

static void launchFromStub(const void *Self, void **Args) {
  uint32_t G[3], B[3];
  size_t Shared;
  void *S;
  if (cleave_pop_call_configuration(G, B, &Shared, &S))
    return;
  cudaLaunchKernel(Self, dim3(G[0], G[1], G[2]), dim3(B[0], B[1], B[2]), Args,
                   Shared, static_cast<cudaStream_t>(S));
}

void vecadd(const float *a, const float *b, float *c, int n) {
  void *Args[] = {&a, &b, &c, &n};
  launchFromStub(reinterpret_cast<const void *>(&vecadd), Args);
}
void poly(const float *x, float *y, int n) {
  void *Args[] = {&x, &y, &n};
  launchFromStub(reinterpret_cast<const void *>(&poly), Args);
}
void count_positive(const float *x, int *counts, int n) {
  void *Args[] = {&x, &counts, &n};
  launchFromStub(reinterpret_cast<const void *>(&count_positive), Args);
}

static unsigned push(dim3 G, dim3 B, size_t Shared = 0, cudaStream_t S = 0) {
  const uint32_t GG[3] = {G.x, G.y, G.z}, BB[3] = {B.x, B.y, B.z};
  return cleave_push_call_configuration(GG, BB, Shared, S);
}
#define LAUNCH(K, G, B, Shared, S, ...)                                        \
  (push(G, B, Shared, S) ? (void)0 : K(__VA_ARGS__))

// Registration, as the device object's constructor does it. -----------------

static std::string BundleBytes;
static cleave_symbol Symbols[] = {
    {"__cleave_cpu__Z6vecaddPKfS0_Pfi_desc",
     const_cast<cleave_cpu_kernel_desc *>(
         &__cleave_cpu__Z6vecaddPKfS0_Pfi_desc)},
    {"__cleave_cpu__Z4polyPKfPfi_desc",
     const_cast<cleave_cpu_kernel_desc *>(&__cleave_cpu__Z4polyPKfPfi_desc)},
    {"__cleave_cpu__Z14count_positivePKfPii_desc",
     const_cast<cleave_cpu_kernel_desc *>(
         &__cleave_cpu__Z14count_positivePKfPii_desc)},
    {"__cleave_cpu_var_coef", __cleave_cpu_var_coef},
};
static cleave_module_desc Module;

__attribute__((constructor)) static void registerProgram() {
  const char *Path = std::getenv("CLEAVE_TEST_BUNDLE");
  std::ifstream In(Path ? Path : "", std::ios::binary);
  BundleBytes.assign(std::istreambuf_iterator<char>(In),
                     std::istreambuf_iterator<char>());
  if (std::getenv("CLEAVE_TEST_CORRUPT") && BundleBytes.size() > 100)
    BundleBytes[BundleBytes.size() / 2] ^= 0x5a;
  Module = {CLEAVE_RT_ABI_VERSION, 0,      4, 0, BundleBytes.data(),
            BundleBytes.size(),    Symbols};
  cleave_register_module(&Module);
  cleave_register_kernel(reinterpret_cast<const void *>(&vecadd),
                         "_Z6vecaddPKfS0_Pfi");
  cleave_register_kernel(reinterpret_cast<const void *>(&poly),
                         "_Z4polyPKfPfi");
  cleave_register_kernel(reinterpret_cast<const void *>(&count_positive),
                         "_Z14count_positivePKfPii");
  cleave_register_variable(coef, "coef", sizeof(coef));
}

// The program.
// ------------------------------------------------------------------

static int Failures = 0;
#define CHECK(Cond, ...)                                                       \
  do {                                                                         \
    if (!(Cond)) {                                                             \
      std::printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #Cond);              \
      std::printf(__VA_ARGS__);                                                \
      std::printf("\n");                                                       \
      ++Failures;                                                              \
    }                                                                          \
  } while (0)
#define CUDA(Call)                                                             \
  do {                                                                         \
    cudaError_t E_ = (Call);                                                   \
    CHECK(E_ == cudaSuccess, "%s", cudaGetErrorName(E_));                      \
  } while (0)

static std::vector<float> randomFloats(size_t N, unsigned Seed) {
  std::vector<float> V(N);
  uint32_t X = Seed * 2654435761u + 1;
  for (float &F : V) {
    X = X * 1664525u + 1013904223u;
    F = float(X >> 8) / float(1 << 24) * 4.0f - 2.0f;
  }
  return V;
}

static void printPlan(const char *Step) {
  char Buf[4096];
  if (cleave_last_plan(Buf, sizeof(Buf)) == 0) {
    std::string Plan(Buf);
    std::printf("%s: %s", Step, Plan.substr(0, Plan.find('\n') + 1).c_str());
  }
}

static int runAll() {
  cudaDeviceProp P;
  if (cudaError_t E = cudaGetDeviceProperties(&P, 0)) {
    std::printf("no device: %s\n", cudaGetErrorName(E));
    return 1;
  }
  std::printf("device: %s\n", P.name);
  std::printf("properties: %d SMs, compute capability %d.%d, %zu MiB, "
              "%zu bytes of shared memory per block opt-in\n",
              P.multiProcessorCount, P.major, P.minor, P.totalGlobalMem >> 20,
              P.sharedMemPerBlockOptin);

  const int N = 100000;
  std::vector<float> A = randomFloats(N, 1), B = randomFloats(N, 2);
  float *DA, *DB, *DC;
  CUDA(cudaMalloc(&DA, N * sizeof(float)));
  CUDA(cudaMalloc(&DB, N * sizeof(float)));
  CUDA(cudaMalloc(&DC, N * sizeof(float)));
  CUDA(cudaMemcpy(DA, A.data(), N * sizeof(float), cudaMemcpyHostToDevice));
  CUDA(cudaMemcpy(DB, B.data(), N * sizeof(float), cudaMemcpyHostToDevice));

  // vecadd, checked against C++.
  LAUNCH(vecadd, dim3((N + 255) / 256), dim3(256), 0, 0, DA, DB, DC, N);
  CUDA(cudaGetLastError());
  std::vector<float> C(N);
  CUDA(cudaMemcpy(C.data(), DC, N * sizeof(float), cudaMemcpyDeviceToHost));
  int Bad = 0;
  for (int I = 0; I < N; ++I)
    Bad += C[I] != A[I] + B[I];
  CHECK(Bad == 0, "%d wrong elements", Bad);
  std::printf("vecadd: %s\n", Bad ? "wrong" : "ok");
  printPlan("vecadd plan");

  // poly with a __constant__ array, set synchronously, then asynchronously
  // on a stream from pinned memory.
  const float K1[3] = {1.0f, 2.0f, -0.5f};
  CUDA(cudaMemcpyToSymbol(coef, K1, sizeof(K1)));
  LAUNCH(poly, dim3((N + 127) / 128), dim3(128), 0, 0, DA, DC, N);
  CUDA(cudaMemcpy(C.data(), DC, N * sizeof(float), cudaMemcpyDeviceToHost));
  Bad = 0;
  for (int I = 0; I < N; ++I) {
    float Want = K1[0] + A[I] * (K1[1] + A[I] * K1[2]);
    Bad += std::fabs(C[I] - Want) > 1e-5f * (1.0f + std::fabs(Want));
  }
  CHECK(Bad == 0, "%d wrong elements", Bad);
  float *Pinned;
  CUDA(cudaMallocHost(reinterpret_cast<void **>(&Pinned), 3 * sizeof(float)));
  Pinned[0] = -3.0f;
  Pinned[1] = 0.25f;
  Pinned[2] = 4.0f;
  cudaStream_t S;
  CUDA(cudaStreamCreate(&S));
  CUDA(cudaMemcpyToSymbolAsync(coef, Pinned, 3 * sizeof(float), 0,
                               cudaMemcpyHostToDevice, S));
  LAUNCH(poly, dim3((N + 127) / 128), dim3(128), 0, S, DB, DC, N);
  CUDA(cudaStreamSynchronize(S));
  CUDA(cudaMemcpy(C.data(), DC, N * sizeof(float), cudaMemcpyDeviceToHost));
  int Bad2 = 0;
  for (int I = 0; I < N; ++I) {
    float Want = Pinned[0] + B[I] * (Pinned[1] + B[I] * Pinned[2]);
    Bad2 += std::fabs(C[I] - Want) > 1e-5f * (1.0f + std::fabs(Want));
  }
  CHECK(Bad2 == 0, "%d wrong elements", Bad2);
  float Back[3] = {};
  CUDA(cudaMemcpyFromSymbol(Back, coef, sizeof(Back)));
  CHECK(Back[2] == 4.0f, "coef[2] = %g", Back[2]);
  std::printf("poly: %s\n", Bad || Bad2 ? "wrong" : "ok");

  // count_positive: its CPU variant calls __cleave_rt_block_red_b32.
  const int Blocks = (N + 255) / 256;
  int *DCounts;
  CUDA(cudaMalloc(&DCounts, Blocks * sizeof(int)));
  cudaEvent_t Start, Stop;
  CUDA(cudaEventCreate(&Start));
  CUDA(cudaEventCreate(&Stop));
  CUDA(cudaEventRecord(Start, S));
  LAUNCH(count_positive, dim3(Blocks), dim3(256), 0, S, DA, DCounts, N);
  CUDA(cudaEventRecord(Stop, S));
  CUDA(cudaEventSynchronize(Stop));
  float Ms = -1;
  CUDA(cudaEventElapsedTime(&Ms, Start, Stop));
  CHECK(Ms >= 0, "%g ms", Ms);
  std::vector<int> Counts(Blocks);
  CUDA(cudaMemcpy(Counts.data(), DCounts, Blocks * sizeof(int),
                  cudaMemcpyDeviceToHost));
  Bad = 0;
  for (int Blk = 0; Blk < Blocks; ++Blk) {
    int Want = 0;
    for (int I = Blk * 256; I < (Blk + 1) * 256 && I < N; ++I)
      Want += A[I] > 0.0f;
    Bad += Counts[Blk] != Want;
  }
  CHECK(Bad == 0, "%d wrong blocks", Bad);
  std::printf("count_positive: %s\n", Bad ? "wrong" : "ok");

  // Errors: not sticky, named as CUDA names them.
  LAUNCH(vecadd, dim3(1), dim3(2048), 0, 0, DA, DB, DC, N);
  std::printf("bad block: %s\n", cudaGetErrorName(cudaGetLastError()));
  CUDA(cudaFree(DCounts));
  std::printf("double free: %s\n", cudaGetErrorName(cudaFree(DCounts)));
  std::printf("last error: %s\n", cudaGetErrorName(cudaGetLastError()));

  CUDA(cudaEventDestroy(Start));
  CUDA(cudaEventDestroy(Stop));
  CUDA(cudaStreamDestroy(S));
  CUDA(cudaFreeHost(Pinned));
  for (float *D : {DA, DB, DC})
    CUDA(cudaFree(D));
  CUDA(cudaDeviceSynchronize());
  std::printf("done: %d failure(s)\n", Failures);
  return Failures ? 1 : 0;
}

static int runCorrupt() {
  float *D;
  CUDA(cudaMalloc(&D, 1024 * sizeof(float)));
  LAUNCH(vecadd, dim3(4), dim3(256), 0, 0, D, D, D, 1024);
  std::printf("launch: %s\n", cudaGetErrorName(cudaGetLastError()));
  CUDA(cudaFree(D));
  return Failures ? 1 : 0;
}

int main(int Argc, char **Argv) {
  std::string Mode = Argc > 1 ? Argv[1] : "run";
  if (Mode == "corrupt")
    return runCorrupt();
  return runAll();
}
