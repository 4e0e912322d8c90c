// All-pairs gravitational accelerations (no float4: structure of arrays),
// one body per thread, softening eps2. Same kernel as nbody.cl.
extern "C" __global__ void nbody(const float *px, const float *py,
                                 const float *pz, const float *m, float *ax,
                                 float *ay, float *az, int n, float eps2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float xi = px[i], yi = py[i], zi = pz[i];
  float sx = 0.0f, sy = 0.0f, sz = 0.0f;
  for (int j = 0; j < n; ++j) {
    float dx = px[j] - xi, dy = py[j] - yi, dz = pz[j] - zi;
    float d2 = dx * dx + dy * dy + dz * dz + eps2;
    float inv = 1.0f / sqrtf(d2);
    float s = m[j] * inv * inv * inv;
    sx += dx * s;
    sy += dy * s;
    sz += dz * s;
  }
  ax[i] = sx;
  ay[i] = sy;
  az[i] = sz;
}
