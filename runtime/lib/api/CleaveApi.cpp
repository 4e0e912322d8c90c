//===- CleaveApi.cpp - The cleave_* functions of cleave_rt.h --------------===//
//
// Part of Cleave's runtime (no LLVM). Registration (static constructors of
// generated code), the call-configuration protocol of rewritten launches
// (one stack per host thread, like CUDA's __cudaPushCallConfiguration), and
// the functions for programs that use the runtime without the CUDA names.
//
//===----------------------------------------------------------------------===//
#include "Runtime.h"

#include "../serve/Client.h"

#include <cstring>

using namespace cleave::rt;
using namespace cleave::rt::api;

namespace {

struct CallConfiguration {
  uint32_t Grid[3];
  uint32_t Block[3];
  size_t SharedBytes;
  void *Stream;
};

/// Pushed by cleave_push_call_configuration, popped by the kernel stub the
/// push precedes. A stack: an argument of a launch may itself launch.
thread_local std::vector<CallConfiguration> Configurations;

void copyOut(const std::string &S, char *Buf, size_t Size) {
  if (!Buf || !Size)
    return;
  size_t N = S.size() < Size - 1 ? S.size() : Size - 1;
  std::memcpy(Buf, S.data(), N);
  Buf[N] = '\0';
}

} // namespace

extern "C" {

int cleave_register_module(const cleave_module_desc *module) {
  return finish(registerModule(module));
}

int cleave_register_kernel(const void *host_stub, const char *device_name) {
  return finish(registerKernel(host_stub, device_name));
}

int cleave_register_variable(const void *host_shadow, const char *device_name,
                             uint64_t size) {
  return finish(registerVariable(host_shadow, device_name, size));
}

unsigned cleave_push_call_configuration(const uint32_t grid[3],
                                        const uint32_t block[3],
                                        size_t shared_bytes, void *stream) {
  CallConfiguration C;
  for (int I = 0; I < 3; ++I) {
    C.Grid[I] = grid ? grid[I] : 1;
    C.Block[I] = block ? block[I] : 1;
  }
  C.SharedBytes = shared_bytes;
  C.Stream = stream;
  Configurations.push_back(C);
  return 0;
}

int cleave_pop_call_configuration(uint32_t grid[3], uint32_t block[3],
                                  size_t *shared_bytes, void **stream) {
  CallConfiguration C = {};
  bool Have = !Configurations.empty();
  if (Have) {
    C = Configurations.back();
    Configurations.pop_back();
  }
  for (int I = 0; I < 3; ++I) {
    if (grid)
      grid[I] = C.Grid[I];
    if (block)
      block[I] = C.Block[I];
  }
  if (shared_bytes)
    *shared_bytes = C.SharedBytes;
  if (stream)
    *stream = C.Stream;
  if (!Have)
    return finish(Result::error(ErrorCode::InvalidValue,
                                "cleave_pop_call_configuration: no launch "
                                "configuration was pushed (a kernel stub "
                                "called without <<<...>>>)"));
  return 0;
}

int cleave_launch(const void *host_stub, const char *device_name,
                  const uint32_t grid[3], const uint32_t block[3], void **args,
                  size_t shared_bytes, void *stream) {
  std::string Name;
  if (host_stub) {
    if (!kernelName(host_stub, Name))
      return finish(Result::error(ErrInvalidDeviceFunction,
                                  "cleave_launch: no kernel is registered "
                                  "for this host stub"));
  } else if (device_name && *device_name) {
    Name = device_name;
  } else {
    return finish(Result::error(ErrorCode::InvalidValue,
                                "cleave_launch: neither a host stub nor a "
                                "kernel name"));
  }
  if (!grid || !block)
    return finish(Result::error(ErrorCode::InvalidValue,
                                "cleave_launch: null grid or block"));
  return finish(launchKernel(Name, grid, block, args, shared_bytes, stream));
}

int cleave_device_count(int *count) {
  if (!count)
    return finish(Result::error(ErrorCode::InvalidValue,
                                "cleave_device_count: null pointer"));
  *count = 0;
  Runtime *RT;
  if (Result R = Runtime::get(RT); !R.ok())
    return finish(R);
  *count = static_cast<int>(RT->registry().size());
  return 0;
}

int cleave_device_describe(int i, char *buf, size_t size) {
  copyOut("", buf, size);
  Runtime *RT;
  if (Result R = Runtime::get(RT); !R.ok())
    return finish(R);
  if (i < 0 || static_cast<size_t>(i) >= RT->registry().size())
    return finish(Result::error(
        ErrorCode::InvalidDevice,
        "cleave_device_describe: no device " + std::to_string(i) + " (there " +
            "are " + std::to_string(RT->registry().size()) + ")"));
  const DeviceProperties &P = RT->registry().device(i).properties();
  std::string S = P.Name + ": " + P.Description;
  if (P.Kind == DeviceKind::Cuda)
    S += " (" + std::to_string(P.ComputeUnits) + " SMs)";
  copyOut(S, buf, size);
  return 0;
}

int cleave_last_plan(char *buf, size_t size) {
  std::string Plan;
  Result R = lastPlan(Plan);
  copyOut(Plan, buf, size);
  return finish(R);
}

int cleave_last_error_message(char *buf, size_t size) {
  copyOut(lastErrorMessage(), buf, size);
  return 0;
}

int cleave_register_image(const void *image, uint64_t size) {
  if (!image || !size)
    return finish(Result::error(ErrorCode::InvalidValue,
                                "cleave_register_image: no image"));
  serve::registerImage(image, size);
  return 0;
}

int cleave_reset(void) {
  Runtime::reset();
  return 0;
}

} // extern "C"
