; cleave-swap-grid: the twin of a 2-D kernel reads y where the kernel reads
; x and the other way round (block index and grid size), is marked as a
; kernel like it, and keeps every other instruction; kernels that read the
; block index along z, that do not read it along x, that call a function
; reading it, or that are launched in clusters get no twin, with the
; reason; a 1-D kernel gets no remark.
; Running the pass twice makes nothing the second time.
;
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes=cleave-swap-grid,verify \
; RUN:     -pass-remarks=cleave-swap-grid -pass-remarks-missed=cleave-swap-grid \
; RUN:     %s -S -o %t.ll 2> %t.remarks
; RUN: FileCheck %s < %t.ll
; RUN: FileCheck %s --check-prefix=REMARK --implicit-check-not=remark < %t.remarks
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes=cleave-swap-grid,cleave-swap-grid \
; RUN:     %s -S -o - | grep -c '^define' | FileCheck %s --check-prefix=TWICE
; TWICE: 8

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; The original is unchanged.
; CHECK-LABEL: define ptx_kernel void @transpose(
; CHECK: %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
; CHECK: %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
; CHECK: %gx = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
define ptx_kernel void @transpose(ptr noundef readonly %in, ptr noundef writeonly %out, i32 noundef %w, i32 noundef %h) #0 {
entry:
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %gx = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %x0 = shl i32 %bx, 4
  %x = add i32 %x0, %tx
  %okx = icmp slt i32 %x, %w
  %oky = icmp slt i32 %by, %h
  %ok = and i1 %okx, %oky
  br i1 %ok, label %body, label %exit
body:
  %src0 = mul i32 %by, %w
  %src = add i32 %src0, %x
  %si = sext i32 %src to i64
  %pi = getelementptr inbounds float, ptr %in, i64 %si
  %v = load float, ptr %pi, align 4
  %dst0 = mul i32 %x, %h
  %dst = add i32 %dst0, %by
  %di = sext i32 %dst to i64
  %po = getelementptr inbounds float, ptr %out, i64 %di
  store float %v, ptr %po, align 4
  br label %exit
exit:
  ret void
}

define ptx_kernel void @one_d(ptr noundef %p) #0 {
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %i = sext i32 %bx to i64
  %q = getelementptr inbounds float, ptr %p, i64 %i
  store float 1.0, ptr %q, align 4
  ret void
}

define ptx_kernel void @three_d(ptr noundef %p) #0 {
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %bz = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %s0 = add i32 %bx, %by
  %s = add i32 %s0, %bz
  %i = sext i32 %s to i64
  %q = getelementptr inbounds float, ptr %p, i64 %i
  store float 1.0, ptr %q, align 4
  ret void
}

define ptx_kernel void @y_only(ptr noundef %p) #0 {
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %i = sext i32 %by to i64
  %q = getelementptr inbounds float, ptr %p, i64 %i
  store float 1.0, ptr %q, align 4
  ret void
}

define internal i32 @row() {
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  ret i32 %by
}

define ptx_kernel void @calls_reader(ptr noundef %p) #0 {
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %r = call i32 @row()
  %s0 = add i32 %bx, %by
  %s = add i32 %s0, %r
  %i = sext i32 %s to i64
  %q = getelementptr inbounds float, ptr %p, i64 %i
  store float 1.0, ptr %q, align 4
  ret void
}

define ptx_kernel void @clustered(ptr noundef %p) #0 {
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %s = add i32 %bx, %by
  %i = sext i32 %s to i64
  %q = getelementptr inbounds float, ptr %p, i64 %i
  store float 1.0, ptr %q, align 4
  ret void
}

; The twin: x and y exchanged, the rest as it was; a kernel of its own.
; CHECK: define ptx_kernel void @__cleave_sw_transpose(ptr noundef readonly %in, ptr noundef writeonly %out, i32 noundef %w, i32 noundef %h) #[[ATTR:[0-9]+]]
; CHECK: %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
; CHECK: %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
; CHECK: %gx = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()
; CHECK: %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
; CHECK: store float %v, ptr %po, align 4
; CHECK-NOT: define {{.*}}@__cleave_sw_
; CHECK: attributes #[[ATTR]] = {{.*}}"cleave-swapped-from"="transpose"
; CHECK: !nvvm.annotations = !{![[A:[0-9]+]], !{{[0-9]+}}, ![[B:[0-9]+]]}
; CHECK-DAG: ![[A]] = !{ptr @transpose, !"maxntid", i32 256}
; CHECK-DAG: ![[B]] = !{ptr @__cleave_sw_transpose, !"maxntid", i32 256}

; REMARK-DAG: remark: {{.*}}kernel 'transpose': created '__cleave_sw_transpose' (block index and grid size x <-> y)
; REMARK-DAG: remark: {{.*}}kernel 'three_d' has no twin with x and y swapped: it reads the block index or grid size along z
; REMARK-DAG: remark: {{.*}}kernel 'y_only' has no twin with x and y swapped: it does not read the block index along x
; REMARK-DAG: remark: {{.*}}kernel 'calls_reader' has no twin with x and y swapped: a function it calls reads the block index
; REMARK-DAG: remark: {{.*}}kernel 'clustered' has no twin with x and y swapped: it is launched in clusters of blocks

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

attributes #0 = { "target-cpu"="sm_90" }

!nvvm.annotations = !{!0, !1}
!0 = !{ptr @transpose, !"maxntid", i32 256}
!1 = !{ptr @clustered, !"cluster_dim_x", i32 2}
