//===- BundleInfo.cpp - Print a kernel bundle -------------------------------===//
//
// cleave-bundle-info FILE [--image=ptx|cubin [--arch=sm_XX]]
//
// Loads a bundle with the runtime's reader (cleave/rt/Bundle.h), so what it
// prints is what the runtime sees, and prints its stable text form, or the
// bytes of one GPU image. No LLVM: it runs on the GPU machines too.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Bundle.h"

#include <cstdio>
#include <cstring>
#include <string>

using namespace cleave::rt;

static int usage() {
  std::fprintf(stderr,
               "usage: cleave-bundle-info FILE [--image=ptx|cubin "
               "[--arch=sm_XX]]\n"
               "  prints the bundle's kernels, variants and metadata, or the "
               "bytes of one GPU image\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *File = nullptr;
  std::string Image, Arch;
  for (int I = 1; I < argc; ++I) {
    std::string A = argv[I];
    if (A.rfind("--image=", 0) == 0)
      Image = A.substr(8);
    else if (A.rfind("--arch=", 0) == 0)
      Arch = A.substr(7);
    else if (A == "--help" || A == "-h" || (!A.empty() && A[0] == '-' && A != "-"))
      return usage();
    else if (!File)
      File = argv[I];
    else
      return usage();
  }
  if (!File || (!Image.empty() && Image != "ptx" && Image != "cubin"))
    return usage();

  Bundle B;
  if (BundleStatus S = Bundle::load(File, B); !S) {
    std::fprintf(stderr, "cleave-bundle-info: error: %s\n", S.Message.c_str());
    return 1;
  }
  if (Image.empty()) {
    std::string Text = B.describe();
    std::fwrite(Text.data(), 1, Text.size(), stdout);
    return 0;
  }
  ImageKind Kind = Image == "ptx" ? ImageKind::PTX : ImageKind::Cubin;
  for (const BundleImage &I : B.Images)
    if (I.Kind == Kind && (Arch.empty() || I.Arch == Arch)) {
      std::fwrite(I.Data.data(), 1, I.Data.size(), stdout);
      return 0;
    }
  std::fprintf(stderr, "cleave-bundle-info: error: the bundle has no %s image%s%s\n",
               Image.c_str(), Arch.empty() ? "" : " for ", Arch.c_str());
  return 1;
}
