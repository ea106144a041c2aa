//===- LaunchParts.h - the parts of a merged kernel -----------------------===//
//
// linnet-cuda-merge-launches makes independent kernels one launch whose
// blocks each run one part: an `scf.if` on the block id that carries the
// part's own block count, so that the kernel report bounds what each part
// moves with its own blocks, not the merged grid's.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_TARGET_CUDA_LAUNCHPARTS_H
#define LINNET_LIB_TARGET_CUDA_LAUNCHPARTS_H

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <optional>

namespace linnet {

/// On a part's `scf.if`: the most blocks it runs on (an i64), or a unit
/// where that has no constant bound.
constexpr llvm::StringLiteral kLaunchPartAttr = "linnet.launch_part";

/// The part of a merged kernel `op` is in, if any.
inline mlir::scf::IfOp enclosingLaunchPart(mlir::Operation *op) {
  for (auto part = op->getParentOfType<mlir::scf::IfOp>(); part;
       part = part->getParentOfType<mlir::scf::IfOp>())
    if (part->hasAttr(kLaunchPartAttr))
      return part;
  return {};
}

/// The most blocks `part` runs on, where known.
inline std::optional<int64_t> launchPartBlocks(mlir::scf::IfOp part) {
  if (auto blocks = part->getAttrOfType<mlir::IntegerAttr>(kLaunchPartAttr))
    return blocks.getInt();
  return std::nullopt;
}

} // namespace linnet

#endif // LINNET_LIB_TARGET_CUDA_LAUNCHPARTS_H
