; A branch whose other side goes straight back to the loop header (a second
; latch, as without loop-simplify) leaves the iteration: its condition guards
; the store. Here it is not affine (the trip count is not computable with two
; latches), so the store is bounded, never claimed exact: a thread with
; tid == 0 never stores.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-footprint>' \
; RUN:     -disable-output %s 2>&1 | FileCheck %s

; CHECK-LABEL: footprint of 'skip'
; CHECK-NEXT:    arg 0 'p': read none, write bounded
; CHECK-NEXT:      write 4 bytes at 4*tid.x (bounded)
; CHECK-DAG:         ; condition %c is not an affine comparison
; CHECK-DAG:         ; condition %done is not an affine comparison

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; for (i = 0; i != n; ++i) { if (i >= tid) continue; p[tid] = 0; }
define void @skip(ptr %p, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  br label %header

header:
  %i = phi i32 [ 0, %entry ], [ %i1, %next ], [ %i1, %body ]
  %done = icmp eq i32 %i, %n
  br i1 %done, label %exit, label %next

next:
  %i1 = add nuw nsw i32 %i, 1
  %c = icmp slt i32 %i, %tid
  br i1 %c, label %body, label %header

body:
  %t64 = zext i32 %tid to i64
  %q = getelementptr inbounds float, ptr %p, i64 %t64
  store float 0.0, ptr %q, align 4
  br label %header

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

!nvvm.annotations = !{!0}
!0 = !{ptr @skip, !"kernel", i32 1}
