//===- LinnetBufferization.cpp - ops bufferized as ops --------------------===//
//
// A target that runs a delta rule's scan or a prompt's attention with code
// of its own (the CUDA target's warp scan and tensor-core attention) keeps
// the op through one-shot bufferization: as a destination-style op, its
// inputs are read, its destinations (the delta rule's output and state,
// attention's output) written in place, and the op on buffers has no
// results.
//
//===----------------------------------------------------------------------===//

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"

using namespace mlir;

namespace linnet {
namespace {

/// The operands of `op` as buffers, in order.
FailureOr<SmallVector<Value>>
buffersOf(Operation *op, RewriterBase &rewriter,
          const bufferization::BufferizationOptions &options,
          bufferization::BufferizationState &state) {
  SmallVector<Value> buffers;
  for (Value operand : op->getOperands()) {
    if (!isa<TensorType>(operand.getType())) {
      buffers.push_back(operand);
      continue;
    }
    FailureOr<Value> buffer =
        bufferization::getBuffer(rewriter, operand, options, state);
    if (failed(buffer))
      return failure();
    buffers.push_back(*buffer);
  }
  return buffers;
}

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
    FailureOr<SmallVector<Value>> buffers =
        buffersOf(op, rewriter, options, state);
    if (failed(buffers))
      return failure();
    rewriter.setInsertionPoint(op);
    auto onBuffers =
        DeltaRuleOp::create(rewriter, op->getLoc(), TypeRange{}, *buffers);
    onBuffers->setAttrs(op->getAttrs());
    bufferization::replaceOpWithBufferizedValues(
        rewriter, op, {onBuffers.getOutputInit(), onBuffers.getInitial()});
    return success();
  }
};

struct AttentionBufferization
    : bufferization::DstBufferizableOpInterfaceExternalModel<
          AttentionBufferization, AttentionOp> {
  // The destination is written whole and never read.
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const bufferization::AnalysisState &) const {
    return &operand != &cast<AttentionOp>(op).getInitMutable();
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const bufferization::BufferizationOptions &options,
                          bufferization::BufferizationState &state) const {
    auto attention = cast<AttentionOp>(op);
    FailureOr<SmallVector<Value>> buffers =
        buffersOf(op, rewriter, options, state);
    if (failed(buffers))
      return failure();
    // Operand i is buffer i: the optional ones where they are given.
    auto bufferOf = [&](Value operand) -> Value {
      if (!operand)
        return Value();
      for (OpOperand &use : op->getOpOperands())
        if (use.get() == operand)
          return (*buffers)[use.getOperandNumber()];
      return Value();
    };
    rewriter.setInsertionPoint(op);
    auto onBuffers = AttentionOp::create(
        rewriter, op->getLoc(), TypeRange{}, bufferOf(attention.getQuery()),
        bufferOf(attention.getKey()), bufferOf(attention.getValue()),
        bufferOf(attention.getOffset()), attention.getScale(),
        bufferOf(attention.getLengths()), attention.getStart(),
        (*buffers)[attention.getInitMutable().getOperandNumber()]);
    onBuffers->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    bufferization::replaceOpWithBufferizedValues(rewriter, op,
                                                 {onBuffers.getInit()});
    return success();
  }
};

} // namespace

void attachBufferizationModels(MLIRContext &context) {
  DeltaRuleOp::attachInterface<DeltaRuleBufferization>(context);
  AttentionOp::attachInterface<AttentionBufferization>(context);
}

} // namespace linnet
