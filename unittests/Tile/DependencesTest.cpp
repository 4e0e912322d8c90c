//===- DependencesTest.cpp - cleave tile's nest model and dependences -----===//
//
// The dependences isl computes for a marked nest against a brute-force
// enumeration of every pair of iterations on a small domain (digest 001 s9
// asks for such a checker), and the nest model's recovery of 2-D cells from
// linearized subscripts.
//
//===----------------------------------------------------------------------===//
#include "cleave/Tile/Dependences.h"
#include "cleave/Tile/Nest.h"
#include "cleave/Tile/Stencil.h"

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Tooling.h"

#include "gtest/gtest.h"

#include <set>
#include <tuple>

using namespace cleave::tile;

namespace {

struct FirstFor : clang::RecursiveASTVisitor<FirstFor> {
  const clang::ForStmt *Found = nullptr;
  bool VisitForStmt(clang::ForStmt *F) {
    if (!Found)
      Found = F;
    return true;
  }
};

/// The nest of the first for loop of Code, or the refusal's text.
struct Parsed {
  std::unique_ptr<clang::ASTUnit> AST;
  std::optional<Nest> N;
  Refusal Why;
};

Parsed parse(const std::string &Code) {
  Parsed P;
  P.AST = clang::tooling::buildASTFromCodeWithArgs(Code, {"-std=c++17"});
  FirstFor V;
  V.TraverseDecl(P.AST->getASTContext().getTranslationUnitDecl());
  P.N = extractNest(V.Found, P.AST->getASTContext(), P.Why);
  return P;
}

using Offset = std::pair<int, int>;
using Distances = std::set<std::tuple<DependenceKind, int, int>>;

/// Every (kind, di, dj) between iterations of an n x m domain whose body
/// writes cell (i, j) and reads the cells at Reads (before the write).
Distances bruteForce(const std::vector<Offset> &Reads, int N, int M) {
  Distances D;
  struct Acc {
    Offset O;
    bool W;
  };
  std::vector<Acc> Accs;
  for (Offset R : Reads)
    Accs.push_back({R, false});
  Accs.push_back({{0, 0}, true});
  for (int I1 = 2; I1 < N; ++I1)
    for (int J1 = 2; J1 < M; ++J1)
      for (int I2 = 2; I2 < N; ++I2)
        for (int J2 = 2; J2 < M; ++J2) {
          if (std::make_pair(I1, J1) >= std::make_pair(I2, J2))
            continue;
          for (const Acc &X : Accs)
            for (const Acc &Y : Accs) {
              if (I1 + X.O.first != I2 + Y.O.first ||
                  J1 + X.O.second != J2 + Y.O.second || (!X.W && !Y.W))
                continue;
              DependenceKind K = X.W && Y.W ? DependenceKind::Output
                                 : X.W      ? DependenceKind::Flow
                                            : DependenceKind::Anti;
              D.insert({K, I2 - I1, J2 - J1});
            }
        }
  return D;
}

std::string nestWithReads(const std::vector<Offset> &Reads) {
  std::string Sum = "0";
  for (Offset R : Reads)
    Sum += " + A[(i + " + std::to_string(R.first) + ") * (m + 4) + j + " +
           std::to_string(R.second) + "]";
  return "void f(int *A, int n, int m) {\n"
         "  for (int i = 2; i < n; ++i)\n"
         "    for (int j = 2; j < m; ++j)\n"
         "      A[i * (m + 4) + j] = " +
         Sum + ";\n}\n";
}

TEST(TileDependences, MatchBruteForceOnSmallDomains) {
  const std::vector<std::vector<Offset>> Cases = {
      {{-1, 0}, {0, -1}, {-1, -1}},       // edit distance, SAT
      {{-1, 0}, {0, -1}, {1, 0}, {0, 1}}, // SOR
      {{-1, 1}},                          // (1, -1): not tileable
      {{1, -1}, {-2, 0}},                 // anti (1, -1), flow (2, 0)
      {{0, 0}},                           // only loop-independent
      {{-2, -2}, {2, 2}, {0, -2}},
  };
  for (const auto &Reads : Cases) {
    Parsed P = parse(nestWithReads(Reads));
    ASSERT_TRUE(P.N) << P.Why.Why;
    llvm::Expected<std::vector<Dependence>> Deps = computeDependences(*P.N);
    ASSERT_TRUE(bool(Deps)) << llvm::toString(Deps.takeError());
    Distances Got;
    bool AllNonNegative = true;
    for (const Dependence &D : *Deps) {
      for (auto [A, B] : D.Distances)
        Got.insert({D.Kind, int(A), int(B)});
      AllNonNegative &= D.NonNegative;
    }
    Distances Want = bruteForce(Reads, 12, 12);
    EXPECT_EQ(Got, Want) << nestWithReads(Reads);
    bool WantNonNegative = true;
    for (auto [K, A, B] : Want)
      WantNonNegative &= A >= 0 && B >= 0;
    EXPECT_EQ(AllNonNegative, WantNonNegative) << nestWithReads(Reads);
  }
}

/// An iterated stencil, in the swap form, whose step reads A at Reads over
/// the domain [3, n) x [3, m) (pitch m + 8).
std::string stencilWithReads(const std::vector<Offset> &Reads) {
  std::string Sum = "0";
  for (Offset R : Reads)
    Sum += " + A[(i + " + std::to_string(R.first) + ") * (m + 8) + j + " +
           std::to_string(R.second) + "]";
  return "namespace std { template <class T> void swap(T &a, T &b); }\n"
         "void f(int *A, int *B, int n, int m, int T) {\n"
         "  for (int t = 0; t < T; ++t) {\n"
         "    for (int i = 3; i < n; ++i)\n"
         "      for (int j = 3; j < m; ++j)\n"
         "        B[i * (m + 8) + j] = " +
         Sum + ";\n    std::swap(A, B);\n  }\n}\n";
}

/// The distances (1, di, dj) from step t's write of cell (i, j) to step
/// t + 1's reads of it, on an N x M domain starting at (3, 3).
std::set<std::array<int64_t, 3>>
stencilBruteForce(const std::vector<Offset> &Reads, int N, int M) {
  std::set<std::array<int64_t, 3>> D;
  for (int I = 3; I < N; ++I)
    for (int J = 3; J < M; ++J)
      for (int I2 = 3; I2 < N; ++I2)
        for (int J2 = 3; J2 < M; ++J2)
          for (Offset R : Reads)
            if (I2 + R.first == I && J2 + R.second == J)
              D.insert({1, I2 - I, J2 - J});
  return D;
}

TEST(TileStencil, DistancesBetweenStepsMatchBruteForce) {
  const std::vector<std::vector<Offset>> Cases = {
      {{-1, 0}, {1, 0}, {0, -1}, {0, 1}, {0, 0}}, // star, radius 1
      {{-2, -2}, {2, 2}},                         // radius 2, two points
      {{-3, 1}, {0, 2}},                          // asymmetric
      {{0, 0}},                                   // pointwise
  };
  for (const auto &Reads : Cases) {
    std::string Code = stencilWithReads(Reads);
    Parsed P;
    P.AST = clang::tooling::buildASTFromCodeWithArgs(Code, {"-std=c++17"});
    FirstFor V;
    V.TraverseDecl(P.AST->getASTContext().getTranslationUnitDecl());
    std::optional<StencilNest> S =
        extractStencil(V.Found, P.AST->getASTContext(), P.Why);
    ASSERT_TRUE(S) << P.Why.Why << "\n" << Code;
    EXPECT_EQ(S->Form, StencilForm::Swap);
    std::set<std::array<int64_t, 3>> Got(S->Distances.begin(),
                                         S->Distances.end());
    EXPECT_EQ(Got, stencilBruteForce(Reads, 14, 15)) << Code;
    unsigned Radius = 0;
    for (Offset R : Reads)
      Radius = std::max<unsigned>(
          Radius, std::max(std::abs(R.first), std::abs(R.second)));
    EXPECT_EQ(S->Radius, Radius) << Code;
  }
}

TEST(TileNest, RecoversCellsOfLinearizedSubscripts) {
  Parsed P = parse("void f(int *D, const char *a, int n, int m) {\n"
                   "  for (int i = 1; i <= n; ++i)\n"
                   "    for (int j = 1; j <= m; ++j)\n"
                   "      D[i * (m + 1) + j] = D[(i - 1) * (m + 1) + j - 1] +"
                   " D[(m + 1) * (i + 1) + (j + 1) - m - 1] + a[i - 1];\n"
                   "}\n");
  ASSERT_TRUE(P.N) << P.Why.Why;
  const Nest &N = *P.N;
  EXPECT_EQ(N.Outer.Upper.str(), "(long long)n + 1");
  ASSERT_EQ(N.Accesses.size(), 4u);
  // Accesses in source order: the write's target comes first.
  EXPECT_EQ(std::make_pair(N.Accesses[0].Row, N.Accesses[0].Col),
            std::make_pair(int64_t(0), int64_t(0)));
  EXPECT_EQ(std::make_pair(N.Accesses[1].Row, N.Accesses[1].Col),
            std::make_pair(int64_t(-1), int64_t(-1)));
  // (m + 1)(i + 1) + j + 1 - m - 1 = (i + 0)(m + 1) + j + 1.
  EXPECT_EQ(std::make_pair(N.Accesses[2].Row, N.Accesses[2].Col),
            std::make_pair(int64_t(0), int64_t(1)));
  const Array &D = N.Arrays[N.Accesses[0].Array];
  EXPECT_TRUE(D.Written);
  EXPECT_EQ(D.Pitch.str(), "(long long)m + 1");
  EXPECT_EQ(std::make_tuple(D.MinRow, D.MaxRow, D.MinCol, D.MaxCol),
            std::make_tuple(int64_t(-1), int64_t(0), int64_t(-1), int64_t(1)));
  EXPECT_FALSE(N.Arrays[N.Accesses[3].Array].Written);
}

TEST(TileNest, ConstantPitchSplitsAtTheNearestRow) {
  Parsed P = parse("void f(float *A, int n) {\n"
                   "  for (int i = 1; i < n; ++i)\n"
                   "    for (int j = 1; j < 7; ++j)\n"
                   "      A[8 * i + j] = A[8 * i + j - 9] + A[8 * i + j + 7];\n"
                   "}\n");
  ASSERT_TRUE(P.N) << P.Why.Why;
  EXPECT_EQ(std::make_pair(P.N->Accesses[1].Row, P.N->Accesses[1].Col),
            std::make_pair(int64_t(-1), int64_t(-1)));
  EXPECT_EQ(std::make_pair(P.N->Accesses[2].Row, P.N->Accesses[2].Col),
            std::make_pair(int64_t(1), int64_t(-1)));
}

TEST(TileNest, BoundsMayBeConstReferences) {
  Parsed P = parse("void f(int *A, const int &n, const long &m) {\n"
                   "  for (int i = 1; i < n; ++i)\n"
                   "    for (int j = 1; j < m; ++j)\n"
                   "      A[i * m + j] = A[(i - 1) * m + j];\n"
                   "}\n");
  ASSERT_TRUE(P.N) << P.Why.Why;
  EXPECT_EQ(P.N->Inner.Upper.str(), "(long long)m");
}

TEST(TilePoly, ArithmeticAndText) {
  Parsed P = parse("void f(int *A, int n, int m) {\n"
                   "  for (int i = 0; i < 2 * n - m + 3; ++i)\n"
                   "    for (int j = 0; j < m; ++j)\n"
                   "      A[i * m + j] = 0;\n"
                   "}\n");
  ASSERT_TRUE(P.N) << P.Why.Why;
  EXPECT_EQ(P.N->Outer.Upper.str(), "-(long long)m + 2 * (long long)n + 3");
  EXPECT_EQ(P.N->Outer.Upper.str("p_", false), "-p_m + 2 * p_n + 3");
  Poly U = P.N->Outer.Upper;
  EXPECT_EQ(U.degree(), 1u);
  EXPECT_EQ((U - U).str(), "0");
  EXPECT_EQ((U * U).degree(), 2u);
  EXPECT_EQ(U.constantTerm(), 3);
}

} // namespace
