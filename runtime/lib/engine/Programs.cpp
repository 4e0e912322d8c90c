//===- Programs.cpp - Programs' modules and variables on devices ------------===//
//
// Part of Cleave's runtime (no LLVM). See LaunchContext.h.
//
//===----------------------------------------------------------------------===//

#include "LaunchContext.h"

namespace cleave {
namespace rt {
namespace engine {

/// The module of \p P on GPU \p L, loaded on first use.
Result gpuModule(BufferManager &Bufs, Program &P, Location L,
                 Program::Gpu *&Out) {
  // Issue workers look modules up at once for different GPUs: the map
  // changes only on a GPU's first use, which the launching thread makes
  // before it hands a range to a worker (attempt(), phase 2).
  auto Found = P.Gpus.find(L);
  Program::Gpu &G = Found != P.Gpus.end() ? Found->second : P.Gpus[L];
  if (!G.Loaded) {
    Result R = Bufs.device(L).loadModule(P.B, G.M);
    if (!R.ok())
      return R;
    G.Loaded = true;
  }
  Out = &G;
  return Result::success();
}

Result gpuFunction(BufferManager &Bufs, Program &P, Location L,
                   const std::string &Entry, FunctionHandle &Out) {
  Program::Gpu *G = nullptr;
  Result R = gpuModule(Bufs, P, L, G);
  if (!R.ok())
    return R;
  auto It = G->Fns.find(Entry);
  if (It != G->Fns.end()) {
    Out = It->second;
    return Result::success();
  }
  R = Bufs.device(L).getFunction(G->M, Entry, Out);
  if (R.ok())
    G->Fns[Entry] = Out;
  return R;
}

Result gpuGlobal(BufferManager &Bufs, Program &P, Location L, size_t V,
                 DeviceAddr &Addr) {
  Program::Gpu *G = nullptr;
  Result R = gpuModule(Bufs, P, L, G);
  if (!R.ok())
    return R;
  if (auto It = G->Globals.find(V); It != G->Globals.end()) {
    Addr = It->second;
    return Result::success();
  }
  uint64_t Bytes = 0;
  R = Bufs.device(L).getGlobal(G->M, P.B.Variables[V].Name, Addr, Bytes);
  if (R.ok() && Bytes < P.B.Variables[V].Size)
    return Result::error(ErrorCode::InvalidKernelImage,
                         "variable " + P.B.Variables[V].Name + " has " +
                             std::to_string(Bytes) + " bytes on " +
                             Bufs.device(L).name() + ", the bundle says " +
                             std::to_string(P.B.Variables[V].Size));
  if (R.ok())
    G->Globals[V] = Addr;
  return R;
}

/// Makes the host value of variable \p V current.
Result fetchVariable(BufferManager &Bufs, Program &P, size_t V) {
  Program::Var &Var = P.Vars[V];
  if (Var.HostValid || Var.Host.empty())
    return Result::success();
  // A deferred launch may still read the device copy it comes from.
  if (Result S = Bufs.settle(); !S.ok())
    return S;
  if (Var.Cpu && Var.CpuValid) {
    std::memcpy(Var.Host.data(), Var.Cpu, Var.Host.size());
    Var.HostValid = true;
    return Result::success();
  }
  Result Last = Result::error(ErrorCode::InvalidValue,
                              "no device holds variable " +
                                  P.B.Variables[V].Name);
  for (size_t L = 0; L < Bufs.numDevices(); ++L) {
    if (!Var.DevValid[L] || Bufs.device(L).kind() != DeviceKind::Cuda)
      continue;
    DeviceAddr A = 0;
    Result R = gpuGlobal(Bufs, P, Location(L), V, A);
    if (R.ok())
      R = Bufs.device(L).copyDeviceToHost(Var.Host.data(), A,
                                          Var.Host.size());
    if (R.ok()) {
      Var.HostValid = true;
      return R;
    }
    Last = R;
  }
  return Last;
}

/// Makes variable \p V current on device \p L before a kernel runs there:
/// copied now, or with \p Queue (a GPU) queued on its compute stream and
/// deferred, for a launch the caller orders after that stream.
Result syncVariableTo(BufferManager &Bufs, Program &P, size_t V, Location L,
                      bool Queue) {
  Program::Var &Var = P.Vars[V];
  Device &D = Bufs.device(L);
  if (D.kind() == DeviceKind::Cpu) {
    if (Var.CpuValid)
      return Result::success();
    if (!Var.Cpu)
      return Result::error(ErrorCode::NotSupported,
                           "variable " + P.B.Variables[V].Name +
                               " has no CPU copy");
    Result R = fetchVariable(Bufs, P, V);
    if (!R.ok())
      return R;
    std::memcpy(Var.Cpu, Var.Host.data(), Var.Host.size());
    Var.CpuValid = true;
    return Result::success();
  }
  if (Var.DevValid[L])
    return Result::success();
  Result R = fetchVariable(Bufs, P, V);
  DeviceAddr A = 0;
  if (R.ok())
    R = gpuGlobal(Bufs, P, L, V, A);
  if (R.ok() && Queue) {
    // Queued on the compute stream, deferred there: work queued behind it
    // on that stream, or on a program stream ordered after its deferred
    // work (Runtime::directStream), reads the new value. The host value is
    // read before the call returns (staged, as for any copy from pageable
    // memory).
    R = D.copyHostToDevice(A, Var.Host.data(), Var.Host.size(),
                           D.internalStream(0));
    if (R.ok())
      R = Bufs.defer(L, {}, {}, nullptr, true);
  } else if (R.ok()) {
    R = D.copyHostToDevice(A, Var.Host.data(), Var.Host.size());
  }
  if (R.ok())
    Var.DevValid[L] = true;
  return R;
}

/// Variable \p V was written by a kernel on \p L: that copy alone is
/// current.
void variableWritten(BufferManager &Bufs, Program &P, size_t V, Location L) {
  Program::Var &Var = P.Vars[V];
  bool OnCpu = Bufs.device(L).kind() == DeviceKind::Cpu;
  Var.HostValid = false;
  Var.CpuValid = OnCpu;
  for (size_t D = 0; D < Var.DevValid.size(); ++D)
    Var.DevValid[D] = !OnCpu && Location(D) == L;
}

} // namespace engine
} // namespace rt
} // namespace cleave
