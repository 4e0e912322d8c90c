; memcpy and memset touch [dst, dst + len): a byte variable J in [0, len)
; joins the address, so a constant or argument length stays exact.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-footprint>' \
; RUN:     -disable-output %s 2>&1 | FileCheck %s

; CHECK-LABEL: footprint of 'copy16'
; CHECK-NEXT:    arg 0 'dst': read none, write exact
; CHECK-NEXT:      write 1 byte at 16*tid.x + 16*block.x*ctaid.x + J0
; CHECK-NEXT:        for J0 in [0, 15]
; CHECK-NEXT:    arg 1 'src': read exact, write none
; CHECK-NEXT:      read 1 byte at 16*tid.x + 16*block.x*ctaid.x + J0
; CHECK-NEXT:        for J0 in [0, 15]
; CHECK-NEXT:    arg 2 'scratch': read none, write exact
; CHECK-NEXT:      write 1 byte at 64*tid.x + 64*block.x*ctaid.x + J0
; CHECK-NEXT:        for J0 in [0, arg3 - 1]
; CHECK:           access 2 write 1 exact
; CHECK:             check (affine arg3) 0 9223372036854775807
; CHECK-NEXT:        var J0 range 0 (+ arg3 -1)

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @copy16(ptr %dst, ptr %src, ptr %scratch, i32 %len) {
entry:
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %base = mul nuw nsw i32 %ctaid, %ntid
  %i = add nuw nsw i32 %base, %tid
  %i64 = zext i32 %i to i64
  %off = shl nuw nsw i64 %i64, 4
  %d = getelementptr inbounds i8, ptr %dst, i64 %off
  %s = getelementptr inbounds i8, ptr %src, i64 %off
  call void @llvm.memcpy.p0.p0.i64(ptr %d, ptr %s, i64 16, i1 false)
  %len64 = sext i32 %len to i64
  %row = mul nsw i64 %i64, 64
  %r = getelementptr inbounds i8, ptr %scratch, i64 %row
  call void @llvm.memset.p0.i64(ptr %r, i8 0, i64 %len64, i1 false)
  ret void
}

declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

!nvvm.annotations = !{!0}
!0 = !{ptr @copy16, !"kernel", i32 1}
