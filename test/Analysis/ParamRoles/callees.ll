; Calls into defined functions are followed into the callee's argument, and
; a callee that returns its argument hands the pointer back.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-param-roles>' -disable-output %s 2>&1 | FileCheck %s

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%struct.Pair = type { float, float }

define internal void @store_to(ptr %p, float %v) {
  store float %v, ptr %p
  ret void
}

define internal float @load_from(ptr %p) {
  %v = load float, ptr %p
  ret float %v
}

define internal ptr @advance(ptr %p, i64 %n) {
  %q = getelementptr float, ptr %p, i64 %n
  ret ptr %q
}

; Recursive: the guard stops the walk; the store is still seen.
define internal void @fill(ptr %p, i64 %n) {
entry:
  %done = icmp eq i64 %n, 0
  br i1 %done, label %exit, label %more
more:
  store float 0.0, ptr %p
  %next = getelementptr float, ptr %p, i64 1
  %m = sub i64 %n, 1
  call void @fill(ptr %next, i64 %m)
  br label %exit
exit:
  ret void
}

; A callee that takes its argument by value reads it (the copy).
define internal float @by_value(ptr byval(%struct.Pair) %pair) {
  store float 1.0, ptr %pair
  %v = load float, ptr %pair
  ret float %v
}

; CHECK-LABEL: cleave-param-roles: kernel 'through_calls'
; CHECK-NEXT:    arg 0 'out': write
; CHECK-NEXT:    arg 1 'in': read
; CHECK-NEXT:    arg 2 'far': write
; CHECK-NEXT:    arg 3 'zeros': write
; CHECK-NEXT:    arg 4 'pair': read
; CHECK-NEXT:    arg 5 'n': scalar
; CHECK-NOT:     arg
define ptx_kernel void @through_calls(ptr %out, ptr %in, ptr %far, ptr %zeros, ptr %pair, i64 %n) {
  %v = call float @load_from(ptr %in)
  call void @store_to(ptr %out, float %v)
  %end = call ptr @advance(ptr %far, i64 %n)
  store float %v, ptr %end
  call void @fill(ptr %zeros, i64 %n)
  %w = call float @by_value(ptr byval(%struct.Pair) %pair)
  ret void
}

; By-value aggregate parameters of a kernel are values, not buffers; OpenCL
; __local pointers are followed like any other.
; CHECK-LABEL: cleave-param-roles: kernel 'params'
; CHECK-NEXT:    arg 0 'p': scalar
; CHECK-NEXT:    arg 1 'scratch': read-write
; CHECK-NEXT:    arg 2 'out': write
; CHECK-NOT:     arg
define ptx_kernel void @params(ptr byval(%struct.Pair) align 4 %p, ptr addrspace(3) %scratch, ptr addrspace(1) %out) {
  %x = load float, ptr %p
  store float %x, ptr addrspace(3) %scratch
  %y = load float, ptr addrspace(3) %scratch
  store float %y, ptr addrspace(1) %out
  ret void
}

; Non-kernels print nothing.
; CHECK-NOT: cleave-param-roles
define void @not_a_kernel(ptr %p) {
  store float 0.0, ptr %p
  ret void
}
