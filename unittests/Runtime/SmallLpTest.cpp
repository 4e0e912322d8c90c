//===- SmallLpTest.cpp - The planner's dense simplex ----------------------===//

#include "cleave/rt/SmallLp.h"
#include "cleave/rt/LuoModel.h"

#include <gtest/gtest.h>

#include <random>

using namespace cleave::rt;
using namespace cleave::rt::lp;

namespace {
Row row(std::vector<double> A, Sense S, double B) { return {A, S, B}; }
} // namespace

TEST(SmallLpTest, TwoCoveringRows) {
  // min x + y, x + 2y >= 4, 3x + y >= 6: the vertex (1.6, 1.2).
  Solution S = minimize({{1, 1},
                         {row({1, 2}, Sense::GreaterEqual, 4),
                          row({3, 1}, Sense::GreaterEqual, 6)}});
  ASSERT_EQ(S.St, Status::Optimal);
  EXPECT_NEAR(S.Objective, 2.8, 1e-12);
  EXPECT_NEAR(S.X[0], 1.6, 1e-12);
  EXPECT_NEAR(S.X[1], 1.2, 1e-12);
}

TEST(SmallLpTest, EqualityLessEqualAndNegativeRhs) {
  // min -x - 2y, x + y = 3, y <= 2, -x <= -0.5: x = 1, y = 2.
  Solution S =
      minimize({{-1, -2},
                {row({1, 1}, Sense::Equal, 3), row({0, 1}, Sense::LessEqual, 2),
                 row({-1, 0}, Sense::LessEqual, -0.5)}});
  ASSERT_EQ(S.St, Status::Optimal);
  EXPECT_NEAR(S.Objective, -5, 1e-12);
  EXPECT_NEAR(S.X[0], 1, 1e-12);
}

TEST(SmallLpTest, InfeasibleAndUnbounded) {
  EXPECT_EQ(minimize({{1},
                      {row({1}, Sense::LessEqual, 1),
                       row({1}, Sense::GreaterEqual, 2)}})
                .St,
            Status::Infeasible);
  EXPECT_EQ(minimize({{-1, 0}, {row({0, 1}, Sense::LessEqual, 1)}}).St,
            Status::Unbounded);
}

TEST(SmallLpTest, MatchesTheTwoStateVertexSearch) {
  // One GPU's transfer LP has two rows: an optimum uses at most two states,
  // which luo::optimalTransferTime enumerates. Random tables and demands.
  std::mt19937 Rng(7);
  std::uniform_real_distribution<double> U(0, 10);
  for (int Trial = 0; Trial < 300; ++Trial) {
    std::vector<luo::LinkState> States;
    Problem P;
    Row Send{{}, Sense::GreaterEqual, U(Rng) + 0.1};
    Row Recv{{}, Sense::GreaterEqual, Trial % 5 ? U(Rng) : 0.0};
    int N = 2 + Trial % 12;
    for (int Q = 0; Q < N; ++Q) {
      double S = Q % 4 == 1 ? 0 : U(Rng), R = Q % 4 == 2 ? 0 : U(Rng);
      States.push_back({"q", S, R});
      P.Cost.push_back(1);
      Send.A.push_back(S);
      Recv.A.push_back(R);
    }
    P.Rows = {Send, Recv};
    double Want = luo::optimalTransferTime(States, Send.B, Recv.B);
    Solution Got = minimize(P);
    if (!std::isfinite(Want)) {
      EXPECT_EQ(Got.St, Status::Infeasible);
      continue;
    }
    ASSERT_EQ(Got.St, Status::Optimal) << Trial;
    EXPECT_NEAR(Got.Objective, Want, 1e-9 * Want) << Trial;
  }
}
