//===- HostCompiler.cpp - The host C++ compiler a build uses --------------===//
//
// Part of Cleave's driver (HostCompiler.h).
//
//===----------------------------------------------------------------------===//
#include "HostCompiler.h"
#include "Build.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"

using namespace llvm;

namespace cleave {

Expected<std::vector<std::string>> findHostCompiler(StringRef Spec) {
  std::string S = Spec.str();
  if (S.empty())
    if (std::optional<std::string> Env = sys::Process::GetEnv("CXX"))
      S = *Env;
  std::vector<std::string> Cmd;
  SmallVector<StringRef, 4> Parts;
  StringRef(S).split(Parts, ' ', -1, /*KeepEmpty=*/false);
  for (StringRef P : Parts)
    Cmd.push_back(P.str());
  if (Cmd.empty()) {
    for (StringRef Name : {"g++", "clang++-19", "clang++"})
      if (ErrorOr<std::string> P = sys::findProgramByName(Name)) {
        Cmd.push_back(*P);
        return Cmd;
      }
    return createStringError(inconvertibleErrorCode(),
                             "no host C++ compiler found (g++, clang++-19, "
                             "clang++): install one or pass --cxx=<compiler>");
  }
  if (!sys::path::is_absolute(Cmd[0])) {
    ErrorOr<std::string> P = sys::findProgramByName(Cmd[0]);
    if (!P)
      return createStringError(inconvertibleErrorCode(),
                               "host C++ compiler '%s' not found",
                               Cmd[0].c_str());
    Cmd[0] = *P;
  }
  return Cmd;
}

std::vector<std::string> hostSearchDirs(ArrayRef<std::string> Cxx) {
  if (Cxx.empty())
    return {};
  SmallString<128> Err;
  if (sys::fs::createTemporaryFile("cleave-cxx-v", "txt", Err))
    return {};
  FileRemover Remove(Err);
  sys::RemoveFileOnSignal(Err);
  auto Forget = make_scope_exit([&] { sys::DontRemoveFileOnSignal(Err); });
  SmallVector<StringRef, 8> Argv(Cxx.begin(), Cxx.end());
  Argv.append({"-x", "c++", "-E", "-v", "-o", "/dev/null", "/dev/null"});
  std::optional<StringRef> Redirects[3] = {
      StringRef("/dev/null"), StringRef("/dev/null"), StringRef(Err)};
  if (sys::ExecuteAndWait(Argv[0], Argv, std::nullopt, Redirects) != 0)
    return {};
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFile(Err);
  if (!Buf)
    return {};
  // GCC and Clang both print the list between these two lines, one
  // directory a line, indented.
  std::vector<std::string> Dirs;
  bool In = false;
  SmallVector<StringRef, 32> Lines;
  (*Buf)->getBuffer().split(Lines, '\n');
  for (StringRef L : Lines) {
    if (L.starts_with("#include <...> search starts here:")) {
      In = true;
    } else if (L.starts_with("End of search list.")) {
      break;
    } else if (In && L.starts_with(" ")) {
      StringRef Dir = L.trim();
      Dir.consume_back(" (framework directory)");
      if (sys::fs::is_directory(Dir))
        Dirs.push_back(Dir.str());
    }
  }
  return Dirs;
}

bool enablesOpenMP(ArrayRef<std::string> Args) {
  for (StringRef A : Args)
    if (A == "-fopenmp" || A.starts_with("-fopenmp="))
      return true;
  return false;
}

void useHostCompilerView(BuildOptions &B) {
  B.Device.OpenMP = enablesOpenMP(B.HostCompilerArgs);
  Expected<std::vector<std::string>> Cxx = findHostCompiler(B.Cxx);
  if (!Cxx) {
    consumeError(Cxx.takeError()); // said when the host compiler is run
    return;
  }
  B.Device.HostSearchDirs = hostSearchDirs(*Cxx);
}

} // namespace cleave
