// Local-memory tree reduction, one partial sum per 256-item work-group.
// Same kernel as reduction.cu.
#define RB 256
__kernel void reduction(__global const float *in, __global float *partial,
                        int n) {
  __local float sdata[RB];
  unsigned tid = get_local_id(0);
  unsigned i = get_group_id(0) * (RB * 2) + tid;
  float v = 0.0f;
  if (i < n)
    v = in[i];
  if (i + RB < n)
    v += in[i + RB];
  sdata[tid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (unsigned s = RB / 2; s > 0; s >>= 1) {
    if (tid < s)
      sdata[tid] += sdata[tid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (tid == 0)
    partial[get_group_id(0)] = sdata[0];
}
