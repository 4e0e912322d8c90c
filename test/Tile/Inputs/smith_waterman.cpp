// Smith-Waterman local alignment with a linear gap penalty (digest 001 s2:
// match +3, mismatch -3, gap -2); the best score is a max reduction.
#include "sizes.h"
#include <algorithm>

void smithWaterman(const char *a, const char *b, int *H, int n, int m,
                   int gap, int &best) {
#pragma cleave tile tile(8, 24)
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= m; ++j) {
      int diag = H[(i - 1) * (m + 1) + j - 1] + (a[i - 1] == b[j - 1] ? 3 : -3);
      int up = H[(i - 1) * (m + 1) + j] - gap;
      int left = H[i * (m + 1) + j - 1] - gap;
      H[i * (m + 1) + j] = std::max(std::max(0, diag), std::max(up, left));
      best = std::max(best, H[i * (m + 1) + j]);
    }
}

int main() {
  unsigned X = 3;
  for (Size Z : testSizes()) {
    std::vector<char> a(Z.n), b(Z.m);
    for (char &c : a) c = "ACGT"[nextRandom(X) & 3];
    for (char &c : b) c = "ACGT"[nextRandom(X) & 3];
    std::vector<int> H((Z.n + 1) * (Z.m + 1), 0);
    int best = -1;
    smithWaterman(a.data(), b.data(), H.data(), Z.n, Z.m, 2, best);
    printf("best %d ", best);
    printHash(Z, H);
  }
}
