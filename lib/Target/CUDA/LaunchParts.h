//===- LaunchParts.h - the parts of a merged or chained kernel ------------===//
//
// linnet-cuda-merge-launches makes independent kernels one launch whose
// blocks each run one part: an `scf.if` on the block id. linnet-cuda-chain-
// launches makes dependent kernels one launch whose blocks run each phase in
// turn: an `scf.for` over the phase's blocks in steps of the grid, a grid
// wait between phases. Either carries its own block count, so that the
// kernel report bounds what each part moves with its own blocks, not the
// launch's grid. What both passes ask of a launch they take in is here too.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_TARGET_CUDA_LAUNCHPARTS_H
#define LINNET_LIB_TARGET_CUDA_LAUNCHPARTS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

namespace linnet {

/// On a part's `scf.if` or a phase's `scf.for`: the most blocks it runs on
/// (an i64), or a unit where that has no constant bound.
constexpr llvm::StringLiteral kLaunchPartAttr = "linnet.launch_part";

/// The innermost part or phase of a merged or chained kernel `op` is in, if
/// any.
inline mlir::Operation *enclosingLaunchPart(mlir::Operation *op) {
  for (mlir::Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (parent->hasAttr(kLaunchPartAttr) &&
        mlir::isa<mlir::scf::IfOp, mlir::scf::ForOp>(parent))
      return parent;
  return nullptr;
}

/// The most blocks `part` runs on, where known.
inline std::optional<int64_t> launchPartBlocks(mlir::Operation *part) {
  if (auto blocks = part->getAttrOfType<mlir::IntegerAttr>(kLaunchPartAttr))
    return blocks.getInt();
  return std::nullopt;
}

/// The most static shared memory a block has without opting in to more
/// (what the parts' shared buffers, SharedWorkgroup, may take).
constexpr int64_t kMaxWorkgroupBytes = 48 * 1024;

/// The alignment of every workgroup buffer and of each view a chained
/// kernel's phases take of its one buffer: a 16-byte vector access's.
constexpr int64_t kWorkgroupAlignment = 16;

/// The static bytes of `launch`'s workgroup buffers; none where one is
/// dynamic.
std::optional<int64_t> workgroupBytes(mlir::gpu::LaunchOp launch);

/// The types of `launch`'s workgroup buffers.
llvm::SmallVector<mlir::Type> workgroupTypes(mlir::gpu::LaunchOp launch);

/// The workgroup buffers of a kernel made of parts: a block runs one part
/// at a time, so a part's buffer may be one another part has too (of the
/// same type), each part's buffers distinct among themselves. Each GEMV
/// part that computes a layer's norm keeps the norm's row in buffers of the
/// same types (24 KiB), once for the kernel, not once a part.
struct SharedWorkgroup {
  llvm::SmallVector<mlir::Type, 0> types;

  /// For each of `part`'s buffer types, in order, the index of the shared
  /// buffer it takes, adding one where none of its type is free.
  llvm::SmallVector<unsigned> place(llvm::ArrayRef<mlir::Type> part);

  /// The bytes of a static workgroup buffer of `type`.
  static int64_t bufferBytes(mlir::MemRefType type);

  int64_t bytes() const;
};

/// Whether `launch` can be a part of a merged or chained kernel: one block
/// of code, a grid and a block in x alone, a static block size and shared
/// memory, no tokens, no private or dynamic shared memory.
bool isMergeable(mlir::gpu::LaunchOp launch);

/// The values of the host `launch` takes (its kernel's parameters, but for
/// constants, which the kernel gets its own copies of).
llvm::SetVector<mlir::Value> parametersOf(mlir::gpu::LaunchOp launch);

/// Clones the body of `part` at the rewriter's insertion point inside
/// `into`, as a part or phase of it: `part`'s block id in x is `blockId` and
/// its grid in x `blocks`; its other ids, sizes and threads are `into`'s;
/// its workgroup buffers are `workgroup` (of the same types).
void clonePartBody(mlir::RewriterBase &rewriter, mlir::gpu::LaunchOp part,
                   mlir::gpu::LaunchOp into, mlir::Value blockId,
                   mlir::Value blocks, mlir::ValueRange workgroup);

/// Whether the host op `op` lets a launch move past it: it has no effect on
/// memory a launch could see (an allocation, a deallocation of a buffer the
/// launch cannot use, a view, arithmetic).
bool letsLaunchesPass(mlir::Operation &op);

} // namespace linnet

#endif // LINNET_LIB_TARGET_CUDA_LAUNCHPARTS_H
