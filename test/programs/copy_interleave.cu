// A host-driven simulation: every step the host edits part of the state,
// copies it up, a kernel advances it, and the host copies the result back to
// decide the next edit (launches between cudaMemcpy's, partial copies at an
// offset). A cellular automaton on ints: exact check.
//
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: time_ms:
// CHECK: PASS
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(call)                                                               \
  {                                                                            \
    cudaError_t e = call;                                                      \
    if (e != cudaSuccess) {                                                    \
      printf("%s line %d: %s\n", #call, __LINE__, cudaGetErrorString(e));      \
      exit(1);                                                                 \
    }                                                                          \
  }

// Each cell becomes (left + 2 * self + right + step) mod 1000, on a ring.
__global__ void advance(const int *cur, int *next, int n, int step) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int l = cur[(i + n - 1) % n], r = cur[(i + 1) % n];
    next[i] = (l + 2 * cur[i] + r + step) % 1000;
  }
}

static void advanceHost(const std::vector<int> &cur, std::vector<int> &next,
                        int step) {
  int n = (int)cur.size();
  for (int i = 0; i < n; ++i)
    next[i] = (cur[(i + n - 1) % n] + 2 * cur[i] + cur[(i + 1) % n] + step) % 1000;
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 50000 * scale + 1;
  const int steps = 30;
  std::vector<int> state(n), ref(n), tmp(n);
  srand(5);
  for (int i = 0; i < n; ++i)
    state[i] = rand() % 1000;
  ref = state;
  int *dA, *dB;
  CK(cudaMalloc(&dA, n * sizeof(int)));
  CK(cudaMalloc(&dB, n * sizeof(int)));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0);
  CK(cudaMemcpy(dA, state.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  for (int s = 0; s < steps; ++s) {
    // The host perturbs a window chosen from the current state.
    int at = state[s % n] * 37 % (n - 100);
    for (int j = 0; j < 100; ++j)
      state[at + j] = (state[at + j] + s * 7 + j) % 1000;
    CK(cudaMemcpy(dA + at, state.data() + at, 100 * sizeof(int),
                  cudaMemcpyHostToDevice));
    advance<<<(n + 255) / 256, 256>>>(dA, dB, n, s);
    CK(cudaGetLastError());
    CK(cudaMemcpy(state.data(), dB, n * sizeof(int), cudaMemcpyDeviceToHost));
    int *t = dA;
    dA = dB;
    dB = t;

    int atRef = ref[s % n] * 37 % (n - 100);
    for (int j = 0; j < 100; ++j)
      ref[atRef + j] = (ref[atRef + j] + s * 7 + j) % 1000;
    advanceHost(ref, tmp, s);
    ref.swap(tmp);
  }
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  float ms;
  cudaEventElapsedTime(&ms, e0, e1);
  printf("time_ms: %.3f\n", ms);
  for (int i = 0; i < n; ++i)
    if (state[i] != ref[i]) {
      printf("FAIL at %d: %d != %d\n", i, state[i], ref[i]);
      return 1;
    }
  cudaFree(dA);
  cudaFree(dB);
  printf("PASS\n");
  return 0;
}
