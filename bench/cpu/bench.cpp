// Cleave CPU variant vs PoCL vs OpenMP: one process per thread count.
//
//   cpu-bench --threads T --cl-dir DIR [--kernels a,b,...] [--meta JSON]
//             [--budget-ms MS] [--min-reps N]
//
// For every kernel: random inputs; a straightforward OpenMP C++ version
// computes the reference once; then each variant (Cleave's CPU variant on
// the CpuExecutor with T workers, PoCL's CPU device running the OpenCL
// version, the OpenMP version with T threads) is run once and its output is
// checked against the reference (a wrong result drops that variant for the
// kernel and writes a "wrong" line); then warm-up, then the timed
// repetitions, interleaved (rep r of every variant before rep r+1) so that
// a change in machine load hits every variant alike. Writes one JSON line
// per (kernel, variant) to stdout; progress goes to stderr.
//
// PoCL's worker count is set by the caller (POCL_MAX_PTHREAD_COUNT=T in the
// environment before the process starts: PoCL 3.1's pthread device reads it
// once); this program checks that the device reports T compute units.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "cleave/rt/CpuExecutor.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#define DECL(K) extern "C" const cleave_cpu_kernel_desc __cleave_cpu_##K##_desc
DECL(vecadd);
DECL(triad);
DECL(blackscholes);
DECL(matmul_naive);
DECL(matmul_tiled);
DECL(transpose);
DECL(reduction);
DECL(jacobi);
DECL(nbody);
DECL(sepia);

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string &Msg) {
  std::fprintf(stderr, "cpu-bench: %s\n", Msg.c_str());
  std::exit(1);
}

#define CLCHECK(E)                                                             \
  do {                                                                         \
    cl_int Err_ = (E);                                                         \
    if (Err_ != CL_SUCCESS)                                                    \
      die(std::string(#E) + " failed: " + std::to_string(Err_));               \
  } while (0)

// 64-byte aligned, page-touched storage.
struct Buffer {
  size_t Bytes = 0;
  void *P = nullptr;
  explicit Buffer(size_t B) : Bytes(B) {
    P = std::aligned_alloc(4096, (B + 4095) / 4096 * 4096);
    std::memset(P, 0, B);
  }
  ~Buffer() { std::free(P); }
  Buffer(const Buffer &) = delete;
  template <class T> T *as() { return static_cast<T *>(P); }
};

enum class ArgKind { In, Out, Int, Float };
struct Arg {
  ArgKind Kind;
  int Buf = -1; // index into inputs (In) or outputs (Out)
  int I = 0;
  float F = 0;
};
enum class Elem { F32, U8 };
struct OutSpec {
  size_t Bytes;
  Elem Type;
  double RelTol, AbsTol; // F32: |got-want| <= AbsTol + RelTol*|want|; U8: AbsTol
};

struct Case {
  std::string Name;
  std::string Sizes; // JSON object
  const cleave_cpu_kernel_desc *Desc;
  std::vector<std::unique_ptr<Buffer>> Inputs;
  std::vector<OutSpec> Outs;
  std::vector<Arg> Args;
  size_t Global[3], Local[3];
  unsigned Dims;
  // The OpenMP version: inputs, outputs.
  std::function<void(std::vector<void *> &, std::vector<void *> &)> Omp;
};

std::mt19937_64 &rng() {
  static std::mt19937_64 R(0xC1EA7E);
  return R;
}
Buffer *randFloats(size_t N, float Lo, float Hi) {
  auto *B = new Buffer(N * 4);
  std::uniform_real_distribution<float> D(Lo, Hi);
  float *P = B->as<float>();
  for (size_t I = 0; I < N; ++I)
    P[I] = D(rng());
  return B;
}
Buffer *randBytes(size_t N) {
  auto *B = new Buffer(N);
  std::uniform_int_distribution<int> D(0, 255);
  auto *P = B->as<unsigned char>();
  for (size_t I = 0; I < N; ++I)
    P[I] = (unsigned char)D(rng());
  return B;
}
Arg in(int B) { return {ArgKind::In, B}; }
Arg out(int B) { return {ArgKind::Out, B}; }
Arg i32(int V) { return {ArgKind::Int, -1, V}; }
Arg f32(float V) { return {ArgKind::Float, -1, 0, V}; }

// ---- the cases (sizes: well past overhead, whole run < 5 min on 2 cores) --

std::vector<Case *> makeCases() {
  std::vector<Case *> Cs;
  auto Add = [&](Case *C) { Cs.push_back(C); };
  {
    int N = 1 << 24;
    auto *C = new Case{"vecadd", "{\"n\":" + std::to_string(N) + "}", &__cleave_cpu_vecadd_desc};
    C->Inputs.emplace_back(randFloats(N, -1, 1));
    C->Inputs.emplace_back(randFloats(N, -1, 1));
    C->Outs = {{size_t(N) * 4, Elem::F32, 0, 0}};
    C->Args = {in(0), in(1), out(0), i32(N)};
    C->Dims = 1; C->Global[0] = N; C->Local[0] = 256;
    C->Omp = [N](auto &I, auto &O) {
      const float *a = (float *)I[0], *b = (float *)I[1];
      float *c = (float *)O[0];
#pragma omp parallel for schedule(static)
      for (int i = 0; i < N; ++i)
        c[i] = a[i] + b[i];
    };
    Add(C);
  }
  {
    int N = 1 << 24;
    float S = 1.75f;
    auto *C = new Case{"triad", "{\"n\":" + std::to_string(N) + "}", &__cleave_cpu_triad_desc};
    C->Inputs.emplace_back(randFloats(N, -1, 1));
    C->Inputs.emplace_back(randFloats(N, -1, 1));
    C->Outs = {{size_t(N) * 4, Elem::F32, 1e-6, 1e-6}};
    C->Args = {out(0), in(0), in(1), f32(S), i32(N)};
    C->Dims = 1; C->Global[0] = N; C->Local[0] = 256;
    C->Omp = [N, S](auto &I, auto &O) {
      const float *b = (float *)I[0], *c = (float *)I[1];
      float *a = (float *)O[0];
#pragma omp parallel for schedule(static)
      for (int i = 0; i < N; ++i)
        a[i] = b[i] + S * c[i];
    };
    Add(C);
  }
  {
    int N = 1 << 21;
    float R = 0.02f, V = 0.30f;
    auto *C = new Case{"blackscholes", "{\"n\":" + std::to_string(N) + "}", &__cleave_cpu_blackscholes_desc};
    C->Inputs.emplace_back(randFloats(N, 5, 30));
    C->Inputs.emplace_back(randFloats(N, 1, 100));
    C->Inputs.emplace_back(randFloats(N, 0.25f, 10));
    C->Outs = {{size_t(N) * 4, Elem::F32, 1e-4, 1e-4},
               {size_t(N) * 4, Elem::F32, 1e-4, 1e-4}};
    C->Args = {out(0), out(1), in(0), in(1), in(2), f32(R), f32(V), i32(N)};
    C->Dims = 1; C->Global[0] = N; C->Local[0] = 256;
    C->Omp = [N, R, V](auto &I, auto &O) {
      const float *price = (float *)I[0], *strike = (float *)I[1],
                  *years = (float *)I[2];
      float *call = (float *)O[0], *put = (float *)O[1];
      auto cnd = [](float d) {
        const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f,
                    A4 = -1.821255978f, A5 = 1.330274429f,
                    RSQRT2PI = 0.39894228040143267794f;
        float K = 1.0f / (1.0f + 0.2316419f * std::fabs(d));
        float c = RSQRT2PI * std::exp(-0.5f * d * d) *
                  (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
        return d > 0 ? 1.0f - c : c;
      };
#pragma omp parallel for schedule(static)
      for (int i = 0; i < N; ++i) {
        float S = price[i], X = strike[i], T = years[i];
        float sqrtT = std::sqrt(T);
        float d1 = (std::log(S / X) + (R + 0.5f * V * V) * T) / (V * sqrtT);
        float d2 = d1 - V * sqrtT;
        float expRT = std::exp(-R * T);
        call[i] = S * cnd(d1) - X * expRT * cnd(d2);
        put[i] = X * expRT * (1.0f - cnd(d2)) - S * (1.0f - cnd(d1));
      }
    };
    Add(C);
  }
  for (bool Tiled : {false, true}) {
    int M = 512, N = 512, K = 512;
    auto *C = new Case{Tiled ? "matmul_tiled" : "matmul_naive",
                       "{\"M\":512,\"N\":512,\"K\":512}",
                       Tiled ? &__cleave_cpu_matmul_tiled_desc
                             : &__cleave_cpu_matmul_naive_desc};
    C->Inputs.emplace_back(randFloats(size_t(M) * K, -1, 1));
    C->Inputs.emplace_back(randFloats(size_t(K) * N, -1, 1));
    C->Outs = {{size_t(M) * N * 4, Elem::F32, 1e-4, 1e-4}};
    C->Args = {in(0), in(1), out(0), i32(M), i32(N), i32(K)};
    C->Dims = 2; C->Global[0] = N; C->Global[1] = M;
    C->Local[0] = 16; C->Local[1] = 16;
    C->Omp = [M, N, K](auto &I, auto &O) {
      const float *A = (float *)I[0], *B = (float *)I[1];
      float *Cm = (float *)O[0];
#pragma omp parallel for schedule(static)
      for (int r = 0; r < M; ++r)
        for (int c = 0; c < N; ++c) {
          float acc = 0.0f;
          for (int k = 0; k < K; ++k)
            acc += A[r * K + k] * B[k * N + c];
          Cm[r * N + c] = acc;
        }
    };
    Add(C);
  }
  {
    int W = 4096, H = 4096;
    auto *C = new Case{"transpose", "{\"width\":4096,\"height\":4096}", &__cleave_cpu_transpose_desc};
    C->Inputs.emplace_back(randFloats(size_t(W) * H, -1, 1));
    C->Outs = {{size_t(W) * H * 4, Elem::F32, 0, 0}};
    C->Args = {out(0), in(0), i32(W), i32(H)};
    C->Dims = 2; C->Global[0] = W; C->Global[1] = H;
    C->Local[0] = 32; C->Local[1] = 32;
    C->Omp = [W, H](auto &I, auto &O) {
      const float *in = (float *)I[0];
      float *o = (float *)O[0];
#pragma omp parallel for schedule(static)
      for (int x = 0; x < W; ++x)
        for (int y = 0; y < H; ++y)
          o[size_t(x) * H + y] = in[size_t(y) * W + x];
    };
    Add(C);
  }
  {
    int N = 1 << 25, RB = 256;
    int Groups = N / (2 * RB);
    auto *C = new Case{"reduction", "{\"n\":" + std::to_string(N) + "}", &__cleave_cpu_reduction_desc};
    C->Inputs.emplace_back(randFloats(N, 0, 1));
    C->Outs = {{size_t(Groups) * 4, Elem::F32, 1e-5, 1e-5}};
    C->Args = {in(0), out(0), i32(N)};
    C->Dims = 1; C->Global[0] = size_t(Groups) * RB; C->Local[0] = RB;
    C->Omp = [Groups, RB](auto &I, auto &O) {
      const float *in = (float *)I[0];
      float *p = (float *)O[0];
#pragma omp parallel for schedule(static)
      for (int g = 0; g < Groups; ++g) {
        float s = 0.0f;
        for (int k = 0; k < 2 * RB; ++k)
          s += in[size_t(g) * 2 * RB + k];
        p[g] = s;
      }
    };
    Add(C);
  }
  {
    int W = 4096, H = 4096;
    auto *C = new Case{"jacobi", "{\"w\":4096,\"h\":4096}", &__cleave_cpu_jacobi_desc};
    C->Inputs.emplace_back(randFloats(size_t(W) * H, -1, 1));
    C->Outs = {{size_t(W) * H * 4, Elem::F32, 1e-6, 1e-6}};
    C->Args = {in(0), out(0), i32(W), i32(H)};
    C->Dims = 2; C->Global[0] = W; C->Global[1] = H;
    C->Local[0] = 32; C->Local[1] = 8;
    C->Omp = [W, H](auto &I, auto &O) {
      const float *in = (float *)I[0];
      float *o = (float *)O[0];
#pragma omp parallel for schedule(static)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          int i = y * W + x;
          if (x == 0 || y == 0 || x == W - 1 || y == H - 1)
            o[i] = in[i];
          else
            o[i] = 0.25f * (in[i - 1] + in[i + 1] + in[i - W] + in[i + W]);
        }
    };
    Add(C);
  }
  {
    int N = 4096;
    float Eps2 = 0.01f;
    auto *C = new Case{"nbody", "{\"n\":" + std::to_string(N) + "}", &__cleave_cpu_nbody_desc};
    for (int K = 0; K < 3; ++K)
      C->Inputs.emplace_back(randFloats(N, -10, 10));
    C->Inputs.emplace_back(randFloats(N, 0.1f, 1));
    for (int K = 0; K < 3; ++K)
      C->Outs.push_back({size_t(N) * 4, Elem::F32, 1e-3, 1e-3});
    C->Args = {in(0), in(1), in(2), in(3), out(0), out(1), out(2), i32(N), f32(Eps2)};
    C->Dims = 1; C->Global[0] = N; C->Local[0] = 128;
    C->Omp = [N, Eps2](auto &I, auto &O) {
      const float *px = (float *)I[0], *py = (float *)I[1],
                  *pz = (float *)I[2], *m = (float *)I[3];
      float *ax = (float *)O[0], *ay = (float *)O[1], *az = (float *)O[2];
#pragma omp parallel for schedule(static)
      for (int i = 0; i < N; ++i) {
        float xi = px[i], yi = py[i], zi = pz[i];
        float sx = 0, sy = 0, sz = 0;
        for (int j = 0; j < N; ++j) {
          float dx = px[j] - xi, dy = py[j] - yi, dz = pz[j] - zi;
          float d2 = dx * dx + dy * dy + dz * dz + Eps2;
          float inv = 1.0f / std::sqrt(d2);
          float s = m[j] * inv * inv * inv;
          sx += dx * s;
          sy += dy * s;
          sz += dz * s;
        }
        ax[i] = sx;
        ay[i] = sy;
        az[i] = sz;
      }
    };
    Add(C);
  }
  {
    int NPix = 4096 * 4096;
    auto *C = new Case{"sepia", "{\"pixels\":16777216,\"format\":\"rgb8\"}", &__cleave_cpu_sepia_desc};
    C->Inputs.emplace_back(randBytes(size_t(NPix) * 3));
    C->Outs = {{size_t(NPix) * 3, Elem::U8, 0, 1}};
    C->Args = {in(0), out(0), i32(NPix)};
    C->Dims = 1; C->Global[0] = NPix; C->Local[0] = 256;
    C->Omp = [NPix](auto &I, auto &O) {
      const unsigned char *in = (unsigned char *)I[0];
      unsigned char *o = (unsigned char *)O[0];
#pragma omp parallel for schedule(static)
      for (int i = 0; i < NPix; ++i) {
        float r = in[3 * i], g = in[3 * i + 1], b = in[3 * i + 2];
        float nr = std::fmin(255.0f, 0.393f * r + 0.769f * g + 0.189f * b);
        float ng = std::fmin(255.0f, 0.349f * r + 0.686f * g + 0.168f * b);
        float nb = std::fmin(255.0f, 0.272f * r + 0.534f * g + 0.131f * b);
        o[3 * i] = (unsigned char)nr;
        o[3 * i + 1] = (unsigned char)ng;
        o[3 * i + 2] = (unsigned char)nb;
      }
    };
    Add(C);
  }
  return Cs;
}

// ---- checking ------------------------------------------------------------

std::string check(const OutSpec &S, const void *Got, const void *Want) {
  size_t Bad = 0, First = 0;
  double GotV = 0, WantV = 0;
  if (S.Type == Elem::F32) {
    auto *G = (const float *)Got, *W = (const float *)Want;
    for (size_t I = 0, E = S.Bytes / 4; I < E; ++I) {
      bool Ok = std::fabs(double(G[I]) - W[I]) <=
                S.AbsTol + S.RelTol * std::fabs(double(W[I]));
      if (!Ok && !Bad++) {
        First = I;
        GotV = G[I];
        WantV = W[I];
      }
    }
  } else {
    auto *G = (const unsigned char *)Got, *W = (const unsigned char *)Want;
    for (size_t I = 0; I < S.Bytes; ++I)
      if (std::abs(int(G[I]) - int(W[I])) > S.AbsTol && !Bad++) {
        First = I;
        GotV = G[I];
        WantV = W[I];
      }
  }
  if (!Bad)
    return "";
  char Msg[200];
  std::snprintf(Msg, sizeof Msg, "%zu wrong elements, first [%zu]: got %.9g want %.9g",
                Bad, First, GotV, WantV);
  return Msg;
}

// ---- OpenCL --------------------------------------------------------------

struct CL {
  cl_platform_id Platform = nullptr;
  cl_device_id Device = nullptr;
  cl_context Ctx = nullptr;
  cl_command_queue Q = nullptr;
  std::string DeviceName, Version;
  cl_uint Units = 0;
};

CL openPocl() {
  CL C;
  cl_uint NP = 0;
  CLCHECK(clGetPlatformIDs(0, nullptr, &NP));
  std::vector<cl_platform_id> Ps(NP);
  CLCHECK(clGetPlatformIDs(NP, Ps.data(), nullptr));
  for (cl_platform_id P : Ps) {
    char Name[256] = {};
    clGetPlatformInfo(P, CL_PLATFORM_NAME, sizeof Name, Name, nullptr);
    if (std::strstr(Name, "Portable Computing Language")) {
      char Ver[256] = {};
      clGetPlatformInfo(P, CL_PLATFORM_VERSION, sizeof Ver, Ver, nullptr);
      C.Platform = P;
      C.Version = Ver;
    }
  }
  if (!C.Platform)
    die("no PoCL platform");
  CLCHECK(clGetDeviceIDs(C.Platform, CL_DEVICE_TYPE_CPU, 1, &C.Device, nullptr));
  char Name[256] = {};
  clGetDeviceInfo(C.Device, CL_DEVICE_NAME, sizeof Name, Name, nullptr);
  C.DeviceName = Name;
  clGetDeviceInfo(C.Device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof C.Units, &C.Units, nullptr);
  cl_int Err;
  C.Ctx = clCreateContext(nullptr, 1, &C.Device, nullptr, nullptr, &Err);
  CLCHECK(Err);
  C.Q = clCreateCommandQueue(C.Ctx, C.Device, 0, &Err);
  CLCHECK(Err);
  return C;
}

std::string readFile(const std::string &Path) {
  std::ifstream F(Path);
  if (!F)
    die("cannot read " + Path);
  std::stringstream S;
  S << F.rdbuf();
  return S.str();
}

std::string jsonEscape(const std::string &S) {
  std::string R;
  for (char C : S) {
    if (C == '"' || C == '\\')
      R += '\\';
    if (C == '\n')
      R += "\\n";
    else
      R += C;
  }
  return R;
}

std::string loadAvg() {
  std::ifstream F("/proc/loadavg");
  double A = 0, B = 0, C = 0;
  F >> A >> B >> C;
  char S[64];
  std::snprintf(S, sizeof S, "[%.2f,%.2f,%.2f]", A, B, C);
  return S;
}

// ---- the variants --------------------------------------------------------

struct Variant {
  std::string Name;
  std::vector<std::unique_ptr<Buffer>> Outs;
  std::function<void()> Run;     // one launch, returns when done
  std::function<void()> Fetch;   // make the outputs visible in Outs
  std::vector<double> Ms;
  std::string Error;
};

} // namespace

int main(int argc, char **argv) {
  unsigned Threads = 1;
  std::string ClDir, Only, Meta;
  double BudgetMs = 1500;
  int MinReps = 10, MaxReps = 50, Warmup = 2;
  for (int I = 1; I < argc; ++I) {
    std::string A = argv[I];
    auto Next = [&] {
      if (I + 1 >= argc)
        die("missing value for " + A);
      return std::string(argv[++I]);
    };
    if (A == "--threads") Threads = std::stoul(Next());
    else if (A == "--cl-dir") ClDir = Next();
    else if (A == "--kernels") Only = "," + Next() + ",";
    else if (A == "--meta") Meta = Next();
    else if (A == "--budget-ms") BudgetMs = std::stod(Next());
    else if (A == "--min-reps") MinReps = std::stoi(Next());
    else if (A == "--max-reps") MaxReps = std::stoi(Next());
    else die("unknown argument " + A);
  }
  if (ClDir.empty())
    die("--cl-dir is required");

  omp_set_num_threads(int(Threads));
  cleave::rt::CpuExecutor Ex(Threads);
  CL Cl = openPocl();
  if (Cl.Units != Threads)
    die("PoCL reports " + std::to_string(Cl.Units) + " compute units, want " +
        std::to_string(Threads) + " (set POCL_MAX_PTHREAD_COUNT)");
  std::fprintf(stderr, "threads %u: cleave executor %u workers, OpenMP %d, %s (%s, %u CUs)\n",
               Threads, Ex.numThreads(), omp_get_max_threads(), Cl.Version.c_str(),
               Cl.DeviceName.c_str(), Cl.Units);

  for (Case *C : makeCases()) {
    if (!Only.empty() && Only.find("," + C->Name + ",") == std::string::npos)
      continue;
    std::string LoadBefore = loadAvg();
    std::vector<void *> InPtrs;
    for (auto &B : C->Inputs)
      InPtrs.push_back(B->P);
    // Reference: the OpenMP version, once.
    std::vector<std::unique_ptr<Buffer>> Ref;
    std::vector<void *> RefPtrs;
    for (const OutSpec &S : C->Outs) {
      Ref.emplace_back(new Buffer(S.Bytes));
      RefPtrs.push_back(Ref.back()->P);
    }
    C->Omp(InPtrs, RefPtrs);

    std::vector<std::unique_ptr<Variant>> Vs;
    auto NewOuts = [&](Variant &V) {
      std::vector<void *> Ps;
      for (const OutSpec &S : C->Outs) {
        V.Outs.emplace_back(new Buffer(S.Bytes));
        std::memset(V.Outs.back()->P, 0xA5, S.Bytes); // not the answer
        Ps.push_back(V.Outs.back()->P);
      }
      return Ps;
    };

    // (a) Cleave's CPU variant on the executor.
    {
      auto V = std::make_unique<Variant>();
      V->Name = "cleave-cpu";
      std::vector<void *> OutPtrs = NewOuts(*V);
      auto Vals = std::make_shared<std::vector<uint64_t>>(C->Args.size());
      auto ArgPtrs = std::make_shared<std::vector<void *>>(C->Args.size());
      for (size_t I = 0; I < C->Args.size(); ++I) {
        const Arg &A = C->Args[I];
        void *Slot = &(*Vals)[I];
        switch (A.Kind) {
        case ArgKind::In: *(void **)Slot = InPtrs[A.Buf]; break;
        case ArgKind::Out: *(void **)Slot = OutPtrs[A.Buf]; break;
        case ArgKind::Int: std::memcpy(Slot, &A.I, 4); break;
        case ArgKind::Float: std::memcpy(Slot, &A.F, 4); break;
        }
        (*ArgPtrs)[I] = Slot;
      }
      cleave_cpu_launch L{};
      for (unsigned D = 0; D < 3; ++D) {
        size_t G = D < C->Dims ? C->Global[D] : 1, Lo = D < C->Dims ? C->Local[D] : 1;
        L.block[D] = unsigned(Lo);
        L.grid[D] = unsigned((G + Lo - 1) / Lo);
      }
      const cleave_cpu_kernel_desc *Desc = C->Desc;
      Variant *VP = V.get();
      V->Run = [&Ex, Desc, ArgPtrs, Vals, L, VP] {
        cleave::rt::Result S = Ex.launch(*Desc, ArgPtrs->data(), L);
        if (!S.ok())
          VP->Error = "launch failed: " + S.message();
      };
      V->Fetch = [] {};
      Vs.push_back(std::move(V));
    }
    // (b) PoCL running the OpenCL version (build excluded from the timing).
    {
      auto V = std::make_unique<Variant>();
      V->Name = "pocl";
      std::vector<void *> OutPtrs = NewOuts(*V);
      std::string Src = readFile(ClDir + "/" + C->Name + ".cl");
      const char *SrcP = Src.c_str();
      cl_int Err;
      cl_program Prog = clCreateProgramWithSource(Cl.Ctx, 1, &SrcP, nullptr, &Err);
      CLCHECK(Err);
      if (clBuildProgram(Prog, 1, &Cl.Device, "-cl-std=CL1.2", nullptr, nullptr) != CL_SUCCESS) {
        char Log[16384] = {};
        clGetProgramBuildInfo(Prog, Cl.Device, CL_PROGRAM_BUILD_LOG, sizeof Log, Log, nullptr);
        die("clBuildProgram " + C->Name + ":\n" + Log);
      }
      cl_kernel K = clCreateKernel(Prog, C->Name.c_str(), &Err);
      CLCHECK(Err);
      std::vector<cl_mem> InMem, OutMem;
      for (auto &B : C->Inputs) {
        InMem.push_back(clCreateBuffer(Cl.Ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                       B->Bytes, B->P, &Err));
        CLCHECK(Err);
      }
      for (size_t I = 0; I < C->Outs.size(); ++I) {
        OutMem.push_back(clCreateBuffer(Cl.Ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                        C->Outs[I].Bytes, OutPtrs[I], &Err));
        CLCHECK(Err);
      }
      for (size_t I = 0; I < C->Args.size(); ++I) {
        const Arg &A = C->Args[I];
        switch (A.Kind) {
        case ArgKind::In: CLCHECK(clSetKernelArg(K, I, sizeof(cl_mem), &InMem[A.Buf])); break;
        case ArgKind::Out: CLCHECK(clSetKernelArg(K, I, sizeof(cl_mem), &OutMem[A.Buf])); break;
        case ArgKind::Int: CLCHECK(clSetKernelArg(K, I, 4, &A.I)); break;
        case ArgKind::Float: CLCHECK(clSetKernelArg(K, I, 4, &A.F)); break;
        }
      }
      CLCHECK(clFinish(Cl.Q));
      size_t G[3], Lo[3];
      for (unsigned D = 0; D < C->Dims; ++D) {
        G[D] = (C->Global[D] + C->Local[D] - 1) / C->Local[D] * C->Local[D];
        Lo[D] = C->Local[D];
      }
      unsigned Dims = C->Dims;
      cl_command_queue Q = Cl.Q;
      V->Run = [Q, K, Dims, G, Lo] {
        CLCHECK(clEnqueueNDRangeKernel(Q, K, Dims, nullptr, G, Lo, 0, nullptr, nullptr));
        CLCHECK(clFinish(Q));
      };
      Variant *VP = V.get();
      V->Fetch = [Q, OutMem, VP] {
        for (size_t I = 0; I < OutMem.size(); ++I)
          CLCHECK(clEnqueueReadBuffer(Q, OutMem[I], CL_TRUE, 0, VP->Outs[I]->Bytes,
                                      VP->Outs[I]->P, 0, nullptr, nullptr));
      };
      Vs.push_back(std::move(V));
      // (Program, kernel and buffers are released with the process.)
    }
    // (c) the OpenMP version.
    {
      auto V = std::make_unique<Variant>();
      V->Name = "openmp";
      std::vector<void *> OutPtrs = NewOuts(*V);
      Case *CP = C;
      V->Run = [CP, InPtrs, OutPtrs]() mutable { CP->Omp(InPtrs, OutPtrs); };
      V->Fetch = [] {};
      Vs.push_back(std::move(V));
    }

    // First run of each variant: check it; estimate the repetitions.
    double Slowest = 0;
    for (auto &V : Vs) {
      auto T0 = Clock::now();
      V->Run();
      double Ms = std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
      Slowest = std::max(Slowest, Ms);
      V->Fetch();
      for (size_t I = 0; V->Error.empty() && I < C->Outs.size(); ++I) {
        std::string E = check(C->Outs[I], V->Outs[I]->P, Ref[I]->P);
        if (!E.empty())
          V->Error = "output " + std::to_string(I) + ": " + E;
      }
      if (!V->Error.empty())
        std::fprintf(stderr, "  %s/%s: WRONG: %s\n", C->Name.c_str(), V->Name.c_str(),
                     V->Error.c_str());
    }
    int Reps = std::clamp(int(BudgetMs / std::max(Slowest, 1e-3)), MinReps, MaxReps);
    auto Pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(5)); };
    for (int W = 0; W < Warmup; ++W)
      for (auto &V : Vs)
        if (V->Error.empty()) {
          V->Run();
          Pause();
        }
    for (int R = 0; R < Reps; ++R)
      for (auto &V : Vs) {
        if (!V->Error.empty())
          continue;
        auto T0 = Clock::now();
        V->Run();
        V->Ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - T0).count());
        // Lets spinning OpenMP/TBB/PoCL workers of the previous variant go
        // to sleep before the next one starts.
        Pause();
      }
    // Outputs once more after the timed runs (same inputs, same answer).
    for (auto &V : Vs) {
      if (!V->Error.empty())
        continue;
      V->Fetch();
      for (size_t I = 0; V->Error.empty() && I < C->Outs.size(); ++I) {
        std::string E = check(C->Outs[I], V->Outs[I]->P, Ref[I]->P);
        if (!E.empty())
          V->Error = "after timing, output " + std::to_string(I) + ": " + E;
      }
    }

    std::string LoadAfter = loadAvg();
    std::string Dims = "[" + std::to_string(C->Global[0]);
    std::string LDims = "[" + std::to_string(C->Local[0]);
    for (unsigned D = 1; D < C->Dims; ++D) {
      Dims += "," + std::to_string(C->Global[D]);
      LDims += "," + std::to_string(C->Local[D]);
    }
    Dims += "]";
    LDims += "]";
    for (auto &V : Vs) {
      std::ostringstream J;
      J.precision(6);
      J << "{" << Meta << (Meta.empty() ? "" : ",") << "\"threads\":" << Threads
        << ",\"kernel\":\"" << C->Name << "\",\"sizes\":" << C->Sizes
        << ",\"global\":" << Dims << ",\"local\":" << LDims << ",\"variant\":\""
        << V->Name << "\"";
      if (V->Name == "pocl")
        J << ",\"pocl\":\"" << jsonEscape(Cl.Version) << "\"";
      J << ",\"loadavg_before\":" << LoadBefore << ",\"loadavg_after\":" << LoadAfter;
      if (!V->Error.empty() || V->Ms.empty()) {
        J << ",\"status\":\"wrong\",\"error\":\"" << jsonEscape(V->Error) << "\"}";
      } else {
        std::vector<double> S = V->Ms;
        std::sort(S.begin(), S.end());
        size_t N = S.size();
        double Med = N % 2 ? S[N / 2] : (S[N / 2 - 1] + S[N / 2]) / 2;
        J << ",\"status\":\"ok\",\"reps\":" << N << ",\"warmup\":" << Warmup
          << ",\"times_ms\":[";
        for (size_t I = 0; I < V->Ms.size(); ++I)
          J << (I ? "," : "") << V->Ms[I];
        J << "],\"median_ms\":" << Med << ",\"min_ms\":" << S.front()
          << ",\"max_ms\":" << S.back() << ",\"q1_ms\":" << S[N / 4]
          << ",\"q3_ms\":" << S[(3 * N) / 4] << "}";
      }
      std::printf("%s\n", J.str().c_str());
      std::fflush(stdout);
    }
    {
      std::fprintf(stderr, "  %-13s T=%u reps=%-3d", C->Name.c_str(), Threads, Reps);
      for (auto &V : Vs) {
        if (V->Ms.empty()) {
          std::fprintf(stderr, "  %s WRONG", V->Name.c_str());
          continue;
        }
        std::vector<double> S = V->Ms;
        std::sort(S.begin(), S.end());
        std::fprintf(stderr, "  %s %.3f ms", V->Name.c_str(), S[S.size() / 2]);
      }
      std::fprintf(stderr, "\n");
    }
  }
  return 0;
}
