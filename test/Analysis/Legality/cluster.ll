; Cluster registers and distributed shared memory, beyond the .cu test.
; RUN: %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' -disable-output %s 2>&1 | FileCheck %s --implicit-check-not=issue:

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@buf = internal addrspace(3) global [32 x float] undef

; CHECK-LABEL: cleave-legality: kernel 'dsmem'
; CHECK-NEXT:    split: no
; CHECK-NEXT:    cpu: no
; CHECK-NEXT:    issue: cluster (forbids split, cpu) 'llvm.nvvm.read.ptx.sreg.clusterid.x'{{$}}
; CHECK-NEXT:    issue: cluster (forbids split, cpu) 'llvm.nvvm.read.ptx.sreg.cluster.nctarank'{{$}}
; CHECK-NEXT:    issue: cluster (forbids split, cpu) 'llvm.nvvm.mapa.shared.cluster'{{$}}
; CHECK-NEXT:    issue: cluster (forbids split, cpu) 'llvm.nvvm.barrier.cluster.arrive.relaxed'{{$}}
; CHECK-NEXT:    issue: cluster (forbids split, cpu) 'llvm.nvvm.fence.sc.cluster'{{$}}
define ptx_kernel void @dsmem(ptr %out) {
  %id = call i32 @llvm.nvvm.read.ptx.sreg.clusterid.x()
  %n = call i32 @llvm.nvvm.read.ptx.sreg.cluster.nctarank()
  %remote = call ptr addrspace(3) @llvm.nvvm.mapa.shared.cluster(ptr addrspace(3) @buf, i32 1)
  call void @llvm.nvvm.barrier.cluster.arrive.relaxed()
  call void @llvm.nvvm.fence.sc.cluster()
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.clusterid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.cluster.nctarank()
declare ptr addrspace(3) @llvm.nvvm.mapa.shared.cluster(ptr addrspace(3), i32)
declare void @llvm.nvvm.barrier.cluster.arrive.relaxed()
declare void @llvm.nvvm.fence.sc.cluster()
