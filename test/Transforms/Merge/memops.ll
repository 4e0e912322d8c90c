; How writes reach their outputs, and what becomes of them in the merge
; kernel: memcpy and memset into an output copy from the partial buffer;
; address chains through addrspacecast, select and a loop-carried pointer
; phi are rebuilt on the partial parameter; stores into shared memory and
; allocas, the barrier and the shuffle are deleted.
;
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes=cleave-merge,verify -S %s \
; RUN:   | FileCheck %s

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@tile = internal addrspace(3) global [256 x i32] undef, align 4

define void @k(ptr %rows, ptr %flags, ptr %strided, ptr %pick, ptr %in, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %slot = alloca i32, align 4
  ; A row of n floats per block, copied from the input.
  %row = mul i32 %bid, %n
  %src = getelementptr float, ptr %in, i32 %row
  %dst = getelementptr float, ptr %rows, i32 %row
  %bytes = shl i32 %n, 2
  call void @llvm.memcpy.p0.p0.i32(ptr align 4 %dst, ptr align 4 %src, i32 %bytes, i1 false)
  ; 16 bytes of flags per thread, cleared, through a global-space pointer.
  %gflags = addrspacecast ptr %flags to ptr addrspace(1)
  %f = getelementptr [16 x i8], ptr addrspace(1) %gflags, i32 %tid
  call void @llvm.memset.p1.i32(ptr addrspace(1) align 4 %f, i8 0, i32 16, i1 false)
  ; Block-local traffic that only feeds the values stored.
  %t = getelementptr [256 x i32], ptr addrspace(3) @tile, i32 0, i32 %tid
  store i32 %tid, ptr addrspace(3) %t, align 4
  call void @llvm.nvvm.barrier0()
  %nb = xor i32 %tid, 1
  %tn = getelementptr [256 x i32], ptr addrspace(3) @tile, i32 0, i32 %nb
  %w = load i32, ptr addrspace(3) %tn, align 4
  store i32 %w, ptr %slot, align 4
  %w2 = load i32, ptr %slot, align 4
  %s = call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 -1, i32 %w2, i32 0, i32 31)
  ; pick[tid] or pick[tid + n], chosen by a value the kernel never writes.
  %odd = and i32 %tid, 1
  %isodd = icmp ne i32 %odd, 0
  %lo = getelementptr i32, ptr %pick, i32 %tid
  %hi.i = add i32 %tid, %n
  %hi = getelementptr i32, ptr %pick, i32 %hi.i
  %sel = select i1 %isodd, ptr %hi, ptr %lo
  store i32 %s, ptr %sel, align 4
  ; strided[tid], strided[tid + 32], ... through a pointer induction.
  %start = getelementptr i32, ptr %strided, i32 %tid
  br label %loop

loop:
  %p = phi ptr [ %start, %entry ], [ %p.next, %loop ]
  %k = phi i32 [ 0, %entry ], [ %k.next, %loop ]
  %val = mul i32 %k, %s
  store i32 %val, ptr %p, align 4
  %p.next = getelementptr i32, ptr %p, i32 32
  %k.next = add i32 %k, 1
  %more = icmp slt i32 %k.next, %n
  br i1 %more, label %loop, label %exit

exit:
  ret void
}

; CHECK-LABEL: define void @__cleave_merge_k(
; CHECK-SAME:    ptr %rows, ptr %flags, ptr %strided, ptr %pick, ptr %in, i32 %n,
; CHECK-SAME:    ptr noalias nocapture noundef readonly %cleave.partial.rows, ptr noalias nocapture noundef readonly %cleave.partial.flags, ptr noalias nocapture noundef readonly %cleave.partial.strided, ptr noalias nocapture noundef readonly %cleave.partial.pick,
; CHECK-SAME:    i32 noundef range(i32 0, 2147483647) %cleave.first.x,
; CHECK:         %cleave.bx = sub nuw i32 %cleave.n1, %cleave.q1.gx
; CHECK-NEXT:    %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
; The row copy reads the partial buffer at the row's offset.
; CHECK-NEXT:    %row = mul i32 %cleave.bx, %n
; CHECK-NEXT:    [[ROW:%.*]] = sext i32 %row to i64
; CHECK-NEXT:    %dst = getelementptr float, ptr %rows, i64 [[ROW]]
; CHECK-NEXT:    %dst.partial = getelementptr float, ptr %cleave.partial.rows, i64 [[ROW]]
; CHECK-NEXT:    %bytes = shl i32 %n, 2
; CHECK-NEXT:    call void @llvm.memcpy.p0.p0.i32(ptr align 4 %dst, ptr align 4 %dst.partial, i32 %bytes, i1 false)
; The memset became a copy, through the same addrspacecast.
; CHECK-NEXT:    %gflags = addrspacecast ptr %flags to ptr addrspace(1)
; CHECK-NEXT:    %gflags.partial = addrspacecast ptr %cleave.partial.flags to ptr addrspace(1)
; CHECK-NEXT:    [[TID:%.*]] = sext i32 %tid to i64
; CHECK-NEXT:    %f = getelementptr [16 x i8], ptr addrspace(1) %gflags, i64 [[TID]]
; CHECK-NEXT:    %f.partial = getelementptr [16 x i8], ptr addrspace(1) %gflags.partial, i64 [[TID]]
; CHECK-NEXT:    call void @llvm.memcpy.p1.p1.i32(ptr addrspace(1) {{.*}}align 4 {{.*}}%f, ptr addrspace(1) {{.*}}align 4 {{.*}}%f.partial, i32 16, i1 false)
; No shared memory, barrier, alloca or shuffle: the stored value is dead.
; The select between two offsets of pick survives (folded into the index).
; CHECK-NEXT:    %odd = and i32 %tid, 1
; CHECK-NEXT:    %isodd.not = icmp eq i32 %odd, 0
; CHECK-NEXT:    %hi.i = add i32 %tid, %n
; CHECK-NEXT:    [[PICK:%.*]] = select i1 %isodd.not, i32 %tid, i32 %hi.i
; CHECK-NEXT:    [[PICK64:%.*]] = sext i32 [[PICK]] to i64
; CHECK-NEXT:    %sel = getelementptr i32, ptr %pick, i64 [[PICK64]]
; CHECK-NEXT:    %sel.partial = getelementptr i32, ptr %cleave.partial.pick, i64 [[PICK64]]
; CHECK-NEXT:    [[V:%.*]] = load i32, ptr %sel.partial, align 4
; CHECK-NEXT:    store i32 [[V]], ptr %sel, align 4
; CHECK-NEXT:    %start = getelementptr i32, ptr %strided, i64 [[TID]]
; CHECK-NEXT:    %start.partial = getelementptr i32, ptr %cleave.partial.strided, i64 [[TID]]
; CHECK-NEXT:    br label %loop
; CHECK-EMPTY:
; The loop decides which locations are written, so it stays, with a twin
; pointer phi walking the partial buffer; the stored value (k * s) is gone.
; CHECK-NEXT:  loop:
; CHECK-NEXT:    %p = phi ptr [ %start, %entry ], [ %p.next, %loop ]
; CHECK-NEXT:    %p.partial = phi ptr [ %start.partial, %entry ], [ %p.next.partial, %loop ]
; CHECK-NEXT:    %k = phi i32 [ 0, %entry ], [ %k.next, %loop ]
; CHECK-NEXT:    [[W:%.*]] = load i32, ptr %p.partial, align 4
; CHECK-NEXT:    store i32 [[W]], ptr %p, align 4
; CHECK-NEXT:    %p.next = getelementptr i8, ptr %p, i64 128
; CHECK-NEXT:    %p.next.partial = getelementptr i8, ptr %p.partial, i64 128
; CHECK-NEXT:    %k.next = add i32 %k, 1
; CHECK-NEXT:    %more = icmp slt i32 %k.next, %n
; CHECK-NEXT:    br i1 %more, label %loop, label %exit
; CHECK-EMPTY:
; CHECK-NEXT:  exit:
; CHECK-NEXT:    ret void
; CHECK-NEXT:  }

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare void @llvm.nvvm.barrier0()
declare i32 @llvm.nvvm.shfl.sync.idx.i32(i32, i32, i32, i32)
declare void @llvm.memcpy.p0.p0.i32(ptr, ptr, i32, i1)
declare void @llvm.memset.p1.i32(ptr addrspace(1), i8, i32, i1)

!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}
