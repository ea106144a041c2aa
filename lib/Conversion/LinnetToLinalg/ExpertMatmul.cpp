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
// With many slots (at least `groupedSlotsPerExpert` per expert, 4 on a CPU:
// a prefill; decided at run time where the rows are dynamic) each expert's
// weights would be read once per slot that chose it. The grouped form reads
// them once per tile of slots instead, as vLLM's fused MoE does: the slots
// are sorted by expert (a counting sort: loops on a CPU, parallel linalg ops
// for a GPU, as vLLM's moe_align_block_size is a kernel) into tiles of
// `groupRows` rows (8 on a CPU, 64 for a GPU's tensor cores, fewer where
// the slots are static and few an expert), each expert's last tile padded;
// one matmul per tile against its expert's [O, I] weights, a tile of
// `outputTile` of its outputs a forall iteration (the forall over tiles is
// the dispatch region); and each slot's result gathered back from its
// sorted row.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace linnet::lowering {
namespace {

/// A new i32 tensor of `sizes` filled with `value`.
Value createFilledI32(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                      int32_t value) {
  Type i32 = b.getI32Type();
  Value empty = createEmpty(b, loc, sizes, i32);
  Value scalar = arith::ConstantIntOp::create(b, loc, i32, value);
  return linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{empty})
      .getResult(0);
}

/// Reads element `indices` of an i32 tensor as an index.
Value readIndex(OpBuilder &b, Location loc, Value tensor, ValueRange indices) {
  return toIndex(b, loc, tensor::ExtractOp::create(b, loc, tensor, indices));
}

/// Writes an index into an i32 tensor; returns the new tensor.
Value writeIndex(OpBuilder &b, Location loc, Value value, Value tensor,
                 ValueRange indices) {
  Value narrow = arith::IndexCastOp::create(b, loc, b.getI32Type(), value);
  return tensor::InsertOp::create(b, loc, narrow, tensor, indices);
}

/// The operands of one expert_matmul and their sizes.
struct Operands {
  Value input, weights, experts;
  RankedTensorType inputType, weightType;
  Type elementType;
  bool perSlot;
  SmallVector<OpFoldResult> expertSizes, weightSizes;
  OpFoldResult outSize, inSize;

  Operands(OpBuilder &b, ExpertMatmulOp op)
      : input(op.getInput()), weights(op.getWeights()),
        experts(op.getExperts()),
        inputType(cast<RankedTensorType>(input.getType())),
        weightType(cast<RankedTensorType>(weights.getType())),
        elementType(inputType.getElementType()),
        perSlot(inputType.getRank() == 3),
        expertSizes(getSizes(b, op.getLoc(), experts)),
        weightSizes(getSizes(b, op.getLoc(), weights)), outSize(weightSizes[1]),
        inSize(weightSizes[2]) {}

  /// Expert `e`'s [O, I] weights, a rank-reducing slice; with `rows` (a
  /// static count), only its rows first .. first + rows.
  Value expertMatrix(OpBuilder &b, Location loc, Value e,
                     OpFoldResult first = {}, int64_t rows = 0) const {
    OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
    auto matrixType = RankedTensorType::get(
        {rows ? rows : weightType.getDimSize(1), weightType.getDimSize(2)},
        weightType.getElementType());
    return tensor::ExtractSliceOp::create(
        b, loc, matrixType, weights,
        ArrayRef<OpFoldResult>{e, rows ? first : zero, zero},
        ArrayRef<OpFoldResult>{one, rows ? b.getIndexAttr(rows) : outSize,
                               inSize},
        ArrayRef<OpFoldResult>{one, one, one});
  }
};

/// experts[r, j] as an index, whether it names an expert (0 <= id < X), and
/// the id clamped to expert 0 where it does not.
std::pair<Value, Value> readExpert(OpBuilder &b, Location loc, Value experts,
                                   Value r, Value j, Value numExperts) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value id = readIndex(b, loc, experts, {r, j});
  Value valid = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, id, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, id, numExperts));
  return {valid, arith::SelectOp::create(b, loc, valid, id, zero)};
}

/// `value` where `present`, else zero of `elementType`.
Value zeroUnless(OpBuilder &b, Location loc, Value present, Value value,
                 Type elementType) {
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elementType));
  return arith::SelectOp::create(b, loc, present, value, zero);
}

/// Where slot p of the flattened [R, K] choices is, and its expert: `expert`
/// is clamped to 0 where it is not `valid`.
struct SlotExpert {
  Value row, slot, valid, expert;
};

/// The sizes of a grouped form's layout and the expert of each slot.
struct GroupLayout {
  Value rows, slots, numExperts, count;
  /// Rows a tile; at most one partly filled tile per expert, so at most
  /// maxTiles tiles and maxSorted sorted rows.
  Value tileRows, maxTiles, maxSorted;
  int64_t tileRowCount;

  GroupLayout(OpBuilder &b, Location loc, const Operands &o,
              int64_t tileRowCount)
      : tileRowCount(tileRowCount) {
    auto index = [&](OpFoldResult size) {
      return getValueOrCreateConstantIndexOp(b, loc, size);
    };
    rows = index(o.expertSizes[0]);
    slots = index(o.expertSizes[1]);
    numExperts = index(o.weightSizes[0]);
    count = arith::MulIOp::create(b, loc, rows, slots);
    tileRows = arith::ConstantIndexOp::create(b, loc, tileRowCount);
    maxTiles = arith::AddIOp::create(
        b, loc, arith::CeilDivUIOp::create(b, loc, count, tileRows),
        numExperts);
    maxSorted = arith::MulIOp::create(b, loc, maxTiles, tileRows);
  }

  /// The expert of slot p (r = p / K, j = p % K), and whether it is one.
  SlotExpert expertOf(OpBuilder &b, Location loc, Value experts,
                      Value p) const {
    Value r = arith::DivUIOp::create(b, loc, p, slots);
    Value j = arith::RemUIOp::create(b, loc, p, slots);
    auto [valid, id] = readExpert(b, loc, experts, r, j, numExperts);
    return SlotExpert{r, j, valid, id};
  }
};

/// Where the grouped form puts the slots: each slot's sorted row (-1: no
/// valid expert), each sorted row's slot (-1: padding), each tile's expert
/// (-1: a tile past the last) and the tiles its products run over.
struct SortedSlots {
  Value sortedRows, sources, tileExperts, tiles;
};

/// The counting sort as loops, one slot after another: the least work, and
/// the CPU's form (on a GPU the host would run it, waiting for the device).
SortedSlots sortSerially(OpBuilder &b, Location loc, const Operands &o,
                         const GroupLayout &g) {
  Value experts = o.experts;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value tileRows = g.tileRows;

  // 1. Slots per expert.
  Value counts = createFilledI32(b, loc, {o.weightSizes[0]}, 0);
  counts =
      scf::ForOp::create(
          b, loc, zero, g.count, one, ValueRange{counts},
          [&](OpBuilder &nb, Location, Value p, ValueRange carried) {
            SlotExpert slot = g.expertOf(nb, loc, experts, p);
            Value id = slot.expert;
            Value add = arith::SelectOp::create(nb, loc, slot.valid, one, zero);
            Value now = arith::AddIOp::create(
                nb, loc, readIndex(nb, loc, carried[0], {id}), add);
            scf::YieldOp::create(nb, loc,
                                 writeIndex(nb, loc, now, carried[0], {id}));
          })
          .getResult(0);

  // 2. Each expert's first sorted row (its tiles follow one another) and
  // each tile's expert.
  Value firstRows = createFilledI32(b, loc, {o.weightSizes[0]}, 0);
  Value tileExperts = createFilledI32(b, loc, {g.maxTiles}, -1);
  auto layout = scf::ForOp::create(
      b, loc, zero, g.numExperts, one, ValueRange{zero, firstRows, tileExperts},
      [&](OpBuilder &nb, Location, Value e, ValueRange carried) {
        Value tiles = arith::CeilDivUIOp::create(
            nb, loc, readIndex(nb, loc, counts, {e}), tileRows);
        Value first = arith::MulIOp::create(nb, loc, carried[0], tileRows);
        Value starts = writeIndex(nb, loc, first, carried[1], {e});
        Value end = arith::AddIOp::create(nb, loc, carried[0], tiles);
        Value owners =
            scf::ForOp::create(
                nb, loc, carried[0], end, one, ValueRange{carried[2]},
                [&](OpBuilder &ib, Location, Value t, ValueRange owned) {
                  scf::YieldOp::create(ib, loc,
                                       writeIndex(ib, loc, e, owned[0], {t}));
                })
                .getResult(0);
        scf::YieldOp::create(nb, loc, ValueRange{end, starts, owners});
      });
  Value numTiles = layout.getResult(0);
  firstRows = layout.getResult(1);
  tileExperts = layout.getResult(2);

  // 3. Each slot's sorted row and each sorted row's slot.
  Value sortedRows =
      createFilledI32(b, loc, {o.expertSizes[0], o.expertSizes[1]}, -1);
  Value sources = createFilledI32(b, loc, {g.maxSorted}, -1);
  auto sort = scf::ForOp::create(
      b, loc, zero, g.count, one, ValueRange{sortedRows, sources, firstRows},
      [&](OpBuilder &nb, Location, Value p, ValueRange carried) {
        SlotExpert slot = g.expertOf(nb, loc, experts, p);
        Value id = slot.expert;
        auto placed = scf::IfOp::create(
            nb, loc, slot.valid,
            [&](OpBuilder &tb, Location) {
              Value q = readIndex(tb, loc, carried[2], {id});
              Value next = arith::AddIOp::create(tb, loc, q, one);
              scf::YieldOp::create(
                  tb, loc,
                  ValueRange{
                      writeIndex(tb, loc, q, carried[0], {slot.row, slot.slot}),
                      writeIndex(tb, loc, p, carried[1], {q}),
                      writeIndex(tb, loc, next, carried[2], {id})});
            },
            [&](OpBuilder &eb, Location) {
              scf::YieldOp::create(eb, loc, carried);
            });
        scf::YieldOp::create(nb, loc, placed.getResults());
      });
  return {sort.getResult(0), sort.getResult(1), tileExperts, numTiles};
}

/// Slots a chunk of the parallel sort: each slot's rank among its chunk's
/// slots of the same expert is a sum over the chunk, each expert's start in
/// a chunk a sum over the chunks before it.
constexpr int64_t kSortChunk = 256;

/// An operand of `size` elements that only gives a linalg op a reduction
/// loop no other operand bounds (its body reads linalg.index instead): an
/// empty tensor, which no region takes in, where a computed range would be
/// taken into each of its readers' regions as a tile of no bound.
Value loopBound(OpBuilder &b, Location loc, Value size) {
  return createEmpty(b, loc, {size}, b.getI8Type());
}

/// The same sort as linalg ops free of loops over slots, each element a sum
/// or a search over at most a chunk, the chunks or the experts, all of them
/// parallel: a GPU's kernels, with no wait for the host. The tiles are
/// maxTiles, those past the last of expert -1.
SortedSlots sortInParallel(OpBuilder &b, Location loc, const Operands &o,
                           const GroupLayout &g) {
  MLIRContext *context = b.getContext();
  Type i32 = b.getI32Type();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value chunk = arith::ConstantIndexOp::create(b, loc, kSortChunk);
  // At least one chunk, so that a search with no slots reads in bounds.
  Value chunks = arith::MaxUIOp::create(
      b, loc, arith::CeilDivUIOp::create(b, loc, g.count, chunk),
      arith::ConstantIndexOp::create(b, loc, 1));
  Value chunksAndOne = arith::AddIOp::create(
      b, loc, chunks, arith::ConstantIndexOp::create(b, loc, 1));
  auto i32Constant = [&](OpBuilder &nb, Location nloc, int64_t value) {
    return arith::ConstantIntOp::create(nb, nloc, i32, value);
  };
  auto asI32 = [&](OpBuilder &nb, Location nloc, Value index) {
    return arith::IndexCastOp::create(nb, nloc, i32, index).getResult();
  };
  auto countIf = [&](OpBuilder &nb, Location nloc, Value acc, Value hit) {
    return arith::AddIOp::create(nb, nloc, acc,
                                 arith::ExtUIOp::create(nb, nloc, i32, hit))
        .getResult();
  };
  auto cmp = [&](OpBuilder &nb, Location nloc, arith::CmpIPredicate predicate,
                 Value lhs, Value rhs) {
    return arith::CmpIOp::create(nb, nloc, predicate, lhs, rhs).getResult();
  };
  auto andOf = [&](OpBuilder &nb, Location nloc, Value lhs, Value rhs) {
    return arith::AndIOp::create(nb, nloc, lhs, rhs).getResult();
  };
  OpFoldResult chunkSize = b.getIndexAttr(kSortChunk);
  OpFoldResult experts = o.weightSizes[0];

  // 1. ids[c, i]: the expert of slot c * C + i, -1 past the last slot or
  // where it names none.
  Value ids =
      createGeneric(
          b, loc, ValueRange{},
          ValueRange{createEmpty(b, loc, {chunks, chunkSize}, i32)},
          {projection(context, 2, {0, 1})}, iterators(2),
          [&](OpBuilder &nb, Location nloc, ValueRange) {
            Value p = arith::AddIOp::create(
                nb, nloc,
                arith::MulIOp::create(
                    nb, nloc, linalg::IndexOp::create(nb, nloc, 0), chunk),
                linalg::IndexOp::create(nb, nloc, 1));
            Value inside = cmp(nb, nloc, arith::CmpIPredicate::ult, p, g.count);
            Value at = arith::SelectOp::create(nb, nloc, inside, p, zero);
            SlotExpert slot = g.expertOf(nb, nloc, o.experts, at);
            linalg::YieldOp::create(
                nb, nloc,
                arith::SelectOp::create(
                    nb, nloc, andOf(nb, nloc, inside, slot.valid),
                    asI32(nb, nloc, slot.expert), i32Constant(nb, nloc, -1))
                    .getResult());
          })
          .getResult(0);

  // 2. chunkCounts[c, e]: the slots of chunk c that chose expert e.
  Value chunkCounts =
      createGeneric(
          b, loc, ValueRange{ids},
          ValueRange{createFilledI32(b, loc, {chunks, experts}, 0)},
          {projection(context, 3, {0, 2}), projection(context, 3, {0, 1})},
          iterators(2, 1),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value e = asI32(nb, nloc, linalg::IndexOp::create(nb, nloc, 1));
            linalg::YieldOp::create(
                nb, nloc,
                countIf(nb, nloc, args[1],
                        cmp(nb, nloc, arith::CmpIPredicate::eq, args[0], e)));
          })
          .getResult(0);

  // An exclusive prefix sum as a reduction: the sum of term(input) over
  // the iterations whose reduction loop (the last of `loops`) is below loop
  // 0, into a new tensor of `sizes` (output map: the parallel loops).
  auto sumBefore = [&](Value input, ArrayRef<OpFoldResult> sizes,
                       unsigned loops, ArrayRef<unsigned> inputDims,
                       function_ref<Value(OpBuilder &, Location, Value)> term) {
    SmallVector<unsigned> parallel =
        llvm::to_vector(llvm::seq<unsigned>(0, loops - 1));
    return createGeneric(
               b, loc, ValueRange{input},
               ValueRange{createFilledI32(b, loc, sizes, 0)},
               {projection(context, loops, inputDims),
                projection(context, loops, parallel)},
               iterators(loops - 1, 1),
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 Value before =
                     cmp(nb, nloc, arith::CmpIPredicate::ult,
                         linalg::IndexOp::create(nb, nloc, loops - 1),
                         linalg::IndexOp::create(nb, nloc, 0));
                 Value add = arith::SelectOp::create(nb, nloc, before,
                                                     term(nb, nloc, args[0]),
                                                     i32Constant(nb, nloc, 0));
                 linalg::YieldOp::create(
                     nb, nloc,
                     arith::AddIOp::create(nb, nloc, args[1], add).getResult());
               })
        .getResult(0);
  };

  // 3. starts[c, e]: expert e's slots in the chunks before c, for c up to
  // the last chunk and one past it (there: all of e's slots, counts[e]).
  Value starts =
      sumBefore(chunkCounts, {chunksAndOne, experts}, 3, {2, 1},
                [](OpBuilder &, Location, Value count) { return count; });
  OpFoldResult one = b.getIndexAttr(1);
  Value counts = tensor::ExtractSliceOp::create(
      b, loc,
      RankedTensorType::get(
          {getConstantIntValue(experts).value_or(ShapedType::kDynamic)}, i32),
      starts, ArrayRef<OpFoldResult>{chunks, b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{one, experts}, ArrayRef<OpFoldResult>{one, one});

  // 4. tilesBefore[e]: the tiles of the experts before e.
  Value tileRows = i32Constant(b, loc, g.tileRowCount);
  auto tilesOf = [&](OpBuilder &nb, Location nloc, Value count) {
    return arith::CeilDivSIOp::create(nb, nloc, count, tileRows).getResult();
  };
  Value tilesBefore = sumBefore(counts, {experts}, 2, {1}, tilesOf);

  // 5. tileExperts[t]: the expert whose tiles hold t, -1 past the last.
  Value tileExperts =
      createGeneric(
          b, loc, ValueRange{counts, tilesBefore},
          ValueRange{createFilledI32(b, loc, {g.maxTiles}, -1)},
          {projection(context, 2, {1}), projection(context, 2, {1}),
           projection(context, 2, {0})},
          iterators(1, 1),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value t = asI32(nb, nloc, linalg::IndexOp::create(nb, nloc, 0));
            Value e = asI32(nb, nloc, linalg::IndexOp::create(nb, nloc, 1));
            Value end = arith::AddIOp::create(nb, nloc, args[1],
                                              tilesOf(nb, nloc, args[0]));
            Value inside = andOf(
                nb, nloc, cmp(nb, nloc, arith::CmpIPredicate::sle, args[1], t),
                cmp(nb, nloc, arith::CmpIPredicate::slt, t, end));
            Value mine = arith::SelectOp::create(nb, nloc, inside, e,
                                                 i32Constant(nb, nloc, -1));
            linalg::YieldOp::create(
                nb, nloc,
                arith::MaxSIOp::create(nb, nloc, args[2], mine).getResult());
          })
          .getResult(0);

  // 6. ranks[c, j]: the slots of chunk c before j of slot j's expert.
  Value ranks =
      createGeneric(
          b, loc, ValueRange{ids, ids},
          ValueRange{createFilledI32(b, loc, {chunks, chunkSize}, 0)},
          {projection(context, 3, {0, 2}), projection(context, 3, {0, 1}),
           projection(context, 3, {0, 1})},
          iterators(2, 1),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value before = cmp(nb, nloc, arith::CmpIPredicate::ult,
                               linalg::IndexOp::create(nb, nloc, 2),
                               linalg::IndexOp::create(nb, nloc, 1));
            Value same =
                cmp(nb, nloc, arith::CmpIPredicate::eq, args[0], args[1]);
            linalg::YieldOp::create(
                nb, nloc,
                countIf(nb, nloc, args[2], andOf(nb, nloc, before, same)));
          })
          .getResult(0);

  // 7. sortedRows[r, j] = tilesBefore[e] * T + starts[c, e] + ranks[c, i]
  // for slot p = r * K + j = c * C + i of expert e; -1 where it has none.
  Value sortedRows =
      createGeneric(
          b, loc, ValueRange{},
          ValueRange{
              createEmpty(b, loc, {o.expertSizes[0], o.expertSizes[1]}, i32)},
          {projection(context, 2, {0, 1})}, iterators(2),
          [&](OpBuilder &nb, Location nloc, ValueRange) {
            Value p = arith::AddIOp::create(
                nb, nloc,
                arith::MulIOp::create(
                    nb, nloc, linalg::IndexOp::create(nb, nloc, 0), g.slots),
                linalg::IndexOp::create(nb, nloc, 1));
            SlotExpert slot = g.expertOf(nb, nloc, o.experts, p);
            Value c = arith::DivUIOp::create(nb, nloc, p, chunk);
            Value i = arith::RemUIOp::create(nb, nloc, p, chunk);
            Value first = arith::MulIOp::create(
                nb, nloc,
                tensor::ExtractOp::create(nb, nloc, tilesBefore,
                                          ValueRange{slot.expert}),
                tileRows);
            Value row = arith::AddIOp::create(
                nb, nloc,
                arith::AddIOp::create(
                    nb, nloc, first,
                    tensor::ExtractOp::create(nb, nloc, starts,
                                              ValueRange{c, slot.expert})),
                tensor::ExtractOp::create(nb, nloc, ranks, ValueRange{c, i}));
            linalg::YieldOp::create(
                nb, nloc,
                arith::SelectOp::create(nb, nloc, slot.valid, row,
                                        i32Constant(nb, nloc, -1))
                    .getResult());
          })
          .getResult(0);

  // Sorted row q's expert e (clamped to 0 where its tile has none), its
  // rank k among e's slots, and whether it is one of them (not padding).
  struct SortedRow {
    Value expert, rank, present;
  };
  auto sortedRow = [&](OpBuilder &nb, Location nloc, Value q) {
    Value t = arith::DivUIOp::create(
        nb, nloc, q, arith::ConstantIndexOp::create(nb, nloc, g.tileRowCount));
    Value id = tensor::ExtractOp::create(nb, nloc, tileExperts, ValueRange{t});
    Value owned =
        cmp(nb, nloc, arith::CmpIPredicate::sge, id, i32Constant(nb, nloc, 0));
    Value e = toIndex(
        nb, nloc,
        arith::SelectOp::create(nb, nloc, owned, id, i32Constant(nb, nloc, 0)));
    Value first = arith::MulIOp::create(
        nb, nloc, tensor::ExtractOp::create(nb, nloc, tilesBefore, e),
        tileRows);
    Value k = arith::SubIOp::create(nb, nloc, asI32(nb, nloc, q), first);
    Value present = andOf(nb, nloc, owned,
                          cmp(nb, nloc, arith::CmpIPredicate::slt, k,
                              tensor::ExtractOp::create(nb, nloc, counts, e)));
    return SortedRow{e, k, present};
  };

  // 8. sourceChunks[q]: the chunks c whose starts[c, e] <= k; sorted row q
  // comes from the last of them (where q is one of e's slots).
  Value sourceChunks =
      createGeneric(
          b, loc, ValueRange{loopBound(b, loc, chunksAndOne)},
          ValueRange{createFilledI32(b, loc, {g.maxSorted}, 0)},
          {projection(context, 2, {1}), projection(context, 2, {0})},
          iterators(1, 1),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            SortedRow row =
                sortedRow(nb, nloc, linalg::IndexOp::create(nb, nloc, 0));
            Value start = tensor::ExtractOp::create(
                nb, nloc, starts,
                ValueRange{linalg::IndexOp::create(nb, nloc, 1), row.expert});
            linalg::YieldOp::create(
                nb, nloc,
                countIf(
                    nb, nloc, args[1],
                    cmp(nb, nloc, arith::CmpIPredicate::sle, start, row.rank)));
          })
          .getResult(0);

  // 9. sources[q]: the slot c * C + i of that chunk whose rank among e's
  // slots is k; -1 for padding.
  Value sources =
      createGeneric(
          b, loc, ValueRange{loopBound(b, loc, chunk), sourceChunks},
          ValueRange{createFilledI32(b, loc, {g.maxSorted}, -1)},
          {projection(context, 2, {1}), projection(context, 2, {0}),
           projection(context, 2, {0})},
          iterators(1, 1),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            SortedRow row =
                sortedRow(nb, nloc, linalg::IndexOp::create(nb, nloc, 0));
            Value last = arith::SubIOp::create(nb, nloc, args[1],
                                               i32Constant(nb, nloc, 1));
            Value c =
                toIndex(nb, nloc,
                        arith::SelectOp::create(nb, nloc, row.present, last,
                                                i32Constant(nb, nloc, 0)));
            Value i = linalg::IndexOp::create(nb, nloc, 1);
            Value id =
                tensor::ExtractOp::create(nb, nloc, ids, ValueRange{c, i});
            Value rank = arith::AddIOp::create(
                nb, nloc,
                tensor::ExtractOp::create(nb, nloc, starts,
                                          ValueRange{c, row.expert}),
                tensor::ExtractOp::create(nb, nloc, ranks, ValueRange{c, i}));
            Value match = andOf(
                nb, nloc, row.present,
                andOf(nb, nloc,
                      cmp(nb, nloc, arith::CmpIPredicate::eq, id,
                          asI32(nb, nloc, row.expert)),
                      cmp(nb, nloc, arith::CmpIPredicate::eq, rank, row.rank)));
            Value p = asI32(
                nb, nloc,
                arith::AddIOp::create(
                    nb, nloc, arith::MulIOp::create(nb, nloc, c, chunk), i));
            linalg::YieldOp::create(
                nb, nloc,
                arith::SelectOp::create(nb, nloc, match, p, args[2])
                    .getResult());
          })
          .getResult(0);
  return {sortedRows, sources, tileExperts, g.maxTiles};
}

/// The grouped form (see the file comment): y [R, K, O].
Value lowerGrouped(OpBuilder &b, Location loc, const Operands &o,
                   int64_t tileRowCount, int64_t outputTile,
                   bool parallelSort) {
  MLIRContext *context = b.getContext();
  Value input = o.input;
  Type elementType = o.elementType;
  const SmallVector<OpFoldResult> &expertSizes = o.expertSizes;
  OpFoldResult outSize = o.outSize, inSize = o.inSize;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  GroupLayout g(b, loc, o, tileRowCount);
  Value slots = g.slots, tileRows = g.tileRows, maxSorted = g.maxSorted;
  int64_t groupRows = tileRowCount;
  SortedSlots sorted =
      parallelSort ? sortInParallel(b, loc, o, g) : sortSerially(b, loc, o, g);
  Value sortedRows = sorted.sortedRows, sources = sorted.sources,
        tileExperts = sorted.tileExperts, numTiles = sorted.tiles;

  // 4. The inputs in sorted order, zeros in padding rows.
  Value sortedInput = createEmpty(b, loc, {maxSorted, inSize}, elementType);
  sortedInput =
      createGeneric(
          b, loc, ValueRange{sources}, ValueRange{sortedInput},
          {projection(context, 2, {0}), projection(context, 2, {0, 1})},
          iterators(2),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value source = toIndex(nb, nloc, args[0]);
            Value present = arith::CmpIOp::create(
                nb, nloc, arith::CmpIPredicate::sge, source, zero);
            Value slot =
                arith::SelectOp::create(nb, nloc, present, source, zero);
            Value i = linalg::IndexOp::create(nb, nloc, 1);
            SmallVector<Value> at = {
                arith::DivUIOp::create(nb, nloc, slot, slots)};
            if (o.perSlot)
              at.push_back(arith::RemUIOp::create(nb, nloc, slot, slots));
            at.push_back(i);
            Value value = tensor::ExtractOp::create(nb, nloc, input, at);
            linalg::YieldOp::create(
                nb, nloc, zeroUnless(nb, nloc, present, value, elementType));
          })
          .getResult(0);

  // 5. One matmul per tile against its expert's weights, `outputTile` of
  // its outputs an iteration where that divides the expert's static
  // outputs (all of them otherwise).
  std::optional<int64_t> outputs = getConstantIntValue(outSize);
  int64_t columns = outputTile > 0 && outputs && *outputs > outputTile &&
                            *outputs % outputTile == 0
                        ? outputTile
                        : 0;
  SmallVector<OpFoldResult> tileCounts = {numTiles};
  if (columns)
    tileCounts.push_back(b.getIndexAttr(*outputs / columns));
  Value sortedOutput = createEmpty(b, loc, {maxSorted, outSize}, elementType);
  auto forall = scf::ForallOp::create(b, loc, tileCounts,
                                      ValueRange{sortedOutput}, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    Value t = forall.getInductionVar(0);
    // A tile past the last (the parallel sort's grid) computes zeros from
    // expert 0's weights, which no slot reads.
    Value e = arith::MaxSIOp::create(b, loc,
                                     readIndex(b, loc, tileExperts, {t}), zero);
    Value first = arith::MulIOp::create(b, loc, t, tileRows);
    OpFoldResult zeroIndex = b.getIndexAttr(0), oneIndex = b.getIndexAttr(1),
                 tileSize = b.getIndexAttr(groupRows);
    OpFoldResult firstOutput = zeroIndex, tileOutputs = outSize;
    if (columns) {
      firstOutput =
          arith::MulIOp::create(b, loc, forall.getInductionVar(1),
                                arith::ConstantIndexOp::create(b, loc, columns))
              .getResult();
      tileOutputs = b.getIndexAttr(columns);
    }
    Value matrix = o.expertMatrix(b, loc, e, firstOutput, columns);
    auto tileType = RankedTensorType::get(
        {groupRows, o.inputType.getShape().back()}, elementType);
    Value tile = tensor::ExtractSliceOp::create(
        b, loc, tileType, sortedInput, ArrayRef<OpFoldResult>{first, zeroIndex},
        ArrayRef<OpFoldResult>{tileSize, inSize},
        ArrayRef<OpFoldResult>{oneIndex, oneIndex});
    // out[m, o] = sum_i tile[m, i] * w[o, i] in f32, loops m o i.
    Value sums = createContraction(
        b, loc, tile, matrix, {tileSize, tileOutputs},
        {projection(context, 3, {0, 2}), projection(context, 3, {1, 2}),
         projection(context, 3, {0, 1})},
        2);
    Value rounded = roundTensor(b, loc, sums, elementType);
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        b, loc, rounded, forall.getRegionIterArgs()[0],
        ArrayRef<OpFoldResult>{first, firstOutput},
        ArrayRef<OpFoldResult>{tileSize, tileOutputs},
        ArrayRef<OpFoldResult>{oneIndex, oneIndex});
  }

  // 6. Each slot's result from its sorted row; zeros for an invalid id.
  Value result = createEmpty(b, loc, {expertSizes[0], expertSizes[1], outSize},
                             elementType);
  Value sortedResults = forall.getResult(0);
  return createGeneric(
             b, loc, ValueRange{sortedRows}, ValueRange{result},
             {projection(context, 3, {0, 1}),
              projection(context, 3, {0, 1, 2})},
             iterators(3),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value row = toIndex(nb, nloc, args[0]);
               Value present = arith::CmpIOp::create(
                   nb, nloc, arith::CmpIPredicate::sge, row, zero);
               Value at = arith::SelectOp::create(nb, nloc, present, row, zero);
               Value o = linalg::IndexOp::create(nb, nloc, 2);
               Value value = tensor::ExtractOp::create(nb, nloc, sortedResults,
                                                       ValueRange{at, o});
               linalg::YieldOp::create(
                   nb, nloc, zeroUnless(nb, nloc, present, value, elementType));
             })
      .getResult(0);
}

/// Slot j of row r's product, its outputs first .. first + rows (all where
/// `rows` is 0), rounded to the element type; zeros where the slot's id
/// names no expert (which reads the in-bounds expert 0 and discards it).
Value slotProduct(OpBuilder &b, Location loc, const Operands &o, Value r,
                  Value j, Value numExperts, OpFoldResult first, int64_t rows) {
  MLIRContext *context = b.getContext();
  auto [valid, expert] = readExpert(b, loc, o.experts, r, j, numExperts);
  // w[expert] : [O, I] and x[r, (j,)] : [I], rank-reducing slices.
  Value matrix = o.expertMatrix(b, loc, expert, first, rows);
  OpFoldResult outSize = rows ? b.getIndexAttr(rows) : o.outSize;
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  auto vectorType =
      RankedTensorType::get({o.inputType.getShape().back()}, o.elementType);
  SmallVector<OpFoldResult> offsets = {r}, sizes = {one};
  if (o.perSlot) {
    offsets.push_back(j);
    sizes.push_back(one);
  }
  offsets.push_back(zero);
  sizes.push_back(o.inSize);
  SmallVector<OpFoldResult> strides(offsets.size(), one);
  Value vector = tensor::ExtractSliceOp::create(b, loc, vectorType, o.input,
                                                offsets, sizes, strides);
  // y[o] = sum_i w[o, i] * x[i] in f32, loops o i.
  Value sums = createContraction(b, loc, matrix, vector, {outSize},
                                 {projection(context, 2, {0, 1}),
                                  projection(context, 2, {1}),
                                  projection(context, 2, {0})},
                                 1);
  // Rounded and zeroed in one op: a select of two whole tensors would leave
  // bufferization two buffers to choose from for the one slice it lands in.
  Value init = createEmpty(b, loc, {outSize}, o.elementType);
  AffineMap identity = b.getMultiDimIdentityMap(1);
  return createGeneric(
             b, loc, sums, init, {identity, identity}, iterators(1),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value rounded = roundFromF32(nb, nloc, args[0], o.elementType);
               linalg::YieldOp::create(
                   nb, nloc,
                   zeroUnless(nb, nloc, valid, rounded, o.elementType));
             })
      .getResult(0);
}

/// The form with one matrix-vector product per slot (see the file comment),
/// `outputTile` outputs of it per iteration of the forall where that divides
/// the expert's static output size (else all of them).
Value lowerPerSlot(OpBuilder &rewriter, Location loc, const Operands &o,
                   int64_t outputTile) {
  Type elementType = o.elementType;
  const SmallVector<OpFoldResult> &expertSizes = o.expertSizes;
  OpFoldResult outSize = o.outSize;
  Value numExperts =
      getValueOrCreateConstantIndexOp(rewriter, loc, o.weightSizes[0]);
  Value result = createEmpty(
      rewriter, loc, {expertSizes[0], expertSizes[1], outSize}, elementType);
  OpFoldResult zeroIndex = rewriter.getIndexAttr(0),
               oneIndex = rewriter.getIndexAttr(1);
  std::optional<int64_t> outputs = getConstantIntValue(outSize);
  int64_t tile = outputTile > 0 && outputs && *outputs > outputTile &&
                         *outputs % outputTile == 0
                     ? outputTile
                     : 0;

  SmallVector<OpFoldResult> counts = {expertSizes[0], expertSizes[1]};
  if (tile)
    counts.push_back(rewriter.getIndexAttr(*outputs / tile));
  auto forall = scf::ForallOp::create(rewriter, loc, counts, ValueRange{result},
                                      std::nullopt);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(forall.getBody());
  Value r = forall.getInductionVar(0), j = forall.getInductionVar(1);
  OpFoldResult first = zeroIndex;
  if (tile) {
    first = arith::MulIOp::create(
                rewriter, loc, forall.getInductionVar(2),
                arith::ConstantIndexOp::create(rewriter, loc, tile))
                .getResult();
    outSize = rewriter.getIndexAttr(tile);
  }
  Value slotResult =
      slotProduct(rewriter, loc, o, r, j, numExperts, first, tile);

  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, slotResult, forall.getRegionIterArgs()[0],
      ArrayRef<OpFoldResult>{r, j, first},
      ArrayRef<OpFoldResult>{oneIndex, oneIndex, outSize},
      ArrayRef<OpFoldResult>{oneIndex, oneIndex, oneIndex});

  return forall.getResult(0);
}

/// The per-slot form of a tile inside a region (the slots' products a
/// consumer's region took in: a decode's expert outputs under the
/// combination that weighs them): loops over the tile's rows and slots, one
/// product of all the tile's outputs each, in the region's block; a forall
/// there would be a region in a region.
Value lowerPerSlotInLoops(OpBuilder &b, Location loc, const Operands &o) {
  Type elementType = o.elementType;
  OpFoldResult zeroIndex = b.getIndexAttr(0), oneIndex = b.getIndexAttr(1);
  auto index = [&](OpFoldResult size) {
    return getValueOrCreateConstantIndexOp(b, loc, size);
  };
  Value numExperts = index(o.weightSizes[0]);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value result = createEmpty(
      b, loc, {o.expertSizes[0], o.expertSizes[1], o.outSize}, elementType);
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, ValueRange{zero, zero},
      ValueRange{index(o.expertSizes[0]), index(o.expertSizes[1])},
      ValueRange{one, one}, ValueRange{result},
      [&](OpBuilder &nb, Location nloc, ValueRange ivs,
          ValueRange acc) -> scf::ValueVector {
        Value r = ivs[0], j = ivs[1];
        Value slotResult =
            slotProduct(nb, nloc, o, r, j, numExperts, zeroIndex, /*rows=*/0);
        Value updated = tensor::InsertSliceOp::create(
            nb, nloc, slotResult, acc[0],
            ArrayRef<OpFoldResult>{r, j, zeroIndex},
            ArrayRef<OpFoldResult>{oneIndex, oneIndex, o.outSize},
            ArrayRef<OpFoldResult>{oneIndex, oneIndex, oneIndex});
        return {updated};
      });
  return nest.results.front();
}

/// Whether `slots` slots (rows times slots a row) over `experts` experts
/// take the per-slot form: fewer than `slotsPerExpert` an expert.
bool fewSlotsPerExpert(int64_t slots, int64_t experts, double slotsPerExpert) {
  return static_cast<double>(slots) <
         static_cast<double>(experts) * slotsPerExpert;
}

/// Whether `o` takes the per-slot form, where its sizes tell.
std::optional<bool> perSlotForm(const Operands &o, double slotsPerExpert) {
  std::optional<int64_t> rows = getConstantIntValue(o.expertSizes[0]),
                         slots = getConstantIntValue(o.expertSizes[1]),
                         experts = getConstantIntValue(o.weightSizes[0]);
  if (!rows || !slots || !experts)
    return std::nullopt;
  return fewSlotsPerExpert(*rows * *slots, *experts, slotsPerExpert);
}

/// Rows a tile of the grouped form: `groupRows`, or where the slots are
/// static and fewer an expert, the power of two at or above the slots an
/// expert has on average, at least a tensor core's 16 rows (a decode step
/// of 64 rows: 2 slots an expert, tiles of 16, not 64 rows mostly padding).
int64_t groupTileRows(const Operands &o, int64_t groupRows) {
  constexpr int64_t kFewestTileRows = 16;
  std::optional<int64_t> rows = getConstantIntValue(o.expertSizes[0]),
                         slots = getConstantIntValue(o.expertSizes[1]),
                         experts = getConstantIntValue(o.weightSizes[0]);
  if (!rows || !slots || !experts || *experts < 1)
    return groupRows;
  int64_t average = llvm::divideCeil(*rows * *slots, *experts);
  return std::min<int64_t>(
      groupRows,
      std::max<int64_t>(kFewestTileRows,
                        llvm::PowerOf2Ceil(std::max<int64_t>(average, 1))));
}

struct ExpertMatmulLowering : OpRewritePattern<ExpertMatmulOp> {
  ExpertMatmulLowering(MLIRContext *context, const ExpertMatmulOptions &options)
      : OpRewritePattern(context), options(options) {}
  ExpertMatmulOptions options;

  LogicalResult matchAndRewrite(ExpertMatmulOp op,
                                PatternRewriter &rewriter) const override {
    Operands operands(rewriter, op);
    Location loc = op.getLoc();
    Type resultType = op.getResult().getType();
    if (options.slotLoopsInRegions && op->getParentOfType<scf::ForallOp>() &&
        perSlotForm(operands, options.groupedSlotsPerExpert) == true) {
      rewriter.replaceOp(
          op, castIfNeeded(rewriter, loc,
                           lowerPerSlotInLoops(rewriter, loc, operands),
                           resultType));
      return success();
    }
    int64_t tileRows = groupTileRows(operands, options.groupRows);
    auto lower = [&](OpBuilder &b, Location l, bool grouped) {
      Value result = grouped ? lowerGrouped(b, l, operands, tileRows,
                                            tileRows == options.groupRows &&
                                                    options.groupOutputTile > 0
                                                ? options.groupOutputTile
                                                : options.outputTile,
                                            options.parallelSort)
                             : lowerPerSlot(b, l, operands, options.outputTile);
      return castIfNeeded(b, l, result, resultType);
    };
    // The grouped form pays from groupedSlotsPerExpert slots per expert:
    // decided here where the sizes are static, at run time where they are
    // not (a block function that both prefill and decode call). Where the
    // experts are a run-time count the ratio is taken in 1024ths.
    Value result;
    if (std::optional<bool> few =
            perSlotForm(operands, options.groupedSlotsPerExpert)) {
      result = lower(rewriter, loc, !*few);
    } else {
      auto index = [&](OpFoldResult size) {
        return getValueOrCreateConstantIndexOp(rewriter, loc, size);
      };
      auto constant = [&](int64_t value) {
        return arith::ConstantIndexOp::create(rewriter, loc, value);
      };
      Value count = rewriter.createOrFold<arith::MulIOp>(
          loc, index(operands.expertSizes[0]), index(operands.expertSizes[1]));
      Value threshold = rewriter.createOrFold<arith::CeilDivUIOp>(
          loc,
          rewriter.createOrFold<arith::MulIOp>(
              loc, index(operands.weightSizes[0]),
              constant(std::llround(options.groupedSlotsPerExpert * 1024))),
          constant(1024));
      Value many = rewriter.createOrFold<arith::CmpIOp>(
          loc, arith::CmpIPredicate::uge, count, threshold);
      auto choice = scf::IfOp::create(
          rewriter, loc, many,
          [&](OpBuilder &b, Location l) {
            scf::YieldOp::create(b, l, lower(b, l, true));
          },
          [&](OpBuilder &b, Location l) {
            scf::YieldOp::create(b, l, lower(b, l, false));
          });
      // What reads the product may take both forms with it (Codegen's
      // VersionTails.cpp).
      choice->setAttr(kFormChoiceName, rewriter.getUnitAttr());
      result = choice.getResult(0);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateExpertMatmulPatterns(RewritePatternSet &patterns,
                                  const ExpertMatmulOptions &options) {
  patterns.add<ExpertMatmulLowering>(patterns.getContext(), options);
}

bool isFusibleSlotProduct(Operation *op, double groupedSlotsPerExpert) {
  auto matmul = dyn_cast<ExpertMatmulOp>(op);
  if (!matmul || matmul->getParentOfType<scf::ForallOp>())
    return false;
  auto input = cast<RankedTensorType>(matmul.getInput().getType());
  auto weights = cast<RankedTensorType>(matmul.getWeights().getType());
  auto experts = cast<RankedTensorType>(matmul.getExperts().getType());
  return input.getRank() == 3 && input.hasStaticShape() &&
         weights.hasStaticShape() && experts.hasStaticShape() &&
         fewSlotsPerExpert(experts.getNumElements(), weights.getDimSize(0),
                           groupedSlotsPerExpert);
}

} // namespace linnet::lowering
