// Special registers that identify where code runs or when.
// RUN: %cuda_to_ir -g %s -o - | %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' -disable-output 2>&1 | FileCheck %s --implicit-check-not=issue:

// %smid and %warpid name hardware that changes when blocks move, and mean
// nothing on the CPU. The clock and the global timer only forbid splitting:
// the CPU variant reads host counters instead.
// CHECK-LABEL: cleave-legality: kernel 'where_and_when(unsigned int*, long long*)'
// CHECK-NEXT:    split: no
// CHECK-NEXT:    cpu: no
// CHECK-NEXT:    issue: hardware-register (forbids split, cpu) 'llvm.nvvm.read.ptx.sreg.smid' at {{.*}}hardware-register.cu:[[@LINE+6]]:22
// CHECK-NEXT:    issue: hardware-register (forbids split, cpu) 'llvm.nvvm.read.ptx.sreg.warpid' at {{.*}}hardware-register.cu:[[@LINE+6]]:27
// CHECK-NEXT:    issue: hardware-register (forbids split) 'llvm.nvvm.read.ptx.sreg.clock64' at
// CHECK-NEXT:    issue: hardware-register (forbids split) 'llvm.nvvm.read.ptx.sreg.globaltimer' at {{.*}}hardware-register.cu:[[@LINE+6]]:25
// CHECK-NEXT:    issue: hardware-register (forbids split, cpu) 'asm mov.u32 $0, %nsmid;' at {{.*}}hardware-register.cu:[[@LINE+7]]:3
__global__ void where_and_when(unsigned *out, long long *t) {
  out[threadIdx.x] = __nvvm_read_ptx_sreg_smid();
  out[threadIdx.x + 32] = __nvvm_read_ptx_sreg_warpid();
  t[threadIdx.x] = clock64();
  t[threadIdx.x + 32] = __nvvm_read_ptx_sreg_globaltimer();
  unsigned n;
  asm("mov.u32 %0, %%nsmid;" : "=r"(n));
  out[threadIdx.x + 64] = n;
}

// Only the clock: the CPU variant can run it.
// CHECK-LABEL: cleave-legality: kernel 'timed(long long*)'
// CHECK-NEXT:    split: no
// CHECK-NEXT:    cpu: yes
// CHECK-NEXT:    issue: hardware-register (forbids split) 'llvm.nvvm.read.ptx.sreg.clock' at
__global__ void timed(long long *t) { t[threadIdx.x] = clock(); }

// Lane and warp size are the same everywhere (the CPU variant runs warps
// whole): no issue.
// CHECK-LABEL: cleave-legality: kernel 'lanes(unsigned int*)'
// CHECK-NEXT:    split: yes
// CHECK-NEXT:    cpu: yes
__global__ void lanes(unsigned *out) {
  out[threadIdx.x] = __nvvm_read_ptx_sreg_laneid() + warpSize;
}
