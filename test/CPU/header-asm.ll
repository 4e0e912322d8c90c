; The CUDA headers' inline PTX idioms become IR the CPU lowering handles: the
; reserved shared-memory scratch is a 1 KiB static shared area of each block
; (here thread 0 writes it, a barrier, every thread reads it back), the lane
; registers are lane reads. Other inline asm is refused with a remark that
; names it.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes=cleave-cpu-lower \
; RUN:   -pass-remarks=cleave-cpu-lower -pass-remarks-missed=cleave-cpu-lower \
; RUN:   %s -S -o %t.cpu.ll 2>&1 | FileCheck %s --check-prefix=REMARK
; RUN: FileCheck %s --check-prefix=IR < %t.cpu.ll

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; REMARK-DAG: kernel scratch: CPU variant __cleave_cpu_scratch with 2 region(s)
; REMARK-DAG: kernel sleep: CPU variant __cleave_cpu_sleep
; REMARK-DAG: kernel other stays GPU-only: inline-asm (asm add.s32 $0, $1, 1;)
; IR: @__cleave_cpu_scratch_desc = {{.*}} i64 1024,
; IR-NOT: asm
define ptx_kernel void @scratch(ptr %out, i32 %x) {
  %r = call i64 asm "{\0A\09 .reg .u32 start;\0A\09 .reg .u64 extended;\0A\09 mov.u32 start, %reserved_smem_offset_1;\0A\09 cvt.u64.u32 extended, start;\0A\09 cvta.shared.u64 $0, extended;\0A\09}", "=l"() #0
  %p = inttoptr i64 %r to ptr
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %first = icmp eq i32 %t, 0
  br i1 %first, label %write, label %join
write:
  store i32 %x, ptr %p
  br label %join
join:
  call void @llvm.nvvm.barrier0()
  %v = load i32, ptr %p
  %l = call i32 asm "mov.u32 $0, %laneid;", "=r"() #0
  %s = add i32 %v, %l
  %idx = zext i32 %t to i64
  %o = getelementptr i32, ptr %out, i64 %idx
  store i32 %s, ptr %o
  ret void
}

; __nanosleep in a spin-wait: the hint goes, the loop stays.
; IR-LABEL: define {{.*}}@__cleave_cpu_sleep(
; IR: load volatile i32
define ptx_kernel void @sleep(ptr %flag) {
entry:
  br label %spin
spin:
  %v = load volatile i32, ptr %flag
  %z = icmp eq i32 %v, 0
  br i1 %z, label %wait, label %done
wait:
  call void asm sideeffect "nanosleep.u32 $0;", "r"(i32 64)
  br label %spin
done:
  ret void
}

define ptx_kernel void @other(ptr %out, i32 %x) {
  %a = call i32 asm "add.s32 $0, $1, 1;", "=r,r"(i32 %x)
  store i32 %a, ptr %out
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()
attributes #0 = { convergent nounwind memory(none) }
