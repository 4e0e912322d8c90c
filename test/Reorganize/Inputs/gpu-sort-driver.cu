// Runs the runtime's GPU sort kernels (runtime/lib/engine/ReorganizeSort.cu)
// in the order and with the launch shapes runtime/lib/engine/Reorganize.cpp
// uses, on counts of several spreads and key widths, and checks the result
// against the host: the permutation is the host's stable sort by key,
// largest count first (compared above the shifted-out bits), and the four
// sums equal the host's (the sum of squares to rounding).
#include "../../../runtime/lib/engine/ReorganizeSort.cu"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
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

// The runtime's sequence (Reorganize.cpp, queueGpuSort): the largest
// count, then one digit pass for up to 8 planned key bits, two for up to
// 16, each a histogram and a scatter of one block of 256 per tile of 4096
// threads around a one-block scan, then the statistics.
void sortOnGpu(const int *DCounts, unsigned N, unsigned KeyBits,
               unsigned BlockThreads, int *DPerm, int *DTmp, unsigned *DHist,
               unsigned *DAux) {
  const unsigned Tile = 4096, Tiles = (N + Tile - 1) / Tile;
  unsigned Strided = std::min((N + 255) / 256, 4096u);
  cudaMemset(DAux, 0, 64);
  unsigned *DMax = DAux + 8;
  cleave_sort_max<<<Strided, 256>>>(DCounts, N, DMax);
  unsigned Passes = KeyBits > 8 ? 2 : 1;
  for (unsigned P = 0; P < Passes; ++P) {
    unsigned Shift = 8 * P;
    unsigned Digits = 1u << std::min(8u, KeyBits - std::min(KeyBits, Shift));
    const int *Src = P ? DTmp : nullptr;
    int *Dst = P + 1 == Passes ? DPerm : DTmp;
    cleave_sort_histogram<<<Tiles, 256>>>(DCounts, Src, N, DMax, KeyBits,
                                          Shift, Digits, DHist);
    cleave_sort_scan<<<1, 1024>>>(DHist, Digits * Tiles);
    cleave_sort_scatter<<<Tiles, 256>>>(DCounts, Src, N, DMax, KeyBits, Shift,
                                        Digits, DHist, Dst);
  }
  unsigned Warps =
      (N + BlockThreads - 1) / BlockThreads * ((BlockThreads + 31) / 32);
  cleave_sort_stats<<<std::min((Warps + 255) / 256, 4096u), 256>>>(
      DCounts, DPerm, N, BlockThreads, reinterpret_cast<double *>(DAux));
}

void check(const char *Name, std::vector<int> Counts, unsigned BlockThreads,
           unsigned KeyBits = 16) {
  unsigned N = unsigned(Counts.size());
  unsigned Tiles = (N + 4095) / 4096;
  int *DCounts = nullptr, *DPerm = nullptr, *DTmp = nullptr;
  unsigned *DAux = nullptr, *DHist = nullptr;
  cudaMalloc(&DCounts, N * 4);
  cudaMalloc(&DPerm, N * 4);
  cudaMalloc(&DTmp, N * 4);
  cudaMalloc(&DHist, Tiles * 256 * 4);
  cudaMalloc(&DAux, 64);
  cudaMemcpy(DCounts, Counts.data(), N * 4, cudaMemcpyHostToDevice);
  sortOnGpu(DCounts, N, KeyBits, BlockThreads, DPerm, DTmp, DHist, DAux);
  std::vector<int> Perm(N);
  unsigned char Back[40];
  double Sums[4];
  unsigned Max = 0;
  cudaMemcpy(Perm.data(), DPerm, N * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(Back, DAux, sizeof(Back), cudaMemcpyDeviceToHost);
  std::memcpy(Sums, Back, sizeof(Sums));
  std::memcpy(&Max, Back + 32, 4);
  for (void *P : {(void *)DCounts, (void *)DPerm, (void *)DTmp, (void *)DHist,
                  (void *)DAux})
    cudaFree(P);

  auto C = [&](int I) { return unsigned(std::max(0, Counts[I])); };
  unsigned HostMax = 0;
  double Sum = 0, Sq = 0, WarpMax = 0, WarpMaxSorted = 0;
  for (unsigned I = 0; I < N; ++I) {
    HostMax = std::max(HostMax, C(I));
    Sum += C(I);
    Sq += double(C(I)) * C(I);
  }
  unsigned Bits = bitsFor(HostMax);
  unsigned Shift = Bits > KeyBits ? Bits - KeyBits : 0;
  // The host's stable sort by key, largest count first: the GPU's
  // permutation must be exactly this one.
  std::vector<int> Want(N);
  for (unsigned I = 0; I < N; ++I)
    Want[I] = int(I);
  std::stable_sort(Want.begin(), Want.end(), [&](int A, int B) {
    return (C(A) >> Shift) > (C(B) >> Shift);
  });
  bool Perm_ok = Perm == Want;
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
  // in the order the blocks add.
  bool Sums_ok = Sums[0] == Sum && std::fabs(Sums[1] - Sq) <= 1e-12 * Sq &&
                 Sums[2] == WarpMax && Sums[3] == WarpMaxSorted;
  bool Ok = Max == HostMax && Perm_ok && Sums_ok;
  Failures += !Ok;
  std::printf("%s: %u threads, max %u, %u key bits, shift %u: %s%s%s\n", Name,
              N, Max, KeyBits, Shift, Ok ? "ok" : "FAILED",
              Perm_ok ? "" : " (not the host's stable order)",
              Sums_ok ? "" : " (sums)");
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
  check("few keys", make(10000, 12), 256, 4);
  check("negatives", make(3001, 40, true), 96, 6);
  // One pass of 8 bits, several tiles, the last one partial.
  check("one pass", make(3 * 4096 + 77, 255), 128, 8);
  // Two passes: 9 and 16 key bits.
  check("nine bits", make(2 * 4096 + 1, 300), 128, 9);
  check("many keys", make(20000, 60000), 128);
  check("sixteen bits", make(4096 * 5, 65535), 256);
  // Past 16 key bits: counts share a key within 2^shift.
  check("wide keys", make(20000, 1u << 24), 128);
  // Counts that outgrew the planned bits (planned from a previous launch):
  // the GPU shifts them down to fit.
  check("outgrown plan", make(7000, 1000), 128, 4);
  check("one thread", std::vector<int>(1, 3), 32);
  std::printf("failures: %d\n", Failures);
  return Failures != 0;
}
