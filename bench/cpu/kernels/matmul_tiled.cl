// C = A * B through 16 x 16 local-memory tiles. Same kernel as
// matmul_tiled.cu; local size 16 x 16.
#define TS 16
__kernel void matmul_tiled(__global const float *A, __global const float *B,
                           __global float *C, int M, int N, int K) {
  __local float As[TS][TS];
  __local float Bs[TS][TS];
  int tx = get_local_id(0), ty = get_local_id(1);
  int row = get_group_id(1) * TS + ty;
  int col = get_group_id(0) * TS + tx;
  float acc = 0.0f;
  for (int t = 0; t < K; t += TS) {
    As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0f;
    Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TS; ++k)
      acc += As[ty][k] * Bs[k][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < M && col < N)
    C[row * N + col] = acc;
}
