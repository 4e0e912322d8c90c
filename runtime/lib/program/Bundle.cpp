//===- Bundle.cpp - Verify and decode a kernel bundle ----------------------===//
//
// Part of Cleave's runtime. The layout is docs/bundle.md; the primitive
// decoders and the checksum are cleave/ABI/BundleFormat.h, shared with the
// compiler's writer. Every count is checked against the bytes left before
// anything is allocated, every enumeration and index against its range.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Bundle.h"

#include "cleave/ABI/BundleFormat.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace cleave {
namespace rt {

namespace fmt = cleave::bundle;

const char *getBundleErrcName(BundleErrc E) {
  switch (E) {
  case BundleErrc::Ok:
    return "ok";
  case BundleErrc::Io:
    return "io";
  case BundleErrc::NotBundle:
    return "not-a-bundle";
  case BundleErrc::Version:
    return "version";
  case BundleErrc::Truncated:
    return "truncated";
  case BundleErrc::Checksum:
    return "checksum";
  case BundleErrc::Malformed:
    return "malformed";
  }
  return "?";
}

uint32_t getBundleFormatVersion() { return fmt::FormatVersion; }

namespace {

BundleStatus fail(BundleErrc Code, std::string Msg) {
  return {Code, "invalid kernel bundle: " + std::move(Msg)};
}

/// Decodes the payload (docs/bundle.md, "Payload"). Returns an empty string
/// on success, else what was wrong.
class PayloadDecoder {
public:
  PayloadDecoder(const unsigned char *P, size_t N, uint32_t Version)
      : R(P, N), Version(Version) {}

  std::string run(Bundle &B);

private:
  fmt::ByteReader R;
  uint32_t Version;
  std::string What; ///< the record being read, for the message

  template <typename E> bool enumField(E &Out, uint8_t Limit) {
    uint8_t V = 0;
    if (!R.u8(V))
      return false;
    if (V >= Limit)
      return R.Ok = false;
    Out = static_cast<E>(V);
    return true;
  }
  bool kernel(BundleKernel &K, size_t NumVariables);
  bool coRun(std::vector<BundleKernel> &Kernels);
  std::string error() const {
    return What + " at payload offset " + std::to_string(R.offset());
  }
};

bool PayloadDecoder::kernel(BundleKernel &K, size_t NumVariables) {
  R.str(K.Name);
  R.str(K.DisplayName);
  enumField(K.Language, 2);
  if (R.Ok && K.Name.empty())
    return R.Ok = false;

  uint32_t N = 0;
  R.count(N, 11);
  K.Params.resize(R.Ok ? N : 0);
  for (BundleParam &P : K.Params) {
    uint8_t Flags = 0;
    enumField(P.Kind, 3);
    enumField(P.Role, uint8_t(NumParamRoles));
    R.u8(Flags);
    R.u32(P.Size);
    R.u32(P.Align);
    P.RoleIsGuess = Flags & fmt::ParamRoleIsGuess;
  }

  uint8_t Verdict = 0;
  R.u8(Verdict);
  K.CanSplit = Verdict & fmt::KernelCanSplit;
  K.CanRunOnCPU = Verdict & fmt::KernelCanRunOnCPU;
  R.count(N, 13);
  K.Issues.resize(R.Ok ? N : 0);
  for (BundleIssue &I : K.Issues) {
    uint8_t Flags = 0;
    R.str(I.Kind);
    R.str(I.Detail);
    R.str(I.Location);
    R.u8(Flags);
    I.ForbidsSplit = Flags & fmt::IssueForbidsSplit;
    I.ForbidsCPU = Flags & fmt::IssueForbidsCPU;
  }

  // Exactly one record per variant kind, in kind order.
  R.count(N, 18);
  if (R.Ok && N != NumVariantKinds)
    return R.Ok = false;
  for (unsigned V = 0; R.Ok && V < NumVariantKinds; ++V) {
    BundleVariant &Var = K.Variants[V];
    uint8_t Kind = 0, Present = 0;
    R.u8(Kind);
    R.u8(Present);
    if (R.Ok && (Kind != V || Present > 1))
      return R.Ok = false;
    Var.Present = Present;
    R.str(Var.Entry);
    R.str(Var.Reason);
    R.str(Var.Location);
    R.str(Var.CpuDescriptor);
    if (R.Ok && Var.Present == Var.Entry.empty())
      return R.Ok = false; // present <=> named
  }
  if (R.Ok && !K.Variants[0].Present)
    return R.Ok = false; // the original always exists
  const BundleVariant &Cpu = K.variant(VariantKind::CPU);
  if (R.Ok && Cpu.Present && Cpu.CpuDescriptor.empty())
    return R.Ok = false; // a CPU variant is reached through its descriptor
  R.str(K.SwappedTwin);
  R.str(K.Inspector);
  R.str(K.Reorganized);
  if (R.Ok && K.Inspector.empty() != K.Reorganized.empty())
    return R.Ok = false; // made together (docs/reorganize.md)
  R.str(K.InspectorCpu);
  R.str(K.ReorganizedCpu);
  if (R.Ok && (K.InspectorCpu.empty() != K.ReorganizedCpu.empty() ||
               (K.Inspector.empty() && !K.InspectorCpu.empty())))
    return R.Ok = false; // both or neither, and only with the GPU variants

  R.count(N, 4);
  K.MergeOutputs.resize(R.Ok ? N : 0);
  for (uint32_t &O : K.MergeOutputs)
    if (R.u32(O) && O >= K.Params.size())
      return R.Ok = false;

  R.count(N, 6);
  K.Combined.resize(R.Ok ? N : 0);
  for (BundleCombined &C : K.Combined) {
    uint8_t Op = 0, Bytes = 0;
    R.u32(C.Arg);
    R.u8(Op);
    R.u8(Bytes);
    if (R.Ok && (C.Arg >= K.Params.size() ||
                 K.Params[C.Arg].Kind != ParamKind::Pointer ||
                 Op >= fmt::NumCombineOps || (Bytes != 4 && Bytes != 8)))
      return R.Ok = false;
    C.Op = CombineOp(Op);
    C.Bytes = Bytes;
  }

  R.blob(K.Footprints);
  R.u64(K.StaticSharedBytes);

  R.count(N, 5);
  K.Variables.resize(R.Ok ? N : 0);
  for (BundleVariableUse &U : K.Variables) {
    uint8_t Flags = 0;
    if (R.u32(U.Variable) && U.Variable >= NumVariables)
      return R.Ok = false;
    R.u8(Flags);
    U.Read = Flags & fmt::VariableRead;
    U.Written = Flags & fmt::VariableWritten;
  }
  return R.Ok;
}

bool PayloadDecoder::coRun(std::vector<BundleKernel> &Kernels) {
  uint32_t N = 0;
  if (!R.count(N, 1))
    return false;
  if (N != Kernels.size())
    return R.Ok = false;
  for (BundleKernel &K : Kernels) {
    uint8_t Present = 0;
    if (!R.u8(Present) || Present > 1)
      return R.Ok = false;
    if (!Present)
      continue;
    uint32_t Classes = 0;
    if (!R.u32(Classes) || Classes != NumInstrClasses)
      return R.Ok = false;
    BundleCoRun C;
    for (double &V : C.PerThread)
      if (!R.f64(V) || V < 0)
        return R.Ok = false;
    // A request moves at most 32 lanes of 16 bytes: 512 bytes, 16 sectors
    // when coalesced, 32 when not; a bound, not a check of the estimate.
    if (!R.f64(C.BytesPerLane) || !R.f64(C.SectorsPerRequest) ||
        C.BytesPerLane < 0 || C.BytesPerLane > 1024 ||
        C.SectorsPerRequest < 0 || C.SectorsPerRequest > 1024)
      return R.Ok = false;
    K.CoRun = C;
  }
  return true;
}

std::string PayloadDecoder::run(Bundle &B) {
  What = "header strings";
  R.str(B.Producer);
  R.str(B.Source);

  uint32_t N = 0;
  What = "image table";
  R.count(N, 13);
  B.Images.resize(R.Ok ? N : 0);
  for (BundleImage &I : B.Images) {
    enumField(I.Kind, 2);
    R.str(I.Arch);
    R.blob(I.Data);
  }
  if (!R.Ok)
    return error();

  What = "variable table";
  R.count(N, 14);
  B.Variables.resize(R.Ok ? N : 0);
  for (BundleVariable &V : B.Variables) {
    R.str(V.Name);
    enumField(V.Space, 2);
    R.u64(V.Size);
    R.str(V.CpuSymbol);
  }
  if (!R.Ok)
    return error();

  R.count(N, 1);
  B.Kernels.resize(R.Ok ? N : 0);
  for (size_t I = 0; I < B.Kernels.size(); ++I) {
    What = "kernel " + std::to_string(I);
    if (!kernel(B.Kernels[I], B.Variables.size()))
      return error();
  }
  What = "co-run table";
  if (R.Ok && Version >= fmt::CoRunTableVersion && !coRun(B.Kernels))
    return error();
  What = "end of payload";
  if (!R.Ok)
    return error();
  for (const BundleKernel &K : B.Kernels)
    if (!K.SwappedTwin.empty() &&
        (K.SwappedTwin == K.Name || !B.findKernel(K.SwappedTwin)))
      return "kernel " + K.Name + " names a swapped twin '" + K.SwappedTwin +
             "' that is no other kernel of the bundle";
  if (R.remaining() != 0)
    return std::to_string(R.remaining()) + " unexpected trailing byte(s)";
  return {};
}

std::string line(std::string S) { return S + "\n"; }

/// Two decimals: the co-run estimates, stable for tests.
std::string fixed(double V) {
  char Buf[48];
  std::snprintf(Buf, sizeof(Buf), "%.2f", V);
  return Buf;
}

} // namespace

BundleStatus Bundle::parse(const void *Data, size_t Size, Bundle &Out) {
  Out = Bundle();
  const auto *P = static_cast<const unsigned char *>(Data);
  if (!P && Size)
    return fail(BundleErrc::NotBundle, "no data");
  if (Size < fmt::HeaderSize || std::memcmp(P, fmt::Magic, 8) != 0)
    return fail(BundleErrc::NotBundle,
                "not a Cleave kernel bundle (no CLVBNDL header)");
  fmt::ByteReader H(P + fmt::VersionOffset,
                    fmt::HeaderSize - fmt::VersionOffset);
  uint32_t Version = 0, Flags = 0;
  uint64_t PayloadSize = 0, Checksum = 0;
  H.u32(Version);
  H.u32(Flags);
  H.u64(PayloadSize);
  H.u64(Checksum);
  if (Version < fmt::MinFormatVersion || Version > fmt::FormatVersion)
    return fail(BundleErrc::Version,
                "format version " + std::to_string(Version) +
                    ", but this runtime reads versions " +
                    std::to_string(fmt::MinFormatVersion) + " to " +
                    std::to_string(fmt::FormatVersion) +
                    " only: rebuild the program with the matching cleave");
  if (Flags != 0)
    return fail(BundleErrc::Version,
                "unknown header flags " + std::to_string(Flags));
  if (PayloadSize > Size - fmt::HeaderSize)
    return fail(BundleErrc::Truncated,
                "truncated: the header announces " +
                    std::to_string(PayloadSize) + " payload bytes, " +
                    std::to_string(Size - fmt::HeaderSize) + " present");
  if (PayloadSize < Size - fmt::HeaderSize)
    return fail(BundleErrc::Malformed,
                std::to_string(Size - fmt::HeaderSize - PayloadSize) +
                    " byte(s) after the payload");
  const unsigned char *Payload = P + fmt::HeaderSize;
  if (fmt::bundleChecksum(P, Payload, PayloadSize) != Checksum)
    return fail(BundleErrc::Checksum,
                "checksum mismatch: the bundle is corrupt");

  Bundle B;
  std::string Err = PayloadDecoder(Payload, PayloadSize, Version).run(B);
  if (!Err.empty())
    return fail(BundleErrc::Malformed, "bad " + Err);
  B.Version = Version;
  Out = std::move(B);
  return {};
}

BundleStatus Bundle::load(const char *Path, Bundle &Out) {
  Out = Bundle();
  std::string Name = Path ? Path : "(null)";
  FILE *F = Path ? std::fopen(Path, "rb") : nullptr;
  if (!F)
    return {BundleErrc::Io, "cannot open kernel bundle '" + Name + "': " +
                                std::strerror(errno)};
  std::string Bytes;
  char Buf[1 << 16];
  size_t Got;
  while ((Got = std::fread(Buf, 1, sizeof Buf, F)) > 0)
    Bytes.append(Buf, Got);
  bool Failed = std::ferror(F);
  std::fclose(F);
  if (Failed)
    return {BundleErrc::Io, "cannot read kernel bundle '" + Name + "'"};
  BundleStatus S = parse(Bytes.data(), Bytes.size(), Out);
  if (!S)
    S.Message = Name + ": " + S.Message;
  return S;
}

const BundleKernel *Bundle::findKernel(std::string_view Name) const {
  for (const BundleKernel &K : Kernels)
    if (K.Name == Name)
      return &K;
  return nullptr;
}

const BundleImage *Bundle::findImage(ImageKind Kind,
                                     std::string_view Arch) const {
  for (const BundleImage &I : Images)
    if (I.Kind == Kind && I.Arch == Arch)
      return &I;
  return nullptr;
}

std::string Bundle::describe() const {
  static const char *Kinds[] = {"scalar", "pointer", "byval"};
  std::string S;
  S += line("bundle version " + std::to_string(Version));
  S += line("producer: " + Producer);
  S += line("source: " + Source);
  for (const BundleImage &I : Images)
    S += line(std::string("image ") +
              (I.Kind == ImageKind::PTX ? "ptx" : "cubin") + " " + I.Arch +
              " " + std::to_string(I.Data.size()) + " bytes");
  for (const BundleVariable &V : Variables)
    S += line("variable " + V.Name + " " +
              (V.Space == VariableSpace::Global ? "global" : "constant") +
              " " + std::to_string(V.Size) + " bytes cpu " +
              (V.CpuSymbol.empty() ? "none" : V.CpuSymbol));
  for (const BundleKernel &K : Kernels) {
    S += line("kernel " + K.Name);
    S += line("  display: " + K.DisplayName);
    S += line(std::string("  language: ") +
              (K.Language == SourceLanguage::CUDA ? "cuda" : "opencl"));
    for (size_t I = 0; I < K.Params.size(); ++I) {
      const BundleParam &P = K.Params[I];
      S += line("  param " + std::to_string(I) + " " +
                Kinds[unsigned(P.Kind)] + " size " + std::to_string(P.Size) +
                " align " + std::to_string(P.Align) + " " +
                getParamRoleName(P.Role) + (P.RoleIsGuess ? " (escapes)" : ""));
    }
    S += line(std::string("  split: ") + (K.CanSplit ? "yes" : "no"));
    S += line(std::string("  cpu: ") + (K.CanRunOnCPU ? "yes" : "no"));
    for (const BundleIssue &I : K.Issues) {
      std::string Forbids =
          I.ForbidsSplit && I.ForbidsCPU
              ? "split, cpu"
              : (I.ForbidsSplit ? "split" : (I.ForbidsCPU ? "cpu" : "none"));
      S += line("  issue: " + I.Kind + " (forbids " + Forbids + ")" +
                (I.Detail.empty() ? "" : " '" + I.Detail + "'") +
                (I.Location.empty() ? "" : " at " + I.Location));
    }
    for (unsigned V = 0; V < NumVariantKinds; ++V) {
      const BundleVariant &Var = K.Variants[V];
      std::string Name = getVariantKindName(VariantKind(V));
      if (Var.Present)
        S += line("  variant " + Name + ": " + Var.Entry +
                  (Var.CpuDescriptor.empty()
                       ? ""
                       : " (cpu descriptor " + Var.CpuDescriptor + ")"));
      else
        S += line("  variant " + Name + ": none: " + Var.Reason +
                  (Var.Location.empty() ? "" : " [" + Var.Location + "]"));
    }
    if (!K.SwappedTwin.empty())
      S += line("  swapped twin: " + K.SwappedTwin);
    if (!K.Inspector.empty())
      S += line("  reorganize: inspector " + K.Inspector + ", reorganized " +
                K.Reorganized +
                (K.InspectorCpu.empty()
                     ? std::string(", no cpu descriptors")
                     : " (cpu descriptors " + K.InspectorCpu + ", " +
                           K.ReorganizedCpu + ")"));
    if (!K.MergeOutputs.empty()) {
      std::string L = "  merge outputs:";
      for (uint32_t O : K.MergeOutputs)
        L += " " + std::to_string(O);
      S += line(L);
    }
    for (const BundleCombined &C : K.Combined)
      S += line("  combined: arg " + std::to_string(C.Arg) + " " +
                getCombineOpName(C.Op) + " i" + std::to_string(C.Bytes * 8));
    S += line("  static shared: " + std::to_string(K.StaticSharedBytes));
    for (const BundleVariableUse &U : K.Variables)
      S += line("  uses variable " + Variables[U.Variable].Name +
                (U.Read ? " read" : "") + (U.Written ? " written" : ""));
    if (K.CoRun) {
      std::string L = "  co-run inputs per thread:";
      for (unsigned C = 0; C < NumInstrClasses; ++C)
        if (K.CoRun->PerThread[C] > 0)
          L += " " + std::string(instrClassName(InstrClass(C))) + " " +
               fixed(K.CoRun->PerThread[C]);
      L += "; " + fixed(K.CoRun->BytesPerLane) + " bytes per lane, " +
           fixed(K.CoRun->SectorsPerRequest) + " sectors per request";
      S += line(L);
    }
    S += line("  footprints:");
    // Indented, one line per line of the footprint text.
    size_t Pos = 0;
    while (Pos < K.Footprints.size()) {
      size_t End = K.Footprints.find('\n', Pos);
      if (End == std::string::npos)
        End = K.Footprints.size();
      S += line("    " + K.Footprints.substr(Pos, End - Pos));
      Pos = End + 1;
    }
  }
  return S;
}

} // namespace rt
} // namespace cleave
