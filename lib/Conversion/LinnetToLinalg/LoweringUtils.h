//===- LoweringUtils.h - shared pieces of the linnet lowering ---*- C++ -*-===//
//
// Builders every op family of linnet-lower-to-linalg needs: sizes of dynamic
// tensors, filled accumulators, f32 conversions and generic ops with plain
// iterator lists. Private to lib/Conversion/LinnetToLinalg.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_CONVERSION_LINNETTOLINALG_LOWERINGUTILS_H
#define LINNET_LIB_CONVERSION_LINNETTOLINALG_LOWERINGUTILS_H

#include "linnet/Conversion/LinnetToLinalg/LinnetToLinalg.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace linnet::lowering {

using mlir::Location;
using mlir::OpBuilder;
using mlir::OpFoldResult;
using mlir::Type;
using mlir::Value;

/// The sizes of a ranked tensor: attributes where static, tensor.dim values
/// where dynamic.
llvm::SmallVector<OpFoldResult> getSizes(OpBuilder &b, Location loc,
                                         Value tensor);

/// A tensor.empty of the given sizes and element type.
Value createEmpty(OpBuilder &b, Location loc,
                  llvm::ArrayRef<OpFoldResult> sizes, Type elementType);

/// `destination` filled with `value` (linalg.fill).
mlir::Value fillWith(mlir::OpBuilder &b, mlir::Location loc,
                     mlir::Value destination, double value);

/// A new tensor of the given sizes filled with `value` (linalg.fill), the
/// initial value of a reduction.
Value createFilled(OpBuilder &b, Location loc,
                   llvm::ArrayRef<OpFoldResult> sizes, Type elementType,
                   double value);

/// A float constant of type `type`; `value` may be an infinity.
Value createFloat(OpBuilder &b, Location loc, Type type, double value);

/// Extends a scalar float to f32 (no-op for f32).
Value extendToF32(OpBuilder &b, Location loc, Value scalar);

/// Rounds an f32 scalar to `elementType` (no-op for f32).
Value roundFromF32(OpBuilder &b, Location loc, Value scalar, Type elementType);

/// Rounds an f32 tensor elementwise to `elementType`; returns it unchanged
/// for f32.
Value roundTensor(OpBuilder &b, Location loc, Value f32Tensor,
                  Type elementType);

/// Converts an integer scalar to `index`, keeping its sign.
Value toIndex(OpBuilder &b, Location loc, Value integer);

/// Casts `value` to `type` when the (static) shapes differ.
Value castIfNeeded(OpBuilder &b, Location loc, Value value, Type type);

/// `parallel` parallel iterators followed by `reduction` reduction ones.
llvm::SmallVector<mlir::utils::IteratorType> iterators(unsigned parallel,
                                                       unsigned reduction = 0);

/// The map of `numLoops` loops onto the loop dimensions `dims`.
mlir::AffineMap projection(mlir::MLIRContext *context, unsigned numLoops,
                           llvm::ArrayRef<unsigned> dims);

/// Builds a linalg.generic with one result per output.
mlir::linalg::GenericOp createGeneric(
    OpBuilder &b, Location loc, mlir::ValueRange inputs,
    mlir::ValueRange outputs, llvm::ArrayRef<mlir::AffineMap> maps,
    llvm::ArrayRef<mlir::utils::IteratorType> iteratorTypes,
    llvm::function_ref<void(OpBuilder &, Location, mlir::ValueRange)> body);

/// A sum of products into a new f32 accumulator of `sizes`: the output map
/// is the last of `maps` and the loops are `parallel` parallel ones then
/// one reduction; each operand is widened to f32 first. The matmuls of
/// attention and of the experts.
Value createContraction(OpBuilder &b, Location loc, Value lhs, Value rhs,
                        llvm::ArrayRef<OpFoldResult> sizes,
                        llvm::ArrayRef<mlir::AffineMap> maps,
                        unsigned parallel);

/// Attention over the keys in blocks, with an online softmax, as `options`
/// says (LinnetToLinalg.h).
void populateAttentionPatterns(mlir::RewritePatternSet &patterns,
                               const AttentionOptions &options);
void populateDeltaRulePatterns(mlir::RewritePatternSet &patterns);
void populateCausalConvPatterns(mlir::RewritePatternSet &patterns);
/// A routed matmul lowered as `options` says (LinnetToLinalg.h).
void populateExpertMatmulPatterns(mlir::RewritePatternSet &patterns,
                                  const ExpertMatmulOptions &options);

/// Whether `op` is a routed matmul outside any region that takes a row per
/// slot, of static sizes and fewer than `groupedSlotsPerExpert` slots an
/// expert (a decode's down projection of its experts): a product a
/// consumer's region (the combination that weighs the slots) can take in a
/// tile of, each block the slots of its outputs.
bool isFusibleSlotProduct(mlir::Operation *op, double groupedSlotsPerExpert);
void populateRankingPatterns(mlir::RewritePatternSet &patterns);

} // namespace linnet::lowering

#endif // LINNET_LIB_CONVERSION_LINNETTOLINALG_LOWERINGUTILS_H
