//===- StencilDevice.h - The device numbers of the stencil model -*- C++
//-*-===//
//
// Part of Cleave (docs/tile.md). What the cost model of time tiles
// (lib/Tile/StencilCost.inc) and the wavefront tile model
// (WavefrontModel.h) need to know of the GPU: `cleave tile
// --profile=FILE` reads them from a calibrated device profile.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TILE_STENCILDEVICE_H
#define CLEAVE_TILE_STENCILDEVICE_H

#include <cstdint>
#include <string>

namespace cleave::tile {

/// The defaults are the H200's, from profiles/h200x1-all.json.
struct StencilDevice {
  unsigned Sms = 132;
  double ClockMHz = 1980;
  /// DRAM read bandwidth and L2 read bandwidth, GB/s.
  double DramGBps = 4329, L2GBps = 8658;
  uint64_t L2Bytes = 62914560;
  /// One launch among many, back to back.
  double LaunchUs = 3.05;
  /// What the wavefront tile model needs (WavefrontModel.h): FP32 cores per
  /// SM (Li's c: 4 sub-partitions of 32 lanes), the limits of one SM, and
  /// the static shared memory of a block with the driver's reserve.
  unsigned CoresPerSm = 128, MaxThreadsPerSm = 2048, MaxBlocksPerSm = 32;
  uint64_t SharedPerSm = 233472, SharedPerBlock = 49152;
  uint64_t SharedReservedPerBlock = 1024;
  /// Where the numbers come from, for the remark.
  std::string Source = "the built-in H200 numbers";
};

} // namespace cleave::tile

#endif
