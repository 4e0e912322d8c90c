//===- CleavePlugin.cpp - The pass plugin entry point ---------------------===//
//
// opt-19 -load-pass-plugin=CleavePasses.so -passes='cleave-partition,...'
//
//===----------------------------------------------------------------------===//
#include "cleave/Plugin/PassRegistration.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"

extern "C" LLVM_ATTRIBUTE_WEAK ::llvm::PassPluginLibraryInfo
llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "Cleave", LLVM_VERSION_STRING,
          [](llvm::PassBuilder &PB) { cleave::registerCleavePasses(PB); }};
}
