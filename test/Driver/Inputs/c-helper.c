/* A C file of a CUDA program: nvcc compiles it as C with the host C
 * compiler. `new` and `class` are names in C, not keywords; the implicit
 * conversion from void * is valid C and an error in C++. */
#include <stdlib.h>

int c_scale(int x) {
  int *new = malloc(sizeof *new);
  int class = 3;
  *new = x * class;
  x = *new;
  free(new);
  return x;
}
