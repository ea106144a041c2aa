//===- LoweringConfig.cpp - how the Codegen passes tile an op -------------===//

#include "linnet/Codegen/LoweringConfig.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace linnet::codegen {

LoweringConfigAttr getLoweringConfig(Operation *op) {
  return op->getAttrOfType<LoweringConfigAttr>(kLoweringConfigName);
}

void setLoweringConfig(Operation *op, LoweringConfigAttr config) {
  op->setAttr(kLoweringConfigName, config);
}

SmallVector<OpFoldResult> tileSizesAsFoldResults(MLIRContext *context,
                                                 ArrayRef<int64_t> sizes) {
  Builder b(context);
  return llvm::map_to_vector(
      sizes, [&](int64_t s) -> OpFoldResult { return b.getIndexAttr(s); });
}

bool isContraction(linalg::LinalgOp op) {
  return op.getNumReductionLoops() > 0 && linalg::isaContractionOpInterface(op);
}

} // namespace linnet::codegen
