// technique(blocks)'s run-time checks send these nests to the nest as
// written: an inner loop that runs zero times at a vertex of the domain
// (s from 1 to i, with i from 0), and a table that overlaps the array of
// weights. The results are those of the nests as written.
#include "sizes.h"
#include <algorithm>

void knap(int *V, const int *w, int n, int m, int l) {
#pragma cleave tile technique(blocks)
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int k = 0; k < l; ++k) {
        int best = j + k;
        for (int s = 1; s <= i; ++s)
          best = std::max(best, V[((i - s) * m + j) * l + k] + w[s]);
        V[(i * m + j) * l + k] = best;
      }
}

void shift(int *V, const int *w, int n, int m, int l) {
#pragma cleave tile technique(blocks)
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int k = 0; k < l; ++k)
        V[(i * m + j) * l + k] = V[((i - 1) * m + j) * l + k] + w[k];
}

int main() {
  const int Dims[][3] = {{3, 4, 5}, {17, 3, 18}, {20, 21, 2}};
  for (const auto &D : Dims) {
    std::vector<int> V(D[0] * D[1] * D[2] + 64, 1), w(64);
    for (int s = 0; s < 64; ++s)
      w[s] = (s * 7) % 11;
    knap(V.data(), w.data(), D[0], D[1], D[2]);
    printHash({D[0] * 1000 + D[1], D[2]}, V);
    // The weights are the table's own cells.
    shift(V.data(), V.data() + 5, D[0], D[1], D[2]);
    printHash({D[0] * 1000 + D[1], D[2]}, V);
  }
}
