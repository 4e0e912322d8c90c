//===- Text.h - Small string helpers of the runtime's parsers ---*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). Shared by the parsers of the
// environment variables (CLEAVE_DEVICES, CLEAVE_FAULT).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_LIB_TEXT_H
#define CLEAVE_RT_LIB_TEXT_H

#include <cctype>
#include <string_view>

namespace cleave::rt {

/// S without leading and trailing white space.
inline std::string_view trim(std::string_view S) {
  while (!S.empty() && std::isspace(static_cast<unsigned char>(S.front())))
    S.remove_prefix(1);
  while (!S.empty() && std::isspace(static_cast<unsigned char>(S.back())))
    S.remove_suffix(1);
  return S;
}

} // namespace cleave::rt

#endif
