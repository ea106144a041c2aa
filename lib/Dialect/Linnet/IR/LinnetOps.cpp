//===- LinnetOps.cpp - linnet operation verifiers
//--------------------------===//
//
// Verifiers for the linnet operations. The type constraints of LinnetOps.td
// check element types and fixed ranks; these check what ties operands
// together: the ranks that vary, element types that must agree, and the
// static sizes that name the same dimension (dynamic sizes are not compared).
//
//===----------------------------------------------------------------------===//

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace linnet;

namespace {
/// One axis of one named operand or result.
struct Axis {
  StringRef name;
  Value value;
  int64_t axis;

  int64_t size() const {
    return cast<ShapedType>(value.getType()).getDimSize(axis);
  }
};
} // namespace

/// Checks that all static sizes of the axes that carry the dimension `dim`
/// are equal.
static LogicalResult verifySameDim(Operation *op, StringRef dim,
                                   ArrayRef<Axis> axes) {
  const Axis *first = nullptr;
  for (const Axis &axis : axes) {
    if (ShapedType::isDynamic(axis.size()))
      continue;
    if (!first) {
      first = &axis;
      continue;
    }
    if (axis.size() != first->size())
      return op->emitOpError()
             << "dimension `" << dim << "` mismatch: `" << first->name
             << "` axis " << first->axis << " is " << first->size() << " but `"
             << axis.name << "` axis " << axis.axis << " is " << axis.size();
  }
  return success();
}

/// Checks that `value` has rank `rank`; `layout` names its axes.
static LogicalResult verifyRank(Operation *op, StringRef name, Value value,
                                int64_t rank, StringRef layout) {
  int64_t actual = cast<ShapedType>(value.getType()).getRank();
  if (actual != rank)
    return op->emitOpError() << "expects `" << name << "` of rank " << rank
                             << " (" << layout << "), got rank " << actual;
  return success();
}

/// Checks that the named values share one element type.
static LogicalResult
verifySameElementType(Operation *op,
                      ArrayRef<std::pair<StringRef, Value>> values) {
  Type expected = getElementTypeOrSelf(values.front().second.getType());
  for (auto [name, value] : values.drop_front()) {
    Type actual = getElementTypeOrSelf(value.getType());
    if (actual != expected)
      return op->emitOpError()
             << "expects `" << name << "` to have element type " << expected
             << " like `" << values.front().first << "`, got " << actual;
  }
  return success();
}

static int64_t dimSize(Value value, int64_t axis) {
  return cast<ShapedType>(value.getType()).getDimSize(axis);
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  Operation *op = getOperation();
  // On tensors (one result, of the destination's type) or on buffers
  // (none), never a mix.
  bool onTensors = hasPureTensorSemantics();
  if (!onTensors && !hasPureBufferSemantics())
    return emitOpError("expects its operands all tensors or all buffers");
  unsigned results = onTensors ? 1 : 0;
  if (getNumResults() != results)
    return emitOpError() << "expects " << results << " result"
                         << (results == 1 ? "" : "s") << " on "
                         << (onTensors ? "tensors" : "buffers") << ", got "
                         << getNumResults();
  if (onTensors && getOutput().getType() != getInit().getType())
    return emitOpError() << "expects its result of its destination's type "
                         << getInit().getType() << ", got "
                         << getOutput().getType();
  Value q = getQuery(), k = getKey(), v = getValue(), out = getInit();
  if (failed(verifyRank(op, "query", q, 4, "[B, Hq, S, D]")) ||
      failed(verifyRank(op, "key", k, 4, "[B, Hk, L, D]")) ||
      failed(verifyRank(op, "value", v, 4, "[B, Hk, L, Dv]")) ||
      failed(verifyRank(op, "result", out, 4, "[B, Hq, S, Dv]")))
    return failure();
  if (failed(verifySameElementType(
          op, {{"query", q}, {"key", k}, {"value", v}, {"result", out}})))
    return failure();

  SmallVector<Axis> batch = {{"query", q, 0},
                             {"key", k, 0},
                             {"value", v, 0},
                             {"offset", getOffset(), 0},
                             {"result", out, 0}};
  if (Value lengths = getLengths())
    batch.push_back({"lengths", lengths, 0});
  if (failed(verifySameDim(op, "B", batch)) ||
      failed(verifySameDim(op, "Hq", {{"query", q, 1}, {"result", out, 1}})) ||
      failed(verifySameDim(op, "Hk", {{"key", k, 1}, {"value", v, 1}})) ||
      failed(verifySameDim(op, "S", {{"query", q, 2}, {"result", out, 2}})) ||
      failed(verifySameDim(op, "L", {{"key", k, 2}, {"value", v, 2}})) ||
      failed(verifySameDim(op, "D", {{"query", q, 3}, {"key", k, 3}})) ||
      failed(verifySameDim(op, "Dv", {{"value", v, 3}, {"result", out, 3}})))
    return failure();

  int64_t queryHeads = dimSize(q, 1), keyHeads = dimSize(k, 1);
  if (keyHeads == 0)
    return emitOpError() << "expects at least one key head";
  if (!ShapedType::isDynamic(queryHeads) && !ShapedType::isDynamic(keyHeads) &&
      queryHeads % keyHeads != 0)
    return emitOpError() << "expects the " << keyHeads
                         << " key heads to divide the " << queryHeads
                         << " query heads";
  return success();
}

void AttentionOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // On tensors none; on buffers it reads its inputs and writes `init`.
  if (hasPureTensorSemantics())
    return;
  for (OpOperand &operand : getOperation()->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    if (isDpsInit(&operand))
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    else
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}

Speculation::Speculatability AttentionOp::getSpeculatability() {
  return hasPureTensorSemantics() ? Speculation::Speculatable
                                  : Speculation::NotSpeculatable;
}

//===----------------------------------------------------------------------===//
// DeltaRuleOp
//===----------------------------------------------------------------------===//

LogicalResult DeltaRuleOp::verify() {
  Operation *op = getOperation();
  // On tensors (two results) or on buffers (none), never a mix.
  bool onTensors = hasPureTensorSemantics();
  if (!onTensors && !hasPureBufferSemantics())
    return emitOpError("expects its operands all tensors or all buffers");
  unsigned results = onTensors ? 2 : 0;
  if (getNumResults() != results)
    return emitOpError() << "expects " << results << " results on "
                         << (onTensors ? "tensors" : "buffers") << ", got "
                         << getNumResults();
  Value q = getQuery(), k = getKey(), v = getValue(), beta = getBeta(),
        g = getGate(), init = getInitial(), lengths = getLengths(),
        out = onTensors ? getOutput() : getOutputInit(),
        fin = onTensors ? getFinalState() : getInitial();
  if (failed(verifyRank(op, "query", q, 4, "[B, S, N, K]")) ||
      failed(verifyRank(op, "key", k, 4, "[B, S, N, K]")) ||
      failed(verifyRank(op, "value", v, 4, "[B, S, N, V]")) ||
      failed(verifyRank(op, "beta", beta, 3, "[B, S, N]")) ||
      failed(verifyRank(op, "gate", g, 3, "[B, S, N]")) ||
      failed(verifyRank(op, "initial", init, 4, "[B, N, K, V]")) ||
      failed(verifyRank(op, "output", out, 4, "[B, S, N, V]")) ||
      failed(verifyRank(op, "final_state", fin, 4, "[B, N, K, V]")))
    return failure();
  if (failed(verifySameDim(op, "B",
                           {{"query", q, 0},
                            {"key", k, 0},
                            {"value", v, 0},
                            {"beta", beta, 0},
                            {"gate", g, 0},
                            {"initial", init, 0},
                            {"lengths", lengths, 0},
                            {"output", out, 0},
                            {"final_state", fin, 0}})) ||
      failed(verifySameDim(op, "S",
                           {{"query", q, 1},
                            {"key", k, 1},
                            {"value", v, 1},
                            {"beta", beta, 1},
                            {"gate", g, 1},
                            {"output", out, 1}})) ||
      failed(verifySameDim(op, "N",
                           {{"query", q, 2},
                            {"key", k, 2},
                            {"value", v, 2},
                            {"beta", beta, 2},
                            {"gate", g, 2},
                            {"initial", init, 1},
                            {"output", out, 2},
                            {"final_state", fin, 1}})) ||
      failed(verifySameDim(op, "K",
                           {{"query", q, 3},
                            {"key", k, 3},
                            {"initial", init, 2},
                            {"final_state", fin, 2}})) ||
      failed(verifySameDim(op, "V",
                           {{"value", v, 3},
                            {"initial", init, 3},
                            {"output", out, 3},
                            {"final_state", fin, 3}})))
    return failure();
  return success();
}

void DeltaRuleOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // On tensors none; on buffers it reads every operand (the output's
  // destination too, as a destination-style op declares) and writes its
  // destinations.
  if (hasPureTensorSemantics())
    return;
  for (OpOperand &operand : getOperation()->getOpOperands()) {
    effects.emplace_back(MemoryEffects::Read::get(), &operand,
                         SideEffects::DefaultResource::get());
    if (isDpsInit(&operand))
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}

void DeltaRuleOp::getAsmResultNames(OpAsmSetValueNameFn setName) {
  // On tensors, its results by name (as the printer names a fixed list).
  if (getNumResults() == 2) {
    setName(getResult(0), "output");
    setName(getResult(1), "final_state");
  }
}

Speculation::Speculatability DeltaRuleOp::getSpeculatability() {
  return hasPureTensorSemantics() ? Speculation::Speculatable
                                  : Speculation::NotSpeculatable;
}

//===----------------------------------------------------------------------===//
// CausalConvOp
//===----------------------------------------------------------------------===//

LogicalResult CausalConvOp::verify() {
  Operation *op = getOperation();
  Value x = getInput(), taps = getTaps(), hist = getHistory(), y = getOutput(),
        newHist = getNewHistory();
  if (failed(verifyRank(op, "input", x, 3, "[B, S, C]")) ||
      failed(verifyRank(op, "taps", taps, 2, "[C, W]")) ||
      failed(verifyRank(op, "history", hist, 3, "[B, W - 1, C]")) ||
      failed(verifyRank(op, "output", y, 3, "[B, S, C]")) ||
      failed(verifyRank(op, "new_history", newHist, 3, "[B, W - 1, C]")))
    return failure();
  if (failed(verifySameElementType(op, {{"input", x},
                                        {"taps", taps},
                                        {"history", hist},
                                        {"output", y},
                                        {"new_history", newHist}})))
    return failure();
  if (failed(verifySameDim(op, "B",
                           {{"input", x, 0},
                            {"history", hist, 0},
                            {"lengths", getLengths(), 0},
                            {"output", y, 0},
                            {"new_history", newHist, 0}})) ||
      failed(verifySameDim(op, "S", {{"input", x, 1}, {"output", y, 1}})) ||
      failed(verifySameDim(op, "C",
                           {{"input", x, 2},
                            {"taps", taps, 0},
                            {"history", hist, 2},
                            {"output", y, 2},
                            {"new_history", newHist, 2}})) ||
      failed(verifySameDim(
          op, "W - 1", {{"history", hist, 1}, {"new_history", newHist, 1}})))
    return failure();

  int64_t width = dimSize(taps, 1);
  if (width == 0)
    return emitOpError() << "expects at least one tap";
  for (auto [name, value] : {std::pair<StringRef, Value>{"history", hist},
                             {"new_history", newHist}}) {
    int64_t rows = dimSize(value, 1);
    if (!ShapedType::isDynamic(width) && !ShapedType::isDynamic(rows) &&
        rows != width - 1)
      return emitOpError() << "expects `" << name
                           << "` to hold W - 1 = " << width - 1 << " rows for "
                           << width << " taps, got " << rows;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ExpertMatmulOp
//===----------------------------------------------------------------------===//

namespace {
/// Reads an operand's more static source through a `tensor.cast`, the
/// result of the sizes that gives (cast back to the old result type).
struct FoldExpertMatmulOperandCasts : OpRewritePattern<ExpertMatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ExpertMatmulOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> operands;
    bool folded = false;
    for (Value operand : op->getOperands()) {
      auto cast = operand.getDefiningOp<tensor::CastOp>();
      bool foldable = cast && tensor::canFoldIntoConsumerOp(cast);
      operands.push_back(foldable ? cast.getSource() : operand);
      folded |= foldable;
    }
    if (!folded)
      return failure();
    auto type = [](Value value) {
      return cast<RankedTensorType>(value.getType());
    };
    RankedTensorType input = type(operands[0]), weights = type(operands[1]),
                     experts = type(operands[2]), old = type(op.getResult());
    // Each size from whichever operand knows it, else the old result's.
    auto known = [](int64_t a, int64_t b) {
      return ShapedType::isDynamic(a) ? b : a;
    };
    int64_t rows = known(known(experts.getDimSize(0), input.getDimSize(0)),
                         old.getDimSize(0));
    int64_t slots = known(experts.getDimSize(1), old.getDimSize(1));
    if (input.getRank() == 3)
      slots = known(slots, input.getDimSize(1));
    int64_t outputs = known(weights.getDimSize(1), old.getDimSize(2));
    auto resultType =
        RankedTensorType::get({rows, slots, outputs}, old.getElementType());
    Value result = ExpertMatmulOp::create(
        rewriter, op.getLoc(), TypeRange{resultType}, operands, op->getAttrs());
    if (resultType != old)
      result = tensor::CastOp::create(rewriter, op.getLoc(), old, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};
} // namespace

void ExpertMatmulOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                                 MLIRContext *context) {
  patterns.add<FoldExpertMatmulOperandCasts>(context);
}

LogicalResult ExpertMatmulOp::verify() {
  Operation *op = getOperation();
  Value x = getInput(), w = getWeights(), ids = getExperts(), y = getResult();
  int64_t inputRank = cast<RankedTensorType>(x.getType()).getRank();
  if (inputRank != 2 && inputRank != 3)
    return emitOpError() << "expects `input` of rank 2 ([R, In]) or 3 "
                            "([R, K, In]), got rank "
                         << inputRank;
  if (failed(verifyRank(op, "weights", w, 3, "[X, Out, In]")) ||
      failed(verifyRank(op, "result", y, 3, "[R, K, Out]")))
    return failure();
  if (failed(verifySameElementType(
          op, {{"input", x}, {"weights", w}, {"result", y}})))
    return failure();
  SmallVector<Axis> slots = {{"experts", ids, 1}, {"result", y, 1}};
  if (inputRank == 3)
    slots.push_back({"input", x, 1});
  if (failed(verifySameDim(
          op, "R", {{"input", x, 0}, {"experts", ids, 0}, {"result", y, 0}})) ||
      failed(verifySameDim(op, "K", slots)) ||
      failed(verifySameDim(op, "In",
                           {{"input", x, inputRank - 1}, {"weights", w, 2}})) ||
      failed(verifySameDim(op, "Out", {{"weights", w, 1}, {"result", y, 2}})))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// TopKOp and RankOp
//===----------------------------------------------------------------------===//

/// Checks the leading (batch) axes of `input` against those of `result`.
static LogicalResult verifyLeadingDims(Operation *op, Value input,
                                       StringRef resultName, Value result) {
  auto inputType = cast<RankedTensorType>(input.getType());
  auto resultType = cast<RankedTensorType>(result.getType());
  if (inputType.getRank() == 0)
    return op->emitOpError() << "expects `input` of rank at least 1";
  if (resultType.getRank() != inputType.getRank())
    return op->emitOpError()
           << "expects `" << resultName << "` of rank " << inputType.getRank()
           << " like `input`, got rank " << resultType.getRank();
  for (int64_t axis = 0; axis + 1 < inputType.getRank(); ++axis) {
    std::string name = "d" + std::to_string(axis);
    if (failed(verifySameDim(
            op, name, {{"input", input, axis}, {resultName, result, axis}})))
      return failure();
  }
  return success();
}

LogicalResult TopKOp::verify() {
  Operation *op = getOperation();
  Value x = getInput();
  if (failed(verifyLeadingDims(op, x, "values", getValues())) ||
      failed(verifyLeadingDims(op, x, "indices", getIndices())) ||
      failed(
          verifySameElementType(op, {{"input", x}, {"values", getValues()}})))
    return failure();
  int64_t last = cast<RankedTensorType>(x.getType()).getRank() - 1;
  int64_t n = dimSize(x, last);
  int64_t k = getK();
  if (!ShapedType::isDynamic(n) && k > n)
    return emitOpError() << "expects k = " << k
                         << " to be at most the last dimension " << n;
  for (auto [name, value] : {std::pair<StringRef, Value>{"values", getValues()},
                             {"indices", getIndices()}}) {
    int64_t size = dimSize(value, last);
    if (!ShapedType::isDynamic(size) && size != k)
      return emitOpError() << "expects the last dimension of `" << name
                           << "` to be k = " << k << ", got " << size;
  }
  return success();
}

LogicalResult RankOp::verify() {
  Operation *op = getOperation();
  Value x = getInput(), r = getResult();
  if (failed(verifyLeadingDims(op, x, "result", r)))
    return failure();
  int64_t last = cast<RankedTensorType>(x.getType()).getRank() - 1;
  return verifySameDim(op, "N", {{"input", x, last}, {"result", r, last}});
}

LogicalResult GridWaitOp::verify() {
  // By name: the dialect does not depend on the GPU dialect.
  StringRef parent = (*this)->getParentOp()->getName().getStringRef();
  if (parent != "gpu.launch" && parent != "gpu.func")
    return emitOpError("must be at the top level of a gpu.launch's body or "
                       "a gpu.func's, not in ")
           << parent;
  return success();
}

#define GET_OP_CLASSES
#include "linnet/Dialect/Linnet/IR/LinnetOps.cpp.inc"
