//===- Fault.h - Fault injection for the runtime's failure paths -*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). CLEAVE_FAULT makes chosen device
// operations fail so that CI exercises the paths a real GPU takes when it
// runs out of memory or a copy fails (issue 4, section 6). The variable holds
// rules separated by ',' or ';', each
//
//   <device>:<operation>:<n>[+]
//
//   device      a device name (cpu0, cpu1, gpu0, ...), a kind (cpu, gpu:
//               every device of that kind), or * (every device)
//   operation   alloc, copy, memset, launch, or * (any of them)
//   n           the n-th matching operation (1-based) fails; with '+', that
//               one and every later one fail
//
// e.g. CLEAVE_FAULT=gpu0:alloc:2 fails gpu0's second replica allocation, and
// CLEAVE_FAULT=cpu1:copy:1+ makes every copy cpu1 does fail. Each rule counts
// its own matches. The runtime configures the process's injector from
// Options::Fault when it starts (a malformed value is reported once on
// stderr and ignored when the options are parsed); tests call configure().
//
// The check sits in the generic device layer (Device.h), so every kind of
// device, the fake ones of the tests included, fails the same way.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_FAULT_H
#define CLEAVE_RT_FAULT_H

#include "cleave/rt/Error.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace cleave {
namespace rt {

enum class FaultOp { Alloc, Copy, Memset, Launch };

/// "alloc", "copy", "memset", "launch".
const char *getFaultOpName(FaultOp Op);

class FaultInjector {
public:
  /// The process's injector (no rules until configured).
  static FaultInjector &global();

  /// Replaces the rules with those of \p Spec (empty: none) and restarts
  /// every count. On a malformed spec the rules are left empty and the
  /// result says what is wrong.
  Result configure(std::string_view Spec);
  void clear();
  bool active() const;
  /// The spec in force ("" when none).
  std::string spec() const;
  /// Whether a rule counts the operations of several devices together
  /// (`*` or a kind such as `gpu`): which one fails then depends on the
  /// order of operations across devices, so the engine issues serially.
  bool countsAcrossDevices() const;

  /// Counts one \p Op on the device named \p Device; true when a rule says
  /// this one fails.
  bool shouldFail(std::string_view Device, FaultOp Op);

  /// Whether \p Selector (a rule's device field) names \p Device.
  static bool matchesDevice(std::string_view Selector, std::string_view Device);

private:
  struct Rule {
    std::string Device;
    bool AnyOp = false;
    FaultOp Op = FaultOp::Alloc;
    uint64_t Nth = 1;
    bool AndLater = false;
    uint64_t Seen = 0;
  };
  mutable std::mutex Mutex;
  std::vector<Rule> Rules;
  std::string Spec;
  /// !Rules.empty(), read without the lock: every copy and launch asks,
  /// from several threads at once, and almost always there is no rule.
  std::atomic<bool> Armed{false};
};

} // namespace rt
} // namespace cleave

#endif
