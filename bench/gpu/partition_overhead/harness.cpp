// Partition-ready overhead on one GPU: each kernel's original against its
// __cleave_pr_ variant launched as one 1-D range covering the whole grid,
// both from the same PTX (`cleave compile --emit=ptx`), in the same process,
// interleaved launch by launch, timed with CUDA events. Optional extra
// variants, when gen_ptx.sh made them: ptx/udiv/ (a build with the previous
// decode and calling convention), ptx/fast/ (an experimental build), and
// __cleave_nd_ (a control: the original's body with the partition
// parameters, launched like the variant).
//
//   harness PTX_DIR OUT.jsonl [REPS]
//
// Writes JSON lines (one per kernel and variant with every repetition, one
// ratio line per kernel) and prints a table. Before timing, every kernel's
// original output is checked against a C++ reference (every element, or a
// sample for matmul), and the variant, run as three uneven ranges of the
// grid (non-zero first blocks on every path of the decode), must reproduce
// the original's output bit for bit.
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

enum class Conv { Original, Partition, PartitionUdiv };

// One function to time: the original, or a partition-ready variant (the
// current calling convention, or the previous one: i64 first, i32 grid).
struct Variant {
  std::string Label;
  CUfunction Fn;
  Conv Kind;
  int Regs = 0;
};

// Launches V for blocks [First, First + Count) of C's grid (the original:
// the whole grid, as launched normally).
void launch(const Variant &V, Case &C, int Set, uint64_t First, uint64_t Count,
            CUstream S) {
  std::vector<void *> Args = C.Args[Set];
  if (V.Kind == Conv::Original) {
    CK(cuLaunchKernel(V.Fn, C.Grid.X, C.Grid.Y, C.Grid.Z, C.Block.X,
                      C.Block.Y, C.Block.Z, C.Shared, S, Args.data(),
                      nullptr));
    return;
  }
  if (!cleave::rt::isValidPartitionLaunch(First, Count, C.Grid.X, C.Grid.Y,
                                          C.Grid.Z)) {
    std::fprintf(stderr, "invalid range\n");
    std::exit(1);
  }
  uint32_t Vals[NumPartitionParams];
  uint64_t F = First;
  uint32_t G[3] = {C.Grid.X, C.Grid.Y, C.Grid.Z};
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
  CK(cuLaunchKernel(V.Fn, unsigned(Count), 1, 1, C.Block.X, C.Block.Y,
                    C.Block.Z, C.Shared, S, Args.data(), nullptr));
}

bool fileExists(const std::string &Path) {
  FILE *F = std::fopen(Path.c_str(), "rb");
  if (F)
    std::fclose(F);
  return F != nullptr;
}

CUmodule loadModule(const std::string &Path) {
  std::string Ptx = readFile(Path);
  CUmodule Mod;
  char Log[8192] = {};
  CUjit_option Opts[] = {CU_JIT_ERROR_LOG_BUFFER,
                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *OptVals[] = {Log, reinterpret_cast<void *>(sizeof Log)};
  if (cuModuleLoadDataEx(&Mod, Ptx.c_str(), 2, Opts, OptVals) !=
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

} // namespace

int main(int Argc, char **Argv) {
  if (Argc < 3) {
    std::fprintf(stderr, "usage: %s PTX_DIR OUT.jsonl [REPS]\n", Argv[0]);
    return 2;
  }
  std::string PtxDir = Argv[1];
  FILE *Out = std::fopen(Argv[2], "w");
  int Reps = Argc > 3 ? std::atoi(Argv[3]) : 30;
  const char *Commit = std::getenv("CLEAVE_COMMIT");
  const char *Tree = std::getenv("CLEAVE_TREE");
  const char *Date = std::getenv("CLEAVE_DATE");

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
    // Variants: ptx/K.ptx holds the original and __cleave_pr_ (and, for
    // 1-D kernels, __cleave_nd_: the original's body with the partition
    // parameters unused, a control); ptx/<alt>/K.ptx other builds.
    std::vector<CUmodule> Mods;
    std::vector<Variant> Vs;
    auto Add = [&](const std::string &Path, const std::string &Fn,
                   const std::string &Label, Conv Kind) {
      if (!fileExists(Path))
        return;
      Mods.push_back(loadModule(Path));
      Variant V{Label, nullptr, Kind};
      if (cuModuleGetFunction(&V.Fn, Mods.back(), Fn.c_str()) != CUDA_SUCCESS)
        return;
      CK(cuFuncGetAttribute(&V.Regs, CU_FUNC_ATTRIBUTE_NUM_REGS, V.Fn));
      Vs.push_back(V);
    };
    std::string Main = PtxDir + "/" + C.Kernel + ".ptx";
    Add(Main, C.Mangled, "original", Conv::Original);
    Add(Main, "__cleave_pr_" + C.Mangled, "partition", Conv::Partition);
    Add(PtxDir + "/fast/" + C.Kernel + ".ptx", "__cleave_pr_" + C.Mangled,
        "partition_fastpaths", Conv::Partition);
    Add(PtxDir + "/udiv/" + C.Kernel + ".ptx", "__cleave_pr_" + C.Mangled,
        "partition_udiv", Conv::PartitionUdiv);
    Add(Main, "__cleave_nd_" + C.Mangled, "nodecode_control", Conv::Partition);
    int NV = int(Vs.size());
    uint64_t Total = uint64_t(C.Grid.X) * C.Grid.Y * C.Grid.Z;
    auto Reset = [&] {
      CK(cuMemsetD32Async(C.Output,
                          C.Kernel == "stencil3d" ? 0x3F800000u : 0x7FC00001u,
                          C.OutputBytes / 4, Stream));
    };

    // Correctness: the original against the reference, then every variant
    // as three uneven ranges against the original, bit for bit.
    launch(Vs[0], C, 0, 0, Total, Stream);
    CK(cuStreamSynchronize(Stream));
    std::vector<float> Want = download(C);
    bool Ok = C.Check(Want);
    uint64_t Cut1 = Total / 3 + 7, Cut2 = Total - Total / 5 - 3;
    for (int V = 1; V < NV; ++V) {
      Reset();
      if (Vs[V].Label == "nodecode_control") {
        launch(Vs[V], C, 0, 0, Total, Stream); // right only for the whole grid
      } else {
        launch(Vs[V], C, 0, Cut2, Total - Cut2, Stream);
        launch(Vs[V], C, 0, 0, Cut1, Stream);
        launch(Vs[V], C, 0, Cut1, Cut2 - Cut1, Stream);
      }
      CK(cuStreamSynchronize(Stream));
      std::vector<float> Got = download(C);
      if (std::memcmp(Got.data(), Want.data(), C.OutputBytes) != 0) {
        std::fprintf(stderr, "%s: %s's output differs\n", C.Kernel.c_str(),
                     Vs[V].Label.c_str());
        Ok = false;
      }
    }
    AllOk = AllOk && Ok;

    // Timing: warm-up, then rounds of one launch of each variant, the order
    // rotated every round; partition variants cover the whole grid (first
    // = 0, count = all blocks).
    for (int W = 0; W < 5; ++W)
      for (int V = 0; V < NV; ++V)
        launch(Vs[V], C, W % C.Sets, 0, Total, Stream);
    CK(cuStreamSynchronize(Stream));
    std::vector<std::vector<double>> T(NV);
    for (int Rep = 0; Rep < Reps; ++Rep)
      for (int V = 0; V < NV; ++V) {
        int Set = (Rep * NV + V) % C.Sets;
        int Which = (V + Rep) % NV;
        CK(cuEventRecord(Ev[0], Stream));
        launch(Vs[Which], C, Set, 0, Total, Stream);
        CK(cuEventRecord(Ev[1], Stream));
        CK(cuEventSynchronize(Ev[1]));
        float Ms = 0;
        CK(cuEventElapsedTime(&Ms, Ev[0], Ev[1]));
        T[Which].push_back(Ms);
      }
    std::vector<double> Med(NV);
    std::string Line = C.Kernel;
    Line.resize(13, ' ');
    char Buf[128];
    for (int V = 0; V < NV; ++V) {
      Med[V] = median(T[V]);
      double Lo = *std::min_element(T[V].begin(), T[V].end());
      double Hi = *std::max_element(T[V].begin(), T[V].end());
      std::fprintf(
          Out,
          "{\"bench\": \"partition_overhead\", \"commit\": \"%s\", \"tree\": "
          "\"%s\", \"date\": \"%s\", \"device\": \"%s\", \"driver\": %d, "
          "\"kernel\": \"%s\", \"sizes\": %s, \"grid\": [%u, %u, %u], "
          "\"variant\": \"%s\", \"registers\": %d, \"correct\": %s, "
          "\"unit\": \"ms\", \"reps\": %s, \"median\": %.6f, \"min\": %.6f, "
          "\"max\": %.6f}\n",
          Commit ? Commit : "unknown", Tree ? Tree : "unknown",
          Date ? Date : "unknown", DevName, DriverVersion, C.Kernel.c_str(),
          C.Sizes.c_str(), C.Grid.X, C.Grid.Y, C.Grid.Z,
          Vs[V].Label.c_str(), Vs[V].Regs, Ok ? "true" : "false",
          jsonList(T[V]).c_str(), Med[V], Lo, Hi);
      if (V == 0) {
        std::snprintf(Buf, sizeof Buf, " %s %.4f ms (%d regs)", "original",
                      Med[0], Vs[0].Regs);
      } else {
        double Ratio = Med[V] / Med[0];
        std::fprintf(Out,
                     "{\"bench\": \"partition_overhead\", \"commit\": \"%s\", "
                     "\"device\": \"%s\", \"kernel\": \"%s\", \"ratio\": "
                     "\"%s/original median\", \"value\": %.5f, "
                     "\"overhead_percent\": %.2f, \"correct\": %s}\n",
                     Commit ? Commit : "unknown", DevName, C.Kernel.c_str(),
                     Vs[V].Label.c_str(), Ratio, (Ratio - 1) * 100,
                     Ok ? "true" : "false");
        std::snprintf(Buf, sizeof Buf, " | %s %+.2f%% (%d)",
                      Vs[V].Label.c_str(), (Ratio - 1) * 100, Vs[V].Regs);
      }
      Line += Buf;
    }
    Line += Ok ? "  ok\n" : "  WRONG\n";
    std::fflush(Out);
    Table += Line;
    std::printf("%s", Line.c_str());
    std::fflush(stdout);
    for (CUmodule M : Mods)
      CK(cuModuleUnload(M));
  }
  std::printf("\n%s (median of %d; overhead of each variant against the "
              "original, registers)\n%s",
              DevName, Reps, Table.c_str());
  std::fclose(Out);
  return AllOk ? 0 : 1;
}
