; Block-index reads in several blocks and in a callee, gridDim.y/z, static
; allocas in the entry block, launch-bound annotations, a kernel that reads
; no block index, and a second run of the pass.
;
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes=cleave-partition,verify -S %s \
; RUN:   | FileCheck %s
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes=cleave-partition,cleave-partition,verify -S %s \
; RUN:   | FileCheck %s --check-prefix=TWICE

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; The original is left exactly as it was, including the call into @row_of.
; CHECK-LABEL: define void @k(ptr %out, i32 %n) {
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %x0 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
; CHECK-NEXT:    %slot = alloca [4 x i32], align 4
; CHECK-NEXT:    %c = icmp slt i32 %x0, %n
; CHECK-NEXT:    br i1 %c, label %then, label %exit
; CHECK-EMPTY:
; CHECK-NEXT:  then:
; CHECK-NEXT:    %x1 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
; CHECK-NEXT:    %z = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
; CHECK-NEXT:    %gy = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()
; CHECK-NEXT:    %gz = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()
; CHECK-NEXT:    %row = call i32 @row_of(i32 %x1)
; CHECK-NEXT:    %a = mul i32 %z, %gy
; CHECK-NEXT:    %b = add i32 %a, %row
; CHECK-NEXT:    %d = mul i32 %b, %gz
; CHECK-NEXT:    store i32 %d, ptr %slot, align 4
; CHECK-NEXT:    %v = load i32, ptr %slot, align 4
; CHECK-NEXT:    %p = getelementptr i32, ptr %out, i32 %x1
; CHECK-NEXT:    store i32 %v, ptr %p, align 4
; CHECK-NEXT:    br label %exit
; CHECK-EMPTY:
; CHECK-NEXT:  exit:
; CHECK-NEXT:    ret void
; CHECK-NEXT:  }
define void @k(ptr %out, i32 %n) {
entry:
  %x0 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %slot = alloca [4 x i32], align 4
  %c = icmp slt i32 %x0, %n
  br i1 %c, label %then, label %exit

then:
  %x1 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %z = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %gy = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()
  %gz = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()
  %row = call i32 @row_of(i32 %x1)
  %a = mul i32 %z, %gy
  %b = add i32 %a, %row
  %d = mul i32 %b, %gz
  store i32 %d, ptr %slot, align 4
  %v = load i32, ptr %slot, align 4
  %p = getelementptr i32, ptr %out, i32 %x1
  store i32 %v, ptr %p, align 4
  br label %exit

exit:
  ret void
}

; A helper that reads blockIdx.y itself: shared with the original, so the
; variant gets its own inlined copy, whose read is remapped too.
; CHECK-LABEL: define internal i32 @row_of(i32 %x) #0 {
; CHECK-NEXT:    %y = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
; CHECK-NEXT:    %r = add i32 %y, %x
; CHECK-NEXT:    ret i32 %r
; CHECK-NEXT:  }
define internal i32 @row_of(i32 %x) noinline {
  %y = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %r = add i32 %y, %x
  ret i32 %r
}

; Reads no block index: the variant only gains the parameters.
; CHECK-LABEL: define void @k_plain(ptr %out) {
; CHECK-NEXT:    store i32 7, ptr %out, align 4
define void @k_plain(ptr %out) {
  store i32 7, ptr %out, align 4
  ret void
}

; The static alloca moved ahead of the decode, so it stays in the entry block.
; CHECK-LABEL: define void @__cleave_pr_k(
; CHECK-SAME:    ptr %out, i32 %n, i32 noundef range(i32 0, 2147483647) %cleave.first.x, i32 noundef range(i32 0, 65535) %cleave.first.y, i32 noundef range(i32 0, 65535) %cleave.first.z, i32 noundef range(i32 1, -2147483648) %cleave.grid.x, i32 noundef range(i32 1, 65536) %cleave.grid.y, i32 noundef range(i32 1, 65536) %cleave.grid.z, i32 noundef %cleave.magic.x, i32 noundef range(i32 0, 31) %cleave.shift.x, i32 noundef range(i32 0, 2) %cleave.inc.x, i32 noundef %cleave.magic.y, i32 noundef range(i32 0, 16) %cleave.shift.y, i32 noundef range(i32 0, 2) %cleave.inc.y) #[[VATTR:[0-9]+]] {
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %slot = alloca [4 x i32], align 4
; All three indices are read (z directly, y in the inlined helper).
; CHECK-NEXT:    %cleave.ctaid = call range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
; CHECK-NEXT:    %cleave.n1 = add nuw i32 %cleave.ctaid, %cleave.first.x
; CHECK-NEXT:    %cleave.q1.n = add nuw i32 %cleave.n1, %cleave.inc.x
; CHECK-NEXT:    %cleave.q1.m64 = zext i32 %cleave.magic.x to i64
; CHECK-NEXT:    %cleave.q1.n64 = zext i32 %cleave.q1.n to i64
; CHECK-NEXT:    %cleave.q1.prod = mul nuw i64 %cleave.q1.n64, %cleave.q1.m64
; CHECK-NEXT:    %cleave.q1.prod.hi = lshr i64 %cleave.q1.prod, 32
; CHECK-NEXT:    %cleave.q1.hi = trunc i64 %cleave.q1.prod.hi to i32
; CHECK-NEXT:    %cleave.q1 = lshr i32 %cleave.q1.hi, %cleave.shift.x
; CHECK-NEXT:    %cleave.q1.gx = mul nuw i32 %cleave.q1, %cleave.grid.x
; CHECK-NEXT:    %cleave.bx = sub nuw i32 %cleave.n1, %cleave.q1.gx
; CHECK-NEXT:    %cleave.bx.range = icmp ult i32 %cleave.bx, 2147483647
; CHECK-NEXT:    call void @llvm.assume(i1 %cleave.bx.range)
; CHECK-NEXT:    %cleave.n2 = add nuw i32 %cleave.q1, %cleave.first.y
; CHECK-NEXT:    %cleave.q2.n = add nuw i32 %cleave.n2, %cleave.inc.y
; CHECK-NEXT:    %cleave.q2.m64 = zext i32 %cleave.magic.y to i64
; CHECK-NEXT:    %cleave.q2.n64 = zext i32 %cleave.q2.n to i64
; CHECK-NEXT:    %cleave.q2.prod = mul nuw i64 %cleave.q2.n64, %cleave.q2.m64
; CHECK-NEXT:    %cleave.q2.prod.hi = lshr i64 %cleave.q2.prod, 32
; CHECK-NEXT:    %cleave.q2.hi = trunc i64 %cleave.q2.prod.hi to i32
; CHECK-NEXT:    %cleave.q2 = lshr i32 %cleave.q2.hi, %cleave.shift.y
; CHECK-NEXT:    %cleave.q2.gy = mul nuw i32 %cleave.q2, %cleave.grid.y
; CHECK-NEXT:    %cleave.by = sub nuw i32 %cleave.n2, %cleave.q2.gy
; CHECK-NEXT:    %cleave.by.range = icmp ult i32 %cleave.by, 65535
; CHECK-NEXT:    call void @llvm.assume(i1 %cleave.by.range)
; CHECK-NEXT:    %cleave.bz = add nuw nsw i32 %cleave.q2, %cleave.first.z
; CHECK-NEXT:    %cleave.bz.range = icmp ult i32 %cleave.bz, 65535
; CHECK-NEXT:    call void @llvm.assume(i1 %cleave.bz.range)
; Every ctaid read of the original (two of x, one of z, one in the helper)
; uses the one decode.
; CHECK-NEXT:    %c = icmp slt i32 %cleave.bx, %n
; CHECK-NEXT:    br i1 %c, label %then, label %exit
; CHECK-EMPTY:
; CHECK-NEXT:  then:
; CHECK-NEXT:    %r.i = add i32 %cleave.by, %cleave.bx
; CHECK-NEXT:    %a = mul i32 %cleave.bz, %cleave.grid.y
; CHECK-NEXT:    %b = add i32 %a, %r.i
; CHECK-NEXT:    %d = mul i32 %b, %cleave.grid.z
; CHECK-NEXT:    store i32 %d, ptr %slot, align 4
; CHECK-NEXT:    %v = load i32, ptr %slot, align 4
; CHECK-NEXT:    %p = getelementptr i32, ptr %out, i32 %cleave.bx
; CHECK-NEXT:    store i32 %v, ptr %p, align 4
; CHECK-NEXT:    br label %exit
; CHECK-EMPTY:
; CHECK-NEXT:  exit:
; CHECK-NEXT:    ret void
; CHECK-NEXT:  }

; CHECK-LABEL: define void @__cleave_pr_k_plain(ptr %out, i32 noundef range(i32 0, 2147483647) %cleave.first.x, i32 noundef range(i32 0, 65535) %cleave.first.y, i32 noundef range(i32 0, 65535) %cleave.first.z, i32 noundef range(i32 1, -2147483648) %cleave.grid.x, i32 noundef range(i32 1, 65536) %cleave.grid.y, i32 noundef range(i32 1, 65536) %cleave.grid.z, i32 noundef %cleave.magic.x, i32 noundef range(i32 0, 31) %cleave.shift.x, i32 noundef range(i32 0, 2) %cleave.inc.x, i32 noundef %cleave.magic.y, i32 noundef range(i32 0, 16) %cleave.shift.y, i32 noundef range(i32 0, 2) %cleave.inc.y) #{{[0-9]+}} {
; CHECK-NEXT:    store i32 7, ptr %out, align 4
; CHECK-NEXT:    ret void
; CHECK-NEXT:  }

; CHECK: attributes #[[VATTR]] = { "cleave-origin"="k" "cleave-variant"="partition" }

; Launch bounds are copied with the kernel marking.
; CHECK: !nvvm.annotations = !{![[A0:[0-9]+]], ![[A1:[0-9]+]], ![[A2:[0-9]+]], ![[A3:[0-9]+]], ![[A4:[0-9]+]], ![[A5:[0-9]+]]}
; CHECK-DAG: ![[A0]] = !{ptr @k, !"kernel", i32 1, !"maxntidx", i32 256}
; CHECK-DAG: ![[A1]] = !{ptr @k, !"reqntidy", i32 2}
; CHECK-DAG: ![[A2]] = !{ptr @k_plain, !"kernel", i32 1}
; CHECK-DAG: ![[A3]] = !{ptr @__cleave_pr_k, !"kernel", i32 1, !"maxntidx", i32 256}
; CHECK-DAG: ![[A4]] = !{ptr @__cleave_pr_k, !"reqntidy", i32 2}
; CHECK-DAG: ![[A5]] = !{ptr @__cleave_pr_k_plain, !"kernel", i32 1}

; A second run finds the variants already there.
; TWICE-COUNT-1: define void @__cleave_pr_k(
; TWICE-NOT:     define void @__cleave_pr_k(
; TWICE-NOT:     define {{.*}}@__cleave_pr___cleave_pr

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()

!nvvm.annotations = !{!0, !1, !2}
!0 = !{ptr @k, !"kernel", i32 1, !"maxntidx", i32 256}
!1 = !{ptr @k, !"reqntidy", i32 2}
!2 = !{ptr @k_plain, !"kernel", i32 1}
