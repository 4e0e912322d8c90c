; A kernel's printf (vprintf) and assert (__assertfail) get a CPU variant
; that calls the runtime's implementations (CpuReportABI.h): the format, the
; argument buffer and its size (0 without arguments), and for the assertion
; its message, file, line, function and the block and thread ids, which the
; lowering maps like any other read of them (here after a barrier, in the
; second region). The assertion never returns (it leaves the range of
; blocks). The checked variant calls printf's checked entry, which
; validates the strings of `%s` (CLEAVE_CHECK=memory), with the block and
; thread ids of its reports.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes=cleave-cpu-lower \
; RUN:   -pass-remarks=cleave-cpu-lower -pass-remarks-missed=cleave-cpu-lower \
; RUN:   %s -S -o %t.cpu.ll 2>&1 | FileCheck %s --check-prefix=REMARK
; RUN: FileCheck %s --check-prefix=IR < %t.cpu.ll

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%printf_args = type { i32, double, ptr, i32 }

@fmt = private unnamed_addr constant [13 x i8] c"%d %f %s %d\0A\00"
@plain = private unnamed_addr constant [7 x i8] c"plain\0A\00"
@msg = private unnamed_addr constant [6 x i8] c"x > 0\00"
@file = private unnamed_addr constant [5 x i8] c"k.cu\00"
@func = private unnamed_addr constant [14 x i8] c"void k(int *)\00"

; REMARK: kernel k: CPU variant __cleave_cpu_k with 2 region(s)
; REMARK-NOT: GPU-only

; IR-LABEL: define void @__cleave_cpu_k(
; IR: %[[R:.*]] = call i32 @__cleave_rt_vprintf(ptr @fmt, ptr %{{.*}}, i64 32)
; IR: store i32 %[[R]], ptr
; IR: call i32 @__cleave_rt_vprintf(ptr @plain, ptr null, i64 0)
; IR: call void @__cleave_rt_assertfail(ptr @msg, ptr @file, i32 7, ptr @func, i64 1, i32 %ctaid.x, i32 %ctaid.y, i32 %ctaid.z, i32 %tid.x{{[0-9]*}}, i32 %tid.y{{[0-9]*}}, i32 %tid.z{{[0-9]*}}) #[[NORET:[0-9]+]]
; IR-LABEL: define internal void @__cleave_cpu_k_checked(
; IR: call i32 @__cleave_rt_vprintf_checked(ptr @fmt, ptr %{{.*}}, i64 32, i64 %block.id, i64 %lin{{[0-9]*}})
; IR: call i32 @__cleave_rt_vprintf_checked(ptr @plain, ptr null, i64 0, i64 %block.id, i64 %lin{{[0-9]*}})
; IR: call void @__cleave_rt_assertfail(
; IR-NOT: @vprintf
; IR-NOT: @__assertfail
; IR: declare void @__cleave_rt_assertfail(ptr, ptr, i32, ptr, i64, i32, i32, i32, i32, i32, i32) #[[DECL:[0-9]+]]
; IR: attributes #[[DECL]] = { noreturn nounwind }
; IR: attributes #[[NORET]] = { noreturn }
define ptx_kernel void @k(ptr %out, i32 %x, double %d, ptr %s) {
  %buf = alloca %printf_args, align 8
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  store i32 %b, ptr %buf, align 8
  %f1 = getelementptr inbounds i8, ptr %buf, i64 8
  store double %d, ptr %f1, align 8
  %f2 = getelementptr inbounds i8, ptr %buf, i64 16
  store ptr %s, ptr %f2, align 8
  %f3 = getelementptr inbounds i8, ptr %buf, i64 24
  store i32 %t, ptr %f3, align 8
  %r = call i32 @vprintf(ptr @fmt, ptr %buf)
  %slot = getelementptr inbounds i32, ptr %out, i32 %t
  store i32 %r, ptr %slot
  call void @llvm.nvvm.barrier0()
  %p = call i32 @vprintf(ptr @plain, ptr null)
  %ok = icmp sgt i32 %x, 0
  br i1 %ok, label %done, label %fail
fail:
  call void @__assertfail(ptr @msg, ptr @file, i32 7, ptr @func, i64 1)
  br label %done
done:
  ret void
}

declare i32 @vprintf(ptr, ptr)
declare void @__assertfail(ptr, ptr, i32, ptr, i64)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare void @llvm.nvvm.barrier0()
