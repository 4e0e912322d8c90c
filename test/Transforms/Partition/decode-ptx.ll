; What the decode costs in PTX. Per block: one read of %ctaid.x, a 64-bit
; add, and branches on values that are the same for the whole block; a 1-D
; grid needs no division, a 2-D grid of fewer than 2^32 blocks one 32-bit
; division (the remainder is a mul and a sub), a 3-D grid a second one (here
; rem.u32, as the kernel reads no blockIdx.z), larger grids a bit-serial
; loop of 32-bit steps that ptxas must not unroll. No 64-bit division
; anywhere (ptxas expands div.u64 inline and the kernel's register count
; grows with it).
;
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes=cleave-partition -S %s -o %t.ll
; RUN: %llc_ptx %t.ll -o - | FileCheck %s
; RUN: %llc_ptx %t.ll -o - | FileCheck %s --check-prefix=NO64 \
; RUN:     --implicit-check-not=div.u64 --implicit-check-not=rem.u64 \
; RUN:     --implicit-check-not=div.s64 --implicit-check-not=rem.s64

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
; CHECK-NEXT:    .param .u64 __cleave_pr_k_param_1,
; CHECK-NEXT:    .param .u32 __cleave_pr_k_param_2,
; CHECK-NEXT:    .param .u32 __cleave_pr_k_param_3,
; CHECK-NEXT:    .param .u32 __cleave_pr_k_param_4
; CHECK-NEXT:  )
; CHECK:         mov.u32 [[CTA:%r[0-9]+]], %ctaid.x;
; CHECK-NEXT:    cvt.u64.u32 [[CTA64:%rd[0-9]+]], [[CTA]];
; CHECK-NEXT:    add.s64 [[LIN:%rd[0-9]+]], {{%rd[0-9]+}}, [[CTA64]];
; CHECK:         or.b32 [[YZ:%r[0-9]+]],
; CHECK-NEXT:    setp.eq.s32 [[IS1D:%p[0-9]+]], [[YZ]], 1;
; CHECK:         @[[IS1D]] bra [[BODY:\$L__BB[0-9_]+]];
; CHECK-NEXT:  // %bb.{{[0-9]+}}: // %cleave.decode
; CHECK:         setp.gt.u64 [[WIDE:%p[0-9]+]], [[LIN]], 4294967295;
; CHECK:         @{{%p[0-9]+}} bra [[DIV3D:\$L__BB[0-9_]+]];
; CHECK-NEXT:  // %bb.{{[0-9]+}}: // %cleave.div2d
; CHECK-NEXT:    div.u32
; CHECK-NEXT:    mul.lo.s32
; CHECK-NEXT:    sub.s32
; CHECK-NEXT:    bra.uni [[BODY]];
; CHECK-NEXT:  [[DIV3D]]: // %cleave.div3d
; CHECK-NEXT:    @[[WIDE]] bra
; CHECK-NEXT:  // %bb.{{[0-9]+}}: // %cleave.div32
; CHECK-NEXT:    div.u32
; CHECK:       // %cleave.div64
; CHECK-NEXT:  // =>This Inner Loop Header
; CHECK-NEXT:    .pragma "nounroll";
; CHECK:       // %cleave.divy
; CHECK-NEXT:    rem.u32
; CHECK-NEXT:  [[BODY]]: // %cleave.body
; CHECK-NOT:     {{div|rem}}
; CHECK-NOT:     %ctaid
; CHECK:         st.global.u32
; CHECK-NEXT:    ret;

; NO64: .visible .entry __cleave_pr_k(
; NO64: ret;
