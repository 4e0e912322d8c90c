//===- TempDir.cpp - The build's temporary directory ----------------------===//
//
// Part of Cleave's driver (TempDir.h). The removal on a signal runs inside
// the signal handler, so it uses only a fixed buffer and plain system calls;
// then the handler that was there before (LLVM's, which removes its own
// temporary files and re-raises the signal) runs. Crashes (and abort(), as
// in LLVM's fatal errors) go through LLVM's crash handlers, exit() through a
// static destructor.
//
//===----------------------------------------------------------------------===//
#include "TempDir.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <climits>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace llvm;

namespace cleave {
namespace {

char ArmedPath[PATH_MAX];
std::atomic<bool> Armed{false};
constexpr int InterruptSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
struct sigaction Previous[sizeof(InterruptSignals) / sizeof(int)];

/// The interrupt signals the process was started with ignored (a
/// background job's SIGINT, nohup's SIGHUP), recorded before main, when LLVM
/// has not installed its handlers yet: those do not end the build, so they
/// must not remove its directory either.
struct IgnoredAtStart {
  bool Ignored[std::size(InterruptSignals)] = {};
  IgnoredAtStart() {
    for (size_t I = 0; I < std::size(InterruptSignals); ++I) {
      struct sigaction Old;
      Ignored[I] = sigaction(InterruptSignals[I], nullptr, &Old) == 0 &&
                   !(Old.sa_flags & SA_SIGINFO) && Old.sa_handler == SIG_IGN;
    }
  }
} const StartState;

void removeArmedDir() {
  if (!Armed.exchange(false))
    return;
  // getdents64 on a stack buffer, not opendir: a signal may arrive inside
  // malloc, which opendir would call again.
  int Fd = open(ArmedPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (Fd >= 0) {
    alignas(8) char Buf[4096];
    long N;
    while ((N = syscall(SYS_getdents64, Fd, Buf, sizeof(Buf))) > 0) {
      for (long Off = 0; Off < N;) {
        // struct linux_dirent64: ino (8), off (8), reclen (2), type (1),
        // then the NUL-terminated name.
        unsigned short RecLen;
        std::memcpy(&RecLen, Buf + Off + 16, sizeof(RecLen));
        const char *Name = Buf + Off + 19;
        if (std::strcmp(Name, ".") && std::strcmp(Name, ".."))
          unlinkat(Fd, Name, 0);
        Off += RecLen;
      }
    }
    close(Fd);
  }
  rmdir(ArmedPath);
}

void onCrash(void *) { removeArmedDir(); }

/// A build that ends in exit() (LLVM's fatal errors without a crash
/// report) runs no destructor of the build, but static ones.
struct RemoveAtExit {
  ~RemoveAtExit() { removeArmedDir(); }
} AtExit;

void onInterrupt(int Sig, siginfo_t *Info, void *Ctx) {
  removeArmedDir();
  for (size_t I = 0; I < std::size(InterruptSignals); ++I) {
    if (InterruptSignals[I] != Sig)
      continue;
    const struct sigaction &P = Previous[I];
    sigaction(Sig, &P, nullptr);
    if (P.sa_flags & SA_SIGINFO)
      P.sa_sigaction(Sig, Info, Ctx);
    else if (P.sa_handler != SIG_IGN && P.sa_handler != SIG_DFL)
      P.sa_handler(Sig);
    else
      raise(Sig);
    return;
  }
}

void installHandlersOnce() {
  static bool Done = false;
  if (Done)
    return;
  Done = true;
  sys::AddSignalHandler(onCrash, nullptr);
  for (size_t I = 0; I < std::size(InterruptSignals); ++I) {
    if (StartState.Ignored[I])
      continue;
    struct sigaction SA = {};
    SA.sa_sigaction = onInterrupt;
    SA.sa_flags = SA_SIGINFO;
    sigemptyset(&SA.sa_mask);
    sigaction(InterruptSignals[I], &SA, &Previous[I]);
  }
}

} // namespace

std::error_code TempDir::create(bool KeepIt) {
  Keep = KeepIt;
  if (!Keep)
    installHandlersOnce();
  // An interrupt between the directory's creation and its arming would
  // leave it behind: the signals wait until it is armed.
  sigset_t Block, Old;
  sigemptyset(&Block);
  for (int Sig : InterruptSignals)
    sigaddset(&Block, Sig);
  pthread_sigmask(SIG_BLOCK, &Block, &Old);
  SmallString<256> P;
  std::error_code EC = sys::fs::createUniqueDirectory("cleave", P);
  if (!EC) {
    Path = std::string(P);
    if (!Keep && Path.size() < sizeof(ArmedPath)) {
      std::memcpy(ArmedPath, Path.c_str(), Path.size() + 1);
      Armed = true;
    }
  }
  pthread_sigmask(SIG_SETMASK, &Old, nullptr);
  return EC;
}

TempDir::~TempDir() {
  if (Path.empty())
    return;
  if (Keep) {
    errs() << "cleave: temporary files kept in " << Path << "\n";
    return;
  }
  Armed = false;
  sys::fs::remove_directories(Path);
}

} // namespace cleave
