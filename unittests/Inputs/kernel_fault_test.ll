; The device module of unittests/Runtime/KernelFaultTest.cpp:
; fill(out, n): out[i] = i, one thread per element.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @fill(ptr noundef writeonly %out, i32 noundef %n) #0 {
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
  %p = getelementptr inbounds i32, ptr %out, i64 %idx
  store i32 %i, ptr %p, align 4
  br label %exit
exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

attributes #0 = { "target-cpu"="sm_90" "target-features"="+ptx85,+sm_90" }
