//===- LinnetLowerToLinalg.cpp - the linnet-lower-to-linalg pass ----------===//
//
// The pass that replaces every linnet operation (or, with keep-tileable, every
// one that is not tiled as an op; with keep-slot-products, every one but a
// decode's routed products of a row per slot; with keep-sequence-scans, every
// one but the delta rules) by linalg/tensor/scf loop nests on tensors,
// and the populate entry point that gathers the patterns of each op family.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "linnet/Codegen/LoweringConfig.h"
#include "linnet/Conversion/LinnetToLinalg/LinnetToLinalg.h"
#include "linnet/Conversion/Passes.h"
#include "linnet/Dialect/Linnet/IR/LinnetDialect.h"
#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/DialectConversion.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETLOWERTOLINALG
#include "linnet/Conversion/Passes.h.inc"
} // namespace linnet

using namespace mlir;

void linnet::populateLinnetToLinalgPatterns(
    RewritePatternSet &patterns, const AttentionOptions &attention,
    const ExpertMatmulOptions &experts) {
  lowering::populateAttentionPatterns(patterns, attention);
  lowering::populateDeltaRulePatterns(patterns);
  lowering::populateCausalConvPatterns(patterns);
  lowering::populateExpertMatmulPatterns(patterns, experts);
  lowering::populateRankingPatterns(patterns);
}

namespace {
/// Whether `op` is attention inside a dispatch region whose configuration
/// tiles its queries: a prompt's tile of queries, which a target tiles so
/// only where a kernel of its own runs it (a decode step's one query, or a
/// prompt the target lowers, keeps the queries whole).
bool isPromptAttentionInRegion(Operation *op) {
  auto attention = dyn_cast<linnet::AttentionOp>(op);
  if (!attention || !op->getParentOfType<scf::ForallOp>())
    return false;
  auto config = op->getAttrOfType<linnet::LoweringConfigAttr>(
      linnet::codegen::kLoweringConfigName);
  return config && config.getThread().size() == 3 && config.getThread()[2] != 0;
}

struct LinnetLowerToLinalgPass
    : linnet::impl::LinnetLowerToLinalgBase<LinnetLowerToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    if (attentionKeyBlock < 1) {
      getOperation()->emitError("attention-key-block must be at least 1");
      return signalPassFailure();
    }
    if (attentionPromptKeyBlock < 0) {
      getOperation()->emitError("attention-prompt-key-block must be 0 or more");
      return signalPassFailure();
    }
    if (expertOutputTile < 0) {
      getOperation()->emitError("expert-output-tile must be 0 or more");
      return signalPassFailure();
    }
    if (expertGroupOutputTile < 0) {
      getOperation()->emitError("expert-group-output-tile must be 0 or more");
      return signalPassFailure();
    }
    if (expertGroupRows < 1) {
      getOperation()->emitError("expert-group-rows must be at least 1");
      return signalPassFailure();
    }
    if (expertGroupedSlots < 0) {
      getOperation()->emitError("expert-grouped-slots must be 0 or more");
      return signalPassFailure();
    }
    linnet::ExpertMatmulOptions experts;
    experts.outputTile = expertOutputTile;
    experts.groupRows = expertGroupRows;
    experts.groupOutputTile = expertGroupOutputTile;
    experts.groupedSlotsPerExpert = expertGroupedSlots;
    experts.parallelSort = expertParallelSort;
    experts.slotLoopsInRegions = slotLoopsInRegions;
    MLIRContext *context = &getContext();
    ConversionTarget target(*context);
    target.addDynamicallyLegalDialect<linnet::LinnetDialect>(
        [&](Operation *op) {
          return (keepTileable && isa<TilingInterface>(op)) ||
                 (keepSequenceScans && isa<linnet::DeltaRuleOp>(op)) ||
                 (keepPromptAttention && isPromptAttentionInRegion(op)) ||
                 (keepSlotProducts && linnet::lowering::isFusibleSlotProduct(
                                          op, experts.groupedSlotsPerExpert));
        });
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(context);
    linnet::AttentionOptions attention;
    attention.keyBlock = attentionKeyBlock;
    attention.promptKeyBlock = attentionPromptKeyBlock;
    attention.roundedWeights = attentionRoundedWeights;
    linnet::populateLinnetToLinalgPatterns(patterns, attention, experts);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
