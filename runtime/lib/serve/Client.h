//===- Client.h - A program's runtime as a client of cleave-serve -*- C++
//-*-===//
//
// Part of Cleave's runtime (no LLVM). When CLEAVE_SERVER names a
// cleave-serve socket, the CUDA-runtime subset forwards each call it serves
// to that server (docs/serve.md), whose one runtime runs the work of every
// client: the API functions ask client() first and, when it answers, call
// its member instead of their own body. Device pointers, streams and events
// are the server's, opaque here. Data goes through shared memory: a staging
// area for the program's own (pageable) memory, and cudaMallocHost memory,
// which is mapped in both processes.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_SERVE_CLIENT_H
#define CLEAVE_RT_SERVE_CLIENT_H

#include "Wire.h"

#include "cleave/rt/Error.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace cleave {
namespace rt {
namespace serve {

/// cleave-serve itself: it never forwards (its own CLEAVE_SERVER is
/// ignored). Called before its first API call.
void markServerProcess();
bool isServerProcess();

/// cleave_register_image: the CPU image (a shared object of the program's
/// device code, docs/serve.md) that a client sends the server.
void registerImage(const void *Data, uint64_t Bytes);

class Client {
public:
  /// The process's client, or null when CLEAVE_SERVER is unset (or this is
  /// the server). Connects on its first call.
  static Client *get();

  Result malloc(uint64_t Bytes, void *&Out);
  Result free(void *P);
  Result hostAlloc(uint64_t Bytes, void *&Out);
  Result freeHost(void *P);
  /// A 1-D copy; \p Kind is a cudaMemcpyKind.
  Result copy(void *Dst, const void *Src, uint64_t Bytes, int Kind,
              void *Stream, bool Async, const char *What);
  Result memset(void *P, int Value, uint64_t Bytes, void *Stream);
  /// cudaMemcpyToSymbol / FromSymbol of the variable called \p Name.
  Result symbolCopy(bool To, const std::string &Name, void *Host,
                    uint64_t Offset, uint64_t Bytes, void *Stream);
  Result launch(const std::string &Name, const uint32_t Grid[3],
                const uint32_t Block[3], void **Args, uint64_t SharedBytes,
                void *Stream);

  /// FuncAttributes, Occupancy or FuncSetAttribute of the kernel called
  /// \p Name, with two values; the reply's data (if any) into \p Out.
  Result kernelQuery(Op O, const std::string &Name, int64_t A, int64_t B,
                     void *Out, uint64_t OutBytes);
  /// cudaHostRegister / cudaHostUnregister: the range is kept here (copies
  /// from and to it are staged, as pageable memory's: done at the call).
  Result hostRegister(void *P, uint64_t Bytes);
  Result hostUnregister(void *P);

  /// cudaSetDeviceFlags / cudaDeviceSetCacheConfig: hints a client keeps
  /// and reports itself (the server's devices are every client's).
  std::atomic<unsigned> DeviceFlags{0};
  std::atomic<int> CacheConfig{0};

  Result createStream(unsigned Flags, int Priority, void *&Out);
  Result createEvent(unsigned Flags, void *&Out);
  Result elapsed(void *Start, void *End, float &Ms);
  Result priority(void *Stream, int &Out);
  /// A request of handles only (StreamDestroy, StreamSync, EventRecord,
  /// DeviceSync, ...); \p What names the call in messages.
  Result simple(Op O, uint64_t A = 0, uint64_t B = 0, uint64_t C = 0);
  Result properties(void *Prop, uint64_t Bytes);
  Result attribute(int Attr, int &Out);
  Result memInfo(uint64_t &Free, uint64_t &Total);

private:
  Client() = default;
  /// Connects and says hello (once); the outcome is kept.
  Result connectLocked();
  /// One request and its reply (Mutex held); \p Out is the reply's payload
  /// after the code and message, \p Fds its descriptors.
  Result callLocked(Op O, const std::string &Payload, std::string &Out,
                    const std::vector<int> &SendFds = {},
                    std::vector<int> *Fds = nullptr);
  Result call(Op O, const Writer &W, std::string &Out);
  /// A request of three values (handles, flags), as the server reads the
  /// requests it has no reader of their own for.
  Result abc(Op O, uint64_t A, uint64_t B, uint64_t C, std::string &Out);
  /// Where \p P lies for a copy: its device allocation, its pinned block
  /// (translated), or pageable memory (staged).
  bool isDevice(const void *P);
  bool pinned(const void *P, uint64_t Bytes, uint64_t &ServerAddr);
  Result paramSizes(const std::string &Name, std::vector<uint32_t> *&Out);

  std::mutex Mutex;
  std::string Path;
  int Sock = -1;
  bool Tried = false;
  Result Connected;
  char *Staging = nullptr;
  uint64_t StagingBytes = 0;
  /// The client's device allocations (start -> bytes): to tell device from
  /// host pointers for cudaMemcpyDefault. The server checks every pointer
  /// itself.
  std::map<uintptr_t, uint64_t> Device;
  struct PinnedBlock {
    uint64_t Bytes;
    uint64_t Server;
  };
  std::map<uintptr_t, PinnedBlock> Pinned;
  /// cudaHostRegister'ed ranges: start -> bytes.
  std::map<uintptr_t, uint64_t> Registered;
  std::map<std::string, std::vector<uint32_t>> Params;
};

} // namespace serve
} // namespace rt
} // namespace cleave

#endif
