; Device functions that are not kernels get an empty result and no output,
; even when they hold refused constructs.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' -disable-output %s 2>&1 | count 0

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @device_function(ptr %p) {
  %a = atomicrmw add ptr %p, i32 1 monotonic
  call void asm sideeffect "trap;", ""()
  ret void
}
