//===- ReadFile.cpp - Reading the files a user names ----------------------===//
//
// Part of Cleave's runtime (no LLVM). See ReadFile.h.
//
//===----------------------------------------------------------------------===//

#include "ReadFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cleave {
namespace rt {

Result readRegularFile(const std::string &Path, uint64_t MaxBytes,
                       std::string &Out, bool *Missing) {
  Out.clear();
  if (Missing)
    *Missing = false;
  auto Bad = [&](const std::string &Why) {
    return Result::error(ErrorCode::InvalidValue, Path + ": " + Why);
  };
  // O_NONBLOCK: opening a FIFO without a writer would wait for one.
  int Fd = ::open(Path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (Fd < 0) {
    if (Missing)
      *Missing = errno == ENOENT;
    return Bad(std::string("cannot be read: ") + std::strerror(errno));
  }
  struct stat St;
  if (::fstat(Fd, &St) != 0 || !S_ISREG(St.st_mode)) {
    ::close(Fd);
    return Bad("not a regular file");
  }
  if (uint64_t(St.st_size) > MaxBytes) {
    ::close(Fd);
    return Bad("larger than " + std::to_string(MaxBytes) + " bytes");
  }
  // One byte past the size: a file that grows while it is read is refused,
  // never read without end.
  Out.resize(size_t(St.st_size) + 1);
  size_t Got = 0;
  while (Got < Out.size()) {
    ssize_t N = ::read(Fd, &Out[Got], Out.size() - Got);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0) {
      int E = errno;
      ::close(Fd);
      Out.clear();
      return Bad(std::string("cannot be read: ") + std::strerror(E));
    }
    if (N == 0)
      break;
    Got += size_t(N);
  }
  ::close(Fd);
  if (Got > uint64_t(St.st_size)) {
    Out.clear();
    return Bad("changed while it was read");
  }
  Out.resize(Got);
  return Result::success();
}

} // namespace rt
} // namespace cleave
