// C = A * B, one output per work-item. Same kernel as matmul_naive.cu.
__kernel void matmul_naive(__global const float *A, __global const float *B,
                           __global float *C, int M, int N, int K) {
  int row = get_global_id(1);
  int col = get_global_id(0);
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}
