// __half, __half2, __nv_bfloat16 and __nv_bfloat162 kernels (CUDA 13's
// cuda_fp16.h/cuda_bf16.h, whose device paths are inline PTX on sm_90) run
// on the CPU, compared bit for bit with references on the host: the same
// headers' host paths (C++ without asm) where they exist; for device-only
// functions (__hfma, __half2int_rn, directed int conversions...) the exact
// value rounded to odd at float precision, then the host's conversion from
// float (Boldo-Melquiond: one correct rounding). Inputs: every f16 and bf16
// pattern, pairs of special values (zeros, subnormals, infinities, NaNs,
// neighbours of 1 and of the largest finite), random triples, and floats,
// doubles and integers at and around every rounding tie. The .approx
// functions (hsqrt, hrcp, hexp2, htanh) are checked within one ulp.
//
// RUN: %cleave compile -O3 %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// REQUIRES: cleave-rt-api
// CHECK-NOT: MISMATCH
// CHECK: PASS
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

typedef unsigned short u16;
typedef unsigned int u32;

__host__ __device__ inline __half H(u16 u) {
  __half_raw r;
  r.x = u;
  return __half(r);
}
__host__ __device__ inline u16 U(__half h) { return __half_raw(h).x; }
__host__ __device__ inline __nv_bfloat16 B16(u16 u) {
  __nv_bfloat16_raw r;
  r.x = u;
  return __nv_bfloat16(r);
}
__host__ __device__ inline u16 U(__nv_bfloat16 h) {
  return __nv_bfloat16_raw(h).x;
}
__host__ __device__ inline u32 P(__half2 v) {
  return U(__low2half(v)) | u32(U(__high2half(v))) << 16;
}
__host__ __device__ inline u32 P(__nv_bfloat162 v) {
  return U(__low2bfloat16(v)) | u32(U(__high2bfloat16(v))) << 16;
}
__host__ __device__ inline u32 FB(float f) {
  u32 u;
  memcpy(&u, &f, 4);
  return u;
}

// ---- kernels: one thread per input, outputs at out[k * n + i] -------------

enum { UHalfFloat, UInt_rn, UInt_rz, UInt_rd, UInt_ru, UShort_rn, UUShort_rn,
       UUInt_rn, ULl_rn_lo, ULl_rn_hi, UUll_rz_lo, UNeg, UAbs, UIsNaN, UIsInf,
       URint, UFloor, UCeil, UTrunc, USqrt, URcp, UExp2, UTanh, UCount };

__global__ void unaryHalf(const u16 *in, int n, u32 *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  __half h = H(in[i]);
  long long ll = __half2ll_rn(h);
  u32 r[UCount] = {FB(__half2float(h)), u32(__half2int_rn(h)),
                   u32(__half2int_rz(h)), u32(__half2int_rd(h)),
                   u32(__half2int_ru(h)), u32(int(__half2short_rn(h))),
                   __half2ushort_rn(h), __half2uint_rn(h), u32(ll),
                   u32(ll >> 32), u32(__half2ull_rz(h)), U(__hneg(h)),
                   U(__habs(h)), u32(__hisnan(h)), u32(__hisinf(h)),
                   U(hrint(h)), U(hfloor(h)), U(hceil(h)), U(htrunc(h)),
                   U(hsqrt(h)), U(hrcp(h)), U(hexp2(h)), U(htanh(h))};
  for (int k = 0; k < UCount; ++k)
    out[k * n + i] = r[k];
}

__global__ void unaryBf16(const u16 *in, int n, u32 *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  __nv_bfloat16 h = B16(in[i]);
  long long ll = __bfloat162ll_rn(h);
  u32 r[UCount] = {FB(__bfloat162float(h)), u32(__bfloat162int_rn(h)),
                   u32(__bfloat162int_rz(h)), u32(__bfloat162int_rd(h)),
                   u32(__bfloat162int_ru(h)), u32(int(__bfloat162short_rn(h))),
                   __bfloat162ushort_rn(h), __bfloat162uint_rn(h), u32(ll),
                   u32(ll >> 32), u32(__bfloat162ull_rz(h)), U(__hneg(h)),
                   U(__habs(h)), u32(__hisnan(h)), u32(__hisinf(h)),
                   U(hrint(h)), U(hfloor(h)), U(hceil(h)), U(htrunc(h)),
                   U(hsqrt(h)), U(hrcp(h)), U(hexp2(h)), U(htanh(h))};
  for (int k = 0; k < UCount; ++k)
    out[k * n + i] = r[k];
}

enum { BAdd, BSub, BMul, BFma, BFmaSat, BFmaRelu, BMax, BMin, BMaxNaN,
       BMinNaN, BAddSat, BCmp, BAdd2, BMul2, BFma2, BMax2, BEq2, BLtu2,
       BCount };

// The twelve comparisons as the bits of one word.
template <typename T> __host__ __device__ u32 compareAll(T a, T b) {
  bool c[12] = {__heq(a, b),  __hne(a, b),  __hlt(a, b),  __hle(a, b),
                __hgt(a, b),  __hge(a, b),  __hequ(a, b), __hneu(a, b),
                __hltu(a, b), __hleu(a, b), __hgtu(a, b), __hgeu(a, b)};
  u32 m = 0;
  for (int k = 0; k < 12; ++k)
    m |= u32(c[k]) << k;
  return m;
}

__global__ void binaryHalf(const u16 *a, const u16 *b, const u16 *c, int n,
                           u32 *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  __half x = H(a[i]), y = H(b[i]), z = H(c[i]);
  __half2 xy = __halves2half2(x, y), yz = __halves2half2(y, z),
          zx = __halves2half2(z, x);
  u32 r[BCount] = {U(__hadd(x, y)),      U(__hsub(x, y)),
                   U(__hmul(x, y)),      U(__hfma(x, y, z)),
                   U(__hfma_sat(x, y, z)), U(__hfma_relu(x, y, z)),
                   U(__hmax(x, y)),      U(__hmin(x, y)),
                   U(__hmax_nan(x, y)),  U(__hmin_nan(x, y)),
                   U(__hadd_sat(x, y)),  compareAll(x, y),
                   P(__hadd2(xy, yz)),   P(__hmul2(xy, yz)),
                   P(__hfma2(xy, yz, zx)), P(__hmax2(xy, yz)),
                   P(__heq2(xy, yz)),    P(__hltu2(xy, yz))};
  for (int k = 0; k < BCount; ++k)
    out[k * n + i] = r[k];
}

__global__ void binaryBf16(const u16 *a, const u16 *b, const u16 *c, int n,
                           u32 *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  __nv_bfloat16 x = B16(a[i]), y = B16(b[i]), z = B16(c[i]);
  __nv_bfloat162 xy = __halves2bfloat162(x, y), yz = __halves2bfloat162(y, z),
                 zx = __halves2bfloat162(z, x);
  u32 r[BCount] = {U(__hadd(x, y)),      U(__hsub(x, y)),
                   U(__hmul(x, y)),      U(__hfma(x, y, z)),
                   U(__hfma_sat(x, y, z)), U(__hfma_relu(x, y, z)),
                   U(__hmax(x, y)),      U(__hmin(x, y)),
                   U(__hmax_nan(x, y)),  U(__hmin_nan(x, y)),
                   U(__hadd_sat(x, y)),  compareAll(x, y),
                   P(__hadd2(xy, yz)),   P(__hmul2(xy, yz)),
                   P(__hfma2(xy, yz, zx)), P(__hmax2(xy, yz)),
                   P(__heq2(xy, yz)),    P(__hltu2(xy, yz))};
  for (int k = 0; k < BCount; ++k)
    out[k * n + i] = r[k];
}

enum { CF2H_rn, CF2H_rz, CF2H_rd, CF2H_ru, CF2B_rn, CF2B_rz, CF2B_rd,
       CF2B_ru, CD2H, CD2B, CI2H_rn, CI2H_rz, CI2H_rd, CI2H_ru, CI2B_rn,
       CI2B_rz, CI2B_rd, CI2B_ru, CLl2H_rn, CUll2H_rd, CLl2B_rd, CU2H_rn,
       CS2H_rn, CUs2H_rn, CF2H2, CF2B2, CCount };

__global__ void convert(const float *f, const double *d, const long long *l,
                        int n, u32 *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float x = f[i];
  double y = d[i];
  long long w = l[i];
  int v = int(w);
  u32 r[CCount] = {U(__float2half_rn(x)), U(__float2half_rz(x)),
                   U(__float2half_rd(x)), U(__float2half_ru(x)),
                   U(__float2bfloat16_rn(x)), U(__float2bfloat16_rz(x)),
                   U(__float2bfloat16_rd(x)), U(__float2bfloat16_ru(x)),
                   U(__double2half(y)), U(__double2bfloat16(y)),
                   U(__int2half_rn(v)), U(__int2half_rz(v)),
                   U(__int2half_rd(v)), U(__int2half_ru(v)),
                   U(__int2bfloat16_rn(v)), U(__int2bfloat16_rz(v)),
                   U(__int2bfloat16_rd(v)), U(__int2bfloat16_ru(v)),
                   U(__ll2half_rn(w)), U(__ull2half_rd((unsigned long long)w)),
                   U(__ll2bfloat16_rd(w)), U(__uint2half_rn(u32(v))),
                   U(__short2half_rn(short(v))),
                   U(__ushort2half_rn((unsigned short)v)),
                   P(__floats2half2_rn(x, -x)),
                   P(__floats2bfloat162_rn(x, x * 3.0f))};
  for (int k = 0; k < CCount; ++k)
    out[k * n + i] = r[k];
}

// Native _Float16 and __bf16 (no header asm): the x86 backend's own
// conversions, with __truncsfbf2/__truncdfbf2 from Cleave's runtime.
enum { NHalf, NBf16, NBf16D, NHalfMul, NCount };

__global__ void native(const float *f, const double *d, int n, u32 *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float x = f[i];
  _Float16 h = (_Float16)x, g = (_Float16)f[(i + 1) % n];
  u32 r[NCount] = {FB((float)h), FB((float)(__bf16)x),
                   FB((float)(__bf16)d[i]), FB((float)(_Float16)(h * g))};
  for (int k = 0; k < NCount; ++k)
    out[k * n + i] = r[k];
}

// ---- host references ------------------------------------------------------

// (-1)^neg * M * 2^e rounded to odd at float precision (24 bits, or the
// subnormal quantum 2^-149): rounding that once more gives the exact value's
// correct rounding in every mode, for formats of at most 22 bits.
static float roundToOddFloat(bool neg, unsigned __int128 M, int e) {
  if (M == 0)
    return neg ? -0.0f : 0.0f;
  int msb = 127;
  while (!((M >> msb) & 1))
    --msb;
  int top = msb + e; // the value's exponent
  if (top > 128)
    return neg ? -INFINITY : INFINITY;
  int low = top - 23 > -149 ? top - 23 : -149; // the kept quantum's exponent
  int drop = low - e;
  if (drop > 0) {
    bool sticky = drop > 127 ? true : (M & ((((unsigned __int128)1) << drop) - 1)) != 0;
    M = drop > 127 ? 0 : M >> drop;
    M |= sticky;
    e = low;
  }
  float r = ldexpf(float((unsigned long long)M), e);
  return neg ? -r : r;
}

// v = m * 2^e with m an integer (v finite, a half or a product of halves).
static void decompose(double v, long long &m, int &e) {
  int k;
  double f = frexp(v, &k);
  m = (long long)ldexp(f, 53);
  e = k - 53;
}

// x * y + z (halves as floats), exactly, rounded to odd at float precision.
static float exactFma(float x, float y, float z) {
  if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(z))
    return fmaf(x, y, z); // inf or NaN: nothing to round
  double p = double(x) * double(y); // exact: at most 22 bits
  if (p == 0 && z == 0)
    return (std::signbit(p) && std::signbit(z)) ? -0.0f : 0.0f;
  long long mp = 0, mz = 0;
  int ep = 0, ez = 0;
  if (p != 0)
    decompose(p, mp, ep);
  if (z != 0)
    decompose(z, mz, ez);
  if (p == 0)
    ep = ez;
  if (z == 0)
    ez = ep;
  int hi = ep > ez ? ep : ez, lo = ep < ez ? ep : ez;
  __int128 N;
  int e;
  if (hi - lo <= 64) {
    N = ((__int128)mp << (ep - lo)) + ((__int128)mz << (ez - lo));
    e = lo;
  } else {
    // The term at the lower exponent is below 2^-60 of the other: any
    // stand-in of its sign far below the float quantum rounds the same.
    long long big = ep > ez ? mp : mz, small = ep > ez ? mz : mp;
    N = ((__int128)big << 2) + (small < 0 ? -1 : small > 0 ? 1 : 0);
    e = hi - 2;
  }
  if (N == 0)
    return 0.0f; // exact cancellation gives +0 when rounding to nearest
  return roundToOddFloat(N < 0, N < 0 ? (unsigned __int128)(-N)
                                      : (unsigned __int128)N, e);
}

static u16 refFmaHalf(u16 a, u16 b, u16 c) {
  return U(__float2half_rn(exactFma(__half2float(H(a)), __half2float(H(b)),
                                    __half2float(H(c)))));
}
static u16 refFmaBf16(u16 a, u16 b, u16 c) {
  return U(__float2bfloat16_rn(exactFma(__bfloat162float(B16(a)),
                                        __bfloat162float(B16(b)),
                                        __bfloat162float(B16(c)))));
}
static u16 sat(u16 r, bool bf) {
  u16 inf = bf ? 0x7f80 : 0x7c00, one = bf ? 0x3f80 : 0x3c00;
  if ((r & 0x7fff) > inf || (r & 0x8000))
    return 0;
  return r > one ? one : r;
}
static u16 relu(u16 r, bool bf) {
  u16 inf = bf ? 0x7f80 : 0x7c00;
  if ((r & 0x7fff) > inf)
    return 0x7fff;
  return (r & 0x8000) ? 0 : r;
}

// f rounded to an integer as PTX cvt.r?i does: NaN gives 0, out of range
// saturates.
template <typename T> static T refToInt(float f, int mode) {
  if (std::isnan(f))
    return 0;
  double r = mode == 0   ? nearbyint(double(f))
             : mode == 1 ? trunc(double(f))
             : mode == 2 ? floor(double(f))
                         : ceil(double(f));
  if (r <= double(std::numeric_limits<T>::min()))
    return std::numeric_limits<T>::min();
  if (r >= double(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return T(r);
}

// An integer rounded to odd at float precision (then rounded by the host's
// directed conversions from float).
static float intToOddFloat(long long w, bool isUnsigned) {
  bool neg = !isUnsigned && w < 0;
  unsigned long long m = neg ? 0ull - (unsigned long long)w
                             : (unsigned long long)w;
  return roundToOddFloat(neg, m, 0);
}

// Patterns apart by at most one unit in the last place (same sign, both
// finite or both the same infinity), or both NaN.
static bool withinUlp(u16 a, u16 b, bool bf) {
  u16 inf = bf ? 0x7f80 : 0x7c00;
  bool an = (a & 0x7fff) > inf, bn = (b & 0x7fff) > inf;
  if (an || bn)
    return an && bn;
  auto ord = [](u16 v) { return v & 0x8000 ? -int(v & 0x7fff) : int(v); };
  return abs(ord(a) - ord(b)) <= 1;
}

static int failures = 0;
static void check(const char *op, int n, const u32 *dev, const u32 *ref,
                  const char *what) {
  int bad = 0;
  for (int i = 0; i < n; ++i)
    if (dev[i] != ref[i] && bad++ < 3)
      printf("MISMATCH %s %s #%d: device %08x host %08x\n", what, op, i,
             dev[i], ref[i]);
  failures += bad;
  if (bad)
    printf("MISMATCH %s %s: %d of %d\n", what, op, bad, n);
}

#define CUDA_CHECK(x)                                                          \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      printf("CUDA error %s at %d\n", cudaGetErrorString(e), __LINE__);        \
      return 1;                                                                \
    }                                                                          \
  } while (0)

template <typename T> static T *toDevice(const std::vector<T> &v) {
  T *d = nullptr;
  cudaMalloc(&d, v.size() * sizeof(T));
  cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}
static std::vector<u32> fromDevice(u32 *d, size_t n) {
  std::vector<u32> v(n);
  cudaMemcpy(v.data(), d, n * sizeof(u32), cudaMemcpyDeviceToHost);
  cudaFree(d);
  return v;
}

static const char *UNames[UCount] = {
    "to_float", "int_rn", "int_rz", "int_rd", "int_ru", "short_rn",
    "ushort_rn", "uint_rn", "ll_rn.lo", "ll_rn.hi", "ull_rz", "neg", "abs",
    "isnan", "isinf", "rint", "floor", "ceil", "trunc", "sqrt", "rcp",
    "exp2", "tanh"};

template <bool BF> static int testUnary() {
  const int n = 65536;
  std::vector<u16> in(n);
  for (int i = 0; i < n; ++i)
    in[i] = u16(i);
  u16 *dIn = toDevice(in);
  u32 *dOut;
  CUDA_CHECK(cudaMalloc(&dOut, size_t(n) * UCount * 4));
  if (BF)
    unaryBf16<<<n / 256, 256>>>(dIn, n, dOut);
  else
    unaryHalf<<<n / 256, 256>>>(dIn, n, dOut);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<u32> dev = fromDevice(dOut, size_t(n) * UCount);
  std::vector<u32> ref(size_t(n) * UCount);
  const char *what = BF ? "bf16" : "half";
  for (int i = 0; i < n; ++i) {
    u16 x = in[i];
    float f = BF ? __bfloat162float(B16(x)) : __half2float(H(x));
    auto toBits = [&](float v) {
      return BF ? U(__float2bfloat16_rn(v)) : U(__float2half_rn(v));
    };
    long long ll = refToInt<long long>(f, 0);
    u32 r[UCount] = {
        FB(f), u32(refToInt<int>(f, 0)), u32(refToInt<int>(f, 1)),
        u32(refToInt<int>(f, 2)), u32(refToInt<int>(f, 3)),
        u32(int(refToInt<short>(f, 0))), refToInt<unsigned short>(f, 0),
        refToInt<unsigned>(f, 0), u32(ll), u32(ll >> 32),
        u32(refToInt<unsigned long long>(f, 1)),
        BF ? U(__hneg(B16(x))) : U(__hneg(H(x))),
        BF ? U(__habs(B16(x))) : U(__habs(H(x))),
        u32(BF ? __hisnan(B16(x)) : __hisnan(H(x))),
        u32(BF ? __hisinf(B16(x)) : __hisinf(H(x))), toBits(nearbyintf(f)),
        toBits(floorf(f)), toBits(ceilf(f)), toBits(truncf(f)),
        toBits(sqrtf(f)), toBits(1.0f / f), toBits(exp2f(f)),
        toBits(tanhf(f))};
    for (int k = 0; k < UCount; ++k)
      ref[size_t(k) * n + i] = r[k];
  }
  for (int k = 0; k < USqrt; ++k)
    check(UNames[k], n, &dev[size_t(k) * n], &ref[size_t(k) * n], what);
  // The .approx functions: within one ulp. Float subnormals (bf16 inputs
  // or results below 2^-126) are flushed by their .ftz, as on the GPU.
  for (int k = USqrt; k < UCount; ++k) {
    int bad = 0;
    for (int i = 0; i < n; ++i) {
      u16 d = u16(dev[size_t(k) * n + i]), r = u16(ref[size_t(k) * n + i]);
      float rf = BF ? __bfloat162float(B16(r)) : __half2float(H(r));
      float f = BF ? __bfloat162float(B16(in[i])) : __half2float(H(in[i]));
      bool tiny = (f != 0 && fabsf(f) < 0x1p-126f) ||
                  (rf != 0 && fabsf(rf) < 0x1p-126f);
      if (!tiny && !withinUlp(d, r, BF) && bad++ < 3)
        printf("MISMATCH %s %s(%04x): device %04x host %04x\n", what,
               UNames[k], in[i], d, r);
    }
    failures += bad;
  }
  return 0;
}

static const char *BNames[BCount] = {
    "add", "sub", "mul", "fma", "fma_sat", "fma_relu", "max", "min",
    "max_nan", "min_nan", "add_sat", "compare", "add2", "mul2", "fma2",
    "max2", "eq2", "ltu2"};

static std::vector<u16> specials(bool bf) {
  if (bf)
    return {0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x0080, 0x0081, 0x3f7f,
            0x3f80, 0x3f81, 0xbf80, 0x4000, 0x7f7f, 0xff7f, 0x7f80, 0xff80,
            0x7fc0, 0x7f81, 0xffc0, 0x3eab, 0x4348, 0x0800, 0x3f00, 0xbf00,
            0x3b80, 0x3380, 0x4b00, 0x7f00, 0x00ff, 0x8040};
  return {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x0401, 0x3bff,
          0x3c00, 0x3c01, 0xbc00, 0x4000, 0x7bff, 0xfbff, 0x7c00, 0xfc00,
          0x7e00, 0x7c01, 0xfe00, 0x3555, 0x5640, 0x1000, 0x3800, 0xb800,
          0x1400, 0x0c00, 0x6400, 0x7800, 0x0200, 0x8200};
}

template <bool BF> static int testBinary() {
  std::vector<u16> s = specials(BF), a, b, c;
  for (u16 x : s)
    for (u16 y : s)
      for (u16 z : s)
        a.push_back(x), b.push_back(y), c.push_back(z);
  std::mt19937 rng(BF ? 7 : 3);
  int mbits = BF ? 7 : 10, ebias = BF ? 127 : 15;
  auto near = [&](u16 x, int spread) {
    int e = (x >> mbits) & (BF ? 0xff : 0x1f);
    int ne = e + int(rng() % (2 * spread + 1)) - spread;
    int emax = BF ? 0xfe : 0x1e;
    ne = ne < 0 ? 0 : ne > emax ? emax : ne;
    return u16((rng() & 0x8000) | (ne << mbits) | (rng() & ((1 << mbits) - 1)));
  };
  for (int i = 0; i < 100000; ++i) {
    a.push_back(u16(rng()));
    b.push_back(u16(rng()));
    c.push_back(u16(rng()));
  }
  // Operands of nearby exponents: sums and fmas land on rounding ties.
  for (int i = 0; i < 100000; ++i) {
    u16 x = near(u16(((ebias + int(rng() % 9) - 4) << mbits) | (rng() & 0x83ff)), 0);
    u16 y = near(x, 3);
    a.push_back(x);
    b.push_back(y);
    float p = BF ? __bfloat162float(B16(x)) * __bfloat162float(B16(y))
                 : __half2float(H(x)) * __half2float(H(y));
    u16 pb = BF ? U(__float2bfloat16_rz(p)) : U(__float2half_rz(p));
    c.push_back(near(pb, 12));
  }
  int n = int(a.size());
  u16 *dA = toDevice(a), *dB = toDevice(b), *dC = toDevice(c);
  u32 *dOut;
  CUDA_CHECK(cudaMalloc(&dOut, size_t(n) * BCount * 4));
  if (BF)
    binaryBf16<<<(n + 255) / 256, 256>>>(dA, dB, dC, n, dOut);
  else
    binaryHalf<<<(n + 255) / 256, 256>>>(dA, dB, dC, n, dOut);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<u32> dev = fromDevice(dOut, size_t(n) * BCount);
  std::vector<u32> ref(size_t(n) * BCount);
  for (int i = 0; i < n; ++i) {
    u16 x = a[i], y = b[i], z = c[i];
    u32 r[BCount];
    auto fma = BF ? refFmaBf16 : refFmaHalf;
    if (BF) {
      __nv_bfloat16 X = B16(x), Y = B16(y);
      __nv_bfloat162 xy = __halves2bfloat162(X, Y),
                     yz = __halves2bfloat162(Y, B16(z));
      r[BAdd] = U(__hadd(X, Y)), r[BSub] = U(__hsub(X, Y));
      r[BMul] = U(__hmul(X, Y)), r[BMax] = U(__hmax(X, Y));
      // cuda_bf16's host __hmax_nan/__hmin_nan (unlike its __hmax and
      // cuda_fp16's) do not order -0 below +0; max.NaN does, so the
      // reference is __hmax/__hmin of non-NaN operands, as cuda_fp16's.
      bool nan = __hisnan(X) || __hisnan(Y);
      r[BMin] = U(__hmin(X, Y));
      r[BMaxNaN] = nan ? 0x7fff : U(__hmax(X, Y));
      r[BMinNaN] = nan ? 0x7fff : U(__hmin(X, Y));
      r[BAddSat] = U(__hadd_sat(X, Y));
      r[BCmp] = compareAll(X, Y);
      r[BAdd2] = P(__hadd2(xy, yz)), r[BMul2] = P(__hmul2(xy, yz));
      r[BMax2] = P(__hmax2(xy, yz)), r[BEq2] = P(__heq2(xy, yz));
      r[BLtu2] = P(__hltu2(xy, yz));
    } else {
      __half X = H(x), Y = H(y);
      __half2 xy = __halves2half2(X, Y), yz = __halves2half2(Y, H(z));
      r[BAdd] = U(__hadd(X, Y)), r[BSub] = U(__hsub(X, Y));
      r[BMul] = U(__hmul(X, Y)), r[BMax] = U(__hmax(X, Y));
      r[BMin] = U(__hmin(X, Y)), r[BMaxNaN] = U(__hmax_nan(X, Y));
      r[BMinNaN] = U(__hmin_nan(X, Y)), r[BAddSat] = U(__hadd_sat(X, Y));
      r[BCmp] = compareAll(X, Y);
      r[BAdd2] = P(__hadd2(xy, yz)), r[BMul2] = P(__hmul2(xy, yz));
      r[BMax2] = P(__hmax2(xy, yz)), r[BEq2] = P(__heq2(xy, yz));
      r[BLtu2] = P(__hltu2(xy, yz));
    }
    u16 f = fma(x, y, z);
    r[BFma] = f, r[BFmaSat] = sat(f, BF), r[BFmaRelu] = relu(f, BF);
    r[BFma2] = fma(x, y, z) | u32(fma(y, z, x)) << 16;
    for (int k = 0; k < BCount; ++k)
      ref[size_t(k) * n + i] = r[k];
  }
  for (int k = 0; k < BCount; ++k)
    check(BNames[k], n, &dev[size_t(k) * n], &ref[size_t(k) * n],
          BF ? "bf16" : "half");
  return 0;
}

static const char *CNames[CCount] = {
    "float2half_rn", "float2half_rz", "float2half_rd", "float2half_ru",
    "float2bf16_rn", "float2bf16_rz", "float2bf16_rd", "float2bf16_ru",
    "double2half", "double2bf16", "int2half_rn", "int2half_rz",
    "int2half_rd", "int2half_ru", "int2bf16_rn", "int2bf16_rz",
    "int2bf16_rd", "int2bf16_ru", "ll2half_rn", "ull2half_rd",
    "ll2bf16_rd", "uint2half_rn", "short2half_rn", "ushort2half_rn",
    "floats2half2_rn", "floats2bf162_rn"};

static const char *NNames[NCount] = {"float_to_Float16", "float_to_bf16",
                                     "double_to_bf16", "Float16_mul"};

static int testConvert() {
  std::vector<float> f;
  // Every half and bf16 value, the midpoints to their successors (ties),
  // and the floats just either side of each midpoint.
  for (int bf = 0; bf < 2; ++bf)
    for (int x = 0; x < 0x10000; ++x) {
      float v = bf ? __bfloat162float(B16(u16(x))) : __half2float(H(u16(x)));
      float w = bf ? __bfloat162float(B16(u16(x + 1)))
                   : __half2float(H(u16(x + 1)));
      f.push_back(v);
      if (std::isfinite(v) && std::isfinite(w) && (x & 0x7fff) != 0x7fff) {
        float mid = (v + w) / 2;
        f.push_back(mid);
        f.push_back(nextafterf(mid, INFINITY));
        f.push_back(nextafterf(mid, -INFINITY));
      }
    }
  std::mt19937 rng(11);
  for (int i = 0; i < 100000; ++i) {
    u32 u = rng();
    float v;
    memcpy(&v, &u, 4);
    f.push_back(v);
  }
  int n = int(f.size());
  std::vector<double> d(n);
  std::vector<long long> l(n);
  for (int i = 0; i < n; ++i) {
    // The float, or the double just beside it: a tie in float is none in
    // double, which a conversion through float would round wrongly.
    d[i] = i % 3 == 0 ? f[i] : nextafter(double(f[i]), i % 3 == 1 ? INFINITY : -INFINITY);
    switch (i % 6) {
    case 0:
      l[i] = (long long)(i / 6) - 70000; // small, and the ties above 2048
      break;
    case 1:
      l[i] = (long long)(int)rng();
      break;
    case 2:
      l[i] = ((long long)rng() << 32) | rng();
      break;
    case 3: // ties in half (odd multiples of 2^(k-11)) and bf16
      l[i] = ((long long)(rng() % 1024) * 2 + 1) << (rng() % 40);
      break;
    case 4:
      l[i] = ((long long)(rng() % 128) * 2 + 1) << (rng() % 50);
      break;
    default: {
      const long long ext[] = {INT_MIN, INT_MAX, LLONG_MIN, LLONG_MAX, 0, -1,
                               65504, 65520, 65519, -65520, 2049, 2051};
      l[i] = ext[(i / 6) % 12];
    }
    }
  }
  float *dF = toDevice(f);
  double *dD = toDevice(d);
  long long *dL = toDevice(l);
  u32 *dOut;
  CUDA_CHECK(cudaMalloc(&dOut, size_t(n) * CCount * 4));
  convert<<<(n + 255) / 256, 256>>>(dF, dD, dL, n, dOut);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<u32> dev = fromDevice(dOut, size_t(n) * CCount);
  std::vector<u32> ref(size_t(n) * CCount);
  for (int i = 0; i < n; ++i) {
    float x = f[i];
    long long w = l[i];
    int v = int(w);
    float oi = intToOddFloat(v, false), ol = intToOddFloat(w, false),
          oul = intToOddFloat(w, true);
    u32 r[CCount] = {U(__float2half_rn(x)), U(__float2half_rz(x)),
                     U(__float2half_rd(x)), U(__float2half_ru(x)),
                     U(__float2bfloat16_rn(x)), U(__float2bfloat16_rz(x)),
                     U(__float2bfloat16_rd(x)), U(__float2bfloat16_ru(x)),
                     U(__double2half(d[i])), U(__double2bfloat16(d[i])),
                     U(__int2half_rn(v)), U(__int2half_rz(v)),
                     U(__int2half_rd(v)), U(__int2half_ru(v)),
                     U(__int2bfloat16_rn(v)), U(__float2bfloat16_rz(oi)),
                     U(__float2bfloat16_rd(oi)), U(__float2bfloat16_ru(oi)),
                     U(__ll2half_rn(w)),
                     U(__ull2half_rd((unsigned long long)w)),
                     U(__float2bfloat16_rd(ol)), U(__uint2half_rn(u32(v))),
                     U(__short2half_rn(short(v))),
                     U(__ushort2half_rn((unsigned short)v)),
                     P(__floats2half2_rn(x, -x)),
                     P(__floats2bfloat162_rn(x, x * 3.0f))};
    (void)oul;
    for (int k = 0; k < CCount; ++k)
      ref[size_t(k) * n + i] = r[k];
  }
  for (int k = 0; k < CCount; ++k)
    check(CNames[k], n, &dev[size_t(k) * n], &ref[size_t(k) * n], "convert");

  CUDA_CHECK(cudaMalloc(&dOut, size_t(n) * NCount * 4));
  native<<<(n + 255) / 256, 256>>>(dF, dD, n, dOut);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  dev = fromDevice(dOut, size_t(n) * NCount);
  ref.assign(size_t(n) * NCount, 0);
  for (int i = 0; i < n; ++i) {
    __half h = __float2half_rn(f[i]), g = __float2half_rn(f[(i + 1) % n]);
    u32 r[NCount] = {FB(__half2float(h)),
                     FB(__bfloat162float(__float2bfloat16_rn(f[i]))),
                     FB(__bfloat162float(__double2bfloat16(d[i]))),
                     FB(__half2float(__hmul(h, g)))};
    for (int k = 0; k < NCount; ++k) {
      u32 &dv = dev[size_t(k) * n + i];
      // NaN payloads differ (the compiler's conversions keep them; the
      // headers' give the canonical NaN): NaN against NaN is a match.
      if ((dv & 0x7fffffff) > 0x7f800000 && (r[k] & 0x7fffffff) > 0x7f800000)
        dv = r[k];
      ref[size_t(k) * n + i] = r[k];
    }
  }
  for (int k = 0; k < NCount; ++k)
    check(NNames[k], n, &dev[size_t(k) * n], &ref[size_t(k) * n], "native");
  return 0;
}

int main() {
  if (testUnary<false>() || testUnary<true>() || testBinary<false>() ||
      testBinary<true>() || testConvert())
    return 1;
  printf(failures ? "FAIL: %d mismatches\n" : "PASS\n", failures);
  return failures != 0;
}
