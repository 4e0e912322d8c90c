; Roles follow copies of a parameter: GEPs, casts, ptrtoint/inttoptr round
; trips, selects, phis and copies kept in allocas.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-param-roles>' -disable-output %s 2>&1 | FileCheck %s

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; A select between two parameters gives both the access.
; CHECK-LABEL: cleave-param-roles: kernel 'selected'
; CHECK-NEXT:    arg 0 'a': write
; CHECK-NEXT:    arg 1 'b': write
; CHECK-NEXT:    arg 2 'in': read
; CHECK-NEXT:    arg 3 'c': scalar
; CHECK-NOT:     arg
define ptx_kernel void @selected(ptr %a, ptr %b, ptr %in, i1 %c) {
  %v = load float, ptr %in
  %p = select i1 %c, ptr %a, ptr %b
  store float %v, ptr %p
  ret void
}

; A phi walking a pointer through a loop: read on one path, written on the
; other.
; CHECK-LABEL: cleave-param-roles: kernel 'walked'
; CHECK-NEXT:    arg 0 'buf': read-write
; CHECK-NEXT:    arg 1 'n': scalar
; CHECK-NOT:     arg
define ptx_kernel void @walked(ptr %buf, i64 %n) {
entry:
  br label %loop
loop:
  %p = phi ptr [ %buf, %entry ], [ %next, %loop ]
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %x = load float, ptr %p
  %y = fadd float %x, 1.0
  store float %y, ptr %p
  %next = getelementptr float, ptr %p, i64 1
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

; Address-space casts and integer round trips keep the parameter's identity.
; CHECK-LABEL: cleave-param-roles: kernel 'casted'
; CHECK-NEXT:    arg 0 'out': write
; CHECK-NEXT:    arg 1 'in': read
; CHECK-NEXT:    arg 2 'i': scalar
; CHECK-NOT:     arg
define ptx_kernel void @casted(ptr %out, ptr %in, i64 %i) {
  %g = addrspacecast ptr %in to ptr addrspace(1)
  %e = getelementptr float, ptr addrspace(1) %g, i64 %i
  %v = load float, ptr addrspace(1) %e
  %int = ptrtoint ptr %out to i64
  %off = shl i64 %i, 2
  %addr = add i64 %int, %off
  %p = inttoptr i64 %addr to ptr
  store float %v, ptr %p
  ret void
}

; A copy stored in a private slot and reloaded (what mem2reg would remove).
; CHECK-LABEL: cleave-param-roles: kernel 'slot_copy'
; CHECK-NEXT:    arg 0 'out': write
; CHECK-NEXT:    arg 1 'in': read
; CHECK-NOT:     arg
define ptx_kernel void @slot_copy(ptr %out, ptr %in) {
  %out.addr = alloca ptr
  %in.addr = alloca ptr
  store ptr %out, ptr %out.addr
  store ptr %in, ptr %in.addr
  %i = load ptr, ptr %in.addr
  %o = load ptr, ptr %out.addr
  %v = load float, ptr %i
  store float %v, ptr %o
  ret void
}

; One thread broadcasts the pointer through shared memory; the block reloads
; it from there.
@shared_ptr = internal addrspace(3) global ptr undef

; CHECK-LABEL: cleave-param-roles: kernel 'broadcast'
; CHECK-NEXT:    arg 0 'out': write
; CHECK-NEXT:    arg 1 'i': scalar
; CHECK-NOT:     arg
define ptx_kernel void @broadcast(ptr %out, i64 %i) {
  store ptr %out, ptr addrspace(3) @shared_ptr
  call void @llvm.nvvm.barrier0()
  %p = load ptr, ptr addrspace(3) @shared_ptr
  %e = getelementptr float, ptr %p, i64 %i
  store float 0.0, ptr %e
  ret void
}

declare void @llvm.nvvm.barrier0()

; Integer address arithmetic through a pure intrinsic, and an alignment test
; (urem, branch) that reads nothing.
; CHECK-LABEL: cleave-param-roles: kernel 'int_math'
; CHECK-NEXT:    arg 0 'out': write
; CHECK-NEXT:    arg 1 'limit': scalar
; CHECK-NOT:     arg
define ptx_kernel void @int_math(ptr %out, i64 %limit) {
entry:
  %int = ptrtoint ptr %out to i64
  %rem = urem i64 %int, 16
  %aligned = icmp eq i64 %rem, 0
  br i1 %aligned, label %store, label %exit
store:
  %clamped = call i64 @llvm.umin.i64(i64 %int, i64 %limit)
  %p = inttoptr i64 %clamped to ptr
  store float 0.0, ptr %p
  br label %exit
exit:
  ret void
}

declare i64 @llvm.umin.i64(i64, i64)

; Unused pointers, and comparisons of addresses, which access nothing.
; CHECK-LABEL: cleave-param-roles: kernel 'compared'
; CHECK-NEXT:    arg 0 'a': unused
; CHECK-NEXT:    arg 1 'b': unused
; CHECK-NEXT:    arg 2 'flag': write
; CHECK-NOT:     arg
define ptx_kernel void @compared(ptr %a, ptr %b, ptr %flag) {
  %same = icmp eq ptr %a, %b
  %z = zext i1 %same to i32
  store i32 %z, ptr %flag
  ret void
}
