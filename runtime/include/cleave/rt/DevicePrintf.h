//===- DevicePrintf.h - CUDA's device printf on the host --------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). A kernel's printf in a CPU variant
// calls __cleave_rt_vprintf (include/cleave/ABI/CpuReportABI.h) with the
// format and the argument buffer that Clang packs for NVPTX: each argument
// promoted as for a variadic call (char and short to int, float to double;
// pointers are 64-bit) and stored at its natural alignment after the
// previous one. As CUDA's formatter, this one reads each argument with the
// size that the conversion and its length modifier give (4 bytes for int
// conversions and `*`, 8 with l, ll, j, z or t, 8 for floating-point
// conversions, strings and pointers) and formats it with the host's
// snprintf.
//
// Each call is formatted into one buffer and written to stdout with one
// fwrite: stdio's lock on stdout keeps the text of one call together when
// several blocks print at once, and the program's own printf output, which
// shares that FILE, stays in program order with it. The `%s` argument is a
// generic address, on a CPU device a host address.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_DEVICEPRINTF_H
#define CLEAVE_RT_DEVICEPRINTF_H

#include <cstdint>
#include <string>

namespace cleave::rt {

/// Validates a `%s` argument before it is read (CLEAVE_CHECK=memory): the
/// bytes up to its terminating zero, or \p MaxBytes of them (a precision)
/// if fewer.
struct StringCheck {
  bool (*Fn)(const void *Str, uint64_t MaxBytes, void *Ctx);
  void *Ctx;
};

/// Appends to \p Out what CUDA's printf prints for \p Fmt and the argument
/// buffer [\p Args, \p Args + \p ArgBytes). Returns what CUDA's printf
/// returns: the number of arguments read, or -1 when \p Fmt is null; -2
/// when \p Check refused a string (formatting stops there).
/// Conversions supported: d i u o x X c s p e E f F g G a A and %%, with
/// flags (- + space # 0 '), width and precision (digits or *), and the
/// length modifiers hh h l ll L j z t. `%n` reads its pointer and writes
/// nothing. A malformed conversion, or one whose argument lies past the
/// buffer's end, is printed as written and reads nothing.
int formatDevicePrintf(const char *Fmt, const void *Args, uint64_t ArgBytes,
                       std::string &Out, const StringCheck *Check = nullptr);

} // namespace cleave::rt

#endif
