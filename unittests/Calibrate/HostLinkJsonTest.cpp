//===- HostLinkJsonTest.cpp - What TPSM needs, as the calibrator writes it ===//
//
// Part of Cleave. Every link rate of Luo's transfer pipelining model
// (tpsm::linkRates: S_S, R_R, S_SR, R_SR of pinned and pageable memory, the
// copies' latency, t_str, the copy engines) comes from an entry the
// calibrator's GPU code encodes with HostLinkJson.h: a profile built with
// those encoders reads back through the runtime's reader with nothing
// missing and the same numbers; and the copy latency's fit.
//
//===----------------------------------------------------------------------===//
#include "HostLinkJson.h"
#include "cleave/rt/DeviceProfile.h"
#include "cleave/rt/Tpsm.h"

#include <gtest/gtest.h>

#include <functional>

using namespace cleave::calibrate;
namespace rt = cleave::rt;
namespace tpsm = cleave::rt::tpsm;

namespace {

/// A profile with one GPU and the host-link entries the GPU code writes
/// when it runs (measureSync, measureHostLinks), numbers chosen here.
Json linkProfile() {
  Json P = profileHeader(false, "all");
  Json G;
  G["index"] = 0;
  G["name"] = "GPU 0";
  G["sm_count"] = 132;
  G["async_engines"] = 2;
  G["sync"] = syncJson({{1.5, 1.5, 1.5}, {2, 2}, {5, 5}, {8, 9, 10}});
  P["gpus"] = Json::array({G});
  Json A;
  A["gpu"] = 0;
  A["pinned"] = pinnedAloneJson(53.75, 54.5);
  A["pageable"] = pageableAloneJson(64 << 20, {{8.5, 8.75, 9}, {16.5}});
  A["pageable"]["both"] =
      pageableBothJson(32 << 20, 64 << 20, {{7.25}, {12.5, 12.5}}, 0.97);
  A["latency"] =
      copyLatencyJson("test", {{2.25}, {2.75}}, {{10.5, 11, 12}, {9.5}});
  P["host_links"]["alone"] = Json::array({A});
  Json State;
  State["name"] = "SR";
  State["gpus"] = Json::array({stateGpuJson(0, "SR", 40.5, 42.25)});
  Json Send;
  Send["name"] = "S";
  Send["gpus"] = Json::array({stateGpuJson(0, "S", 53.75, std::nullopt)});
  P["host_links"]["states"] = Json::array({Send, State});
  P["cpu"]["threads"] = 16;
  return P;
}

} // namespace

TEST(CalibrateHostLinkJson, TpsmRatesReadBackWithNothingMissing) {
  rt::DeviceProfile R;
  rt::Result Res = rt::parseDeviceProfile(linkProfile().dump(2), R);
  ASSERT_TRUE(Res.ok()) << Res.message();
  ASSERT_EQ(R.Gpus.size(), 1u);
  const rt::GpuProfile &G = R.Gpus[0];
  EXPECT_TRUE(R.TypeErrors.empty());

  tpsm::LinkRates Pin = tpsm::linkRates(G, tpsm::HostMemory::Pinned);
  EXPECT_EQ(Pin.Missing, "");
  EXPECT_TRUE(Pin.Notes.empty());
  EXPECT_DOUBLE_EQ(Pin.SendAlone, 53.75e9);
  EXPECT_DOUBLE_EQ(Pin.ReceiveAlone, 54.5e9);
  EXPECT_DOUBLE_EQ(Pin.SendBoth, 40.5e9);
  EXPECT_DOUBLE_EQ(Pin.ReceiveBoth, 42.25e9);
  EXPECT_DOUBLE_EQ(Pin.SendLatency, 2.25e-6);
  EXPECT_DOUBLE_EQ(Pin.ReceiveLatency, 2.75e-6);
  EXPECT_DOUBLE_EQ(Pin.StepSync, 9e-6); // the median of the samples

  tpsm::LinkRates Page = tpsm::linkRates(G, tpsm::HostMemory::Pageable);
  EXPECT_EQ(Page.Missing, "");
  EXPECT_TRUE(Page.Notes.empty());
  EXPECT_DOUBLE_EQ(Page.SendAlone, 8.75e9);
  EXPECT_DOUBLE_EQ(Page.ReceiveAlone, 16.5e9);
  EXPECT_DOUBLE_EQ(Page.SendBoth, 7.25e9);
  EXPECT_DOUBLE_EQ(Page.ReceiveBoth, 12.5e9);
  EXPECT_DOUBLE_EQ(Page.SendLatency, 11e-6);
  EXPECT_DOUBLE_EQ(Page.ReceiveLatency, 9.5e-6);
  EXPECT_DOUBLE_EQ(Page.StepSync, 9e-6);
}

TEST(CalibrateHostLinkJson, EachEntryIsNeeded) {
  // Without each encoder's entry the model names what is missing: the
  // entries above are exactly what it reads.
  auto MissingWithout = [](const std::function<void(Json &)> &Drop,
                           tpsm::HostMemory M) {
    Json P = linkProfile();
    Drop(P);
    rt::DeviceProfile R;
    EXPECT_TRUE(rt::parseDeviceProfile(P.dump(), R).ok());
    return tpsm::linkRates(R.Gpus.at(0), M).Missing;
  };
  EXPECT_EQ(MissingWithout([](Json &P) { P["host_links"]["states"].erase(1); },
                           tpsm::HostMemory::Pinned),
            "pinned S_SR, pinned R_SR");
  EXPECT_EQ(MissingWithout(
                [](Json &P) {
                  P["host_links"]["alone"][0]["pageable"].erase("both");
                },
                tpsm::HostMemory::Pageable),
            "pageable S_SR, pageable R_SR");
  EXPECT_EQ(
      MissingWithout(
          [](Json &P) { P["gpus"][0]["sync"].erase("step_sync_3_streams_us"); },
          tpsm::HostMemory::Pinned),
      "t_str (sync.step_sync_3_streams_us)");
  EXPECT_EQ(MissingWithout(
                [](Json &P) { P["host_links"]["alone"][0].erase("pinned"); },
                tpsm::HostMemory::Pinned),
            "pinned S_S, pinned R_R");
  // A missing latency is a note, not a refusal.
  Json P = linkProfile();
  P["host_links"]["alone"][0].erase("latency");
  rt::DeviceProfile R;
  ASSERT_TRUE(rt::parseDeviceProfile(P.dump(), R).ok());
  tpsm::LinkRates L = tpsm::linkRates(R.Gpus[0], tpsm::HostMemory::Pageable);
  EXPECT_EQ(L.Missing, "");
  ASSERT_EQ(L.Notes.size(), 1u);
  EXPECT_EQ(L.SendLatency, 0);
}

TEST(CalibrateHostLinkJson, CopyLatencyIsTheInterceptInMicroseconds) {
  // 16 copies of each size, 7 us + bytes at 25 GB/s per copy.
  std::vector<double> Bytes = {4096, 65536, 1 << 20, 4 << 20}, Seconds;
  for (double B : Bytes)
    Seconds.push_back(7e-6 + B / 25e9);
  EXPECT_NEAR(copyLatencyUs(Bytes, Seconds), 7.0, 1e-9);
  // Noise that puts the intercept below 0 gives 0, not a negative cost.
  Seconds = {0.1e-6, 2.7e-6, 41e-6, 168e-6};
  EXPECT_EQ(copyLatencyUs(Bytes, Seconds), 0);
}
