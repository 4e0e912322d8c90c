// One GPU, one process, launches interleaved launch by launch and timed with
// CUDA events: each kernel's original (Cleave's build, PTX from `cleave
// compile --emit=ptx`, loaded as the cubin ptxas made from it) against
//  - its __cleave_pr_ variant launched as one 1-D range covering the grid,
//  - hand-made launch conventions from the same module (make_variants.py):
//    __cleave_box_ / __cleave_boxr_ (3-D boxes of the grid), __cleave_rows_
//    (whole rows, early exit), __cleave_nd_ (a control: the original's body
//    with the partition parameters),
//  - optional other builds: ptx/udiv/, ptx/fast/, and the Cleave builds named
//    in BUILDS (ptx/<name>/, each compared with its own original),
//  - nvcc's build of the same source (ptx/nvcc/), as cleave/nvcc ratios.
//
//   harness PTX_DIR OUT.jsonl [REPS]     (env: BUILDS, SPLIT=1, KERNELS=a,b)
//
// Writes JSON lines (one per kernel and variant with every repetition, one
// per ratio) and prints a table. Before timing, every original's output is
// checked against a C++ reference (every element, or a sample for matmul);
// every Cleave variant, run as three uneven ranges of the grid (non-zero
// first blocks, cuts inside rows), must reproduce its build's original bit
// for bit; nvcc's build and other builds' originals are checked against the
// reference with the kernel's tolerance, and their distance from Cleave's
// output is recorded.
#include "cleave/rt/Bundle.h"
#include "cleave/rt/Footprint.h"
#include "cleave/rt/PartitionParams.h"

#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#define CK(call)                                                               \
  do {                                                                         \
    CUresult R_ = (call);                                                      \
    if (R_ != CUDA_SUCCESS) {                                                  \
      const char *S_ = nullptr;                                                \
      cuGetErrorString(R_, &S_);                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
                   S_ ? S_ : "?");                                             \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

namespace {

using cleave::rt::NumPartitionParams;

std::string readFile(const std::string &Path) {
  FILE *F = std::fopen(Path.c_str(), "rb");
  if (!F) {
    std::fprintf(stderr, "cannot open %s\n", Path.c_str());
    std::exit(1);
  }
  std::string S;
  char Buf[65536];
  size_t N;
  while ((N = std::fread(Buf, 1, sizeof Buf, F)) > 0)
    S.append(Buf, N);
  std::fclose(F);
  return S;
}

struct Dim3 {
  unsigned X = 1, Y = 1, Z = 1;
};

// One kernel's benchmark: its buffers (Sets copies of the inputs when they
// are small next to L2, used in turn), its launch shape and its arguments.
struct Case {
  std::string Kernel;   // file stem in PTX_DIR
  std::string Mangled;  // original kernel's name
  std::string Sizes;    // JSON object text
  Dim3 Grid, Block;
  unsigned Shared = 0;
  int Sets = 1;
  // Argument values (by value), rebuilt per set: Args[set] is the list of
  // pointers cuLaunchKernel wants.
  std::vector<std::vector<uint64_t>> Storage;
  std::vector<std::vector<void *>> Args;
  CUdeviceptr Output = 0;  // the buffer compared (set 0)
  size_t OutputBytes = 0;
  std::function<bool(const std::vector<float> &)> Check; // on set 0's output
};

CUdeviceptr allocFill(size_t Count, std::mt19937 &Rng, float Lo, float Hi,
                      std::vector<float> *Keep) {
  std::vector<float> H(Count);
  std::uniform_real_distribution<float> D(Lo, Hi);
  for (float &V : H)
    V = D(Rng);
  CUdeviceptr P;
  CK(cuMemAlloc(&P, Count * sizeof(float)));
  CK(cuMemcpyHtoD(P, H.data(), Count * sizeof(float)));
  if (Keep)
    *Keep = std::move(H);
  return P;
}

CUdeviceptr allocPoison(size_t Count) {
  CUdeviceptr P;
  CK(cuMemAlloc(&P, Count * sizeof(float)));
  CK(cuMemsetD32(P, 0x7FC00001u, Count)); // a NaN: unwritten shows
  return P;
}

template <typename T> uint64_t bits(T V) {
  uint64_t B = 0;
  std::memcpy(&B, &V, sizeof V);
  return B;
}

void finishArgs(Case &C) {
  C.Args.resize(C.Storage.size());
  for (size_t S = 0; S < C.Storage.size(); ++S)
    for (uint64_t &V : C.Storage[S])
      C.Args[S].push_back(&V);
}

bool near(double Got, double Want, double Rel) {
  if (std::isnan(Got))
    return false;
  return std::fabs(Got - Want) <= Rel * std::max(1.0, std::fabs(Want));
}

// Checks Out against Ref(i) for every i; reports the first mismatch.
bool checkAll(const std::vector<float> &Out, double Rel,
              const std::function<double(size_t)> &Ref, const char *Name) {
  for (size_t I = 0; I < Out.size(); ++I)
    if (!near(Out[I], Ref(I), Rel)) {
      std::fprintf(stderr, "%s: element %zu is %.9g, want %.9g\n", Name, I,
                   Out[I], Ref(I));
      return false;
    }
  return true;
}

std::vector<Case> makeCases(std::mt19937 &Rng) {
  std::vector<Case> Cases;
  { // vecadd: 2^26 floats, memory-bound, 1-D.
    Case C;
    C.Kernel = "vecadd";
    C.Mangled = "_Z6vecaddPKfS0_Pfi";
    int N = 1 << 26;
    C.Sizes = "{\"n\": 67108864, \"block\": [256, 1, 1]}";
    C.Block = {256, 1, 1};
    C.Grid = {unsigned(N / 256), 1, 1};
    auto A = std::make_shared<std::vector<float>>();
    auto B = std::make_shared<std::vector<float>>();
    CUdeviceptr DA = allocFill(N, Rng, -1, 1, A.get());
    CUdeviceptr DB = allocFill(N, Rng, -1, 1, B.get());
    CUdeviceptr DC = allocPoison(N);
    C.Storage.push_back({DA, DB, DC, uint64_t(uint32_t(N))});
    C.Output = DC;
    C.OutputBytes = size_t(N) * 4;
    C.Check = [A, B](const std::vector<float> &O) {
      return checkAll(O, 0, [&](size_t I) { return double((*A)[I] + (*B)[I]); },
                      "vecadd");
    };
    Cases.push_back(std::move(C));
  }
  { // matmul 2048^3, 16x16 blocks, 2-D grid; inputs (32 MiB a set) rotated
    // over 4 sets.
    Case C;
    C.Kernel = "matmul";
    C.Mangled = "_Z6matmulPKfS0_Pfiii";
    int M = 2048, N = 2048, K = 2048;
    C.Sizes = "{\"M\": 2048, \"N\": 2048, \"K\": 2048, \"block\": [16, 16, 1], "
              "\"input_sets\": 4}";
    C.Block = {16, 16, 1};
    C.Grid = {unsigned(N / 16), unsigned(M / 16), 1};
    C.Sets = 4;
    auto A = std::make_shared<std::vector<float>>();
    auto B = std::make_shared<std::vector<float>>();
    for (int S = 0; S < C.Sets; ++S) {
      CUdeviceptr DA = allocFill(size_t(M) * K, Rng, -1, 1, S ? nullptr : A.get());
      CUdeviceptr DB = allocFill(size_t(K) * N, Rng, -1, 1, S ? nullptr : B.get());
      CUdeviceptr DC = allocPoison(size_t(M) * N);
      if (!S)
        C.Output = DC;
      C.Storage.push_back({DA, DB, DC, uint64_t(M), uint64_t(N), uint64_t(K)});
    }
    C.OutputBytes = size_t(M) * N * 4;
    C.Check = [A, B, M, N, K](const std::vector<float> &O) {
      std::mt19937 R(7);
      for (int T = 0; T < 4096; ++T) {
        int I = int(R() % M), J = int(R() % N);
        if (T < 4)
          I = (T & 1) ? M - 1 : 0, J = (T & 2) ? N - 1 : 0;
        double Acc = 0;
        for (int L = 0; L < K; ++L)
          Acc += double((*A)[size_t(I) * K + L]) * (*B)[size_t(L) * N + J];
        if (!near(O[size_t(I) * N + J], Acc, 1e-4)) {
          std::fprintf(stderr, "matmul: C[%d][%d] = %.9g, want %.9g\n", I, J,
                       O[size_t(I) * N + J], Acc);
          return false;
        }
      }
      for (float V : O)
        if (std::isnan(V))
          return false;
      return true;
    };
    Cases.push_back(std::move(C));
  }
  { // transpose 8192^2, 32x32 tiles (one element per thread), 2-D grid.
    Case C;
    C.Kernel = "transpose";
    C.Mangled = "_Z9transposePfPKfii";
    int W = 8192, H = 8192;
    C.Sizes = "{\"width\": 8192, \"height\": 8192, \"block\": [32, 32, 1]}";
    C.Block = {32, 32, 1};
    C.Grid = {unsigned(W / 32), unsigned(H / 32), 1};
    auto In = std::make_shared<std::vector<float>>();
    CUdeviceptr DI = allocFill(size_t(W) * H, Rng, -1, 1, In.get());
    CUdeviceptr DO = allocPoison(size_t(W) * H);
    C.Storage.push_back({DO, DI, uint64_t(W), uint64_t(H)});
    C.Output = DO;
    C.OutputBytes = size_t(W) * H * 4;
    C.Check = [In, W, H](const std::vector<float> &O) {
      // out[y * H + x] = in[x * W + y]
      return checkAll(O, 0,
                      [&](size_t I) {
                        size_t Y = I / H, X = I % H;
                        return double((*In)[X * W + Y]);
                      },
                      "transpose");
    };
    Cases.push_back(std::move(C));
  }
  { // stencil3d 512^3, 8x8x4 blocks, 3-D grid 64 x 64 x 128.
    Case C;
    C.Kernel = "stencil3d";
    C.Mangled = "_Z9stencil3dPKfPfiii";
    int NX = 512, NY = 512, NZ = 512;
    C.Sizes = "{\"nx\": 512, \"ny\": 512, \"nz\": 512, \"block\": [8, 8, 4]}";
    C.Block = {8, 8, 4};
    C.Grid = {unsigned(NX / 8), unsigned(NY / 8), unsigned(NZ / 4)};
    size_t Cells = size_t(NX) * NY * NZ;
    auto In = std::make_shared<std::vector<float>>();
    CUdeviceptr DI = allocFill(Cells, Rng, -1, 1, In.get());
    CUdeviceptr DO;
    CK(cuMemAlloc(&DO, Cells * 4));
    // Boundary cells are never written: fill the output with a known value.
    CK(cuMemsetD32(DO, 0x3F800000u, Cells)); // 1.0f
    C.Storage.push_back({DI, DO, uint64_t(NX), uint64_t(NY), uint64_t(NZ)});
    C.Output = DO;
    C.OutputBytes = Cells * 4;
    C.Check = [In, NX, NY, NZ](const std::vector<float> &O) {
      const std::vector<float> &I = *In;
      size_t SY = NX, SZ = size_t(NX) * NY;
      for (int Z = 0; Z < NZ; ++Z)
        for (int Y = 0; Y < NY; ++Y)
          for (int X = 0; X < NX; ++X) {
            size_t Idx = (size_t(Z) * NY + Y) * NX + X;
            double Want = 1.0;
            if (X >= 1 && Y >= 1 && Z >= 1 && X < NX - 1 && Y < NY - 1 &&
                Z < NZ - 1)
              Want = 0.4 * I[Idx] + 0.1 * (double(I[Idx - 1]) + I[Idx + 1] +
                                           I[Idx - SY] + I[Idx + SY] +
                                           I[Idx - SZ] + I[Idx + SZ]);
            if (!near(O[Idx], Want, 1e-5)) {
              std::fprintf(stderr, "stencil3d: (%d,%d,%d) = %.9g, want %.9g\n",
                           X, Y, Z, O[Idx], Want);
              return false;
            }
          }
      return true;
    };
    Cases.push_back(std::move(C));
  }
  { // blackscholes: 2^25 options, 256 threads per block.
    Case C;
    C.Kernel = "blackscholes";
    C.Mangled = "_Z12blackscholesPfS_PKfS1_S1_ffi";
    int N = 1 << 25;
    C.Sizes = "{\"n\": 33554432, \"block\": [256, 1, 1]}";
    C.Block = {256, 1, 1};
    C.Grid = {unsigned(N / 256), 1, 1};
    auto S = std::make_shared<std::vector<float>>();
    auto X = std::make_shared<std::vector<float>>();
    auto T = std::make_shared<std::vector<float>>();
    CUdeviceptr DCall = allocPoison(N), DPut = allocPoison(N);
    CUdeviceptr DS = allocFill(N, Rng, 5, 30, S.get());
    CUdeviceptr DX = allocFill(N, Rng, 1, 100, X.get());
    CUdeviceptr DT = allocFill(N, Rng, 0.25f, 10, T.get());
    float R = 0.02f, V = 0.30f;
    C.Storage.push_back({DCall, DPut, DS, DX, DT, bits(R), bits(V),
                         uint64_t(uint32_t(N))});
    C.Output = DCall;
    C.OutputBytes = size_t(N) * 4;
    C.Check = [S, X, T, R, V](const std::vector<float> &O) {
      auto Cnd = [](double D) { return 0.5 * std::erfc(-D / std::sqrt(2.0)); };
      return checkAll(O, 2e-4,
                      [&](size_t I) {
                        double s = (*S)[I], x = (*X)[I], t = (*T)[I];
                        double d1 = (std::log(s / x) + (R + 0.5 * V * V) * t) /
                                    (V * std::sqrt(t));
                        double d2 = d1 - V * std::sqrt(t);
                        return s * Cnd(d1) - x * std::exp(-R * t) * Cnd(d2);
                      },
                      "blackscholes");
    };
    Cases.push_back(std::move(C));
  }
  { // reduction: 2^27 floats, 256 threads, 512 elements per block.
    Case C;
    C.Kernel = "reduction";
    C.Mangled = "_Z10reduce_sumPKfPfi";
    int N = 1 << 27;
    C.Sizes = "{\"n\": 134217728, \"block\": [256, 1, 1]}";
    C.Block = {256, 1, 1};
    C.Grid = {unsigned(N / 512), 1, 1};
    auto In = std::make_shared<std::vector<float>>();
    CUdeviceptr DI = allocFill(N, Rng, -1, 1, In.get());
    CUdeviceptr DP = allocPoison(N / 512);
    C.Storage.push_back({DI, DP, uint64_t(uint32_t(N))});
    C.Output = DP;
    C.OutputBytes = size_t(N / 512) * 4;
    C.Check = [In](const std::vector<float> &O) {
      return checkAll(O, 1e-4,
                      [&](size_t B) {
                        double Acc = 0;
                        for (size_t I = B * 512; I < B * 512 + 512; ++I)
                          Acc += (*In)[I];
                        return Acc;
                      },
                      "reduction");
    };
    Cases.push_back(std::move(C));
  }
  for (Case &C : Cases)
    finishArgs(C);
  return Cases;
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  size_t N = V.size();
  return N % 2 ? V[N / 2] : 0.5 * (V[N / 2 - 1] + V[N / 2]);
}

std::string jsonList(const std::vector<double> &V) {
  std::string S = "[";
  char Buf[32];
  for (size_t I = 0; I < V.size(); ++I) {
    std::snprintf(Buf, sizeof Buf, "%s%.6f", I ? ", " : "", V[I]);
    S += Buf;
  }
  return S + "]";
}

enum class Conv {
  Original,      // the kernel as written, launched with its own grid
  Partition,     // __cleave_pr_: 1-D launch of a linear range, 12 params
  PartitionUdiv, // a previous convention: i64 first, i32 grid x, y, z
  Box,           // __cleave_box_: 3-D launch of a box, first.xyz + grid.xyz
  Rows,          // __cleave_rows_: 2-D launch of whole rows, early exit
  Rebased,       // __cleave_rb<d>_: the kernel's own code on a slab along d,
                 // extra parameters from the bundle's rebase record
};

// One function to time. Split: the timed unit is the three uneven ranges
// of the correctness check, launched back to back (what a split launch of
// this convention costs on one GPU), instead of one launch of everything.
// Foreign: another compiler's build of the original (nvcc), checked against
// the reference with the kernel's tolerance instead of bit for bit.
struct Variant {
  std::string Label;
  CUfunction Fn;
  Conv Kind;
  std::string Image; // "cubin" or "ptx"
  bool Split = false;
  bool Foreign = false;
  int Regs = 0;
  int Launches = 1; // per timed unit
  int Base = 0;     // index of the original of the same build
  // Rebased: the kernel's footprints (with the rebase record) and its
  // dimension.
  std::shared_ptr<cleave::rt::FootprintProgram> Fp;
  unsigned Dim = 0;
};

// The slab dimension of a grid: the highest with more than one block.
unsigned slabDim(const Dim3 &G) { return G.Z > 1 ? 2 : G.Y > 1 ? 1 : 0; }
uint64_t slabBlocks(const Dim3 &G, unsigned Dim) {
  return Dim == 0 ? 1 : Dim == 1 ? G.X : uint64_t(G.X) * G.Y;
}

struct Box {
  uint32_t X, Y, Z, NX, NY, NZ;
};

// A contiguous linear range of blocks [First, First + Count) of the grid G
// (x fastest) as at most 5 boxes: partial row, rows, planes, rows, partial
// row.
std::vector<Box> toBoxes(uint64_t First, uint64_t Count, const Dim3 &G) {
  std::vector<Box> Out;
  uint64_t L = First, E = First + Count, Row = G.X, Plane = uint64_t(G.X) * G.Y;
  while (L < E) {
    uint32_t X = uint32_t(L % G.X);
    uint64_t R = L / G.X;
    uint32_t Y = uint32_t(R % G.Y), Z = uint32_t(R / G.Y);
    if (X != 0 || E - L < Row) {
      uint64_t N = std::min<uint64_t>(G.X - X, E - L);
      Out.push_back({X, Y, Z, uint32_t(N), 1, 1});
      L += N;
    } else if (Y != 0 || E - L < Plane) {
      uint64_t N = std::min<uint64_t>(G.Y - Y, (E - L) / Row);
      Out.push_back({0, Y, Z, G.X, uint32_t(N), 1});
      L += N * Row;
    } else {
      uint64_t N = (E - L) / Plane;
      Out.push_back({0, 0, Z, G.X, G.Y, uint32_t(N)});
      L += N * Plane;
    }
  }
  return Out;
}

// Launches are either issued at once or, while Deferred is set, recorded
// with a copy of their parameter values, so that the timed region holds
// only cuLaunchKernel calls: the host work a convention needs to compute
// its parameters (decode constants, boxes, rebased pointers) is never
// timed as kernel time.
struct RecordedLaunch {
  CUfunction Fn;
  unsigned G[3], B[3], Shared;
  std::vector<std::vector<char>> Values;
};
std::vector<RecordedLaunch> *Deferred = nullptr;

void launchKernel(CUfunction Fn, unsigned GX, unsigned GY, unsigned GZ,
                  unsigned BX, unsigned BY, unsigned BZ, unsigned Shared,
                  CUstream S, void **Args) {
  if (!Deferred) {
    CK(cuLaunchKernel(Fn, GX, GY, GZ, BX, BY, BZ, Shared, S, Args, nullptr));
    return;
  }
  RecordedLaunch R{Fn, {GX, GY, GZ}, {BX, BY, BZ}, Shared, {}};
  size_t Offset = 0, Size = 0;
  for (size_t I = 0; cuFuncGetParamInfo(Fn, I, &Offset, &Size) == CUDA_SUCCESS;
       ++I) {
    const char *P = static_cast<const char *>(Args[I]);
    R.Values.emplace_back(P, P + Size);
  }
  Deferred->push_back(std::move(R));
}

void issue(std::vector<RecordedLaunch> &List, CUstream S) {
  for (RecordedLaunch &R : List) {
    std::vector<void *> Args;
    for (std::vector<char> &V : R.Values)
      Args.push_back(V.data());
    CK(cuLaunchKernel(R.Fn, R.G[0], R.G[1], R.G[2], R.B[0], R.B[1], R.B[2],
                      R.Shared, S, Args.data(), nullptr));
  }
}

// Launches V for blocks [First, First + Count) of C's grid (the original:
// the whole grid, as launched normally). Returns the number of launches.
int launch(const Variant &V, Case &C, int Set, uint64_t First, uint64_t Count,
           CUstream S) {
  std::vector<void *> Args = C.Args[Set];
  if (V.Kind == Conv::Original) {
    launchKernel(V.Fn, C.Grid.X, C.Grid.Y, C.Grid.Z, C.Block.X,
                      C.Block.Y, C.Block.Z, C.Shared, S, Args.data());
    return 1;
  }
  if (!cleave::rt::isValidPartitionLaunch(First, Count, C.Grid.X, C.Grid.Y,
                                          C.Grid.Z)) {
    std::fprintf(stderr, "invalid range\n");
    std::exit(1);
  }
  uint32_t G[3] = {C.Grid.X, C.Grid.Y, C.Grid.Z};
  if (V.Kind == Conv::Rebased) {
    uint64_t Slab = slabBlocks(C.Grid, V.Dim);
    if (First % Slab || Count % Slab) {
      std::fprintf(stderr, "rebased: range not made of slabs\n");
      std::exit(1);
    }
    cleave::rt::LaunchConfig L;
    for (int D = 0; D < 3; ++D) {
      L.Grid[D] = G[D];
      L.Block[D] = D == 0 ? C.Block.X : D == 1 ? C.Block.Y : C.Block.Z;
    }
    for (size_t A = 0; A < Args.size(); ++A) // 4-byte ints; others unread
      L.Args.push_back(int64_t(*static_cast<int32_t *>(Args[A])));
    std::vector<cleave::rt::RebaseValue> Vals;
    std::string Why;
    if (!V.Fp->rebase(L, V.Dim, int64_t(First / Slab), Vals, Why)) {
      std::fprintf(stderr, "%s: rebase refused: %s\n", C.Kernel.c_str(),
                   Why.c_str());
      std::exit(1);
    }
    std::vector<uint64_t> Extra(Vals.size());
    std::vector<void *> Own = Args; // the extra parameters come first
    Args.clear();
    for (size_t I = 0; I < Vals.size(); ++I) {
      if (Vals[I].IsPointer) {
        Extra[I] = *static_cast<uint64_t *>(Own[Vals[I].ArgNo]) +
                   uint64_t(Vals[I].Value);
      } else {
        int32_t V32 = int32_t(Vals[I].Value);
        if (Vals[I].Bits == 32)
          std::memcpy(&Extra[I], &V32, 4);
        else
          std::memcpy(&Extra[I], &Vals[I].Value, 8);
      }
      Args.push_back(&Extra[I]);
    }
    Args.insert(Args.end(), Own.begin(), Own.end());
    uint32_t LG[3] = {G[0], G[1], G[2]};
    LG[V.Dim] = uint32_t(Count / Slab);
    launchKernel(V.Fn, LG[0], LG[1], LG[2], C.Block.X, C.Block.Y,
                      C.Block.Z, C.Shared, S, Args.data());
    return 1;
  }
  if (V.Kind == Conv::Box) {
    std::vector<Box> Boxes = toBoxes(First, Count, C.Grid);
    for (const Box &B : Boxes) {
      uint32_t Vals[6] = {B.X, B.Y, B.Z, G[0], G[1], G[2]};
      std::vector<void *> A = Args;
      for (uint32_t &X : Vals)
        A.push_back(&X);
      launchKernel(V.Fn, B.NX, B.NY, B.NZ, C.Block.X, C.Block.Y,
                        C.Block.Z, C.Shared, S, A.data());
    }
    return int(Boxes.size());
  }
  if (V.Kind == Conv::Rows) {
    uint32_t FirstRow = uint32_t(First / G[0]);
    uint32_t LastRow = uint32_t((First + Count - 1) / G[0]);
    uint32_t Vals[6] = {uint32_t(First), uint32_t(Count), FirstRow,
                        G[0], G[1], G[2]};
    for (uint32_t &X : Vals)
      Args.push_back(&X);
    launchKernel(V.Fn, G[0], LastRow - FirstRow + 1, 1, C.Block.X,
                      C.Block.Y, C.Block.Z, C.Shared, S, Args.data());
    return 1;
  }
  uint32_t Vals[NumPartitionParams];
  uint64_t F = First;
  if (V.Kind == Conv::Partition) {
    cleave::rt::computePartitionParams(First, C.Grid.X, C.Grid.Y, C.Grid.Z,
                                       Vals);
    for (unsigned I = 0; I < NumPartitionParams; ++I)
      Args.push_back(&Vals[I]);
  } else {
    Args.push_back(&F);
    for (uint32_t &X : G)
      Args.push_back(&X);
  }
  launchKernel(V.Fn, unsigned(Count), 1, 1, C.Block.X, C.Block.Y,
                    C.Block.Z, C.Shared, S, Args.data());
  return 1;
}

// The three uneven ranges of a grid of Total blocks (non-zero first blocks,
// cuts inside rows), in the order they are launched.
std::vector<std::pair<uint64_t, uint64_t>> unevenRanges(uint64_t Total) {
  uint64_t Cut1 = Total / 3 + 7, Cut2 = Total - Total / 5 - 3;
  return {{Cut2, Total - Cut2}, {0, Cut1}, {Cut1, Cut2 - Cut1}};
}

// One timed (or checked) unit of V: the whole grid, or the uneven ranges.
int runUnit(const Variant &V, Case &C, int Set, CUstream S) {
  uint64_t Total = uint64_t(C.Grid.X) * C.Grid.Y * C.Grid.Z;
  if (!V.Split)
    return launch(V, C, Set, 0, Total, S);
  int N = 0;
  if (V.Kind == Conv::Rebased) {
    // Three uneven slabs (a slab: every block of the lower dimensions).
    uint64_t Slab = slabBlocks(C.Grid, V.Dim), Slabs = Total / Slab;
    for (auto [F, Cnt] : unevenRanges(Slabs))
      N += launch(V, C, Set, F * Slab, Cnt * Slab, S);
    return N;
  }
  for (auto [F, Cnt] : unevenRanges(Total))
    N += launch(V, C, Set, F, Cnt, S);
  return N;
}

bool fileExists(const std::string &Path) {
  FILE *F = std::fopen(Path.c_str(), "rb");
  if (F)
    std::fclose(F);
  return F != nullptr;
}

// Loads DIR/K.cubin when it exists (ptxas run where the PTX was made: the
// SASS that is timed is the SASS that was disassembled), else DIR/K.ptx
// through the driver's JIT.
CUmodule loadModule(const std::string &Stem, std::string &Image) {
  std::string Path = Stem + ".cubin";
  Image = "cubin";
  if (!fileExists(Path)) {
    Path = Stem + ".ptx";
    Image = "ptx";
  }
  std::string Data = readFile(Path);
  CUmodule Mod;
  char Log[8192] = {};
  CUjit_option Opts[] = {CU_JIT_ERROR_LOG_BUFFER,
                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *OptVals[] = {Log, reinterpret_cast<void *>(sizeof Log)};
  if (cuModuleLoadDataEx(&Mod, Data.c_str(), 2, Opts, OptVals) !=
      CUDA_SUCCESS) {
    std::fprintf(stderr, "%s: module load failed: %s\n", Path.c_str(), Log);
    std::exit(1);
  }
  return Mod;
}

std::vector<float> download(const Case &C) {
  std::vector<float> H(C.OutputBytes / 4);
  CK(cuCtxSynchronize());
  CK(cuMemcpyDtoH(H.data(), C.Output, C.OutputBytes));
  return H;
}

// How far Got is from Want: elements that differ, the largest absolute
// difference and the largest distance in units in the last place.
struct Diff {
  size_t Count = 0;
  double MaxAbs = 0;
  uint64_t MaxUlp = 0;
};

Diff compare(const std::vector<float> &Got, const std::vector<float> &Want) {
  Diff D;
  for (size_t I = 0; I < Got.size(); ++I) {
    int32_t A, B;
    std::memcpy(&A, &Got[I], 4);
    std::memcpy(&B, &Want[I], 4);
    if (A == B)
      continue;
    ++D.Count;
    D.MaxAbs = std::max(D.MaxAbs, std::fabs(double(Got[I]) - Want[I]));
    // Ordered integer images of the floats: ulp distance across zero too.
    int64_t OA = A < 0 ? int64_t(INT32_MIN) - A : A;
    int64_t OB = B < 0 ? int64_t(INT32_MIN) - B : B;
    D.MaxUlp = std::max<uint64_t>(D.MaxUlp, uint64_t(std::llabs(OA - OB)));
  }
  return D;
}

} // namespace

int main(int Argc, char **Argv) {
  if (Argc < 3) {
    std::fprintf(stderr, "usage: %s PTX_DIR OUT.jsonl [REPS]\n", Argv[0]);
    return 2;
  }
  std::string PtxDir = Argv[1];
  FILE *Out = std::fopen(Argv[2], "w");
  if (!Out) {
    std::fprintf(stderr, "cannot write %s\n", Argv[2]);
    return 1;
  }
  int Reps = Argc > 3 ? std::atoi(Argv[3]) : 30;
  const char *Commit = std::getenv("CLEAVE_COMMIT");
  const char *Tree = std::getenv("CLEAVE_TREE");
  const char *Date = std::getenv("CLEAVE_DATE");
  const char *Only = std::getenv("KERNELS"); // comma-separated, optional

  CK(cuInit(0));
  CUdevice Dev;
  CK(cuDeviceGet(&Dev, 0));
  char DevName[256];
  CK(cuDeviceGetName(DevName, sizeof DevName, Dev));
  int DriverVersion = 0, L2 = 0;
  CK(cuDriverGetVersion(&DriverVersion));
  CK(cuDeviceGetAttribute(&L2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, Dev));
  CUcontext Ctx;
  CK(cuDevicePrimaryCtxRetain(&Ctx, Dev));
  CK(cuCtxSetCurrent(Ctx));
  CUstream Stream;
  CK(cuStreamCreate(&Stream, CU_STREAM_NON_BLOCKING));
  CUevent Ev[2];
  CK(cuEventCreate(&Ev[0], CU_EVENT_DEFAULT));
  CK(cuEventCreate(&Ev[1], CU_EVENT_DEFAULT));
  std::printf("device: %s, driver %d, L2 %d bytes, %d reps\n", DevName,
              DriverVersion, L2, Reps);

  std::mt19937 Rng(12345);
  std::vector<Case> Cases = makeCases(Rng);
  CK(cuCtxSynchronize()); // the poison fills, before any launch
  bool AllOk = true;
  std::string Table;
  for (Case &C : Cases) {
    if (Only && !std::strstr((std::string(",") + Only + ",").c_str(),
                             ("," + C.Kernel + ",").c_str()))
      continue;
    // Variants: ptx/K.{cubin,ptx} holds the original and __cleave_pr_, and
    // the hand-made __cleave_box_, __cleave_rows_ and (1-D kernels)
    // __cleave_nd_ entries (make_variants.py); ptx/<alt>/K other builds:
    // nvcc/ (nvcc -O3 -arch=sm_90 of the same source), udiv/, fast/.
    std::vector<CUmodule> Mods;
    std::vector<Variant> Vs;
    int CurBase = 0;
    auto Add = [&](const std::string &Stem, const std::string &Fn,
                   const std::string &Label, Conv Kind, bool Split = false,
                   bool Foreign = false) {
      if (!fileExists(Stem + ".cubin") && !fileExists(Stem + ".ptx"))
        return;
      std::string Image;
      Mods.push_back(loadModule(Stem, Image));
      Variant V{Label, nullptr, Kind, Image, Split, Foreign};
      if (cuModuleGetFunction(&V.Fn, Mods.back(), Fn.c_str()) != CUDA_SUCCESS)
        return;
      CK(cuFuncGetAttribute(&V.Regs, CU_FUNC_ATTRIBUTE_NUM_REGS, V.Fn));
      V.Base = CurBase;
      Vs.push_back(V);
    };
    bool WithSplit = std::getenv("SPLIT") && std::atoi(std::getenv("SPLIT"));
    // One Cleave build: ptx/K (Suffix "") or ptx/<name>/K (Suffix "@name").
    auto AddBuild = [&](const std::string &Stem, const std::string &Suffix) {
      size_t Before = Vs.size();
      Add(Stem, C.Mangled, "original" + Suffix, Conv::Original);
      if (Vs.size() == Before)
        return;
      CurBase = int(Before);
      Vs.back().Base = CurBase;
      // The original again, timed as a variant: the noise floor of the
      // comparison (identical code, so any difference is measurement).
      Add(Stem, C.Mangled, "original_control" + Suffix, Conv::Original);
      std::string Pr = "__cleave_pr_" + C.Mangled;
      Add(Stem, Pr, "partition" + Suffix, Conv::Partition);
      Add(Stem, "__cleave_box_" + C.Mangled, "box" + Suffix, Conv::Box);
      Add(Stem, "__cleave_boxr_" + C.Mangled, "boxr" + Suffix, Conv::Box);
      Add(Stem, "__cleave_rows_" + C.Mangled, "rows" + Suffix, Conv::Rows);
      if (WithSplit) {
        Add(Stem, Pr, "partition_split3" + Suffix, Conv::Partition, true);
        Add(Stem, "__cleave_box_" + C.Mangled, "box_split3" + Suffix,
            Conv::Box, true);
        Add(Stem, "__cleave_rows_" + C.Mangled, "rows_split3" + Suffix,
            Conv::Rows, true);
      }
      Add(Stem, "__cleave_nd_" + C.Mangled, "nodecode_control" + Suffix,
          Conv::Partition);
      // The rebased variant, described by the bundle of the same build.
      cleave::rt::Bundle B;
      if (!fileExists(Stem + ".clvb") ||
          !cleave::rt::Bundle::load((Stem + ".clvb").c_str(), B))
        return;
      const cleave::rt::BundleKernel *BK = B.findKernel(C.Mangled);
      auto Fp = std::make_shared<cleave::rt::FootprintProgram>();
      if (!BK || !cleave::rt::FootprintProgram::parse(BK->Footprints, *Fp))
        return;
      unsigned Dim = slabDim(C.Grid);
      const cleave::rt::RebasedVariant *RV = Fp->rebasedVariant(Dim);
      if (!RV)
        return;
      for (bool Sp : {false, true}) {
        if (Sp && !WithSplit)
          continue;
        size_t N = Vs.size();
        Add(Stem, RV->Entry, (Sp ? "rebased_split3" : "rebased") + Suffix,
            Conv::Rebased, Sp);
        if (Vs.size() > N) {
          Vs.back().Fp = Fp;
          Vs.back().Dim = Dim;
        }
      }
    };
    std::string Main = PtxDir + "/" + C.Kernel;
    AddBuild(Main, "");
    Add(PtxDir + "/fast/" + C.Kernel, "__cleave_pr_" + C.Mangled,
        "partition_fastpaths", Conv::Partition);
    Add(PtxDir + "/udiv/" + C.Kernel, "__cleave_pr_" + C.Mangled,
        "partition_udiv", Conv::PartitionUdiv);
    // Other Cleave builds named in BUILDS (subdirectories of PTX_DIR).
    if (const char *Builds = std::getenv("BUILDS")) {
      std::string B;
      for (const char *P = Builds;; ++P) {
        if (*P == ' ' || *P == ',' || *P == 0) {
          if (!B.empty())
            AddBuild(PtxDir + "/" + B + "/" + C.Kernel, "@" + B);
          B.clear();
          if (!*P)
            break;
        } else {
          B += *P;
        }
      }
    }
    CurBase = 0;
    Add(PtxDir + "/nvcc/" + C.Kernel, C.Mangled, "nvcc", Conv::Original,
        false, true);
    int NV = int(Vs.size());
    if (NV == 0 || Vs[0].Label != "original") {
      std::fprintf(stderr, "%s: no original kernel in %s\n", C.Kernel.c_str(),
                   Main.c_str());
      return 1;
    }
    auto Reset = [&] {
      CK(cuMemsetD32Async(C.Output,
                          C.Kernel == "stencil3d" ? 0x3F800000u : 0x7FC00001u,
                          C.OutputBytes / 4, Stream));
    };

    // Correctness: the original against the reference, then every variant:
    // Cleave's as three uneven ranges against the original, bit for bit;
    // another compiler's against the reference (the kernel's tolerance),
    // with its distance from Cleave's output recorded.
    runUnit(Vs[0], C, 0, Stream);
    CK(cuStreamSynchronize(Stream));
    std::vector<std::vector<float>> WantOf(NV);
    WantOf[0] = download(C);
    const std::vector<float> &Want = WantOf[0];
    bool OrigOk = C.Check(Want);
    std::vector<bool> Ok(NV, OrigOk);
    std::vector<Diff> Diffs(NV);
    for (int V = 1; V < NV; ++V) {
      Reset();
      Variant Probe = Vs[V];
      Probe.Split = Probe.Kind != Conv::Original &&
                    Probe.Label.rfind("nodecode_control", 0) != 0;
      Vs[V].Launches = runUnit(Vs[V], C, 0, Stream);
      if (Probe.Split != Vs[V].Split) {
        CK(cuStreamSynchronize(Stream));
        Reset();
        runUnit(Probe, C, 0, Stream);
      }
      CK(cuStreamSynchronize(Stream));
      std::vector<float> Got = download(C);
      if (Vs[V].Foreign || Vs[V].Base == V) {
        // Another compiler's build, or another Cleave build's original:
        // against the reference; its distance from Cleave's (main build)
        // output is recorded.
        Diffs[V] = compare(Got, Want);
        if (!C.Check(Got)) {
          std::fprintf(stderr, "%s: %s's output fails the reference check\n",
                       C.Kernel.c_str(), Vs[V].Label.c_str());
          Ok[V] = false;
        } else {
          Ok[V] = true;
        }
        WantOf[V] = std::move(Got);
        continue;
      }
      // A variant: bit for bit against its own build's original.
      Diffs[V] = compare(Got, WantOf[Vs[V].Base]);
      Ok[V] = Ok[Vs[V].Base];
      if (Diffs[V].Count) {
        std::fprintf(stderr, "%s: %s's output differs (%zu elements)\n",
                     C.Kernel.c_str(), Vs[V].Label.c_str(), Diffs[V].Count);
        Ok[V] = false;
      }
    }
    for (bool B : Ok)
      AllOk = AllOk && B;

    // Timing: warm-up, then rounds of one unit of each variant, the order
    // rotated every round.
    for (int W = 0; W < 5; ++W)
      for (int V = 0; V < NV; ++V)
        runUnit(Vs[V], C, W % C.Sets, Stream);
    CK(cuStreamSynchronize(Stream));
    std::vector<std::vector<double>> T(NV);
    for (int Rep = 0; Rep < Reps; ++Rep)
      for (int V = 0; V < NV; ++V) {
        int Set = (Rep * NV + V) % C.Sets;
        int Which = (V + Rep) % NV;
        std::vector<RecordedLaunch> Unit;
        Deferred = &Unit;
        runUnit(Vs[Which], C, Set, Stream);
        Deferred = nullptr;
        CK(cuEventRecord(Ev[0], Stream));
        issue(Unit, Stream);
        CK(cuEventRecord(Ev[1], Stream));
        CK(cuEventSynchronize(Ev[1]));
        float Ms = 0;
        CK(cuEventElapsedTime(&Ms, Ev[0], Ev[1]));
        T[Which].push_back(Ms);
      }
    std::vector<double> Med(NV);
    std::string Line = C.Kernel;
    Line.resize(13, ' ');
    char Buf[160];
    for (int V = 0; V < NV; ++V) {
      Med[V] = median(T[V]);
      double Lo = *std::min_element(T[V].begin(), T[V].end());
      double Hi = *std::max_element(T[V].begin(), T[V].end());
      const char *Bench =
          Vs[V].Foreign ? "nvcc_compare" : "partition_overhead";
      std::fprintf(
          Out,
          "{\"bench\": \"%s\", \"commit\": \"%s\", \"tree\": "
          "\"%s\", \"date\": \"%s\", \"device\": \"%s\", \"driver\": %d, "
          "\"kernel\": \"%s\", \"sizes\": %s, \"grid\": [%u, %u, %u], "
          "\"variant\": \"%s\", \"base\": \"%s\", \"image\": \"%s\", "
          "\"launches\": %d, "
          "\"registers\": %d, \"correct\": %s, \"differing_elements\": %zu, "
          "\"max_abs_diff\": %.9g, \"max_ulp_diff\": %llu, "
          "\"unit\": \"ms\", \"reps\": %s, \"median\": %.6f, \"min\": %.6f, "
          "\"max\": %.6f}\n",
          Bench, Commit ? Commit : "unknown", Tree ? Tree : "unknown",
          Date ? Date : "unknown", DevName, DriverVersion, C.Kernel.c_str(),
          C.Sizes.c_str(), C.Grid.X, C.Grid.Y, C.Grid.Z, Vs[V].Label.c_str(),
          Vs[Vs[V].Base].Label.c_str(), Vs[V].Image.c_str(), Vs[V].Launches, Vs[V].Regs,
          Ok[V] ? "true" : "false", Diffs[V].Count, Diffs[V].MaxAbs,
          (unsigned long long)Diffs[V].MaxUlp, jsonList(T[V]).c_str(), Med[V],
          Lo, Hi);
      auto Ratio = [&](const char *Bench, const std::string &Name,
                       double Value, const char *Key) {
        std::fprintf(Out,
                     "{\"bench\": \"%s\", \"commit\": \"%s\", "
                     "\"device\": \"%s\", \"kernel\": \"%s\", \"ratio\": "
                     "\"%s median\", \"value\": %.5f, "
                     "\"%s\": %.2f, \"correct\": %s}\n",
                     Bench, Commit ? Commit : "unknown", DevName,
                     C.Kernel.c_str(), Name.c_str(), Value, Key,
                     (Value - 1) * 100, Ok[V] ? "true" : "false");
      };
      Buf[0] = 0;
      if (V == 0) {
        std::snprintf(Buf, sizeof Buf, " %s %.4f ms (%d regs)", "original",
                      Med[0], Vs[0].Regs);
      } else if (Vs[V].Foreign) {
        // Each Cleave build's original over the other compiler's time:
        // > 1 = Cleave slower.
        for (int O = 0; O < NV; ++O) {
          if (Vs[O].Foreign || Vs[O].Base != O)
            continue;
          double R = Med[O] / Med[V];
          Ratio("nvcc_compare", Vs[O].Label + "/" + Vs[V].Label, R,
                "cleave_slower_percent");
          char B2[96];
          std::snprintf(B2, sizeof B2, " | %s/%s %.4f", Vs[O].Label.c_str(),
                        Vs[V].Label.c_str(), R);
          Line += B2;
        }
        std::snprintf(Buf, sizeof Buf, " (%s %.4f ms, %d)",
                      Vs[V].Label.c_str(), Med[V], Vs[V].Regs);
      } else if (Vs[V].Base == V) {
        double R = Med[V] / Med[0];
        Ratio("partition_overhead", Vs[V].Label + "/original", R,
              "change_percent");
        std::snprintf(Buf, sizeof Buf, " | %s %.4f ms (%+.2f%%, %d)",
                      Vs[V].Label.c_str(), Med[V], (R - 1) * 100, Vs[V].Regs);
      } else {
        double R = Med[V] / Med[Vs[V].Base];
        Ratio("partition_overhead",
              Vs[V].Label + "/" + Vs[Vs[V].Base].Label, R,
              "overhead_percent");
        std::snprintf(Buf, sizeof Buf, " | %s %+.2f%% (%d)",
                      Vs[V].Label.c_str(), (R - 1) * 100, Vs[V].Regs);
      }
      Line += Buf;
    }
    bool KernelOk = true;
    for (bool B : Ok)
      KernelOk = KernelOk && B;
    Line += KernelOk ? "  ok\n" : "  WRONG\n";
    std::fflush(Out);
    Table += Line;
    std::printf("%s", Line.c_str());
    std::fflush(stdout);
    for (CUmodule M : Mods)
      CK(cuModuleUnload(M));
  }
  std::printf("\n%s (median of %d; overhead of each variant against the "
              "original, registers; cleave/nvcc > 1: Cleave slower)\n%s",
              DevName, Reps, Table.c_str());
  std::fclose(Out);
  return AllOk ? 0 : 1;
}
