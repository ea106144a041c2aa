//===- TensorCoreAttention.cpp - a prompt's attention in one kernel -------===//
//
// The fragments follow mma.sync m16n8k16's layout (MLIR22_NOTES.md "Tensor
// cores"; CudaEmulateLaunches.cpp runs the same layout on the host): lane l
// of a warp is in group g = l / 4 and quad t = l mod 4; it holds A's rows
// g and g + 8 at depths 2t, 2t + 1 (and 8 more), B's column g at depths 2t,
// 2t + 1 (and 8 more), and the sums' rows g and g + 8 at columns 2t, 2t + 1.
// The scores' two 16 x 8 accumulators (keys 0-7, 8-15) are then, rounded to
// bf16, exactly the A fragment of the weights for a product of depth 16.
//
//===----------------------------------------------------------------------===//

#include "TensorCoreAttention.h"

#include "IndexBuilder.h"
#include "TensorCoreMatmul.h"
#include "WarpReduction.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;

namespace linnet {
namespace {

/// Warps along the query rows of a block's tile.
constexpr int64_t kRowWarps = kAttentionQueryTile / kMmaRows;
/// Elements a staged row is longer than its data: rows stay 16-byte
/// aligned, and the eight rows a fragment's lanes read start in different
/// banks.
constexpr int64_t kStagePadding = 8;

/// The most registers a lane may keep across the key steps for its query
/// fragments and accumulators (TensorCoreMatmul's wide layout keeps 64).
constexpr int64_t kAttentionKeptRegisters = 128;

int64_t columnWarps(int64_t threadsPerBlock) {
  return threadsPerBlock / (kRowWarps * kWarpSize);
}

} // namespace

bool matchTensorCoreAttention(AttentionOp op, int64_t threadsPerBlock) {
  auto query = cast<ShapedType>(op.getQuery().getType());
  auto value = cast<ShapedType>(op.getValue().getType());
  if (!query.getElementType().isBF16() || query.getDimSize(2) == 1)
    return false;
  if (threadsPerBlock % (kRowWarps * kWarpSize) != 0)
    return false;
  int64_t depth = query.getDimSize(3), columns = value.getDimSize(3);
  int64_t warps = columnWarps(threadsPerBlock);
  if (ShapedType::isDynamic(depth) || ShapedType::isDynamic(columns) ||
      depth % kMmaDepth != 0 || columns % (2 * kMmaColumns * warps) != 0)
    return false;
  // The registers a lane keeps for the whole walk: its query fragments
  // (depth / 4: 64 at a depth of 256) and accumulators (4 a part: 64 for
  // 128 columns), within a budget that leaves the rest of 255 to the
  // scores, the prefetched chunks and the addresses.
  int64_t parts = columns / (kMmaColumns * warps);
  if (depth / 4 + 4 * parts > kAttentionKeptRegisters)
    return false;
  // Both stages in a block's workgroup memory (48 KiB without opting in).
  int64_t bytes = 2 * kAttentionKeyStep * (depth + columns + 2 * kStagePadding);
  return bytes <= 48 * 1024;
}

std::array<MemRefType, 2> tensorCoreAttentionStageTypes(AttentionOp op) {
  MLIRContext *context = op.getContext();
  auto space =
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup);
  Type bf16 = BFloat16Type::get(context);
  auto stage = [&](Value operand) {
    int64_t row =
        cast<ShapedType>(operand.getType()).getDimSize(3) + kStagePadding;
    return MemRefType::get({kAttentionKeyStep * row}, bf16, AffineMap(), space);
  };
  return {stage(op.getKey()), stage(op.getValue())};
}

LogicalResult lowerAttentionToTensorCores(RewriterBase &rewriter,
                                          AttentionOp op, Value thread,
                                          int64_t threadsPerBlock,
                                          ArrayRef<Value> stages) {
  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  OpBuilder &b = rewriter;
  IndexBuilder index{b, loc};
  Type f32 = b.getF32Type(), bf16 = b.getBF16Type();
  auto floatConstant = [&](double value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  };
  auto toIndex = [&](Value i32) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), i32);
  };

  Value query = op.getQuery(), key = op.getKey(), value = op.getValue(),
        out = op.getInit();
  const int64_t depth = cast<ShapedType>(query.getType()).getDimSize(3);
  const int64_t columns = cast<ShapedType>(value.getType()).getDimSize(3);
  const int64_t warpColumns = columns / columnWarps(threadsPerBlock);
  const int64_t parts = warpColumns / kMmaColumns;
  const int64_t depthSteps = depth / kMmaDepth;
  const int64_t keyRow = depth + kStagePadding;
  const int64_t valueRow = columns + kStagePadding;

  Value lane =
      arith::RemUIOp::create(b, loc, thread, index.constant(kWarpSize));
  Value warp =
      arith::DivUIOp::create(b, loc, thread, index.constant(kWarpSize));
  Value group = arith::DivUIOp::create(b, loc, lane, index.constant(4));
  Value quad = arith::RemUIOp::create(b, loc, lane, index.constant(4));
  Value warpRow =
      index.mul(arith::RemUIOp::create(b, loc, warp, index.constant(kRowWarps)),
                kMmaRows);
  Value warpColumn =
      index.mul(arith::DivUIOp::create(b, loc, warp, index.constant(kRowWarps)),
                warpColumns);

  // The stages as the block's copies write them and its loads read them
  // (in the default memory space, as a kernel's other buffers: NVPTX infers
  // the shared one back).
  Value stage[2] = {inDefaultMemorySpace(b, loc, stages[0]),
                    inDefaultMemorySpace(b, loc, stages[1])};

  Value rows = memref::DimOp::create(b, loc, query, 0);
  Value heads = memref::DimOp::create(b, loc, query, 1);
  Value queries = memref::DimOp::create(b, loc, query, 2);
  Value keyHeads = memref::DimOp::create(b, loc, key, 1);
  Value keys = memref::DimOp::create(b, loc, key, 2);
  Value headGroup = arith::DivUIOp::create(b, loc, heads, keyHeads);
  Value start = op.getStart() ? op.getStart() : index.constant(0);
  // Whether each step's keys and values are read as 16-byte vectors.
  Value asVectors[2];
  Value sources[2] = {key, value};
  for (unsigned side = 0; side < 2; ++side)
    asVectors[side] =
        hasUnitLastStride(cast<MemRefType>(sources[side].getType()))
            ? alignedForVectors(b, loc, sources[side])
            : arith::ConstantIntOp::create(b, loc, 0, 1).getResult();
  double negInf = -std::numeric_limits<double>::infinity();

  // Each row, head and 64 queries of the tile in turn (a block's tile has
  // one of each).
  Value queryTiles = arith::CeilDivUIOp::create(
      b, loc, queries, index.constant(kAttentionQueryTile));
  Value tileCount = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, rows, heads), queryTiles);
  auto tiles = scf::ForOp::create(b, loc, index.constant(0), tileCount,
                                  index.constant(1));
  b.setInsertionPointToStart(tiles.getBody());
  ValueRange tilePosition =
      affine::AffineDelinearizeIndexOp::create(
          b, loc, tiles.getInductionVar(), ValueRange{rows, heads, queryTiles},
          /*hasOuterBound=*/true)
          .getResults();
  Value row = tilePosition[0], head = tilePosition[1];
  Value firstQuery = index.mul(tilePosition[2], kAttentionQueryTile);
  Value keyHead = arith::DivUIOp::create(b, loc, head, headGroup);
  // Query i sits at position first + i; the keys it may see end before
  // `keyEnd` (the cache's keys, the row's length).
  Value first = index.add(
      toIndex(memref::LoadOp::create(b, loc, op.getOffset(), ValueRange{row})),
      start);
  Value keyEnd = keys;
  if (Value lengths = op.getLengths())
    keyEnd = arith::MinSIOp::create(
        b, loc, keyEnd,
        toIndex(memref::LoadOp::create(b, loc, lengths, ValueRange{row})));
  // The tile's last query sees keys up to first + lastQuery.
  Value tileEnd = arith::MinSIOp::create(
      b, loc, queries,
      index.add(firstQuery, index.constant(kAttentionQueryTile)));
  Value keyCount = arith::MaxSIOp::create(
      b, loc, index.constant(0),
      arith::MinSIOp::create(b, loc, keyEnd, index.add(first, tileEnd)));

  // This lane's two query rows, their positions and whether they exist.
  Value laneRow[2], position[2], rowInside[2];
  for (int64_t half = 0; half < 2; ++half) {
    laneRow[half] = index.add(index.add(firstQuery, index.add(warpRow, group)),
                              index.constant(8 * half));
    position[half] = index.add(first, laneRow[half]);
    rowInside[half] = index.below(laneRow[half], queries);
  }

  // The query fragments, kept for every step: depths 16 s on, registers
  // (row g, 2t), (row g + 8, 2t), (row g, 2t + 8), (row g + 8, 2t + 8).
  auto aType = VectorType::get({4, 2}, bf16);
  auto sumsType = VectorType::get({2, 2}, f32);
  SmallVector<Value> queryFragments;
  for (int64_t step = 0; step < depthSteps; ++step) {
    SmallVector<Value> elements;
    for (int64_t reg = 0; reg < 4; ++reg)
      for (int64_t element = 0; element < 2; ++element) {
        Value at = index.add(
            index.mul(quad, 2),
            index.constant(kMmaDepth * step + 8 * (reg / 2) + element));
        elements.push_back(loadOrZero(
            b, loc, query, ValueRange{row, head, laneRow[reg % 2], at},
            rowInside[reg % 2]));
      }
    queryFragments.push_back(
        vector::FromElementsOp::create(b, loc, aType, elements));
  }

  // The chunks of 8 elements this thread copies into a stage: chunk c is
  // key c / (chunks a row), 8 (c mod that) of its row.
  constexpr int64_t kChunk = kStageChunk;
  auto chunkType = VectorType::get({kChunk}, bf16);
  struct Chunk {
    unsigned side;
    Value index;
    bool mayBePast;
  };
  int64_t sideColumns[2] = {depth, columns};
  int64_t sideRow[2] = {keyRow, valueRow};
  SmallVector<Chunk> chunks;
  for (unsigned side = 0; side < 2; ++side) {
    int64_t count = kAttentionKeyStep * sideColumns[side] / kChunk;
    for (int64_t from = 0; from < count; from += threadsPerBlock)
      chunks.push_back({side, index.add(thread, index.constant(from)),
                        from + threadsPerBlock > count});
  }
  // Where chunk `chunk` of the step from key `firstKey` lies: its key in
  // the step, its first column, and whether it is a chunk of the stage.
  auto chunkKey = [&](const Chunk &chunk) -> Value {
    return arith::DivUIOp::create(
        b, loc, chunk.index, index.constant(sideColumns[chunk.side] / kChunk));
  };
  auto chunkColumn = [&](const Chunk &chunk) -> Value {
    return index.mul(arith::RemUIOp::create(
                         b, loc, chunk.index,
                         index.constant(sideColumns[chunk.side] / kChunk)),
                     kChunk);
  };
  auto chunkInStage = [&](const Chunk &chunk) -> Value {
    return index.below(
        chunk.index,
        index.constant(kAttentionKeyStep * sideColumns[chunk.side] / kChunk));
  };
  // A chunk's elements: a 16-byte load where it may be one, element by
  // element otherwise, zero past the keys the tile sees.
  auto loadChunk = [&](const Chunk &chunk, Value firstKey) -> Value {
    Value column = chunkColumn(chunk);
    Value keyIndex = index.add(firstKey, chunkKey(chunk));
    Value inside = index.below(keyIndex, keyCount);
    if (chunk.mayBePast)
      inside = index.both(inside, chunkInStage(chunk));
    Value source = sources[chunk.side];
    return loadStageChunk(
        b, loc, index.both(inside, asVectors[chunk.side]),
        [&](OpBuilder &, Location at) -> Value {
          return vector::LoadOp::create(
              b, at, chunkType, source,
              ValueRange{row, keyHead, keyIndex, column},
              /*nontemporal=*/false, llvm::MaybeAlign(kVectorBytes));
        },
        [&](OpBuilder &, Location at, int64_t e) {
          return loadOrZero(b, at, source,
                            ValueRange{row, keyHead, keyIndex,
                                       index.add(column, index.constant(e))},
                            inside);
        });
  };
  auto storeChunk = [&](const Chunk &chunk, Value elements) {
    storeStageChunk(b, loc, elements, stage[chunk.side],
                    index.add(index.mul(chunkKey(chunk), sideRow[chunk.side]),
                              chunkColumn(chunk)),
                    chunk.mayBePast ? chunkInStage(chunk) : Value());
  };

  // The lane's part of the key fragments' ldmatrix addresses (below).
  auto fragmentsType = VectorType::get({4, 2}, bf16);
  Value laneIn8 = arith::RemUIOp::create(b, loc, lane, index.constant(8));
  Value laneHalf = arith::DivUIOp::create(b, loc, lane, index.constant(16));
  Value laneOddEighth = arith::RemUIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, lane, index.constant(8)),
      index.constant(2));
  // The lane's part of the value fragments' ldmatrix addresses (below).
  Value valueLaneAt = index.add(
      index.mul(index.add(index.mul(laneOddEighth, 8), laneIn8), valueRow),
      index.add(warpColumn, index.mul(laneHalf, 8)));

  // The key steps, carrying the accumulators, each row's maximum and (this
  // lane's part of) its sum, and the next step's chunks: loaded before the
  // loop for the first step, and in each step for the next while the
  // tensor cores work on this one.
  SmallVector<Value> carried;
  for (int64_t part = 0; part < parts; ++part)
    carried.push_back(
        arith::ConstantOp::create(b, loc, b.getZeroAttr(sumsType)));
  for (int64_t half = 0; half < 2; ++half)
    carried.push_back(floatConstant(negInf));
  for (int64_t half = 0; half < 2; ++half)
    carried.push_back(floatConstant(0.0));
  for (const Chunk &chunk : chunks)
    carried.push_back(loadChunk(chunk, index.constant(0)));
  auto steps = scf::ForOp::create(b, loc, index.constant(0), keyCount,
                                  index.constant(kAttentionKeyStep), carried);
  b.setInsertionPointToStart(steps.getBody());
  Value firstKey = steps.getInductionVar();
  ValueRange iterArgs = steps.getRegionIterArgs();
  SmallVector<Value> sums(iterArgs.take_front(parts));
  Value oldMax[2] = {iterArgs[parts], iterArgs[parts + 1]};
  Value oldSum[2] = {iterArgs[parts + 2], iterArgs[parts + 3]};
  ValueRange staged = iterArgs.drop_front(parts + 4);

  // The previous step's reads of the stages are done before they are
  // written again; this step's copies before they are read.
  gpu::BarrierOp::create(b, loc);
  for (auto [chunk, elements] : llvm::zip_equal(chunks, staged))
    storeChunk(chunk, elements);
  gpu::BarrierOp::create(b, loc);
  SmallVector<Value> prefetched;
  Value nextKey = index.add(firstKey, index.constant(kAttentionKeyStep));
  for (const Chunk &chunk : chunks)
    prefetched.push_back(loadChunk(chunk, nextKey));

  // Scores: the B fragments of two accumulators (keys 8 j + g, j = 2 p and
  // 2 p + 1) a 16 of the depth from one ldmatrix of four 8 x 8 matrices,
  // (key 0-7, depth 0-7), (0-7, 8-15), (8-15, 0-7), (8-15, 8-15) of the
  // pair: lane l gives the address of key 16 p + 8 (l / 16) + l mod 8 at
  // depth 8 (l / 8 mod 2) and receives key l / 4 of each matrix, depths
  // 2 (l mod 4) + {0, 1}: B's layout.
  constexpr int64_t kScoreParts = kAttentionKeyStep / kMmaColumns;
  Value scores[kScoreParts];
  for (int64_t j = 0; j < kScoreParts; ++j)
    scores[j] = arith::ConstantOp::create(b, loc, b.getZeroAttr(sumsType));
  for (int64_t pair = 0; pair < kScoreParts / 2; ++pair) {
    Value keyAt =
        index.mul(index.add(index.constant(16 * pair),
                            index.add(index.mul(laneHalf, 8), laneIn8)),
                  keyRow);
    for (int64_t step = 0; step < depthSteps; ++step) {
      Value matrices = nvgpu::LdMatrixOp::create(
          b, loc, fragmentsType, stages[0],
          ValueRange{
              index.add(keyAt, index.add(index.mul(laneOddEighth, 8),
                                         index.constant(kMmaDepth * step)))},
          /*transpose=*/false, /*numTiles=*/4);
      for (int64_t of = 0; of < 2; ++of) {
        Value bFragment = bFragmentOf(b, loc, matrices, of);
        Value &sum = scores[2 * pair + of];
        sum = nvgpu::MmaSyncOp::create(
            b, loc, queryFragments[step], bFragment, sum,
            b.getI64ArrayAttr({kMmaRows, kMmaColumns, kMmaDepth}));
      }
    }
  }

  // Masked and rounded scores: element (half, pair) of accumulator j is
  // row laneRow[half], key firstKey + 8 j + 2t + pair. Where the step's
  // keys are all before the keys' end and at or before both rows'
  // positions (a long row's steps but the last), a branch without the
  // masks' compares and selects.
  Value scale = op.getScale();
  Value infinity = floatConstant(negInf);
  Value lastKey = index.add(firstKey, index.constant(kAttentionKeyStep - 1));
  Value open =
      index.both(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                       lastKey, position[0]),
                 index.below(lastKey, keyCount));
  auto roundedScores = [&](bool withMasks) {
    SmallVector<Value> values;
    for (int64_t j = 0; j < kScoreParts; ++j)
      for (int64_t half = 0; half < 2; ++half)
        for (int64_t pair = 0; pair < 2; ++pair) {
          Value score = vector::ExtractOp::create(
              b, loc, scores[j], ArrayRef<int64_t>{half, pair});
          // Rounded as HF rounds its bf16 product of q and k.
          Value scaled = arith::MulFOp::create(b, loc, score, scale);
          Value rounded = arith::ExtFOp::create(
              b, loc, f32,
              arith::TruncFOp::create(b, loc, bf16, scaled).getResult());
          if (withMasks) {
            Value keyIndex =
                index.add(firstKey, index.add(index.mul(quad, 2),
                                              index.constant(8 * j + pair)));
            Value allowed = index.both(
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                      keyIndex, position[half]),
                index.below(keyIndex, keyCount));
            rounded =
                arith::SelectOp::create(b, loc, allowed, rounded, infinity);
          }
          values.push_back(rounded);
        }
    return values;
  };
  SmallVector<Type> scoreTypes(kScoreParts * 4, f32);
  auto maskedScores =
      scf::IfOp::create(b, loc, scoreTypes, open, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard maskGuard(b);
    b.setInsertionPointToStart(maskedScores.thenBlock());
    scf::YieldOp::create(b, loc, roundedScores(/*withMasks=*/false));
    b.setInsertionPointToStart(maskedScores.elseBlock());
    scf::YieldOp::create(b, loc, roundedScores(/*withMasks=*/true));
  }
  Value masked[kScoreParts][2][2];
  for (int64_t j = 0; j < kScoreParts; ++j)
    for (int64_t half = 0; half < 2; ++half)
      for (int64_t pair = 0; pair < 2; ++pair)
        masked[j][half][pair] = maskedScores.getResult(4 * j + 2 * half + pair);

  // Each row's maximum: this lane's four scores of it, then the quad's
  // (lanes 4g .. 4g + 3 hold the row: shuffles across 1 and 2).
  auto acrossQuad = [&](Value x, bool isMax) -> Value {
    for (int32_t offset : {1, 2}) {
      Value other = gpu::ShuffleOp::create(b, loc, x, offset, kWarpSize,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      x = isMax ? arith::MaximumFOp::create(b, loc, x, other).getResult()
                : arith::AddFOp::create(b, loc, x, other).getResult();
    }
    return x;
  };
  // exp(x - max), 0 where x is -inf: a row with no allowed key so far keeps
  // zero weights, not NaN. The fast exp (`afn`: ex2.approx, relative error
  // about 2^-22, where the weights are rounded to bf16's 2^-9): libdevice's
  // accurate one took 8 instructions, a fifth of a step's on the shortest
  // path (bench/cuda_issue.py).
  auto expOrZero = [&](Value x, Value max) -> Value {
    Value isMasked =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, infinity);
    return arith::SelectOp::create(
        b, loc, isMasked, floatConstant(0.0),
        math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, x, max),
                            arith::FastMathFlags::afn));
  };
  Value newMax[2], rescale[2], newSum[2];
  Value weights[kScoreParts][2][2];
  for (int64_t half = 0; half < 2; ++half) {
    Value max = oldMax[half];
    for (int64_t j = 0; j < kScoreParts; ++j)
      for (int64_t pair = 0; pair < 2; ++pair)
        max = arith::MaximumFOp::create(b, loc, max, masked[j][half][pair]);
    newMax[half] = acrossQuad(max, /*isMax=*/true);
    rescale[half] = expOrZero(oldMax[half], newMax[half]);
    Value sum = arith::MulFOp::create(b, loc, oldSum[half], rescale[half]);
    for (int64_t j = 0; j < kScoreParts; ++j)
      for (int64_t pair = 0; pair < 2; ++pair) {
        // The weights rounded to bf16 before their product with the
        // values, and the sum adds the rounded ones.
        Value weight = arith::TruncFOp::create(
            b, loc, bf16, expOrZero(masked[j][half][pair], newMax[half]));
        weights[j][half][pair] = weight;
        sum = arith::AddFOp::create(b, loc, sum,
                                    arith::ExtFOp::create(b, loc, f32, weight));
      }
    newSum[half] = sum;
  }
  // The weights of keys 16 d on as A (rows g, g + 8 by keys 2t, 2t + 8 of
  // those): accumulators 2 d and 2 d + 1.
  constexpr int64_t kWeightDepths = kAttentionKeyStep / kMmaDepth;
  Value aWeights[kWeightDepths];
  for (int64_t d = 0; d < kWeightDepths; ++d) {
    aWeights[d] = arith::ConstantOp::create(b, loc, b.getZeroAttr(aType));
    for (int64_t reg = 0; reg < 4; ++reg)
      for (int64_t pair = 0; pair < 2; ++pair)
        aWeights[d] = vector::InsertOp::create(
            b, loc, weights[2 * d + reg / 2][reg % 2][pair], aWeights[d],
            ArrayRef<int64_t>{reg, pair});
  }

  // The values' B fragments (column 8 part + g of the warp's, depths
  // (keys) 16 d + 2t, + 1, + 8, + 9): two parts a 16 of the keys from one
  // transposed ldmatrix of four 8 x 8 matrices, (keys 0-7, columns 0-7),
  // (8-15, 0-7), (0-7, 8-15), (8-15, 8-15) of the pair; lane l gives the
  // address of key 8 (l / 8 mod 2) + l mod 8 at column 8 (l / 16) and
  // receives column l / 4 of each matrix, keys 2 (l mod 4) + {0, 1}.
  SmallVector<std::array<Value, kWeightDepths>> partFragments(parts);
  for (int64_t pair = 0; pair < parts / 2; ++pair)
    for (int64_t d = 0; d < kWeightDepths; ++d) {
      Value matrices = nvgpu::LdMatrixOp::create(
          b, loc, fragmentsType, stages[1],
          ValueRange{
              index.add(valueLaneAt, index.constant(kMmaDepth * d * valueRow +
                                                    2 * kMmaColumns * pair))},
          /*transpose=*/true, /*numTiles=*/4);
      for (int64_t of = 0; of < 2; ++of)
        partFragments[2 * pair + of][d] = bFragmentOf(b, loc, matrices, of);
    }

  // Each part's accumulators rescaled, where a row of the lane's moved its
  // maximum (elsewhere the factor is 1: most steps of a long row move
  // none, and the branch skips 4 multiplies a part), then plus the weights
  // times the values.
  Value one = floatConstant(1.0);
  auto moved = [&](Value factor) -> Value {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, factor,
                                 one);
  };
  auto rescaled = scf::IfOp::create(
      b, loc, TypeRange(ValueRange(sums)),
      arith::OrIOp::create(b, loc, moved(rescale[0]), moved(rescale[1])),
      /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard rescaleGuard(b);
    b.setInsertionPointToStart(rescaled.thenBlock());
    SmallVector<Value> scaled;
    for (Value sum : sums) {
      for (int64_t half = 0; half < 2; ++half)
        for (int64_t pair = 0; pair < 2; ++pair) {
          Value element = vector::ExtractOp::create(
              b, loc, sum, ArrayRef<int64_t>{half, pair});
          sum = vector::InsertOp::create(
              b, loc, arith::MulFOp::create(b, loc, element, rescale[half]),
              sum, ArrayRef<int64_t>{half, pair});
        }
      scaled.push_back(sum);
    }
    scf::YieldOp::create(b, loc, scaled);
    b.setInsertionPointToStart(rescaled.elseBlock());
    scf::YieldOp::create(b, loc, sums);
  }
  SmallVector<Value> next;
  for (int64_t part = 0; part < parts; ++part) {
    Value sum = rescaled.getResult(part);
    for (int64_t d = 0; d < kWeightDepths; ++d)
      sum = nvgpu::MmaSyncOp::create(
          b, loc, aWeights[d], partFragments[part][d], sum,
          b.getI64ArrayAttr({kMmaRows, kMmaColumns, kMmaDepth}));
    next.push_back(sum);
  }
  llvm::append_range(next, ArrayRef<Value>(newMax));
  llvm::append_range(next, ArrayRef<Value>(newSum));
  llvm::append_range(next, prefetched);
  scf::YieldOp::create(b, loc, next);

  // Each row's whole sum (the quad's parts), then out = sum > 0 ?
  // round(acc / sum) : 0 for the lane's rows and columns.
  b.setInsertionPointAfter(steps);
  Value total[2];
  for (int64_t half = 0; half < 2; ++half)
    total[half] =
        acrossQuad(steps.getResult(parts + 2 + half), /*isMax=*/false);
  Type outType = cast<MemRefType>(out.getType()).getElementType();
  Value any[2];
  for (int64_t half = 0; half < 2; ++half)
    any[half] = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                      total[half], floatConstant(0.0));
  for (int64_t part = 0; part < parts; ++part)
    for (int64_t half = 0; half < 2; ++half) {
      scf::IfOp::create(b, loc, rowInside[half], [&](OpBuilder &, Location at) {
        for (int64_t pair = 0; pair < 2; ++pair) {
          Value column = index.add(index.add(warpColumn, index.mul(quad, 2)),
                                   index.constant(kMmaColumns * part + pair));
          Value element = vector::ExtractOp::create(
              b, at, steps.getResult(part), ArrayRef<int64_t>{half, pair});
          Value quotient = arith::DivFOp::create(b, at, element, total[half]);
          Value result = arith::SelectOp::create(b, at, any[half], quotient,
                                                 floatConstant(0.0));
          memref::StoreOp::create(
              b, at, arith::TruncFOp::create(b, at, outType, result), out,
              ValueRange{row, head, laneRow[half], column});
        }
        scf::YieldOp::create(b, at);
      });
    }
  // The next row or head's first copies wait for this one's last reads.
  gpu::BarrierOp::create(b, loc);
  rewriter.eraseOp(op);
  return success();
}

} // namespace linnet
