//===- SchedulingPolicies.cpp - The static policies -----------------------===//
//
// Part of Cleave's runtime (no LLVM). See SchedulingPolicy.h. The single,
// even, proportional and weights policies; the model policy is in
// engine/ModelPolicy.cpp.
//
//===----------------------------------------------------------------------===//

#include "SchedulingPolicy.h"

#include <algorithm>
#include <string>

namespace cleave {
namespace rt {

Result splitByWeights(uint64_t Total, const std::vector<Location> &Devs,
                      std::vector<double> W, bool MustWeigh,
                      std::vector<PartitionRange> &Out) {
  Out.clear();
  if (Devs.empty())
    return Result::error(ErrorCode::NoDevice, "no device can run the kernel");
  std::vector<uint64_t> Share(Devs.size(), 0);
  double Sum = 0;
  for (double X : W)
    Sum += X;
  if (Sum <= 0 && MustWeigh)
    return Result::error(ErrorCode::InvalidValue,
                         "the split weights give no device that can run the "
                         "kernel a share");
  if (Sum <= 0) {
    W.assign(Devs.size(), 1.0);
    Sum = double(Devs.size());
  }
  uint64_t Given = 0;
  for (size_t I = 0; I < Devs.size(); ++I) {
    Share[I] = uint64_t(double(Total) * (W[I] / Sum));
    Share[I] = std::min(Share[I], Total - Given);
    Given += Share[I];
  }
  // The remainder, one block at a time, to the largest weights first
  // (ties: the first device).
  std::vector<size_t> Order(Devs.size());
  for (size_t I = 0; I < Order.size(); ++I)
    Order[I] = I;
  std::stable_sort(Order.begin(), Order.end(),
                   [&](size_t A, size_t B) { return W[A] > W[B]; });
  for (size_t J = 0; Given < Total; J = (J + 1) % Order.size(), ++Given)
    ++Share[Order[J]];
  uint64_t First = 0;
  for (size_t I = 0; I < Devs.size(); ++I)
    if (Share[I]) {
      Out.push_back({Devs[I], First, Share[I]});
      First += Share[I];
    }
  return Result::success();
}

namespace {

/// The whole grid on the first GPU that can run the kernel, else on the
/// first device.
class SinglePolicy final : public SchedulingPolicy {
public:
  Result schedule(const ScheduleQuery &Q,
                  std::vector<PartitionRange> &Out) override {
    Out.clear();
    if (Q.Devices.empty())
      return Result::error(ErrorCode::NoDevice,
                           "no device can run the kernel");
    size_t Pick = 0;
    for (size_t I = 0; I < Q.Devices.size(); ++I)
      if (Q.IsGpu[I]) {
        Pick = I;
        break;
      }
    Out.push_back({Q.Devices[Pick], 0, Q.Blocks});
    return Result::success();
  }
};

/// Equal shares, or shares by nominal throughput.
class StaticSplitPolicy final : public SchedulingPolicy {
public:
  explicit StaticSplitPolicy(bool ByThroughput) : ByThroughput(ByThroughput) {}
  Result schedule(const ScheduleQuery &Q,
                  std::vector<PartitionRange> &Out) override {
    std::vector<double> W = ByThroughput
                                ? Q.Throughput
                                : std::vector<double>(Q.Devices.size(), 1.0);
    return splitByWeights(Q.Blocks, Q.Devices, std::move(W), false, Out);
  }

private:
  bool ByThroughput;
};

/// The caller's weight of each device that can run the kernel.
class WeightsPolicy final : public SchedulingPolicy {
public:
  Result schedule(const ScheduleQuery &Q,
                  std::vector<PartitionRange> &Out) override {
    static const std::vector<double> None;
    const std::vector<double> &All = Q.Weights ? *Q.Weights : None;
    if (All.size() != Q.NumLocations)
      return Result::error(ErrorCode::InvalidValue,
                           "the Weights policy needs one weight per device: " +
                               std::to_string(All.size()) + " for " +
                               std::to_string(Q.NumLocations));
    std::vector<double> W;
    for (Location L : Q.Devices)
      W.push_back(All[size_t(L)]);
    Result R = splitByWeights(Q.Blocks, Q.Devices, std::move(W), true, Out);
    if (!R.ok())
      return Result::error(R.code(), std::string(Q.Kernel) + ": " +
                                         R.message() + " (CLEAVE_SPLIT)");
    return R;
  }
};

} // namespace

SchedulingPolicy &schedulingPolicy(PartitionPolicy P) {
  static SinglePolicy Single;
  static StaticSplitPolicy Even(false), Proportional(true);
  static WeightsPolicy Weights;
  switch (P) {
  case PartitionPolicy::SingleDevice:
    return Single;
  case PartitionPolicy::Even:
    return Even;
  case PartitionPolicy::Proportional:
    return Proportional;
  case PartitionPolicy::Weights:
    return Weights;
  case PartitionPolicy::Model:
    return modelPolicy();
  }
  return Proportional;
}

// The policy split, exposed for the tests (see Engine.h).
Result computePolicyPartition(PartitionPolicy P, uint64_t Blocks,
                              const std::vector<Location> &Devices,
                              const std::vector<double> &Weights,
                              std::vector<PartitionRange> &Out) {
  if (Weights.size() != Devices.size())
    return Result::error(ErrorCode::InvalidValue,
                         "one weight per device expected");
  if (P == PartitionPolicy::SingleDevice) {
    Out.clear();
    if (Devices.empty())
      return Result::error(ErrorCode::NoDevice,
                           "no device can run the kernel");
    Out.push_back({Devices.front(), 0, Blocks});
    return Result::success();
  }
  bool Weighed =
      P == PartitionPolicy::Proportional || P == PartitionPolicy::Weights;
  return splitByWeights(Blocks, Devices,
                        Weighed ? Weights
                                : std::vector<double>(Devices.size(), 1.0),
                        P == PartitionPolicy::Weights, Out);
}

} // namespace rt
} // namespace cleave
