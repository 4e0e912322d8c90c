; p[(signed char)(i + 100)]: the i8 index wraps for i > 27. The form is the
; mathematical value, with a check that the runtime evaluates per launch:
; exact while the index stays in [-128, 127], unknown once it could wrap.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-footprint>' \
; RUN:     -disable-output %s 2>&1 | FileCheck %s

; CHECK-LABEL: footprint of 'wrap8'
; CHECK-NEXT:    arg 0 'p': read none, write exact
; CHECK-NEXT:      write 1 byte at tid.x + block.x*ctaid.x + 100
; CHECK:           access 0 write 1 exact
; CHECK-NEXT:        check (affine 100 (tid.x 1) (ctaid.x block.x)) -128 127
; CHECK-NEXT:        at (affine 100 (tid.x 1) (ctaid.x block.x))

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @wrap8(ptr %p) {
entry:
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %base = mul i32 %ctaid, %ntid
  %i = add i32 %base, %tid
  %b = trunc i32 %i to i8
  %x = add i8 %b, 100
  %s = sext i8 %x to i64
  %q = getelementptr inbounds i8, ptr %p, i64 %s
  store i8 0, ptr %q, align 1
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

!nvvm.annotations = !{!0}
!0 = !{ptr @wrap8, !"kernel", i32 1}
