//===- Demangle.cpp - Kernel names as people write them -------------------===//
//
// Part of Cleave's runtime (no LLVM). See Demangle.h.
//
//===----------------------------------------------------------------------===//

#include "Demangle.h"

#include <cstdlib>
#include <cxxabi.h>

namespace cleave {
namespace rt {

std::string demangle(std::string_view Name) {
  if (Name.size() < 3 || Name.substr(0, 2) != "_Z")
    return std::string(Name);
  std::string Mangled(Name);
  int Status = 0;
  char *Out = abi::__cxa_demangle(Mangled.c_str(), nullptr, nullptr, &Status);
  if (Status != 0 || !Out)
    return Mangled;
  std::string Result(Out);
  std::free(Out);
  return Result;
}

std::string displayName(std::string_view Name) {
  std::string D = demangle(Name);
  if (D == Name)
    return D;
  return D + " [" + std::string(Name) + "]";
}

} // namespace rt
} // namespace cleave
