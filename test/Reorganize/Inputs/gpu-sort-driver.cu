// Runs the runtime's GPU sort kernels (runtime/lib/engine/ReorganizeSort.cu)
// in the order and with the launch shapes runtime/lib/engine/Reorganize.cpp
// uses, on counts of several spreads, and checks the result against the host:
// the permutation holds every thread once, its keys never decrease (counts
// never increase, compared above the shifted-out bits), and the four sums
// equal the host's (the sum of squares to rounding).
#include "../../../runtime/lib/engine/ReorganizeSort.cu"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

uint32_t Rng = 99;
uint32_t next() {
  Rng = Rng * 1664525u + 1013904223u;
  return Rng;
}

unsigned bitsFor(unsigned Max) {
  unsigned B = 0;
  while (B < 32 && (1ull << B) <= Max)
    ++B;
  return B;
}

int Failures = 0;

void check(const char *Name, std::vector<int> Counts, unsigned BlockThreads) {
  unsigned N = unsigned(Counts.size());
  int *DCounts = nullptr, *DPerm = nullptr;
  unsigned *DAux = nullptr;
  cudaMalloc(&DCounts, N * 4);
  cudaMalloc(&DPerm, N * 4);
  cudaMalloc(&DAux, 64 + 4 * 65536);
  cudaMemcpy(DCounts, Counts.data(), N * 4, cudaMemcpyHostToDevice);
  cudaMemset(DAux, 0, 64 + 4 * 65536);
  double *DSums = reinterpret_cast<double *>(DAux);
  unsigned *DMax = DAux + 8, *DHist = DAux + 16;
  unsigned Blocks = std::min((N + 255) / 256, 4096u);
  cleave_sort_max<<<Blocks, 256>>>(DCounts, N, DMax);
  unsigned Max = 0;
  cudaMemcpy(&Max, DMax, 4, cudaMemcpyDeviceToHost);
  unsigned Bits = bitsFor(Max), Shift = Bits > 16 ? Bits - 16 : 0;
  unsigned Buckets = (Max >> Shift) + 1;
  unsigned Warps = (N + BlockThreads - 1) / BlockThreads *
                   ((BlockThreads + 31) / 32);
  cleave_sort_histogram<<<Blocks, 256>>>(DCounts, N, Max, Shift, Buckets,
                                         DHist);
  cleave_sort_scan<<<1, 1024>>>(DHist, Buckets);
  cleave_sort_scatter<<<(N + 255) / 256, 256>>>(DCounts, N, Max, Shift, DHist,
                                                DPerm);
  cleave_sort_stats<<<std::min((Warps + 255) / 256, 4096u), 256>>>(
      DCounts, DPerm, N, BlockThreads, DSums);
  std::vector<int> Perm(N);
  double Sums[4];
  cudaMemcpy(Perm.data(), DPerm, N * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(Sums, DSums, sizeof(Sums), cudaMemcpyDeviceToHost);
  cudaFree(DCounts);
  cudaFree(DPerm);
  cudaFree(DAux);

  auto C = [&](int I) { return unsigned(std::max(0, Counts[I])); };
  unsigned HostMax = 0;
  double Sum = 0, Sq = 0, WarpMax = 0, WarpMaxSorted = 0;
  for (unsigned I = 0; I < N; ++I) {
    HostMax = std::max(HostMax, C(I));
    Sum += C(I);
    Sq += double(C(I)) * C(I);
  }
  std::vector<char> Seen(N, 0);
  bool Perm_ok = true, Order_ok = true;
  for (unsigned I = 0; I < N; ++I) {
    if (Perm[I] < 0 || unsigned(Perm[I]) >= N || Seen[Perm[I]]) {
      Perm_ok = false;
      break;
    }
    Seen[Perm[I]] = 1;
    if (I && (C(Perm[I - 1]) >> Shift) < (C(Perm[I]) >> Shift))
      Order_ok = false;
  }
  if (Perm_ok)
    for (unsigned B0 = 0; B0 < N; B0 += BlockThreads)
      for (unsigned W0 = B0; W0 < std::min(N, B0 + BlockThreads); W0 += 32) {
        unsigned M = 0, MS = 0;
        for (unsigned I = W0; I < std::min({N, B0 + BlockThreads, W0 + 32});
             ++I) {
          M = std::max(M, C(I));
          MS = std::max(MS, C(Perm[I]));
        }
        WarpMax += M;
        WarpMaxSorted += MS;
      }
  // The sum of squares passes 2^53 for wide keys, where doubles round
  // in the order the atomics add.
  bool Sums_ok = Sums[0] == Sum && std::fabs(Sums[1] - Sq) <= 1e-12 * Sq &&
                 Sums[2] == WarpMax && Sums[3] == WarpMaxSorted;
  bool Ok = Max == HostMax && Perm_ok && Order_ok && Sums_ok;
  Failures += !Ok;
  std::printf("%s: %u threads, max %u, shift %u: %s%s%s%s\n", Name, N, Max,
              Shift, Ok ? "ok" : "FAILED", Perm_ok ? "" : " (not a permutation)",
              Order_ok ? "" : " (out of order)", Sums_ok ? "" : " (sums)");
}

std::vector<int> make(unsigned N, unsigned Spread, bool Negative = false) {
  std::vector<int> V(N);
  for (int &X : V) {
    X = int(next() % (Spread + 1));
    if (Negative && next() % 17 == 0)
      X = -int(next() % 5);
  }
  return V;
}

} // namespace

int main() {
  check("uniform", std::vector<int>(5000, 7), 128);
  check("few keys", make(10000, 12), 256);
  check("negatives", make(3001, 40, true), 96);
  // More than 4096 keys: the histogram goes to global memory.
  check("many keys", make(20000, 60000), 128);
  // Past 16 key bits: counts share a key within 2^shift.
  check("wide keys", make(20000, 1u << 24), 128);
  check("one thread", std::vector<int>(1, 3), 32);
  std::printf("failures: %d\n", Failures);
  return Failures != 0;
}
