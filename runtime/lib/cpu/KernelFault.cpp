//===- KernelFault.cpp - A CPU kernel's memory fault as an error ---------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/KernelFault.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/KernelFault.h"
#include "cleave/rt/ManagedPages.h"

#include <algorithm>
#include <csetjmp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include <pthread.h>

#include <sys/mman.h>
#include <unistd.h>

namespace cleave::rt {

namespace {

/// One thread's recovery point.
struct ThreadGuard {
  sigjmp_buf Env;
  volatile sig_atomic_t Armed = 0;
  KernelFault Fault;
  void *AltStack = nullptr;
  size_t AltBytes = 0;

  ThreadGuard() {
    // A thread that already has an alternate stack (the program's) keeps it.
    stack_t Old{};
    if (sigaltstack(nullptr, &Old) != 0 || !(Old.ss_flags & SS_DISABLE))
      return;
    long Min = sysconf(_SC_MINSIGSTKSZ);
    AltBytes = std::max<size_t>(size_t(64) << 10, Min > 0 ? 4 * Min : 0);
    void *P = mmap(nullptr, AltBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (P == MAP_FAILED)
      return;
    stack_t S{};
    S.ss_sp = P;
    S.ss_size = AltBytes;
    if (sigaltstack(&S, nullptr) != 0) {
      munmap(P, AltBytes);
      return;
    }
    AltStack = P;
  }
  ~ThreadGuard() {
    if (!AltStack)
      return;
    stack_t S{};
    S.ss_flags = SS_DISABLE;
    sigaltstack(&S, nullptr);
    munmap(AltStack, AltBytes);
  }
};

// Read by the signal handler: a plain pointer in the static TLS block, so
// reading it never allocates (a lazily allocated TLS block would).
__attribute__((tls_model("initial-exec"))) thread_local ThreadGuard *Current =
    nullptr;

struct sigaction PrevSegv, PrevBus;

void onFault(int Sig, siginfo_t *Info, void *Context) {
  // A write to a write-protected page of managed memory, by the host or by
  // the runtime itself (a CPU kernel included): recorded as written, the
  // page opened, the write run again (ManagedPages.h).
  if (Sig == SIGSEGV && Info->si_code == SEGV_ACCERR &&
      handleManagedWrite(reinterpret_cast<uintptr_t>(Info->si_addr)))
    return;
  ThreadGuard *G = Current;
  if (G && G->Armed) {
    G->Armed = 0;
    G->Fault.Signal = Sig;
    G->Fault.Code = Info->si_code;
    G->Fault.Address = reinterpret_cast<uintptr_t>(Info->si_addr);
    siglongjmp(G->Env, 1);
  }
  // Not a kernel's: whoever handled it before does.
  const struct sigaction &Prev = Sig == SIGBUS ? PrevBus : PrevSegv;
  if (Prev.sa_flags & SA_SIGINFO) {
    if (Prev.sa_sigaction) {
      Prev.sa_sigaction(Sig, Info, Context);
      return;
    }
  } else if (Prev.sa_handler != SIG_DFL && Prev.sa_handler != SIG_IGN) {
    Prev.sa_handler(Sig);
    return;
  }
  // The default action: a faulting instruction runs again and dies of it; a
  // signal sent by kill() is raised again (pending until this returns).
  struct sigaction Dfl {};
  Dfl.sa_handler = SIG_DFL;
  sigemptyset(&Dfl.sa_mask);
  sigaction(Sig, &Dfl, nullptr);
  if (Info->si_code <= 0)
    raise(Sig);
}

} // namespace

void installKernelFaultHandlers() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    struct sigaction A {};
    A.sa_sigaction = onFault;
    A.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&A.sa_mask);
    sigaction(SIGSEGV, &A, &PrevSegv);
    sigaction(SIGBUS, &A, &PrevBus);
  });
}

namespace {

std::string hex(uintptr_t A) {
  char Buf[32];
  std::snprintf(Buf, sizeof Buf, "0x%llx", static_cast<unsigned long long>(A));
  return Buf;
}

} // namespace

std::string KernelFault::describe() const {
  if (Signal == SIGSEGV && Code == SI_KERNEL)
    return "an unknown address (general protection fault: a non-canonical "
           "or misaligned address)";
  std::string Why;
  if (Signal == SIGSEGV)
    Why = Code == SEGV_MAPERR   ? "not mapped"
          : Code == SEGV_ACCERR ? "no access: a guard region or read-only"
                                : "segmentation fault";
  else
    Why = Code == BUS_ADRALN ? "misaligned" : "bus error";
  return "address " + hex(Address) + " (" + Why + ")";
}

void leaveGuarded(const KernelFault &Why) {
  ThreadGuard *G = Current;
  if (!G || !G->Armed) {
    std::fputs("cleave: leaveGuarded outside a guarded kernel range\n", stderr);
    std::abort();
  }
  G->Armed = 0;
  G->Fault = Why;
  siglongjmp(G->Env, 1);
}

/// The calling thread's guard, made on its first range (with the handlers,
/// on the process's first).
ThreadGuard &threadGuard() {
  if (ThreadGuard *G = Current)
    return *G;
  installKernelFaultHandlers();
  static thread_local ThreadGuard G;
  Current = &G;
  return G;
}

bool runGuarded(void (*Fn)(void *), void *Arg, KernelFault &Out) {
  ThreadGuard &G = threadGuard();
  // The mask is not saved (that would cost a system call per range): the
  // jump leaves the handler with SIGSEGV and SIGBUS blocked, and the fault
  // path unblocks them (blocked, a second fault would kill the process).
  if (sigsetjmp(G.Env, 0)) {
    sigset_t Faults;
    sigemptyset(&Faults);
    sigaddset(&Faults, SIGSEGV);
    sigaddset(&Faults, SIGBUS);
    pthread_sigmask(SIG_UNBLOCK, &Faults, nullptr);
    Out = G.Fault;
    return false;
  }
  G.Fault = KernelFault(); // the handler sets only the signal's fields
  G.Armed = 1;
  Fn(Arg);
  G.Armed = 0;
  return true;
}

} // namespace cleave::rt
