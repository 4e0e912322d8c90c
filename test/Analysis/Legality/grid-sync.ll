; Grid-wide synchronization needs every block of the grid resident at once:
; neither a partition nor the CPU variant can provide it.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' -disable-output %s 2>&1 | FileCheck %s --implicit-check-not=issue:
; What clang 19 with CUDA 13 headers emits for cooperative_groups'
; this_grid().sync(): inline PTX reading the grid workspace from %envreg1/2,
; then a release/acquire barrier on it.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' -disable-output %inputs/cg_grid_sync.ll 2>&1 | FileCheck %s --check-prefix=CG --implicit-check-not=issue:

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; Older cooperative groups call the device runtime by name; the envreg
; intrinsics are the workspace read without inline asm.
; CHECK-LABEL: cleave-legality: kernel 'grid_sync'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: no
; CHECK-NEXT:    issue: grid-sync (forbids split, cpu) 'cudaCGGetIntrinsicHandle'{{$}}
; CHECK-NEXT:    issue: grid-sync (forbids split, cpu) 'cudaCGSynchronizeGrid'{{$}}
; CHECK-NEXT:    issue: grid-sync (forbids split, cpu) 'llvm.nvvm.read.ptx.sreg.envreg1'{{$}}
define ptx_kernel void @grid_sync(ptr %out) {
  %h = call i64 @cudaCGGetIntrinsicHandle(i32 1)
  %r = call i32 @cudaCGSynchronizeGrid(i64 %h, i32 0)
  %e = call i32 @llvm.nvvm.read.ptx.sreg.envreg1()
  store i32 %e, ptr %out
  ret void
}

declare i64 @cudaCGGetIntrinsicHandle(i32)
declare i32 @cudaCGSynchronizeGrid(i64, i32)
declare i32 @llvm.nvvm.read.ptx.sreg.envreg1()

; CG:      cleave-legality: kernel 'grid_sync_sum(float*, int)'
; CG-NEXT:   split: no
; CG-NEXT:   cpu: no
; CG-NEXT:   issue: grid-sync (forbids split, cpu) 'cooperative_groups grid sync (this_grid().sync()) needs the whole grid resident: asm mov.u32 $0, %envreg2;'{{$}}
; CG-NEXT:   issue: grid-sync (forbids split, cpu) 'cooperative_groups grid sync (this_grid().sync()) needs the whole grid resident: asm mov.u32 $0, %envreg1;'{{$}}
; CG-NEXT:   issue: inline-asm (forbids split, cpu) 'asm trap;'{{$}}
; CG-NEXT:   issue: inline-asm (forbids split, cpu) 'asm atom.add.release.gpu.u32 $0,[$1],$2;'{{$}}
; CG-NEXT:   issue: inline-asm (forbids split, cpu) 'asm ld.acquire.gpu.u32 $0,[$1];'{{$}}
