//===- DeviceObject.cpp - One translation unit's device code as an object -===//
//
// Part of Cleave. Builds, inside the CPU module, what cleave_rt.h's
// cleave_register_module expects, and emits the module with the host object
// emitter.
//
//===----------------------------------------------------------------------===//
#include "cleave/CodeGen/DeviceObject.h"

#include "cleave/CodeGen/HostObjectEmitter.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

using namespace llvm;

namespace cleave {

static constexpr StringRef CpuSymbolPrefix = "__cleave_cpu_";
static constexpr StringRef RegisterModule = "cleave_register_module";

Error addModuleRegistration(Module &M, StringRef Bundle,
                            const DeviceObjectOptions &Opts) {
  if (M.getNamedValue("__cleave_module"))
    return createStringError(inconvertibleErrorCode(),
                             "device object: module '%s' already has a "
                             "registration",
                             M.getModuleIdentifier().c_str());
  LLVMContext &Ctx = M.getContext();
  Type *Ptr = PointerType::get(Ctx, 0);
  Type *I32 = Type::getInt32Ty(Ctx), *I64 = Type::getInt64Ty(Ctx);

  // The symbols the bundle names (descriptors, variable copies), in module
  // order so the table is deterministic.
  StructType *SymTy = StructType::get(Ctx, {Ptr, Ptr});
  SmallVector<Constant *, 16> Symbols;
  for (GlobalVariable &GV : M.globals()) {
    if (GV.isDeclaration() || !GV.getName().starts_with(CpuSymbolPrefix))
      continue;
    Constant *Name = ConstantDataArray::getString(Ctx, GV.getName());
    auto *NameGV = new GlobalVariable(M, Name->getType(), true,
                                      GlobalValue::PrivateLinkage, Name,
                                      ".cleave.symname");
    NameGV->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
    Symbols.push_back(ConstantStruct::get(SymTy, {NameGV, &GV}));
  }
  // Everything else becomes local: the runtime reaches the code through the
  // table, and two .cu files may instantiate the same template kernel or
  // define the same __host__ __device__ function.
  for (GlobalValue &GV : M.global_values())
    if (!GV.isDeclaration() && !GV.hasLocalLinkage() &&
        !GV.getName().starts_with("llvm.")) {
      GV.setLinkage(GlobalValue::InternalLinkage);
      GV.setVisibility(GlobalValue::DefaultVisibility);
      GV.setDLLStorageClass(GlobalValue::DefaultStorageClass);
      if (auto *GO = dyn_cast<GlobalObject>(&GV))
        GO->setComdat(nullptr);
    }

  // A file none of whose kernels has a CPU variant (and without device
  // variables) has no symbols: its kernels run on GPUs only, and the runtime
  // refuses a CPU launch of them with the lowering's reason from the bundle.
  Constant *SymTable = ConstantPointerNull::get(PointerType::get(Ctx, 0));
  if (!Symbols.empty()) {
    auto *SymArrTy = ArrayType::get(SymTy, Symbols.size());
    SymTable = new GlobalVariable(
        M, SymArrTy, true, GlobalValue::PrivateLinkage,
        ConstantArray::get(SymArrTy, Symbols), "__cleave_symbols");
  }

  Constant *BundleData = ConstantDataArray::getRaw(
      Bundle, Bundle.size(), Type::getInt8Ty(Ctx));
  auto *BundleGV = new GlobalVariable(M, BundleData->getType(), true,
                                      GlobalValue::PrivateLinkage, BundleData,
                                      "__cleave_bundle");
  BundleGV->setAlignment(Align(16));

  StructType *DescTy =
      StructType::get(Ctx, {I32, I32, I32, I32, Ptr, I64, Ptr});
  Constant *Desc = ConstantStruct::get(
      DescTy,
      {ConstantInt::get(I32, DeviceObjectABIVersion),
       ConstantInt::get(I32, Opts.SingleDevice ? ModuleFlagSingleDevice : 0),
       ConstantInt::get(I32, Symbols.size()), ConstantInt::get(I32, 0),
       BundleGV, ConstantInt::get(I64, Bundle.size()), SymTable});
  auto *DescGV = new GlobalVariable(M, DescTy, true,
                                    GlobalValue::PrivateLinkage, Desc,
                                    "__cleave_module");

  // The constructor: cleave_register_module(&__cleave_module). Its result is
  // not checked here: the runtime reports an invalid bundle when it starts
  // (cleave_rt.h).
  FunctionCallee Reg = M.getOrInsertFunction(
      RegisterModule, FunctionType::get(I32, {Ptr}, false));
  Function *Ctor = Function::Create(FunctionType::get(Type::getVoidTy(Ctx), false),
                                    GlobalValue::InternalLinkage,
                                    "__cleave_register_module", M);
  IRBuilder<> B(BasicBlock::Create(Ctx, "entry", Ctor));
  B.CreateCall(Reg, {DescGV});
  B.CreateRetVoid();
  // Run it from .init_array, explicitly: llvm.global_ctors would become a
  // .ctors section with the host object emitter's target options, which GNU
  // ld folds into .init_array but lld and gold do not, and a current
  // crtbegin does not run .ctors itself.
  auto *ArrTy = ArrayType::get(Ptr, 1);
  auto *Init = new GlobalVariable(M, ArrTy, true, GlobalValue::PrivateLinkage,
                                  ConstantArray::get(ArrTy, {Ctor}),
                                  "__cleave_init");
  Init->setSection(".init_array");
  Init->setAlignment(Align(8));
  appendToUsed(M, {Init});
  return Error::success();
}

Expected<std::string> emitDeviceObject(Module &M, StringRef Bundle,
                                       const DeviceObjectOptions &Opts) {
  if (Error E = addModuleRegistration(M, Bundle, Opts))
    return std::move(E);
  return emitHostObject(M, Opts.CPU);
}

} // namespace cleave
