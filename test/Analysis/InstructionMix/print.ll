; print<cleave-instr-mix>: each block's instructions as the GPU issues them,
; by class, with the entries each one uses (cleave/Analysis/InstructionMix.h).
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-instr-mix>' -disable-output %s | FileCheck %s

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; out[i] = a[i] * b[i] + c[1] for i = tid.x (< n)
define ptx_kernel void @saxpy(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %in = icmp slt i32 %tid, %n
  br i1 %in, label %body, label %exit

body:
  ; the index's sign extension feeds only address computations: no
  ; instruction of its own (IMAD.WIDE takes the 32-bit index)
  %i = sext i32 %tid to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %i
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %i
  %x = load float, ptr addrspace(1) %pa
  %y = load float, ptr addrspace(1) %pb
  ; a constant offset is the load's immediate
  %pc = getelementptr inbounds float, ptr addrspace(1) %c, i64 1
  %z = load float, ptr addrspace(1) %pc
  ; fmul + fadd of one block: one fma
  %m = fmul float %x, %y
  %s = fadd float %m, %z
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %i
  store float %s, ptr addrspace(1) %po
  br label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

; CHECK-LABEL: instruction mix of saxpy:
; CHECK-NEXT:   block %entry: 3 instruction(s)
; CHECK-NEXT:     0 other
; CHECK-NEXT:     1 int <- 0.0
; CHECK-NEXT:     2 branch <- 0.1
; The body: three address computations, three loads, the fma (its entry is
; the fadd's, using both loads and, through the fmul, the third), the store;
; its branch to the next block falls through.
; CHECK-NEXT:   block %body: 8 instruction(s)
; CHECK-NEXT:     0 int <- 0.0
; CHECK-NEXT:     1 int <- 0.0
; CHECK-NEXT:     2 ld.global <- 1.0
; CHECK-NEXT:     3 ld.global <- 1.1
; CHECK-NEXT:     4 ld.global
; CHECK-NEXT:     5 fp32 <- 1.2, 1.3, 1.4
; CHECK-NEXT:     6 int <- 0.0
; CHECK-NEXT:     7 st.global <- 1.5, 1.6
; CHECK-NEXT:   block %exit: 1 instruction(s)
; CHECK-NEXT:     0 other
