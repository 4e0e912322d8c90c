; Kernels that get no merge kernel, each with the missed remark that says
; why, and one that does. Some refusals come from legality (the kernel is
; not split at all: data-dependent-store, global-atomic); the others from
; the merge-safety check, which also looks at the branches that control each
; store and at how each store reaches its output.
;
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes=cleave-merge,verify \
; RUN:     -pass-remarks-missed=cleave-merge -S %s -o %t.ll 2> %t.remarks
; RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
; RUN: FileCheck %s < %t.ll

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@table = addrspace(1) global [64 x i32] zeroinitializer, align 4

; out[out[i]] = 1: which location is written depends on what the kernel
; (another block, maybe on another device) wrote there.
; REMARK: remark: <unknown>:0:0: kernel 'indirect_addr' is not split: data-dependent-store 'store'; it depends on a 'load'
define void @indirect_addr(ptr %out) {
  %i = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr i32, ptr %out, i32 %i
  %j = load i32, ptr %p, align 4
  %q = getelementptr i32, ptr %out, i32 %j
  store i32 1, ptr %q, align 4
  ret void
}

; if (out[i] > 0) out[i + 64] = 1: the address is fine, the predicate is not.
; REMARK: remark: <unknown>:0:0: kernel 'pred_reads_output' gets no merge kernel: store into output 'out' is controlled by a branch that depends on data the kernel writes (load)
define void @pred_reads_output(ptr %out) {
entry:
  %i = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr i32, ptr %out, i32 %i
  %v = load i32, ptr %p, align 4
  %c = icmp sgt i32 %v, 0
  br i1 %c, label %then, label %exit

then:
  %k = add i32 %i, 64
  %q = getelementptr i32, ptr %out, i32 %k
  store i32 1, ptr %q, align 4
  br label %exit

exit:
  ret void
}

; The result depends on the order of the updates.
; REMARK: remark: <unknown>:0:0: kernel 'atomic_out' gets no merge kernel: atomic atomicrmw add into output 'out': the result depends on the order of the updates
define void @atomic_out(ptr %out) {
  %i = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr i32, ptr %out, i32 %i
  %old = atomicrmw add ptr %p, i32 1 monotonic, align 4
  ret void
}

; REMARK: remark: <unknown>:0:0: kernel 'volatile_out' gets no merge kernel: volatile store into output 'out'
define void @volatile_out(ptr %out) {
  %i = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr i32, ptr %out, i32 %i
  store volatile i32 1, ptr %p, align 4
  ret void
}

; The same store writes one output or the other.
; REMARK: remark: <unknown>:0:0: kernel 'either_output' gets no merge kernel: store writes through a pointer that cannot be traced to exactly one parameter
define void @either_output(ptr %a, ptr %b, i32 %n) {
  %i = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %c = icmp slt i32 %i, %n
  %base = select i1 %c, ptr %a, ptr %b
  %p = getelementptr i32, ptr %base, i32 %i
  store i32 1, ptr %p, align 4
  ret void
}

; A write into a __device__ array: no parameter to merge it through.
; REMARK: remark: <unknown>:0:0: kernel 'global_array' gets no merge kernel: store writes through a pointer that cannot be traced to exactly one parameter
define void @global_array(ptr %out) {
  %i = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr i32, ptr %out, i32 %i
  store i32 1, ptr %p, align 4
  %g = getelementptr [64 x i32], ptr addrspace(1) @table, i32 0, i32 %i
  store i32 2, ptr addrspace(1) %g, align 4
  ret void
}

; A call that writes the output where the merge kernel cannot rewrite it.
; REMARK: remark: <unknown>:0:0: kernel 'calls_writer' gets no merge kernel: call to 'fill' may write an output; inline it
define void @calls_writer(ptr %out) {
  %i = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr i32, ptr %out, i32 %i
  call void @fill(ptr %p)
  ret void
}

define internal void @fill(ptr %p) noinline memory(argmem: write) {
  store i32 5, ptr %p, align 4
  ret void
}

; REMARK-NOT: remark

; Only the control kernel gets a merge kernel.
; CHECK-NOT: define {{.*}}@__cleave_merge_
; CHECK:     define void @__cleave_merge_fine(
; CHECK-NOT: define {{.*}}@__cleave_merge_
define void @fine(ptr %out) {
  %i = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr i32, ptr %out, i32 %i
  store i32 1, ptr %p, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

!nvvm.annotations = !{!0, !1, !2, !3, !4, !5, !6, !7}
!0 = !{ptr @indirect_addr, !"kernel", i32 1}
!1 = !{ptr @pred_reads_output, !"kernel", i32 1}
!2 = !{ptr @atomic_out, !"kernel", i32 1}
!3 = !{ptr @volatile_out, !"kernel", i32 1}
!4 = !{ptr @either_output, !"kernel", i32 1}
!5 = !{ptr @global_array, !"kernel", i32 1}
!6 = !{ptr @calls_writer, !"kernel", i32 1}
!7 = !{ptr @fine, !"kernel", i32 1}
