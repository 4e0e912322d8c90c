//===- PassRegistration.h - Register Cleave's passes by name ---*- C++ -*-===//
#ifndef CLEAVE_PLUGIN_PASSREGISTRATION_H
#define CLEAVE_PLUGIN_PASSREGISTRATION_H

namespace llvm {
class PassBuilder;
} // namespace llvm

namespace cleave {

/// Registers every pass and analysis of lib/Plugin/Passes.def with PB, so
/// that pipeline strings may name them (opt -passes=..., the driver).
void registerCleavePasses(llvm::PassBuilder &PB);

} // namespace cleave

#endif
