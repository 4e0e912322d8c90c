//===- CpdFitTest.cpp - The least-squares fit of Luo's CPD curve ----------===//
//
// Synthetic curves from known a, b, c, d (digest 000 (3.4)-(3.6)) must give
// those parameters back; noisy ones nearly so; bad input is refused.
//
//===----------------------------------------------------------------------===//
#include "CpdFit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace cleave::calibrate;
using cleave::rt::luo::CpdFit;

namespace {

std::vector<CpdCurve> synthesize(const CpdFit &F,
                                 const std::vector<double> &Ps,
                                 double Noise = 0, unsigned Seed = 1) {
  std::mt19937 Rng(Seed);
  std::normal_distribution<double> N(0, 1);
  std::vector<CpdCurve> Curves;
  for (double P : Ps) {
    CpdCurve C;
    C.P = P;
    for (int W = 1; W <= int(F.M); ++W) {
      C.Warps.push_back(W);
      double Y = cpdModel(F, W, P);
      C.Cpd.push_back(Y * (1 + Noise * N(Rng)));
    }
    Curves.push_back(C);
  }
  return Curves;
}

} // namespace

TEST(CpdFitTest, ModelIsTheMinOfTheTwoBranches) {
  CpdFit F; // GTX 260: a=3, b=11, c=0.5, d=80, m=32
  // P = 0.87 (Black-Scholes), N = 16: CPD1 = (0.5-0.87)(16-11)+3 = 1.15,
  // the digest's literal value; CPD2 is larger.
  EXPECT_NEAR(cpdModel(F, 16, 0.87), 1.15, 1e-12);
  // N = 1: CPD2 = a exactly.
  EXPECT_NEAR(cpdModel(F, 1, 0.87), 3.0, 1e-12);
}

TEST(CpdFitTest, RecoversKnownParametersExactly) {
  // Both branches active on every curve (rising line, then the ellipse).
  CpdFit Truth;
  Truth.A = 1.2;
  Truth.B = 8;
  Truth.C = 1.6;
  Truth.D = 40;
  Truth.M = 64;
  auto Curves = synthesize(Truth, {1.0, 0.85, 0.6, 0.35});
  CpdFitResult R = fitCpd(Curves, 64);
  ASSERT_TRUE(R.ok()) << R.Error;
  EXPECT_NEAR(R.Fit.A, Truth.A, 1e-4);
  EXPECT_NEAR(R.Fit.B, Truth.B, 1e-3);
  EXPECT_NEAR(R.Fit.C, Truth.C, 1e-5);
  EXPECT_NEAR(R.Fit.D, Truth.D, 1e-3);
  EXPECT_EQ(R.Fit.M, 64);
  EXPECT_LT(R.Rms, 1e-6);
  EXPECT_NEAR(R.RSquared, 1.0, 1e-9);
  EXPECT_EQ(R.Points, 4u * 64u);
}

TEST(CpdFitTest, RecoversTheThesisGtx260Fit) {
  // a = 3, b = 11, c = 0.5, d = 80 with m = 32 (digest 000 §1.5); curves at
  // P below c, where CPD1 rises.
  CpdFit Truth; // defaults are the GTX 260 values
  auto Curves = synthesize(Truth, {0.1, 0.2, 0.3});
  CpdFitResult R = fitCpd(Curves, 32);
  ASSERT_TRUE(R.ok()) << R.Error;
  EXPECT_NEAR(R.Fit.A, 3, 1e-3);
  EXPECT_NEAR(R.Fit.B, 11, 1e-3);
  EXPECT_NEAR(R.Fit.C, 0.5, 1e-4);
  EXPECT_NEAR(R.Fit.D, 80, 1e-2);
}

TEST(CpdFitTest, NoisyPointsGiveCloseParameters) {
  CpdFit Truth;
  Truth.A = 1.0;
  Truth.B = 4;
  Truth.C = 1.5;
  Truth.D = 30;
  Truth.M = 64;
  auto Curves = synthesize(Truth, {1.0, 0.8, 0.55, 0.3}, 0.01, 7);
  CpdFitResult R = fitCpd(Curves, 64);
  ASSERT_TRUE(R.ok()) << R.Error;
  EXPECT_NEAR(R.Fit.C, Truth.C, 0.05);
  EXPECT_NEAR(R.Fit.A, Truth.A, 0.3);
  EXPECT_NEAR(R.Fit.D / Truth.D, 1.0, 0.1);
  // The fit must explain the data about as well as the truth does.
  EXPECT_GT(R.RSquared, 0.99);
}

TEST(CpdFitTest, RefusesBadInput) {
  EXPECT_FALSE(fitCpd({}, 64).ok());
  CpdCurve Few;
  Few.Warps = {1, 2, 3};
  Few.Cpd = {1, 2, 3};
  EXPECT_NE(fitCpd({Few}, 64).Error.find("at least 4"), std::string::npos);
  CpdCurve Mismatch;
  Mismatch.Warps = {1, 2};
  Mismatch.Cpd = {1};
  EXPECT_FALSE(fitCpd({Mismatch}, 64).ok());
  CpdCurve Outside;
  Outside.Warps = {1, 2, 3, 80};
  Outside.Cpd = {1, 2, 3, 4};
  EXPECT_NE(fitCpd({Outside}, 64).Error.find("outside"), std::string::npos);
  CpdCurve NaN;
  NaN.Warps = {1, 2, 3, 4};
  NaN.Cpd = {1, 2, std::nan(""), 4};
  EXPECT_FALSE(fitCpd({NaN}, 64).ok());
  EXPECT_FALSE(fitCpd({}, 1).ok());
}
