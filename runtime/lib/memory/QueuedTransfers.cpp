//===- QueuedTransfers.cpp - Copies queued on a stream, claimed later -----===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/Buffers.h:
// BufferManager::queueTransfers() and landTransfers(), the copies of a
// pipelined launch (engine/Pipeline.cpp), which queues them on its GPU's
// copy streams and claims them once those completed.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Buffers.h"

#include <string>

namespace cleave {
namespace rt {

Result BufferManager::queueTransfers(Buffer &B,
                                     const std::vector<Transfer> &Plan,
                                     StreamHandle S) {
  std::vector<ReadyCopy> Ready(Plan.size());
  {
    std::lock_guard<std::mutex> Lock(B.Mutex);
    for (size_t I = 0; I < Plan.size(); ++I) {
      Result X = readyLocked(B, Plan[I], Ready[I]);
      if (!X.ok())
        return X;
      if (!Ready[I].Skip && Ready[I].S != HostLocation &&
          Ready[I].D != HostLocation)
        return Result::error(ErrorCode::InvalidValue,
                             "queued transfer between two devices");
    }
  }
  for (const ReadyCopy &C : Ready) {
    if (C.Skip)
      continue;
    const Transfer &T = C.T;
    Result X = C.S == HostLocation
                   ? Devices[C.D]->copyHostToDevice(
                         C.DstAddr, B.Host + T.Offset, T.Bytes, S)
                   : Devices[C.S]->copyDeviceToHost(B.Host + T.Offset,
                                                    C.SrcAddr, T.Bytes, S);
    if (!X.ok())
      return Result::error(
          X.code(), "queueing bytes " +
                        RangeSet(T.Offset, T.Offset + T.Bytes).toString() +
                        " of buffer #" + std::to_string(B.Id) +
                        (C.S == HostLocation ? " to " : " from ") +
                        Devices[C.S == HostLocation ? C.D : C.S]->name() +
                        ": " + X.message());
  }
  return Result::success();
}

void BufferManager::landTransfers(Buffer &B,
                                  const std::vector<Transfer> &Plan) {
  if (Plan.empty())
    return;
  ChangeCounter Count{*this};
  std::lock_guard<std::mutex> Lock(B.Mutex);
  for (const Transfer &T : Plan) {
    ReadyCopy C;
    C.T = T;
    C.S = validityLocation(T.Src);
    C.D = validityLocation(T.Dst);
    if (C.S == C.D || T.Bytes == 0)
      continue;
    landLocked(B, C);
    if (C.D == HostLocation)
      B.Received.insert(ByteRange{T.Offset, T.Offset + T.Bytes});
  }
}

} // namespace rt
} // namespace cleave
