; Device-runtime entry points that launch or wait for child grids, under
; their classic and CDP2 names.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' -disable-output %s 2>&1 | FileCheck %s --implicit-check-not=issue:

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; CHECK-LABEL: cleave-legality: kernel 'launcher'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: no
; CHECK-NEXT:    issue: dynamic-parallelism (forbids split, cpu) 'cudaGetParameterBuffer'{{$}}
; CHECK-NEXT:    issue: dynamic-parallelism (forbids split, cpu) 'cudaLaunchDevice'{{$}}
; CHECK-NEXT:    issue: dynamic-parallelism (forbids split, cpu) 'cudaLaunchDeviceV2'{{$}}
; CHECK-NEXT:    issue: dynamic-parallelism (forbids split, cpu) '__cudaCDP2LaunchDevice'{{$}}
; CHECK-NEXT:    issue: dynamic-parallelism (forbids split, cpu) 'cudaDeviceSynchronize'{{$}}
define ptx_kernel void @launcher(ptr %fn, ptr %params) {
  %b = call ptr @cudaGetParameterBuffer(i64 8, i64 8)
  %r1 = call i32 @cudaLaunchDevice(ptr %fn, ptr %params, i64 1, i32 1, i64 32, i32 1, i32 0, ptr null)
  %r2 = call i32 @cudaLaunchDeviceV2(ptr %params, ptr null)
  %r3 = call i32 @__cudaCDP2LaunchDevice(ptr %fn, ptr %params, i64 1, i32 1, i64 32, i32 1, i32 0, ptr null)
  %r4 = call i32 @cudaDeviceSynchronize()
  ret void
}

declare ptr @cudaGetParameterBuffer(i64, i64)
declare i32 @cudaLaunchDevice(ptr, ptr, i64, i32, i64, i32, i32, ptr)
declare i32 @cudaLaunchDeviceV2(ptr, ptr)
declare i32 @__cudaCDP2LaunchDevice(ptr, ptr, i64, i32, i64, i32, i32, ptr)
declare i32 @cudaDeviceSynchronize()
