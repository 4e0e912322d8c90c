//===- CudaManagedApi.cpp - Managed memory in the CUDA-runtime subset -----===//
//
// Part of Cleave's runtime (no LLVM). cudaMallocManaged, cudaMemPrefetchAsync
// and cudaMemAdvise (docs/runtime-api.md). Managed memory follows CUDA's
// contract for devices without concurrent managed access: the host reads and
// writes it directly whenever no work is outstanding (after allocation, and
// after a synchronization), and every result is in it after one
// (docs/runtime.md, "Managed memory").
//
//===----------------------------------------------------------------------===//
#include "CudaApi.h"

using namespace cleave::rt;
using namespace cleave::rt::api;

namespace {

/// A client of cleave-serve owns no buffers' host copies: the server's
/// process does, so the client could not touch them.
Result notServed(const char *What) {
  return error(ErrorCode::NotSupported, std::string(What) +
                                            ": managed memory is not served by "
                                            "cleave-serve (docs/serve.md)");
}

/// \p Bytes at \p P inside one managed buffer.
Result checkManaged(Runtime &RT, const void *P, uint64_t Bytes) {
  BufferManager &B = RT.buffers();
  BufferManager::Resolved Res;
  if (Result R = B.resolveRange(P, Bytes, Res); !R.ok())
    return R;
  if (!B.isManaged(P))
    return invalid("the pointer is not managed memory (cudaMallocManaged)");
  return Result::success();
}

bool isHost(const cudaMemLocation &L) {
  return L.type == cudaMemLocationTypeHost ||
         L.type == cudaMemLocationTypeHostNuma ||
         L.type == cudaMemLocationTypeHostNumaCurrent ||
         (L.type == cudaMemLocationTypeDevice && L.id == cudaCpuDeviceId);
}

/// \p L is the host or device 0, the virtual device's only ordinal.
Result checkLocation(const char *What, const cudaMemLocation &L) {
  if (isHost(L) || (L.type == cudaMemLocationTypeDevice && L.id == 0))
    return Result::success();
  return error(ErrorCode::InvalidDevice,
               std::string(What) + ": location " + std::to_string(int(L.type)) +
                   "/" + std::to_string(L.id) +
                   " is neither the host nor device 0");
}

} // namespace

extern "C" {

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags) {
  if (!devPtr)
    return ret(invalid("cudaMallocManaged: null pointer"));
  *devPtr = nullptr;
  // cudaMemAttachHost only matters to devices with concurrent managed
  // access, where it keeps the memory off the devices until attached:
  // here the host never shares it with running work anyway.
  if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost)
    return ret(invalid("cudaMallocManaged: flags " + std::to_string(flags) +
                       " (cudaMemAttachGlobal or cudaMemAttachHost)"));
  if (size == 0)
    return ret(invalid("cudaMallocManaged: size 0"));
  if (serve::Client::get())
    return ret(notServed("cudaMallocManaged"));
  CLEAVE_RUNTIME(RT);
  return ret(prefixed("cudaMallocManaged",
                      RT->buffers().allocateManaged(size, *devPtr)));
}

cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count,
                                 struct cudaMemLocation location,
                                 unsigned int flags, cudaStream_t stream) {
  const char *What = "cudaMemPrefetchAsync";
  if (flags != 0)
    return ret(invalid(std::string(What) + ": flags must be 0"));
  if (Result R = checkLocation(What, location); !R.ok())
    return ret(R);
  bool ToHost = isHost(location);
  if (serve::Client::get())
    return ret(notServed(What));
  CLEAVE_RUNTIME(RT);
  std::shared_ptr<Stream> S;
  if (Result R = RT->stream(stream, S); !R.ok())
    return ret(prefixed(What, R));
  if (count == 0)
    return ret(Result::success());
  if (Result R = checkManaged(*RT, devPtr, count); !R.ok())
    return ret(prefixed(What, R));
  if (Result M = RT->managedForDevices(); !M.ok())
    return ret(prefixed(What, M));
  // To device 0, a hint only: which of the virtual device's devices will
  // read the bytes is decided by the launch that reads them, which moves
  // them then.
  if (!ToHost)
    return ret(Result::success());
  BufferManager &B = RT->buffers();
  Op O;
  O.What = What;
  O.Run = [&B, devPtr, count] { return B.syncToHost(devPtr, count); };
  if (RT->idleFor(S))
    return ret(RT->runSync(S, O.Run, What));
  RT->enqueue(S, std::move(O));
  return ret(Result::success());
}

cudaError_t cudaMemAdvise(const void *devPtr, size_t count,
                          enum cudaMemoryAdvise advice,
                          struct cudaMemLocation location) {
  const char *What = "cudaMemAdvise";
  if (advice < cudaMemAdviseSetReadMostly ||
      advice > cudaMemAdviseUnsetAccessedBy)
    return ret(invalid(std::string(What) + ": advice " +
                       std::to_string(int(advice)) +
                       " is not a cudaMemoryAdvise"));
  bool Needed = advice != cudaMemAdviseSetReadMostly &&
                advice != cudaMemAdviseUnsetReadMostly;
  if (Needed) {
    if (Result R = checkLocation(What, location); !R.ok())
      return ret(R);
  }
  if (serve::Client::get())
    return ret(notServed(What));
  CLEAVE_RUNTIME(RT);
  if (count == 0)
    return ret(Result::success());
  // Advice is a hint: the runtime places bytes where launches read them,
  // and the host copy holds every result after a synchronization anyway.
  return ret(prefixed(What, checkManaged(*RT, devPtr, count)));
}

} // extern "C"
