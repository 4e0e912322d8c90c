; What is and is not a buffer: a select between two parameters makes both
; unknown; a byval struct is the kernel's own copy (not a buffer), and a bound
; loaded from it is data, so the store it guards is only bounded; a device
; function is not analysed.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-footprint>' \
; RUN:     -disable-output %s 2>&1 | FileCheck %s

; CHECK-LABEL: footprint of 'pick'
; CHECK-NEXT:    arg 0 'a': read unknown, write none
; CHECK-NEXT:      read unknown: address selects between buffers
; CHECK-NEXT:    arg 1 'b': read unknown, write none
; CHECK-NEXT:      read unknown: address selects between buffers
; CHECK-NEXT:    arg 2 'out': read none, write exact
; CHECK-NEXT:      write 4 bytes at 4*tid.x

; CHECK-LABEL: footprint of 'scale'
; CHECK-NEXT:    arg 1 'out': read none, write bounded
; CHECK-NEXT:      write 4 bytes at 4*tid.x (bounded)
; CHECK-NEXT:        ; condition %in is not an affine comparison
; CHECK:         serialized:
; CHECK:           arg 0 other params
; CHECK-NEXT:      arg 1 ptr out

; CHECK-NOT:     footprint of 'helper'

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%struct.P = type { ptr, i32 }

define void @pick(ptr %a, ptr %b, ptr %out, i32 %which) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %c = icmp eq i32 %which, 0
  %src = select i1 %c, ptr %a, ptr %b
  %t64 = zext i32 %tid to i64
  %p = getelementptr inbounds float, ptr %src, i64 %t64
  %v = load float, ptr %p, align 4
  %q = getelementptr inbounds float, ptr %out, i64 %t64
  store float %v, ptr %q, align 4
  ret void
}

define void @scale(ptr byval(%struct.P) align 8 %params, ptr %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %np = getelementptr inbounds i8, ptr %params, i64 8
  %n = load i32, ptr %np, align 8
  %in = icmp slt i32 %tid, %n
  br i1 %in, label %body, label %exit

body:
  %t64 = zext i32 %tid to i64
  %q = getelementptr inbounds float, ptr %out, i64 %t64
  store float 1.0, ptr %q, align 4
  br label %exit

exit:
  ret void
}

define void @helper(ptr %p) {
  store i32 0, ptr %p, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

!nvvm.annotations = !{!0, !1}
!0 = !{ptr @pick, !"kernel", i32 1}
!1 = !{ptr @scale, !"kernel", i32 1}
