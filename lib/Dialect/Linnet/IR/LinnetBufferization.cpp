//===- LinnetBufferization.cpp - the delta rule bufferized as an op -------===//
//
// A target that runs a delta rule's scan with code of its own (the CUDA
// target's warp scan, a prompt's) keeps the op through one-shot
// bufferization: as a destination-style op, its inputs are read, its two
// destinations (the output and the state) written in place, and the op on
// buffers has no results.
//
//===----------------------------------------------------------------------===//

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"

using namespace mlir;

namespace linnet {
namespace {

struct DeltaRuleBufferization
    : bufferization::DstBufferizableOpInterfaceExternalModel<
          DeltaRuleBufferization, DeltaRuleOp> {
  // The output's destination is written whole and never read.
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const bufferization::AnalysisState &) const {
    return &operand != &cast<DeltaRuleOp>(op).getOutputInitMutable();
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const bufferization::BufferizationOptions &options,
                          bufferization::BufferizationState &state) const {
    SmallVector<Value> buffers;
    for (Value operand : op->getOperands()) {
      FailureOr<Value> buffer =
          bufferization::getBuffer(rewriter, operand, options, state);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
    }
    rewriter.setInsertionPoint(op);
    auto onBuffers =
        DeltaRuleOp::create(rewriter, op->getLoc(), TypeRange{}, buffers);
    onBuffers->setAttrs(op->getAttrs());
    bufferization::replaceOpWithBufferizedValues(
        rewriter, op, {onBuffers.getOutputInit(), onBuffers.getInitial()});
    return success();
  }
};

} // namespace

void attachBufferizationModels(MLIRContext &context) {
  DeltaRuleOp::attachInterface<DeltaRuleBufferization>(context);
}

} // namespace linnet
