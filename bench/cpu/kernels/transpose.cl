// Tiled transpose. Same kernel as transpose.cu; local size 32 x 32.
#define TILE 32
__kernel void transpose(__global float *out, __global const float *in,
                        int width, int height) {
  __local float tile[TILE][TILE + 1];
  int lx = get_local_id(0), ly = get_local_id(1);
  int x = get_group_id(0) * TILE + lx;
  int y = get_group_id(1) * TILE + ly;
  if (x < width && y < height)
    tile[ly][lx] = in[y * width + x];
  barrier(CLK_LOCAL_MEM_FENCE);
  x = get_group_id(1) * TILE + lx;
  y = get_group_id(0) * TILE + ly;
  if (x < height && y < width)
    out[y * height + x] = tile[lx][ly];
}
