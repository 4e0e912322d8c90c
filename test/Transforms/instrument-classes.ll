; The instrumentation of `cleave analyze` (lib/Transforms/Instrument.cpp):
; each basic block is a site with its instructions' classes, each global
; memory access a memory site with its width; markers (volatile stores) carry
; (site, thread) and (site, width, thread, address) through the CPU
; lowering, which then become calls to the runtime's recorder, and the
; kernel's descriptor dispatches through __cleave_rt_instr_run.
; RUN: %cleave analyze --emit=sites %s | FileCheck %s --check-prefix=SITES
; RUN: %cleave analyze --emit=instrumented-ir %s | FileCheck %s --check-prefix=IR
; RUN: %cleave analyze --emit=cpu-ir %s | FileCheck %s --check-prefix=CPU

; Shared memory (through a generic pointer), the barrier, the f32 division,
; the f64 multiply, the conversion, the SFU ex2, the global atomic, integer
; division and remainder; the special-register reads are "other".
; SITES: kernel _Z1kPKfPKdPfPii
; SITES-NEXT: block 0 _Z1kPKfPKdPfPii #0: other other int other int int int ld.global int int st.shared barrier int int int ld.shared fp32.div int ld.global fp64 cvt fp32 sfu fp32 int st.global int.div int int int.div atom.global other
; SITES-NEXT: mem 0 block 0 ld.global 4 B
; SITES-NEXT: mem 1 block 0 ld.global 8 B
; SITES-NEXT: mem 2 block 0 st.global 4 B
; SITES-NEXT: mem 3 block 0 atom.global 4 B
; SITES-NOT: mem

; IR: @__cleave_instr.block = internal addrspace(1) global i64 0
; IR: @__cleave_instr.mem = internal addrspace(1) global <2 x i64> zeroinitializer
; The block marker first: (site 0 << 32) | linear thread id.
; IR-LABEL: define dso_local void @_Z1kPKfPKdPfPii(
; IR: %cleave.instr.thread = add i64
; IR-NEXT: %[[B:.*]] = or i64 %cleave.instr.thread, 0
; IR-NEXT: store volatile i64 %[[B]], ptr addrspace(1) @__cleave_instr.block
; The 8-byte load of d[i]: (site 1 << 32) | (8 << 16) = 4295491584.
; IR: or i64 %{{.*}}, 4295491584
; IR: store volatile <2 x i64> %{{.*}}, ptr addrspace(1) @__cleave_instr.mem
; IR-NEXT: load double
; The atomic: (3 << 32) | (4 << 16) = 12885164032.
; IR: or i64 %{{.*}}, 12885164032
; IR: store volatile <2 x i64> %{{.*}}, ptr addrspace(1) @__cleave_instr.mem
; IR-NEXT: atomicrmw add

; The descriptor points at the dispatcher; the instrumented variant calls the
; recorder; the ordinary variant does not.
; CPU: @__cleave_cpu__Z1kPKfPKdPfPii_desc = constant {{.*}} ptr @__cleave_cpu__Z1kPKfPKdPfPii.instr_dispatch,
; CPU: @__cleave_instr__Z1kPKfPKdPfPii_desc = constant {{.*}} ptr @__cleave_instr__Z1kPKfPKdPfPii,
; CPU-LABEL: define void @__cleave_cpu__Z1kPKfPKdPfPii(
; CPU-NOT: __cleave_rt_instr
; CPU-NOT: __cleave_instr.
; CPU-LABEL: define void @__cleave_instr__Z1kPKfPKdPfPii(
; CPU: call void @__cleave_rt_instr_block(i64
; CPU-COUNT-4: call void @__cleave_rt_instr_mem(i64
; CPU-NOT: call void @__cleave_rt_instr
; CPU-LABEL: define internal void @__cleave_cpu__Z1kPKfPKdPfPii.instr_dispatch(
; CPU-NEXT: entry:
; CPU-NEXT: call void @__cleave_rt_instr_run(ptr @__cleave_instr__Z1kPKfPKdPfPii_desc, ptr @__cleave_cpu__Z1kPKfPKdPfPii, ptr %0, ptr %1, i64 %2, i64 %3, ptr %4)
; CPU-NOT: @__cleave_instr.block
; CPU-NOT: @__cleave_instr.mem

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@_ZZ1kPKfPKdPfPiiE1s = internal unnamed_addr addrspace(3) global [64 x float] undef, align 4

; Function Attrs: convergent mustprogress norecurse nounwind
define dso_local void @_Z1kPKfPKdPfPii(ptr nocapture noundef readonly %0, ptr nocapture noundef readonly %1, ptr nocapture noundef writeonly %2, ptr nocapture noundef %3, i32 noundef %4) {
  %6 = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %7 = tail call noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %8 = mul i32 %6, %7
  %9 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %10 = add i32 %8, %9
  %11 = sext i32 %10 to i64
  %12 = getelementptr inbounds float, ptr %0, i64 %11
  %13 = load float, ptr %12, align 4
  %14 = zext nneg i32 %9 to i64
  %15 = getelementptr inbounds [64 x float], ptr addrspacecast (ptr addrspace(3) @_ZZ1kPKfPKdPfPiiE1s to ptr), i64 0, i64 %14
  store float %13, ptr %15, align 4
  tail call void @llvm.nvvm.barrier0()
  %16 = sub nsw i32 63, %9
  %17 = zext i32 %16 to i64
  %18 = getelementptr inbounds [64 x float], ptr addrspacecast (ptr addrspace(3) @_ZZ1kPKfPKdPfPiiE1s to ptr), i64 0, i64 %17
  %19 = load float, ptr %18, align 4
  %20 = fdiv contract float %19, 3.000000e+00
  %21 = getelementptr inbounds double, ptr %1, i64 %11
  %22 = load double, ptr %21, align 8
  %23 = fmul contract double %22, 2.000000e+00
  %24 = fptrunc double %23 to float
  %25 = fadd contract float %20, %24
  %26 = tail call float @llvm.nvvm.ex2.approx.f(float %20)
  %27 = fadd contract float %26, %25
  %28 = getelementptr inbounds float, ptr %2, i64 %11
  store float %27, ptr %28, align 4
  %29 = srem i32 %10, 16
  %30 = sext i32 %29 to i64
  %31 = getelementptr inbounds i32, ptr %3, i64 %30
  %32 = sdiv i32 %10, %4
  %33 = atomicrmw add ptr %31, i32 %32 seq_cst, align 4
  ret void
}

declare void @llvm.nvvm.barrier0()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare float @llvm.nvvm.ex2.approx.f(float)

!nvvm.annotations = !{!0}
!0 = !{ptr @_Z1kPKfPKdPfPii, !"kernel", i32 1}
