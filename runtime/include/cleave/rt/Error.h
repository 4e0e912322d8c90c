//===- Error.h - CUDA-style error codes of the runtime ----------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). Every runtime operation that can fail
// returns a Result: a code whose values are those of cudaError_t (so the
// CUDA-runtime subset returns them unchanged) and a one-line message saying
// what went wrong. Nothing in the runtime throws or aborts on bad input.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_ERROR_H
#define CLEAVE_RT_ERROR_H

#include <string>
#include <utility>

namespace cleave {
namespace rt {

/// The cudaError_t values the runtime produces (driver_types.h, CUDA 13).
enum class ErrorCode : int {
  Success = 0,
  InvalidValue = 1,          // cudaErrorInvalidValue
  MemoryAllocation = 2,      // cudaErrorMemoryAllocation
  InitializationError = 3,   // cudaErrorInitializationError
  InvalidConfiguration = 9,  // cudaErrorInvalidConfiguration
  InvalidPitchValue = 12,    // cudaErrorInvalidPitchValue
  InvalidSymbol = 13,        // cudaErrorInvalidSymbol
  InvalidDevicePointer = 17, // cudaErrorInvalidDevicePointer
  InvalidMemcpyDirection = 21,
  InsufficientDriver = 35,   // cudaErrorInsufficientDriver
  InvalidDeviceFunction = 98, // cudaErrorInvalidDeviceFunction
  NoDevice = 100,            // cudaErrorNoDevice
  InvalidDevice = 101,       // cudaErrorInvalidDevice
  InvalidKernelImage = 200,  // cudaErrorInvalidKernelImage
  PeerAccessUnsupported = 217,
  InvalidResourceHandle = 400,
  NotReady = 600,
  IllegalAddress = 700,
  Assert = 710, // cudaErrorAssert
  HostMemoryAlreadyRegistered = 712,
  HostMemoryNotRegistered = 713,
  LaunchFailure = 719,
  NotSupported = 801,
  Unknown = 999,
};

/// A kernel's own failure (an illegal address, a device-side assertion):
/// no device's fault, so running the kernel elsewhere would fail again, and
/// sticky, as CUDA's are for the context: every later report gives it again.
inline bool isStickyKernelError(ErrorCode C) {
  return C == ErrorCode::IllegalAddress || C == ErrorCode::Assert;
}

/// "cudaErrorInvalidValue", ... (the name CUDA's cudaGetErrorName gives).
const char *getErrorName(ErrorCode C);
/// A short description, as cudaGetErrorString gives.
const char *getErrorDescription(ErrorCode C);

/// The outcome of a runtime operation: Success, or a code and a message.
class [[nodiscard]] Result {
public:
  Result() = default;
  static Result success() { return Result(); }
  static Result error(ErrorCode C, std::string Msg) {
    Result R;
    R.Code = C;
    R.Message = std::move(Msg);
    return R;
  }

  bool ok() const { return Code == ErrorCode::Success; }
  ErrorCode code() const { return Code; }
  /// Empty on success.
  const std::string &message() const { return Message; }
  /// "cudaErrorInvalidValue: <message>", or "success".
  std::string toString() const;

private:
  ErrorCode Code = ErrorCode::Success;
  std::string Message;
};

} // namespace rt
} // namespace cleave

#endif
