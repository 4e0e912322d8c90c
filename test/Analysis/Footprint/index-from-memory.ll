; out[i] = in[idx[i]]: the index into 'in' is loaded from memory, so nothing
; bounds it and its footprint is unknown (the whole buffer). The other two
; buffers stay exact.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-footprint>' \
; RUN:     -disable-output %s 2>&1 | FileCheck %s

; CHECK-LABEL: footprint of 'gather'
; CHECK-NEXT:    arg 0 'out': read none, write exact
; CHECK-NEXT:      write 4 bytes at 4*tid.x + 4*block.x*ctaid.x
; CHECK-NEXT:        if tid.x + block.x*ctaid.x <= arg3 - 1
; CHECK-NEXT:    arg 1 'in': read unknown, write none
; CHECK-NEXT:      read unknown: offset (4 * (sext i32 %j to i64))<nsw> is not affine: value %j is not bounded
; CHECK-NEXT:    arg 2 'idx': read exact, write none
; CHECK:         serialized:
; CHECK:           arg 0 ptr out
; CHECK:           unknown 1 read # offset
; CHECK-NOT:       access 1

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @gather(ptr %out, ptr %in, ptr %idx, i32 %n) {
entry:
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %base = mul i32 %ctaid, %ntid
  %i = add i32 %base, %tid
  %inb = icmp slt i32 %i, %n
  br i1 %inb, label %body, label %exit

body:
  %i64 = sext i32 %i to i64
  %pidx = getelementptr inbounds i32, ptr %idx, i64 %i64
  %j = load i32, ptr %pidx, align 4
  %j64 = sext i32 %j to i64
  %pin = getelementptr inbounds float, ptr %in, i64 %j64
  %v = load float, ptr %pin, align 4
  %pout = getelementptr inbounds float, ptr %out, i64 %i64
  store float %v, ptr %pout, align 4
  br label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

!nvvm.annotations = !{!0}
!0 = !{ptr @gather, !"kernel", i32 1}
