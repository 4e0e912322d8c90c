/* Runs the decode of every variant in Inputs/decode-kernels.ll on the host
 * for many original grids and launch offsets, including grids of more than
 * 2^32 blocks, with the arguments the runtime computes
 * (cleave::rt::computePartitionParams), and compares with linear % gx,
 * (linear / gx) % gy, linear / gx / gy. decode-exhaustive.test links this
 * with the variants, their reads of %ctaid.x renamed to fake_ctaid. */
#include "cleave/rt/PartitionParams.h"

#include <stdint.h>
#include <stdio.h>

extern "C" {
static unsigned LaunchedBlock;
unsigned fake_ctaid(void) { return LaunchedBlock; }

typedef void Variant(unsigned *, unsigned, unsigned, unsigned, unsigned,
                     unsigned, unsigned, unsigned, unsigned, unsigned,
                     unsigned, unsigned, unsigned);
Variant __cleave_pr_k_xyz, __cleave_pr_k_x, __cleave_pr_k_y, __cleave_pr_k_z,
    __cleave_pr_k_xz, __cleave_pr_k_yz, __cleave_pr_k_xy;
}

int main(void) {
  Variant *Variants[] = {__cleave_pr_k_xyz, __cleave_pr_k_x,  __cleave_pr_k_y,
                         __cleave_pr_k_z,   __cleave_pr_k_xz, __cleave_pr_k_yz,
                         __cleave_pr_k_xy};
  const char *Reads[] = {"xyz", "x", "y", "z", "xz", "yz", "xy"};
  /* 1-D, small 2-D and 3-D, CUDA's limits in every dimension, just below
   * 2^32 blocks, more than 2^32 blocks in 2-D and 3-D. */
  static const unsigned Grids[][3] = {{7, 1, 1},
                                      {100000, 1, 1},
                                      {5, 3, 1},
                                      {3, 4, 5},
                                      {1, 9, 2},
                                      {1, 1, 65535},
                                      {65536, 65535, 1},
                                      {65536, 65535, 3},
                                      {2147483647u, 3, 1},
                                      {2147483647u, 65535, 1},
                                      {2147483647u, 3, 5},
                                      {2147483647u, 65535, 65535},
                                      {2147483647u, 2, 1},
                                      {7, 65535, 65535},
                                      {65535, 65521, 7}};
  long Checks = 0, Wrong = 0;
  for (unsigned G = 0; G < sizeof Grids / sizeof Grids[0]; ++G) {
    uint64_t GX = Grids[G][0], GY = Grids[G][1], GZ = Grids[G][2];
    uint64_t Total = GX * GY * GZ;
    uint64_t Firsts[] = {0,         1,
                         GX - 1,    GX,
                         Total / 2, Total > 5000 ? Total - 5000 : 0,
                         (1ull << 32) - 3, (1ull << 32) + 7,
                         Total - 2000, Total - 1};
    for (unsigned F = 0; F < sizeof Firsts / sizeof Firsts[0]; ++F) {
      for (unsigned B = 0; B < 2000; B += B < 20 || B > 1980 ? 1 : 97) {
        uint64_t Linear = Firsts[F] + B;
        if (!cleave::rt::isValidPartitionLaunch(Firsts[F], B + 1, GX, GY, GZ))
          continue;
        unsigned P[cleave::rt::NumPartitionParams];
        cleave::rt::computePartitionParams(Firsts[F], GX, GY, GZ, P);
        unsigned Expected[3] = {(unsigned)(Linear % GX),
                                (unsigned)(Linear / GX % GY),
                                (unsigned)(Linear / GX / GY)};
        for (unsigned V = 0; V < 7; ++V) {
          unsigned Out[3] = {~0u, ~0u, ~0u};
          LaunchedBlock = B;
          Variants[V](Out, P[0], P[1], P[2], P[3], P[4], P[5], P[6], P[7],
                      P[8], P[9], P[10], P[11]);
          ++Checks;
          for (const char *R = Reads[V]; *R; ++R) {
            unsigned D = *R - 'x';
            if (Out[D] != Expected[D] && Wrong++ < 10)
              printf("wrong: k_%s grid (%llu, %llu, %llu) linear %llu dim %u: "
                     "%u, expected %u\n",
                     Reads[V], (unsigned long long)GX, (unsigned long long)GY,
                     (unsigned long long)GZ, (unsigned long long)Linear, D,
                     Out[D], Expected[D]);
          }
        }
      }
    }
  }
  printf("decode: %ld runs, %ld wrong\n", Checks, Wrong);
  return Wrong != 0;
}
