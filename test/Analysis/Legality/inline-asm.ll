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
; CHECK-NEXT:    issue: grid-sync (forbids split, cpu) 'cooperative_groups grid sync (this_grid().sync()) needs the whole grid resident: asm mov.u32 $0, %envreg2;'{{$}}
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

; The inline PTX of CUDA's own headers (cooperative groups, cuda::ptx) is
; matched exactly and is no issue: lane registers, the reserved shared-memory
; scratch, elect.sync, unsigned bfind; nor is asm without side effects whose
; result is unused. A near miss (another constraint, signed bfind, a lane
; register read with side effects kept) stays inline-asm.
; CHECK-LABEL: cleave-legality: kernel 'header_asm'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: no
; CHECK-NEXT:    issue: inline-asm (forbids split, cpu) 'asm mov.u32 $0, %laneid;'{{$}}
; CHECK-NEXT:    issue: inline-asm (forbids split, cpu) 'asm bfind.s32 $0, $1;'{{$}}
define ptx_kernel void @header_asm(ptr %out, i32 %x) {
  %l = call i32 asm "mov.u32 $0, %laneid;", "=r"()
  store i32 %l, ptr %out
  %m = call i32 asm "mov.u32 $0, %lanemask_lt;", "=r"()
  store i32 %m, ptr %out
  %r = call i64 asm "{\0A\09 .reg .u32 start;\0A\09 .reg .u64 extended;\0A\09 mov.u32 start, %reserved_smem_offset_1;\0A\09 cvt.u64.u32 extended, start;\0A\09 cvta.shared.u64 $0, extended;\0A\09}", "=l"()
  store i64 %r, ptr %out
  %e = call { i32, i32 } asm "{\0A\09 .reg .pred p;\0A\09  elect.sync $0|p, $2;\0A\09 @p mov.s32 $1, 1;\0A\09}", "=r,=r,r,0,1"(i32 -1, i32 0, i32 0)
  %e1 = extractvalue { i32, i32 } %e, 1
  store i32 %e1, ptr %out
  %b = call i32 asm "bfind.shiftamt.u64 $0, $1;", "=r,l"(i64 7)
  store i32 %b, ptr %out
  %dead = call i32 asm "mov.u32 $0, %envreg1;", "=r"() #0
  %near = call i32 asm "mov.u32 $0, %laneid;", "=r,~{memory}"()
  store i32 %near, ptr %out
  %sb = call i32 asm "bfind.s32 $0, $1;", "=r,r"(i32 %x)
  store i32 %sb, ptr %out
  ret void
}

attributes #0 = { nounwind memory(none) }
