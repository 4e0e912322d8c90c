; The device module of unittests/Runtime/EngineTest.cpp (its bundle:
; engine_test.bundle, with hist.ll). vecadd: exact writes. keep:
; out[i] = 2 * in[i] only where in[i] > 0 (a bounded write footprint:
; merges). hist (hist.ll): global atomics whose results are unused (its bins
; are a combined output). tickets: ticket[i] = atomicAdd(next, 1), a global
; atomic whose result is used (not split). histmark: hist's bins, plus
; mark[i] = 1 where data[i] >= 128 (a bounded write that would need the
; merge kernel). bumpview(View v): v.p[i] += 1 for i < v.n, the pointer a
; field of a by-value struct (argument-pointer).
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@scale = addrspace(4) externally_initialized constant float 1.0, align 4

%struct.View = type { ptr, i32 }

define ptx_kernel void @bumpview(ptr noundef readonly byval(%struct.View) align 8 %v) #0 {
entry:
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %m = mul i32 %bid, %bdim
  %i = add i32 %m, %tid
  %pn = getelementptr inbounds i8, ptr %v, i64 8
  %n = load i32, ptr %pn, align 8
  %in = icmp slt i32 %i, %n
  br i1 %in, label %body, label %exit
body:
  %p = load ptr, ptr %v, align 8
  %idx = sext i32 %i to i64
  %pe = getelementptr inbounds float, ptr %p, i64 %idx
  %x = load float, ptr %pe, align 4
  %y = fadd float %x, 1.0
  store float %y, ptr %pe, align 4
  br label %exit
exit:
  ret void
}

define ptx_kernel void @vecadd(ptr noundef readonly %a, ptr noundef readonly %b, ptr noundef writeonly %c, i32 noundef %n) #0 {
entry:
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %m = mul i32 %bid, %bdim
  %i = add i32 %m, %tid
  %in = icmp slt i32 %i, %n
  br i1 %in, label %body, label %exit
body:
  %idx = sext i32 %i to i64
  %pa = getelementptr inbounds float, ptr %a, i64 %idx
  %pb = getelementptr inbounds float, ptr %b, i64 %idx
  %pc = getelementptr inbounds float, ptr %c, i64 %idx
  %va = load float, ptr %pa, align 4
  %vb = load float, ptr %pb, align 4
  %s = fadd float %va, %vb
  %f = load float, ptr addrspace(4) @scale, align 4
  %t = fmul float %s, %f
  store float %t, ptr %pc, align 4
  br label %exit
exit:
  ret void
}

define ptx_kernel void @keep(ptr noundef readonly %x, ptr noundef writeonly %out, i32 noundef %n) #0 {
entry:
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %m = mul i32 %bid, %bdim
  %i = add i32 %m, %tid
  %in = icmp slt i32 %i, %n
  br i1 %in, label %load, label %exit
load:
  %idx = sext i32 %i to i64
  %px = getelementptr inbounds float, ptr %x, i64 %idx
  %v = load float, ptr %px, align 4
  %pos = fcmp ogt float %v, 0.0
  br i1 %pos, label %body, label %exit
body:
  %po = getelementptr inbounds float, ptr %out, i64 %idx
  %d = fmul float %v, 2.0
  store float %d, ptr %po, align 4
  br label %exit
exit:
  ret void
}


define ptx_kernel void @histmark(ptr noundef readonly %data, ptr noundef %bins, ptr noundef writeonly %mark, i32 noundef %n) #0 {
entry:
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %m = mul i32 %bid, %bdim
  %i = add i32 %m, %tid
  %in = icmp slt i32 %i, %n
  br i1 %in, label %body, label %exit
body:
  %idx = sext i32 %i to i64
  %pd = getelementptr inbounds i8, ptr %data, i64 %idx
  %d = load i8, ptr %pd, align 1
  %bin = zext i8 %d to i64
  %pbin = getelementptr inbounds i32, ptr %bins, i64 %bin
  %old = atomicrmw add ptr %pbin, i32 1 monotonic, align 4
  %hi = icmp uge i8 %d, -128
  br i1 %hi, label %set, label %exit
set:
  %pm = getelementptr inbounds i8, ptr %mark, i64 %idx
  store i8 1, ptr %pm, align 1
  br label %exit
exit:
  ret void
}

define ptx_kernel void @tickets(ptr noundef %next, ptr noundef writeonly %ticket, i32 noundef %n) #0 {
entry:
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %m = mul i32 %bid, %bdim
  %i = add i32 %m, %tid
  %in = icmp slt i32 %i, %n
  br i1 %in, label %body, label %exit
body:
  %idx = sext i32 %i to i64
  %old = atomicrmw add ptr %next, i32 1 monotonic, align 4
  %pt = getelementptr inbounds i32, ptr %ticket, i64 %idx
  store i32 %old, ptr %pt, align 4
  br label %exit
exit:
  ret void
}

; out[x * h + y] = in[y * w + x], x = blockIdx.x * blockDim.x + threadIdx.x,
; y = blockIdx.y: a row of blocks writes a column band of out, so the
; engine runs it as its twin with x and y swapped (cleave-swap-grid).
define ptx_kernel void @tr(ptr noundef readonly %in, ptr noundef writeonly %out, i32 noundef %w, i32 noundef %h) #0 {
entry:
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %bdx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %m = mul nsw i32 %bx, %bdx
  %x = add nsw i32 %m, %tx
  %okx = icmp slt i32 %x, %w
  %oky = icmp slt i32 %by, %h
  %ok = and i1 %okx, %oky
  br i1 %ok, label %body, label %exit
body:
  %s0 = mul nsw i32 %by, %w
  %s = add nsw i32 %s0, %x
  %si = sext i32 %s to i64
  %pi = getelementptr inbounds float, ptr %in, i64 %si
  %v = load float, ptr %pi, align 4
  %d0 = mul nsw i32 %x, %h
  %d = add nsw i32 %d0, %by
  %di = sext i32 %d to i64
  %po = getelementptr inbounds float, ptr %out, i64 %di
  store float %v, ptr %po, align 4
  br label %exit
exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

attributes #0 = { "target-cpu"="sm_90" "target-features"="+ptx85,+sm_90" }
