//===- ModuleABITest.cpp - The module descriptor both layers build -------===//
//
// Part of Cleave. The compiler emits each object's module descriptor as IR
// constants (lib/CodeGen/DeviceObject.cpp) and the runtime reads it as the
// C struct of cleave_rt.h, which user programs include without the
// compiler's headers; the compiler cannot include that runtime header, so
// the two spellings of its version and flags are checked here, where both
// are visible, and a change on one side only fails to compile.
//
//===----------------------------------------------------------------------===//
#include "cleave/CodeGen/DeviceObject.h"
#include "cleave_rt.h"

namespace {

static_assert(cleave::DeviceObjectABIVersion == CLEAVE_RT_ABI_VERSION,
              "the compiler emits another module descriptor version than "
              "the runtime reads");
static_assert(cleave::ModuleFlagSingleDevice == CLEAVE_MODULE_SINGLE_DEVICE);

} // namespace
