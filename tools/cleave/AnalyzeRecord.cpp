//===- AnalyzeRecord.cpp - The recorder's output and saved records ----------===//
//
// Part of Cleave's driver (docs/analyze.md).
//
//===----------------------------------------------------------------------===//
#include "AnalyzeData.h"

#include "cleave/Analysis/InstructionMix.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cassert>
#include <cmath>
#include <limits>
#include <unordered_map>

using namespace llvm;

namespace cleave {
namespace analyze {

/// The recorder's output file, as text.
Expected<std::string> readRecordFile(StringRef Path) {
  auto Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return makeError("the program wrote no instrumentation record ('" + Path +
                     "': " + Buf.getError().message() +
                     "): did it exit through exit() or return from main?");
  return (*Buf)->getBuffer().str();
}

//===----------------------------------------------------------------------===//
// Saved records (--save-record, --from-record)
//===----------------------------------------------------------------------===//
//
// One text file: what the build found (each module's sites, each kernel's
// resources and display name), which program and arguments it was, and the
// recorder's output verbatim:
//
//   cleave-analyze-record 1
//   input <name> <xxh3 of its bytes, hex>        one per input file
//   arg <argument>                               one per program argument
//   sample-blocks <N>
//   sm-count <N>                 the SM count the program was told
//   module <index> <kernels> <blocks> <mems>
//   kernel <symbol>                              <kernels> lines
//   block <id> <function> <name> <class>...      <blocks> lines
//   mem <id> <block id> <class> <bytes> <location>   <mems> lines
//   code <site id> <class>:<producers> ...   (A.Code: per instruction its
//        class and '-' or the comma-separated <site id>.<index> it uses)
//   resources <symbol> <registers> <static shared> <from>
//   display <symbol> <demangled name>
//   record <lines>
//   <the recorder's output: <lines> lines>
//
// Strings are percent-encoded (bytes <= ' ', '%' and >= 0x7f as %XX; the
// empty string as %-), so every field is one blank-free word.

constexpr const char *SavedRecordMagic = "cleave-analyze-record";
constexpr unsigned SavedRecordVersion = 1;

std::string encodeWord(StringRef S) {
  if (S.empty())
    return "%-";
  std::string Out;
  for (unsigned char C : S) {
    if (C <= ' ' || C == '%' || C >= 0x7f)
      Out += formatv("%{0:X-2}", unsigned(C)).str();
    else
      Out += char(C);
  }
  return Out;
}

bool decodeWord(StringRef W, std::string &Out) {
  Out.clear();
  if (W == "%-")
    return true;
  for (size_t I = 0; I < W.size(); ++I) {
    if (W[I] != '%') {
      Out += W[I];
      continue;
    }
    unsigned V;
    if (I + 2 >= W.size() || W.substr(I + 1, 2).getAsInteger(16, V))
      return false;
    Out += char(V);
    I += 2;
  }
  return true;
}

/// The identity of an input: its file name and a hash of its bytes.
Expected<std::pair<std::string, std::string>> inputIdentity(StringRef In) {
  auto Buf = MemoryBuffer::getFile(In);
  if (!Buf)
    return makeError("cannot read '" + In + "': " + Buf.getError().message());
  ArrayRef<uint8_t> Bytes(
      reinterpret_cast<const uint8_t *>((*Buf)->getBufferStart()),
      (*Buf)->getBufferSize());
  return std::pair(sys::path::filename(In).str(),
                   formatv("{0:x-16}", xxh3_64bits(Bytes)).str());
}


Error writeSavedRecord(StringRef Path, const Analysis &A,
                       const SavedRecord &R) {
  std::error_code EC;
  raw_fd_ostream OS(Path, EC, sys::fs::OF_Text);
  if (EC)
    return makeError("cannot write the record '" + Path +
                     "': " + EC.message());
  OS << SavedRecordMagic << " " << SavedRecordVersion << "\n";
  for (auto &[Name, Hash] : R.Inputs)
    OS << "input " << encodeWord(Name) << " " << Hash << "\n";
  for (const std::string &Arg : R.Args)
    OS << "arg " << encodeWord(Arg) << "\n";
  OS << "sample-blocks " << R.SampleBlocks << "\n";
  OS << "sm-count " << R.SmCount << "\n";
  for (const InstrumentInfo &I : A.Sites) {
    OS << "module " << I.ModuleIndex << " " << I.Kernels.size() << " "
       << I.Blocks.size() << " " << I.Mems.size() << "\n";
    for (const std::string &K : I.Kernels)
      OS << "kernel " << encodeWord(K) << "\n";
    for (const BlockSite &B : I.Blocks) {
      OS << "block " << B.Id << " " << encodeWord(B.Function) << " "
         << encodeWord(B.Name);
      for (InstrClass C : B.Sequence)
        OS << " " << instrClassName(C);
      OS << "\n";
    }
    for (const MemSite &M : I.Mems)
      OS << "mem " << M.Id << " " << M.Block << " " << instrClassName(M.Class)
         << " " << M.Bytes << " " << encodeWord(M.Location) << "\n";
  }
  for (auto &[Id, Code] : A.Code) {
    OS << "code " << Id;
    for (size_t I = 0; I < Code.Sequence.size(); ++I) {
      OS << " " << instrClassName(Code.Sequence[I]) << ":";
      const std::vector<EntryRef> &E = Code.Deps[I];
      if (E.empty())
        OS << "-";
      for (size_t J = 0; J < E.size(); ++J)
        OS << (J ? "," : "") << (E[J] >> 32) << "." << (E[J] & 0xffffffff);
    }
    OS << "\n";
  }
  for (auto &[K, Res] : A.Res)
    OS << "resources " << encodeWord(K) << " " << Res.Registers << " "
       << Res.StaticShared << " " << encodeWord(Res.From) << "\n";
  for (auto &[K, D] : A.Display)
    OS << "display " << encodeWord(K) << " " << encodeWord(D) << "\n";
  StringRef Rec(R.Record);
  size_t Lines = Rec.count('\n') + (!Rec.empty() && !Rec.ends_with("\n"));
  OS << "record " << Lines << "\n" << Rec;
  if (!Rec.empty() && !Rec.ends_with("\n"))
    OS << "\n";
  OS.close();
  if (OS.has_error())
    return makeError("cannot write the record '" + Path +
                     "': " + OS.error().message());
  return Error::success();
}

std::optional<InstrClass> instrClassByName(StringRef Name) {
  return lookupInstrClass(std::string_view(Name));
}

/// The entries of a `code` line (F[0] "code", F[1] the site) into \p Code;
/// why the line is malformed, or empty.
std::string parseCodeLine(ArrayRef<StringRef> F, SiteCode &Code) {
  for (size_t I = 2; I < F.size(); ++I) {
    auto [Class, Refs] = F[I].split(':');
    std::optional<InstrClass> C = instrClassByName(Class);
    if (!C)
      return ("unknown instruction class '" + Class + "'").str();
    Code.Sequence.push_back(*C);
    Code.Deps.emplace_back();
    if (Refs == "-")
      continue;
    SmallVector<StringRef, 4> List;
    Refs.split(List, ',');
    for (StringRef Ref : List) {
      auto [Site, Index] = Ref.split('.');
      uint64_t S, X;
      if (Site.getAsInteger(10, S) || Index.getAsInteger(10, X))
        return ("producer '" + Ref + "' is not <site>.<index>").str();
      Code.Deps.back().push_back((S << 32) | X);
    }
  }
  return "";
}

Expected<SavedRecord> readSavedRecord(StringRef Path, Analysis &A) {
  auto Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return makeError("cannot read the record '" + Path +
                     "': " + Buf.getError().message());
  StringRef Text = (*Buf)->getBuffer();
  SmallVector<StringRef, 0> Lines;
  Text.split(Lines, '\n');
  SmallVector<StringRef, 4> Head;
  if (!Lines.empty())
    Lines[0].split(Head, ' ', -1, false);
  if (Head.size() != 2 || Head[0] != SavedRecordMagic)
    return makeError("'" + Path + "' is not a record of `cleave analyze "
                     "--save-record` (it starts with '" +
                     (Lines.empty() ? StringRef() : Lines[0].take_front(40)) +
                     "')");
  if (Head[1] != std::to_string(SavedRecordVersion))
    return makeError("the record '" + Path + "' has format version " +
                     Head[1] + "; this cleave reads version " +
                     Twine(SavedRecordVersion) +
                     ": make it again with --save-record");
  SavedRecord R;
  auto Bad = [&](size_t N, const Twine &Why) {
    return makeError("malformed record '" + Path + "' at line " +
                     Twine(N + 1) + " (" + Why + "): " +
                     Lines[N].take_front(120));
  };
  InstrumentInfo *Cur = nullptr;
  for (size_t N = 1; N < Lines.size(); ++N) {
    SmallVector<StringRef, 32> F;
    Lines[N].split(F, ' ', -1, false);
    if (F.empty())
      continue;
    auto U = [&](size_t I, uint64_t &V) {
      return I < F.size() && !F[I].getAsInteger(0, V);
    };
    auto W = [&](size_t I, std::string &V) {
      return I < F.size() && decodeWord(F[I], V);
    };
    uint64_t V[4];
    std::string S[2];
    if (F[0] == "input") {
      if (F.size() != 3 || !W(1, S[0]))
        return Bad(N, "input <name> <hash>");
      R.Inputs.push_back({S[0], F[2].str()});
    } else if (F[0] == "arg") {
      if (F.size() != 2 || !W(1, S[0]))
        return Bad(N, "arg <argument>");
      R.Args.push_back(S[0]);
    } else if (F[0] == "sample-blocks") {
      if (F.size() != 2 || !U(1, V[0]))
        return Bad(N, "sample-blocks <N>");
      R.SampleBlocks = unsigned(V[0]);
    } else if (F[0] == "sm-count") {
      if (F.size() != 2 || !U(1, V[0]))
        return Bad(N, "sm-count <N>");
      R.SmCount = unsigned(V[0]);
    } else if (F[0] == "module") {
      if (F.size() != 5 || !U(1, V[0]) || !U(2, V[1]) || !U(3, V[2]) ||
          !U(4, V[3]))
        return Bad(N, "module <index> <kernels> <blocks> <mems>");
      A.Sites.emplace_back();
      Cur = &A.Sites.back();
      Cur->ModuleIndex = uint32_t(V[0]);
    } else if (F[0] == "kernel") {
      if (!Cur || F.size() != 2 || !W(1, S[0]))
        return Bad(N, "kernel <symbol> after a module line");
      Cur->Kernels.push_back(S[0]);
    } else if (F[0] == "block") {
      BlockSite B;
      if (!Cur || F.size() < 4 || !U(1, V[0]) || !W(2, B.Function) ||
          !W(3, B.Name))
        return Bad(N, "block <id> <function> <name> <class>...");
      B.Id = uint32_t(V[0]);
      for (size_t I = 4; I < F.size(); ++I) {
        std::optional<InstrClass> C = instrClassByName(F[I]);
        if (!C)
          return Bad(N, "unknown instruction class '" + F[I] + "'");
        B.Sequence.push_back(*C);
        ++B.Counts[unsigned(*C)];
      }
      if (Cur->block(B.Id) || (B.Id & 0xfffff) != Cur->Blocks.size())
        return Bad(N, "block ids out of order");
      Cur->Blocks.push_back(std::move(B));
    } else if (F[0] == "mem") {
      MemSite M;
      std::optional<InstrClass> C =
          F.size() == 6 ? instrClassByName(F[3]) : std::nullopt;
      if (!Cur || !C || !U(1, V[0]) || !U(2, V[1]) || !U(4, V[2]) ||
          !W(5, M.Location))
        return Bad(N, "mem <id> <block> <class> <bytes> <location>");
      M.Id = uint32_t(V[0]);
      M.Block = uint32_t(V[1]);
      M.Class = *C;
      M.Bytes = uint32_t(V[2]);
      if ((M.Id & 0xfffff) != Cur->Mems.size())
        return Bad(N, "mem ids out of order");
      Cur->Mems.push_back(std::move(M));
    } else if (F[0] == "code") {
      if (F.size() < 2 || !U(1, V[0]))
        return Bad(N, "code <site> <class>:<producers>...");
      if (std::string Why = parseCodeLine(F, A.Code[uint32_t(V[0])]);
          !Why.empty())
        return Bad(N, Why);
    } else if (F[0] == "resources") {
      Resources Res;
      if (F.size() != 5 || !W(1, S[0]) || !U(2, V[0]) || !U(3, V[1]) ||
          !W(4, Res.From))
        return Bad(N, "resources <symbol> <registers> <shared> <from>");
      Res.Registers = unsigned(V[0]);
      Res.StaticShared = V[1];
      A.Res[S[0]] = Res;
    } else if (F[0] == "display") {
      if (F.size() != 3 || !W(1, S[0]) || !W(2, S[1]))
        return Bad(N, "display <symbol> <name>");
      A.Display[S[0]] = S[1];
    } else if (F[0] == "record") {
      if (F.size() != 2 || !U(1, V[0]) || N + 1 + V[0] > Lines.size())
        return Bad(N, "record <lines>, then that many lines");
      for (size_t I = N + 1; I < N + 1 + V[0]; ++I)
        (R.Record += Lines[I].str()) += "\n";
      N += V[0];
      for (size_t I = N + 1; I < Lines.size(); ++I)
        if (!Lines[I].trim().empty())
          return Bad(I, "text after the record");
      if (A.Sites.empty())
        return makeError("the record '" + Path + "' has no kernel sites");
      return R;
    } else {
      return Bad(N, "unknown line");
    }
  }
  return makeError("the record '" + Path +
                   "' ends before its instrumentation record (cut short?)");
}

/// A record made from other inputs or arguments than the command line's is
/// refused (when the command line names inputs at all).
Error checkSameProgram(StringRef Path, const SavedRecord &R,
                       ArrayRef<std::string> Inputs,
                       ArrayRef<std::string> Args) {
  auto Describe = [](ArrayRef<std::pair<std::string, std::string>> In,
                     ArrayRef<std::string> A) {
    std::string S;
    for (auto &[Name, Hash] : In)
      S += (S.empty() ? "" : " ") + Name;
    S += " --";
    for (const std::string &X : A)
      S += " " + X;
    return S;
  };
  std::vector<std::pair<std::string, std::string>> Mine;
  for (const std::string &In : Inputs) {
    auto Id = inputIdentity(In);
    if (!Id)
      return Id.takeError();
    Mine.push_back(*Id);
  }
  std::vector<std::string> MyArgs(Args.begin(), Args.end());
  if (Mine.size() != R.Inputs.size() || MyArgs != R.Args)
    return makeError("the record '" + Path + "' was made from `" +
                     Describe(R.Inputs, R.Args) + "`, not from `" +
                     Describe(Mine, MyArgs) +
                     "`: name the same inputs and arguments, or none");
  for (size_t I = 0; I < Mine.size(); ++I)
    if (Mine[I] != R.Inputs[I])
      return makeError(
          "the record '" + Path + "' was made from another version of " +
          R.Inputs[I].first + " (" +
          (Mine[I].first == R.Inputs[I].first ? "its contents changed"
                                              : "another file: " +
                                                    Mine[I].first) +
          "): make it again with --save-record");
  return Error::success();
}


} // namespace analyze
} // namespace cleave
