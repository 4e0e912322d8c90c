//===- AnalyzeProfile.cpp - The device profile for the models ---------------===//
//
// Part of Cleave's driver (docs/analyze.md, docs/calibrate.md).
//
//===----------------------------------------------------------------------===//
#include "AnalyzeData.h"

#include "cleave/Analysis/InstructionMix.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <cmath>
#include <limits>
#include <unordered_map>

using namespace llvm;

namespace cleave {
namespace analyze {

/// A number of the profile: a plain number, or the median of a summary.
std::optional<double> number(const json::Value *V) {
  if (!V)
    return std::nullopt;
  if (auto N = V->getAsNumber())
    return *N;
  if (const json::Object *O = V->getAsObject())
    return number(O->get("median"));
  return std::nullopt;
}

/// Follows a dotted path of object keys.
const json::Value *at(const json::Object &O, StringRef Path) {
  const json::Object *Cur = &O;
  const json::Value *V = nullptr;
  SmallVector<StringRef, 4> Parts;
  Path.split(Parts, '.');
  for (StringRef Key : Parts) {
    if (!Cur)
      return nullptr;
    V = Cur->get(Key);
    if (!V)
      return nullptr;
    Cur = V->getAsObject();
  }
  return V;
}

Expected<model::GpuParams> loadProfile(StringRef Path, unsigned GpuIndex) {
  auto Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return makeError("cannot read the device profile '" + Path +
                     "': " + Buf.getError().message());
  Expected<json::Value> Doc = json::parse((*Buf)->getBuffer());
  if (!Doc)
    return makeError("'" + Path + "' is not JSON: " +
                     toString(Doc.takeError()));
  const json::Object *Root = Doc->getAsObject();
  if (!Root || Root->getString("schema") != "cleave-device-profile")
    return makeError("'" + Path + "' is not a cleave device profile "
                     "(schema \"cleave-device-profile\", docs/calibrate.md)");
  const json::Array *Gpus = Root->getArray("gpus");
  if (!Gpus || Gpus->empty())
    return makeError("the profile '" + Path + "' has no GPU");
  if (GpuIndex >= Gpus->size())
    return makeError("--gpu-index=" + Twine(GpuIndex) + ": the profile '" +
                     Path + "' has " + Twine(Gpus->size()) + " GPU(s)");
  const json::Object *G = (*Gpus)[GpuIndex].getAsObject();
  if (!G)
    return makeError("the profile's gpus[" + Twine(GpuIndex) +
                     "] is not an object");
  std::string Missing;
  auto Need = [&](StringRef Key) -> double {
    std::optional<double> V = number(at(*G, Key));
    if (!V || !std::isfinite(*V)) {
      if (Missing.empty())
        Missing = Key.str();
      return 0;
    }
    return *V;
  };
  model::GpuParams P;
  P.Name = G->getString("name").value_or("GPU").str();
  P.Sms = unsigned(Need("sm_count"));
  P.ClockMHz = Need("sm_clock_mhz");
  P.MaxWarpsPerSm = unsigned(Need("max_warps_per_sm"));
  P.MaxBlocksPerSm = unsigned(Need("max_blocks_per_sm"));
  P.MaxThreadsPerSm = unsigned(Need("max_threads_per_sm"));
  P.MaxThreadsPerBlock = unsigned(Need("max_threads_per_block"));
  P.RegistersPerSm = unsigned(Need("registers_per_sm"));
  P.SharedPerSm = uint64_t(Need("shared_bytes_per_sm"));
  P.SharedPerBlockMax = uint64_t(Need("shared_bytes_per_block_optin"));
  P.SharedReservedPerBlock = uint64_t(Need("shared_bytes_reserved_per_block"));
  P.L2Bytes = uint64_t(Need("l2_bytes"));
  P.DramGBps = Need("bandwidth.dram.read_gbps");
  P.L2GBps = Need("bandwidth.l2.read_gbps");
  // Optional: writes go at the read bandwidth without it.
  P.DramCopyGBps = number(at(*G, "bandwidth.dram.copy_gbps")).value_or(0);
  P.LatencyL2 = Need("memory_latency.l2.clocks");
  // Optional: L1 hits wait the L2 latency without it.
  P.LatencyL1 = number(at(*G, "memory_latency.l1.clocks")).value_or(0);
  P.LatencyDram = Need("memory_latency.dram.clocks");
  P.LaunchUs = Need("launch.throughput.wall_us");
  P.Cpd.A = Need("cpd.fit.a");
  P.Cpd.B = Need("cpd.fit.b");
  P.Cpd.C = Need("cpd.fit.c");
  P.Cpd.D = Need("cpd.fit.d");
  P.Cpd.M = Need("cpd.fit.m");
  StringMap<double> Clocks;
  if (const json::Array *Classes = at(*G, "instructions.classes")
                                       ? at(*G, "instructions.classes")
                                             ->getAsArray()
                                       : nullptr)
    for (const json::Value &C : *Classes)
      if (const json::Object *O = C.getAsObject())
        if (auto Name = O->getString("name"))
          if (auto V = number(O->get("clocks")))
            Clocks[*Name] = *V;
  // Which measured instruction stands for each class (docs/analyze.md).
  auto Clock = [&](StringRef Name) {
    auto It = Clocks.find(Name);
    if (It == Clocks.end()) {
      if (Missing.empty())
        Missing = ("instructions.classes[" + Name + "]").str();
      return 0.0;
    }
    return It->second;
  };
  using model::OpClass;
  auto Set = [&](OpClass C, double V) { P.Latency[unsigned(C)] = V; };
  Set(OpClass::Int, Clock("add.s32"));
  Set(OpClass::IntDiv, Clock("div.s32"));
  Set(OpClass::Fp32, Clock("fma.f32"));
  Set(OpClass::Fp32Div, Clock("div.rn.f32"));
  Set(OpClass::Fp64, Clock("fma.f64"));
  Set(OpClass::Fp64Div, Clock("div.rn.f64"));
  Set(OpClass::Sfu, Clock("ex2.approx.f32"));
  Set(OpClass::Conversion, Clock("cvt.s32.f32"));
  for (OpClass C : {OpClass::GlobalLoad, OpClass::GlobalStore,
                    OpClass::GlobalAtomic, OpClass::Local, OpClass::ConstLoad})
    Set(C, Clock("ld.global.ca"));
  Set(OpClass::SharedLoad, Clock("ld.shared"));
  Set(OpClass::SharedStore, Clock("st.shared"));
  Set(OpClass::SharedAtomic, Clock("ld.shared"));
  Set(OpClass::Warp, Clock("ld.shared"));
  for (OpClass C : {OpClass::Branch, OpClass::Barrier, OpClass::Other})
    Set(C, Clock("add.s32"));
  if (!Missing.empty())
    return makeError("the profile '" + Path + "' (gpus[" + Twine(GpuIndex) +
                     "]) has no usable '" + Missing +
                     "' (docs/calibrate.md lists the fields)");
  P.Issue = model::hopperIssueCosts();
  return P;
}


} // namespace analyze
} // namespace cleave
