//===- DevicePrintf.cpp - CUDA's device printf on the host ---------------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/DevicePrintf.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/DevicePrintf.h"
#include "cleave/ABI/CpuReportABI.h"
#include "cleave/rt/KernelFault.h"
#include "cleave/rt/MemCheck.h"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>

namespace cleave::rt {

namespace {

/// Clang's packed argument buffer, read in order.
class ArgReader {
public:
  ArgReader(const void *Base, uint64_t Bytes)
      : Base(static_cast<const unsigned char *>(Base)),
        Bytes(Base ? Bytes : 0) {}

  /// The next argument of \p Size bytes (4 or 8) at its natural alignment;
  /// false when it would lie past the end.
  bool read(unsigned Size, void *Out) {
    uint64_t At = (Offset + Size - 1) / Size * Size;
    if (At > Bytes || Size > Bytes - At)
      return false;
    std::memcpy(Out, Base + At, Size);
    Offset = At + Size;
    ++Count;
    return true;
  }
  int count() const { return Count; }

private:
  const unsigned char *Base;
  uint64_t Bytes;
  uint64_t Offset = 0;
  int Count = 0;
};

/// One conversion specification, parsed.
struct Spec {
  std::string Flags;
  bool WidthStar = false, HasPrecision = false, PrecisionStar = false;
  std::string Width, Precision; ///< digits as written
  std::string Length;           ///< hh h l ll L j z t, or empty
  char Conv = 0;                ///< 0 when malformed
};

bool isOneOf(char C, const char *Set) { return C && std::strchr(Set, C); }

/// Parses the specification after a '%' at \p P; \p P ends after it.
Spec parseSpec(const char *&P) {
  Spec S;
  while (isOneOf(*P, "-+ #0'"))
    S.Flags += *P++;
  if (*P == '*') {
    S.WidthStar = true;
    ++P;
  } else {
    while (*P >= '0' && *P <= '9')
      S.Width += *P++;
  }
  if (*P == '.') {
    S.HasPrecision = true;
    ++P;
    if (*P == '*') {
      S.PrecisionStar = true;
      ++P;
    } else {
      while (*P >= '0' && *P <= '9')
        S.Precision += *P++;
    }
  }
  if ((P[0] == 'h' && P[1] == 'h') || (P[0] == 'l' && P[1] == 'l')) {
    S.Length.assign(P, 2);
    P += 2;
  } else if (isOneOf(*P, "hlLjzt")) {
    S.Length = *P++;
  }
  if (isOneOf(*P, "diouxXcspeEfFgGaAn%"))
    S.Conv = *P++;
  return S;
}

/// Appends snprintf(Fmt, V...) to Out.
template <typename... T>
void append(std::string &Out, const std::string &Fmt, T... V) {
  char Small[128];
  int N = std::snprintf(Small, sizeof Small, Fmt.c_str(), V...);
  if (N < 0)
    return;
  if (size_t(N) < sizeof Small) {
    Out.append(Small, size_t(N));
    return;
  }
  size_t At = Out.size();
  Out.resize(At + size_t(N) + 1);
  std::snprintf(&Out[At], size_t(N) + 1, Fmt.c_str(), V...);
  Out.resize(At + size_t(N));
}

enum class Formatted { Done, Missing, Refused };

/// Formats one conversion \p S with the arguments it reads: Missing when an
/// argument is (nothing is appended then), Refused when \p Check refused
/// its string.
Formatted formatOne(Spec S, ArgReader &Args, std::string &Out,
                    const StringCheck *Check) {
  int Star;
  if (S.WidthStar) {
    if (!Args.read(4, &Star))
      return Formatted::Missing;
    // A negative width is a '-' flag and its magnitude.
    if (Star < 0) {
      S.Flags += '-';
      Star = Star == INT_MIN ? INT_MAX : -Star;
    }
    S.Width = std::to_string(Star);
  }
  if (S.PrecisionStar) {
    if (!Args.read(4, &Star))
      return Formatted::Missing;
    // A negative precision is taken as if it were omitted.
    S.HasPrecision = Star >= 0;
    S.Precision = std::to_string(Star);
  }
  std::string Host = "%" + S.Flags + S.Width +
                     (S.HasPrecision ? "." + S.Precision : std::string());
  bool Wide = S.Length == "l" || S.Length == "ll" || S.Length == "j" ||
              S.Length == "z" || S.Length == "t";
  switch (S.Conv) {
  case 'c':
  case 'd':
  case 'i':
  case 'o':
  case 'u':
  case 'x':
  case 'X': {
    if (S.Conv == 'c' || !Wide) {
      int V;
      if (!Args.read(4, &V))
        return Formatted::Missing;
      // %lc takes a wint_t (4 bytes on both sides); hh and h convert the
      // promoted int as the host's printf does.
      std::string Len = S.Conv == 'c' ? (S.Length == "l" ? "l" : "") : S.Length;
      if (S.Conv == 'c' && Len == "l")
        append(Out, Host + "lc", static_cast<wint_t>(V));
      else
        append(Out, Host + Len + S.Conv, V);
      return Formatted::Done;
    }
    long long V;
    if (!Args.read(8, &V))
      return Formatted::Missing;
    append(Out, Host + "ll" + S.Conv, V);
    return Formatted::Done;
  }
  case 'e':
  case 'E':
  case 'f':
  case 'F':
  case 'g':
  case 'G':
  case 'a':
  case 'A': {
    // Floats arrive promoted to double; the device has no long double.
    double V;
    if (!Args.read(8, &V))
      return Formatted::Missing;
    append(Out, Host + S.Conv, V);
    return Formatted::Done;
  }
  case 's':
  case 'p':
  case 'n': {
    const void *V;
    if (!Args.read(8, &V))
      return Formatted::Missing;
    uint64_t Max = S.HasPrecision
                       ? std::strtoull(S.Precision.c_str(), nullptr, 10)
                       : ~0ull;
    if (S.Conv == 's' && V && Check && !Check->Fn(V, Max, Check->Ctx))
      return Formatted::Refused;
    if (S.Conv == 'p')
      append(Out, Host + "p", V);
    else if (S.Conv == 's' && S.Length == "l")
      append(Out, Host + "ls", V ? static_cast<const wchar_t *>(V) : L"(null)");
    else if (S.Conv == 's')
      append(Out, Host + "s", V ? static_cast<const char *>(V) : "(null)");
    return Formatted::Done;
  }
  }
  return Formatted::Missing;
}

} // namespace

int formatDevicePrintf(const char *Fmt, const void *Args, uint64_t ArgBytes,
                       std::string &Out, const StringCheck *Check) {
  if (!Fmt)
    return -1;
  ArgReader Reader(Args, ArgBytes);
  for (const char *P = Fmt; *P;) {
    if (*P != '%') {
      const char *End = std::strchr(P, '%');
      size_t N = End ? size_t(End - P) : std::strlen(P);
      Out.append(P, N);
      P += N;
      continue;
    }
    const char *Start = P++;
    Spec S = parseSpec(P);
    if (S.Conv == '%') {
      Out += '%';
      continue;
    }
    Formatted F =
        S.Conv ? formatOne(S, Reader, Out, Check) : Formatted::Missing;
    if (F == Formatted::Refused)
      return -2;
    if (F == Formatted::Missing)
      Out.append(Start, size_t(P - Start)); // as written
  }
  return Reader.count();
}

} // namespace cleave::rt

namespace {

/// Formats and writes one call's text; -2 (nothing written) when \p Check
/// refused a string.
int print(const char *Fmt, const void *Args, uint64_t ArgBytes,
          const cleave::rt::StringCheck *Check) {
  // One buffer per thread, reused: a kernel that faults inside the
  // formatting (a bad %s pointer) leaves it for the next call to clear.
  thread_local std::string Buf;
  Buf.clear();
  int N = cleave::rt::formatDevicePrintf(Fmt, Args, ArgBytes, Buf, Check);
  if (N != -2 && !Buf.empty())
    std::fwrite(Buf.data(), 1, Buf.size(), stdout);
  return N;
}

} // namespace

extern "C" int __cleave_rt_vprintf(const char *Fmt, const void *Args,
                                   uint64_t ArgBytes) {
  return print(Fmt, Args, ArgBytes, nullptr);
}

extern "C" int __cleave_rt_vprintf_checked(const char *Fmt, const void *Args,
                                           uint64_t ArgBytes, uint64_t Block,
                                           uint64_t Thread) {
  using namespace cleave::rt;
  struct Context {
    MemCheckLaunch *Launch;
    uint64_t Block, Thread;
  } C{currentMemCheck(), Block, Thread};
  if (!C.Launch)
    return print(Fmt, Args, ArgBytes, nullptr);
  StringCheck Check{[](const void *S, uint64_t MaxBytes, void *P) {
                      auto *C = static_cast<Context *>(P);
                      return C->Launch->checkString(
                          reinterpret_cast<uintptr_t>(S), MaxBytes, C->Block,
                          C->Thread);
                    },
                    &C};
  int N = print(Fmt, Args, ArgBytes, &Check);
  // As __cleave_rt_check: the range stops before the invalid read.
  if (N == -2)
    leaveGuarded();
  return N;
}
