//===- Status.h - Success or a one-line reason -------------------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). The outcome of an internal operation
// that can fail without a CUDA error code of its own (parsing a footprint,
// running a CPU launch). What the CUDA-runtime subset returns is a Result
// (Error.h), which carries a cudaError_t value as well.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_STATUS_H
#define CLEAVE_RT_STATUS_H

#include <string>
#include <utility>

namespace cleave::rt {

struct Status {
  bool Ok = true;
  std::string Message; ///< why, when !Ok

  static Status success() { return {}; }
  static Status error(std::string Msg) { return {false, std::move(Msg)}; }
  explicit operator bool() const { return Ok; }
};

} // namespace cleave::rt

#endif
