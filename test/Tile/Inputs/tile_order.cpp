// Checks __cleave_tile_of, the ticket -> tile map of the persistent
// wavefront kernel (included from cleave tile's output by
// persistent-order.test), on every shape of up to 40 x 40 tiles and a few
// long ones: each ticket names a distinct tile inside the grid, the
// anti-diagonals come in order, and every tile's upper and left neighbours
// have smaller tickets (the order in which blocks take them, which is why
// no block waits for a tile that no running block holds).
#include <cstdio>
#include <vector>

static bool check(long long R, long long C) {
  std::vector<long long> Ticket(R * C, -1);
  long long LastDiag = 0;
  for (long long K = 0; K < R * C; ++K) {
    long long BI = -1, BJ = -1;
    __cleave_tile_of(K, R, C, &BI, &BJ);
    if (BI < 0 || BI >= R || BJ < 0 || BJ >= C || Ticket[BI * C + BJ] >= 0 ||
        BI + BJ < LastDiag) {
      printf("%lld x %lld: ticket %lld gives tile (%lld, %lld)\n", R, C, K,
             BI, BJ);
      return false;
    }
    Ticket[BI * C + BJ] = K;
    LastDiag = BI + BJ;
  }
  for (long long BI = 0; BI < R; ++BI)
    for (long long BJ = 0; BJ < C; ++BJ) {
      long long K = Ticket[BI * C + BJ];
      if ((BI > 0 && Ticket[(BI - 1) * C + BJ] >= K) ||
          (BJ > 0 && Ticket[BI * C + BJ - 1] >= K)) {
        printf("%lld x %lld: tile (%lld, %lld) before a neighbour\n", R, C, BI,
               BJ);
        return false;
      }
    }
  return true;
}

int main() {
  int Shapes = 0;
  for (long long R = 1; R <= 40; ++R)
    for (long long C = 1; C <= 40; ++C, ++Shapes)
      if (!check(R, C))
        return 1;
  const long long Long[][2] = {{1, 5000}, {5000, 1}, {3, 4097}, {513, 7}};
  for (const auto &S : Long) {
    ++Shapes;
    if (!check(S[0], S[1]))
      return 1;
  }
  printf("%d shapes: every ticket a distinct tile, in wavefront order, "
         "after its neighbours\n",
         Shapes);
  return 0;
}
