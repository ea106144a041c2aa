//===- LoweringConfig.h - how the Codegen passes tile an op -----*- C++ -*-===//
//
// A target's selection pass attaches a `#linnet.lowering_config` to every
// linalg operation under the name `linnet.lowering_config`; the Codegen
// passes (dispatch regions, tiling, vectorization) only read it. Tests pin
// configurations in their input instead of depending on a target's policy.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_CODEGEN_LOWERINGCONFIG_H
#define LINNET_CODEGEN_LOWERINGCONFIG_H

#include "linnet/Dialect/Linnet/IR/LinnetAttrs.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace linnet::codegen {

/// The attribute name of an operation's lowering configuration.
inline constexpr llvm::StringLiteral kLoweringConfigName =
    "linnet.lowering_config";

/// The attribute name (a unit attribute) of an op a target keeps in a
/// dispatch region of its own, never fused into a consumer's: on a GPU, one
/// computing a sine or cosine (libdevice's argument reduction then keeps its
/// local array in registers only in a kernel of that loop alone).
inline constexpr llvm::StringLiteral kOwnRegionName = "linnet.own_region";

/// The attribute name (a unit attribute) of an op whose tile a target keeps
/// in registers where one op of parallel loops alone reads it, element for
/// element, and consumes it there: on a GPU a tensor-core product's sums,
/// which go through that op from the accumulators, never a tile in shared
/// memory. Dispatch regions take such a tile (and the fill it starts from)
/// into that op's region whatever `max-fused-tile-bytes` says.
inline constexpr llvm::StringLiteral kResultInRegistersName =
    "linnet.result_in_registers";

/// The configuration of `op`, or null.
LoweringConfigAttr getLoweringConfig(mlir::Operation *op);
void setLoweringConfig(mlir::Operation *op, LoweringConfigAttr config);

/// Tile sizes as index attributes, for the tiling options of scf.
llvm::SmallVector<mlir::OpFoldResult>
tileSizesAsFoldResults(mlir::MLIRContext *context,
                       llvm::ArrayRef<int64_t> sizes);

/// A linalg op with reduction loops whose body is a multiply-accumulate
/// (matmul, batch matmul, matvec, or a generic of that form).
bool isContraction(mlir::linalg::LinalgOp op);

} // namespace linnet::codegen

#endif // LINNET_CODEGEN_LOWERINGCONFIG_H
