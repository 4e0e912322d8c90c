//===- Fault.cpp - Fault injection for the runtime's failure paths --------===//
//
// Part of Cleave's runtime (no LLVM).
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Fault.h"
#include "../support/Text.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace cleave {
namespace rt {

const char *getFaultOpName(FaultOp Op) {
  switch (Op) {
  case FaultOp::Alloc:
    return "alloc";
  case FaultOp::Copy:
    return "copy";
  case FaultOp::Memset:
    return "memset";
  case FaultOp::Launch:
    return "launch";
  }
  return "?";
}

FaultInjector &FaultInjector::global() {
  static FaultInjector *G = new FaultInjector();
  return *G;
}

Result FaultInjector::configure(std::string_view Text) {
  std::vector<Rule> Parsed;
  std::string_view Rest = Text;
  while (!Rest.empty()) {
    size_t End = Rest.find_first_of(",;");
    std::string_view Item = trim(Rest.substr(0, End));
    Rest = End == std::string_view::npos ? std::string_view()
                                         : Rest.substr(End + 1);
    if (Item.empty())
      continue;
    auto Bad = [&](const std::string &Why) {
      clear();
      return Result::error(ErrorCode::InvalidValue,
                           "fault rule '" + std::string(Item) + "': " + Why +
                               " (expected <device>:<alloc|copy|memset|"
                               "launch|*>:<n>[+])");
    };
    size_t C1 = Item.find(':');
    size_t C2 = C1 == std::string_view::npos ? C1 : Item.find(':', C1 + 1);
    if (C2 == std::string_view::npos || Item.find(':', C2 + 1) != Item.npos)
      return Bad("not three fields");
    Rule R;
    R.Device = std::string(trim(Item.substr(0, C1)));
    std::string_view Op = trim(Item.substr(C1 + 1, C2 - C1 - 1));
    std::string_view Count = trim(Item.substr(C2 + 1));
    if (R.Device.empty())
      return Bad("no device");
    if (Op == "*")
      R.AnyOp = true;
    else if (Op == "alloc")
      R.Op = FaultOp::Alloc;
    else if (Op == "copy")
      R.Op = FaultOp::Copy;
    else if (Op == "memset")
      R.Op = FaultOp::Memset;
    else if (Op == "launch")
      R.Op = FaultOp::Launch;
    else
      return Bad("unknown operation '" + std::string(Op) + "'");
    if (!Count.empty() && Count.back() == '+') {
      R.AndLater = true;
      Count.remove_suffix(1);
    }
    if (Count.empty() || Count.size() > 18)
      return Bad("bad count");
    uint64_t N = 0;
    for (char Ch : Count) {
      if (!std::isdigit(static_cast<unsigned char>(Ch)))
        return Bad("bad count");
      N = N * 10 + static_cast<uint64_t>(Ch - '0');
    }
    if (N == 0)
      return Bad("counts start at 1");
    R.Nth = N;
    Parsed.push_back(std::move(R));
  }
  std::lock_guard<std::mutex> Lock(Mutex);
  Rules = std::move(Parsed);
  Spec = Rules.empty() ? std::string() : std::string(Text);
  Armed.store(!Rules.empty(), std::memory_order_release);
  return Result::success();
}

void FaultInjector::clear() {
  std::lock_guard<std::mutex> Lock(Mutex);
  Rules.clear();
  Spec.clear();
  Armed.store(false, std::memory_order_release);
}

bool FaultInjector::active() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return !Rules.empty();
}

std::string FaultInjector::spec() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return Spec;
}

bool FaultInjector::countsAcrossDevices() const {
  if (!Armed.load(std::memory_order_acquire))
    return false;
  std::lock_guard<std::mutex> Lock(Mutex);
  for (const Rule &R : Rules) {
    if (R.Device == "*")
      return true;
    bool Letters = true;
    for (char Ch : R.Device)
      Letters &= std::isalpha(static_cast<unsigned char>(Ch)) != 0;
    if (Letters)
      return true;
  }
  return false;
}

bool FaultInjector::matchesDevice(std::string_view Sel,
                                  std::string_view Device) {
  if (Sel == "*" || Sel == Device)
    return true;
  // A kind ("cpu", "gpu": letters only) names every device whose name is the
  // kind followed by its number; "gpu1" names gpu1 only, not gpu10.
  for (char Ch : Sel)
    if (!std::isalpha(static_cast<unsigned char>(Ch)))
      return false;
  if (Device.size() <= Sel.size() || Device.substr(0, Sel.size()) != Sel)
    return false;
  for (char Ch : Device.substr(Sel.size()))
    if (!std::isdigit(static_cast<unsigned char>(Ch)))
      return false;
  return true;
}

bool FaultInjector::shouldFail(std::string_view Device, FaultOp Op) {
  if (!Armed.load(std::memory_order_acquire))
    return false;
  std::lock_guard<std::mutex> Lock(Mutex);
  bool Fail = false;
  for (Rule &R : Rules) {
    if (!(R.AnyOp || R.Op == Op) || !matchesDevice(R.Device, Device))
      continue;
    ++R.Seen;
    if (R.Seen == R.Nth || (R.AndLater && R.Seen > R.Nth))
      Fail = true;
  }
  return Fail;
}

} // namespace rt
} // namespace cleave
