//===- ExpertMatmul.cpp - lower linnet.expert_matmul to linalg ------------===//
//
// A routed matmul reads, for each row r and slot j, only the weights of the
// expert experts[r, j]:
//
//   y[r,j,o] = valid ? sum_i w[id, o, i] * x[r,(j,)i] : 0
//
// where id = experts[r,j] and valid = 0 <= id < X. An indexing map cannot
// pick the expert, so the lowering is an scf.forall over (r, j) (the
// op's dispatch region: a block per (r, j) on a GPU, a thread's share on
// the CPU) whose body slices the chosen expert's [O, I] weights out of the
// stacked tensor and runs one matrix-vector product on them, accumulated in
// f32 and rounded to the element type. Only the chosen experts' weights are
// read, each row of them contiguously.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace linnet::lowering {
namespace {

struct ExpertMatmulLowering : OpRewritePattern<ExpertMatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ExpertMatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    Type f32 = rewriter.getF32Type();
    Value input = op.getInput(), weights = op.getWeights(),
          experts = op.getExperts();
    auto inputType = cast<RankedTensorType>(input.getType());
    auto weightType = cast<RankedTensorType>(weights.getType());
    Type elementType = inputType.getElementType();
    bool perSlot = inputType.getRank() == 3;

    SmallVector<OpFoldResult> expertSizes = getSizes(rewriter, loc, experts);
    SmallVector<OpFoldResult> weightSizes = getSizes(rewriter, loc, weights);
    OpFoldResult outSize = weightSizes[1], inSize = weightSizes[2];
    Value numExperts =
        getValueOrCreateConstantIndexOp(rewriter, loc, weightSizes[0]);
    Value result = createEmpty(
        rewriter, loc, {expertSizes[0], expertSizes[1], outSize}, elementType);
    OpFoldResult zeroIndex = rewriter.getIndexAttr(0),
                 oneIndex = rewriter.getIndexAttr(1);

    auto forall = scf::ForallOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{expertSizes[0], expertSizes[1]},
        ValueRange{result}, std::nullopt);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(forall.getBody());
    Value r = forall.getInductionVar(0), j = forall.getInductionVar(1);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value id = toIndex(
        rewriter, loc,
        tensor::ExtractOp::create(rewriter, loc, experts, ValueRange{r, j}));
    Value valid = arith::AndIOp::create(
        rewriter, loc,
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge, id,
                              zero),
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt, id,
                              numExperts));
    // An invalid id reads the in-bounds expert 0 and discards the result.
    Value row = arith::SelectOp::create(rewriter, loc, valid, id, zero);

    // w[row] : [O, I] and x[r, (j,)] : [I], rank-reducing slices.
    auto matrixType = RankedTensorType::get(
        {weightType.getDimSize(1), weightType.getDimSize(2)},
        weightType.getElementType());
    Value matrix = tensor::ExtractSliceOp::create(
        rewriter, loc, matrixType, weights,
        ArrayRef<OpFoldResult>{row, zeroIndex, zeroIndex},
        ArrayRef<OpFoldResult>{oneIndex, outSize, inSize},
        ArrayRef<OpFoldResult>{oneIndex, oneIndex, oneIndex});
    auto vectorType =
        RankedTensorType::get({inputType.getShape().back()}, elementType);
    SmallVector<OpFoldResult> inputOffsets = {r}, inputSizes = {oneIndex},
                              inputStrides = {oneIndex};
    if (perSlot) {
      inputOffsets.push_back(j);
      inputSizes.push_back(oneIndex);
      inputStrides.push_back(oneIndex);
    }
    inputOffsets.push_back(zeroIndex);
    inputSizes.push_back(inSize);
    inputStrides.push_back(oneIndex);
    Value vector =
        tensor::ExtractSliceOp::create(rewriter, loc, vectorType, input,
                                       inputOffsets, inputSizes, inputStrides);

    // y[o] = sum_i w[o, i] * x[i] in f32, loops o i.
    Value sums =
        createGeneric(
            rewriter, loc, ValueRange{matrix, vector},
            createFilled(rewriter, loc, {outSize}, f32, 0.0),
            {projection(context, 2, {0, 1}), projection(context, 2, {1}),
             projection(context, 2, {0})},
            iterators(1, 1),
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value product =
                  arith::MulFOp::create(b, nloc, extendToF32(b, nloc, args[0]),
                                        extendToF32(b, nloc, args[1]));
              linalg::YieldOp::create(
                  b, nloc,
                  ValueRange{arith::AddFOp::create(b, nloc, args[2], product)});
            })
            .getResult(0);
    Value rounded = roundTensor(rewriter, loc, sums, elementType);
    Value zeros = createFilled(rewriter, loc, {outSize}, elementType, 0.0);
    Value slotResult =
        arith::SelectOp::create(rewriter, loc, valid, rounded, zeros);

    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, slotResult, forall.getRegionIterArgs()[0],
        ArrayRef<OpFoldResult>{r, j, zeroIndex},
        ArrayRef<OpFoldResult>{oneIndex, oneIndex, outSize},
        ArrayRef<OpFoldResult>{oneIndex, oneIndex, oneIndex});

    rewriter.setInsertionPointAfter(forall);
    rewriter.replaceOp(op, castIfNeeded(rewriter, loc, forall.getResult(0),
                                        op.getResult().getType()));
    return success();
  }
};

} // namespace

void populateExpertMatmulPatterns(RewritePatternSet &patterns) {
  patterns.add<ExpertMatmulLowering>(patterns.getContext());
}

} // namespace linnet::lowering
