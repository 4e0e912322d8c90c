//===- Wire.cpp - cleave-serve's messages on its Unix socket -------------===//
//
// Part of Cleave's runtime (no LLVM). See Wire.h.
//
//===----------------------------------------------------------------------===//
#include "Wire.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace cleave {
namespace rt {
namespace serve {

namespace {

struct Header {
  uint32_t Code;
  uint32_t Reserved;
  uint64_t Bytes;
};

constexpr int MaxFds = 4;

bool writeAll(int Sock, const char *P, size_t N) {
  while (N) {
    ssize_t W = ::send(Sock, P, N, MSG_NOSIGNAL);
    if (W < 0 && errno == EINTR)
      continue;
    if (W <= 0)
      return false;
    P += W;
    N -= size_t(W);
  }
  return true;
}

bool readAll(int Sock, char *P, size_t N) {
  while (N) {
    ssize_t R = ::recv(Sock, P, N, 0);
    if (R < 0 && errno == EINTR)
      continue;
    if (R <= 0)
      return false;
    P += R;
    N -= size_t(R);
  }
  return true;
}

} // namespace

bool sendMessage(int Sock, uint32_t Code, const std::string &Payload,
                 const std::vector<int> &Fds) {
  Header H{Code, 0, Payload.size()};
  struct iovec V = {&H, sizeof(H)};
  struct msghdr M = {};
  M.msg_iov = &V;
  M.msg_iovlen = 1;
  alignas(struct cmsghdr) char Control[CMSG_SPACE(sizeof(int) * MaxFds)];
  if (!Fds.empty()) {
    if (Fds.size() > size_t(MaxFds))
      return false;
    std::memset(Control, 0, sizeof(Control));
    M.msg_control = Control;
    M.msg_controllen = CMSG_SPACE(sizeof(int) * Fds.size());
    struct cmsghdr *C = CMSG_FIRSTHDR(&M);
    C->cmsg_level = SOL_SOCKET;
    C->cmsg_type = SCM_RIGHTS;
    C->cmsg_len = CMSG_LEN(sizeof(int) * Fds.size());
    std::memcpy(CMSG_DATA(C), Fds.data(), sizeof(int) * Fds.size());
  }
  ssize_t W;
  do
    W = ::sendmsg(Sock, &M, MSG_NOSIGNAL);
  while (W < 0 && errno == EINTR);
  if (W < 0)
    return false;
  // The header goes whole or in pieces; the descriptors went with its
  // first byte.
  if (size_t(W) < sizeof(H) &&
      !writeAll(Sock, reinterpret_cast<const char *>(&H) + W, sizeof(H) - W))
    return false;
  return writeAll(Sock, Payload.data(), Payload.size());
}

bool receiveMessage(int Sock, uint32_t &Code, std::string &Payload,
                    std::vector<int> &Fds) {
  Header H;
  struct iovec V = {&H, sizeof(H)};
  struct msghdr M = {};
  M.msg_iov = &V;
  M.msg_iovlen = 1;
  alignas(struct cmsghdr) char Control[CMSG_SPACE(sizeof(int) * MaxFds)];
  M.msg_control = Control;
  M.msg_controllen = sizeof(Control);
  ssize_t R;
  do
    R = ::recvmsg(Sock, &M, MSG_CMSG_CLOEXEC);
  while (R < 0 && errno == EINTR);
  if (R <= 0)
    return false;
  for (struct cmsghdr *C = CMSG_FIRSTHDR(&M); C; C = CMSG_NXTHDR(&M, C))
    if (C->cmsg_level == SOL_SOCKET && C->cmsg_type == SCM_RIGHTS) {
      size_t N = (C->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t I = 0; I < N; ++I) {
        int Fd;
        std::memcpy(&Fd, CMSG_DATA(C) + I * sizeof(int), sizeof(int));
        Fds.push_back(Fd);
      }
    }
  if (size_t(R) < sizeof(H) &&
      !readAll(Sock, reinterpret_cast<char *>(&H) + R, sizeof(H) - R))
    return false;
  // A message is at most what a staging-sized launch or copy needs; a
  // larger header is a peer that speaks something else.
  if (H.Bytes > (uint64_t(1) << 32))
    return false;
  Code = H.Code;
  Payload.resize(H.Bytes);
  return readAll(Sock, Payload.data(), Payload.size());
}

int sealedMemory(const char *Name, uint64_t Bytes, const void *Data) {
  int Fd = ::memfd_create(Name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (Fd < 0)
    return -1;
  bool Ok = ::ftruncate(Fd, off_t(Bytes)) == 0;
  if (Ok && Data)
    Ok = ::pwrite(Fd, Data, Bytes, 0) == ssize_t(Bytes);
  int Seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
  if (Ok && Data)
    Seals |= F_SEAL_WRITE;
  if (Ok)
    Ok = ::fcntl(Fd, F_ADD_SEALS, Seals) == 0;
  if (!Ok) {
    int E = errno;
    ::close(Fd);
    errno = E;
    return -1;
  }
  return Fd;
}

bool isSealedMemory(int Fd, uint64_t Bytes) {
  struct stat St;
  int Seals = ::fcntl(Fd, F_GET_SEALS);
  return Seals >= 0 && (Seals & F_SEAL_SHRINK) && ::fstat(Fd, &St) == 0 &&
         uint64_t(St.st_size) >= Bytes;
}

int connectTo(const std::string &Path, std::string &Why) {
  struct sockaddr_un A = {};
  A.sun_family = AF_UNIX;
  if (Path.size() >= sizeof(A.sun_path)) {
    Why = "the socket path is longer than " +
          std::to_string(sizeof(A.sun_path) - 1) + " bytes";
    return -1;
  }
  std::memcpy(A.sun_path, Path.c_str(), Path.size() + 1);
  int S = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (S < 0) {
    Why = std::strerror(errno);
    return -1;
  }
  if (::connect(S, reinterpret_cast<struct sockaddr *>(&A), sizeof(A)) != 0) {
    Why = std::strerror(errno);
    ::close(S);
    return -1;
  }
  return S;
}

} // namespace serve
} // namespace rt
} // namespace cleave
