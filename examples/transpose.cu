// transpose: out = in^T for a rows x cols matrix of floats, with a naive
// kernel (coalesced reads, strided writes) and a shared-memory tiled kernel:
// a block stages a 32 x 32 tile, then writes it out transposed, so that both
// the global reads and the global writes are coalesced. The tile has one
// padding column, so that the column reads of the second phase fall into 32
// different shared-memory banks. The host keeps its matrices with a row
// pitch padded to 64 bytes and moves them with cudaMemcpy2D.
//
// Usage: transpose [rows cols]
//   default 1023 x 769: neither side a multiple of the tile (CI); GPU
//   benchmark: transpose 16384 16384.
// Check: exact. A transpose only moves bits.
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <random>
#include <vector>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
                   cudaGetErrorString(err_));                                  \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

constexpr int TILE_DIM = 32;  // a tile is TILE_DIM x TILE_DIM elements
constexpr int BLOCK_ROWS = 8; // a block is TILE_DIM x BLOCK_ROWS threads

// One thread per element: in is rows x cols, out is cols x rows.
__global__ void transposeNaive(float *out, const float *in, int rows,
                               int cols) {
  int x = blockIdx.x * blockDim.x + threadIdx.x; // column of in
  int y = blockIdx.y * blockDim.y + threadIdx.y; // row of in
  if (x < cols && y < rows)
    out[x * rows + y] = in[y * cols + x];
}

// A block of TILE_DIM x BLOCK_ROWS threads moves one TILE_DIM x TILE_DIM tile,
// each thread TILE_DIM / BLOCK_ROWS elements.
__global__ void transposeTiled(float *out, const float *in, int rows,
                               int cols) {
  __shared__ float tile[TILE_DIM][TILE_DIM + 1]; // + 1: no bank conflicts
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (x < cols && y + j < rows)
      tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  // The same tile, seen from out: block (bx, by) writes tile (by, bx).
  x = blockIdx.y * TILE_DIM + threadIdx.x;
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (x < rows && y + j < cols)
      out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

// argv[i] as a positive int, or def when it is absent.
static int argOr(int argc, char **argv, int i, int def) {
  if (i >= argc)
    return def;
  char *end;
  long v = std::strtol(argv[i], &end, 10);
  if (*argv[i] == '\0' || *end != '\0' || v <= 0 || v > INT_MAX) {
    std::fprintf(stderr, "usage: %s [rows cols]\n%s: bad argument '%s'\n",
                 argv[0], argv[0], argv[i]);
    std::exit(1);
  }
  return int(v);
}

// A host matrix of h x w floats whose rows start every pitch bytes.
struct PitchedMatrix {
  int h, w;
  size_t pitch;
  std::vector<float> data;
  PitchedMatrix(int h, int w)
      : h(h), w(w), pitch((size_t(w) * sizeof(float) + 63) / 64 * 64),
        data(size_t(h) * pitch / sizeof(float)) {}
  float &at(int r, int c) {
    return data[size_t(r) * pitch / sizeof(float) + c];
  }
};

// Runs one kernel (naive or tiled) from in to out, times it and checks it
// against the transpose of in. Prints the result line; returns 0 or 1.
static int runAndCheck(bool tiled, PitchedMatrix &in, PitchedMatrix &out,
                       const float *dIn, float *dOut) {
  int rows = in.h, cols = in.w;
  size_t outBytes = size_t(rows) * cols * sizeof(float);
  CUDA_CHECK(cudaMemset(dOut, 0xff, outBytes)); // NaNs: unwritten shows
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  if (tiled) {
    dim3 block(TILE_DIM, BLOCK_ROWS);
    dim3 grid((cols + TILE_DIM - 1) / TILE_DIM,
              (rows + TILE_DIM - 1) / TILE_DIM);
    transposeTiled<<<grid, block>>>(dOut, dIn, rows, cols);
  } else {
    dim3 block(32, 8);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    transposeNaive<<<grid, block>>>(dOut, dIn, rows, cols);
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  // The device matrix is dense (pitch = cols * 4 bytes); the host one padded.
  std::fill(out.data.begin(), out.data.end(), 0.0f);
  CUDA_CHECK(cudaMemcpy2D(
      out.data.data(), out.pitch, dOut, size_t(rows) * sizeof(float),
      size_t(rows) * sizeof(float), cols, cudaMemcpyDeviceToHost));

  const char *name = tiled ? "transpose_tiled" : "transpose_naive";
  for (int r = 0; r < cols; ++r)
    for (int c = 0; c < rows; ++c) {
      // Compare bits: the inputs hold no NaNs, a NaN left by the memset must
      // fail, and -0.0 must stay -0.0.
      float got = out.at(r, c), want = in.at(c, r);
      if (std::memcmp(&got, &want, sizeof(float)) != 0) {
        std::printf("%s: FAIL at out[%d][%d]: got %.9g, expected %.9g "
                    "(%d x %d)\n",
                    name, r, c, got, want, rows, cols);
        return 1;
      }
    }
  std::printf("%s: PASS (%.3f ms, %d x %d)\n", name, ms, rows, cols);
  return 0;
}

int main(int argc, char **argv) {
  int rows = argOr(argc, argv, 1, 1023);
  int cols = argOr(argc, argv, 2, 769);
  if (int64_t(rows) * cols > INT_MAX) {
    std::fprintf(stderr,
                 "%s: the kernels index with int: at most 2^31 - 1 "
                 "elements\n",
                 argv[0]);
    return 1;
  }
  PitchedMatrix in(rows, cols), out(cols, rows);
  std::mt19937 gen(1);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      in.at(r, c) = float(gen() >> 8) * (1.0f / 16777216.0f) - 0.5f;

  size_t bytes = size_t(rows) * cols * sizeof(float);
  float *dIn, *dOut;
  CUDA_CHECK(cudaMalloc(&dIn, bytes));
  CUDA_CHECK(cudaMalloc(&dOut, bytes));
  CUDA_CHECK(cudaMemcpy2D(dIn, size_t(cols) * sizeof(float), in.data.data(),
                          in.pitch, size_t(cols) * sizeof(float), rows,
                          cudaMemcpyHostToDevice));
  int status = runAndCheck(false, in, out, dIn, dOut);
  status |= runAndCheck(true, in, out, dIn, dOut);
  CUDA_CHECK(cudaFree(dIn));
  CUDA_CHECK(cudaFree(dOut));
  return status;
}
