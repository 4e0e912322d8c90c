// A kernel that synchronizes the whole grid with cooperative groups. Clang 19
// needs CUDA 13's CCCL headers for <cooperative_groups.h>, which
// %cuda_to_ir does not put on the include path; cg_grid_sync.ll is this file
// compiled with
//   %cuda_to_ir -isystem /usr/local/cuda/include/cccl cg_grid_sync.cu -o -
// (clang 19.1.7, CUDA 13.0).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void grid_sync_sum(float *out, int n) {
  cg::grid_group grid = cg::this_grid();
  int i = grid.thread_rank();
  out[i] = 1.0f;
  grid.sync();
  out[i] += out[(i + 1) % n];
}
