//===- Client.cpp - A program's runtime as a client of cleave-serve ------===//
//
// Part of Cleave's runtime (no LLVM). See Client.h.
//
//===----------------------------------------------------------------------===//
#include "Client.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <sys/mman.h>
#include <unistd.h>

namespace cleave {
namespace rt {
namespace serve {

namespace {

std::atomic<bool> ServerProcess{false};

struct Image {
  std::mutex Mutex;
  const void *Data = nullptr;
  uint64_t Bytes = 0;
};

Image &image() {
  static Image *I = new Image;
  return *I;
}

Result gone(const std::string &Path, const std::string &Why) {
  return Result::error(ErrorCode::NoDevice,
                       "cleave-serve at " + Path + " (CLEAVE_SERVER): " + Why);
}

// cudaMemcpyKind's values (cuda_runtime_api.h is the API files' alone).
enum Kind {
  HostToHost = 0,
  HostToDevice = 1,
  DeviceToHost = 2,
  DeviceToDevice = 3,
  Default = 4
};

/// The staging area's size: CLEAVE_SERVE_STAGING in KiB, else 8 MiB.
uint64_t stagingBytes() {
  uint64_t B = uint64_t(8) << 20;
  if (const char *E = std::getenv("CLEAVE_SERVE_STAGING"))
    if (unsigned long long K = std::strtoull(E, nullptr, 10); K >= 4)
      B = uint64_t(K) << 10;
  return B;
}

} // namespace

void markServerProcess() { ServerProcess = true; }
bool isServerProcess() { return ServerProcess; }

void registerImage(const void *Data, uint64_t Bytes) {
  Image &I = image();
  std::lock_guard<std::mutex> Lock(I.Mutex);
  I.Data = Data;
  I.Bytes = Bytes;
}

Client *Client::get() {
  static Client *C = []() -> Client * {
    const char *P = std::getenv("CLEAVE_SERVER");
    if (!P || !*P || ServerProcess)
      return nullptr;
    Client *New = new Client;
    New->Path = P;
    return New;
  }();
  return ServerProcess ? nullptr : C;
}

Result Client::connectLocked() {
  if (Tried)
    return Connected;
  Tried = true;
  std::string Why;
  Sock = connectTo(Path, Why);
  if (Sock < 0)
    return Connected = gone(Path, "cannot connect: " + Why);
  StagingBytes = stagingBytes();
  int StageFd = sealedMemory("cleave-staging", StagingBytes);
  if (StageFd < 0)
    return Connected = gone(Path, std::string("no staging memory: ") +
                                      std::strerror(errno));
  void *M = ::mmap(nullptr, StagingBytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                   StageFd, 0);
  if (M == MAP_FAILED)
    return Connected = gone(Path, std::string("cannot map the staging "
                                              "memory: ") +
                                      std::strerror(errno));
  Staging = static_cast<char *>(M);
  std::vector<int> Fds = {StageFd};
  Image &I = image();
  {
    std::lock_guard<std::mutex> Lock(I.Mutex);
    if (I.Data) {
      int ImgFd = sealedMemory("cleave-image", I.Bytes, I.Data);
      if (ImgFd < 0)
        return Connected = gone(Path, "cannot pass the program's CPU image");
      Fds.push_back(ImgFd);
    }
  }
  Writer W;
  W.put(int64_t(::getpid())).put(StagingBytes);
  std::string Out;
  // The hello's reply is the connection's outcome.
  Connected = Result::success();
  Connected = callLocked(Op::Hello, W.data(), Out, Fds);
  for (int Fd : Fds)
    ::close(Fd);
  return Connected;
}

Result Client::callLocked(Op O, const std::string &Payload, std::string &Out,
                          const std::vector<int> &SendFds,
                          std::vector<int> *Fds) {
  if (O != Op::Hello)
    if (Result R = connectLocked(); !R.ok())
      return R;
  if (!Connected.ok())
    return Connected;
  if (!sendMessage(Sock, uint32_t(O), Payload, SendFds))
    return Connected = gone(Path, "the server closed the connection");
  uint32_t Code = 0;
  std::string Reply;
  std::vector<int> Got;
  if (!receiveMessage(Sock, Code, Reply, Got))
    return Connected = gone(Path, "the server closed the connection");
  if (Fds)
    *Fds = Got;
  else
    for (int Fd : Got)
      ::close(Fd);
  Reader Rd(Reply);
  int32_t C = Rd.get<int32_t>();
  std::string Msg = Rd.str();
  if (!Rd.ok())
    return Connected = gone(Path, "a malformed reply");
  Out = Reply.substr(Rd.offset());
  return C ? Result::error(ErrorCode(C), Msg) : Result::success();
}

Result Client::call(Op O, const Writer &W, std::string &Out) {
  std::lock_guard<std::mutex> Lock(Mutex);
  return callLocked(O, W.data(), Out);
}

bool Client::isDevice(const void *P) {
  uintptr_t A = reinterpret_cast<uintptr_t>(P);
  auto It = Device.upper_bound(A);
  if (It == Device.begin())
    return false;
  --It;
  return A < It->first + std::max<uint64_t>(It->second, 1);
}

bool Client::pinned(const void *P, uint64_t Bytes, uint64_t &ServerAddr) {
  uintptr_t A = reinterpret_cast<uintptr_t>(P);
  auto It = Pinned.upper_bound(A);
  if (It == Pinned.begin())
    return false;
  --It;
  if (A - It->first > It->second.Bytes ||
      Bytes > It->second.Bytes - (A - It->first))
    return false;
  ServerAddr = It->second.Server + (A - It->first);
  return true;
}

Result Client::malloc(uint64_t Bytes, void *&Out) {
  Out = nullptr;
  std::lock_guard<std::mutex> Lock(Mutex);
  std::string R;
  Result Res = callLocked(Op::Malloc, Writer().put(Bytes).data(), R);
  if (Res.ok()) {
    Reader Rd(R);
    Out = reinterpret_cast<void *>(Rd.get<uint64_t>());
    Device[reinterpret_cast<uintptr_t>(Out)] = Bytes;
  }
  return Res;
}

Result Client::free(void *P) {
  std::lock_guard<std::mutex> Lock(Mutex);
  std::string R;
  Result Res = callLocked(
      Op::Free, Writer().put(uint64_t(reinterpret_cast<uintptr_t>(P))).data(),
      R);
  if (Res.ok())
    Device.erase(reinterpret_cast<uintptr_t>(P));
  return Res;
}

Result Client::hostAlloc(uint64_t Bytes, void *&Out) {
  Out = nullptr;
  if (Bytes == 0)
    return Result::success();
  std::lock_guard<std::mutex> Lock(Mutex);
  std::string R;
  std::vector<int> Fds;
  Result Res =
      callLocked(Op::HostAlloc, Writer().put(Bytes).data(), R, {}, &Fds);
  if (!Res.ok())
    return Res;
  uint64_t Server = Reader(R).get<uint64_t>();
  void *M = Fds.size() == 1 && Bytes
                ? ::mmap(nullptr, Bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                         Fds[0], 0)
                : MAP_FAILED;
  for (int Fd : Fds)
    ::close(Fd);
  if (M == MAP_FAILED) {
    std::string Ignored;
    (void)callLocked(Op::FreeHost, Writer().put(Server).data(), Ignored);
    return Result::error(ErrorCode::MemoryAllocation,
                         "cudaMallocHost: cannot map the server's shared "
                         "memory of " +
                             std::to_string(Bytes) + " bytes");
  }
  Pinned[reinterpret_cast<uintptr_t>(M)] = {Bytes, Server};
  Out = M;
  return Res;
}

Result Client::freeHost(void *P) {
  std::lock_guard<std::mutex> Lock(Mutex);
  auto It = Pinned.find(reinterpret_cast<uintptr_t>(P));
  if (It == Pinned.end())
    return Result::error(ErrorCode::InvalidValue,
                         "cudaFreeHost: not memory from cudaMallocHost");
  std::string R;
  Result Res =
      callLocked(Op::FreeHost, Writer().put(It->second.Server).data(), R);
  if (Res.ok()) {
    ::munmap(P, It->second.Bytes);
    Pinned.erase(It);
  }
  return Res;
}

Result Client::copy(void *Dst, const void *Src, uint64_t Bytes, int K,
                    void *Stream, bool Async, const char *What) {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (K == Default) {
    bool D = isDevice(Dst), S = isDevice(Src);
    K = D ? (S ? DeviceToDevice : HostToDevice)
          : (S ? DeviceToHost : HostToHost);
  }
  if (K < HostToHost || K > DeviceToDevice)
    return Result::error(ErrorCode::InvalidMemcpyDirection,
                         std::string(What) + ": kind " + std::to_string(K) +
                             " is not a cudaMemcpyKind");
  uint64_t StreamH = reinterpret_cast<uintptr_t>(Stream);
  std::string Ignored;
  if (Bytes == 0)
    return Result::success();
  if (K == HostToHost) {
    // Ordered after the stream's work, as CUDA's host-to-host copies are.
    Result R =
        callLocked(Op::StreamSync, Writer().put(StreamH).data(), Ignored);
    if (R.ok())
      std::memmove(Dst, Src, Bytes);
    return R;
  }
  bool DstDev = K == HostToDevice || K == DeviceToDevice;
  bool SrcDev = K == DeviceToHost || K == DeviceToDevice;
  auto Send = [&](Endpoint D, Endpoint S, uint64_t N) {
    Writer W;
    W.put(D).put(S).put(N).put(StreamH).put(uint8_t(Async));
    return callLocked(Op::Copy, W.data(), Ignored);
  };
  auto Dev = [](const void *P, uint64_t Off) {
    return Endpoint{Space::Device,
                    uint64_t(reinterpret_cast<uintptr_t>(P)) + Off};
  };
  const void *Host = DstDev ? Src : Dst;
  uint64_t Server = 0;
  if ((DstDev && SrcDev) || pinned(Host, Bytes, Server)) {
    Endpoint D = DstDev ? Dev(Dst, 0) : Endpoint{Space::Pinned, Server};
    Endpoint S = SrcDev ? Dev(Src, 0) : Endpoint{Space::Pinned, Server};
    return Send(D, S, Bytes);
  }
  // Pageable memory goes through the staging area, a piece at a time;
  // each piece is done when its reply comes (a copy from pageable memory
  // returns done, in CUDA too).
  for (uint64_t Off = 0; Off < Bytes; Off += StagingBytes) {
    uint64_t N = std::min(StagingBytes, Bytes - Off);
    Endpoint Stage{Space::Staging, 0};
    if (DstDev) {
      std::memcpy(Staging, static_cast<const char *>(Src) + Off, N);
      if (Result R = Send(Dev(Dst, Off), Stage, N); !R.ok())
        return R;
    } else {
      if (Result R = Send(Stage, Dev(Src, Off), N); !R.ok())
        return R;
      std::memcpy(static_cast<char *>(Dst) + Off, Staging, N);
    }
  }
  return Result::success();
}

Result Client::memset(void *P, int Value, uint64_t Bytes, void *Stream) {
  Writer W;
  W.put(uint64_t(reinterpret_cast<uintptr_t>(P)))
      .put(int32_t(Value))
      .put(Bytes)
      .put(uint64_t(reinterpret_cast<uintptr_t>(Stream)));
  std::string R;
  return call(Op::Memset, W, R);
}

Result Client::symbolCopy(bool To, const std::string &Name, void *Host,
                          uint64_t Offset, uint64_t Bytes, void *Stream) {
  std::lock_guard<std::mutex> Lock(Mutex);
  // Connected first: the staging area's size is known from then on.
  if (Result R = connectLocked(); !R.ok())
    return R;
  if (Bytes > StagingBytes)
    return Result::error(ErrorCode::NotSupported,
                         "a symbol copy of " + std::to_string(Bytes) +
                             " bytes is larger than cleave-serve's staging "
                             "area of " + std::to_string(StagingBytes) +
                             " (CLEAVE_SERVE_STAGING)");
  if (To && Bytes)
    std::memcpy(Staging, Host, Bytes);
  Writer W;
  W.put(uint8_t(To))
      .str(Name)
      .put(Offset)
      .put(Bytes)
      .put(uint64_t(reinterpret_cast<uintptr_t>(Stream)));
  std::string R;
  Result Res = callLocked(Op::Symbol, W.data(), R);
  if (Res.ok() && !To && Bytes)
    std::memcpy(Host, Staging, Bytes);
  return Res;
}

Result Client::paramSizes(const std::string &Name,
                          std::vector<uint32_t> *&Out) {
  auto It = Params.find(Name);
  if (It == Params.end()) {
    std::string R;
    Result Res = callLocked(Op::KernelInfo, Writer().str(Name).data(), R);
    if (!Res.ok())
      return Res;
    Reader Rd(R);
    std::vector<uint32_t> Sizes(Rd.get<uint32_t>());
    for (uint32_t &S : Sizes)
      S = Rd.get<uint32_t>();
    It = Params.emplace(Name, std::move(Sizes)).first;
  }
  Out = &It->second;
  return Result::success();
}

Result Client::launch(const std::string &Name, const uint32_t Grid[3],
                      const uint32_t Block[3], void **Args,
                      uint64_t SharedBytes, void *Stream) {
  std::lock_guard<std::mutex> Lock(Mutex);
  std::vector<uint32_t> *Sizes = nullptr;
  if (Result R = paramSizes(Name, Sizes); !R.ok())
    return R;
  if (!Sizes->empty() && !Args)
    return Result::error(ErrorCode::InvalidValue,
                         "kernel " + Name + " takes " +
                             std::to_string(Sizes->size()) +
                             " arguments, and the argument array is null");
  std::string ArgBytes;
  for (size_t I = 0; I < Sizes->size(); ++I) {
    if (!Args[I])
      return Result::error(ErrorCode::InvalidValue,
                           "kernel " + Name + ": argument " +
                               std::to_string(I) + " is a null pointer");
    ArgBytes.append(static_cast<const char *>(Args[I]), (*Sizes)[I]);
  }
  Writer W;
  W.str(Name);
  for (int I = 0; I < 3; ++I)
    W.put(Grid[I]);
  for (int I = 0; I < 3; ++I)
    W.put(Block[I]);
  W.put(SharedBytes).put(uint64_t(reinterpret_cast<uintptr_t>(Stream)));
  W.bytes(ArgBytes.data(), ArgBytes.size());
  std::string R;
  return callLocked(Op::Launch, W.data(), R);
}

Result Client::kernelQuery(Op O, const std::string &Name, int64_t A,
                           int64_t B, void *Out, uint64_t OutBytes) {
  std::string R;
  Result Res = call(O, Writer().str(Name).put(A).put(B), R);
  if (!Res.ok() || !Out)
    return Res;
  Reader Rd(R);
  uint64_t N = 0;
  const char *P = Rd.bytes(N);
  if (!P || N != OutBytes)
    return Result::error(ErrorCode::Unknown,
                         "cleave-serve's answer has another size: the "
                         "server was built with other CUDA headers");
  std::memcpy(Out, P, N);
  return Res;
}

Result Client::hostRegister(void *P, uint64_t Bytes) {
  if (!P || !Bytes)
    return Result::error(ErrorCode::InvalidValue,
                         "cudaHostRegister: null pointer or 0 bytes");
  std::lock_guard<std::mutex> Lock(Mutex);
  uintptr_t A = reinterpret_cast<uintptr_t>(P);
  auto Overlaps = [&](const auto &Map, auto Size) {
    auto It = Map.upper_bound(A + Bytes - 1);
    return It != Map.begin() && std::prev(It)->first + Size(*std::prev(It)) > A;
  };
  if (Overlaps(Registered, [](auto &E) { return E.second; }) ||
      Overlaps(Pinned, [](auto &E) { return E.second.Bytes; }))
    return Result::error(ErrorCode::HostMemoryAlreadyRegistered,
                         "cudaHostRegister: the range overlaps registered "
                         "or pinned memory");
  Registered[A] = Bytes;
  return Result::success();
}

Result Client::hostUnregister(void *P) {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (!Registered.erase(reinterpret_cast<uintptr_t>(P)))
    return Result::error(ErrorCode::HostMemoryNotRegistered,
                         "cudaHostUnregister: not the start of a registered "
                         "range");
  return Result::success();
}

Result Client::createStream(unsigned Flags, int Priority, void *&Out) {
  std::string R;
  Result Res =
      abc(Op::StreamCreate,
          uint64_t(Flags) | (uint64_t(uint32_t(Priority)) << 32), 0, 0, R);
  Out =
      Res.ok() ? reinterpret_cast<void *>(Reader(R).get<uint64_t>()) : nullptr;
  return Res;
}

Result Client::createEvent(unsigned Flags, void *&Out) {
  std::string R;
  Result Res = abc(Op::EventCreate, Flags, 0, 0, R);
  Out =
      Res.ok() ? reinterpret_cast<void *>(Reader(R).get<uint64_t>()) : nullptr;
  return Res;
}

Result Client::elapsed(void *Start, void *End, float &Ms) {
  std::string R;
  Result Res = abc(Op::EventElapsed, reinterpret_cast<uintptr_t>(Start),
                   reinterpret_cast<uintptr_t>(End), 0, R);
  if (Res.ok())
    Ms = Reader(R).get<float>();
  return Res;
}

Result Client::priority(void *Stream, int &Out) {
  std::string R;
  Result Res =
      abc(Op::StreamPriority, reinterpret_cast<uintptr_t>(Stream), 0, 0, R);
  if (Res.ok())
    Out = Reader(R).get<int32_t>();
  return Res;
}

Result Client::abc(Op O, uint64_t A, uint64_t B, uint64_t C, std::string &Out) {
  return call(O, Writer().put(A).put(B).put(C), Out);
}

Result Client::simple(Op O, uint64_t A, uint64_t B, uint64_t C) {
  std::string R;
  return abc(O, A, B, C, R);
}

Result Client::properties(void *Prop, uint64_t Bytes) {
  std::string R;
  Result Res = abc(Op::Properties, 0, 0, 0, R);
  if (!Res.ok())
    return Res;
  Reader Rd(R);
  uint64_t N = 0;
  const char *P = Rd.bytes(N);
  if (!P || N != Bytes)
    return Result::error(ErrorCode::Unknown,
                         "cleave-serve's device properties have another "
                         "size: the server was built with other CUDA "
                         "headers");
  std::memcpy(Prop, P, N);
  return Res;
}

Result Client::attribute(int Attr, int &Out) {
  std::string R;
  Result Res = abc(Op::Attribute, uint64_t(Attr), 0, 0, R);
  if (Res.ok())
    Out = Reader(R).get<int32_t>();
  return Res;
}

Result Client::memInfo(uint64_t &Free, uint64_t &Total) {
  std::string R;
  Result Res = abc(Op::MemInfo, 0, 0, 0, R);
  if (Res.ok()) {
    Reader Rd(R);
    Free = Rd.get<uint64_t>();
    Total = Rd.get<uint64_t>();
  }
  return Res;
}

} // namespace serve
} // namespace rt
} // namespace cleave
