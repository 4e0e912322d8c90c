; Special registers read through intrinsics that the .cu test does not reach.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' -disable-output %s 2>&1 | FileCheck %s --implicit-check-not=issue:

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; CHECK-LABEL: cleave-legality: kernel 'registers'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: no
; CHECK-NEXT:    issue: hardware-register (forbids split, cpu) 'llvm.nvvm.read.ptx.sreg.nsmid'{{$}}
; CHECK-NEXT:    issue: hardware-register (forbids split, cpu) 'llvm.nvvm.read.ptx.sreg.nwarpid'{{$}}
; CHECK-NEXT:    issue: hardware-register (forbids split, cpu) 'llvm.nvvm.read.ptx.sreg.gridid'{{$}}
; CHECK-NEXT:    issue: hardware-register (forbids split, cpu) 'llvm.nvvm.read.ptx.sreg.pm0'{{$}}
define ptx_kernel void @registers(ptr %out) {
  %a = call i32 @llvm.nvvm.read.ptx.sreg.nsmid()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.nwarpid()
  %c = call i32 @llvm.nvvm.read.ptx.sreg.gridid()
  %d = call i32 @llvm.nvvm.read.ptx.sreg.pm0()
  ; Thread and block indices, lanes and warp size are fine.
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %l = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
  %w = call i32 @llvm.nvvm.read.ptx.sreg.warpsize()
  %m = call i32 @llvm.nvvm.read.ptx.sreg.lanemask.lt()
  ret void
}

; Counters: split only.
; CHECK-LABEL: cleave-legality: kernel 'counters'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: yes
; CHECK-NEXT:    issue: hardware-register (forbids split) 'llvm.readcyclecounter'{{$}}
; CHECK-NEXT:    issue: hardware-register (forbids split) 'llvm.nvvm.read.ptx.sreg.clock'{{$}}
define ptx_kernel void @counters(ptr %out) {
  %a = call i64 @llvm.readcyclecounter()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.clock()
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.nsmid()
declare i32 @llvm.nvvm.read.ptx.sreg.nwarpid()
declare i32 @llvm.nvvm.read.ptx.sreg.gridid()
declare i32 @llvm.nvvm.read.ptx.sreg.pm0()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.laneid()
declare i32 @llvm.nvvm.read.ptx.sreg.warpsize()
declare i32 @llvm.nvvm.read.ptx.sreg.lanemask.lt()
declare i64 @llvm.readcyclecounter()
declare i32 @llvm.nvvm.read.ptx.sreg.clock()
