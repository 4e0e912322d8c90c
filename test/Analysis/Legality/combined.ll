; Combined parameters: a pointer parameter that only integer atomics of one
; commutative kind with unused results update does not forbid splitting
; (each device updates its own replica, started at the operation's
; identity, and the replicas are combined afterwards). Anything else that
; touches the parameter keeps its atomics a global-atomic issue.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' -disable-output %s 2>&1 | FileCheck %s --implicit-check-not=issue: --implicit-check-not=combine:

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; add and sub combine by addition; or, umax on i64; through a phi of two
; pointers derived from the same parameter.
; CHECK-LABEL: cleave-legality: kernel 'combinable'
; CHECK-NEXT:    split: yes
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    combine: arg 0 add i32 'atomicrmw add'{{$}}
; CHECK-NEXT:    combine: arg 1 or i32 'atomicrmw or'{{$}}
; CHECK-NEXT:    combine: arg 2 umax i64 'atomicrmw umax'{{$}}
define ptx_kernel void @combinable(ptr %bins, ptr addrspace(1) %flags, ptr %hi, i32 %i, i1 %c) {
entry:
  %p = getelementptr i32, ptr %bins, i32 %i
  %a = atomicrmw add ptr %p, i32 1 monotonic
  %s = atomicrmw sub ptr %bins, i32 2 seq_cst
  %f = getelementptr i32, ptr addrspace(1) %flags, i32 %i
  %o = atomicrmw or ptr addrspace(1) %f, i32 4 monotonic
  br i1 %c, label %other, label %join
other:
  %q = getelementptr i64, ptr %hi, i32 3
  br label %join
join:
  %h = phi ptr [ %hi, %entry ], [ %q, %other ]
  %m = atomicrmw umax ptr %h, i64 9 monotonic
  ret void
}

; CHECK-LABEL: cleave-legality: kernel 'result_used'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw add'{{$}}
define ptx_kernel void @result_used(ptr %next, ptr %ticket) {
  %t = atomicrmw add ptr %next, i32 1 monotonic
  store i32 %t, ptr %ticket
  ret void
}

; Two kinds of update, a read, a plain store, a signed max, a float add, an
; exchange: each parameter keeps its issue.
; CHECK-LABEL: cleave-legality: kernel 'not_combinable'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw add'{{$}}
; CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw or'{{$}}
; CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw add'{{$}}
; CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw add'{{$}}
; CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw max'{{$}}
; CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw fadd'{{$}}
; CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw xchg'{{$}}
define ptx_kernel void @not_combinable(ptr %mixed, ptr %read, ptr %stored, ptr %smax, ptr %fsum, ptr %xchg, ptr %out) {
  %a = atomicrmw add ptr %mixed, i32 1 monotonic
  %b = atomicrmw or ptr %mixed, i32 1 monotonic
  %c = atomicrmw add ptr %read, i32 1 monotonic
  %v = load i32, ptr %read
  store i32 %v, ptr %out
  %d = atomicrmw add ptr %stored, i32 1 monotonic
  store i32 0, ptr %stored
  %e = atomicrmw max ptr %smax, i32 1 monotonic
  %f = atomicrmw fadd ptr %fsum, float 1.0 monotonic
  %g = atomicrmw xchg ptr %xchg, i32 1 monotonic
  ret void
}

; A select between two parameters: either may be updated, and the other
; parameter is also read.
; CHECK-LABEL: cleave-legality: kernel 'either'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw add'{{$}}
define ptx_kernel void @either(ptr %a, ptr %b, i1 %c, ptr %out) {
  %p = select i1 %c, ptr %a, ptr %b
  %x = atomicrmw add ptr %p, i32 1 monotonic
  %v = load i32, ptr %b
  store i32 %v, ptr %out
  ret void
}

; Passed to a callee that is not inlined: not followed.
; CHECK-LABEL: cleave-legality: kernel 'passed_on'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw add'{{$}}
define internal void @bump(ptr %p) noinline {
  %x = atomicrmw add ptr %p, i32 1 monotonic
  ret void
}
define ptx_kernel void @passed_on(ptr %bins) {
  call void @bump(ptr %bins)
  ret void
}
