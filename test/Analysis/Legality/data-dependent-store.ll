; Store addresses that depend on data the kernel writes, through the paths
; the slice follows: branch conditions choosing phi inputs, callees (their
; arguments and returned values), atomics, opaque calls, private slots,
; volatile loads, and memset lengths.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' -disable-output %s 2>&1 | FileCheck %s --implicit-check-not=issue:

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@counter = addrspace(1) global i32 0
@lut = addrspace(4) constant [4 x i32] [i32 0, i32 1, i32 2, i32 3]

; The branch that picks the phi input reads the output: a triangle (the
; condition is in the incoming block itself)...
; CHECK-LABEL: cleave-legality: kernel 'phi_triangle'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: data-dependent-store (forbids split) 'store'; address depends on 'load %v'{{$}}
define ptx_kernel void @phi_triangle(ptr %out, i32 %i) {
entry:
  %p = getelementptr i32, ptr %out, i32 %i
  %v = load i32, ptr %p
  %c = icmp sgt i32 %v, 0
  br i1 %c, label %then, label %join
then:
  br label %join
join:
  %j = phi i32 [ %i, %entry ], [ 7, %then ]
  %q = getelementptr i32, ptr %out, i32 %j
  store i32 1, ptr %q
  ret void
}

; ...and a diamond (the condition is in a predecessor of the incoming
; blocks).
; CHECK-LABEL: cleave-legality: kernel 'phi_diamond'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: data-dependent-store (forbids split) 'store'; address depends on 'load %v'{{$}}
define ptx_kernel void @phi_diamond(ptr %out, i32 %i) {
entry:
  %p = getelementptr i32, ptr %out, i32 %i
  %v = load i32, ptr %p
  %c = icmp sgt i32 %v, 0
  br i1 %c, label %a, label %b
a:
  br label %join
b:
  br label %join
join:
  %j = phi i32 [ 1, %a ], [ 2, %b ]
  %q = getelementptr i32, ptr %out, i32 %j
  store i32 1, ptr %q
  ret void
}

; The same diamond deciding on a read-only input: fine.
; CHECK-LABEL: cleave-legality: kernel 'phi_on_input'
; CHECK-NEXT:    split: yes
; CHECK-NEXT:    cpu: yes
define ptx_kernel void @phi_on_input(ptr %out, ptr %in, i32 %i) {
entry:
  %p = getelementptr i32, ptr %in, i32 %i
  %v = load i32, ptr %p
  %c = icmp sgt i32 %v, 0
  br i1 %c, label %a, label %b
a:
  br label %join
b:
  br label %join
join:
  %j = phi i32 [ 1, %a ], [ 2, %b ]
  %q = getelementptr i32, ptr %out, i32 %j
  store i32 1, ptr %q
  ret void
}

; A loop whose induction variable is pure, bounded by a scalar: fine.
; CHECK-LABEL: cleave-legality: kernel 'loop'
; CHECK-NEXT:    split: yes
; CHECK-NEXT:    cpu: yes
define ptx_kernel void @loop(ptr %out, ptr %in, i32 %n) {
entry:
  br label %body
body:
  %k = phi i32 [ 0, %entry ], [ %k1, %body ]
  %src = getelementptr float, ptr %in, i32 %k
  %x = load float, ptr %src
  %dst = getelementptr float, ptr %out, i32 %k
  store float %x, ptr %dst
  %k1 = add i32 %k, 1
  %more = icmp slt i32 %k1, %n
  br i1 %more, label %body, label %exit
exit:
  ret void
}

; A loop that runs until it finds a marker in the output it writes.
; CHECK-LABEL: cleave-legality: kernel 'loop_on_output'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: data-dependent-store (forbids split) 'store'; address depends on 'load %m'{{$}}
define ptx_kernel void @loop_on_output(ptr %out) {
entry:
  br label %body
body:
  %k = phi i32 [ 0, %entry ], [ %k1, %body ]
  %dst = getelementptr i32, ptr %out, i32 %k
  store i32 0, ptr %dst
  %k1 = add i32 %k, 1
  %next = getelementptr i32, ptr %out, i32 %k1
  %m = load i32, ptr %next
  %more = icmp ne i32 %m, -1
  br i1 %more, label %body, label %exit
exit:
  ret void
}

; Appending to a queue: the slot comes from a global atomic.
; CHECK-LABEL: cleave-legality: kernel 'append'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw add'{{$}}
; CHECK-NEXT:    issue: data-dependent-store (forbids split) 'store'; address depends on 'atomicrmw add %slot'{{$}}
define ptx_kernel void @append(ptr %queue, i32 %item) {
  %slot = atomicrmw add ptr addrspace(1) @counter, i32 1 monotonic
  %dst = getelementptr i32, ptr %queue, i32 %slot
  store i32 %item, ptr %dst
  ret void
}

; Through a defined callee: its result is a load of the output...
define internal i32 @get(ptr %p, i32 %i) {
  %q = getelementptr i32, ptr %p, i32 %i
  %v = load i32, ptr %q
  ret i32 %v
}

; CHECK-LABEL: cleave-legality: kernel 'callee_result'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: data-dependent-store (forbids split) 'store'; address depends on 'load %v'{{$}}
define ptx_kernel void @callee_result(ptr %out, i32 %i) {
  %k = call i32 @get(ptr %out, i32 %i)
  %dst = getelementptr i32, ptr %out, i32 %k
  store i32 0, ptr %dst
  ret void
}

; ...and a store in a callee whose index argument the kernel read from the
; output. The issue is on the callee's store.
define internal void @put(ptr %o, i32 %k) {
  %dst = getelementptr i32, ptr %o, i32 %k
  store i32 0, ptr %dst
  ret void
}

; CHECK-LABEL: cleave-legality: kernel 'callee_argument'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: data-dependent-store (forbids split) 'store'; address depends on 'load %k'{{$}}
define ptx_kernel void @callee_argument(ptr %out, i32 %i) {
  %src = getelementptr i32, ptr %out, i32 %i
  %k = load i32, ptr %src
  call void @put(ptr %out, i32 %k)
  ret void
}

; The same callee with a pure index: fine.
; CHECK-LABEL: cleave-legality: kernel 'callee_pure'
; CHECK-NEXT:    split: yes
; CHECK-NEXT:    cpu: yes
define ptx_kernel void @callee_pure(ptr %out, i32 %i) {
  call void @put(ptr %out, i32 %i)
  ret void
}

; An index kept in a private slot that the kernel wrote: conservatively the
; load of the slot is written data.
; CHECK-LABEL: cleave-legality: kernel 'private_slot'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: data-dependent-store (forbids split) 'store'; address depends on 'load %k'{{$}}
define ptx_kernel void @private_slot(ptr %out, i32 %i) {
  %slot = alloca i32
  store i32 %i, ptr %slot
  %k = load i32, ptr %slot
  %dst = getelementptr i32, ptr %out, i32 %k
  store i32 0, ptr %dst
  ret void
}

; A volatile read may change under us even from a read-only input; a read
; from a constant table never does.
; CHECK-LABEL: cleave-legality: kernel 'volatile_and_constant'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: data-dependent-store (forbids split) 'store'; address depends on 'load %k'{{$}}
define ptx_kernel void @volatile_and_constant(ptr %out, ptr %in, i32 %i) {
  %k = load volatile i32, ptr %in
  %dst = getelementptr i32, ptr %out, i32 %k
  store i32 0, ptr %dst
  %t = getelementptr [4 x i32], ptr addrspace(4) @lut, i32 0, i32 %i
  %c = load i32, ptr addrspace(4) %t
  %dst2 = getelementptr i32, ptr %out, i32 %c
  store i32 0, ptr %dst2
  ret void
}

; How many bytes a memset writes counts like its address.
; CHECK-LABEL: cleave-legality: kernel 'memset_length'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: data-dependent-store (forbids split) 'call llvm.memset.p0.i64'; address depends on 'load %n'{{$}}
define ptx_kernel void @memset_length(ptr %out) {
  %n = load i64, ptr %out
  call void @llvm.memset.p0.i64(ptr %out, i8 0, i64 %n, i1 false)
  ret void
}

; An index read through a pointer loaded from an input: where it points is
; unknown and the kernel writes global memory, so it may be written data.
; CHECK-LABEL: cleave-legality: kernel 'unknown_source'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: loaded-pointer (forbids split) 'load'; pointer from 'load %t'{{$}}
; CHECK-NEXT:    issue: data-dependent-store (forbids split) 'store'; address depends on 'load %k'{{$}}
define ptx_kernel void @unknown_source(ptr %out, ptr %tables) {
  %t = load ptr, ptr %tables
  %k = load i32, ptr %t
  %dst = getelementptr i32, ptr %out, i32 %k
  store i32 0, ptr %dst
  ret void
}

; Warp shuffles exchange values of the same slice: fine.
; CHECK-LABEL: cleave-legality: kernel 'shuffled_index'
; CHECK-NEXT:    split: yes
; CHECK-NEXT:    cpu: yes
define ptx_kernel void @shuffled_index(ptr %out, i32 %i) {
  %k = call i32 @llvm.nvvm.shfl.sync.down.i32(i32 -1, i32 %i, i32 1, i32 31)
  %dst = getelementptr i32, ptr %out, i32 %k
  store i32 0, ptr %dst
  ret void
}

declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare i32 @llvm.nvvm.shfl.sync.down.i32(i32, i32, i32, i32)
