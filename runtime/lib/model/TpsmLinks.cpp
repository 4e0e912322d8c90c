//===- TpsmLinks.cpp - TPSM's link rates from a device profile ------------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/Tpsm.h and
// docs/calibrate.md (the profile's keys). No nominal rate stands in for a
// measured one: the link of a GPU (PCIe or NVLink-C2C) is not known from its
// name, so what the profile lacks is named and the model refuses.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/DeviceProfile.h"
#include "cleave/rt/Tpsm.h"

#include <algorithm>

namespace cleave {
namespace rt {
namespace tpsm {

namespace {

/// Appends \p What to the comma-separated list \p Missing when \p V is not
/// positive.
void need(double V, const std::string &What, std::string &Missing) {
  if (V > 0)
    return;
  Missing += (Missing.empty() ? "" : ", ") + What;
}

} // namespace

LinkRates linkRates(const GpuProfile &G, HostMemory M) {
  bool Pinned = M == HostMemory::Pinned;
  std::string Kind = Pinned ? "pinned " : "pageable ";
  LinkRates L;
  double SS = Pinned ? G.PinnedH2DGBps : G.PageableH2DGBps;
  double RR = Pinned ? G.PinnedD2HGBps : G.PageableD2HGBps;
  double SSR = Pinned ? G.PinnedBothH2DGBps : G.PageableBothH2DGBps;
  double RSR = Pinned ? G.PinnedBothD2HGBps : G.PageableBothD2HGBps;
  need(SS, Kind + "S_S", L.Missing);
  need(RR, Kind + "R_R", L.Missing);
  need(SSR, Kind + "S_SR", L.Missing);
  need(RSR, Kind + "R_SR", L.Missing);
  need(G.StepSyncUs, "t_str (sync.step_sync_3_streams_us)", L.Missing);
  // One copy engine runs a send and a receive one after the other (digest
  // 000 §3.2 needs two).
  if (G.AsyncEngines == 1)
    L.Missing += std::string(L.Missing.empty() ? "" : ", ") +
                 "a second copy engine (async_engines is 1)";
  L.SendAlone = SS * 1e9;
  L.ReceiveAlone = RR * 1e9;
  // A direction cannot move faster for sharing the link with the other; a
  // measurement above the rate alone is noise, and H() assumes it is not.
  L.SendBoth = std::min(SSR, SS) * 1e9;
  L.ReceiveBoth = std::min(RSR, RR) * 1e9;
  L.StepSync = G.StepSyncUs * 1e-6;
  double SendLat = Pinned ? G.PinnedH2DLatencyUs : G.PageableH2DLatencyUs;
  double RecvLat = Pinned ? G.PinnedD2HLatencyUs : G.PageableD2HLatencyUs;
  if (SendLat < 0 || RecvLat < 0)
    L.Notes.push_back(Kind + "copy latency not in the profile: taken as 0");
  L.SendLatency = std::max(SendLat, 0.0) * 1e-6;
  L.ReceiveLatency = std::max(RecvLat, 0.0) * 1e-6;
  return L;
}

} // namespace tpsm
} // namespace rt
} // namespace cleave
