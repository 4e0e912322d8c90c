//===- DeviceObject.h - One translation unit's device code as an object -*- C++ -*-===//
//
// Part of Cleave. The object `cleave compile` links into a program for each
// .cu file: the CPU variants of its kernels (the module of cleave-cpu-lower)
// plus, as data, the kernel bundle and the table of CPU symbols the bundle
// names, and a constructor that registers both with the runtime before main
// (cleave_register_module in runtime/include/cleave_rt.h).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_CODEGEN_DEVICEOBJECT_H
#define CLEAVE_CODEGEN_DEVICEOBJECT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace cleave {

// The registration structures' layout and values mirror cleave_rt.h (the
// compiler does not include runtime headers): cleave_symbol is
// {const char *, void *}; cleave_module_desc is {u32 abi_version, u32 flags,
// u32 num_symbols, u32 reserved, const void *bundle, u64 bundle_size,
// const cleave_symbol *symbols}.
// unittests/Support/ModuleABITest.cpp checks both against cleave_rt.h.
constexpr unsigned DeviceObjectABIVersion = 1; // CLEAVE_RT_ABI_VERSION
constexpr unsigned ModuleFlagSingleDevice = 1; // CLEAVE_MODULE_SINGLE_DEVICE

struct DeviceObjectOptions {
  bool SingleDevice = false; ///< `--single-device`
  std::string CPU = "x86-64-v3";
};

/// Adds the bundle, the symbol table (every `__cleave_cpu_*` definition: the
/// kernels' `_desc` descriptors and the `__cleave_cpu_var_*` copies of device
/// variables), the module descriptor and its registering constructor (in
/// .init_array) to
/// \p CPUModule, makes every other symbol local (objects of several .cu files
/// link into one program without clashes: the runtime finds the CPU code
/// through the table, not by name), and emits an x86-64 object.
llvm::Expected<std::string> emitDeviceObject(llvm::Module &CPUModule,
                                             llvm::StringRef Bundle,
                                             const DeviceObjectOptions &Opts);

/// Only the IR part of emitDeviceObject (for inspection and tests).
llvm::Error addModuleRegistration(llvm::Module &CPUModule,
                                  llvm::StringRef Bundle,
                                  const DeviceObjectOptions &Opts);

} // namespace cleave

#endif
