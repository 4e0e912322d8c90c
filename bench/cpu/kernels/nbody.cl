// All-pairs accelerations, structure of arrays. Same kernel as nbody.cu.
__kernel void nbody(__global const float *px, __global const float *py,
                    __global const float *pz, __global const float *m,
                    __global float *ax, __global float *ay,
                    __global float *az, int n, float eps2) {
  int i = get_global_id(0);
  if (i >= n)
    return;
  float xi = px[i], yi = py[i], zi = pz[i];
  float sx = 0.0f, sy = 0.0f, sz = 0.0f;
  for (int j = 0; j < n; ++j) {
    float dx = px[j] - xi, dy = py[j] - yi, dz = pz[j] - zi;
    float d2 = dx * dx + dy * dy + dz * dz + eps2;
    float inv = 1.0f / sqrt(d2);
    float s = m[j] * inv * inv * inv;
    sx += dx * s;
    sy += dy * s;
    sz += dz * s;
  }
  ax[i] = sx;
  ay[i] = sy;
  az[i] = sz;
}
