//===- Session.h - One client of cleave-serve, on the server ---*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). Everything a client holds in the
// server's runtime (docs/serve.md): its device buffers, pinned blocks,
// streams, events, the programs of its CPU image. Every pointer and handle
// a request names is checked against these first, so a client reaches its
// own alone; at the end of the connection (exit or crash) its work is
// waited for and everything it holds is freed.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_SERVE_SESSION_H
#define CLEAVE_RT_SERVE_SESSION_H

#include "Wire.h"

#include "../api/CudaApi.h"

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace cleave {
namespace rt {
namespace serve {

class Session {
public:
  Session(int Id, int Sock) : Id(Id), Sock(Sock) {}
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  /// Serves requests until the client goes (or stop() is called), then
  /// frees what it holds. False when a Stop request asked the server to
  /// stop.
  bool run();
  /// Ends run() from another thread (the server stops).
  void stop();
  /// One line: the client and what it holds (Status requests, logs).
  std::string describe();

private:
  /// Answers one request: \p Out gets the reply's data after the result.
  Result handle(Op O, Reader &In, std::vector<int> &Fds, Writer &Out,
                std::vector<int> &OutFds);
  /// The requests of three values (Client::abc): streams, events, the
  /// device's queries.
  Result handleOther(Op O, Reader &In, Writer &Out);
  Result hello(Reader &In, std::vector<int> &Fds);
  Result loadImage(int Fd);
  Result kernel(const std::string &Name, const KernelHandle *&K);
  Result launch(Reader &In);
  /// cudaFuncGetAttributes, the occupancy query, cudaFuncSetAttribute.
  Result kernelQuery(Op O, Reader &In, Writer &Out);
  Result copy(Reader &In);
  Result symbol(Reader &In);
  Result hostAlloc(uint64_t Bytes, Writer &Out, std::vector<int> &OutFds);
  Result freeHost(uint64_t Addr);
  Result free(uint64_t Ptr);

  /// [P, P + Bytes) inside one of the client's buffers (Bytes 0: P inside
  /// or at the end of one); \p What names the call for the message.
  Result deviceRange(uint64_t P, uint64_t Bytes, const char *What);
  /// The server's address of one side of a copy, checked.
  Result endpoint(const Endpoint &E, uint64_t Bytes, const char *What,
                  void *&Out);
  /// The client's stream \p H (0, cudaStreamLegacy and cudaStreamPerThread
  /// are its legacy stream), ordered as CUDA orders work queued on it now:
  /// the legacy stream after the client's blocking streams, a blocking
  /// stream after the legacy stream (the server's streams are all
  /// non-blocking, so one client's implicit synchronization never waits
  /// for another's).
  Result queueOn(uint64_t H, cudaStream_t &Out, const char *What);
  Result stream(uint64_t H, cudaStream_t &Out, const char *What);
  Result event(uint64_t H, cudaEvent_t &Out, const char *What);
  /// Waits for all the client's streams.
  Result synchronizeAll();
  /// The end of the connection: waits, frees, logs.
  void release();

  struct StreamInfo {
    cudaStream_t S = nullptr;
    bool Blocking = true;
    /// Recorded and waited on for the implicit synchronization.
    cudaEvent_t Sync = nullptr;
  };

  int Id;
  int Sock;
  int64_t Pid = 0;
  char *Staging = nullptr;
  uint64_t StagingBytes = 0;
  void *Image = nullptr;
  int ImageFd = -1;
  std::vector<const Program *> Programs;
  std::map<std::string, const KernelHandle *> Kernels;
  std::mutex Mutex; // what describe() reads
  std::map<uintptr_t, uint64_t> Buffers;
  struct PinnedBlock {
    uint64_t Bytes = 0;
    int Fd = -1;
  };
  std::map<uintptr_t, PinnedBlock> Pinned;
  StreamInfo Legacy;
  std::map<uintptr_t, StreamInfo> Streams;
  std::set<uintptr_t> Events;
  /// The failures of the client's queued work (a kernel's illegal address
  /// is sticky here, for this client alone).
  api::AsyncErrorDomain Errors;
};

/// A call of the server's own CUDA-runtime subset as a Result, its message
/// taken (the client reports the error, not the server's thread).
Result checked(cudaError_t E);
/// "0x1a2b".
std::string hexOf(uint64_t V);

/// The Status request's text: the connections and what each holds.
std::string serverStatus();

/// cleave-serve's command line (docs/serve.md); the process's exit code.
int serveMain(int Argc, char **Argv);

} // namespace serve
} // namespace rt
} // namespace cleave

#endif
