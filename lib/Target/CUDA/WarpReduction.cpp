//===- WarpReduction.cpp - reductions shared by the lanes of a warp -------===//
//
// The form of a reduction a GPU reads at full bandwidth: an output per warp,
// the reduced axis dealt out to the lanes in 16-byte chunks (consecutive
// lanes, consecutive chunks: one coalesced request per warp), f32 partials
// combined by a butterfly of shuffles.
//
//===----------------------------------------------------------------------===//

#include "WarpReduction.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace linnet {

namespace {

/// The position of `op`'s one reduction loop.
unsigned reductionLoop(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (auto [d, iterator] : llvm::enumerate(iterators))
    if (iterator == utils::IteratorType::reduction)
      return d;
  llvm_unreachable("a warp reduction has a reduction loop");
}

/// `combiner` (of the op's body) applied to `lhs` and `rhs`.
Value combine(OpBuilder &b, Operation *combiner, Value lhs, Value rhs) {
  IRMapping mapping;
  mapping.map(combiner->getOperand(0), lhs);
  mapping.map(combiner->getOperand(1), rhs);
  return b.clone(*combiner, mapping)->getResult(0);
}

/// The op's body at loop indices `ivs`, its inputs `inputs` and its
/// accumulator `acc`: the accumulator after one more element.
Value applyBody(OpBuilder &b, linalg::LinalgOp op, ArrayRef<Value> inputs,
                Value acc, ArrayRef<Value> ivs) {
  Block *body = op.getBlock();
  IRMapping mapping;
  for (auto [argument, input] :
       llvm::zip(body->getArguments().take_front(inputs.size()), inputs))
    mapping.map(argument, input);
  mapping.map(body->getArgument(inputs.size()), acc);
  for (Operation &inner : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  return mapping.lookupOrDefault(body->getTerminator()->getOperand(0));
}

/// The value of input `operand` at loop indices `ivs`: the scalar itself, or
/// the buffer's element there.
Value loadInput(OpBuilder &b, Location loc, linalg::LinalgOp op,
                OpOperand &operand, ArrayRef<Value> ivs) {
  if (!isa<MemRefType>(operand.get().getType()))
    return operand.get();
  return memref::LoadOp::create(
      b, loc, operand.get(),
      indicesAt(b, loc, op.getMatchingIndexingMap(&operand), ivs));
}

} // namespace

bool readsContiguously(linalg::LinalgOp op, OpOperand &operand, unsigned red) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type || type.getRank() == 0)
    return false;
  unsigned bits = type.getElementTypeBitWidth();
  if (bits != 8 && bits != 16 && bits != 32)
    return false;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  unsigned last = map.getNumResults() - 1;
  if (map.getResult(last) != getAffineDimExpr(red, op.getContext()))
    return false;
  for (unsigned r = 0; r < last; ++r)
    if (map.getResult(r).isFunctionOfDim(red))
      return false;
  return hasUnitLastStride(type);
}

bool hasUnitLastStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return !strides.empty() && strides.back() == 1;
}

Value alignedForVectors(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t bytes = type.getElementTypeBitWidth() / 8;
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value pointer =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value elementBytes = arith::ConstantIndexOp::create(b, loc, bytes);
  Value vectorBytes = arith::ConstantIndexOp::create(b, loc, kVectorBytes);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  auto isMultiple = [&](Value byteCount) {
    Value rest = arith::RemUIOp::create(b, loc, byteCount, vectorBytes);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rest, zero);
  };
  Value start = arith::AddIOp::create(
      b, loc, pointer,
      arith::MulIOp::create(b, loc, metadata.getOffset(), elementBytes));
  Value aligned = isMultiple(start);
  for (Value stride : metadata.getStrides().drop_back())
    aligned = arith::AndIOp::create(
        b, loc, aligned,
        isMultiple(arith::MulIOp::create(b, loc, stride, elementBytes)));
  return aligned;
}

Value loadOrZero(OpBuilder &b, Location loc, Value memref, ValueRange indices,
                 Value inside) {
  Type type = getElementTypeOrSelf(memref.getType());
  return scf::IfOp::create(
             b, loc, inside,
             [&](OpBuilder &then, Location at) {
               Value element =
                   memref::LoadOp::create(then, at, memref, indices);
               scf::YieldOp::create(then, at, element);
             },
             [&](OpBuilder &otherwise, Location at) {
               Value zero = arith::ConstantOp::create(
                   otherwise, at, type, otherwise.getZeroAttr(type));
               scf::YieldOp::create(otherwise, at, zero);
             })
      .getResult(0);
}

SmallVector<Value> indicesAt(OpBuilder &b, Location loc, AffineMap map,
                             ArrayRef<Value> ivs) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults()) {
    AffineMap single = AffineMap::get(map.getNumDims(), 0, expr);
    OpFoldResult index = affine::makeComposedFoldedAffineApply(
        b, loc, single, getAsOpFoldResult(ivs));
    indices.push_back(getValueOrCreateConstantIndexOp(b, loc, index));
  }
  return indices;
}

std::optional<WarpReduction> matchWarpReduction(linalg::LinalgOp op,
                                                int64_t threadsPerBlock) {
  if (threadsPerBlock < kWarpSize || threadsPerBlock % kWarpSize != 0)
    return std::nullopt;
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 1 ||
      op.getNumLoops() < 1)
    return std::nullopt;
  if (!getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType()).isF32())
    return std::nullopt;
  SmallVector<Operation *> combiners;
  if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return std::nullopt;
  Operation *combiner = combiners.front();
  if (!isa<arith::AddFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp>(combiner))
    return std::nullopt;
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiner);
  if (!neutral)
    return std::nullopt;
  // Lanes along the reduced axis read neighbouring elements only where an
  // input is laid out along it. One laid out along a parallel loop and read
  // at every step of the reduction (a matmul's [K, N] operand) is read
  // better by a thread per output, neighbouring threads at neighbouring
  // outputs.
  unsigned red = reductionLoop(op);
  bool alongReduction = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<ShapedType>(input->get().getType());
    if (!type || type.getRank() == 0)
      continue;
    AffineMap map = op.getMatchingIndexingMap(input);
    AffineExpr innermost = map.getResult(map.getNumResults() - 1);
    if (innermost.isFunctionOfDim(red))
      alongReduction = true;
    else if (llvm::any_of(map.getResults(), [&](AffineExpr index) {
               return index.isFunctionOfDim(red);
             }))
      return std::nullopt;
  }
  if (!alongReduction)
    return std::nullopt;
  return WarpReduction{combiner, *neutral};
}

LogicalResult lowerToWarps(RewriterBase &rewriter, linalg::LinalgOp op,
                           const WarpReduction &reduction, Value thread,
                           Value threads) {
  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  unsigned red = reductionLoop(op);
  SmallVector<Range> ranges = op.createLoopRanges(rewriter, loc);
  SmallVector<Value> parallelSizes;
  for (auto [d, range] : llvm::enumerate(ranges))
    if (d != red)
      parallelSizes.push_back(
          getValueOrCreateConstantIndexOp(rewriter, loc, range.size));
  Value extent =
      getValueOrCreateConstantIndexOp(rewriter, loc, ranges[red].size);

  auto index = [&](int64_t value) {
    return arith::ConstantIndexOp::create(rewriter, loc, value).getResult();
  };
  Value warpSize = index(kWarpSize);
  Value outputs = index(1);
  for (Value size : parallelSizes)
    outputs = arith::MulIOp::create(rewriter, loc, outputs, size);
  Value warp = arith::DivUIOp::create(rewriter, loc, thread, warpSize);
  Value lane = arith::RemUIOp::create(rewriter, loc, thread, warpSize);
  Value warps = arith::DivUIOp::create(rewriter, loc, threads, warpSize);

  // The inputs read as vectors, and the elements a vector holds: 16 bytes
  // of the narrowest of them (a wider one takes several loads).
  SmallVector<OpOperand *> inputs = op.getDpsInputOperands();
  SmallVector<bool> asVector;
  int64_t narrowest = 0;
  for (OpOperand *input : inputs) {
    asVector.push_back(readsContiguously(op, *input, red));
    if (!asVector.back())
      continue;
    int64_t bytes =
        cast<MemRefType>(input->get().getType()).getElementTypeBitWidth() / 8;
    narrowest = narrowest ? std::min(narrowest, bytes) : bytes;
  }
  int64_t width = narrowest ? kVectorBytes / narrowest : 1;
  // Chunks of `width` elements read as vectors where every vector input is
  // aligned for them; the rest (all of it otherwise) element by element.
  Value chunks = index(0);
  if (narrowest) {
    Value aligned = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
    for (auto [input, vector] : llvm::zip(inputs, asVector))
      if (vector)
        aligned = arith::AndIOp::create(
            rewriter, loc, aligned,
            alignedForVectors(rewriter, loc, input->get()));
    chunks = arith::SelectOp::create(
        rewriter, loc, aligned,
        arith::DivUIOp::create(rewriter, loc, extent, index(width)), chunks);
  }
  Value tail = arith::MulIOp::create(rewriter, loc, chunks, index(width));

  auto outputLoop = scf::ForOp::create(rewriter, loc, index(0), outputs, warps);
  rewriter.setInsertionPointToStart(outputLoop.getBody());
  Value output =
      arith::AddIOp::create(rewriter, loc, outputLoop.getInductionVar(), warp);
  Value active = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                                       output, outputs);
  // The parallel loops' indices of output `output` (index arithmetic, also
  // for a warp past the last output, which reads none of them), and the
  // loop indices with the reduction at `k`.
  SmallVector<Value> parallel;
  if (parallelSizes.size() == 1)
    parallel.push_back(output);
  else if (!parallelSizes.empty())
    llvm::append_range(parallel,
                       affine::AffineDelinearizeIndexOp::create(
                           rewriter, loc, output, ValueRange(parallelSizes),
                           /*hasOuterBound=*/true)
                           .getResults());
  auto loopIndices = [&](Value k) {
    SmallVector<Value> ivs;
    for (unsigned d = 0, p = 0; d < ranges.size(); ++d)
      ivs.push_back(d == red ? k : parallel[p++]);
    return ivs;
  };
  Value neutral = arith::ConstantOp::create(rewriter, loc, reduction.neutral);
  auto partial = scf::IfOp::create(
      rewriter, loc, active,
      [&](OpBuilder &b, Location loc) {
        // Whole vectors: chunk c of the reduced axis is lane c mod 32's.
        auto vectors = scf::ForOp::create(
            b, loc, lane, chunks, warpSize, ValueRange{neutral},
            [&](OpBuilder &b, Location loc, Value chunk, ValueRange acc) {
              Value first = arith::MulIOp::create(
                  b, loc, chunk, arith::ConstantIndexOp::create(b, loc, width));
              SmallVector<Value> firstIvs = loopIndices(first);
              SmallVector<Value> loaded;
              for (auto [input, vector] : llvm::zip(inputs, asVector)) {
                if (!vector) {
                  loaded.push_back(Value());
                  continue;
                }
                auto type = cast<MemRefType>(input->get().getType());
                loaded.push_back(vector::LoadOp::create(
                    b, loc, VectorType::get({width}, type.getElementType()),
                    input->get(),
                    indicesAt(b, loc, op.getMatchingIndexingMap(input),
                              firstIvs),
                    /*nontemporal=*/false, llvm::MaybeAlign(kVectorBytes)));
              }
              Value sum = acc.front();
              for (int64_t e = 0; e < width; ++e) {
                Value k = arith::AddIOp::create(
                    b, loc, first, arith::ConstantIndexOp::create(b, loc, e));
                SmallVector<Value> ivs = loopIndices(k);
                SmallVector<Value> values;
                for (auto [input, vector] : llvm::zip(inputs, loaded))
                  values.push_back(
                      vector ? vector::ExtractOp::create(b, loc, vector, e)
                                   .getResult()
                             : loadInput(b, loc, op, *input, ivs));
                sum = applyBody(b, op, values, sum, ivs);
              }
              scf::YieldOp::create(b, loc, sum);
            });
        // The rest, an element a lane.
        Value from = arith::AddIOp::create(b, loc, tail, lane);
        auto elements = scf::ForOp::create(
            b, loc, from, extent, warpSize, vectors.getResults(),
            [&](OpBuilder &b, Location loc, Value k, ValueRange acc) {
              SmallVector<Value> ivs = loopIndices(k);
              SmallVector<Value> values;
              for (OpOperand *input : inputs)
                values.push_back(loadInput(b, loc, op, *input, ivs));
              scf::YieldOp::create(b, loc,
                                   applyBody(b, op, values, acc.front(), ivs));
            });
        scf::YieldOp::create(b, loc, elements.getResults());
      },
      [&](OpBuilder &b, Location loc) {
        scf::YieldOp::create(b, loc, neutral);
      });

  // Every lane ends with the warp's total.
  Value total = partial.getResult(0);
  for (int32_t offset = kWarpSize / 2; offset > 0; offset /= 2) {
    Value other = gpu::ShuffleOp::create(rewriter, loc, total, offset,
                                         kWarpSize, gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    total = combine(rewriter, reduction.combiner, total, other);
  }
  Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                      lane, index(0));
  Value writes = arith::AndIOp::create(rewriter, loc, active, first);
  auto store = scf::IfOp::create(rewriter, loc, writes, /*withElse=*/false);
  rewriter.setInsertionPointToStart(store.thenBlock());
  OpOperand *init = op.getDpsInitOperand(0);
  SmallVector<Value> at = indicesAt(
      rewriter, loc, op.getMatchingIndexingMap(init), loopIndices(index(0)));
  Value old = memref::LoadOp::create(rewriter, loc, init->get(), at);
  memref::StoreOp::create(rewriter, loc,
                          combine(rewriter, reduction.combiner, old, total),
                          init->get(), at);
  rewriter.eraseOp(op);
  return success();
}

} // namespace linnet
