//===- KernelFault.h - A CPU kernel's memory fault as an error -*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). On a GPU, a kernel's illegal memory
// access fails the launch (cudaErrorIllegalAddress) and the host process
// goes on; on the CPU it would raise SIGSEGV or SIGBUS in the process. The
// executor runs each range of blocks through runGuarded: a fault raised on
// that thread while the range runs returns to runGuarded instead, and the
// launch fails with cudaErrorIllegalAddress.
//
// How: one process-wide SIGSEGV and SIGBUS handler (SA_SIGINFO, SA_ONSTACK)
// installed on first use, and per thread that runs kernels an alternate
// signal stack (so that a kernel that overflows its stack is caught too) and
// a sigjmp_buf set before the range runs. The handler only reads a
// thread-local pointer and siglongjmps when that thread is inside a range;
// the range's own code is generated kernel code (no locks, no destructors),
// so nothing is left held. A fault anywhere else goes to the handler that
// was installed before (with its flags' calling convention); when that was
// the default action, the default is restored and the signal raised again,
// so a genuine crash of the host code still crashes, with its core dump.
//
// Not recovered: a fault inside a C library call that the kernel makes
// while that call holds a lock (device printf formats with snprintf, which
// holds none).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_KERNELFAULT_H
#define CLEAVE_RT_KERNELFAULT_H

#include <cstdint>
#include <string>

namespace cleave::rt {

/// A fault that runGuarded caught.
struct KernelFault {
  int Signal = 0;        ///< SIGSEGV or SIGBUS
  int Code = 0;          ///< siginfo's si_code
  uintptr_t Address = 0; ///< siginfo's si_addr
  /// A device-side assertion failed (leaveGuarded from
  /// __cleave_rt_assertfail), not a signal: the launch fails with
  /// cudaErrorAssert.
  bool Assertion = false;
  /// "address 0x10 (not mapped)", "an unknown address (general protection:
  /// a non-canonical or misaligned access)", ...
  std::string describe() const;
};

/// Runs \p Fn(\p Arg) on the calling thread. Returns true when it returned;
/// false when it raised SIGSEGV or SIGBUS, with the fault in \p Out (\p Fn
/// is abandoned where it faulted).
bool runGuarded(void (*Fn)(void *), void *Arg, KernelFault &Out);

/// Installs the process's SIGSEGV and SIGBUS handlers (once; runGuarded and
/// managed memory, ManagedPages.h, call it).
void installKernelFaultHandlers();

/// Abandons the function that the innermost runGuarded of this thread runs
/// (called from inside it): runGuarded returns false with \p Why (by
/// default a KernelFault of Signal 0). The checked variants' checks use it
/// to stop before an invalid access, device asserts to stop at a failed
/// assertion. Outside runGuarded it aborts.
[[noreturn]] void leaveGuarded(const KernelFault &Why = KernelFault());

} // namespace cleave::rt

#endif
