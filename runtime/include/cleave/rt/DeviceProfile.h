//===- DeviceProfile.h - What the planner knows of the machine --*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). The numbers the model-driven
// partitioner (ModelPartitioner.h) needs about each device and the links between
// them, read from a profile that `cleave-calibrate` wrote
// (CLEAVE_PROFILE=path.json, docs/calibrate.md has the schema), or, without
// one, conservative defaults derived from the device attributes (stated in
// the CLEAVE_LOG=plan output, and in docs/partitioner.md).
//
// This is the one reader of the format (the runtime's planner and `cleave
// analyze` both use it). Kept: per GPU its SM count, DRAM read bandwidth,
// host-link bandwidths alone and both ways at once (pinned and pageable)
// with the copies' latency, the launch round trip, stream and 3-stream step
// synchronization costs, the peer bandwidths, and everything the GPU
// models need (model::GpuParams); the aggregate host-link bandwidths
// with every GPU busy; the CPU's triad bandwidth with one thread and with
// all of them.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_DEVICEPROFILE_H
#define CLEAVE_RT_DEVICEPROFILE_H

#include "cleave/rt/Error.h"
#include "cleave/rt/HopperModel.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cleave {
namespace rt {

struct GpuProfile {
  /// The CUDA ordinal it was measured as (the profile's "index").
  int Index = 0;
  /// Its position in the profile's "gpus" array.
  unsigned Entry = 0;
  std::string Name;
  unsigned SMs = 0;
  unsigned MaxThreadsPerSM = 0;
  unsigned MaxBlocksPerSM = 0;
  uint64_t SharedBytesPerSM = 0;
  /// Copy engines (cuDeviceGetAttribute's async engine count); 0 when the
  /// profile does not say. Sends overlapping receives need two.
  unsigned AsyncEngines = 0;
  /// DRAM read bandwidth, GB/s (1e9 B/s).
  double DramGBps = 0;
  /// Host links of this GPU alone, GB/s: pinned host memory, and pageable
  /// memory (what the runtime's host copies are).
  double PinnedH2DGBps = 0, PinnedD2HGBps = 0;
  double PageableH2DGBps = 0, PageableD2HGBps = 0;
  /// The same links with both directions busy at once (S_SR and R_SR of
  /// digest 000 §3.2), GB/s: pinned from the state in which only this GPU
  /// sends and receives, pageable from "pageable.both"; 0 when the profile
  /// lacks them.
  double PinnedBothH2DGBps = 0, PinnedBothD2HGBps = 0;
  double PageableBothH2DGBps = 0, PageableBothD2HGBps = 0;
  /// The fixed cost of one copy (the intercept of copy time against size),
  /// microseconds, from "latency"; -1 when the profile lacks it.
  double PinnedH2DLatencyUs = -1, PinnedD2HLatencyUs = -1;
  double PageableH2DLatencyUs = -1, PageableD2HLatencyUs = -1;
  /// Launch of an empty kernel plus cuStreamSynchronize, microseconds
  /// ("launch.roundtrip_us"). The models' cost of one launch among many is
  /// Model.LaunchUs ("launch.throughput.wall_us").
  double LaunchRoundTripUs = 0;
  /// cuStreamSynchronize on an idle stream, microseconds.
  double SyncUs = 0;
  /// One step of a 3-stream pipeline: an event on each stream, then wait
  /// for all three (t_str of digest 000 §3.2), microseconds; 0 when absent.
  double StepSyncUs = 0;
  /// Peer bandwidth to other GPUs (by ordinal), GB/s.
  std::map<int, double> PeerGBps;
  /// What the GPU models need (docs/analyze.md), from the same entry; the
  /// issue costs are the architecture's, not measured, and stay 0.
  model::GpuParams Model;
  /// The first key Model needs that the entry lacks or holds no finite
  /// number at ("sm_clock_mhz", "instructions.classes[fma.f32]"); empty when
  /// Model is complete.
  std::string ModelMissing;
};

/// One measured host-link state ("host_links.states" entry, digest 000
/// §3.4): per GPU of the profile, in the entry's order, its CUDA ordinal,
/// its state ("N", "S", "R" or "SR") and the GB/s it sent and received
/// while all of them were in their states at once (0 for a direction it
/// does not use).
struct HostLinkState {
  std::string Name;
  std::vector<int> Gpus;
  std::vector<std::string> States;
  std::vector<double> SendGBps, ReceiveGBps;
};

struct CpuProfile {
  unsigned Threads = 0;
  /// Triad bandwidth (A = B + s C) with every thread / with one, GB/s.
  double TriadGBps = 0;
  double TriadOneThreadGBps = 0;
};

struct DeviceProfile {
  /// Where the numbers come from: the profile's path, or "defaults".
  std::string Source = "defaults";
  /// A short identity for cache file names: the profile's host name and
  /// date, or "defaults".
  std::string Tag = "defaults";
  bool FromFile = false;
  /// The GPUs measured without error, in the profile's order.
  std::vector<GpuProfile> Gpus;
  /// Entries of the profile's "gpus" array, measured or not.
  unsigned GpuEntries = 0;
  CpuProfile Cpu;
  /// Host-link bandwidth with every GPU sending (receiving) at once, GB/s;
  /// 0 when the profile does not have that state.
  double AggregateH2DGBps = 0, AggregateD2HGBps = 0;
  /// Every host-link state the profile measured without error (pinned
  /// memory), in its order: the multi-GPU transfer planner's table
  /// (LinkStates.h).
  std::vector<HostLinkState> LinkStates;
  /// The fields whose value has the wrong JSON type, read as missing
  /// ("gpus[0].sm_count is a string, not a number"); whoever loads the
  /// profile reports them with its file.
  std::vector<std::string> TypeErrors;

  /// The profile of the GPU of CUDA ordinal \p Ordinal, or null.
  const GpuProfile *gpu(int Ordinal) const;
};

/// Parses a cleave-calibrate profile (schema cleave::DeviceProfileSchema,
/// version cleave::DeviceProfileSchemaVersion, cleave/ABI/FormatVersions.h).
/// InvalidValue naming what is wrong for text that is not JSON, another
/// schema or version, or a profile without GPUs and CPU numbers.
Result parseDeviceProfile(std::string_view Text, DeviceProfile &Out);
/// Reads and parses \p Path (InvalidValue naming the path on any error).
Result loadDeviceProfile(const std::string &Path, DeviceProfile &Out);

/// Conservative defaults used for what no profile gives, documented in
/// docs/partitioner.md: a GPU's DRAM bandwidth is 10 GB/s per SM, its host
/// link 10 GB/s each way (pageable copies), launch + sync 20 us; the CPU
/// streams 3 GB/s per thread (8 GB/s with one).
namespace profile_defaults {
constexpr double GpuDramGBpsPerSM = 10.0;
constexpr double GpuHostLinkGBps = 10.0;
constexpr double GpuLaunchUs = 20.0;
constexpr double GpuPeerGBps = 50.0;
constexpr double CpuTriadGBpsPerThread = 3.0;
constexpr double CpuOneThreadGBps = 8.0;
} // namespace profile_defaults

} // namespace rt
} // namespace cleave

#endif
