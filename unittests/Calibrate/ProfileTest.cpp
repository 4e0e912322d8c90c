//===- ProfileTest.cpp - The JSON profile's header and helpers ------------===//
//
// Part of Cleave. The calibrator writes device profiles and the runtime's
// reader (cleave/rt/DeviceProfile.h) is their only reader: what the writer's
// encoders produce is read back with the same numbers, and the committed
// profiles give each field from the one key docs/calibrate.md names.
//
//===----------------------------------------------------------------------===//
#include "Profile.h"
#include "cleave/rt/DeviceProfile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

using namespace cleave::calibrate;
using cleave::DeviceProfileSchemaVersion;
namespace rt = cleave::rt;

TEST(CalibrateProfileTest, HeaderIsComplete) {
  Json P = profileHeader(true, "all");
  EXPECT_EQ(checkProfileHeader(P), "");
  EXPECT_EQ(P["schema_version"], DeviceProfileSchemaVersion);
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
  P["schema_version"] = DeviceProfileSchemaVersion + 1;
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

namespace {

/// A summary whose median is \p Median (what the calibrator writes for
/// every measured quantity).
Json summary(double Median) {
  return toJson(summarize({Median * 0.9, Median, Median * 1.1}));
}

/// One GPU entry with every key the runtime's reader takes, encoded with the
/// calibrator's own encoders.
Json gpuEntry(int Index, const CpdFitResult &Cpd) {
  Json G;
  G["index"] = Index;
  G["name"] = "GPU " + std::to_string(Index);
  G["sm_count"] = 132;
  G["sm_clock_mhz"] = 1980;
  G["max_warps_per_sm"] = 64;
  G["max_blocks_per_sm"] = 32;
  G["max_threads_per_sm"] = 2048;
  G["max_threads_per_block"] = 1024;
  G["registers_per_sm"] = 65536;
  G["shared_bytes_per_sm"] = 233472;
  G["shared_bytes_per_block_optin"] = 232448;
  G["shared_bytes_reserved_per_block"] = 1024;
  G["l2_bytes"] = 62914560;
  G["bandwidth"]["dram"]["read_gbps"] = summary(4269.5);
  G["bandwidth"]["dram"]["copy_gbps"] = summary(3900.25);
  G["bandwidth"]["l2"]["read_gbps"] = summary(9000.75);
  G["memory_latency"]["l1"]["clocks"] = summary(33);
  G["memory_latency"]["l2"]["clocks"] = summary(262.5);
  G["memory_latency"]["dram"]["clocks"] = summary(651.25);
  G["launch"]["roundtrip_us"] = summary(7.625);
  G["launch"]["throughput"]["wall_us"] = summary(2.375);
  G["sync"]["stream_sync_idle_us"] = summary(1.5);
  G["cpd"]["fit"] = toJson(Cpd);
  Json Classes = Json::array();
  double Clocks = 4;
  for (const char *Name :
       {"add.s32", "div.s32", "fma.f32", "div.rn.f32", "fma.f64", "div.rn.f64",
        "ex2.approx.f32", "cvt.s32.f32", "ld.global.ca", "ld.shared",
        "st.shared"}) {
    Json C;
    C["name"] = Name;
    C["clocks"] = summary(Clocks);
    Clocks += 2.5;
    Classes.push_back(C);
  }
  G["instructions"]["classes"] = Classes;
  return G;
}

double median(const Json &V) { return V["median"].get<double>(); }

} // namespace

TEST(CalibrateProfileTest, RuntimeReadsBackWhatTheCalibratorWrites) {
  CpdFitResult Cpd;
  Cpd.Fit = {1.5, 6, 1.25, 33, 64};
  Cpd.Points = 100;
  Json P = profileHeader(false, "all");
  P["gpus"] =
      Json::array({errorJson("opening the GPU: no device"), gpuEntry(1, Cpd)});
  P["gpus"][0]["index"] = 0;
  Json G = P["gpus"][1];
  P["cpu"]["threads"] = 8;
  P["cpu"]["memory_bandwidth"]["by_threads"] =
      Json::array({{{"threads", 1}, {"gbps", summary(13.5)}},
                   {{"threads", 8}, {"gbps", summary(80.25)}}});

  rt::DeviceProfile R;
  rt::Result Res = rt::parseDeviceProfile(P.dump(2), R);
  ASSERT_TRUE(Res.ok()) << Res.message();
  EXPECT_EQ(R.GpuEntries, 2u);
  ASSERT_EQ(R.Gpus.size(), 1u); // the failed entry is not a GPU
  const rt::GpuProfile &GP = R.Gpus[0];
  EXPECT_EQ(GP.Entry, 1u);
  EXPECT_EQ(GP.Index, 1);
  EXPECT_EQ(GP.ModelMissing, "");
  // The planner's numbers.
  EXPECT_EQ(GP.SMs, 132u);
  EXPECT_EQ(GP.DramGBps, median(G["bandwidth"]["dram"]["read_gbps"]));
  EXPECT_EQ(GP.LaunchRoundTripUs, median(G["launch"]["roundtrip_us"]));
  EXPECT_EQ(GP.SyncUs, median(G["sync"]["stream_sync_idle_us"]));
  EXPECT_EQ(R.Cpu.Threads, 8u);
  EXPECT_EQ(R.Cpu.TriadGBps, 80.25);
  EXPECT_EQ(R.Cpu.TriadOneThreadGBps, 13.5);
  // The models' numbers, from the same entry.
  const rt::model::GpuParams &M = GP.Model;
  EXPECT_EQ(M.Name, "GPU 1");
  EXPECT_EQ(M.Sms, 132u);
  EXPECT_EQ(M.ClockMHz, 1980);
  EXPECT_EQ(M.SharedReservedPerBlock, 1024u);
  EXPECT_EQ(M.L2Bytes, 62914560u);
  EXPECT_EQ(M.DramGBps, GP.DramGBps);
  EXPECT_EQ(M.DramCopyGBps, median(G["bandwidth"]["dram"]["copy_gbps"]));
  EXPECT_EQ(M.L2GBps, median(G["bandwidth"]["l2"]["read_gbps"]));
  EXPECT_EQ(M.LatencyL1, 33);
  EXPECT_EQ(M.LatencyL2, 262.5);
  EXPECT_EQ(M.LatencyDram, 651.25);
  EXPECT_EQ(M.LaunchUs, median(G["launch"]["throughput"]["wall_us"]));
  EXPECT_EQ(M.Cpd.A, 1.5);
  EXPECT_EQ(M.Cpd.B, 6);
  EXPECT_EQ(M.Cpd.C, 1.25);
  EXPECT_EQ(M.Cpd.D, 33);
  EXPECT_EQ(M.Cpd.M, 64);
  using cleave::InstrClass;
  EXPECT_EQ(M.Latency[unsigned(InstrClass::Int)], 4);
  EXPECT_EQ(M.Latency[unsigned(InstrClass::Fp32)], 9);
  EXPECT_EQ(M.Latency[unsigned(InstrClass::GlobalLoad)], 24);
  EXPECT_EQ(M.Latency[unsigned(InstrClass::SharedStore)], 29);
  EXPECT_EQ(M.Latency[unsigned(InstrClass::Branch)], 4);
}

TEST(CalibrateProfileTest, RuntimeNamesWhatTheModelsMiss) {
  CpdFitResult Bad;
  Bad.Error = "no points";
  Json P = profileHeader(true, "0");
  P["gpus"] = Json::array({gpuEntry(0, Bad)});
  rt::DeviceProfile R;
  ASSERT_TRUE(rt::parseDeviceProfile(P.dump(), R).ok());
  ASSERT_EQ(R.Gpus.size(), 1u);
  EXPECT_EQ(R.Gpus[0].ModelMissing, "cpd.fit.a");

  P["gpus"] = Json::array({gpuEntry(0, CpdFitResult())});
  P["gpus"][0]["instructions"]["classes"].erase(2); // fma.f32
  ASSERT_TRUE(rt::parseDeviceProfile(P.dump(), R).ok());
  EXPECT_EQ(R.Gpus[0].ModelMissing, "instructions.classes[fma.f32]");

  // A newer schema than the reader's is refused.
  P["schema_version"] = DeviceProfileSchemaVersion + 1;
  EXPECT_FALSE(rt::parseDeviceProfile(P.dump(), R).ok());
}

TEST(CalibrateProfileTest, CommittedProfilesReadWithOneKeyEach) {
  // The source tree's profiles/, written by the calibrator on the machines
  // they name (the build gives the tree's root).
  std::string Root = CLEAVE_TEST_SOURCE_ROOT;
  for (const char *Name :
       {"h100x1-all.json", "h200x1-all.json", "h200x4-all.json"}) {
    std::string Path = Root + "/profiles/" + Name;
    std::ifstream In(Path);
    ASSERT_TRUE(In) << "cannot read " << Path;
    std::stringstream Text;
    Text << In.rdbuf();
    Json J = Json::parse(Text.str());
    rt::DeviceProfile R;
    rt::Result Res = rt::parseDeviceProfile(Text.str(), R);
    ASSERT_TRUE(Res.ok()) << Name << ": " << Res.message();
    ASSERT_EQ(R.GpuEntries, J["gpus"].size()) << Name;
    for (const rt::GpuProfile &G : R.Gpus) {
      const Json &E = J["gpus"][G.Entry];
      EXPECT_EQ(G.ModelMissing, "") << Name;
      EXPECT_EQ(G.LaunchRoundTripUs, median(E["launch"]["roundtrip_us"]))
          << Name;
      EXPECT_EQ(G.Model.LaunchUs, median(E["launch"]["throughput"]["wall_us"]))
          << Name;
      EXPECT_EQ(G.DramGBps, median(E["bandwidth"]["dram"]["read_gbps"]))
          << Name;
      EXPECT_EQ(G.Model.DramGBps, G.DramGBps) << Name;
      EXPECT_EQ(G.Model.Sms, G.SMs) << Name;
    }
  }
}
