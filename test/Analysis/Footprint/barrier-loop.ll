; A strided loop whose body has a barrier: ScalarEvolution gives up on its
; trip count (a call to llvm.nvvm.barrier0 is not known to return, so the
; increment's nsw flag does not reach the recurrence), and the footprint
; analysis derives it from the latch, `add nsw` and `icmp slt`: the tiled
; matmul's A reads stay exact. The unsigned form (nuw, ult) likewise; a latch
; whose increment may wrap stays unknown.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-footprint>' \
; RUN:     -disable-output %s 2>&1 | FileCheck %s

; CHECK-LABEL: footprint of 'tiled_rows'
; CHECK-NEXT:    arg 0 'a': read exact, write none
; CHECK-NEXT:      read 4 bytes at 4*tid.x + 4*arg1*ctaid.x + 64*L0
; CHECK-NEXT:        if arg1 >= 1
; CHECK-NEXT:        for L0 in [0, (max(0, arg1 - 16) + 15) / 16]
; CHECK-LABEL: footprint of 'tiled_rows_unsigned'
; CHECK-NEXT:    arg 0 'a': read exact, write none
; CHECK-NEXT:      read 4 bytes at 4*tid.x + 4*arg1*ctaid.x + 64*L0
; CHECK:           for L0 in [0, (max(0, arg1 - 16) + 15) / 16]
; CHECK-LABEL: footprint of 'may_wrap'
; CHECK-NEXT:    arg 0 'a': read unknown, write none
; CHECK-NEXT:      read unknown: {{.*}}no computable trip count

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@tile = internal addrspace(3) global [16 x float] undef, align 4

define void @tiled_rows(ptr %a, i32 %k) {
entry:
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %row = mul i32 %bx, %k
  %guard = icmp sgt i32 %k, 0
  br i1 %guard, label %loop, label %exit

loop:
  %k0 = phi i32 [ 0, %entry ], [ %next, %loop ]
  %col = add nsw i32 %k0, %tx
  %idx = add nsw i32 %row, %col
  %idx64 = sext i32 %idx to i64
  %p = getelementptr inbounds float, ptr %a, i64 %idx64
  %v = load float, ptr %p, align 4
  %s = getelementptr inbounds [16 x float], ptr addrspace(3) @tile, i32 0, i32 %tx
  store float %v, ptr addrspace(3) %s, align 4
  call void @llvm.nvvm.barrier0()
  %next = add nuw nsw i32 %k0, 16
  %more = icmp slt i32 %next, %k
  br i1 %more, label %loop, label %exit

exit:
  ret void
}

define void @tiled_rows_unsigned(ptr %a, i32 %k) {
entry:
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %row = mul nuw i32 %bx, %k
  %guard = icmp ne i32 %k, 0
  br i1 %guard, label %loop, label %exit

loop:
  %k0 = phi i32 [ 0, %entry ], [ %next, %loop ]
  %col = add nuw i32 %k0, %tx
  %idx = add nuw i32 %row, %col
  %idx64 = zext i32 %idx to i64
  %p = getelementptr inbounds float, ptr %a, i64 %idx64
  %v = load float, ptr %p, align 4
  %s = getelementptr inbounds [16 x float], ptr addrspace(3) @tile, i32 0, i32 %tx
  store float %v, ptr addrspace(3) %s, align 4
  call void @llvm.nvvm.barrier0()
  %next = add nuw i32 %k0, 16
  %done = icmp uge i32 %next, %k
  br i1 %done, label %exit, label %loop

exit:
  ret void
}

define void @may_wrap(ptr %a, i32 %k) {
entry:
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  br label %loop

loop:
  %k0 = phi i32 [ 0, %entry ], [ %next, %loop ]
  %idx = add i32 %k0, %tx
  %idx64 = sext i32 %idx to i64
  %p = getelementptr inbounds float, ptr %a, i64 %idx64
  %v = load float, ptr %p, align 4
  %s = getelementptr inbounds [16 x float], ptr addrspace(3) @tile, i32 0, i32 %tx
  store float %v, ptr addrspace(3) %s, align 4
  call void @llvm.nvvm.barrier0()
  %next = add i32 %k0, 16
  %more = icmp slt i32 %next, %k
  br i1 %more, label %loop, label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()

!nvvm.annotations = !{!0, !1, !2}
!0 = !{ptr @tiled_rows, !"kernel", i32 1}
!1 = !{ptr @tiled_rows_unsigned, !"kernel", i32 1}
!2 = !{ptr @may_wrap, !"kernel", i32 1}
