; Calls into functions with no body: we cannot see what they do, nor build
; them for the CPU.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' -disable-output %s 2>&1 | FileCheck %s --implicit-check-not=issue:

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@fmt = private addrspace(4) constant [4 x i8] c"%d\0A\00"

; A separately compiled device function (C++ names are demangled), a libdevice
; function that was not linked in, and an indirect call.
; CHECK-LABEL: cleave-legality: kernel 'opaque'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: no
; CHECK-NEXT:    issue: external-call (forbids split, cpu) 'helper(int)'{{$}}
; CHECK-NEXT:    issue: external-call (forbids split, cpu) '__nv_sinf'{{$}}
; CHECK-NEXT:    issue: external-call (forbids split, cpu) 'indirect call'{{$}}
define ptx_kernel void @opaque(ptr %out, ptr %fn, i32 %x) {
  %a = call i32 @_Z6helperi(i32 %x)
  store i32 %a, ptr %out
  %f = call float @__nv_sinf(float 1.0)
  call void %fn()
  ret void
}

; printf and assert only report: a split kernel keeps their meaning, and
; the CPU variant calls the runtime's implementations. No issue.
; CHECK-LABEL: cleave-legality: kernel 'reporting'
; CHECK-NEXT:    split: yes
; CHECK-NEXT:    cpu: yes
define ptx_kernel void @reporting(i32 %x) {
  %args = alloca i32
  store i32 %x, ptr %args
  %g = addrspacecast ptr addrspace(4) @fmt to ptr
  %r = call i32 @vprintf(ptr %g, ptr %args)
  call void @__assertfail(ptr %g, ptr %g, i32 1, ptr %g, i64 1)
  ret void
}

; Intrinsics, NVVMReflect's query and defined device functions are not
; external; a defined callee's own calls are checked.
define internal float @body(float %x) {
  %s = call float @llvm.sqrt.f32(float %x)
  ret float %s
}

define internal void @calls_out() {
  %a = call i32 @_Z6helperi(i32 0)
  ret void
}

; CHECK-LABEL: cleave-legality: kernel 'known'
; CHECK-NEXT:    split: yes
; CHECK-NEXT:    cpu: yes
define ptx_kernel void @known(ptr %out, float %x) {
  %ftz = call i32 @__nvvm_reflect(ptr null)
  %b = call float @body(float %x)
  store float %b, ptr %out
  ret void
}

; CHECK-LABEL: cleave-legality: kernel 'nested'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: no
; CHECK-NEXT:    issue: external-call (forbids split, cpu) 'helper(int)'{{$}}
define ptx_kernel void @nested() {
  call void @calls_out()
  ret void
}

declare i32 @_Z6helperi(i32)
declare float @__nv_sinf(float)
declare i32 @vprintf(ptr, ptr)
declare void @__assertfail(ptr, ptr, i32, ptr, i64)
declare i32 @__nvvm_reflect(ptr)
declare float @llvm.sqrt.f32(float)
