//===- HostBuffers.h - which buffers the host's operations share ----------===//
//
// The host plan moves and merges what it launches (linnet-cuda-plan-host's
// copies, linnet-cuda-merge-launches' kernels); both ask which buffer a
// view is of, and whether two views may share an element.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_TARGET_CUDA_HOSTBUFFERS_H
#define LINNET_LIB_TARGET_CUDA_HOSTBUFFERS_H

#include "mlir/IR/Value.h"

#include <cstdint>

namespace linnet {

/// The most bytes of buffer descriptors and sizes one kernel the host plan
/// makes takes as parameters: PTX before 8.1 allows 4352 bytes of them
/// (ptxas: "uses too much parameter space").
constexpr int64_t kMaxKernelParameterBytes = 3072;

/// The value `value` views, casts or reads the metadata of; null where it
/// is none of these.
mlir::Value viewSourceOf(mlir::Value value);

/// The buffer `value` is a view of: through views, casts and metadata.
mlir::Value rootOf(mlir::Value value);

/// Whether `a` and `b` may share an element. Views of different buffers do
/// not (distinct allocations, or distinct arguments of an entry, which the
/// runtime gives distinct buffers: `distinctArguments`; a private
/// function's arguments may be one buffer twice); subviews of one value
/// only where ValueBounds cannot tell their slices apart.
bool mayOverlap(mlir::Value a, mlir::Value b, bool distinctArguments);

/// The bytes a kernel parameter of `value`'s type takes: a buffer's
/// descriptor (two pointers, an offset, a size and a stride a dimension),
/// else one 8-byte scalar.
int64_t parameterBytes(mlir::Value value);

} // namespace linnet

#endif // LINNET_LIB_TARGET_CUDA_HOSTBUFFERS_H
