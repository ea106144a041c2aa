//===- CpuDropForeignArgumentAttributes.cpp - only llvm.* on llvm.func
//-----===//
//
// IR generation marks entry arguments with `linnet.parameter`,
// `linnet.state` and `bufferization.writable`; they reach the LLVM dialect's
// functions, where nothing reads them. MLIR 22's translation to LLVM IR
// warns about each such argument attribute and prints the whole function
// into the (unseen) warning: 76 s of a full-size build. They are dropped
// before translation; the `llvm.*` ones (noalias, ...) are kept.
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCPUDROPFOREIGNARGUMENTATTRIBUTES
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// `attributes` without the foreign ones, or none if there are none to drop.
std::optional<SmallVector<NamedAttribute>>
withoutForeign(ArrayRef<NamedAttribute> attributes) {
  SmallVector<NamedAttribute> kept;
  llvm::copy_if(attributes, std::back_inserter(kept), [](NamedAttribute a) {
    return a.getName().getValue().starts_with("llvm.");
  });
  if (kept.size() == attributes.size())
    return std::nullopt;
  return kept;
}

struct DropForeignArgumentAttributesPass
    : linnet::impl::LinnetCpuDropForeignArgumentAttributesBase<
          DropForeignArgumentAttributesPass> {
  void runOnOperation() override {
    getOperation().walk([](LLVM::LLVMFuncOp func) {
      auto function = cast<FunctionOpInterface>(func.getOperation());
      for (unsigned i = 0; i < function.getNumArguments(); ++i)
        if (auto kept = withoutForeign(function.getArgAttrs(i)))
          function.setArgAttrs(i, *kept);
      for (unsigned i = 0; i < function.getNumResults(); ++i)
        if (auto kept = withoutForeign(function.getResultAttrs(i)))
          function.setResultAttrs(i, *kept);
    });
  }
};

} // namespace
