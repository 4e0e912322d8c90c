; Inline PTX forbids both: the CPU variant cannot translate it and we cannot
; tell what it touches. Recognized registers get their own kind.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' -disable-output %s 2>&1 | FileCheck %s --implicit-check-not=issue:

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; CHECK-LABEL: cleave-legality: kernel 'asm_kernel'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: no
; CHECK-NEXT:    issue: inline-asm (forbids split, cpu) 'asm add.s32 $0, $1, 1;'{{$}}
; CHECK-NEXT:    issue: hardware-register (forbids split, cpu) 'asm mov.u32 $0, %smid;'{{$}}
; CHECK-NEXT:    issue: cluster (forbids split, cpu) 'asm mov.u32 $0, %cluster_ctarank;'{{$}}
; CHECK-NEXT:    issue: grid-sync (forbids split, cpu) 'asm mov.u32 $0, %envreg2;'{{$}}
; Long or multi-line asm is shortened to one line.
; CHECK-NEXT:    issue: inline-asm (forbids split, cpu) 'asm { .reg .pred p; setp.ne.u32 p, $0, 0; @p bra.uni DONE...'{{$}}
define ptx_kernel void @asm_kernel(ptr %out, i32 %x) {
  %a = call i32 asm "add.s32 $0, $1, 1;", "=r,r"(i32 %x)
  store i32 %a, ptr %out
  %s = call i32 asm "mov.u32 $0, %smid;", "=r"()
  %c = call i32 asm "mov.u32 $0, %cluster_ctarank;", "=r"()
  %e = call i32 asm "mov.u32 $0, %envreg2;", "=r"()
  call void asm sideeffect "{ .reg .pred p;\0A\09setp.ne.u32 p, $0, 0;\0A\09@p bra.uni DONE;\0A\09trap;\0A\09DONE: }", "r"(i32 %x)
  ret void
}
