; libdevice's inline PTX and NVVM conversions become host code: each kernel
; gets a CPU variant, no asm remains, and each form maps to the operation of
; its PTX meaning. The f64 subtraction with a directed rounding has no exact
; host form here and stays refused, named; legality accepts the libdevice
; forms (the kernels can be split) and not that one.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes=cleave-cpu-lower \
; RUN:   -pass-remarks=cleave-cpu-lower -pass-remarks-missed=cleave-cpu-lower \
; RUN:   %s -S -o %t.cpu.ll 2>&1 | FileCheck %s --check-prefix=REMARK
; RUN: FileCheck %s --check-prefix=IR --implicit-check-not='asm "' < %t.cpu.ll
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' \
; RUN:   -disable-output %s 2>&1 | FileCheck %s --check-prefix=LEGAL

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; REMARK-DAG: kernel float_forms: CPU variant __cleave_cpu_float_forms
; REMARK-DAG: kernel wide_forms: CPU variant __cleave_cpu_wide_forms
; REMARK-DAG: kernel conversions: CPU variant __cleave_cpu_conversions
; REMARK-DAG: kernel dsub_rz stays GPU-only: inline-asm (asm sub.rz.f64 $0, $1, $2;)
; LEGAL-LABEL: kernel 'float_forms'
; LEGAL-NEXT: split: yes
; LEGAL-LABEL: kernel 'wide_forms'
; LEGAL-NEXT: split: yes
; LEGAL-LABEL: kernel 'dsub_rz'
; LEGAL: issue: inline-asm (forbids split, cpu) 'asm sub.rz.f64 $0, $1, $2;'

; rcp.approx.ftz.f32 -> 1 / x (flushed); rsqrt.approx.ftz.f64 -> 1 / sqrt;
; sub.rn -> fadd of the negation; sub.rz.f32 -> fma.rz(b, -1, a) (the
; runtime's exact helper, inlined for f32); setp.equ + selp -> fcmp ueq.
; IR-LABEL: define {{.*}}@__cleave_cpu_float_forms(
; IR-DAG: fdiv {{.*}}float 1.000000e+00,
; IR-DAG: call {{.*}}double @llvm.sqrt.f64(
; IR-DAG: fdiv {{.*}}double 1.000000e+00,
; IR-DAG: fneg {{.*}}float
; IR-DAG: fcmp ueq double
define ptx_kernel void @float_forms(ptr %out, float %a, float %b, double %c, double %d) {
  %rcp = call float asm "rcp.approx.ftz.f32 $0,$1;", "=f,f"(float %a)
  store volatile float %rcp, ptr %out
  %rsq = call double asm "rsqrt.approx.ftz.f64 $0, $1;", "=d,d"(double %c)
  store volatile double %rsq, ptr %out
  %sub = call float asm "sub.rn.f32 $0, $1, $2;", "=f,f,f"(float %a, float %b)
  store volatile float %sub, ptr %out
  %subz = call float asm "sub.rz.ftz.f32 $0, $1, $2;", "=f,f,f"(float %a, float %b)
  store volatile float %subz, ptr %out
  %sel = call double asm "{ .reg .pred __$$temp3;\0A  setp.equ.f64 __$$temp3, $1, $2;\0A  selp.f64 $0, $3, $4, __$$temp3;}", "=d,d,d,d,d"(double %c, double %d, double %c, double %d)
  store volatile double %sel, ptr %out
  ret void
}

; The carry chains are multiplies and adds on integers twice as wide.
; IR-LABEL: define {{.*}}@__cleave_cpu_wide_forms(
; IR-DAG: mul {{.*}}i64
; IR-DAG: mul {{.*}}i128
; IR-DAG: add i128
; IR-DAG: sub i128
define ptx_kernel void @wide_forms(ptr %out, i32 %a, i32 %b, i32 %c, i64 %x, i64 %y, i64 %z) {
  %m32 = call { i32, i32 } asm "{\0A\09mad.lo.cc.u32   $0, $2, $3, $4;\0A\09madc.hi.u32     $1, $2, $3,  0;\0A\09}", "=r,=r,r,r,r"(i32 %a, i32 %b, i32 %c)
  store volatile { i32, i32 } %m32, ptr %out
  %m64 = call { i64, i64 } asm "{\0A\09.reg .u32 r0, r1, r2, r3, alo, ahi, blo, bhi, clo, chi;\0A\09mov.b64         {alo,ahi}, $2;    \0A\09mov.b64         {blo,bhi}, $3;    \0A\09mov.b64         {clo,chi}, $4;    \0A\09mad.lo.cc.u32   r0, alo, blo, clo;\0A\09madc.hi.cc.u32  r1, alo, blo, chi;\0A\09madc.hi.u32     r2, alo, bhi,   0;\0A\09mad.lo.cc.u32   r1, alo, bhi,  r1;\0A\09madc.hi.cc.u32  r2, ahi, blo,  r2;\0A\09madc.hi.u32     r3, ahi, bhi,   0;\0A\09mad.lo.cc.u32   r1, ahi, blo,  r1;\0A\09madc.lo.cc.u32  r2, ahi, bhi,  r2;\0A\09addc.u32        r3,  r3,   0;     \0A\09mov.b64         $0, {r0,r1};      \0A\09mov.b64         $1, {r2,r3};      \0A\09}", "=l,=l,l,l,l"(i64 %x, i64 %y, i64 %z)
  store volatile { i64, i64 } %m64, ptr %out
  %mul = call { i64, i64 } asm "{\0A\09.reg .u32 r0, r1, r2, r3, alo, ahi, blo, bhi;\0A\09mov.b64         {alo,ahi}, $2;   \0A\09mov.b64         {blo,bhi}, $3;   \0A\09mul.lo.u32      r0, alo, blo;    \0A\09mul.hi.u32      r1, alo, blo;    \0A\09mad.lo.cc.u32   r1, alo, bhi, r1;\0A\09madc.hi.u32     r2, alo, bhi,  0;\0A\09mad.lo.cc.u32   r1, ahi, blo, r1;\0A\09madc.hi.cc.u32  r2, ahi, blo, r2;\0A\09madc.hi.u32     r3, ahi, bhi,  0;\0A\09mad.lo.cc.u32   r2, ahi, bhi, r2;\0A\09addc.u32        r3, r3,  0;      \0A\09mov.b64         $0, {r0,r1};     \0A\09mov.b64         $1, {r2,r3};     \0A\09}", "=l,=l,l,l"(i64 %x, i64 %y)
  store volatile { i64, i64 } %mul, ptr %out
  %add = call { i64, i64 } asm "{\0A\09.reg .u32 r0, r1, r2, r3, a0, a1, a2, a3, b0, b1, b2, b3;\0A\09mov.b64         {a0,a1}, $2;\0A\09mov.b64         {a2,a3}, $3;\0A\09mov.b64         {b0,b1}, $4;\0A\09mov.b64         {b2,b3}, $5;\0A\09add.cc.u32      r0, a0, b0; \0A\09addc.cc.u32     r1, a1, b1; \0A\09addc.cc.u32     r2, a2, b2; \0A\09addc.u32        r3, a3, b3; \0A\09mov.b64         $0, {r0,r1};\0A\09mov.b64         $1, {r2,r3};\0A\09}", "=l,=l,l,l,l,l"(i64 %x, i64 %y, i64 %z, i64 %x)
  store volatile { i64, i64 } %add, ptr %out
  %sub = call { i64, i64 } asm "{\0A\09.reg .u32 r0, r1, r2, r3, a0, a1, a2, a3, b0, b1, b2, b3;\0A\09mov.b64         {a0,a1}, $2;\0A\09mov.b64         {a2,a3}, $3;\0A\09mov.b64         {b0,b1}, $4;\0A\09mov.b64         {b2,b3}, $5;\0A\09sub.cc.u32      r0, a0, b0; \0A\09subc.cc.u32     r1, a1, b1; \0A\09subc.cc.u32     r2, a2, b2; \0A\09subc.u32        r3, a3, b3; \0A\09mov.b64         $0, {r0,r1};\0A\09mov.b64         $1, {r2,r3};\0A\09}", "=l,=l,l,l,l,l"(i64 %x, i64 %y, i64 %z, i64 %x)
  store volatile { i64, i64 } %sub, ptr %out
  ret void
}

; cvt.rni/rzi/rmi/rpi to an integer saturate (NaN gives 0); round is
; cvt.rni, ties to even; the halves of a double are bit moves; a directed
; add is the fma of that rounding.
; IR-LABEL: define {{.*}}@__cleave_cpu_conversions(
; IR-DAG: call float @llvm.roundeven.f32(
; IR-DAG: call i32 @llvm.fptosi.sat.i32.f32(
; IR-DAG: call float @llvm.floor.f32(
; IR-DAG: call i64 @llvm.fptoui.sat.i64.f64(
; IR-DAG: call double @llvm.roundeven.f64(
; IR-DAG: sitofp i32 {{.*}} to float
; IR-DAG: fptrunc double {{.*}} to float
; IR-DAG: lshr i64 {{.*}}, 32
; IR-DAG: call double @__cleave_rt_fma_rz_f64(
define ptx_kernel void @conversions(ptr %out, float %a, double %d, i32 %i) {
  %rni = call i32 @llvm.nvvm.f2i.rn(float %a)
  store volatile i32 %rni, ptr %out
  %rmi = call i32 @llvm.nvvm.f2i.rm.ftz(float %a)
  store volatile i32 %rmi, ptr %out
  %ull = call i64 @llvm.nvvm.d2ull.rp(double %d)
  store volatile i64 %ull, ptr %out
  %r = call double @llvm.nvvm.round.d(double %d)
  store volatile double %r, ptr %out
  %f = call float @llvm.nvvm.i2f.rn(i32 %i)
  store volatile float %f, ptr %out
  %t = call float @llvm.nvvm.d2f.rn(double %d)
  store volatile float %t, ptr %out
  %hi = call i32 @llvm.nvvm.d2i.hi(double %d)
  %lo = call i32 @llvm.nvvm.d2i.lo(double %d)
  %back = call double @llvm.nvvm.lohi.i2d(i32 %lo, i32 %hi)
  store volatile double %back, ptr %out
  %add = call double @llvm.nvvm.add.rz.d(double %d, double %back)
  store volatile double %add, ptr %out
  ret void
}

define ptx_kernel void @dsub_rz(ptr %out, double %a, double %b) {
  %s = call double asm "sub.rz.f64 $0, $1, $2;", "=d,d,d"(double %a, double %b)
  store double %s, ptr %out
  ret void
}

declare i32 @llvm.nvvm.f2i.rn(float)
declare i32 @llvm.nvvm.f2i.rm.ftz(float)
declare i64 @llvm.nvvm.d2ull.rp(double)
declare double @llvm.nvvm.round.d(double)
declare float @llvm.nvvm.i2f.rn(i32)
declare float @llvm.nvvm.d2f.rn(double)
declare i32 @llvm.nvvm.d2i.hi(double)
declare i32 @llvm.nvvm.d2i.lo(double)
declare double @llvm.nvvm.lohi.i2d(i32, i32)
declare double @llvm.nvvm.add.rz.d(double, double)
