// Sepia tone on interleaved 8-bit RGB. Same kernel as sepia.cu.
__kernel void sepia(__global const uchar *in, __global uchar *out, int npix) {
  int i = get_global_id(0);
  if (i >= npix)
    return;
  float r = in[3 * i], g = in[3 * i + 1], b = in[3 * i + 2];
  float nr = fmin(255.0f, 0.393f * r + 0.769f * g + 0.189f * b);
  float ng = fmin(255.0f, 0.349f * r + 0.686f * g + 0.168f * b);
  float nb = fmin(255.0f, 0.272f * r + 0.534f * g + 0.131f * b);
  out[3 * i] = (uchar)nr;
  out[3 * i + 1] = (uchar)ng;
  out[3 * i + 2] = (uchar)nb;
}
