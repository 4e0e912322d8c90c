; The device module of unittests/Api/ApiLaunchTest.cpp (its bundles:
; api_launch_test.bundle, and api_single_test.bundle with the kernels
; renamed, so that a second module holds the same code under other names).
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@factor = addrspace(4) externally_initialized constant float 1.0, align 4

define ptx_kernel void @vecadd(ptr noundef readonly %a, ptr noundef readonly %b, ptr noundef writeonly %c, i32 noundef %n) #0 {
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

define ptx_kernel void @scale(ptr noundef readonly %in, ptr noundef writeonly %out, i32 noundef %n) #0 {
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
  %pi = getelementptr inbounds float, ptr %in, i64 %idx
  %v = load float, ptr %pi, align 4
  %f = load float, ptr addrspace(4) @factor, align 4
  %r = fmul float %v, %f
  %po = getelementptr inbounds float, ptr %out, i64 %idx
  store float %r, ptr %po, align 4
  br label %exit
exit:
  ret void
}

define ptx_kernel void @fill(ptr noundef writeonly %out, i32 noundef %v, i32 noundef %n) #0 {
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
  %po = getelementptr inbounds i32, ptr %out, i64 %idx
  store i32 %v, ptr %po, align 4
  br label %exit
exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

attributes #0 = { "target-cpu"="sm_90" "target-features"="+ptx85,+sm_90" }
