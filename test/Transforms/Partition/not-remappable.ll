; A block-index read inside a recursive function cannot be inlined into the
; variant, and leaving it would read the launch's 1-D grid: refused.
;
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes=cleave-partition,verify \
; RUN:     -pass-remarks-missed=cleave-partition -S %s -o %t.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=REMARK
; RUN: FileCheck %s < %t.ll

; REMARK: remark: <unknown>:0:0: kernel 'k' is not split: a call that cannot be inlined may read the block index or grid size
; REMARK-NOT: remark

; CHECK-NOT: __cleave_pr_k

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @k(ptr %out) {
  %v = call i32 @depth(i32 4)
  store i32 %v, ptr %out, align 4
  ret void
}

define internal i32 @depth(i32 %n) {
entry:
  %done = icmp eq i32 %n, 0
  br i1 %done, label %base, label %rec

base:
  %x = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  ret i32 %x

rec:
  %m = sub i32 %n, 1
  %r = call i32 @depth(i32 %m)
  ret i32 %r
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()

!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}
