//===- HostLinkJson.h - The host-link and sync entries of a profile -*- C++
//-*-===//
//
// Part of cleave-calibrate (no LLVM, no CUDA). How the GPU measurements that
// transfer pipelining needs (docs/calibrate.md's TPSM table: S_S, R_R,
// S_SR, R_SR for pinned and pageable memory, the copies' latency, t_str)
// are turned into the profile's JSON: one encoder per entry, shared by the
// GPU code (GpuCalibrate.cpp) and the unit tests, which read what they
// write back through the runtime's reader (cleave/rt/DeviceProfile.h).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_CALIBRATE_HOSTLINKJSON_H
#define CLEAVE_CALIBRATE_HOSTLINKJSON_H

#include "Profile.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cleave {
namespace calibrate {

/// The fixed cost of one copy, in microseconds: the intercept of the
/// seconds per copy (\p Seconds) against its bytes (\p Bytes), a
/// least-squares line, at least 0.
double copyLatencyUs(const std::vector<double> &Bytes,
                     const std::vector<double> &Seconds);

/// Per-repetition samples of one quantity, each way.
struct TwoWays {
  std::vector<double> H2D, D2H;
};

/// host_links.alone[].pinned: {"h2d_gbps", "d2h_gbps"}.
Json pinnedAloneJson(double H2DGBps, double D2HGBps);

/// host_links.alone[].pageable without "both": {"bytes", "h2d_gbps",
/// "d2h_gbps"} (summaries of \p GBps).
Json pageableAloneJson(size_t Bytes, const TwoWays &GBps);

/// host_links.alone[].pageable.both: {"h2d_bytes", "d2h_bytes", "h2d_gbps",
/// "d2h_gbps", "overlap"} (S_SR and R_SR of pageable memory).
Json pageableBothJson(size_t H2DBytes, size_t D2HBytes, const TwoWays &GBps,
                      double Overlap);

/// host_links.alone[].latency: {"method", "pinned": {"h2d_us", "d2h_us"},
/// "pageable": {...}} (summaries of the per-repetition latencies).
Json copyLatencyJson(const std::string &Method, const TwoWays &PinnedUs,
                     const TwoWays &PageableUs);

/// One GPU of a host_links.states entry: {"gpu", "state", "send_gbps",
/// "receive_gbps"}, a direction it does not use null. The state in which a
/// GPU alone is "SR" gives its pinned S_SR and R_SR.
Json stateGpuJson(int Ordinal, const std::string &State,
                  std::optional<double> SendGBps,
                  std::optional<double> ReceiveGBps);

/// Idle synchronization costs (microseconds, per-sample vectors).
struct SyncSamples {
  std::vector<double> Stream, Ctx, Event, Step;
};
/// gpus[].sync: {"stream_sync_idle_us", "ctx_sync_idle_us",
/// "event_record_sync_us", "step_sync_3_streams_us" (t_str)}.
Json syncJson(const SyncSamples &S);

} // namespace calibrate
} // namespace cleave

#endif
