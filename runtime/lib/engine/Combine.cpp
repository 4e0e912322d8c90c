//===- Combine.cpp - Combined outputs and merges ----------------------------===//
//
// Part of Cleave's runtime (no LLVM). See LaunchContext.h.
//
//===----------------------------------------------------------------------===//

#include "LaunchContext.h"

namespace cleave {
namespace rt {
namespace engine {

namespace {

/// The byte whose repetition is \p Op's identity.
uint8_t identityByte(CombineOp Op) {
  return Op == CombineOp::And || Op == CombineOp::UMin ? 0xff : 0x00;
}

template <class T> T combineValues(CombineOp Op, T A, T B) {
  switch (Op) {
  case CombineOp::Add:
    return T(A + B); // wraps, as the device's atomics do
  case CombineOp::And:
    return A & B;
  case CombineOp::Or:
    return A | B;
  case CombineOp::Xor:
    return A ^ B;
  case CombineOp::UMin:
    return std::min(A, B);
  case CombineOp::UMax:
    return std::max(A, B);
  }
  return A;
}

/// Dst[i] = Dst[i] op Src[i] over \p Bytes bytes of elements of type T.
template <class T>
void combineInto(CombineOp Op, char *Dst, const char *Src, uint64_t Bytes) {
  for (uint64_t I = 0; I + sizeof(T) <= Bytes; I += sizeof(T)) {
    T A, B;
    std::memcpy(&A, Dst + I, sizeof(T));
    std::memcpy(&B, Src + I, sizeof(T));
    A = combineValues(Op, A, B);
    std::memcpy(Dst + I, &A, sizeof(T));
  }
}

} // namespace

bool LaunchContext::isCombined(unsigned ArgNo) const {
  for (const BundleCombined &C : Info.Combined)
    if (C.Arg == ArgNo)
      return true;
  return false;
}

std::string LaunchContext::setUpCombines() {
  Combines.clear();
  CombineBytes = 0;
  FootprintResult FR;
  if (Fp) {
    LaunchConfig C = Config;
    C.First = 0;
    C.Count = int64_t(Total);
    if (Status S = Fp->evaluate(C, FR); !S)
      return "the footprints of the combined outputs: " + S.Message;
  }
  for (const BundleCombined &C : Info.Combined) {
    const PtrArg *P = nullptr;
    for (const PtrArg &Q : Ptrs)
      if (Q.ArgNo == C.Arg)
        P = &Q;
    if (!P)
      continue; // a null pointer: nothing to combine
    for (const PtrArg &Q : Ptrs)
      if (&Q != P && Q.Buf == P->Buf)
        return "argument " + std::to_string(C.Arg) +
               ", whose atomics would be combined, shares its buffer with "
               "argument " +
               std::to_string(Q.ArgNo);
    // Every byte the whole grid may touch through it.
    BufferUse U;
    addArgumentUse(*P, Fp ? FR.find(P->ArgNo) : nullptr, true, 0, Total, U);
    U.Reads.insert(U.Writes);
    ByteRange Rg = hull(U.Reads);
    if (Rg.empty())
      continue;
    if (Rg.Lo % C.Bytes || P->Offset % C.Bytes)
      return "argument " + std::to_string(C.Arg) +
             " is not aligned to its atomics' " + std::to_string(C.Bytes) +
             " bytes";
    CombineUse CU;
    CU.C = &C;
    CU.P = P;
    CU.Bytes = Rg;
    CU.Offset = CombineBytes;
    Combines.push_back(CU);
    CombineBytes += (Rg.size() + 255) / 256 * 256;
  }
  return {};
}

/// Scratch for every run of a combining launch; a device that cannot
/// allocate it fails as in prepareAll().
std::optional<Failure>
LaunchContext::allocateScratch(std::vector<RunState> &Runs) {
  std::map<Location, unsigned> PerDevice;
  for (RunState &R : Runs) {
    R.Scratch = nullptr;
    if (!Combining)
      continue;
    Result Res =
        Scratch.get(Bufs, R.Dev, PerDevice[R.Dev]++, CombineBytes, R.Scratch);
    if (!Res.ok())
      return Failure{R.Dev, Res};
  }
  return std::nullopt;
}

/// Sets the run's scratch to the identities, on stream \p S of its device
/// (before the kernel).
Result LaunchContext::fillScratch(RunState &R, StreamHandle S) {
  if (!R.Scratch)
    return Result::success();
  Device &D = Bufs.device(R.Dev);
  for (const CombineUse &C : Combines) {
    Result Res = D.memset(R.Scratch->Dev + C.Offset, identityByte(C.C->Op),
                          C.Bytes.size(), S);
    if (!Res.ok())
      return Res;
  }
  return Result::success();
}

/// Copies the run's partials to its host scratch, on stream \p S (after
/// the kernel).
Result LaunchContext::readScratch(RunState &R, StreamHandle S) {
  if (!R.Scratch)
    return Result::success();
  Device &D = Bufs.device(R.Dev);
  return D.copyDeviceToHost(static_cast<char *>(R.Scratch->Host),
                            R.Scratch->Dev, CombineBytes, S);
}

/// The partials of the successful runs, combined into the host copies,
/// which then alone hold those bytes. The host copies held the buffers'
/// values before the launch (attempt() makes them valid first), and no run
/// touched the buffers, so a failed run's blocks may simply run again.
Result LaunchContext::combineRuns(const std::vector<RunState> &Runs) {
  if (!Combining)
    return Result::success();
  for (const CombineUse &C : Combines) {
    Buffer &B = *C.P->Buf;
    char *Dst = static_cast<char *>(B.base()) + C.Bytes.Lo;
    for (const RunState &R : Runs) {
      if (R.Failed || !R.Issued || !R.Scratch)
        continue;
      const char *Src = static_cast<const char *>(R.Scratch->Host) + C.Offset;
      if (C.C->Bytes == 8)
        combineInto<uint64_t>(C.C->Op, Dst, Src, C.Bytes.size());
      else
        combineInto<uint32_t>(C.C->Op, Dst, Src, C.Bytes.size());
    }
    Result Res = Bufs.markWritten(B, HostLocation, C.Bytes);
    if (!Res.ok())
      return Res;
  }
  return Result::success();
}

/// Merges run \p R (not on M) into M: copies R's write hulls into the
/// partial buffers and runs the merge kernel on M over R's blocks.
Result LaunchContext::merge(RunState &R, RunState &OnM) {
  LaunchPlan::Run Run;
  Run.Device = MergeDev;
  Run.DeviceName = name(MergeDev);
  Run.First = R.First;
  Run.Count = R.Count;
  Run.IsMerge = true;
  Run.MergeFrom = name(R.Dev);
  Run.Variant = isCpu(MergeDev) ? "cpu-merge" : "merge";
  Device &Src = Bufs.device(R.Dev);
  Device &Dst = Bufs.device(MergeDev);
  for (auto &[Id, P] : R.Partials) {
    auto [Tmp, H] = P;
    if (H.empty())
      continue;
    DeviceAddr From = 0;
    Result Res = Bufs.addressOn(*BufById[Id], R.Dev, H.Lo, From);
    if (Res.ok())
      Res = Src.copyDeviceToDevice(Dst, Tmp, From, H.size());
    if (!Res.ok())
      return Res;
    Transfer T{R.Dev, MergeDev, H.Lo, H.size()};
    Run.Copies.push_back({Id, T, name(R.Dev), name(MergeDev)});
    Run.BytesIn += H.size();
  }
  // Original parameters on M, then one partial pointer per merge output.
  std::vector<void *> ArgPtrs = OnM.ArgPtrs;
  std::vector<void *> PartialVals(Info.MergeOutputs.size(), nullptr);
  for (size_t O = 0; O < Info.MergeOutputs.size(); ++O) {
    unsigned ArgNo = Info.MergeOutputs[O];
    for (const PtrArg &P : Ptrs) {
      if (P.ArgNo != ArgNo)
        continue;
      auto It = R.Partials.find(P.Buf->id());
      if (It != R.Partials.end() && !It->second.second.empty())
        // Same offsets as the buffer: partial + (offset - hull start).
        PartialVals[O] = reinterpret_cast<void *>(static_cast<uintptr_t>(
            It->second.first + (P.Offset - It->second.second.Lo)));
      else // nothing written through it: never read
        PartialVals[O] = OnM.Values[ArgNo];
    }
  }
  for (void *&V : PartialVals)
    ArgPtrs.push_back(&V);
  std::vector<uint32_t> PartParams;
  Result Res;
  if (isCpu(MergeDev)) {
    Res = Dst.checkLaunchFault();
    if (Res.ok())
      Res = launchOne(MergeDev, false, "", K.CpuMerge, R.First, R.Count,
                      ArgPtrs, PartParams);
  } else {
    Res = launchOne(MergeDev, true, Info.variant(VariantKind::Merge).Entry,
                    nullptr, R.First, R.Count, ArgPtrs, PartParams);
    if (Res.ok())
      Res = Dst.synchronizeStream(Dst.internalStream(0));
  }
  Plan.BytesMoved += Run.BytesIn;
  Plan.Runs.push_back(std::move(Run));
  return Res;
}

Result LaunchContext::mergeRuns(AttemptState &A,
                                const std::vector<RunState *> &Redo) {
  // Failed runs of other devices: on M, in place.
  if (!Redo.empty()) {
    std::map<Location, std::vector<std::pair<uint64_t, uint64_t>>> Blocks;
    for (RunState *R : Redo)
      Blocks[R->Dev].push_back({R->First, R->First + R->Count});
    for (auto &[D, B] : Blocks) {
      Excluded.insert(D);
      report(D, A.Failed[D], B, MergeDev);
    }
    for (RunState *R : Redo)
      if (Result Res = rerunOnMerge(*R, A.Runs); !Res.ok())
        return Res;
  }
  RunState *OnM = nullptr;
  for (RunState &R : A.Runs)
    if (R.Dev == MergeDev)
      OnM = &R;
  if (!OnM) {
    freeMergeTemps();
    return Result::error(ErrorCode::Unknown, "merge device has no run");
  }
  for (RunState &R : A.Runs) {
    if (R.Dev == MergeDev)
      continue;
    Result Res = merge(R, *OnM);
    if (Res.ok())
      continue;
    // The partial could not be copied or merged: re-run on M in place.
    Excluded.insert(R.Dev);
    report(R.Dev, Res, {{R.First, R.First + R.Count}}, MergeDev);
    if (Result Again = rerunOnMerge(R, A.Runs); !Again.ok())
      return Again;
  }
  freeMergeTemps();
  for (auto &[Id, W] : A.AllWrites)
    for (ByteRange Rg : W.ranges()) {
      Result Res = Bufs.markWritten(*BufById[Id], MergeDev, Rg);
      if (!Res.ok())
        return Res;
    }
  return Result::success();
}

} // namespace engine
} // namespace rt
} // namespace cleave
