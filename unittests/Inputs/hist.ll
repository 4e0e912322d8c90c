; @hist(data, bins, n): bins[data[i]] += 1 with a global atomicrmw whose
; result is unused (a combined output). A fragment, appended to the engine
; tests' modules (and BundleTest's), which declare the ctaid.x, ntid.x and
; tid.x reads and attributes #0.
define ptx_kernel void @hist(ptr noundef readonly %data, ptr noundef %bins, i32 noundef %n) #0 {
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
  br label %exit
exit:
  ret void
}
