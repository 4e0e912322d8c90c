//===- ApiTestUtil.h - Shared set-up of the C/CUDA API tests ----*- C++ -*-===//
//
// Part of Cleave. The API tests drive the process-wide runtime through the
// public functions only (cudaXxx, cleave_*). Each test restarts it over the
// devices it names (CLEAVE_DEVICES), so tests do not see each other's
// buffers, streams or errors.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_UNITTESTS_API_APITESTUTIL_H
#define CLEAVE_UNITTESTS_API_APITESTUTIL_H

#include "gtest/gtest.h"

#include <cstdlib>
#include <string>

// The C++ overloads (cudaMalloc(T **, ...), ...) that programs use.
#include "cleave_rt.h"
#include <cuda_runtime.h>

namespace cleave_api_test {

/// Restarts the runtime over \p Devices with the partition policy
/// \p Partition (null: the default, the model policy) and clears the calling
/// thread's last error. The model policy's performance cache stays off.
inline void restart(const char *Devices, const char *Partition = nullptr) {
  setenv("CLEAVE_DEVICES", Devices, 1);
  setenv("CLEAVE_CACHE_DIR", "off", 1);
  if (Partition)
    setenv("CLEAVE_PARTITION", Partition, 1);
  else
    unsetenv("CLEAVE_PARTITION");
  cleave_reset();
  while (cudaGetLastError() != cudaSuccess) {
  }
}

/// The message of the calling thread's last error.
inline std::string lastMessage() {
  char Buf[2048];
  cleave_last_error_message(Buf, sizeof(Buf));
  return Buf;
}

/// A test fixture parameterized by CLEAVE_DEVICES: "cpu" (the buffers'
/// host copies only) and "cpu,cpu,cpu" (two more devices with memory of
/// their own, so data moves between devices for real). The proportional
/// policy splits launches over all three (the default, the model policy,
/// keeps them on cpu0: the CPU devices share one executor).
class ApiTest : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override { restart(GetParam(), "proportional"); }
  void TearDown() override {
    cleave_reset();
    unsetenv("CLEAVE_DEVICES");
    unsetenv("CLEAVE_PARTITION");
    while (cudaGetLastError() != cudaSuccess) {
    }
  }
};

} // namespace cleave_api_test

#endif
