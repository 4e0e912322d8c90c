// Smith-Waterman with affine gaps (Gotoh): three tables written per cell,
// E and F read in the same iteration that writes them; the sequences sit in
// one buffer (the run-time check finds a and b apart from the tables).
#include "sizes.h"
#include <algorithm>

void gotoh(const char *a, const char *b, int *H, int *E, int *F, int n, int m,
           int open, int extend) {
#pragma cleave tile tile(16, 40)
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= m; ++j) {
      const int w = m + 1;
      E[i * (m + 1) + j] = std::max(E[i * (m + 1) + j - 1] - extend,
                                    H[i * (m + 1) + j - 1] - open);
      F[i * (m + 1) + j] = std::max(F[(i - 1) * (m + 1) + j] - extend,
                                    H[(i - 1) * (m + 1) + j] - open);
      int diag = H[(i - 1) * (m + 1) + j - 1] + (a[i - 1] == b[j - 1] ? 3 : -3);
      H[i * (m + 1) + j] = std::max(std::max(0, diag),
                                    std::max(E[i * (m + 1) + j],
                                             F[i * (m + 1) + j]));
      (void)w;
    }
}

int main() {
  unsigned X = 17;
  for (Size Z : testSizes()) {
    std::vector<char> seq(Z.n + Z.m);
    for (char &c : seq) c = "ACGT"[nextRandom(X) & 3];
    size_t Cells = (Z.n + 1) * (Z.m + 1);
    std::vector<int> H(Cells, 0), E(Cells, -1000), F(Cells, -1000);
    gotoh(seq.data(), seq.data() + Z.n, H.data(), E.data(), F.data(), Z.n,
          Z.m, 5, 1);
    printHash(Z, H);
    printHash(Z, E);
  }
}
