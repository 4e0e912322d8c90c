// libdevice's math on the CPU: the functions whose libdevice code holds
// inline PTX (a 32x32+32 multiply-add in the argument reduction of sinf,
// cosf, tanf, sincosf; 128-bit arithmetic in that of sin, cos, tan for huge
// arguments; rcp.approx in powf, erfcf, atan2f, fmodf, tanhf; rsqrt.approx
// in acos, asin, hypot; sub.rn in fdimf and acoshf; a select in cbrt) or
// NVVM conversions (cvt.rni in sinf and rintf, the halves of a double in
// most double functions, add.rz in roundf, log1pf and round), and the
// intrinsics with a rounding mode (__fadd_rz ..., __float2int_rd ...).
// Approximate functions are compared with the host's libm within libdevice's
// documented error (a few ulp); exact operations bit for bit, the directed
// roundings against the host's own arithmetic in that rounding mode. No
// argument is a product plus a term (the device may contract it).
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe | FileCheck %s
// CHECK: float_math: ok
// CHECK: double_math: ok
// CHECK: exact_ops: ok
#define NF 20
#define ND 17
#define NE 9
#define NG 6
#define NI 10
#ifndef CLEAVE_HOST_DRIVER
extern "C" __global__ void float_math(const float *A, const float *B,
                                      float *o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = A[i], b = B[i], s, c;
  float *r = o + NF * i;
  r[0] = sinf(a);
  r[1] = cosf(a);
  r[2] = tanf(a);
  sincosf(a, &s, &c);
  r[3] = s;
  r[4] = c;
  r[5] = powf(fabsf(b) + 0.5f, 2.0f * b);
  r[6] = atan2f(b, a);
  r[7] = erfcf(b);
  r[8] = log1pf(fabsf(b));
  r[9] = expm1f(b);
  r[10] = acoshf(fabsf(b) + 1.0f);
  r[11] = fmodf(b * 1000.0f, 1.5f + fabsf(b));
  r[12] = hypotf(a, b);
  r[13] = roundf(b * 2.0f);
  r[14] = rintf(b * 2.0f);
  r[15] = fdimf(b, 0.5f);
  r[16] = tanhf(b);
  r[17] = asinhf(b);
  r[18] = atanhf(b / 4.1f);
  r[19] = cbrtf(b);
}

extern "C" __global__ void double_math(const double *A, const double *B,
                                       double *o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  double a = A[i], b = B[i];
  double *r = o + ND * i;
  r[0] = sin(a);
  r[1] = cos(a);
  r[2] = tan(a);
  r[3] = pow(fabs(b) + 0.5, 2.0 * b);
  r[4] = acos(b / 4.1);
  r[5] = asin(b / 4.1);
  r[6] = hypot(a, b);
  r[7] = cbrt(b);
  r[8] = round(b * 2.0);
  r[9] = rint(b * 2.0);
  r[10] = atan2(b, a);
  r[11] = exp(b);
  r[12] = log(fabs(b) + 0.1);
  r[13] = erfc(b);
  r[14] = fmod(b * 1000.0, 1.5 + fabs(b));
  r[15] = sinh(b);
  r[16] = (double)llround(b * 1e6);
}

// Exact: directed-rounding arithmetic and conversions.
extern "C" __global__ void exact_ops(const float *X, const float *Y,
                                     const double *XD, const double *YD,
                                     float *e, double *g, long long *n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = X[i], y = Y[i];
  double xd = XD[i], yd = YD[i];
  float *re = e + NE * i;
  double *rg = g + NG * i;
  long long *rn = n + NI * i;
  re[0] = __fadd_rz(x, y);
  re[1] = __fadd_rd(x, y);
  re[2] = __fadd_ru(x, y);
  re[3] = __fsub_rz(x, y);
  re[4] = __fsub_rd(x, y);
  re[5] = __fsub_ru(x, y);
  re[6] = __fmul_rz(x, y);
  re[7] = __fmul_rd(x, y);
  re[8] = __fmul_ru(x, y);
  rg[0] = __dadd_rz(xd, yd);
  rg[1] = __dadd_rd(xd, yd);
  rg[2] = __dadd_ru(xd, yd);
  rg[3] = __dmul_rz(xd, yd);
  rg[4] = __dmul_rd(xd, yd);
  rg[5] = __dmul_ru(xd, yd);
  rn[0] = __float2int_rn(x * 1000.0f);
  rn[1] = __float2int_rz(x * 1000.0f);
  rn[2] = __float2int_rd(x * 1000.0f);
  rn[3] = __float2int_ru(x * 1000.0f);
  rn[4] = __double2int_rn(xd * 1e5);
  rn[5] = __double2ll_rn(xd * 1e12);
  rn[6] = __float2uint_rn(fabsf(x) * 1000.0f);
  rn[7] = __float2int_rn(x * 1e30f); // saturates
  rn[8] = __double2hiint(xd) ^ __double2loint(xd);
  double back = __hiloint2double(__double2hiint(xd), __double2loint(xd));
  rn[9] = back == xd && __int2float_rn((int)rn[1]) == (float)(int)rn[1] &&
          __double2float_rn(xd) == (float)xd;
}
#else
#include "harness.h"
#include <cfenv>
#include <climits>
CLEAVE_CPU_KERNEL(float_math);
CLEAVE_CPU_KERNEL(double_math);
CLEAVE_CPU_KERNEL(exact_ops);

static int64_t ulpDistanceD(double A, double B) {
  if (A == B)
    return 0;
  if (std::isnan(A) || std::isnan(B))
    return std::isnan(A) && std::isnan(B) ? 0 : INT64_MAX;
  auto Key = [](double F) {
    int64_t I;
    std::memcpy(&I, &F, 8);
    return I < 0 ? INT64_MIN - I : I;
  };
  int64_t KA = Key(A), KB = Key(B);
  return KA > KB ? KA - KB : KB - KA;
}

// Arguments of every magnitude: small, around the fast reduction's limit,
// and huge (the slow, multi-word reduction).
template <class T> static std::vector<T> wideRange(unsigned N, int MaxExp) {
  std::vector<T> V(N);
  std::uniform_real_distribution<double> M(-1, 1);
  std::uniform_int_distribution<int> E(-4, MaxExp);
  for (T &X : V)
    X = T(std::ldexp(M(harness::rng()), E(harness::rng())));
  return V;
}

// Every other value a multiple of 1/4: b * 2 is then often a tie.
static void ties(std::vector<float> &B) {
  for (size_t I = 0; I < B.size(); I += 2)
    B[I] = std::round(B[I] * 4) / 4;
}

static const char *FloatNames[NF] = {
    "sinf", "cosf", "tanf", "sincosf.s", "sincosf.c", "powf", "atan2f",
    "erfcf", "log1pf", "expm1f", "acoshf", "fmodf", "hypotf", "roundf",
    "rintf", "fdimf", "tanhf", "asinhf", "atanhf", "cbrtf"};
static const char *DoubleNames[ND] = {
    "sin", "cos", "tan", "pow", "acos", "asin", "hypot", "cbrt", "round",
    "rint", "atan2", "exp", "log", "erfc", "fmod", "sinh", "llround"};

int main() {
  const unsigned Blocks = 8, T = 64, N = Blocks * T;
  auto L = harness::launch3(Blocks, 1, 1, T, 1, 1);
  int Failures = 0;
  {
    std::vector<float> A = wideRange<float>(N, 100), B(N), O(N * NF), W(N * NF);
    harness::fill(B, -4, 4);
    ties(B);
    for (unsigned I = 0; I < N; ++I) {
      float a = A[I], b = B[I];
      float Want[NF] = {std::sin(a), std::cos(a), std::tan(a), std::sin(a),
                        std::cos(a), std::pow(std::fabs(b) + 0.5f, 2.0f * b),
                        std::atan2(b, a), std::erfc(b),
                        std::log1p(std::fabs(b)), std::expm1(b),
                        std::acosh(std::fabs(b) + 1.0f),
                        std::fmod(b * 1000.0f, 1.5f + std::fabs(b)),
                        std::hypot(a, b), std::round(b * 2.0f),
                        std::rint(b * 2.0f), std::fdim(b, 0.5f),
                        std::tanh(b), std::asinh(b), std::atanh(b / 4.1f),
                        std::cbrt(b)};
      std::copy(Want, Want + NF, W.begin() + NF * I);
    }
    const float *PA = A.data(), *PB = B.data();
    float *PO = O.data();
    void *Args[] = {&PA, &PB, &PO};
    Failures += harness::runPlans(
        "float_math", __cleave_cpu_float_math_desc, Args, L,
        [&] { std::fill(O.begin(), O.end(), -1.0f); },
        [&] {
          for (unsigned I = 0; I < N * NF; ++I) {
            // libdevice's bounds: 2 ulp (sin, cos, pow...), 4 (tan, erfc,
            // acosh, atanh); exact for fmod, round, rint, fdim.
            int F = I % NF;
            int64_t Ulps = (F == 11 || F == 13 || F == 14 || F == 15) ? 0 : 4;
            if (harness::ulpDistance(O[I], W[I]) > Ulps &&
                !(std::fabs(O[I] - W[I]) <= 1e-7f)) {
              std::printf("  %s(%.9g, %.9g) = %.9g, want %.9g\n",
                          FloatNames[F], A[I / NF], B[I / NF], O[I], W[I]);
              return false;
            }
          }
          return true;
        });
  }
  {
    std::vector<double> A = wideRange<double>(N, 1000), B(N), O(N * ND),
                        W(N * ND);
    std::vector<float> Bf(N);
    harness::fill(Bf, -4, 4);
    ties(Bf);
    for (unsigned I = 0; I < N; ++I) {
      // Half the values exact quarters (ties for round and rint), the
      // others with bits beyond a float's.
      double a = A[I],
             b = B[I] = Bf[I] + (I % 2 ? 1e-9 * Bf[(I + 1) % N] : 0.0);
      double Want[ND] = {std::sin(a), std::cos(a), std::tan(a),
                         std::pow(std::fabs(b) + 0.5, 2.0 * b),
                         std::acos(b / 4.1), std::asin(b / 4.1),
                         std::hypot(a, b), std::cbrt(b), std::round(b * 2.0),
                         std::rint(b * 2.0), std::atan2(b, a), std::exp(b),
                         std::log(std::fabs(b) + 0.1), std::erfc(b),
                         std::fmod(b * 1000.0, 1.5 + std::fabs(b)), std::sinh(b),
                         double(std::llround(b * 1e6))};
      std::copy(Want, Want + ND, W.begin() + ND * I);
    }
    const double *PA = A.data(), *PB = B.data();
    double *PO = O.data();
    void *Args[] = {&PA, &PB, &PO};
    Failures += harness::runPlans(
        "double_math", __cleave_cpu_double_math_desc, Args, L,
        [&] { std::fill(O.begin(), O.end(), -1.0); },
        [&] {
          for (unsigned I = 0; I < N * ND; ++I) {
            int F = I % ND;
            int64_t Ulps = (F == 8 || F == 9 || F == 14 || F == 16) ? 0 : 4;
            if (ulpDistanceD(O[I], W[I]) > Ulps &&
                !(std::fabs(O[I] - W[I]) <= 1e-15)) {
              std::printf("  %s(%.17g, %.17g) = %.17g, want %.17g\n",
                          DoubleNames[F], A[I / ND], B[I / ND], O[I], W[I]);
              return false;
            }
          }
          return true;
        });
  }
  {
    std::vector<float> X(N), Y(N), E(N * NE), WE(N * NE);
    std::vector<double> XD(N), YD(N), G(N * NG), WG(N * NG);
    std::vector<long long> Nn(N * NI), WN(N * NI);
    harness::fill(X, -4, 4);
    harness::fill(Y, -4e-3f, 4e-3f);
    for (unsigned I = 0; I < N; ++I) {
      XD[I] = X[I] + 1e-9 * Y[I];
      YD[I] = Y[I] * 1e-3 + 1e-12 * X[I];
    }
    const int Modes[3] = {FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};
    for (unsigned I = 0; I < N; ++I) {
      volatile float x = X[I], y = Y[I];
      volatile double xd = XD[I], yd = YD[I];
      for (int M = 0; M < 3; ++M) {
        std::fesetround(Modes[M]);
        volatile float s = x + y, d = x - y, p = x * y;
        volatile double sd = xd + yd, pd = xd * yd;
        WE[NE * I + M] = s;
        WE[NE * I + 3 + M] = d;
        WE[NE * I + 6 + M] = p;
        WG[NG * I + M] = sd;
        WG[NG * I + 3 + M] = pd;
      }
      std::fesetround(FE_TONEAREST);
      long long *w = &WN[NI * I];
      w[0] = (int)std::nearbyint(x * 1000.0f);
      w[1] = (int)std::trunc(x * 1000.0f);
      w[2] = (int)std::floor(x * 1000.0f);
      w[3] = (int)std::ceil(x * 1000.0f);
      w[4] = (int)std::nearbyint(xd * 1e5);
      w[5] = (long long)std::nearbyint(xd * 1e12);
      w[6] = (unsigned)std::nearbyint(std::fabs(x) * 1000.0f);
      w[7] = x > 0 ? INT_MAX : INT_MIN;
      uint64_t Bits;
      double XDv = xd;
      std::memcpy(&Bits, &XDv, 8);
      w[8] = int(uint32_t(Bits >> 32) ^ uint32_t(Bits));
      w[9] = 1;
    }
    const float *PX = X.data(), *PY = Y.data();
    const double *PXD = XD.data(), *PYD = YD.data();
    float *PE = E.data();
    double *PG = G.data();
    long long *PN = Nn.data();
    void *Args[] = {&PX, &PY, &PXD, &PYD, &PE, &PG, &PN};
    Failures += harness::runPlans(
        "exact_ops", __cleave_cpu_exact_ops_desc, Args, L,
        [&] {
          std::fill(E.begin(), E.end(), -1.0f);
          std::fill(G.begin(), G.end(), -1.0);
          std::fill(Nn.begin(), Nn.end(), -1);
        },
        [&] {
          return harness::equal("fadd/fsub/fmul", E, WE) &&
                 harness::equal("dadd/dmul", G, WG) &&
                 harness::equal("conversions", Nn, WN);
        });
  }
  return Failures;
}
#endif
