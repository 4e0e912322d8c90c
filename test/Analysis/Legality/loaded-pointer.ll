; Dereferencing a pointer the kernel read from memory (or built from an
; integer it did not get from a pointer) forbids splitting: the buffer behind
; it has no footprint. The CPU shares the host's address space and may run it.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' -disable-output %s 2>&1 | FileCheck %s --implicit-check-not=issue:

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%struct.Params = type { ptr, i32 }

; CHECK-LABEL: cleave-legality: kernel 'chase'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: loaded-pointer (forbids split) 'load'; pointer from 'load %row'{{$}}
define ptx_kernel void @chase(ptr %rows, ptr %out, i64 %i) {
  %slot = getelementptr ptr, ptr %rows, i64 %i
  %row = load ptr, ptr %slot
  %elt = getelementptr float, ptr %row, i64 %i
  %v = load float, ptr %elt
  %o = getelementptr float, ptr %out, i64 %i
  store float %v, ptr %o
  ret void
}

; An address read as an integer.
; CHECK-LABEL: cleave-legality: kernel 'int_address'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: loaded-pointer (forbids split) 'store'; pointer from 'load %a'{{$}}
define ptx_kernel void @int_address(ptr %addrs) {
  %a = load i64, ptr %addrs
  %p = inttoptr i64 %a to ptr
  store i32 0, ptr %p
  ret void
}

; An address passed as an integer argument.
; CHECK-LABEL: cleave-legality: kernel 'int_argument'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: loaded-pointer (forbids split) 'store'; pointer built from an integer{{$}}
define ptx_kernel void @int_argument(i64 %addr) {
  %p = inttoptr i64 %addr to ptr
  store i32 0, ptr %p
  ret void
}

; A byval struct holding a buffer pointer, which the kernel never writes:
; the pointer is the bytes the host passed, whose buffer addresses the
; runtime translates (argument-pointer).
; CHECK-LABEL: cleave-legality: kernel 'struct_param'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: argument-pointer (forbids split) 'store'; pointer from 'load %out' of a by-value argument{{$}}
define ptx_kernel void @struct_param(ptr readonly byval(%struct.Params) align 8 %p, i64 %i) {
  %out = load ptr, ptr %p, align 8
  %o = getelementptr float, ptr %out, i64 %i
  store float 1.0, ptr %o
  ret void
}

; The same struct, which the kernel may write (no readonly): the pointer it
; loads may be one it stored there.
; CHECK-LABEL: cleave-legality: kernel 'written_struct_param'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: loaded-pointer (forbids split) 'store'; pointer from 'load %out'{{$}}
define ptx_kernel void @written_struct_param(ptr byval(%struct.Params) align 8 %p, i64 %i) {
  %out = load ptr, ptr %p, align 8
  %o = getelementptr float, ptr %out, i64 %i
  store float 1.0, ptr %o
  ret void
}

; A packed struct's pointer field, loaded at an alignment of 1: the runtime
; scans the argument's 8-byte words, where it may not lie.
; CHECK-LABEL: cleave-legality: kernel 'packed_struct_param'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: loaded-pointer (forbids split) 'store'; pointer from 'load %out'{{$}}
define ptx_kernel void @packed_struct_param(ptr readonly byval(<{ i8, ptr }>) align 1 %p, i64 %i) {
  %f = getelementptr inbounds i8, ptr %p, i64 1
  %out = load ptr, ptr %f, align 1
  %o = getelementptr float, ptr %out, i64 %i
  store float 1.0, ptr %o
  ret void
}

; Not loaded pointers: a ptrtoint/inttoptr round trip of an argument with
; integer arithmetic, and a copy kept in a private slot.
; CHECK-LABEL: cleave-legality: kernel 'tracked'
; CHECK-NEXT:    split: yes
; CHECK-NEXT:    cpu: yes
define ptx_kernel void @tracked(ptr %out, ptr %in, i64 %i) {
  %int = ptrtoint ptr %out to i64
  %off = shl i64 %i, 2
  %sum = add i64 %int, %off
  %p = inttoptr i64 %sum to ptr
  store float 1.0, ptr %p
  %slot = alloca ptr
  store ptr %in, ptr %slot
  %copy = load ptr, ptr %slot
  %e = getelementptr float, ptr %copy, i64 %i
  %v = load float, ptr %e
  %o = getelementptr float, ptr %out, i64 %i
  store float %v, ptr %o
  %clamped = call i64 @llvm.umin.i64(i64 %int, i64 %sum)
  %q = inttoptr i64 %clamped to ptr
  store float 2.0, ptr %q
  ret void
}

declare i64 @llvm.umin.i64(i64, i64)

; A pointer loaded from memory but only used in shared memory is no buffer.
@table = internal addrspace(3) global [4 x ptr addrspace(3)] undef
@data = internal addrspace(3) global [64 x float] undef

; CHECK-LABEL: cleave-legality: kernel 'shared_table'
; CHECK-NEXT:    split: yes
; CHECK-NEXT:    cpu: yes
define ptx_kernel void @shared_table(i32 %i) {
  %d = getelementptr [64 x float], ptr addrspace(3) @data, i32 0, i32 %i
  store ptr addrspace(3) %d, ptr addrspace(3) @table
  %p = load ptr addrspace(3), ptr addrspace(3) @table
  store float 0.0, ptr addrspace(3) %p
  ret void
}

; One thread broadcasts a buffer pointer through shared memory: the loaded
; pointer can only be what the kernel stored there, the parameter, so it is
; no loaded-pointer. The address still comes from memory the kernel writes,
; which a merge kernel could not recompute without replaying the broadcast.
@shared_out = internal addrspace(3) global ptr undef

; CHECK-LABEL: cleave-legality: kernel 'broadcast'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: data-dependent-store (forbids split) 'store'; address depends on 'load %p'{{$}}
define ptx_kernel void @broadcast(ptr %out, i32 %tid) {
entry:
  %first = icmp eq i32 %tid, 0
  br i1 %first, label %publish, label %wait
publish:
  store ptr %out, ptr addrspace(3) @shared_out
  br label %wait
wait:
  call void @llvm.nvvm.barrier0()
  %p = load ptr, ptr addrspace(3) @shared_out
  %e = getelementptr float, ptr %p, i32 %tid
  store float 0.0, ptr %e
  ret void
}

; A __device__ variable keeps whatever the host or an earlier launch put
; there: a pointer loaded from it is untracked.
@device_ptr = addrspace(1) global ptr null

; CHECK-LABEL: cleave-legality: kernel 'from_device_variable'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: loaded-pointer (forbids split) 'store'; pointer from 'load %p'{{$}}
; CHECK-NEXT:    issue: data-dependent-store (forbids split) 'store'; address depends on 'load %p'{{$}}
define ptx_kernel void @from_device_variable(ptr %out) {
  store ptr %out, ptr addrspace(1) @device_ptr
  %p = load ptr, ptr addrspace(1) @device_ptr
  store float 0.0, ptr %p
  ret void
}

declare void @llvm.nvvm.barrier0()
