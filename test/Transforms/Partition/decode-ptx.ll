; What the decode costs in PTX, for any grid: one read of %ctaid.x, then
; per dimension divided (x always, y when blockIdx.y or .z is read) an add
; of the divisor's increment, one mul.hi.u32, a shift, and the remainder as
; a mul and a sub; all 32-bit, no branch, no division instruction (ptxas
; expands div.u32 into a dozen instructions and div.u64 into a loop-free
; sequence that raises the kernel's register count).
;
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes=cleave-partition -S %s -o %t.ll
; RUN: %llc_ptx %t.ll -o - | FileCheck %s
; RUN: %llc_ptx %t.ll -o - | FileCheck %s --check-prefix=NO64 \
; RUN:     --implicit-check-not=div.u64 --implicit-check-not=rem.u64 \
; RUN:     --implicit-check-not=div.s64 --implicit-check-not=rem.s64 \
; RUN:     --implicit-check-not=div.u32 --implicit-check-not=rem.u32 \
; RUN:     --implicit-check-not=bra

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @k(ptr %out) {
  %x = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %y = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %i = mul i32 %y, 1000
  %j = add i32 %i, %x
  %p = getelementptr i32, ptr %out, i32 %j
  store i32 %j, ptr %p, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()

!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}

; CHECK-LABEL: .visible .entry __cleave_pr_k(
; CHECK-NEXT:    .param .u64 __cleave_pr_k_param_0,
; CHECK-NEXT:    .param .u32 __cleave_pr_k_param_1,
; CHECK-NEXT:    .param .u32 __cleave_pr_k_param_2,
; CHECK-NEXT:    .param .u32 __cleave_pr_k_param_3,
; CHECK-NEXT:    .param .u32 __cleave_pr_k_param_4,
; CHECK-NEXT:    .param .u32 __cleave_pr_k_param_5,
; CHECK-NEXT:    .param .u32 __cleave_pr_k_param_6,
; CHECK-NEXT:    .param .u32 __cleave_pr_k_param_7,
; CHECK-NEXT:    .param .u32 __cleave_pr_k_param_8,
; CHECK-NEXT:    .param .u32 __cleave_pr_k_param_9,
; CHECK-NEXT:    .param .u32 __cleave_pr_k_param_10,
; CHECK-NEXT:    .param .u32 __cleave_pr_k_param_11,
; CHECK-NEXT:    .param .u32 __cleave_pr_k_param_12
; CHECK-NEXT:  )
; CHECK-NOT:     bra
; CHECK:         mov.u32 [[CTA:%r[0-9]+]], %ctaid.x;
; CHECK-NEXT:    add.s32 [[N1:%r[0-9]+]], [[CTA]], {{%r[0-9]+}};
; CHECK-NOT:     bra
; CHECK:         add.s32 [[N1I:%r[0-9]+]], [[N1]], {{%r[0-9]+}};
; CHECK-NOT:     bra
; CHECK:         mul.hi.u32 [[H1:%r[0-9]+]], [[N1I]], {{%r[0-9]+}};
; CHECK-NOT:     bra
; CHECK:         shr.u32 [[Q1:%r[0-9]+]], [[H1]], {{%r[0-9]+}};
; CHECK-NOT:     bra
; CHECK:         mul.lo.s32 [[Q1GX:%r[0-9]+]], [[Q1]], {{%r[0-9]+}};
; CHECK-NOT:     bra
; CHECK:         sub.s32 [[BX:%r[0-9]+]], [[N1]], [[Q1GX]];
; CHECK-NOT:     bra
; CHECK:         add.s32 [[N2:%r[0-9]+]], [[Q1]], {{%r[0-9]+}};
; CHECK-NEXT:    add.s32 [[N2I:%r[0-9]+]], [[N2]], {{%r[0-9]+}};
; CHECK-NEXT:    mul.hi.u32 [[H2:%r[0-9]+]], [[N2I]], {{%r[0-9]+}};
; CHECK-NEXT:    shr.u32 [[Q2:%r[0-9]+]], [[H2]], {{%r[0-9]+}};
; CHECK-NEXT:    mul.lo.s32 [[Q2GY:%r[0-9]+]], [[Q2]], {{%r[0-9]+}};
; CHECK-NEXT:    sub.s32 [[BY:%r[0-9]+]], [[N2]], [[Q2GY]];
; CHECK-NEXT:    mad.lo.s32 [[J:%r[0-9]+]], [[BY]], 1000, [[BX]];
; CHECK-NOT:     %ctaid
; CHECK:         st.global.u32 [{{%rd[0-9]+}}], [[J]];
; CHECK-NEXT:    ret;

; NO64: .visible .entry __cleave_pr_k(
; NO64: ret;
