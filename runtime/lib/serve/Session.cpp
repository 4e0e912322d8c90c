//===- Session.cpp - One client of cleave-serve, on the server -----------===//
//
// Part of Cleave's runtime (no LLVM). See Session.h. Requests run through
// the server's own CUDA-runtime subset (the same code a program runs in
// its own process), on the client's streams.
//
//===----------------------------------------------------------------------===//
#include "Session.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

namespace cleave {
namespace rt {
namespace serve {

using namespace api;

namespace {

Result notOurs(const char *What, const char *Thing, uint64_t H) {
  char Hex[32];
  std::snprintf(Hex, sizeof(Hex), "%#llx", (unsigned long long)H);
  return Result::error(ErrorCode::InvalidResourceHandle,
                       std::string(What) + ": " + Thing + " " + Hex +
                           " is not one of this client's");
}

} // namespace

bool Session::run() {
  // This thread's calls, and the streams it creates, keep their
  // asynchronous errors apart from other clients'.
  setAsyncErrorDomain(&Errors);
  bool StopServer = false;
  for (;;) {
    uint32_t Code = 0;
    std::string Payload;
    std::vector<int> Fds;
    if (!receiveMessage(Sock, Code, Payload, Fds)) {
      for (int Fd : Fds)
        ::close(Fd);
      break;
    }
    Reader In(Payload);
    Writer Data;
    std::vector<int> OutFds;
    Result R = handle(Op(Code), In, Fds, Data, OutFds);
    for (int Fd : Fds)
      ::close(Fd);
    if (R.ok() && !In.ok())
      R = Result::error(ErrorCode::InvalidValue, "a malformed request");
    Writer Reply;
    Reply.put(int32_t(R.code())).str(R.message());
    std::string Bytes = Reply.data() + (R.ok() ? Data.data() : std::string());
    bool Sent =
        sendMessage(Sock, 0, Bytes, R.ok() ? OutFds : std::vector<int>());
    for (int Fd : OutFds)
      ::close(Fd);
    if (Op(Code) == Op::Stop && R.ok()) {
      StopServer = true;
      break;
    }
    if (!Sent)
      break;
  }
  release();
  setAsyncErrorDomain(nullptr);
  return !StopServer;
}

void Session::stop() { ::shutdown(Sock, SHUT_RDWR); }

std::string Session::describe() {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (!Legacy.S)
    return ""; // not a client (yet): a --status or --stop connection
  uint64_t Bytes = 0;
  for (auto &[P, B] : Buffers)
    Bytes += B;
  return "client " + std::to_string(Id) + " pid " + std::to_string(Pid) + ": " +
         std::to_string(Buffers.size()) + " buffer(s) of " +
         std::to_string(Bytes) + " bytes, " + std::to_string(Pinned.size()) +
         " pinned block(s), " + std::to_string(Streams.size()) +
         " stream(s), " + std::to_string(Events.size()) + " event(s), " +
         std::to_string(Programs.size()) + " program(s)";
}

Result Session::handle(Op O, Reader &In, std::vector<int> &Fds, Writer &Out,
                       std::vector<int> &OutFds) {
  if (O != Op::Hello && O != Op::Status && O != Op::Stop && !Legacy.S)
    return Result::error(ErrorCode::InitializationError,
                         "the client did not say hello first");
  switch (O) {
  case Op::Hello:
    return hello(In, Fds);
  case Op::Status:
    Out.str(serverStatus());
    return Result::success();
  case Op::Stop:
    return Result::success(); // run() ends, and the server stops
  case Op::KernelInfo: {
    const KernelHandle *K = nullptr;
    Result R = kernel(In.str(), K);
    if (!R.ok())
      return R;
    Out.put(uint32_t(K->Info->Params.size()));
    for (const BundleParam &P : K->Info->Params)
      Out.put(uint32_t(P.Size));
    return R;
  }
  case Op::Launch:
    return launch(In);
  case Op::FuncAttributes:
  case Op::Occupancy:
  case Op::FuncSetAttribute:
    return kernelQuery(O, In, Out);
  case Op::Copy:
    return copy(In);
  case Op::Symbol:
    return symbol(In);
  case Op::Malloc: {
    uint64_t Bytes = In.get<uint64_t>();
    void *P = nullptr;
    Result R = checked(cudaMalloc(&P, Bytes));
    if (R.ok() && P) {
      std::lock_guard<std::mutex> Lock(Mutex);
      Buffers[reinterpret_cast<uintptr_t>(P)] = Bytes;
    }
    Out.put(uint64_t(reinterpret_cast<uintptr_t>(P)));
    return R;
  }
  case Op::Free:
    return free(In.get<uint64_t>());
  case Op::HostAlloc:
    return hostAlloc(In.get<uint64_t>(), Out, OutFds);
  case Op::FreeHost:
    return freeHost(In.get<uint64_t>());
  case Op::Memset: {
    uint64_t P = In.get<uint64_t>();
    int32_t V = In.get<int32_t>();
    uint64_t Bytes = In.get<uint64_t>();
    cudaStream_t S;
    Result R = deviceRange(P, Bytes, "cudaMemset");
    if (R.ok())
      R = queueOn(In.get<uint64_t>(), S, "cudaMemset");
    return R.ok() ? checked(cudaMemsetAsync(reinterpret_cast<void *>(P), V,
                                            Bytes, S))
                  : R;
  }
  default:
    return handleOther(O, In, Out);
  }
}

Result Session::handleOther(Op O, Reader &In, Writer &Out) {
  uint64_t A = In.get<uint64_t>(), B = In.get<uint64_t>(),
           C = In.get<uint64_t>();
  (void)C;
  cudaStream_t S = nullptr;
  cudaEvent_t E = nullptr, E2 = nullptr;
  Result R;
  switch (O) {
  case Op::StreamCreate: {
    // Its own reading: flags (u32) and priority (i32) in A's bytes.
    unsigned Flags = unsigned(A & 0xffffffffu);
    int Priority = int32_t(A >> 32);
    if (Flags & ~unsigned(cudaStreamNonBlocking))
      return Result::error(ErrorCode::InvalidValue,
                           "cudaStreamCreateWithFlags: unknown flags " +
                               std::to_string(Flags));
    StreamInfo I;
    I.Blocking = !(Flags & cudaStreamNonBlocking);
    R = checked(
        cudaStreamCreateWithPriority(&I.S, cudaStreamNonBlocking, Priority));
    if (R.ok())
      R = checked(cudaEventCreateWithFlags(&I.Sync, cudaEventDisableTiming));
    if (!R.ok())
      return R;
    std::lock_guard<std::mutex> Lock(Mutex);
    Streams[reinterpret_cast<uintptr_t>(I.S)] = I;
    Out.put(uint64_t(reinterpret_cast<uintptr_t>(I.S)));
    return R;
  }
  case Op::StreamDestroy: {
    if (A <= 2 || !Streams.count(A))
      return notOurs("cudaStreamDestroy", "stream", A);
    StreamInfo I = Streams[A];
    R = checked(cudaStreamDestroy(I.S));
    (void)cudaEventDestroy(I.Sync);
    std::lock_guard<std::mutex> Lock(Mutex);
    Streams.erase(A);
    return R;
  }
  case Op::StreamSync:
    if (R = stream(A, S, "cudaStreamSynchronize"); !R.ok())
      return R;
    if (S == Legacy.S) // and what blocking streams queued before
      for (auto &[H, I] : Streams)
        if (I.Blocking)
          if (R = checked(cudaStreamSynchronize(I.S)); !R.ok())
            return R;
    return checked(cudaStreamSynchronize(S));
  case Op::StreamQuery:
    if (R = stream(A, S, "cudaStreamQuery"); !R.ok())
      return R;
    return checked(cudaStreamQuery(S));
  case Op::StreamPriority: {
    if (R = stream(A, S, "cudaStreamGetPriority"); !R.ok())
      return R;
    int P = 0;
    R = checked(cudaStreamGetPriority(S, &P));
    Out.put(int32_t(P));
    return R;
  }
  case Op::StreamWaitEvent:
    if (R = event(B, E, "cudaStreamWaitEvent"); !R.ok())
      return R;
    if (R = queueOn(A, S, "cudaStreamWaitEvent"); !R.ok())
      return R;
    return checked(cudaStreamWaitEvent(S, E, unsigned(C)));
  case Op::EventCreate:
    R = checked(cudaEventCreateWithFlags(&E, unsigned(A)));
    if (R.ok()) {
      std::lock_guard<std::mutex> Lock(Mutex);
      Events.insert(reinterpret_cast<uintptr_t>(E));
    }
    Out.put(uint64_t(reinterpret_cast<uintptr_t>(E)));
    return R;
  case Op::EventDestroy:
    if (R = event(A, E, "cudaEventDestroy"); !R.ok())
      return R;
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      Events.erase(A);
    }
    return checked(cudaEventDestroy(E));
  case Op::EventRecord:
    if (R = event(A, E, "cudaEventRecord"); !R.ok())
      return R;
    if (R = queueOn(B, S, "cudaEventRecord"); !R.ok())
      return R;
    return checked(cudaEventRecord(E, S));
  case Op::EventSync:
    if (R = event(A, E, "cudaEventSynchronize"); !R.ok())
      return R;
    return checked(cudaEventSynchronize(E));
  case Op::EventQuery:
    if (R = event(A, E, "cudaEventQuery"); !R.ok())
      return R;
    return checked(cudaEventQuery(E));
  case Op::EventElapsed: {
    if (R = event(A, E, "cudaEventElapsedTime"); !R.ok())
      return R;
    if (R = event(B, E2, "cudaEventElapsedTime"); !R.ok())
      return R;
    float Ms = 0;
    R = checked(cudaEventElapsedTime(&Ms, E, E2));
    Out.put(Ms);
    return R;
  }
  case Op::DeviceSync:
    return synchronizeAll();
  case Op::Properties: {
    cudaDeviceProp P;
    R = checked(cudaGetDeviceProperties(&P, 0));
    Out.bytes(&P, sizeof(P));
    return R;
  }
  case Op::Attribute: {
    int V = 0;
    R = checked(cudaDeviceGetAttribute(&V, cudaDeviceAttr(A), 0));
    Out.put(int32_t(V));
    return R;
  }
  case Op::MemInfo: {
    size_t F = 0, T = 0;
    R = checked(cudaMemGetInfo(&F, &T));
    Out.put(uint64_t(F)).put(uint64_t(T));
    return R;
  }
  default:
    return Result::error(ErrorCode::NotSupported,
                         "cleave-serve: unknown request " +
                             std::to_string(unsigned(O)));
  }
}

Result Session::hello(Reader &In, std::vector<int> &Fds) {
  if (Legacy.S)
    return Result::error(ErrorCode::InvalidValue, "a second hello");
  Pid = In.get<int64_t>();
  uint64_t Bytes = In.get<uint64_t>();
  // Memory whose size the client could still change would fault the
  // server (SIGBUS) once shrunk under its mapping.
  if (Fds.empty() || Bytes == 0 || !isSealedMemory(Fds[0], Bytes))
    return Result::error(ErrorCode::InvalidValue,
                         "the hello has no sealed staging memory of " +
                             std::to_string(Bytes) + " bytes");
  void *M =
      ::mmap(nullptr, Bytes, PROT_READ | PROT_WRITE, MAP_SHARED, Fds[0], 0);
  if (M == MAP_FAILED)
    return Result::error(ErrorCode::MemoryAllocation,
                         "cannot map the client's staging memory");
  Staging = static_cast<char *>(M);
  StagingBytes = Bytes;
  if (Fds.size() > 1) {
    if (Result R = loadImage(Fds[1]); !R.ok())
      return R;
    Fds[1] = -1; // kept open while the image is loaded
  }
  // The client's legacy stream: a stream of the server's of its own, so
  // that clients do not wait for each other's work.
  StreamInfo L;
  Result R = checked(cudaStreamCreateWithFlags(&L.S, cudaStreamNonBlocking));
  if (R.ok())
    R = checked(cudaEventCreateWithFlags(&L.Sync, cudaEventDisableTiming));
  if (R.ok()) {
    std::lock_guard<std::mutex> Lock(Mutex);
    Legacy = L;
  }
  return R;
}

Result Session::loadImage(int Fd) {
  ImageFd = Fd;
  if (!isSealedMemory(Fd, 1))
    return Result::error(ErrorCode::InvalidKernelImage,
                         "the CPU image is not sealed shared memory");
  Runtime *RT;
  if (Result R = Runtime::get(RT); !R.ok())
    return R;
  // The image's constructors register its modules; they come here rather
  // than to the server's own registrations.
  std::vector<std::pair<cleave_module_desc, std::map<std::string, void *>>>
      Mods;
  ModuleCapture Capture = [&](const cleave_module_desc &D,
                              const std::map<std::string, void *> &S) {
    Mods.emplace_back(D, S);
  };
  setModuleCapture(&Capture);
  std::string Path = "/proc/self/fd/" + std::to_string(Fd);
  Image = ::dlopen(Path.c_str(), RTLD_NOW | RTLD_LOCAL);
  setModuleCapture(nullptr);
  if (!Image) {
    const char *E = ::dlerror();
    return Result::error(ErrorCode::InvalidKernelImage,
                         std::string("cleave-serve cannot load the program's "
                                     "CPU image: ") +
                             (E ? E : "dlopen failed"));
  }
  std::lock_guard<std::mutex> Lock(RT->engineMutex());
  for (auto &[D, S] : Mods) {
    const Program *P = nullptr;
    Result R = RT->engine().addProgram(D.bundle, D.bundle_size, S, &P);
    if (!R.ok())
      return R;
    Programs.push_back(P);
  }
  return Result::success();
}

Result Session::kernel(const std::string &Name, const KernelHandle *&K) {
  if (auto It = Kernels.find(Name); It != Kernels.end()) {
    K = It->second;
    return Result::success();
  }
  Runtime *RT;
  if (Result R = Runtime::get(RT); !R.ok())
    return R;
  K = nullptr;
  {
    std::lock_guard<std::mutex> Lock(RT->engineMutex());
    for (const Program *P : Programs)
      if ((K = RT->engine().findKernel(Name, P)))
        break;
  }
  if (!K)
    return Result::error(ErrorCode(cudaErrorInvalidDeviceFunction),
                         "kernel '" + Name +
                             "' is in none of the programs this client "
                             "passed cleave-serve" +
                             (Image ? ""
                                    : " (it passed no CPU image: a "
                                      "program built by an older "
                                      "cleave?)"));
  Kernels[Name] = K;
  return Result::success();
}

Result Session::kernelQuery(Op O, Reader &In, Writer &Out) {
  std::string Name = In.str();
  int64_t A = In.get<int64_t>(), B = In.get<int64_t>();
  const KernelHandle *K = nullptr;
  if (Result R = kernel(Name, K); !R.ok())
    return R;
  Runtime *RT;
  if (Result R = Runtime::get(RT); !R.ok())
    return R;
  if (O == Op::FuncSetAttribute)
    return setKernelAttribute(*RT, Name, *K, int(A), int(B));
  if (O == Op::FuncAttributes) {
    cudaFuncAttributes Attr;
    kernelAttributes(*RT, Name, *K, Attr);
    Out.bytes(&Attr, sizeof(Attr));
    return Result::success();
  }
  int Blocks = kernelOccupancy(*RT, *K, int(A), size_t(B));
  Out.bytes(&Blocks, sizeof(Blocks));
  return Result::success();
}

Result Session::launch(Reader &In) {
  std::string Name = In.str();
  uint32_t Grid[3], Block[3];
  for (uint32_t &G : Grid)
    G = In.get<uint32_t>();
  for (uint32_t &B : Block)
    B = In.get<uint32_t>();
  uint64_t Shared = In.get<uint64_t>();
  uint64_t StreamH = In.get<uint64_t>();
  uint64_t N = 0;
  const char *Bytes = In.bytes(N);
  if (!In.ok())
    return Result::error(ErrorCode::InvalidValue, "a malformed launch");
  const KernelHandle *K = nullptr;
  if (Result R = kernel(Name, K); !R.ok())
    return R;
  // After a kernel's illegal address the client's context is unusable, as
  // on CUDA (other clients' are not affected).
  {
    std::lock_guard<std::mutex> Lock(Errors.Mutex);
    if (isStickyKernelError(Errors.Error.code()))
      return Errors.Error;
  }
  const std::vector<BundleParam> &Params = K->Info->Params;
  // Each value at an aligned place of its own (the launch copies them).
  std::vector<uint64_t> Store((N + 16 * Params.size()) / 8 + 2);
  std::vector<void *> Args(Params.size());
  uint64_t From = 0, To = 0;
  std::string Display =
      K->Info->DisplayName.empty() ? Name : K->Info->DisplayName;
  for (size_t I = 0; I < Params.size(); ++I) {
    uint64_t Size = Params[I].Size;
    if (Size > N - From)
      return Result::error(ErrorCode::InvalidValue,
                           "kernel " + Display + ": the arguments are short");
    char *At = reinterpret_cast<char *>(Store.data()) + To;
    std::memcpy(At, Bytes + From, Size);
    Args[I] = At;
    if (Params[I].Kind == ParamKind::Pointer && Size == sizeof(uint64_t)) {
      uint64_t P;
      std::memcpy(&P, At, sizeof(P));
      // A pointer argument must point into the client's own buffers (or
      // be null): another client's, or none, faults as on a GPU.
      if (P && !deviceRange(P, 0, "").ok())
        return Result::error(ErrorCode::IllegalAddress,
                             "kernel " + Display + ": argument " +
                                 std::to_string(I) + " (" + hexOf(P) +
                                 ") points into none of this client's "
                                 "device buffers");
    }
    From += Size;
    To += (Size + 15) / 16 * 16;
  }
  cudaStream_t S;
  if (Result R = queueOn(StreamH, S, "cudaLaunchKernel"); !R.ok())
    return R;
  Runtime *RT;
  if (Result R = Runtime::get(RT); !R.ok())
    return R;
  return launchKernel(*RT, K, Grid, Block, Args.data(), Shared, S);
}

Result Session::copy(Reader &In) {
  Endpoint D = In.get<Endpoint>(), Src = In.get<Endpoint>();
  uint64_t Bytes = In.get<uint64_t>();
  uint64_t StreamH = In.get<uint64_t>();
  bool Async = In.get<uint8_t>() != 0;
  const char *What = Async ? "cudaMemcpyAsync" : "cudaMemcpy";
  void *DP = nullptr, *SP = nullptr;
  if (Result R = endpoint(D, Bytes, What, DP); !R.ok())
    return R;
  if (Result R = endpoint(Src, Bytes, What, SP); !R.ok())
    return R;
  bool DDev = D.Where == Space::Device, SDev = Src.Where == Space::Device;
  if (!DDev && !SDev)
    return Result::error(ErrorCode::InvalidValue,
                         std::string(What) + ": neither side is device memory");
  cudaMemcpyKind K =
      DDev ? (SDev ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
           : cudaMemcpyDeviceToHost;
  cudaStream_t S;
  if (Result R = queueOn(StreamH, S, What); !R.ok())
    return R;
  Result R = checked(cudaMemcpyAsync(DP, SP, Bytes, K, S));
  // cudaMemcpy returns once the copy is done when host memory is a side.
  if (R.ok() && !Async && !(DDev && SDev))
    R = checked(cudaStreamSynchronize(S));
  return R;
}

Result Session::symbol(Reader &In) {
  bool To = In.get<uint8_t>() != 0;
  std::string Name = In.str();
  uint64_t Offset = In.get<uint64_t>(), Bytes = In.get<uint64_t>();
  (void)In.get<uint64_t>(); // the stream: all the client's work is waited for
  if (Bytes > StagingBytes)
    return Result::error(ErrorCode::InvalidValue,
                         "a symbol copy larger than the staging area");
  // The engine keeps the variable's value outside stream order: the
  // client's queued work, which may read or write it, goes first.
  if (Result R = synchronizeAll(); !R.ok())
    return R;
  Runtime *RT;
  if (Result R = Runtime::get(RT); !R.ok())
    return R;
  std::lock_guard<std::mutex> Lock(RT->engineMutex());
  Engine &E = RT->engine();
  for (const Program *P : Programs) {
    uint64_t Size = 0;
    if (!E.symbolSize(Name, Size, P).ok())
      continue;
    return To ? E.copyToSymbol(Name, Offset, Staging, Bytes, P)
              : E.copyFromSymbol(Name, Offset, Staging, Bytes, P);
  }
  return Result::error(ErrorCode::InvalidSymbol,
                       "no __device__ or __constant__ variable " + Name +
                           " in this client's programs");
}

} // namespace serve
} // namespace rt
} // namespace cleave
