//===- MakeTestBundle.cpp - Kernel bundles for the runtime's unit tests ---===//
//
// Part of Cleave's unit tests. The runtime's tests (CleaveRuntimeTests) do
// not link LLVM; the bundles their engines load are written at build time by
// this tool, with the compiler's bundle writer, from the NVPTX IR modules in
// unittests/Inputs (PTX only, no ptxas):
//
//   cleave-make-test-bundle -o OUT --source NAME [--rename FROM=TO]... IN.ll...
//
// The inputs are concatenated (a fragment such as hist.ll joins a module),
// kernels are renamed (a second module can hold the same code under other
// names), and NAME is the source file the bundle records.
//
//===----------------------------------------------------------------------===//
#include "../BundleFromIR.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <fstream>
#include <map>
#include <string>

namespace {

int usage() {
  llvm::errs() << "usage: cleave-make-test-bundle -o OUT --source NAME "
                  "[--rename FROM=TO]... IN.ll...\n";
  return 2;
}

} // namespace

int main(int Argc, char **Argv) {
  std::string Out, Source, IR;
  std::map<std::string, std::string> Rename;
  for (int I = 1; I < Argc; ++I) {
    llvm::StringRef A = Argv[I];
    bool HasValue = I + 1 < Argc;
    if (A == "-o" && HasValue) {
      Out = Argv[++I];
    } else if (A == "--source" && HasValue) {
      Source = Argv[++I];
    } else if (A == "--rename" && HasValue) {
      auto [From, To] = llvm::StringRef(Argv[++I]).split('=');
      if (From.empty() || To.empty())
        return usage();
      Rename[From.str()] = To.str();
    } else if (A.starts_with("-")) {
      return usage();
    } else {
      auto Buf = llvm::MemoryBuffer::getFile(A);
      if (!Buf) {
        llvm::errs() << A << ": " << Buf.getError().message() << "\n";
        return 1;
      }
      IR += (*Buf)->getBuffer();
      IR += "\n";
    }
  }
  if (Out.empty() || Source.empty() || IR.empty())
    return usage();
  std::string Bytes =
      cleave::test::bundleFromIR(IR.c_str(), Source.c_str(), Rename);
  if (Bytes.empty())
    return 1; // bundleFromIR printed why
  std::ofstream F(Out, std::ios::binary);
  F.write(Bytes.data(), std::streamsize(Bytes.size()));
  F.close();
  if (!F) {
    llvm::errs() << Out << ": cannot write the bundle\n";
    return 1;
  }
  return 0;
}
