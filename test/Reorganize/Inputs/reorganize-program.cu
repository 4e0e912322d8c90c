// A program that launches the kernels of irregular.cu the way users do,
// on random inputs whose trip counts spread widely or hardly at all, and
// prints a hash of every output after every launch. Run with
// CLEAVE_TUNE=reorganize=off and =force, the two outputs must be equal byte
// for byte: the reorganized variant runs the same items with the same
// arithmetic, only on other threads.
#include "irregular.cu"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

uint64_t fnv(const void *P, size_t Bytes) {
  const unsigned char *B = static_cast<const unsigned char *>(P);
  uint64_t H = 1469598103934665603ull;
  for (size_t I = 0; I < Bytes; ++I)
    H = (H ^ B[I]) * 1099511628211ull;
  return H;
}

uint32_t Rng = 12345;
uint32_t next() {
  Rng = Rng * 1664525u + 1013904223u;
  return Rng;
}
float unit() { return (next() >> 8) * (1.0f / 16777216.0f); }

template <class T> T *upload(const std::vector<T> &V) {
  T *D = nullptr;
  cudaMalloc(&D, V.size() * sizeof(T));
  cudaMemcpy(D, V.data(), V.size() * sizeof(T), cudaMemcpyHostToDevice);
  return D;
}

template <class T> uint64_t hashOf(const T *D, size_t N) {
  std::vector<T> H(N);
  cudaMemcpy(H.data(), D, N * sizeof(T), cudaMemcpyDeviceToHost);
  return fnv(H.data(), N * sizeof(T));
}

constexpr int Launches = 3;
constexpr int Block = 128;

// The kernel's shared tile holds 256 values, which blocks of 256 threads
// load whole.
void bootstrapCase(const char *Name, int N, float P, int Resamples) {
  const int Threads = 256;
  std::vector<float> Data(N);
  for (float &X : Data)
    X = unit();
  std::vector<uint32_t> States(Resamples);
  for (uint32_t &S : States)
    S = next() | 1u;
  float *DData = upload(Data);
  uint32_t *DStates = upload(States);
  float *DMeans = nullptr;
  int *DBlocks = nullptr;
  cudaMalloc(&DMeans, Resamples * sizeof(float));
  cudaMalloc(&DBlocks, Resamples * sizeof(int));
  for (int L = 0; L < Launches; ++L) {
    bootstrap<<<(Resamples + Threads - 1) / Threads, Threads>>>(
        DData, N, P, DStates, DMeans, DBlocks, Resamples);
    std::printf("bootstrap %s launch %d: means %016llx blocks %016llx "
                "states %016llx\n",
                Name, L, (unsigned long long)hashOf(DMeans, Resamples),
                (unsigned long long)hashOf(DBlocks, Resamples),
                (unsigned long long)hashOf(DStates, Resamples));
  }
  cudaFree(DData);
  cudaFree(DStates);
  cudaFree(DMeans);
  cudaFree(DBlocks);
}

// Row lengths from a power law (high spread) or all equal (none).
void spmvCase(const char *Name, int Rows, bool PowerLaw) {
  std::vector<int> RowPtr(Rows + 1, 0);
  for (int R = 0; R < Rows; ++R) {
    int Len = 16;
    if (PowerLaw) {
      float U = unit() + 1e-6f;
      Len = int(1.0f / (U * U)); // P(len > x) ~ x^-1/2
      Len = Len > 4000 ? 4000 : Len;
    }
    RowPtr[R + 1] = RowPtr[R] + Len;
  }
  int Nnz = RowPtr[Rows];
  std::vector<int> Cols(Nnz);
  std::vector<float> Vals(Nnz), X(Rows);
  for (int K = 0; K < Nnz; ++K) {
    Cols[K] = int(next() % unsigned(Rows));
    Vals[K] = unit() - 0.5f;
  }
  for (float &V : X)
    V = unit();
  int *DRowPtr = upload(RowPtr), *DCols = upload(Cols);
  float *DVals = upload(Vals), *DX = upload(X), *DY = nullptr;
  cudaMalloc(&DY, Rows * sizeof(float));
  for (int L = 0; L < Launches; ++L) {
    spmv<<<(Rows + Block - 1) / Block, Block>>>(DRowPtr, DCols, DVals, DX, DY,
                                                 Rows);
    std::printf("spmv %s launch %d: y %016llx\n", Name, L,
                (unsigned long long)hashOf(DY, Rows));
  }
  cudaFree(DRowPtr);
  cudaFree(DCols);
  cudaFree(DVals);
  cudaFree(DX);
  cudaFree(DY);
}

void pathsCase(const char *Name, float Absorb, int N, int Threads = Block) {
  std::vector<uint32_t> Seeds(N);
  for (uint32_t &S : Seeds)
    S = next();
  uint32_t *DSeeds = upload(Seeds);
  float *DDist = nullptr;
  int *DSteps = nullptr;
  cudaMalloc(&DDist, N * sizeof(float));
  cudaMalloc(&DSteps, N * sizeof(int));
  for (int L = 0; L < Launches; ++L) {
    paths<<<(N + Threads - 1) / Threads, Threads>>>(DSeeds, Absorb, DDist,
                                                     DSteps, N);
    std::printf("paths %s launch %d: dist %016llx steps %016llx\n", Name, L,
                (unsigned long long)hashOf(DDist, N),
                (unsigned long long)hashOf(DSteps, N));
  }
  cudaFree(DSeeds);
  cudaFree(DDist);
  cudaFree(DSteps);
}

} // namespace

int main() {
  // High spread: short series, rare block ends (cv ~ 0.5); low: long
  // series, frequent ends (cv ~ 0.05).
  bootstrapCase("high", 64, 0.05f, 3000);
  bootstrapCase("low", 1024, 0.5f, 3000);
  spmvCase("high", 5000, true);
  spmvCase("low", 5000, false);
  pathsCase("high", 0.01f, 20000);
  pathsCase("low", 0.9f, 20000);
  // A grid of one warp: the step never runs there.
  pathsCase("one-warp", 0.01f, 32, 32);
  cudaError_t E = cudaDeviceSynchronize();
  std::printf("done: %s\n", cudaGetErrorString(E));
  return E == cudaSuccess ? 0 : 1;
}
