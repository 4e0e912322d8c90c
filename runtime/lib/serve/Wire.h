//===- Wire.h - cleave-serve's messages on its Unix socket ------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). What a client (a program run with
// CLEAVE_SERVER) and cleave-serve say to each other (docs/serve.md): one
// request, one reply, each a header (the operation, the payload's bytes)
// and a payload of plain values, with file descriptors (the staging area,
// the CPU image, pinned memory) passed alongside (SCM_RIGHTS). Both sides
// are the same libcleave_rt, so values travel in the host's byte order.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_SERVE_WIRE_H
#define CLEAVE_RT_SERVE_WIRE_H

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace cleave {
namespace rt {
namespace serve {

/// The requests. A reply's payload starts with the call's error code
/// (int32) and message (string), then what the request asks for.
enum class Op : uint32_t {
  Hello = 1,    // pid, staging bytes; fds: staging [, CPU image]
  KernelInfo,   // name -> params: count, then kind and size of each
  Malloc,       // bytes -> device pointer
  Free,         // device pointer
  HostAlloc,    // bytes -> server address; fd: the shared memory
  FreeHost,     // server address
  Copy,         // Endpoint dst, Endpoint src, bytes, stream, async
  Memset,       // device pointer, value, bytes, stream
  StreamCreate, // flags, priority -> handle
  StreamDestroy,
  StreamSync,
  StreamQuery,
  StreamWaitEvent, // stream, event, flags
  StreamPriority,  // stream -> priority
  EventCreate,     // flags -> handle
  EventDestroy,
  EventRecord, // event, stream
  EventSync,
  EventQuery,
  EventElapsed, // start, end -> float ms
  Launch,       // name, grid[3], block[3], shared, stream, argument bytes
  DeviceSync,
  Properties, // -> cudaDeviceProp bytes
  Attribute,  // attribute -> int
  MemInfo,    // -> free, total
  Symbol,     // to?, name, offset, bytes, Endpoint host, stream
  FuncAttributes,   // name -> cudaFuncAttributes bytes
  Occupancy,        // name, block size, dynamic shared -> int
  FuncSetAttribute, // name, attribute, value
  Status,     // -> text: clients and what each holds (introspection)
  Stop,       // the server stops after replying
};

/// One side of a copy: device memory (Value: a device pointer of the
/// client's), the client's staging area (Value: an offset), or the
/// client's pinned memory (Value: the server's address of it).
enum class Space : uint32_t { Device = 0, Staging = 1, Pinned = 2 };
struct Endpoint {
  Space Where = Space::Device;
  uint64_t Value = 0;
};

/// Appends plain values to a payload.
class Writer {
public:
  template <class T> Writer &put(const T &V) {
    Buf.append(reinterpret_cast<const char *>(&V), sizeof(T));
    return *this;
  }
  Writer &str(const std::string &S) {
    put(uint32_t(S.size()));
    Buf.append(S);
    return *this;
  }
  Writer &bytes(const void *P, size_t N) {
    put(uint64_t(N));
    Buf.append(static_cast<const char *>(P), N);
    return *this;
  }
  const std::string &data() const { return Buf; }

private:
  std::string Buf;
};

/// Reads them back; a payload too short leaves ok() false and zeros.
class Reader {
public:
  explicit Reader(const std::string &S)
      : B(S.data()), P(S.data()), E(S.data() + S.size()) {}
  /// The bytes read so far.
  size_t offset() const { return size_t(P - B); }
  template <class T> T get() {
    T V{};
    if (size_t(E - P) < sizeof(T)) {
      Ok = false;
      P = E;
      return V;
    }
    std::memcpy(&V, P, sizeof(T));
    P += sizeof(T);
    return V;
  }
  std::string str() {
    uint32_t N = get<uint32_t>();
    if (size_t(E - P) < N) {
      Ok = false;
      P = E;
      return {};
    }
    std::string S(P, N);
    P += N;
    return S;
  }
  /// Points into the payload; null (and !ok()) when too short.
  const char *bytes(uint64_t &N) {
    N = get<uint64_t>();
    if (uint64_t(E - P) < N) {
      Ok = false;
      P = E;
      N = 0;
      return nullptr;
    }
    const char *Q = P;
    P += N;
    return Q;
  }
  bool ok() const { return Ok; }

private:
  const char *B, *P, *E;
  bool Ok = true;
};

/// Sends one message with \p Fds (at most 4). False when the peer is gone.
bool sendMessage(int Sock, uint32_t Code, const std::string &Payload,
                 const std::vector<int> &Fds = {});
/// Receives one message; its descriptors are appended to \p Fds (the
/// caller owns them). False at end of file or on an error.
bool receiveMessage(int Sock, uint32_t &Code, std::string &Payload,
                    std::vector<int> &Fds);

/// Shared memory of \p Bytes (a memfd) whose size is sealed: neither side
/// can shrink it under the other's mapping (a SIGBUS there). With \p Data,
/// its contents too, written first. -1 on failure (errno).
int sealedMemory(const char *Name, uint64_t Bytes, const void *Data = nullptr);
/// Whether \p Fd is such memory, of at least \p Bytes.
bool isSealedMemory(int Fd, uint64_t Bytes);

/// A Unix stream socket connected to \p Path; -1 with \p Why otherwise.
int connectTo(const std::string &Path, std::string &Why);

} // namespace serve
} // namespace rt
} // namespace cleave

#endif
