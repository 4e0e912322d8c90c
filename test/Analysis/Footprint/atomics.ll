; Atomics read and write the bytes they address: atomicrmw, cmpxchg and
; NVVM's scoped atomic intrinsics alike. Whether blocks may be split around
; them is the legality analysis's call, not the footprint's.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-footprint>' \
; RUN:     -disable-output %s 2>&1 | FileCheck %s

; CHECK-LABEL: footprint of 'counters'
; CHECK-NEXT:    arg 0 'c': read exact, write exact
; CHECK-NEXT:      read 4 bytes at 4*ctaid.x
; CHECK-NEXT:      write 4 bytes at 4*ctaid.x
; CHECK-NEXT:      read 8 bytes at 8*tid.x + 4096
; CHECK-NEXT:      write 8 bytes at 8*tid.x + 4096
; CHECK-NEXT:      read 4 bytes at 8192
; CHECK-NEXT:      write 4 bytes at 8192
; CHECK-NEXT:    serialized:

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @counters(ptr %c) {
entry:
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %b64 = zext i32 %ctaid to i64
  %p = getelementptr inbounds i32, ptr %c, i64 %b64
  %old = atomicrmw add ptr %p, i32 1 seq_cst, align 4
  %t64 = zext i32 %tid to i64
  %q0 = getelementptr inbounds i8, ptr %c, i64 4096
  %q = getelementptr inbounds i64, ptr %q0, i64 %t64
  %pair = cmpxchg ptr %q, i64 0, i64 1 seq_cst seq_cst, align 8
  %r = getelementptr inbounds i8, ptr %c, i64 8192
  %v = call i32 @llvm.nvvm.atomic.add.gen.i.cta.i32.p0(ptr %r, i32 1)
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.atomic.add.gen.i.cta.i32.p0(ptr, i32)

!nvvm.annotations = !{!0}
!0 = !{ptr @counters, !"kernel", i32 1}
