; memcpy/memmove read their source and write their destination; memset
; writes; atomics read and write.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-param-roles>' -disable-output %s 2>&1 | FileCheck %s

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; CHECK-LABEL: cleave-param-roles: kernel 'copies'
; CHECK-NEXT:    arg 0 'dst': write
; CHECK-NEXT:    arg 1 'src': read
; CHECK-NEXT:    arg 2 'moved': read-write
; CHECK-NEXT:    arg 3 'zeroed': write
; CHECK-NEXT:    arg 4 'n': scalar
; CHECK-NOT:     arg
define ptx_kernel void @copies(ptr %dst, ptr %src, ptr %moved, ptr %zeroed, i64 %n) {
  call void @llvm.memcpy.p0.p0.i64(ptr %dst, ptr %src, i64 %n, i1 false)
  %hi = getelementptr i8, ptr %moved, i64 4
  call void @llvm.memmove.p0.p0.i64(ptr %moved, ptr %hi, i64 %n, i1 false)
  call void @llvm.memset.p0.i64(ptr %zeroed, i8 0, i64 %n, i1 false)
  ret void
}

; Atomic instructions and NVVM atomic intrinsics; a read-only ldg-style
; intrinsic only reads. Lifetime markers are no access.
; CHECK-LABEL: cleave-param-roles: kernel 'atomics'
; CHECK-NEXT:    arg 0 'counter': read-write
; CHECK-NEXT:    arg 1 'flags': read-write
; CHECK-NEXT:    arg 2 'inc': read-write
; CHECK-NEXT:    arg 3 'ro': read
; CHECK-NOT:     arg
define ptx_kernel void @atomics(ptr %counter, ptr %flags, ptr %inc, ptr addrspace(1) %ro) {
  %old = atomicrmw add ptr %counter, i32 1 monotonic
  %pair = cmpxchg ptr %flags, i32 0, i32 1 seq_cst seq_cst
  %r = call i32 @llvm.nvvm.atomic.load.inc.32.p0(ptr %inc, i32 7)
  %v = call i32 @llvm.nvvm.ldg.global.i.i32.p1(ptr addrspace(1) %ro, i32 4)
  %slot = alloca i32
  call void @llvm.lifetime.start.p0(i64 4, ptr %slot)
  call void @llvm.lifetime.end.p0(i64 4, ptr %slot)
  ret void
}

declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memmove.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare i32 @llvm.nvvm.atomic.load.inc.32.p0(ptr, i32)
declare i32 @llvm.nvvm.ldg.global.i.i32.p1(ptr addrspace(1), i32)
declare void @llvm.lifetime.start.p0(i64, ptr)
declare void @llvm.lifetime.end.p0(i64, ptr)
