// Sepia tone on an interleaved 8-bit RGB image, one pixel per thread.
// Same kernel as sepia.cl.
extern "C" __global__ void sepia(const unsigned char *in, unsigned char *out,
                                 int npix) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= npix)
    return;
  float r = in[3 * i], g = in[3 * i + 1], b = in[3 * i + 2];
  float nr = fminf(255.0f, 0.393f * r + 0.769f * g + 0.189f * b);
  float ng = fminf(255.0f, 0.349f * r + 0.686f * g + 0.168f * b);
  float nb = fminf(255.0f, 0.272f * r + 0.534f * g + 0.131f * b);
  out[3 * i] = (unsigned char)nr;
  out[3 * i + 1] = (unsigned char)ng;
  out[3 * i + 2] = (unsigned char)nb;
}
