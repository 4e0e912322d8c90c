//===- DeviceAssert.cpp - CUDA's device assert on the host ---------------===//
//
// Part of Cleave's runtime (no LLVM). A failed assert in a CPU variant calls
// __cleave_rt_assertfail (include/cleave/ABI/CpuReportABI.h), which prints
// the message the CUDA driver prints for a GPU and abandons the range of
// blocks through leaveGuarded: the executor fails the launch with
// cudaErrorAssert, which stays pending as on a GPU, where the context is
// unusable after a device-side assertion.
//
//===----------------------------------------------------------------------===//
#include "cleave/ABI/CpuReportABI.h"
#include "cleave/rt/KernelFault.h"

#include <cstdint>
#include <cstdio>

extern "C" [[noreturn]] void
__cleave_rt_assertfail(const char *Msg, const char *File, uint32_t Line,
                       const char *Func, uint64_t /*CharSize*/, uint32_t Bx,
                       uint32_t By, uint32_t Bz, uint32_t Tx, uint32_t Ty,
                       uint32_t Tz) {
  char Buf[2048];
  int N = std::snprintf(Buf, sizeof Buf,
                        "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] "
                        "Assertion `%s` failed.\n",
                        File ? File : "?", Line, Func ? Func : "?", Bx, By, Bz,
                        Tx, Ty, Tz, Msg ? Msg : "?");
  if (N >= int(sizeof Buf)) {
    N = sizeof Buf - 1;
    Buf[N - 1] = '\n';
  }
  // What the kernel printed before goes first.
  std::fflush(stdout);
  if (N > 0)
    std::fwrite(Buf, 1, size_t(N), stderr);
  cleave::rt::KernelFault Why;
  Why.Assertion = true;
  cleave::rt::leaveGuarded(Why);
}
