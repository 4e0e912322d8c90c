//===- engine_harness.cpp - Differential tests of the launch engine -------===//
//
// Part of Cleave's tests. Loads the bundle of Inputs/kernels.cu and the CPU
// variants linked into this program (`cleave compile` of the same file),
// builds the devices of CLEAVE_DEVICES, and launches one case's kernel
// through the Engine with several partitions: random explicit ones, and the
// Even, Proportional and SingleDevice policies. Each launch starts from
// fresh random inputs; the outputs are read back and compared with a plain
// C++ reference. One line per launch on stdout:
//
//   vecadd even: ok; launch vecadd: split over 3 range(s), exact writes, ...
//
// and the exit status is the number of mismatches (capped). The same
// binary runs on the GPU machines (test/gpu/run-engine.sh).
//
//   engine_harness BUNDLE CASE [MODE...]
//   CASE: vecadd keep_positive scale2d histogram affine residency jacobi2d
//         transpose2d
//   MODE: random even proportional single (default: all of them)
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Buffers.h"
#include "cleave/rt/CpuExecutor.h"
#include "cleave/rt/Device.h"
#include "cleave/rt/Engine.h"
#include "cleave/rt/Fault.h"
#include "cleave/rt/Options.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace cleave::rt;

#define CPU_KERNEL(K) extern "C" const cleave_cpu_kernel_desc __cleave_cpu_##K##_desc
CPU_KERNEL(vecadd);
CPU_KERNEL(keep_positive);
CPU_KERNEL(scale2d);
CPU_KERNEL(histogram);
CPU_KERNEL(affine);
CPU_KERNEL(jacobi2d);
CPU_KERNEL(transpose2d);
// The twin of transpose2d with x and y swapped (cleave-swap-grid).
CPU_KERNEL(__cleave_sw_transpose2d);
// Merge variants are weak: a kernel whose merge kernel the CPU lowering
// refused has none, and the engine then merges on a GPU or runs it whole.
#define CPU_MERGE(K)                                                           \
  extern "C" __attribute__((weak)) const cleave_cpu_kernel_desc                \
      __cleave_cpu___cleave_merge_##K##_desc
CPU_MERGE(vecadd);
CPU_MERGE(keep_positive);
CPU_MERGE(scale2d);
CPU_MERGE(affine);
CPU_MERGE(jacobi2d);
CPU_MERGE(transpose2d);
CPU_MERGE(__cleave_sw_transpose2d);
extern "C" char __cleave_cpu_var_coeffs[];

namespace {

std::mt19937_64 Rng(0xE9617E);

int Failures = 0;

void fail(const std::string &Msg) {
  std::printf("FAIL: %s\n", Msg.c_str());
  ++Failures;
}

#define CHECK_OK(Expr)                                                         \
  do {                                                                         \
    Result R_ = (Expr);                                                        \
    if (!R_.ok()) {                                                            \
      std::printf("FAIL: %s: %s\n", #Expr, R_.toString().c_str());            \
      std::exit(100);                                                          \
    }                                                                          \
  } while (0)

struct Env {
  std::unique_ptr<DeviceRegistry> Reg;
  std::unique_ptr<BufferManager> Bufs;
  std::unique_ptr<CpuExecutor> Exec;
  std::unique_ptr<Engine> Eng;
};

Env setUp(const char *BundlePath) {
  Env E;
  // The runtime's options from the environment (CLEAVE_DEVICES,
  // CLEAVE_FAULT, CLEAVE_LOG, CLEAVE_TUNE, ...), handed to the parts as the
  // API layer's runtime hands them.
  const Options &O = processOptions();
  if (!O.Fault.empty())
    CHECK_OK(FaultInjector::global().configure(O.Fault));
  CHECK_OK(DeviceRegistry::create(O.Devices, E.Reg, registryOptions(O)));
  E.Bufs = std::make_unique<BufferManager>(E.Reg->devices());
  E.Bufs->setHostPinning(O.Tune.PinHost);
  E.Bufs->setDirectHostCopies(O.Tune.DirectHostCopies);
  E.Exec = std::make_unique<CpuExecutor>(O.CpuThreads);
  E.Eng = std::make_unique<Engine>(*E.Bufs, *E.Exec,
                                   PartitionPolicy::Proportional, O);
  std::ifstream In(BundlePath, std::ios::binary);
  std::string Bytes((std::istreambuf_iterator<char>(In)),
                    std::istreambuf_iterator<char>());
  if (Bytes.empty()) {
    std::printf("FAIL: cannot read %s\n", BundlePath);
    std::exit(100);
  }
  std::map<std::string, void *> Syms;
#define SYM(K) Syms["__cleave_cpu_" #K "_desc"] = (void *)&__cleave_cpu_##K##_desc
  SYM(vecadd);
  SYM(keep_positive);
  SYM(scale2d);
  SYM(histogram);
  SYM(affine);
  SYM(jacobi2d);
  SYM(transpose2d);
  SYM(__cleave_sw_transpose2d);
#define MERGE_SYM(K)                                                           \
  if (&__cleave_cpu___cleave_merge_##K##_desc)                                 \
  Syms["__cleave_cpu___cleave_merge_" #K "_desc"] =                            \
      (void *)&__cleave_cpu___cleave_merge_##K##_desc
  MERGE_SYM(vecadd);
  MERGE_SYM(keep_positive);
  MERGE_SYM(scale2d);
  MERGE_SYM(affine);
  MERGE_SYM(jacobi2d);
  MERGE_SYM(transpose2d);
  MERGE_SYM(__cleave_sw_transpose2d);
  Syms["__cleave_cpu_var_coeffs"] = (void *)__cleave_cpu_var_coeffs;
  CHECK_OK(E.Eng->addProgram(Bytes.data(), Bytes.size(), std::move(Syms)));
  return E;
}

/// A device buffer holding \p Host's values.
template <class T> T *upload(Env &E, const std::vector<T> &Host) {
  void *P = nullptr;
  CHECK_OK(E.Bufs->allocate(Host.size() * sizeof(T), P));
  CHECK_OK(E.Bufs->memcpy(P, Host.data(), Host.size() * sizeof(T),
                          MemcpyKind::HostToDevice));
  return static_cast<T *>(P);
}
template <class T> std::vector<T> download(Env &E, const T *P, size_t N) {
  std::vector<T> Out(N);
  CHECK_OK(E.Bufs->memcpy(Out.data(), P, N * sizeof(T),
                          MemcpyKind::DeviceToHost));
  return Out;
}

void fillF(std::vector<float> &V) {
  std::uniform_real_distribution<float> D(-10, 10);
  for (float &X : V)
    X = D(Rng);
}

/// A random explicit partition of \p Blocks blocks over the devices that
/// can run \p K: 1 to 2 x devices pieces, each on a random device.
std::vector<PartitionRange> randomPartition(Env &E, const KernelHandle &K,
                                            uint64_t Blocks) {
  std::vector<Location> Devs;
  for (size_t L = 0; L < E.Bufs->numDevices(); ++L) {
    DeviceKind Kind = E.Bufs->device(Location(L)).kind();
    if (Kind == DeviceKind::Cuda || (Kind == DeviceKind::Cpu && K.Cpu))
      Devs.push_back(Location(L));
  }
  uint64_t MaxPieces = std::min<uint64_t>(Blocks, 2 * Devs.size());
  uint64_t Pieces =
      std::uniform_int_distribution<uint64_t>(1, MaxPieces)(Rng);
  std::vector<uint64_t> Cuts = {0, Blocks};
  while (Cuts.size() < Pieces + 1) {
    uint64_t C = std::uniform_int_distribution<uint64_t>(1, Blocks - 1)(Rng);
    if (std::find(Cuts.begin(), Cuts.end(), C) == Cuts.end())
      Cuts.push_back(C);
  }
  std::sort(Cuts.begin(), Cuts.end());
  std::vector<PartitionRange> P;
  for (size_t I = 0; I + 1 < Cuts.size(); ++I)
    P.push_back({Devs[std::uniform_int_distribution<size_t>(
                     0, Devs.size() - 1)(Rng)],
                 Cuts[I], Cuts[I + 1] - Cuts[I]});
  return P;
}

/// Runs \p Launch (which sets up the inputs, launches through the engine
/// and checks the outputs) once per mode.
struct Modes {
  bool Random = true, Even = true, Proportional = true, Single = true;
};

const KernelHandle &kernel(Env &E, const char *Name) {
  const KernelHandle *K = E.Eng->findKernel(Name);
  if (!K) {
    std::printf("FAIL: no kernel %s in the bundle\n", Name);
    std::exit(100);
  }
  return *K;
}

/// Launches through the engine with the mode's partition, prints the plan's
/// first line.
bool launch(Env &E, const std::string &Case, const std::string &Mode,
            KernelLaunchRequest &Req, LaunchPlan &Plan, bool Quiet = false) {
  PartitionPolicy Old = E.Eng->policy();
  if (Mode == "even")
    E.Eng->setPolicy(PartitionPolicy::Even);
  else if (Mode == "proportional")
    E.Eng->setPolicy(PartitionPolicy::Proportional);
  else if (Mode == "single")
    E.Eng->setPolicy(PartitionPolicy::SingleDevice);
  Result R = E.Eng->launch(Req, Plan);
  E.Eng->setPolicy(Old);
  std::string First = Plan.describe();
  First = First.substr(0, First.find('\n'));
  if (!R.ok()) {
    fail(Case + " " + Mode + ": " + R.toString());
    return false;
  }
  if (!Quiet)
    std::printf("%s %s: ", Case.c_str(), Mode.c_str());
  return true;
}

template <class T>
bool compare(const std::string &What, const std::vector<T> &Got,
             const std::vector<T> &Want, double Tol = 0) {
  for (size_t I = 0; I < Want.size(); ++I) {
    double G = double(Got[I]), W = double(Want[I]);
    if (G == W || std::fabs(G - W) <= Tol * std::max(1.0, std::fabs(W)))
      continue;
    std::printf("mismatch\n");
    fail(What + ": element " + std::to_string(I) + " is " +
         std::to_string(G) + ", expected " + std::to_string(W));
    return false;
  }
  return true;
}

void report(const LaunchPlan &Plan) {
  std::string D = Plan.describe();
  std::printf("ok; %s", D.c_str());
}

using CaseFn = std::function<void(Env &, const std::string &Mode,
                                  std::vector<PartitionRange> *Explicit)>;

/// c = a + b over \p N elements.
void vecaddOf(Env &E, const std::string &Mode,
              std::vector<PartitionRange> *Part, int N) {
  const KernelHandle &K = kernel(E, "vecadd");
  unsigned Block = 128, Blocks = (N + Block - 1) / Block;
  std::vector<float> A(N), B(N), C(N, -1.0f), Want(N);
  fillF(A);
  fillF(B);
  for (int I = 0; I < N; ++I)
    Want[I] = A[I] + B[I];
  float *PA = upload(E, A), *PB = upload(E, B), *PC = upload(E, C);
  void *Args[] = {&PA, &PB, &PC, &N};
  KernelLaunchRequest Req;
  Req.Kernel = &K;
  Req.Grid[0] = Blocks;
  Req.Block[0] = Block;
  Req.Args = Args;
  if (Part)
    Req.Partition = randomPartition(E, K, Blocks);
  LaunchPlan Plan;
  if (launch(E, "vecadd", Mode, Req, Plan) &&
      compare("vecadd c", download(E, PC, N), Want))
    report(Plan);
  CHECK_OK(E.Bufs->free(PA));
  CHECK_OK(E.Bufs->free(PB));
  CHECK_OK(E.Bufs->free(PC));
}

void caseVecadd(Env &E, const std::string &Mode,
                std::vector<PartitionRange> *Part) {
  vecaddOf(E, Mode, Part, 100003);
}

/// Inputs of 16 MB: several devices move theirs at once, and the host read
/// gathers from them at once (docs/runtime.md, "Running").
void caseVecaddLarge(Env &E, const std::string &Mode,
                     std::vector<PartitionRange> *Part) {
  vecaddOf(E, Mode, Part, 4000037);
}

void caseKeepPositive(Env &E, const std::string &Mode,
                      std::vector<PartitionRange> *Part) {
  const KernelHandle &K = kernel(E, "keep_positive");
  int N = 70001;
  unsigned Block = 64, Blocks = (N + Block - 1) / Block;
  std::vector<float> In(N), Out(N), Want(N);
  fillF(In);
  fillF(Out); // untouched where In <= 0: must survive the merges
  for (int I = 0; I < N; ++I)
    Want[I] = In[I] > 0 ? 2.0f * In[I] : Out[I];
  float *PI = upload(E, In), *PO = upload(E, Out);
  void *Args[] = {&PI, &PO, &N};
  KernelLaunchRequest Req;
  Req.Kernel = &K;
  Req.Grid[0] = Blocks;
  Req.Block[0] = Block;
  Req.Args = Args;
  if (Part)
    Req.Partition = randomPartition(E, K, Blocks);
  LaunchPlan Plan;
  if (launch(E, "keep_positive", Mode, Req, Plan) &&
      compare("keep_positive out", download(E, PO, N), Want))
    report(Plan);
  CHECK_OK(E.Bufs->free(PI));
  CHECK_OK(E.Bufs->free(PO));
}

void caseScale2d(Env &E, const std::string &Mode,
                 std::vector<PartitionRange> *Part) {
  const KernelHandle &K = kernel(E, "scale2d");
  int W = 333, H = 257;
  std::vector<float> In(size_t(W) * H), Out(In.size(), 0.0f),
      Want(In.size());
  fillF(In);
  for (size_t I = 0; I < In.size(); ++I)
    Want[I] = 2.0f * In[I] + 1.0f;
  float *PI = upload(E, In), *PO = upload(E, Out);
  void *Args[] = {&PI, &PO, &W, &H};
  KernelLaunchRequest Req;
  Req.Kernel = &K;
  Req.Grid[0] = (W + 15) / 16;
  Req.Grid[1] = (H + 7) / 8;
  Req.Block[0] = 16;
  Req.Block[1] = 8;
  Req.Args = Args;
  if (Part)
    Req.Partition = randomPartition(E, K, uint64_t(Req.Grid[0]) * Req.Grid[1]);
  LaunchPlan Plan;
  if (launch(E, "scale2d", Mode, Req, Plan) &&
      compare("scale2d out", download(E, PO, In.size()), Want, 1e-6))
    report(Plan);
  CHECK_OK(E.Bufs->free(PI));
  CHECK_OK(E.Bufs->free(PO));
}

void caseHistogram(Env &E, const std::string &Mode,
                   std::vector<PartitionRange> *Part) {
  const KernelHandle &K = kernel(E, "histogram");
  int N = 50000;
  unsigned Block = 256, Blocks = (N + Block - 1) / Block;
  // The bins start at random counts and the kernel runs twice: a split's
  // partial bins (docs/runtime.md, "Combined outputs") must add to what the
  // buffer held, including the first launch's result.
  std::vector<unsigned> Data(N), Bins(64), Want(64);
  for (unsigned &X : Data)
    X = unsigned(Rng());
  for (int B = 0; B < 64; ++B)
    Want[B] = Bins[B] = unsigned(Rng() % 1000);
  for (unsigned X : Data)
    Want[X % 64] += 2;
  unsigned *PD = upload(E, Data), *PB = upload(E, Bins);
  void *Args[] = {&PD, &PB, &N};
  KernelLaunchRequest Req;
  Req.Kernel = &K;
  Req.Grid[0] = Blocks;
  Req.Block[0] = Block;
  Req.Args = Args;
  if (Part)
    Req.Partition = randomPartition(E, K, Blocks);
  LaunchPlan Plan;
  bool First = launch(E, "histogram", Mode, Req, Plan, /*Quiet=*/true);
  if (Part)
    Req.Partition = randomPartition(E, K, Blocks);
  if (First && launch(E, "histogram", Mode, Req, Plan) &&
      compare("histogram bins", download(E, PB, 64), Want))
    report(Plan);
  CHECK_OK(E.Bufs->free(PD));
  CHECK_OK(E.Bufs->free(PB));
}

void caseAffine(Env &E, const std::string &Mode,
                std::vector<PartitionRange> *Part) {
  const KernelHandle &K = kernel(E, "affine");
  int N = 40000;
  unsigned Block = 128, Blocks = (N + Block - 1) / Block;
  std::uniform_real_distribution<float> D(-4, 4);
  float Coeffs[2] = {D(Rng), D(Rng)};
  CHECK_OK(E.Eng->copyToSymbol("coeffs", 0, Coeffs, sizeof(Coeffs)));
  float Back[2] = {0, 0};
  CHECK_OK(E.Eng->copyFromSymbol("coeffs", 0, Back, sizeof(Back)));
  if (Back[0] != Coeffs[0] || Back[1] != Coeffs[1])
    fail("affine: copyFromSymbol does not return what copyToSymbol wrote");
  std::vector<float> In(N), Out(N, 0.0f), Want(N);
  fillF(In);
  for (int I = 0; I < N; ++I)
    Want[I] = Coeffs[0] * In[I] + Coeffs[1];
  float *PI = upload(E, In), *PO = upload(E, Out);
  void *Args[] = {&PI, &PO, &N};
  KernelLaunchRequest Req;
  Req.Kernel = &K;
  Req.Grid[0] = Blocks;
  Req.Block[0] = Block;
  Req.Args = Args;
  if (Part)
    Req.Partition = randomPartition(E, K, Blocks);
  LaunchPlan Plan;
  // fma contraction may differ between the CPU and the GPU code.
  if (launch(E, "affine", Mode, Req, Plan) &&
      compare("affine out", download(E, PO, N), Want, 1e-5))
    report(Plan);
  CHECK_OK(E.Bufs->free(PI));
  CHECK_OK(E.Bufs->free(PO));
}

// Two launches of vecadd on the same buffers with the same policy: the
// second finds every input where it is needed and moves nothing.
void caseResidency(Env &E, const std::string &Mode,
                   std::vector<PartitionRange> *Part) {
  if (Part)
    return; // a different random partition would move data
  const KernelHandle &K = kernel(E, "vecadd");
  int N = 65536;
  unsigned Block = 256, Blocks = N / Block;
  std::vector<float> A(N), B(N), C(N, 0.0f), Want(N);
  fillF(A);
  fillF(B);
  for (int I = 0; I < N; ++I)
    Want[I] = A[I] + B[I];
  float *PA = upload(E, A), *PB = upload(E, B), *PC = upload(E, C);
  void *Args[] = {&PA, &PB, &PC, &N};
  KernelLaunchRequest Req;
  Req.Kernel = &K;
  Req.Grid[0] = Blocks;
  Req.Block[0] = Block;
  Req.Args = Args;
  LaunchPlan P1, P2;
  if (launch(E, "residency-1", Mode, Req, P1))
    report(P1);
  if (launch(E, "residency-2", Mode, Req, P2)) {
    if (P2.BytesMoved != 0)
      fail("residency: the second launch moved " +
           std::to_string(P2.BytesMoved) + " bytes");
    if (compare("residency c", download(E, PC, N), Want))
      report(P2);
  }
  CHECK_OK(E.Bufs->free(PA));
  CHECK_OK(E.Bufs->free(PB));
  CHECK_OK(E.Bufs->free(PC));
}

/// Five steps of a stencil that writes only the interior, ping-pong between
/// two buffers that stay where the previous step left them; the partition
/// changes every step (random mode). Checked after the last step.
void caseJacobi2d(Env &E, const std::string &Mode,
                  std::vector<PartitionRange> *Part) {
  const KernelHandle &K = kernel(E, "jacobi2d");
  int W = 150, H = 211;
  const int Steps = 5;
  std::vector<float> A(size_t(W) * H);
  fillF(A);
  std::vector<float> B = A, Want = A, Next = A;
  for (int S = 0; S < Steps; ++S) {
    for (int Y = 1; Y < H - 1; ++Y)
      for (int X = 1; X < W - 1; ++X) {
        size_t I = size_t(Y) * W + X;
        Next[I] = 0.5f * Want[I] + 0.125f * (Want[I - 1] + Want[I + 1] +
                                             Want[I - W] + Want[I + W]);
      }
    std::swap(Want, Next);
  }
  float *PA = upload(E, A), *PB = upload(E, B);
  KernelLaunchRequest Req;
  Req.Kernel = &K;
  Req.Grid[0] = (W + 31) / 32;
  Req.Grid[1] = (H + 3) / 4;
  Req.Block[0] = 32;
  Req.Block[1] = 4;
  LaunchPlan Plan;
  bool Ok = true;
  for (int S = 0; S < Steps && Ok; ++S) {
    float *In = S % 2 ? PB : PA, *Out = S % 2 ? PA : PB;
    void *Args[] = {&In, &Out, &W, &H};
    Req.Args = Args;
    if (Part)
      Req.Partition =
          randomPartition(E, K, uint64_t(Req.Grid[0]) * Req.Grid[1]);
    Plan = LaunchPlan();
    Ok = launch(E, "jacobi2d", Mode, Req, Plan);
  }
  // Steps is odd: the result is in B.
  if (Ok && compare("jacobi2d out", download(E, PB, A.size()), Want, 1e-5))
    report(Plan);
  CHECK_OK(E.Bufs->free(PA));
  CHECK_OK(E.Bufs->free(PB));
}

/// A transpose launched three times (the output stays where the previous
/// launch wrote it), then read back.
void caseTranspose2d(Env &E, const std::string &Mode,
                     std::vector<PartitionRange> *Part) {
  const KernelHandle &K = kernel(E, "transpose2d");
  int W = 190, H = 170;
  std::vector<float> In(size_t(W) * H), Out(In.size(), 0.0f),
      Want(In.size());
  fillF(In);
  for (int Y = 0; Y < H; ++Y)
    for (int X = 0; X < W; ++X)
      Want[size_t(X) * H + Y] = In[size_t(Y) * W + X];
  float *PI = upload(E, In), *PO = upload(E, Out);
  void *Args[] = {&PI, &PO, &W, &H};
  KernelLaunchRequest Req;
  Req.Kernel = &K;
  Req.Grid[0] = (W + 15) / 16;
  Req.Grid[1] = (H + 7) / 8;
  Req.Block[0] = 16;
  Req.Block[1] = 8;
  Req.Args = Args;
  LaunchPlan Plan;
  bool Ok = true;
  for (int Rep = 0; Rep < 3 && Ok; ++Rep) {
    if (Part)
      Req.Partition =
          randomPartition(E, K, uint64_t(Req.Grid[0]) * Req.Grid[1]);
    Plan = LaunchPlan();
    Ok = launch(E, "transpose2d", Mode, Req, Plan);
  }
  if (Ok && compare("transpose2d out", download(E, PO, In.size()), Want, 0))
    report(Plan);
  CHECK_OK(E.Bufs->free(PI));
  CHECK_OK(E.Bufs->free(PO));
}

} // namespace

int main(int Argc, char **Argv) {
  if (Argc < 3) {
    std::fprintf(stderr, "usage: %s BUNDLE CASE [MODE...]\n", Argv[0]);
    return 2;
  }
  std::map<std::string, CaseFn> Cases = {
      {"vecadd", caseVecadd},       {"vecadd_large", caseVecaddLarge},
      {"keep_positive", caseKeepPositive},
      {"scale2d", caseScale2d},     {"histogram", caseHistogram},
      {"affine", caseAffine},       {"residency", caseResidency},
      {"jacobi2d", caseJacobi2d},   {"transpose2d", caseTranspose2d}};
  std::vector<std::string> Names;
  if (std::string(Argv[2]) == "all")
    for (auto &[N, F] : Cases)
      Names.push_back(N);
  else
    Names.push_back(Argv[2]);
  std::vector<std::string> ModeList;
  for (int I = 3; I < Argc; ++I)
    ModeList.push_back(Argv[I]);
  if (ModeList.empty())
    ModeList = {"random", "even", "proportional", "single"};
  Env E = setUp(Argv[1]);
  for (const std::string &Name : Names) {
    auto It = Cases.find(Name);
    if (It == Cases.end()) {
      std::fprintf(stderr, "unknown case %s\n", Name.c_str());
      return 2;
    }
    for (const std::string &Mode : ModeList) {
      if (Mode == "random") {
        for (int Rep = 0; Rep < 6; ++Rep) {
          std::vector<PartitionRange> Dummy;
          It->second(E, "random", &Dummy);
        }
      } else {
        It->second(E, Mode, nullptr);
      }
    }
  }
  std::fflush(stdout);
  return std::min(Failures, 99);
}
