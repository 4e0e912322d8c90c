// One 2-D Jacobi step. Same kernel as jacobi.cu.
__kernel void jacobi(__global const float *in, __global float *out, int w,
                     int h) {
  int x = get_global_id(0);
  int y = get_global_id(1);
  if (x >= w || y >= h)
    return;
  int i = y * w + x;
  if (x == 0 || y == 0 || x == w - 1 || y == h - 1)
    out[i] = in[i];
  else
    out[i] = 0.25f * (in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
}
