//===- Bufferization.cpp - the targets' shared way from tensors to buffers ===//
//
// The passes each target runs between its dispatch regions on tensors and
// its own lowering of them on buffers (the CPU's OpenMP loops, the GPU's
// kernels).
//
//===----------------------------------------------------------------------===//

#include "linnet/Codegen/Bufferization.h"

#include "linnet/Codegen/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void linnet::codegen::addBufferization(OpPassManager &pm) {
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // scf.for bodies may yield a fresh tensor each iteration.
  bufferize.allowReturnAllocsFromLoops = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createCSEPass());
  pm.addPass(createLinnetCodegenDropInPlaceResults());
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
}
