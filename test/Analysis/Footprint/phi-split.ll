; Two phis of one join block feed one address. The access is split along the
; incoming edges of the join, both phis taking the same edge, and each half
; keeps the branch condition of its edge: exact.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-footprint>' \
; RUN:     -disable-output %s 2>&1 | FileCheck %s

; CHECK-LABEL: footprint of 'diamond'
; CHECK-NEXT:    arg 0 'p': read none, write exact
; CHECK-NEXT:      write 4 bytes at 4*tid.x + 4
; CHECK-NEXT:        if tid.x <= arg1 - 1
; CHECK-NEXT:      write 4 bytes at 4*block.x*ctaid.x
; CHECK-NEXT:        if tid.x >= arg1
; CHECK-NEXT:    serialized:

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @diamond(ptr %p, i32 %n) {
entry:
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %base = mul nuw nsw i32 %ctaid, %ntid
  %c = icmp slt i32 %tid, %n
  br i1 %c, label %left, label %right

left:
  br label %join

right:
  br label %join

join:
  %a = phi i32 [ %tid, %left ], [ 0, %right ]
  %b = phi i32 [ 1, %left ], [ %base, %right ]
  %s = add nuw nsw i32 %a, %b
  %s64 = zext i32 %s to i64
  %q = getelementptr inbounds float, ptr %p, i64 %s64
  store float 0.0, ptr %q, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

!nvvm.annotations = !{!0}
!0 = !{ptr @diamond, !"kernel", i32 1}
