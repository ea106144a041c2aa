//===- CudaVersionProducts.cpp - a function's two forms by its row count --===//
//
// A function every entry calls (the mixture of experts' forward) sees a
// run-time row count: a prompt's thousands of tokens or a decode step's
// one. Tensor cores suit the first; for the second, a 64-row tile would
// leave 63 rows idle and give a few blocks a whole weight matrix to read,
// where warp reductions spread it over the GPU at full bandwidth. So the
// function's work from its first such product on gets both forms, chosen
// on the host: below 16 rows a copy whose products of a run-time row count
// are marked for warp reductions (a short prompt's too), else the original.
// Versioning the rest of the block rather than each product keeps the products'
// regions whole: what fuses with a product (its rounding, the shared expert's
// gate, up, activation and down) is in the same branch as the product.
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"
#include "TensorCoreMatmul.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCUDAVERSIONPRODUCTS
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// The number of rows of `op`'s product (the extent of its loop `m` in its
/// lhs), as a `tensor.dim` built at `b`'s insertion point.
Value rowCount(OpBuilder &b, linalg::LinalgOp op,
               const linnet::TensorCoreMatmul &matmul) {
  OpOperand *lhs = op.getDpsInputOperand(matmul.lhs);
  AffineMap map = op.getMatchingIndexingMap(lhs);
  for (unsigned r = 0; r < map.getNumResults(); ++r)
    if (map.getDimPosition(r) == matmul.m)
      return tensor::DimOp::create(b, op.getLoc(), lhs->get(), r);
  llvm_unreachable("the rows are a loop of the lhs");
}

/// The products in `block`'s own ops (not nested) that the tensor cores
/// would take with a run-time row count.
SmallVector<std::pair<linalg::LinalgOp, linnet::TensorCoreMatmul>>
dynamicRowProducts(Block &block, int64_t threadsPerBlock) {
  SmallVector<std::pair<linalg::LinalgOp, linnet::TensorCoreMatmul>> found;
  for (Operation &op : block) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || !linalgOp.hasPureTensorSemantics())
      continue;
    std::optional<linnet::TensorCoreMatmul> matmul =
        linnet::matchTensorCoreMatmul(linalgOp, threadsPerBlock);
    if (matmul &&
        ShapedType::isDynamic(linalgOp.getStaticLoopRanges()[matmul->m]))
      found.emplace_back(linalgOp, *matmul);
  }
  return found;
}

/// Versions `func`'s entry block from its first product of a run-time row
/// count to its terminator.
void versionFunction(RewriterBase &rewriter, func::FuncOp func,
                     int64_t threadsPerBlock) {
  if (func.isExternal())
    return;
  Block &entry = func.getBody().front();
  auto products = dynamicRowProducts(entry, threadsPerBlock);
  if (products.empty())
    return;
  linalg::LinalgOp first = products.front().first;
  const linnet::TensorCoreMatmul &firstMatmul = products.front().second;
  Location loc = first.getLoc();
  Operation *terminator = entry.getTerminator();
  // The first product's accumulator fill goes along, so that it still joins
  // the product's region.
  Operation *start = first;
  for (Value init : first.getDpsInits()) {
    Operation *producer = init.getDefiningOp();
    if (isa_and_nonnull<linalg::LinalgOp>(producer) &&
        producer->getBlock() == &entry && producer->isBeforeInBlock(start) &&
        llvm::all_of(producer->getUsers(), [&](Operation *user) {
          return user == first.getOperation();
        }))
      start = producer;
  }
  rewriter.setInsertionPoint(start);
  Value rows = rowCount(rewriter, first, firstMatmul);
  Value few = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ult, rows,
      arith::ConstantIndexOp::create(rewriter, loc, linnet::kMmaRows));
  auto choice =
      scf::IfOp::create(rewriter, loc, terminator->getOperandTypes(), few,
                        /*withElseRegion=*/true);
  SmallVector<Operation *> rest;
  for (Operation *op = start; op != terminator; op = op->getNextNode())
    rest.push_back(op);

  // Few rows: a copy, its products of a run-time row count marked.
  rewriter.setInsertionPointToStart(choice.thenBlock());
  IRMapping mapping;
  for (Operation *op : rest)
    rewriter.clone(*op, mapping);
  SmallVector<Value> fewResults;
  for (Value value : terminator->getOperands())
    fewResults.push_back(mapping.lookupOrDefault(value));
  scf::YieldOp::create(rewriter, loc, fewResults);
  for (auto [product, matmul] :
       dynamicRowProducts(*choice.thenBlock(), threadsPerBlock))
    product->setAttr(linnet::kFewRowsAttrName, rewriter.getUnitAttr());

  // Otherwise: the ops themselves.
  rewriter.setInsertionPointToStart(choice.elseBlock());
  auto yield = scf::YieldOp::create(rewriter, loc, terminator->getOperands());
  for (Operation *op : rest)
    rewriter.moveOpBefore(op, yield);
  rewriter.modifyOpInPlace(
      terminator, [&] { terminator->setOperands(choice.getResults()); });
}

struct CudaVersionProductsPass
    : linnet::impl::LinnetCudaVersionProductsBase<CudaVersionProductsPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    versionFunction(rewriter, getOperation(), threadsPerBlock);
  }
};

} // namespace
