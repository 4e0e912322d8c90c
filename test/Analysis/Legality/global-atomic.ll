; Atomics on global or generic memory forbid splitting (blocks on different
; devices would race on separate replicas); atomics on shared or private
; memory stay inside a block.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' -disable-output %s 2>&1 | FileCheck %s --implicit-check-not=issue:

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@counter = addrspace(1) global i32 0
@sh = internal addrspace(3) global [64 x i32] undef
@sh2 = internal addrspace(3) global [64 x i32] undef

; CHECK-LABEL: cleave-legality: kernel 'global_atomics'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw add'{{$}}
; CHECK-NEXT:    issue: global-atomic (forbids split) 'cmpxchg'{{$}}
; CHECK-NEXT:    issue: global-atomic (forbids split) 'load atomic'{{$}}
; CHECK-NEXT:    issue: global-atomic (forbids split) 'store atomic'{{$}}
; CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw max'{{$}}
; CHECK-NEXT:    issue: global-atomic (forbids split) 'llvm.nvvm.atomic.load.inc.32.p0'{{$}}
; CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw xchg'{{$}}
define ptx_kernel void @global_atomics(ptr addrspace(1) %p, ptr %q, i1 %c, i32 %i) {
  %a = atomicrmw add ptr addrspace(1) %p, i32 1 monotonic
  %x = cmpxchg ptr addrspace(1) @counter, i32 0, i32 1 seq_cst seq_cst
  ; Ordered loads and stores on global memory exist to talk to other blocks.
  %l = load atomic i32, ptr addrspace(1) %p acquire, align 4
  store atomic i32 %l, ptr addrspace(1) %p release, align 4
  ; A generic pointer from an argument may be global.
  %m = atomicrmw max ptr %q, i32 %l monotonic
  %n = call i32 @llvm.nvvm.atomic.load.inc.32.p0(ptr %q, i32 7)
  ; Generic, shared on one side only: may be global.
  %s = getelementptr [64 x i32], ptr addrspace(3) @sh, i32 0, i32 %i
  %sg = addrspacecast ptr addrspace(3) %s to ptr
  %either = select i1 %c, ptr %sg, ptr %q
  %e = atomicrmw xchg ptr %either, i32 0 monotonic
  ret void
}

; CHECK-LABEL: cleave-legality: kernel 'block_local_atomics'
; CHECK-NEXT:    split: yes
; CHECK-NEXT:    cpu: yes
define ptx_kernel void @block_local_atomics(i32 %i, i1 %c) {
entry:
  %s = getelementptr [64 x i32], ptr addrspace(3) @sh, i32 0, i32 %i
  %a = atomicrmw add ptr addrspace(3) %s, i32 1 monotonic
  ; Generic pointers provably into shared memory: a cast instruction, a
  ; constant cast, and a phi over two shared arrays.
  %g = addrspacecast ptr addrspace(3) %s to ptr
  %b = atomicrmw add ptr %g, i32 1 monotonic
  %k = atomicrmw add ptr addrspacecast (ptr addrspace(3) @sh to ptr), i32 1 monotonic
  br i1 %c, label %other, label %join
other:
  br label %join
join:
  %phi = phi ptr [ addrspacecast (ptr addrspace(3) @sh to ptr), %entry ], [ addrspacecast (ptr addrspace(3) @sh2 to ptr), %other ]
  %d = call i32 @llvm.nvvm.atomic.add.gen.i.cta.i32.p0(ptr %phi, i32 1)
  ; Private memory.
  %slot = alloca i32
  %e = atomicrmw add ptr %slot, i32 1 monotonic
  ret void
}

; An atomic in a callee is judged by what the kernel passes: from this kernel
; only shared memory reaches it.
define internal void @bump(ptr %p) {
  %a = atomicrmw add ptr %p, i32 1 monotonic
  ret void
}

; CHECK-LABEL: cleave-legality: kernel 'bump_shared'
; CHECK-NEXT:    split: yes
; CHECK-NEXT:    cpu: yes
define ptx_kernel void @bump_shared() {
  call void @bump(ptr addrspacecast (ptr addrspace(3) @sh to ptr))
  ret void
}

; The same callee reached with a global buffer: the issue is on the atomic in
; the callee.
; CHECK-LABEL: cleave-legality: kernel 'bump_global'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw add'{{$}}
define ptx_kernel void @bump_global(ptr %out) {
  call void @bump(ptr addrspacecast (ptr addrspace(3) @sh to ptr))
  call void @bump(ptr %out)
  ret void
}

declare i32 @llvm.nvvm.atomic.load.inc.32.p0(ptr, i32)
declare i32 @llvm.nvvm.atomic.add.gen.i.cta.i32.p0(ptr, i32)
