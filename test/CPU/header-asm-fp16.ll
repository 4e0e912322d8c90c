; The fp16/bf16 headers' inline PTX blocks (asm strings and constraints as
; Clang 19 prints cuda_fp16.hpp/cuda_bf16.hpp for sm_90) become integer IR
; with PTX's exact results. Each shape is called on constants; after the
; lowering, instcombine folds every result, so the stored constants are the
; lowering's answers: ties to even, directed roundings, overflow per mode,
; subnormals, canonical NaN, unordered comparisons, signed zeros in min/max,
; .sat/.relu, packing of pairs, a tied operand, and libdevice's integer
; carry chains. Asm outside the recognised shapes (memory, atomics, integer
; arithmetic outside a carry chain, a carry-in with no carry) stays
; refused, named.
; RUN: %opt -load-pass-plugin=%cleave_plugin \
; RUN:   -passes='cleave-cpu-lower,function(instcombine)' \
; RUN:   -pass-remarks=cleave-cpu-lower -pass-remarks-missed=cleave-cpu-lower \
; RUN:   %s -S -o %t.cpu.ll 2>&1 | FileCheck %s --check-prefix=REMARK
; RUN: FileCheck %s --check-prefix=IR < %t.cpu.ll
; RUN: not grep "asm \"" %t.cpu.ll

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; REMARK-DAG: kernel arith: CPU variant __cleave_cpu_arith
; REMARK-DAG: kernel convert: CPU variant __cleave_cpu_convert
; REMARK-DAG: kernel compare: CPU variant __cleave_cpu_compare
; REMARK-DAG: kernel approx: CPU variant __cleave_cpu_approx
; REMARK-DAG: kernel load stays GPU-only: inline-asm (asm ld.global.nc.b16 $0, [$1];)
; REMARK-DAG: kernel atomic stays GPU-only: inline-asm (asm { atom.add.noftz.f16 $0,[$1],$2; })
; REMARK-DAG: kernel carry: CPU variant __cleave_cpu_carry
; REMARK-DAG: kernel nocarry stays GPU-only: inline-asm (asm { addc.u32 $0,$1,$2; })
; REMARK-DAG: kernel integer stays GPU-only: inline-asm (asm { add.s32 $0,$1,$2; })
; REMARK-DAG: kernel predicated stays GPU-only: inline-asm (asm { .reg .pred p; setp.eq.f16 p, $1, $2; @p mov.b16 $0,...)


; IR-LABEL: define {{.*}}@__cleave_cpu_arith(
define ptx_kernel void @arith(ptr %out) {
  ; __hadd: 1 + 1
  ; IR-DAG: store i16 16384,
  %a = call i16 asm "{add.f16 $0,$1,$2;\0A}", "=h,h,h"(i16 15360, i16 15360)
  store i16 %a, ptr %out
  ; __hfma: 1 * 1 + 2^-11 is a tie (even: 1.0); + 2^-21 more rounds up
  ; IR-DAG: store i16 15360,
  ; IR-DAG: store i16 15361,
  %f1 = call i16 asm "{fma.rn.f16 $0,$1,$2,$3;\0A}", "=h,h,h,h"(i16 15360, i16 15360, i16 4096)
  %p1 = getelementptr i16, ptr %out, i64 1
  store i16 %f1, ptr %p1
  %f2 = call i16 asm "{fma.rn.f16 $0,$1,$2,$3;\0A}", "=h,h,h,h"(i16 15360, i16 15360, i16 4097)
  %p2 = getelementptr i16, ptr %out, i64 2
  store i16 %f2, ptr %p2
  ; __hneg of a NaN: the canonical NaN
  ; IR-DAG: store i16 32767,
  %n = call i16 asm "{neg.f16 $0,$1;\0A}", "=h,h"(i16 32257)
  %p3 = getelementptr i16, ptr %out, i64 3
  store i16 %n, ptr %p3
  ; __hmin(+0, -0) is -0
  ; IR-DAG: store i16 -32768,
  %m = call i16 asm "{min.f16 $0,$1,$2;\0A}", "=h,h,h"(i16 0, i16 -32768)
  %p4 = getelementptr i16, ptr %out, i64 4
  store i16 %m, ptr %p4
  ; __hadd_sat(2, 2) is 1 (0x3c00 again); __hfma_relu(-1, 1, 0) is +0
  ; IR-DAG: store i16 0,
  %s = call i16 asm "{add.sat.f16 $0,$1,$2;\0A}", "=h,h,h"(i16 16384, i16 16384)
  %p5 = getelementptr i16, ptr %out, i64 5
  store i16 %s, ptr %p5
  %r = call i16 asm "{fma.rn.relu.bf16 $0,$1,$2,$3;\0A}", "=h,h,h,h"(i16 -16512, i16 16256, i16 0)
  %p6 = getelementptr i16, ptr %out, i64 6
  store i16 %r, ptr %p6
  ; __hmul2 on bf16 pairs {2, 3} * {3, 0.5}: {6, 1.5} = 0x3fc0_40c0
  ; IR-DAG: store i32 1069564096,
  %x = call i32 asm "{ mul.bf16x2 $0,$1,$2; }\0A", "=r,r,r"(i32 1077952512, i32 1056981056)
  %p7 = getelementptr i32, ptr %out, i64 4
  store i32 %x, ptr %p7
  ; __lowhigh2highlow: unpack and repack
  ; IR-DAG: store i32 305419896,
  %w = call i32 asm "{.reg .f16 low,high;\0A mov.b32 {low,high}, $1;\0A mov.b32 $0, {high,low};}\0A", "=r,r"(i32 1450709556)
  %p8 = getelementptr i32, ptr %out, i64 5
  store i32 %w, ptr %p8
  ret void
}

; IR-LABEL: define {{.*}}@__cleave_cpu_convert(
define ptx_kernel void @convert(ptr %out) {
  ; 65520: rn overflows to inf, rz stays at the largest finite
  ; IR-DAG: store i16 31744,
  ; IR-DAG: store i16 31743,
  %a = call i16 asm "{  cvt.rn.f16.f32 $0, $1;}\0A", "=h,f"(float 65520.0)
  store i16 %a, ptr %out
  %b = call i16 asm "{  cvt.rz.f16.f32 $0, $1;}\0A", "=h,f"(float 65520.0)
  %p1 = getelementptr i16, ptr %out, i64 1
  store i16 %b, ptr %p1
  ; -2^-30 toward -inf: the least subnormal, negated; 2^-30 toward +inf: the least subnormal
  ; IR-DAG: store i16 -32767,
  ; IR-DAG: store i16 1,
  %c = call i16 asm "{  cvt.rm.f16.f32 $0, $1;}\0A", "=h,f"(float 0xBE10000000000000)
  %p2 = getelementptr i16, ptr %out, i64 2
  store i16 %c, ptr %p2
  %d = call i16 asm "{  cvt.rp.f16.f32 $0, $1;}\0A", "=h,f"(float 0x3E10000000000000)
  %p3 = getelementptr i16, ptr %out, i64 3
  store i16 %d, ptr %p3
  ; 1 + 2^-8 + 2^-30 to bf16 rounds up (through float it would tie to 1.0)
  ; IR-DAG: store i16 16257,
  %e = call i16 asm "{  cvt.rn.bf16.f64 $0, $1;}\0A", "=h,d"(double 0x3FF0100000400000)
  %p4 = getelementptr i16, ptr %out, i64 4
  store i16 %e, ptr %p4
  ; 4095 toward zero in f16 (spacing 2 there): 4094
  ; IR-DAG: store i16 27647,
  %f = call i16 asm "cvt.rz.f16.u32 $0, $1;", "=h,r"(i32 4095)
  %p5 = getelementptr i16, ptr %out, i64 5
  store i16 %f, ptr %p5
  ; 2^63 - 1 to f16: inf
  ; IR-DAG: store i16 31744,
  %g = call i16 asm "cvt.rn.f16.s64 $0, $1;", "=h,l"(i64 9223372036854775807)
  %p6 = getelementptr i16, ptr %out, i64 6
  store i16 %g, ptr %p6
  ; 2.5 to nearest even: 2; -2.5 down: -3; -1 to u64: saturates to 0
  ; IR-DAG: store i32 2,
  ; IR-DAG: store i32 -3,
  ; IR-DAG: store i64 0,
  %h = call i32 asm "cvt.rni.s32.f16 $0, $1;", "=r,h"(i16 16640)
  %p7 = getelementptr i32, ptr %out, i64 4
  store i32 %h, ptr %p7
  %i = call i32 asm "cvt.rmi.s32.f16 $0, $1;", "=r,h"(i16 -16128)
  %p8 = getelementptr i32, ptr %out, i64 5
  store i32 %i, ptr %p8
  %j = call i64 asm "cvt.rzi.u64.f16 $0, $1;", "=l,h"(i16 -17408)
  %p9 = getelementptr i64, ptr %out, i64 3
  store i64 %j, ptr %p9
  ; the least f16 subnormal as a float: 2^-24
  ; IR-DAG: store i32 864026624,
  %k = call float asm "{  cvt.f32.f16 $0, $1;}\0A", "=f,h"(i16 1)
  %kb = bitcast float %k to i32
  %p10 = getelementptr i32, ptr %out, i64 8
  store i32 %kb, ptr %p10
  ; __floats2half2_rn(1, 2): 1 low, 2 high
  ; IR-DAG: store i32 1073757184,
  %l = call i32 asm "{ cvt.rn.f16x2.f32 $0, $2, $1; }\0A", "=r,f,f"(float 1.0, float 2.0)
  %p11 = getelementptr i32, ptr %out, i64 9
  store i32 %l, ptr %p11
  ; hrint(2.5) in f16: 2.0
  ; IR-DAG: store i16 16384,
  %m = call i16 asm "cvt.rni.f16.f16 $0, $1;", "=h,h"(i16 16640)
  %p12 = getelementptr i16, ptr %out, i64 20
  store i16 %m, ptr %p12
  ; __bfloat162char_rz(-200): saturates to -128 in a .b8 register, then
  ; packed with a zero byte: 0x0080
  ; IR-DAG: store i16 128,
  %n = call i16 asm "{ .reg.b8 myreg;\0A  cvt.rzi.s8.bf16 myreg, $1;\0A  mov.b16 $0, {myreg, 0};\0A}", "=h,h"(i16 -15544)
  %p13 = getelementptr i16, ptr %out, i64 21
  store i16 %n, ptr %p13
  ret void
}

; IR-LABEL: define {{.*}}@__cleave_cpu_compare(
define ptx_kernel void @compare(ptr %out) {
  ; __hltu(NaN, 1) is true, __hlt(NaN, 1) false
  ; IR-DAG: store i16 1,
  ; IR-DAG: store i16 0,
  %a = call i16 asm "{ .reg .pred __$$temp3;\0A  setp.ltu.f16  __$$temp3, $1, $2;\0A  selp.u16 $0, 1, 0, __$$temp3;}", "=h,h,h"(i16 32256, i16 15360)
  store i16 %a, ptr %out
  %b = call i16 asm "{ .reg .pred __$$temp3;\0A  setp.lt.f16  __$$temp3, $1, $2;\0A  selp.u16 $0, 1, 0, __$$temp3;}", "=h,h,h"(i16 32256, i16 15360)
  %p1 = getelementptr i16, ptr %out, i64 1
  store i16 %b, ptr %p1
  ; __heq2_mask({1, 2}, {1, 3}): 0x0000ffff
  ; IR-DAG: store i32 65535,
  %c = call i32 asm "{ set.eq.u32.f16x2 $0,$1,$2;\0A}", "=r,r,r"(i32 1073757184, i32 1107311616)
  %p2 = getelementptr i32, ptr %out, i64 1
  store i32 %c, ptr %p2
  ; __hisnan(bf16 NaN): set.nan gives bf16 1.0
  ; IR-DAG: store i16 16256,
  %d = call i16 asm "{set.nan.bf16.bf16 $0,$1,$1;\0A}", "=h,h"(i16 32704)
  %p3 = getelementptr i16, ptr %out, i64 4
  store i16 %d, ptr %p3
  ret void
}

; The .approx instructions become the NVVM math the CPU lowering maps to
; libm; a tied operand ("=f,0") starts as its input.
; IR-LABEL: define {{.*}}@__cleave_cpu_approx(
; IR: call float @llvm.exp2.f32(
define ptx_kernel void @approx(ptr %out, i16 %h, float %x) {
  %a = call i16 asm "{.reg.b32         f, ULP;         \0A .reg.b16         r;              \0A  mov.b16         r,$1;           \0A  cvt.f32.f16     f,r;            \0A  ex2.approx.ftz.f32      f,f;    \0A  mov.b32         ULP, 0x33800000U;\0A  fma.rn.f32      f,f,ULP,f;      \0A  cvt.rn.f16.f32      r,f;        \0A  mov.b16         $0,r;           \0A}", "=h,h"(i16 %h)
  store i16 %a, ptr %out
  %t = call float asm "{ tanh.approx.f32 $0, $0; }", "=f,0"(float %x)
  %p1 = getelementptr float, ptr %out, i64 1
  store float %t, ptr %p1
  %b = call i16 asm "{\0A\09  .reg.b16 i,r;        \0A\09  mov.b16 r, $0;       \0A\09  mov.b16 i, $1;       \0A\09  abs.f16 i, i;        \0A\09{.reg.b16 spc, ulp, p;\0A  mov.b16 spc,0X2B7CU;\0A  mov.b16 ulp,0x1000U;\0A  set.eq.f16.f16 p,i, spc;\0A  fma.rn.f16 r,p,ulp,r;\0A}\0A  mov.b16 $0, r;       \0A}\0A", "=h,h,0"(i16 %h, i16 %h)
  %p2 = getelementptr i16, ptr %out, i64 4
  store i16 %b, ptr %p2
  ret void
}

; Carry chains (libdevice's shapes, spaced otherwise so that its exact
; strings, LibdeviceAsm.cpp, do not take them): (2^64-1)^2 =
; 0xfffffffffffffffe_0000000000000001; (0, 1) - (1, 0) as 128-bit numbers
; borrows: (2^64-1, 0).
; IR-LABEL: define {{.*}}@__cleave_cpu_carry(
; IR-DAG: store i64 1,
; IR-DAG: store i64 -2,
; IR-DAG: store i64 -1,
; IR-DAG: store i64 0,
define ptx_kernel void @carry(ptr %out) {
  %m = call { i64, i64 } asm "{\0A .reg .u32 r0, r1, r2, r3, alo, ahi, blo, bhi;\0A mov.b64         {alo,ahi}, $2;   \0A mov.b64         {blo,bhi}, $3;   \0A mul.lo.u32      r0, alo, blo;    \0A mul.hi.u32      r1, alo, blo;    \0A mad.lo.cc.u32   r1, alo, bhi, r1;\0A madc.hi.u32     r2, alo, bhi,  0;\0A mad.lo.cc.u32   r1, ahi, blo, r1;\0A madc.hi.cc.u32  r2, ahi, blo, r2;\0A madc.hi.u32     r3, ahi, bhi,  0;\0A mad.lo.cc.u32   r2, ahi, bhi, r2;\0A addc.u32        r3, r3,  0;      \0A mov.b64         $0, {r0,r1};     \0A mov.b64         $1, {r2,r3};     \0A }", "=l,=l,l,l"(i64 -1, i64 -1)
  %lo = extractvalue { i64, i64 } %m, 0
  %hi = extractvalue { i64, i64 } %m, 1
  store i64 %lo, ptr %out
  %p1 = getelementptr i64, ptr %out, i64 1
  store i64 %hi, ptr %p1
  %d = call { i64, i64 } asm "{\0A .reg .u32 r0, r1, r2, r3, a0, a1, a2, a3, b0, b1, b2, b3;\0A mov.b64         {a0,a1}, $2;\0A mov.b64         {a2,a3}, $3;\0A mov.b64         {b0,b1}, $4;\0A mov.b64         {b2,b3}, $5;\0A sub.cc.u32      r0, a0, b0; \0A subc.cc.u32     r1, a1, b1; \0A subc.cc.u32     r2, a2, b2; \0A subc.u32        r3, a3, b3; \0A mov.b64         $0, {r0,r1};\0A mov.b64         $1, {r2,r3};\0A }", "=l,=l,l,l,l,l"(i64 0, i64 1, i64 1, i64 0)
  %dlo = extractvalue { i64, i64 } %d, 0
  %dhi = extractvalue { i64, i64 } %d, 1
  %p2 = getelementptr i64, ptr %out, i64 2
  store i64 %dlo, ptr %p2
  %p3 = getelementptr i64, ptr %out, i64 3
  store i64 %dhi, ptr %p3
  ret void
}

; A carry-in with no carry written before it is not recognised.
define ptx_kernel void @nocarry(ptr %out, i32 %v) {
  %a = call i32 asm "{ addc.u32 $0,$1,$2; }", "=r,r,r"(i32 %v, i32 %v)
  store i32 %a, ptr %out
  ret void
}

define ptx_kernel void @load(ptr %out, ptr %in) {
  %a = call i16 asm "ld.global.nc.b16 $0, [$1];", "=h,l"(ptr %in)
  store i16 %a, ptr %out
  ret void
}

define ptx_kernel void @atomic(ptr %out, i16 %v) {
  %a = call i16 asm sideeffect "{ atom.add.noftz.f16 $0,[$1],$2; }\0A", "=h,l,h,~{memory}"(ptr %out, i16 %v)
  store i16 %a, ptr %out
  ret void
}

define ptx_kernel void @integer(ptr %out, i32 %v) {
  %a = call i32 asm "{ add.s32 $0,$1,$2; }", "=r,r,r"(i32 %v, i32 %v)
  store i32 %a, ptr %out
  ret void
}

define ptx_kernel void @predicated(ptr %out, i16 %v) {
  %a = call i16 asm "{ .reg .pred p;\0A setp.eq.f16 p, $1, $2;\0A @p mov.b16 $0, $1;\0A}", "=h,h,h"(i16 %v, i16 %v)
  store i16 %a, ptr %out
  ret void
}
