; A pointer that escapes (stored into memory, passed to a call we cannot see
; into, called through) is conservatively read-write and flagged.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-param-roles>' -disable-output %s 2>&1 | FileCheck %s

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@device_ptr = addrspace(1) global ptr null

; CHECK-LABEL: cleave-param-roles: kernel 'escaping'
; CHECK-NEXT:    arg 0 'published': read-write (escapes)
; CHECK-NEXT:    arg 1 'table': write
; CHECK-NEXT:    arg 2 'opaque': read-write (escapes)
; CHECK-NEXT:    arg 3 'fn': read-write (escapes)
; CHECK-NEXT:    arg 4 'global': read-write (escapes)
; CHECK-NEXT:    arg 5 'asm': read-write (escapes)
; CHECK-NOT:     arg
define ptx_kernel void @escaping(ptr %published, ptr %table, ptr %opaque, ptr %fn, ptr %global, ptr %asm) {
  ; Stored as a value into a buffer: anyone may read it back.
  store ptr %published, ptr %table
  call void @sink(ptr %opaque)
  call void %fn()
  ; A __device__ variable outlives the launch.
  store ptr %global, ptr addrspace(1) @device_ptr
  call void asm sideeffect "st.u32 [$0], 0;", "l"(ptr %asm)
  ret void
}

; A declaration that promises to keep nothing and only read.
; CHECK-LABEL: cleave-param-roles: kernel 'promised'
; CHECK-NEXT:    arg 0 'in': read
; CHECK-NOT:     arg
define ptx_kernel void @promised(ptr %in) {
  %n = call i64 @strlen_like(ptr %in)
  ret void
}

declare void @sink(ptr)
declare i64 @strlen_like(ptr nocapture readonly) memory(argmem: read)
