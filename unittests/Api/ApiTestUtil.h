//===- ApiTestUtil.h - Shared set-up of the C/CUDA API tests ----*- C++ -*-===//
//
// Part of Cleave. The API tests drive the process-wide runtime through the
// public functions only (cudaXxx, cleave_*), besides the options it starts
// with (Runtime::setOptionsForTesting, in place of the environment). Each
// test restarts it over the devices it names (Options::Devices), so tests do
// not see each other's buffers, streams or errors.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_UNITTESTS_API_APITESTUTIL_H
#define CLEAVE_UNITTESTS_API_APITESTUTIL_H

#include "gtest/gtest.h"

#include "../../runtime/lib/api/Runtime.h"
#include "cleave/rt/Options.h"

#include <cstdlib>
#include <string>

// The C++ overloads (cudaMalloc(T **, ...), ...) that programs use.
#include "cleave_rt.h"
#include <cuda_runtime.h>

namespace cleave_api_test {

/// The options of a runtime over \p Devices (CLEAVE_DEVICES syntax) with
/// the partition policy \p Partition (null: the default, the model policy).
/// The model policy's performance cache is off (no CacheDir).
inline cleave::rt::Options options(const char *Devices,
                                   const char *Partition = nullptr) {
  cleave::rt::Options O;
  O.Devices = Devices;
  cleave::rt::PartitionPolicy P;
  if (Partition && cleave::rt::parsePartitionPolicy(Partition, P))
    O.Partition = P;
  return O;
}

/// Restarts the runtime with \p O and clears the calling thread's last
/// error.
inline void restart(const cleave::rt::Options &O) {
  cleave::rt::api::Runtime::setOptionsForTesting(O);
  cleave_reset();
  while (cudaGetLastError() != cudaSuccess) {
  }
}

inline void restart(const char *Devices, const char *Partition = nullptr) {
  restart(options(Devices, Partition));
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
    while (cudaGetLastError() != cudaSuccess) {
    }
  }
};

} // namespace cleave_api_test

#endif
