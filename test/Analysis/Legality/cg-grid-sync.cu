// cooperative_groups' grid sync (CUDA 13 headers, inline PTX reading the grid
// workspace from %envreg1/2) keeps the kernel whole on one GPU, and the
// remarks say why; this_grid() without sync() is no issue (the workspace
// reads are dead) and the kernel is split and gets a CPU variant.
// RUN: %cleave compile --emit=bundle -Rpass=cleave-partition -Rpass-missed='cleave-partition|cleave-cpu-lower' %s -o %t.clvb 2>&1 | FileCheck %s
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// CHECK-DAG: remark: kernel twoPhase(int*) stays GPU-only: grid-sync (cooperative_groups grid sync (this_grid().sync()) needs the whole grid resident: asm mov.u32 $0, %envreg2;)
// CHECK-DAG: remark: kernel 'twoPhase(int*)' is not split: grid-sync 'cooperative_groups grid sync (this_grid().sync()) needs the whole grid resident: asm mov.u32 $0, %envreg2;'
__global__ void twoPhase(int *data) {
  cg::grid_group g = cg::this_grid();
  data[g.thread_rank()] = 1;
  g.sync();
  data[g.thread_rank()] += data[(g.thread_rank() + 1) % g.size()];
}

// CHECK-DAG: remark: kernel 'ranks(int*)': created '__cleave_pr__Z5ranksPi'
// CHECK-NOT: ranks(int*){{.*}}stays GPU-only
__global__ void ranks(int *out) {
  cg::grid_group g = cg::this_grid();
  out[g.thread_rank()] = int(g.size());
}
