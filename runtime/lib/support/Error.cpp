//===- Error.cpp - CUDA-style error codes of the runtime ------------------===//
//
// Part of Cleave's runtime (no LLVM).
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Error.h"

namespace cleave {
namespace rt {

const char *getErrorName(ErrorCode C) {
  switch (C) {
  case ErrorCode::Success:
    return "cudaSuccess";
  case ErrorCode::InvalidValue:
    return "cudaErrorInvalidValue";
  case ErrorCode::MemoryAllocation:
    return "cudaErrorMemoryAllocation";
  case ErrorCode::InitializationError:
    return "cudaErrorInitializationError";
  case ErrorCode::InvalidDevicePointer:
    return "cudaErrorInvalidDevicePointer";
  case ErrorCode::InvalidMemcpyDirection:
    return "cudaErrorInvalidMemcpyDirection";
  case ErrorCode::InsufficientDriver:
    return "cudaErrorInsufficientDriver";
  case ErrorCode::NoDevice:
    return "cudaErrorNoDevice";
  case ErrorCode::InvalidDevice:
    return "cudaErrorInvalidDevice";
  case ErrorCode::InvalidKernelImage:
    return "cudaErrorInvalidKernelImage";
  case ErrorCode::PeerAccessUnsupported:
    return "cudaErrorPeerAccessUnsupported";
  case ErrorCode::InvalidResourceHandle:
    return "cudaErrorInvalidResourceHandle";
  case ErrorCode::NotReady:
    return "cudaErrorNotReady";
  case ErrorCode::IllegalAddress:
    return "cudaErrorIllegalAddress";
  case ErrorCode::Assert:
    return "cudaErrorAssert";
  case ErrorCode::HostMemoryAlreadyRegistered:
    return "cudaErrorHostMemoryAlreadyRegistered";
  case ErrorCode::HostMemoryNotRegistered:
    return "cudaErrorHostMemoryNotRegistered";
  case ErrorCode::LaunchFailure:
    return "cudaErrorLaunchFailure";
  case ErrorCode::NotSupported:
    return "cudaErrorNotSupported";
  case ErrorCode::InvalidConfiguration:
    return "cudaErrorInvalidConfiguration";
  case ErrorCode::InvalidPitchValue:
    return "cudaErrorInvalidPitchValue";
  case ErrorCode::InvalidSymbol:
    return "cudaErrorInvalidSymbol";
  case ErrorCode::InvalidDeviceFunction:
    return "cudaErrorInvalidDeviceFunction";
  case ErrorCode::Unknown:
    return "cudaErrorUnknown";
  }
  return "cudaErrorUnknown";
}

const char *getErrorDescription(ErrorCode C) {
  switch (C) {
  case ErrorCode::Success:
    return "no error";
  case ErrorCode::InvalidValue:
    return "invalid argument";
  case ErrorCode::MemoryAllocation:
    return "out of memory";
  case ErrorCode::InitializationError:
    return "initialization error";
  case ErrorCode::InvalidDevicePointer:
    return "invalid device pointer";
  case ErrorCode::InvalidMemcpyDirection:
    return "invalid copy direction for memcpy";
  case ErrorCode::InsufficientDriver:
    return "CUDA driver version is insufficient for CUDA runtime version";
  case ErrorCode::NoDevice:
    return "no CUDA-capable device is detected";
  case ErrorCode::InvalidDevice:
    return "invalid device ordinal";
  case ErrorCode::InvalidKernelImage:
    return "device kernel image is invalid";
  case ErrorCode::PeerAccessUnsupported:
    return "peer access is not supported between these two devices";
  case ErrorCode::InvalidResourceHandle:
    return "invalid resource handle";
  case ErrorCode::NotReady:
    return "device not ready";
  case ErrorCode::IllegalAddress:
    return "an illegal memory access was encountered";
  case ErrorCode::Assert:
    return "device-side assert triggered";
  case ErrorCode::HostMemoryAlreadyRegistered:
    return "part or all of the requested memory range is already mapped";
  case ErrorCode::HostMemoryNotRegistered:
    return "pointer does not correspond to a registered memory region";
  case ErrorCode::LaunchFailure:
    return "unspecified launch failure";
  case ErrorCode::NotSupported:
    return "operation not supported";
  case ErrorCode::InvalidConfiguration:
    return "invalid configuration argument";
  case ErrorCode::InvalidPitchValue:
    return "invalid pitch argument";
  case ErrorCode::InvalidSymbol:
    return "invalid device symbol";
  case ErrorCode::InvalidDeviceFunction:
    return "invalid device function";
  case ErrorCode::Unknown:
    return "unknown error";
  }
  return "unknown error";
}

std::string Result::toString() const {
  if (ok())
    return "success";
  std::string S = getErrorName(Code);
  if (!Message.empty())
    S += ": " + Message;
  return S;
}

} // namespace rt
} // namespace cleave
