; The device module of unittests/Runtime/EngineModelTest.cpp (its bundle:
; engine_model_test.bundle, with hist.ll: global atomics whose results are
; unused, combined outputs).
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @vadd(ptr noundef readonly %a, ptr noundef readonly %b, ptr noundef writeonly %c, i32 noundef %n) #0 {
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
  store float %s, ptr %pc, align 4
  br label %exit
exit:
  ret void
}

; out[i] = in[i-1] + in[i] + in[i+1] inside (0, n - 1): a row split reads one
; element of each neighbour's band (a halo).
define ptx_kernel void @blur(ptr noundef readonly %in, ptr noundef writeonly %out, i32 noundef %n) #0 {
entry:
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %m = mul i32 %bid, %bdim
  %i = add i32 %m, %tid
  %lo = icmp sgt i32 %i, 0
  %n1 = sub i32 %n, 1
  %hi = icmp slt i32 %i, %n1
  %in.range = and i1 %lo, %hi
  br i1 %in.range, label %body, label %exit
body:
  %idx = sext i32 %i to i64
  %im = add nsw i64 %idx, -1
  %ip = add nsw i64 %idx, 1
  %p0 = getelementptr inbounds float, ptr %in, i64 %im
  %p1 = getelementptr inbounds float, ptr %in, i64 %idx
  %p2 = getelementptr inbounds float, ptr %in, i64 %ip
  %v0 = load float, ptr %p0, align 4
  %v1 = load float, ptr %p1, align 4
  %v2 = load float, ptr %p2, align 4
  %s0 = fadd float %v0, %v1
  %s1 = fadd float %s0, %v2
  %po = getelementptr inbounds float, ptr %out, i64 %idx
  store float %s1, ptr %po, align 4
  br label %exit
exit:
  ret void
}

; out[i] = in[i * stride] for i < n: a block reads one element of each of
; its threads' rows (a column), one range per element.
define ptx_kernel void @column(ptr noundef readonly %in, ptr noundef writeonly %out, i32 noundef %stride, i32 noundef %n) #0 {
entry:
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %m = mul i32 %bid, %bdim
  %i = add i32 %m, %tid
  %ok = icmp slt i32 %i, %n
  br i1 %ok, label %body, label %exit
body:
  %idx = sext i32 %i to i64
  %s = sext i32 %stride to i64
  %src = mul nsw i64 %idx, %s
  %pi = getelementptr inbounds float, ptr %in, i64 %src
  %v = load float, ptr %pi, align 4
  %po = getelementptr inbounds float, ptr %out, i64 %idx
  store float %v, ptr %po, align 4
  br label %exit
exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

attributes #0 = { "target-cpu"="sm_90" "target-features"="+ptx85,+sm_90" }
