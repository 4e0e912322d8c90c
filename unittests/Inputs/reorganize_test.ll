; The device module of unittests/Runtime/ReorganizeEngineTest.cpp (its
; bundle: reorganize_test.bundle): a CSR row sum, whose loop runs over the
; row's entries, so that each thread's trip count is its item's row length
; and cleave-reorganize gives it an inspector and a reorganized variant;
; and random paths, whose loop (as option pricing's in bench/reorganize)
; runs a PRNG for as many steps as the item's seed says and reads no
; memory, so that the model has no per-item stream to refuse it for.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @rowsum(ptr noundef readonly %rowptr, ptr noundef readonly %vals, ptr noundef writeonly %y, i32 noundef %rows) {
entry:
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %m = mul i32 %bid, %bdim
  %i = add i32 %m, %tid
  %in = icmp slt i32 %i, %rows
  br i1 %in, label %head, label %exit
head:
  %idx = sext i32 %i to i64
  %p0 = getelementptr inbounds i32, ptr %rowptr, i64 %idx
  %lo = load i32, ptr %p0, align 4
  %p1 = getelementptr inbounds i32, ptr %p0, i64 1
  %hi = load i32, ptr %p1, align 4
  %any = icmp slt i32 %lo, %hi
  br i1 %any, label %loop, label %done
loop:
  %k = phi i32 [ %lo, %head ], [ %k1, %loop ]
  %acc = phi float [ 0.000000e+00, %head ], [ %acc1, %loop ]
  %kx = sext i32 %k to i64
  %pv = getelementptr inbounds float, ptr %vals, i64 %kx
  %v = load float, ptr %pv, align 4
  %acc1 = fadd float %acc, %v
  %k1 = add nsw i32 %k, 1
  %more = icmp slt i32 %k1, %hi
  br i1 %more, label %loop, label %done
done:
  %r = phi float [ 0.000000e+00, %head ], [ %acc1, %loop ]
  %py = getelementptr inbounds float, ptr %y, i64 %idx
  store float %r, ptr %py, align 4
  br label %exit
exit:
  ret void
}

define ptx_kernel void @paths(ptr noundef readonly %seeds, ptr noundef writeonly %out, i32 noundef %n) {
entry:
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %m = mul i32 %bid, %bdim
  %i = add i32 %m, %tid
  %in = icmp slt i32 %i, %n
  br i1 %in, label %head, label %exit
head:
  %idx = sext i32 %i to i64
  %ps = getelementptr inbounds i32, ptr %seeds, i64 %idx
  %seed = load i32, ptr %ps, align 4
  %steps = and i32 %seed, 63
  %any = icmp sgt i32 %steps, 0
  br i1 %any, label %loop, label %done
loop:
  %k = phi i32 [ 0, %head ], [ %k1, %loop ]
  %s = phi i32 [ %seed, %head ], [ %s3, %loop ]
  %a = shl i32 %s, 13
  %s1 = xor i32 %s, %a
  %b = lshr i32 %s1, 17
  %s2 = xor i32 %s1, %b
  %c = shl i32 %s2, 5
  %s3 = xor i32 %s2, %c
  %k1 = add nsw i32 %k, 1
  %more = icmp slt i32 %k1, %steps
  br i1 %more, label %loop, label %done
done:
  %r = phi i32 [ %seed, %head ], [ %s3, %loop ]
  %po = getelementptr inbounds i32, ptr %out, i64 %idx
  store i32 %r, ptr %po, align 4
  br label %exit
exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
