// STREAM triad: a = b + s * c. Same kernel as triad.cu.
__kernel void triad(__global float *a, __global const float *b,
                    __global const float *c, float s, int n) {
  int i = get_global_id(0);
  if (i < n)
    a[i] = b[i] + s * c[i];
}
