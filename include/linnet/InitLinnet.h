//===- InitLinnet.h - register linnet with MLIR tools -----------*- C++ -*-===//
//
// One place that lists what a linnet tool registers: every upstream dialect,
// extension and pass, plus the linnet dialect and passes, so that linnet-opt
// and the driver parse and run the same IR.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_INITLINNET_H
#define LINNET_INITLINNET_H

#include "linnet/Conversion/Passes.h"
#include "linnet/Dialect/Linnet/IR/LinnetDialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

namespace linnet {

/// Adds all upstream dialects and extensions and the linnet dialect.
inline void registerLinnetDialects(mlir::DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // The CUDA target's gpu-module-to-binary translates each kernel module to
  // LLVM IR in process.
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<LinnetDialect>();
}

/// Registers all upstream passes and the linnet passes for textual
/// pipelines.
inline void registerLinnetPasses() {
  mlir::registerAllPasses();
  registerLinnetConversionPasses();
}

} // namespace linnet

#endif // LINNET_INITLINNET_H
