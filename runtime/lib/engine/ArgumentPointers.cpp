//===- ArgumentPointers.cpp - Buffer addresses inside by-value arguments --===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/Engine.h and
// docs/runtime.md, "Pointers the engine cannot see": a kernel that takes a
// struct by value and dereferences its pointer fields (the argument-pointer
// issue) reads the program's virtual pointers, the buffers' host-copy
// addresses. On a GPU each such word is replaced by the address of the
// buffer's replica there, in a copy of the argument.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Engine.h"

#include <cstring>

namespace cleave {
namespace rt {

bool usesArgumentPointers(const BundleKernel &Info) {
  bool Any = false;
  for (const BundleIssue &I : Info.Issues) {
    if (I.Kind == "loaded-pointer")
      return false;
    Any |= I.Kind == "argument-pointer";
  }
  return Any;
}

std::vector<ArgumentPointer> findArgumentPointers(const BufferManager &Bufs,
                                                  const BundleKernel &Info,
                                                  void *const *Args) {
  std::vector<ArgumentPointer> Out;
  for (size_t I = 0; I < Info.Params.size(); ++I) {
    const BundleParam &P = Info.Params[I];
    if (P.Kind != ParamKind::ByValue || P.Size < sizeof(void *))
      continue;
    const char *Bytes = static_cast<const char *>(Args[I]);
    for (size_t Off = 0; Off + sizeof(void *) <= P.Size;
         Off += sizeof(void *)) {
      const char *V;
      std::memcpy(&V, Bytes + Off, sizeof(V));
      if (!V)
        continue;
      BufferManager::Resolved R;
      if (Bufs.resolve(V, R).ok()) {
        Out.push_back({I, Off, R.Buf, R.Offset});
        continue;
      }
      // One past the end: a range's end beside its begin.
      if (Bufs.resolve(V - 1, R).ok() && R.Offset + 1 == R.Buf->size())
        Out.push_back({I, Off, R.Buf, R.Buf->size()});
    }
  }
  return Out;
}

Result translateArgumentPointer(BufferManager &Bufs, const ArgumentPointer &P,
                                Location Dev, char *Bytes) {
  DeviceAddr A = 0;
  uint64_t At = P.At == P.Buf->size() && P.At > 0 ? P.At - 1 : P.At;
  if (Result R = Bufs.addressOn(*P.Buf, Dev, At, A); !R.ok())
    return R;
  A += P.At - At;
  std::memcpy(Bytes + P.Offset, &A, sizeof(A));
  return Result::success();
}

} // namespace rt
} // namespace cleave
