// Stream compaction with a global atomic counter: each thread whose record
// passes the filter takes a slot with atomicAdd and writes its record there.
// The order of the output is up to the scheduling, so the check sorts it.
//
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: time_ms:
// CHECK: PASS
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t e = call;                                                      \
    if (e != cudaSuccess) {                                                    \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(e));                                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

struct Event {
  int id;
  float energy;
};

__global__ void selectEvents(const Event *events, int n, float cut,
                             Event *selected, int *count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && events[i].energy > cut) {
    int slot = atomicAdd(count, 1);
    selected[slot] = events[i];
  }
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 200000 * scale + 11;
  std::vector<Event> ev(n);
  srand(99);
  for (int i = 0; i < n; ++i) {
    ev[i].id = i;
    ev[i].energy = 100.0f * rand() / (float)RAND_MAX;
  }
  const float cut = 87.5f;
  Event *dEv, *dSel;
  int *dCount;
  CUDA_CHECK(cudaMalloc(&dEv, n * sizeof(Event)));
  CUDA_CHECK(cudaMalloc(&dSel, n * sizeof(Event)));
  CUDA_CHECK(cudaMalloc(&dCount, sizeof(int)));
  CUDA_CHECK(cudaMemcpy(dEv, ev.data(), n * sizeof(Event), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dCount, 0, sizeof(int)));
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  selectEvents<<<(n + 255) / 256, 256>>>(dEv, n, cut, dSel, dCount);
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  printf("time_ms: %.3f\n", ms);
  int count = 0;
  CUDA_CHECK(cudaMemcpy(&count, dCount, sizeof(int), cudaMemcpyDeviceToHost));
  std::vector<int> want;
  for (int i = 0; i < n; ++i)
    if (ev[i].energy > cut)
      want.push_back(i);
  if (count != (int)want.size()) {
    printf("FAIL: %d selected, expected %zu\n", count, want.size());
    return 1;
  }
  std::vector<Event> sel(count);
  CUDA_CHECK(cudaMemcpy(sel.data(), dSel, count * sizeof(Event), cudaMemcpyDeviceToHost));
  std::sort(sel.begin(), sel.end(),
            [](const Event &a, const Event &b) { return a.id < b.id; });
  for (int k = 0; k < count; ++k)
    if (sel[k].id != want[k] || sel[k].energy != ev[want[k]].energy) {
      printf("FAIL: selection %d is event %d, expected %d\n", k, sel[k].id, want[k]);
      return 1;
    }
  printf("PASS (%d of %d events)\n", count, n);
  return 0;
}
