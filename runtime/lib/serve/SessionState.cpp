//===- SessionState.cpp - What a client of cleave-serve holds ------------===//
//
// Part of Cleave's runtime (no LLVM). See Session.h: the checks that keep
// a client to its own buffers, streams and events, its pinned memory, and
// the release of everything at the end of the connection.
//
//===----------------------------------------------------------------------===//
#include "Session.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

namespace cleave {
namespace rt {
namespace serve {

using namespace api;

namespace {

/// The block of \p M that holds [P, P + Bytes), or end().
template <class Map>
typename Map::iterator
holding(Map &M, uint64_t P, uint64_t Bytes,
        uint64_t (*Size)(const typename Map::mapped_type &)) {
  auto It = M.upper_bound(uintptr_t(P));
  if (It == M.begin())
    return M.end();
  --It;
  uint64_t Off = P - It->first, N = Size(It->second);
  if (Off > N || Bytes > N - Off)
    return M.end();
  return It;
}

} // namespace

Result checked(cudaError_t E) {
  if (E == cudaSuccess)
    return Result::success();
  char Msg[1024];
  cleave_last_error_message(Msg, sizeof(Msg));
  (void)cudaGetLastError(); // the client reports it, not the server
  return Result::error(ErrorCode(E), Msg);
}

std::string hexOf(uint64_t V) {
  char B[32];
  std::snprintf(B, sizeof(B), "%#llx", (unsigned long long)V);
  return B;
}

Result Session::deviceRange(uint64_t P, uint64_t Bytes, const char *What) {
  std::lock_guard<std::mutex> Lock(Mutex);
  auto Size = +[](const uint64_t &B) { return B; };
  if (holding(Buffers, P, Bytes, Size) != Buffers.end())
    return Result::success();
  return Result::error(ErrorCode::InvalidValue,
                       std::string(What) + ": " + std::to_string(Bytes) +
                           " bytes at " + hexOf(P) +
                           " are not in one of this client's device buffers");
}

Result Session::endpoint(const Endpoint &E, uint64_t Bytes, const char *What,
                         void *&Out) {
  switch (E.Where) {
  case Space::Device:
    Out = reinterpret_cast<void *>(E.Value);
    return deviceRange(E.Value, Bytes, What);
  case Space::Staging:
    if (E.Value > StagingBytes || Bytes > StagingBytes - E.Value)
      return Result::error(ErrorCode::InvalidValue,
                           std::string(What) + ": past the staging area");
    Out = Staging + E.Value;
    return Result::success();
  case Space::Pinned: {
    std::lock_guard<std::mutex> Lock(Mutex);
    auto Size = +[](const PinnedBlock &B) { return B.Bytes; };
    if (holding(Pinned, E.Value, Bytes, Size) == Pinned.end())
      return Result::error(ErrorCode::InvalidValue,
                           std::string(What) + ": " + std::to_string(Bytes) +
                               " bytes are not in one of this client's "
                               "pinned blocks");
    Out = reinterpret_cast<void *>(E.Value);
    return Result::success();
  }
  }
  return Result::error(ErrorCode::InvalidValue,
                       std::string(What) + ": an unknown memory space");
}

Result Session::stream(uint64_t H, cudaStream_t &Out, const char *What) {
  if (H <= 2) { // null, cudaStreamLegacy, cudaStreamPerThread
    Out = Legacy.S;
    return Result::success();
  }
  auto It = Streams.find(uintptr_t(H));
  if (It == Streams.end())
    return Result::error(ErrorCode::InvalidResourceHandle,
                         std::string(What) + ": stream " + hexOf(H) +
                             " is not one of this client's");
  Out = It->second.S;
  return Result::success();
}

Result Session::event(uint64_t H, cudaEvent_t &Out, const char *What) {
  if (!Events.count(uintptr_t(H)))
    return Result::error(ErrorCode::InvalidResourceHandle,
                         std::string(What) + ": event " + hexOf(H) +
                             " is not one of this client's");
  Out = reinterpret_cast<cudaEvent_t>(H);
  return Result::success();
}

Result Session::queueOn(uint64_t H, cudaStream_t &Out, const char *What) {
  if (Result R = stream(H, Out, What); !R.ok())
    return R;
  if (Out == Legacy.S) {
    for (auto &[K, I] : Streams)
      if (I.Blocking) {
        if (Result R = checked(cudaEventRecord(I.Sync, I.S)); !R.ok())
          return R;
        if (Result R = checked(cudaStreamWaitEvent(Legacy.S, I.Sync, 0));
            !R.ok())
          return R;
      }
    return Result::success();
  }
  if (!Streams[uintptr_t(H)].Blocking)
    return Result::success();
  if (Result R = checked(cudaEventRecord(Legacy.Sync, Legacy.S)); !R.ok())
    return R;
  return checked(cudaStreamWaitEvent(Out, Legacy.Sync, 0));
}

Result Session::synchronizeAll() {
  Result First;
  for (auto &[K, I] : Streams)
    if (Result R = checked(cudaStreamSynchronize(I.S)); !R.ok() && First.ok())
      First = R;
  if (Legacy.S)
    if (Result R = checked(cudaStreamSynchronize(Legacy.S));
        !R.ok() && First.ok())
      First = R;
  return First;
}

Result Session::free(uint64_t P) {
  if (!P)
    return Result::success();
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (!Buffers.count(uintptr_t(P)))
      return Result::error(ErrorCode::InvalidValue,
                           "cudaFree: " + hexOf(P) +
                               " is not the start of one of this client's "
                               "device buffers");
  }
  // As cudaFree waits for the device: the client's queued work first.
  Result R = synchronizeAll();
  Runtime *RT;
  if (Result S = Runtime::get(RT); !S.ok())
    return S;
  RT->settleDeferred();
  if (Result F = RT->buffers().free(reinterpret_cast<void *>(P)); !F.ok())
    return F;
  std::lock_guard<std::mutex> Lock(Mutex);
  Buffers.erase(uintptr_t(P));
  return R;
}

Result Session::hostAlloc(uint64_t Bytes, Writer &Out,
                          std::vector<int> &OutFds) {
  if (Bytes == 0)
    return Result::error(ErrorCode::InvalidValue, "cudaMallocHost: 0 bytes");
  // Sealed: the client cannot shrink it under the server's mapping.
  int Fd = sealedMemory("cleave-pinned", Bytes);
  if (Fd < 0) {
    return Result::error(ErrorCode::MemoryAllocation,
                         "cudaMallocHost: no shared memory of " +
                             std::to_string(Bytes) + " bytes");
  }
  void *M = ::mmap(nullptr, Bytes, PROT_READ | PROT_WRITE, MAP_SHARED, Fd, 0);
  if (M == MAP_FAILED) {
    ::close(Fd);
    return Result::error(ErrorCode::MemoryAllocation,
                         "cudaMallocHost: cannot map " + std::to_string(Bytes) +
                             " bytes");
  }
  // Registered, the server's runtime treats it as pinned: copies from and
  // to it are queued, not done at the call.
  if (Result R = checked(cudaHostRegister(M, Bytes, cudaHostRegisterPortable));
      !R.ok()) {
    ::munmap(M, Bytes);
    ::close(Fd);
    return R;
  }
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    Pinned[reinterpret_cast<uintptr_t>(M)] = {Bytes, Fd};
  }
  Out.put(uint64_t(reinterpret_cast<uintptr_t>(M)));
  OutFds.push_back(::dup(Fd));
  return Result::success();
}

Result Session::freeHost(uint64_t Addr) {
  PinnedBlock B;
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = Pinned.find(uintptr_t(Addr));
    if (It == Pinned.end())
      return Result::error(ErrorCode::InvalidValue,
                           "cudaFreeHost: not one of this client's pinned "
                           "blocks");
    B = It->second;
    Pinned.erase(It);
  }
  void *P = reinterpret_cast<void *>(Addr);
  Result R = checked(cudaHostUnregister(P)); // waits for work that uses it
  ::munmap(P, B.Bytes);
  ::close(B.Fd);
  return R;
}

void Session::release() {
  if (!Legacy.S && !Staging)
    return; // a --status or --stop connection
  // The client's work still queued runs to its end first: nothing of the
  // server's may still use what is freed below.
  (void)synchronizeAll();
  Runtime *RT = nullptr;
  bool Have = Legacy.S && Runtime::get(RT).ok();
  if (Have)
    RT->settleDeferred();
  size_t NBuf, NPin, NStream, NEvent;
  uint64_t Bytes = 0;
  std::lock_guard<std::mutex> Lock(Mutex);
  NBuf = Buffers.size();
  NPin = Pinned.size();
  NStream = Streams.size();
  NEvent = Events.size();
  for (uintptr_t E : Events)
    (void)cudaEventDestroy(reinterpret_cast<cudaEvent_t>(E));
  for (auto &[K, I] : Streams) {
    (void)cudaStreamDestroy(I.S);
    (void)cudaEventDestroy(I.Sync);
  }
  if (Legacy.S) {
    (void)cudaStreamDestroy(Legacy.S);
    (void)cudaEventDestroy(Legacy.Sync);
  }
  for (auto &[P, B] : Buffers) {
    Bytes += B;
    if (Have)
      (void)RT->buffers().free(reinterpret_cast<void *>(P));
  }
  for (auto &[P, B] : Pinned) {
    (void)cudaHostUnregister(reinterpret_cast<void *>(P));
    ::munmap(reinterpret_cast<void *>(P), B.Bytes);
    ::close(B.Fd);
  }
  (void)cudaGetLastError();
  Events.clear();
  Streams.clear();
  Buffers.clear();
  Pinned.clear();
  Legacy = {};
  if (Staging)
    ::munmap(Staging, StagingBytes);
  Staging = nullptr;
  // The programs stay in the engine (its kernels' handles may be kept by
  // its caches); their code, which only this client's launches ran, goes.
  if (Image)
    ::dlclose(Image);
  Image = nullptr;
  if (ImageFd >= 0)
    ::close(ImageFd);
  ImageFd = -1;
  Kernels.clear();
  logLine("cleave-serve: client " + std::to_string(Id) + " (pid " +
          std::to_string(Pid) + ") gone: freed " + std::to_string(NBuf) +
          " buffer(s) of " + std::to_string(Bytes) + " bytes, " +
          std::to_string(NPin) + " pinned block(s), " +
          std::to_string(NStream) + " stream(s), " + std::to_string(NEvent) +
          " event(s)");
}

} // namespace serve
} // namespace rt
} // namespace cleave
