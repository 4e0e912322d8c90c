//===- ProfileTest.cpp - The JSON profile's header and helpers ------------===//
#include "Profile.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace cleave::calibrate;

TEST(CalibrateProfileTest, HeaderIsComplete) {
  Json P = profileHeader(true, "all");
  EXPECT_EQ(checkProfileHeader(P), "");
  EXPECT_EQ(P["schema_version"], ProfileSchemaVersion);
  EXPECT_EQ(P["tool"]["mode"], "quick");
  EXPECT_FALSE(P["tool"]["commit"].get<std::string>().empty());
  // ISO 8601 in UTC: 2025-01-31T12:00:00Z.
  std::string Date = P["date"];
  ASSERT_EQ(Date.size(), 20u);
  EXPECT_EQ(Date[10], 'T');
  EXPECT_EQ(Date.back(), 'Z');
  // Survives a round trip through text.
  Json Back = Json::parse(P.dump(2));
  EXPECT_EQ(checkProfileHeader(Back), "");
}

TEST(CalibrateProfileTest, HeaderProblemsAreNamed) {
  Json P = profileHeader(false, "cpu");
  P["schema_version"] = ProfileSchemaVersion + 1;
  EXPECT_NE(checkProfileHeader(P).find("newer"), std::string::npos);
  P = profileHeader(false, "cpu");
  P.erase("host");
  EXPECT_NE(checkProfileHeader(P).find("host"), std::string::npos);
  EXPECT_NE(checkProfileHeader(Json::array()), "");
}

TEST(CalibrateProfileTest, SummaryJsonHasNoNonFiniteNumbers) {
  Summary S = summarize({1, 2, 3});
  Json J = toJson(S);
  EXPECT_EQ(J["median"], 2.0);
  EXPECT_EQ(J["samples"], 3);
  S.Median = INFINITY;
  J = toJson(S);
  EXPECT_TRUE(J["median"].is_null());
  // JSON text must parse again (no "inf").
  EXPECT_NO_THROW(Json::parse(J.dump()));
}

TEST(CalibrateProfileTest, CpdFitRoundTrip) {
  CpdFitResult R;
  R.Fit.A = 1.5;
  R.Fit.B = 6;
  R.Fit.C = 1.25;
  R.Fit.D = 33;
  R.Fit.M = 64;
  R.Points = 100;
  Json Cpd;
  Cpd["fit"] = toJson(R);
  Json Back = Json::parse(Cpd.dump());
  cleave::rt::luo::CpdFit F;
  std::string Why;
  ASSERT_TRUE(cpdFitFromJson(Back, F, Why)) << Why;
  EXPECT_EQ(F.A, 1.5);
  EXPECT_EQ(F.B, 6);
  EXPECT_EQ(F.C, 1.25);
  EXPECT_EQ(F.D, 33);
  EXPECT_EQ(F.M, 64);

  CpdFitResult Bad;
  Bad.Error = "no points";
  Cpd["fit"] = toJson(Bad);
  EXPECT_FALSE(cpdFitFromJson(Cpd, F, Why));
  EXPECT_NE(Why.find("no points"), std::string::npos);
  EXPECT_FALSE(cpdFitFromJson(Json::object(), F, Why));
}
