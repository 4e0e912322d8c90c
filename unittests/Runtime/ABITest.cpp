//===- ABITest.cpp - The facts both layers share keep their values -------===//
//
// Part of Cleave. include/cleave/ABI/ defines each fact the compiler and the
// runtime share once; these checks pin what is stored in files (bundles,
// records) so that a change on the shared definition that would misread
// files of the current format version fails here, at compile time where it
// can, and tie the runtime's own types to the shared counts.
//
//===----------------------------------------------------------------------===//
#include "cleave/ABI/BundleCodes.h"
#include "cleave/ABI/BundleFormat.h"
#include "cleave/ABI/CombineOp.h"
#include "cleave/ABI/FootprintClass.h"
#include "cleave/ABI/FormatVersions.h"
#include "cleave/ABI/InstrClass.h"
#include "cleave/ABI/ParamRole.h"
#include "cleave/ABI/PartitionABI.h"
#include "cleave/rt/Bundle.h"
#include "cleave/rt/Footprint.h"
#include "cleave/rt/HopperModel.h"
#include "cleave/rt/PartitionParams.h"

#include "gtest/gtest.h"

#include <cstring>
#include <string_view>

namespace {

using namespace cleave;

// The runtime's names are the shared types, not copies of them.
static_assert(std::is_same_v<rt::ParamRole, ParamRole>);
static_assert(std::is_same_v<rt::CombineOp, CombineOp>);
static_assert(std::is_same_v<rt::FootprintClass, FootprintClass>);
static_assert(std::is_same_v<bundle::ParamRole, ParamRole>);
static_assert(std::is_same_v<bundle::CombineOp, CombineOp>);
static_assert(std::is_same_v<rt::ParamKind, bundle::ParamKind>);
static_assert(std::is_same_v<rt::VariantKind, bundle::VariantKind>);
static_assert(std::is_same_v<rt::SourceLanguage, bundle::SourceLanguage>);
static_assert(std::is_same_v<rt::ImageKind, bundle::ImageKind>);
static_assert(std::is_same_v<rt::VariableSpace, bundle::VariableSpace>);
static_assert(std::tuple_size_v<rt::model::ClassArray> == NumInstrClasses);

// Bundles store these numbers: changing one needs a new
// bundle::FormatVersion (and these lines changed with it).
static_assert(bundle::FormatVersion == 6);
static_assert(bundle::MinFormatVersion == 5);
static_assert(bundle::CoRunTableVersion == 6);
static_assert(uint8_t(ParamRole::NotPointer) == 0 &&
              uint8_t(ParamRole::Unused) == 1 &&
              uint8_t(ParamRole::Read) == 2 && uint8_t(ParamRole::Write) == 3 &&
              uint8_t(ParamRole::ReadWrite) == 4 && NumParamRoles == 5);
static_assert(uint8_t(bundle::SourceLanguage::CUDA) == 0 &&
              uint8_t(bundle::SourceLanguage::OpenCL) == 1);
static_assert(uint8_t(bundle::ParamKind::Scalar) == 0 &&
              uint8_t(bundle::ParamKind::Pointer) == 1 &&
              uint8_t(bundle::ParamKind::ByValue) == 2);
static_assert(uint8_t(bundle::VariantKind::Original) == 0 &&
              uint8_t(bundle::VariantKind::Partition) == 1 &&
              uint8_t(bundle::VariantKind::Merge) == 2 &&
              uint8_t(bundle::VariantKind::CPU) == 3 &&
              bundle::NumVariantKinds == 4);
static_assert(uint8_t(bundle::ImageKind::PTX) == 0 &&
              uint8_t(bundle::ImageKind::Cubin) == 1);
static_assert(uint8_t(bundle::VariableSpace::Global) == 0 &&
              uint8_t(bundle::VariableSpace::Constant) == 1);
static_assert(std::string_view(bundle::getVariantKindName(
                  bundle::VariantKind::CPU)) == "cpu");
static_assert(uint8_t(CombineOp::Add) == 0 && uint8_t(CombineOp::And) == 1 &&
              uint8_t(CombineOp::Or) == 2 && uint8_t(CombineOp::Xor) == 3 &&
              uint8_t(CombineOp::UMin) == 4 && uint8_t(CombineOp::UMax) == 5 &&
              NumCombineOps == 6);

// The partition-ready clone's parameters: the compiler appends them in this
// order, the runtime fills them in this order.
static_assert(NumPartitionParams == 12);
static_assert(pp::FirstX == 0 && pp::GridX == 3 && pp::MagicX == 6 &&
              pp::MagicY == 9 && pp::IncY == 11);

// Every count matches its names table, and names are found back.
constexpr bool classNamesRoundTrip() {
  for (unsigned I = 0; I < NumInstrClasses; ++I) {
    std::optional<InstrClass> C = lookupInstrClass(InstrClassNames[I]);
    if (!C || unsigned(*C) != I)
      return false;
  }
  return !lookupInstrClass("fp16") && !lookupInstrClass("");
}
static_assert(classNamesRoundTrip());
static_assert(std::string_view(instrClassName(InstrClass::Other)) == "other");
static_assert(std::string_view(instrClassName(InstrClass(NumInstrClasses))) ==
              "?");
static_assert(std::string_view(getParamRoleName(ParamRole::ReadWrite)) ==
              "read-write");
static_assert(std::string_view(getParamRoleName(ParamRole(NumParamRoles))) ==
              "?");
static_assert(std::string_view(getCombineOpName(CombineOp::UMax)) == "umax");
static_assert(std::string_view(
                  getFootprintClassName(FootprintClass::Unknown)) == "unknown");

TEST(ABITest, AParameterMayBeWrittenWhenItsRoleSaysSoOrIsAGuess) {
  // The engine's write sets and the direct launches' invalidation both ask
  // BundleParam::mayWrite: an escaping pointer's role is only a guess.
  rt::BundleParam P;
  P.Kind = rt::ParamKind::Pointer;
  for (rt::ParamRole R : {rt::ParamRole::Write, rt::ParamRole::ReadWrite}) {
    P.Role = R;
    EXPECT_TRUE(P.mayWrite());
  }
  for (rt::ParamRole R : {rt::ParamRole::Read, rt::ParamRole::Unused}) {
    P.Role = R;
    P.RoleIsGuess = false;
    EXPECT_FALSE(P.mayWrite());
    P.RoleIsGuess = true;
    EXPECT_TRUE(P.mayWrite());
  }
}

TEST(ABITest, MemoryClassesAreGlobalAndLocal) {
  unsigned N = 0;
  for (unsigned I = 0; I < NumInstrClasses; ++I)
    N += isMemoryClass(InstrClass(I));
  EXPECT_EQ(N, 4u);
  EXPECT_TRUE(isMemoryClass(InstrClass::GlobalLoad));
  EXPECT_TRUE(isMemoryClass(InstrClass::Local));
  EXPECT_FALSE(isMemoryClass(InstrClass::SharedLoad));
}

TEST(ABITest, FootprintTextCarriesTheSharedVersion) {
  // The evaluator refuses a footprint text of another version, naming its
  // own.
  rt::FootprintProgram P;
  rt::Status S = rt::FootprintProgram::parse(
      std::string(FootprintMagic) + " " +
          std::to_string(FootprintFormatVersion + 1) + "\n",
      P);
  EXPECT_FALSE(S);
  EXPECT_NE(S.Message.find("unsupported version"), std::string::npos)
      << S.Message;
}

} // namespace
