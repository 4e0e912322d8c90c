//===- HostLinkJson.cpp - The host-link and sync entries of a profile ---===//
//
// Part of cleave-calibrate (no LLVM, no CUDA). See HostLinkJson.h.
//
//===----------------------------------------------------------------------===//
#include "HostLinkJson.h"

#include <algorithm>

namespace cleave {
namespace calibrate {

double copyLatencyUs(const std::vector<double> &Bytes,
                     const std::vector<double> &Seconds) {
  return std::max(0.0, fitLine(Bytes, Seconds).Intercept * 1e6);
}

Json pinnedAloneJson(double H2DGBps, double D2HGBps) {
  Json P;
  P["h2d_gbps"] = H2DGBps;
  P["d2h_gbps"] = D2HGBps;
  return P;
}

Json pageableAloneJson(size_t Bytes, const TwoWays &GBps) {
  Json P;
  P["bytes"] = Bytes;
  P["h2d_gbps"] = toJson(summarize(GBps.H2D));
  P["d2h_gbps"] = toJson(summarize(GBps.D2H));
  return P;
}

Json pageableBothJson(size_t H2DBytes, size_t D2HBytes, const TwoWays &GBps,
                      double Overlap) {
  Json J;
  J["h2d_bytes"] = H2DBytes;
  J["d2h_bytes"] = D2HBytes;
  J["h2d_gbps"] = toJson(summarize(GBps.H2D));
  J["d2h_gbps"] = toJson(summarize(GBps.D2H));
  J["overlap"] = Overlap;
  return J;
}

Json copyLatencyJson(const std::string &Method, const TwoWays &PinnedUs,
                     const TwoWays &PageableUs) {
  Json J;
  J["method"] = Method;
  for (auto [Kind, Us] :
       {std::pair<const char *, const TwoWays *>{"pinned", &PinnedUs},
        {"pageable", &PageableUs}}) {
    J[Kind]["h2d_us"] = toJson(summarize(Us->H2D));
    J[Kind]["d2h_us"] = toJson(summarize(Us->D2H));
  }
  return J;
}

Json stateGpuJson(int Ordinal, const std::string &State,
                  std::optional<double> SendGBps,
                  std::optional<double> ReceiveGBps) {
  Json G;
  G["gpu"] = Ordinal;
  G["state"] = State;
  G["send_gbps"] = SendGBps ? Json(*SendGBps) : Json();
  G["receive_gbps"] = ReceiveGBps ? Json(*ReceiveGBps) : Json();
  return G;
}

Json syncJson(const SyncSamples &S) {
  Json J;
  J["stream_sync_idle_us"] = toJson(summarize(S.Stream));
  J["ctx_sync_idle_us"] = toJson(summarize(S.Ctx));
  J["event_record_sync_us"] = toJson(summarize(S.Event));
  J["step_sync_3_streams_us"] = toJson(summarize(S.Step));
  return J;
}

} // namespace calibrate
} // namespace cleave
